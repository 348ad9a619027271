//! The login and consent page, and the error page of the authorization endpoint.
//!
//! Everything interpolated is HTML-escaped. The page tells the person plainly who is asking (the client's name
//! and id), where the approval will be sent (the redirect host, and a warning when that is a program on their
//! own machine), and exactly which access they grant: one pre-ticked checkbox per scope on offer.

use super::storage::REFRESH_TOKEN_TTL_SECS;
use super::Scope;
use crate::platform::HttpResponse;

/// What the consent page shows.
pub struct ConsentPage<'a> {
    pub client_name: &'a str,
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub redirect_host: &'a str,
    pub redirect_is_loopback: bool,
    pub server_host: &'a str,
    pub offered: &'a [Scope],
    /// The client named no scope, so both are offered and the ticks decide.
    pub scope_unspecified: bool,
    pub ask_username: bool,
    /// Where the form posts: the same path and query.
    pub action: &'a str,
    pub error: Option<&'a str>,
}

/// What each scope lets a client do. It names only what the tools do today: a person approving access must not
/// be told of reach (attachment text, files) that the server does not have, nor be surprised by reach it has.
fn describe(scope: Scope) -> &'static str {
    match scope {
        Scope::Read => "Search and read items, collections, tags, notes and annotations",
        Scope::Write => "Create, edit and delete items, collections and notes, and change their tags",
    }
}

pub use crate::pages::escape_html as escape;

impl ConsentPage<'_> {
    pub fn render(&self) -> String {
        let name = escape(self.client_name);
        let mut body = String::new();
        body.push_str(&format!(
            r#"<header><span class="mark" aria-hidden="true">Z</span><span class="eyebrow">Zotero MCP server · {server}</span></header>
<h1>Allow <strong>{name}</strong> to use your Zotero library?</h1>
<dl class="facts">
<dt>Approval goes to</dt><dd><span class="host">{host}</span><code class="uri">{uri}</code></dd>
<dt>Client ID</dt><dd><code>{id}</code></dd>
</dl>
"#,
            server = escape(self.server_host),
            host = escape(self.redirect_host),
            uri = escape(self.redirect_uri),
            id = escape(self.client_id),
        ));
        if self.redirect_is_loopback {
            body.push_str(&format!(
                r#"<p class="warn" role="note"><strong>This sends access to a program on the computer you are using</strong> ({host}). Approve only if you just started connecting from an app on this device, such as Claude Code.</p>
"#,
                host = escape(self.redirect_host)
            ));
        }
        if let Some(error) = self.error {
            body.push_str(&format!("<p class=\"error\" role=\"alert\">{}</p>\n", escape(error)));
        }
        body.push_str(&format!("<form method=\"post\" action=\"{}\">\n", escape(self.action)));
        if self.ask_username {
            body.push_str(
                r#"<label for="username">User name</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus>
"#,
            );
        }
        body.push_str(&format!(
            r#"<label for="password">Server password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required{autofocus}>
<fieldset><legend>Access to grant</legend>
"#,
            autofocus = if self.ask_username { "" } else { " autofocus" }
        ));
        for scope in self.offered {
            body.push_str(&format!(
                r#"<label class="scope"><input type="checkbox" name="scope" value="{value}" checked><span><code>{value}</code><span class="what">{what}</span></span></label>
"#,
                value = scope.as_str(),
                what = describe(*scope)
            ));
        }
        body.push_str("</fieldset>\n");
        if self.scope_unspecified {
            body.push_str(&format!(
                "<p class=\"note\">{name} did not say which access it needs, so both are offered. Untick <code>{write}</code> to keep it read-only.</p>\n",
                write = Scope::Write.as_str()
            ));
        }
        // The grant's refresh lifetime starts at the code exchange (minutes after approval) and is never
        // extended by use (token.rs), so the page states an end date, not an idle timeout.
        body.push_str(&format!(
            r#"<p class="note">Nothing ticked grants read access only.</p>
<button type="submit">Approve</button>
</form>
<p class="fine">Only approve clients you are connecting yourself. Access ends {days} days after you approve, however often it is used, or sooner if it is revoked; then the client has to ask again.</p>
"#,
            days = REFRESH_TOKEN_TTL_SECS / (24 * 3600)
        ));
        page("Authorize access to your Zotero library", &body)
    }
}

/// A page for an authorization request that cannot go on and must not be redirected.
pub fn error_page(message: &str) -> String {
    page(
        "Authorization error",
        &format!(
            r#"<header><span class="mark" aria-hidden="true">Z</span><span class="eyebrow">Zotero MCP server</span></header>
<h1>This authorization request cannot continue</h1>
<p class="error" role="alert">{}</p>
<p class="fine">Start the connection again from your MCP client. If this keeps happening, the client may be misconfigured.</p>
"#,
            escape(message)
        ),
    )
}

/// An HTML answer with the headers every authorization page carries: no caching, no sniffing, no referrer
/// (the URL holds the state and PKCE challenge), and a CSP that allows only the inline style and forbids
/// framing (clickjacking the Approve button). It has no `form-action`: browsers apply that to the redirect
/// after the POST, and OAuth redirect URIs are on other origins by design.
pub fn html_response(status: u16, body: String) -> HttpResponse {
    crate::respond::html(status, body)
}

const STYLE: &str = r#"
:root { color-scheme: light dark; --bg: #f4f3ef; --card: #ffffff; --fg: #1d1d1f; --muted: #5f6168; --line: #dcdad3;
  --accent: #b3261e; --accent-fg: #ffffff; --field: #fbfaf7; --warn-bg: #fff4d6; --warn-fg: #5c4300; --warn-line: #f0cf73;
  --err: #b3261e; --code: #f1efe9; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #141416; --card: #1d1e21; --fg: #ececee; --muted: #a3a5ad; --line: #33353b; --accent: #ff6b5e;
    --accent-fg: #1a0b0a; --field: #17181b; --warn-bg: #3a2f0f; --warn-fg: #ffe39a; --warn-line: #6d5817; --err: #ff8a80;
    --code: #292a2f; }
}
* { box-sizing: border-box; }
html { background: var(--bg); }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; padding: 2rem 1rem; color: var(--fg);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", sans-serif; }
main { width: 100%; max-width: 30rem; background: var(--card); border: 1px solid var(--line); border-radius: 16px;
  padding: 1.75rem 1.75rem 1.25rem; box-shadow: 0 1px 2px rgba(0,0,0,.04), 0 12px 32px rgba(0,0,0,.06); }
header { display: flex; align-items: center; gap: .6rem; margin-bottom: 1.1rem; }
.mark { display: inline-grid; place-items: center; width: 1.9rem; height: 1.9rem; border-radius: 8px; background: var(--accent);
  color: var(--accent-fg); font-weight: 800; font-size: 1rem; }
.eyebrow { color: var(--muted); font-size: .85rem; overflow-wrap: anywhere; }
h1 { font-size: 1.3rem; line-height: 1.3; margin: 0 0 1rem; font-weight: 650; }
h1 strong { font-weight: 750; overflow-wrap: anywhere; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem .9rem; margin: 0 0 1rem; font-size: .9rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; min-width: 0; }
.host { display: block; font-weight: 650; overflow-wrap: anywhere; }
.uri { display: block; color: var(--muted); font-size: .8rem; overflow-wrap: anywhere; background: none; padding: 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em; background: var(--code);
  padding: .05rem .3rem; border-radius: 4px; overflow-wrap: anywhere; }
.warn { background: var(--warn-bg); color: var(--warn-fg); border: 1px solid var(--warn-line); border-radius: 10px;
  padding: .65rem .8rem; font-size: .88rem; margin: 0 0 1rem; }
.error { color: var(--err); font-weight: 600; margin: 0 0 1rem; }
form { margin: 0; }
label { display: block; font-weight: 600; font-size: .9rem; margin: .2rem 0 .35rem; }
input[type=password], input[type=text] { width: 100%; padding: .65rem .75rem; font: inherit; color: var(--fg);
  background: var(--field); border: 1px solid var(--line); border-radius: 10px; margin-bottom: .8rem; }
input:focus-visible, button:focus-visible { outline: 3px solid color-mix(in srgb, var(--accent) 45%, transparent); outline-offset: 1px; }
fieldset { border: 1px solid var(--line); border-radius: 12px; padding: .4rem .9rem .5rem; margin: .3rem 0 .8rem; }
legend { font-weight: 600; font-size: .9rem; padding: 0 .3rem; }
label.scope { display: flex; gap: .65rem; align-items: flex-start; font-weight: 400; margin: .45rem 0; cursor: pointer; }
label.scope input { margin-top: .3rem; width: 1.05rem; height: 1.05rem; accent-color: var(--accent); flex: none; }
.what { display: block; color: var(--muted); font-size: .86rem; }
.note { color: var(--muted); font-size: .85rem; margin: 0 0 .6rem; }
button { width: 100%; margin-top: .4rem; padding: .75rem 1rem; font: inherit; font-weight: 650; color: var(--accent-fg);
  background: var(--accent); border: 0; border-radius: 10px; cursor: pointer; }
button:hover { filter: brightness(1.06); }
.fine { color: var(--muted); font-size: .8rem; margin: 1rem 0 0; }
"#;

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"robots\" content=\"noindex\">\n<title>{}</title><style>{STYLE}</style></head>\n<body><main>\n{body}</main></body></html>\n",
        escape(title)
    )
}
