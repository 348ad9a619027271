//! Operator diagnostics. Clients get generic errors (a refused metadata document, a storage failure); the reason
//! goes to the `log` facade, which each runtime routes: the Worker to `console.warn` (visible with
//! `wrangler tail` and in Workers Logs), the native binary to stderr. Nothing here knows which.

/// Logs one line for the operator. Never pass secrets.
pub fn warn(message: &str) {
    log::warn!(target: "oauth", "{message}");
}
