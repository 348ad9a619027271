//! The authorization endpoint: validate the request, show the login and consent page, and on a correct
//! password issue a code and send the browser back to the client (303, with `code`, `state` and `iss`).
//!
//! A request that fails validation is answered with an error page, never redirected, whatever the error and
//! however well its redirect URI matches. Registration is open, so a matching redirect URI proves only that
//! *someone* registered it: an attacker can register a client with their own URI and use error redirects to
//! bounce a victim's browser from this server's origin to theirs (an open redirector, RFC 9700 §4.11.2, which
//! prefers an error page). Only a consent page that was shown leads back to the client, and it has no deny
//! button, so the only redirect is the approval with its code.

use super::client::RESPONSE_TYPES;
use super::consent::{error_page, html_response, ConsentPage};
use super::crypto::{is_s256_challenge, random_string, secrets_equal, sha256_hex, PropsKey};
use super::error::{AuthError, ErrorCode};
use super::form::Params;
use super::http_util::{header, request_origin};
use super::lookup::{self, LookupError};
use super::storage::{Props, Resource, Store, StoredClient, StoredGrant};
use super::throttle::{failure_delay_ms, Throttle};
use super::{cimd, log, redirect, resource, Scope};
use crate::app::App;
use crate::config::SetupHint;
use crate::platform::{HttpRequest, HttpResponse};

/// A validated authorization request (query parameters only; the form adds the password and ticks).
#[derive(Debug, Clone)]
pub struct AuthRequest {
    pub redirect_uri: String,
    pub scope: Vec<String>,
    pub state: String,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub resource: Option<Resource>,
    pub issuer: String,
}

/// Why an authorization request stops. Every refusal is a page (see the module comment for why none is
/// redirected).
#[derive(Debug)]
pub enum Refusal {
    /// Shown as a page.
    Page { status: u16, message: String },
    /// A failure of this server, not of the request.
    Internal(AuthError),
}

impl Refusal {
    fn page(message: impl Into<String>) -> Self {
        Self::Page { status: 400, message: message.into() }
    }

    /// A malformed authorization request: a page that names the OAuth error code too, since the person who
    /// sees it may be the client's developer.
    fn invalid(code: ErrorCode, description: &str) -> Self {
        Self::page(format!("{description} (OAuth error: {}).", code.as_str()))
    }

    pub fn into_response(self) -> HttpResponse {
        match self {
            Self::Page { status, message } => html_response(status, error_page(&message)),
            Self::Internal(error) => {
                log::warn(&error.to_string());
                html_response(
                    500,
                    error_page("The server could not process this authorization request. Try again in a moment."),
                )
            }
        }
    }
}

use crate::respond::see_other;

/// Validates the query of an authorization request and finds its client.
pub async fn parse_request(request: &HttpRequest, app: &App) -> Result<(AuthRequest, StoredClient), Refusal> {
    let query = Params::from_query(request.uri().query());
    let issuer = request_origin(request);
    let client_id = query.non_empty("client_id").unwrap_or("").to_owned();
    if client_id.is_empty() {
        return Err(Refusal::page("The request has no client_id."));
    }
    let client = match lookup::lookup(&app.platform, &client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => return Err(Refusal::page("Unknown OAuth client: it may have been registered with another server, or its registration expired. Connect again from the client.")),
        Err(LookupError::Document(e)) => {
            log::warn(&e.to_string());
            let message = if matches!(e, cimd::CimdError::Disabled) {
                "This server cannot accept clients identified by a metadata URL (the Worker lacks the global_fetch_strictly_public flag).".to_owned()
            } else {
                format!("The client's metadata document at {client_id} could not be used, so the client cannot be identified.")
            };
            return Err(Refusal::page(message));
        }
        Err(LookupError::Store(e)) => return Err(Refusal::Internal(e)),
    };
    let redirect_uri = query.non_empty("redirect_uri").unwrap_or("").to_owned();
    if !redirect::is_acceptable(&redirect_uri) || !redirect::matches_registered(&redirect_uri, &client.redirect_uris) {
        return Err(Refusal::page(
            "Invalid redirect URI: it is not one this client registered, so this server will not send you there.",
        ));
    }
    let state = query.get("state").unwrap_or("").to_owned();
    let resource = resource::parse_param(&query.all("resource")).map_err(|_| {
        Refusal::invalid(
            ErrorCode::InvalidTarget,
            "The resource parameter must be a valid absolute URI without a fragment, such as this server's /mcp URL",
        )
    })?;
    // Tokens are bound to the requested resource, so one for another server would be refused at our /mcp while
    // the person believes they connected this one. Refused here, before anyone is asked to consent; the foreign
    // value is not echoed, so the page cannot be made to show someone else's text.
    if resource.as_ref().is_some_and(|r| !r.values().iter().all(|v| resource::is_own_resource(v, &issuer))) {
        return Err(Refusal::invalid(ErrorCode::InvalidTarget, &resource::not_own_description(&issuer)));
    }
    let response_type = query.get("response_type").unwrap_or("").to_owned();
    if response_type.is_empty() {
        return Err(Refusal::invalid(ErrorCode::InvalidRequest, "response_type is required: send response_type=code"));
    }
    if !RESPONSE_TYPES.contains(&response_type.as_str()) {
        return Err(Refusal::invalid(
            ErrorCode::UnsupportedResponseType,
            &format!(
                "The authorization server does not support response_type {response_type}; send response_type=code"
            ),
        ));
    }
    let client_response_types = client.response_types.clone().unwrap_or_else(|| vec!["code".to_owned()]);
    if !client_response_types.contains(&response_type) {
        return Err(Refusal::invalid(
            ErrorCode::UnauthorizedClient,
            &format!("The client is not registered for response_type {response_type}; register it with response_types [\"code\"]"),
        ));
    }
    let code_challenge = query.non_empty("code_challenge").map(str::to_owned);
    let code_challenge_method = query.non_empty("code_challenge_method").map(str::to_owned);
    let pkce_refused = |description: &str| Err(Refusal::invalid(ErrorCode::InvalidRequest, description));
    match (&code_challenge, code_challenge_method.as_deref()) {
        // RFC 7636 §4.4.1: a challenge that cannot be S256 output is refused now, not when the code is redeemed.
        (Some(challenge), Some("S256")) if !is_s256_challenge(challenge) => {
            return pkce_refused(
                "code_challenge must be the S256 challenge: the base64url SHA-256 of the code_verifier, 43 characters without padding",
            )
        }
        (Some(_), Some("S256")) => {}
        // RFC 7636 makes `plain` the default method; it protects nothing against a code thief, so it is refused.
        (Some(_), None | Some("plain")) => {
            return pkce_refused("The plain PKCE method is not allowed: use code_challenge_method=S256 instead")
        }
        (Some(_), Some(other)) => {
            return pkce_refused(&format!("Unsupported PKCE code_challenge_method {other}: use S256"))
        }
        (None, Some(_)) => {
            return pkce_refused("PKCE code_challenge is required when code_challenge_method is provided")
        }
        // OAuth 2.1 requires PKCE of every client: a client secret does not stop a stolen code from being
        // redeemed by the client it was issued to (authorization code injection).
        (None, None) => {
            return pkce_refused(
                "PKCE is required: send code_challenge (the S256 of a code_verifier) and code_challenge_method=S256",
            )
        }
    }
    let scope = query.get("scope").unwrap_or("").split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect();
    Ok((AuthRequest { redirect_uri, scope, state, code_challenge, code_challenge_method, resource, issuer }, client))
}

/// The scopes the page offers: all of ours when the client named none (it asked for the server's default, and
/// Claude Code never names any), else the requested ones this server knows — a ceiling the ticks cannot exceed.
pub fn offered_scopes(requested: &[String]) -> Vec<Scope> {
    let all = [Scope::Read, Scope::Write];
    if requested.is_empty() {
        return all.to_vec();
    }
    all.into_iter().filter(|s| requested.iter().any(|r| r == s.as_str())).collect()
}

/// The offered scopes that were ticked; nothing ticked grants read only (the person unticked everything, so
/// the least access, not the default).
pub fn granted_scopes(requested: &[String], ticked: &[&str]) -> Vec<Scope> {
    let chosen: Vec<Scope> = offered_scopes(requested).into_iter().filter(|s| ticked.contains(&s.as_str())).collect();
    if chosen.is_empty() {
        vec![Scope::Read]
    } else {
        chosen
    }
}

/// `GET` shows the page; `POST` checks the password and completes the authorization.
pub async fn handle(request: &HttpRequest, app: &App) -> HttpResponse {
    let (auth, client) = match parse_request(request, app).await {
        Ok(parsed) => parsed,
        Err(refusal) => return refusal.into_response(),
    };
    match *request.method() {
        http::Method::GET | http::Method::HEAD => html_response(200, consent_page(request, app, &auth, &client, None)),
        http::Method::POST => match submit(request, app, &auth, &client).await {
            Ok(response) => response,
            Err(refusal) => refusal.into_response(),
        },
        _ => {
            let mut response =
                html_response(405, error_page("Method not allowed: open this page (GET) or submit its form (POST)."));
            response.headers_mut().insert(http::header::ALLOW, http::HeaderValue::from_static("GET, POST"));
            response
        }
    }
}

fn consent_page(
    request: &HttpRequest,
    app: &App,
    auth: &AuthRequest,
    client: &StoredClient,
    error: Option<&str>,
) -> String {
    let offered = offered_scopes(&auth.scope);
    let redirect_host = redirect::display_host(&auth.redirect_uri).unwrap_or_else(|| auth.redirect_uri.clone());
    let action = request.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/authorize");
    let server_host = auth.issuer.split("://").nth(1).unwrap_or(&auth.issuer);
    let client_name = client.display_name();
    ConsentPage {
        client_name: &client_name,
        client_id: &client.client_id,
        redirect_uri: &auth.redirect_uri,
        redirect_host: &redirect_host,
        redirect_is_loopback: redirect::is_loopback(&auth.redirect_uri),
        server_host,
        offered: &offered,
        scope_unspecified: auth.scope.is_empty(),
        ask_username: app.config.auth_username_required,
        action,
        error,
    }
    .render()
}

/// How a setting already set is changed where this server runs (AUTH_USERNAME is a plain variable on Workers,
/// in wrangler.toml, not a secret).
fn change_a_setting(setup: SetupHint) -> &'static str {
    match setup {
        SetupHint::Worker => "Change it in wrangler.toml's [vars] and deploy again.",
        SetupHint::Native => "Change it in the environment or the config file, then restart the server.",
    }
}

async fn submit(
    request: &HttpRequest,
    app: &App,
    auth: &AuthRequest,
    client: &StoredClient,
) -> Result<HttpResponse, Refusal> {
    let Some(password) = app.config.auth_password.as_deref() else {
        return Err(Refusal::Page {
            status: 500,
            message: format!("AUTH_PASSWORD is not configured: {}.", app.config.setup.how_to_set("AUTH_PASSWORD")),
        });
    };
    let user_id = app.config.auth_username.as_str();
    if user_id.is_empty() || user_id.contains(':') {
        // Tokens are `userId:grantId:secret`; a colon in the user id would make every token unparseable.
        return Err(Refusal::Page {
            status: 500,
            message: format!("AUTH_USERNAME must not contain a colon (:). {}", change_a_setting(app.config.setup)),
        });
    }
    let media_type = header(request, http::header::CONTENT_TYPE)
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if media_type.as_deref() != Some("application/x-www-form-urlencoded") {
        return Err(Refusal::page("The form must be submitted as application/x-www-form-urlencoded."));
    }
    let form = Params::parse_bounded(request.body()).map_err(|e| Refusal::page(e.to_string()))?;
    let now_ms = app.platform.clock.now_ms();
    let throttle = Throttle::for_request(request, app.platform.counters.as_ref(), now_ms, app.config.login_ipv6_prefix);
    // The attempt is counted before the password is looked at; one that cannot be counted is not checked.
    let attempt = match throttle.begin().await {
        Ok(attempt) => attempt,
        Err(locked) => {
            let mut response = html_response(429, error_page(&locked.message()));
            if let Ok(value) = http::HeaderValue::from_str(&locked.retry_after_secs().to_string()) {
                response.headers_mut().insert(http::header::RETRY_AFTER, value);
            }
            return Ok(response);
        }
    };
    // Both comparisons always run, so the time taken says nothing about which one failed.
    let password_ok = secrets_equal(form.get("password").unwrap_or(""), password);
    let username_ok = !app.config.auth_username_required || secrets_equal(form.get("username").unwrap_or(""), user_id);
    if !(password_ok && username_ok) {
        app.platform.clock.sleep(failure_delay_ms(attempt.previous_failures)).await;
        let message =
            if app.config.auth_username_required { "Incorrect user name or password." } else { "Incorrect password." };
        return Ok(html_response(401, consent_page(request, app, auth, client, Some(message))));
    }
    throttle.succeeded().await;

    let granted = granted_scopes(&auth.scope, &form.all("scope"));
    let location = complete(app, auth, client, user_id, &granted).await.map_err(Refusal::Internal)?;
    Ok(see_other(&location))
}

/// Creates the grant and its code, then revokes the user's earlier grants to the same client (for a
/// metadata-document client, only those with the same redirect URI: its id is shared by every installation).
/// Returns the redirect URI with `code`, `state` and `iss`.
pub async fn complete(
    app: &App,
    auth: &AuthRequest,
    client: &StoredClient,
    user_id: &str,
    granted: &[Scope],
) -> Result<String, AuthError> {
    let store = Store::new(app.platform.oauth_kv.as_ref());
    let is_document_client = cimd::is_document_url(&client.client_id);
    // A registration lives a day until someone approves it (`register`); this is that approval. It comes
    // before the grant, so a client cannot end up with a 30-day grant and a registration that expires tonight.
    if !is_document_client {
        store.keep_approved_client(client, app.platform.clock.now_secs()).await?;
    }
    let earlier: Vec<String> = store
        .user_grants(user_id)
        .await?
        .into_iter()
        .filter(|g| {
            g.client_id == client.client_id
                && (!is_document_client || g.redirect_uri.as_deref() == Some(auth.redirect_uri.as_str()))
        })
        .map(|g| g.id)
        .collect();

    let scopes: Vec<String> = granted.iter().map(|s| s.as_str().to_owned()).collect();
    let props = Props { user_id: user_id.to_owned(), scopes: scopes.clone() };
    let props_json =
        serde_json::to_vec(&props).map_err(|e| AuthError::Corrupt { key: "props".into(), reason: e.to_string() })?;
    let key = PropsKey::generate()?;
    let grant_id = random_string(16)?;
    let code = format!("{user_id}:{grant_id}:{}", random_string(32)?);
    let grant = StoredGrant {
        id: grant_id,
        client_id: client.client_id.clone(),
        user_id: user_id.to_owned(),
        scope: scopes,
        metadata: Some(serde_json::json!({ "clientName": client.display_name() })),
        encrypted_props: key.encrypt(&props_json)?,
        created_at: app.platform.clock.now_secs(),
        expires_at: None,
        refresh_token_id: None,
        refresh_token_wrapped_key: None,
        previous_refresh_token_id: None,
        previous_refresh_token_wrapped_key: None,
        auth_code_id: Some(sha256_hex(&code)),
        auth_code_wrapped_key: Some(key.wrap_for(&code)?),
        code_challenge: auth.code_challenge.clone(),
        code_challenge_method: auth.code_challenge_method.clone(),
        resource: auth.resource.clone(),
        redirect_uri: Some(auth.redirect_uri.clone()),
        extra: Default::default(),
    };
    store.put_pending_grant(&grant).await?;

    for old in earlier {
        // Best effort: the new grant is stored; a leftover old one only expires later.
        if let Err(e) = store.revoke_grant(user_id, &old).await {
            log::warn(&format!("could not revoke an earlier grant of {}: {e}", client.client_id));
        }
    }
    let params = [("code", code.as_str()), ("state", auth.state.as_str()), ("iss", auth.issuer.as_str())];
    redirect::with_params(&auth.redirect_uri, &params)
        .ok_or_else(|| AuthError::invalid_request("The redirect URI cannot carry a query"))
}
