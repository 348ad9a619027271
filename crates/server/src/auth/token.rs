//! The token endpoint: authorization code and refresh token grants, and revocation (RFC 7009) on the same URL,
//! as workers-oauth-provider serves them.
//!
//! Parsing is strict: POST, exactly `application/x-www-form-urlencoded`, no parameter twice (except
//! `resource`, RFC 8707), one way of authenticating the client. Every answer is `no-store`.

use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::crypto::{is_code_verifier, matches_hash, pkce_s256, random_string, secrets_equal, sha256_hex, PropsKey};
use super::error::{AuthError, ErrorCode};
use super::form::Params;
use super::http_util::{header, json_response, no_store, request_origin};
use super::lookup::{self, LookupError};
use super::rotation::{self, Presented};
use super::storage::{
    split_token, Resource, Store, StoredClient, StoredGrant, StoredToken, TokenGrant, ACCESS_TOKEN_TTL_SECS,
    AUTH_CODE_TTL_SECS, KV_MIN_TTL_SECS, REFRESH_TOKEN_TTL_SECS,
};
use super::{cimd, log, redirect, resource, revoke};
use crate::platform::{HttpRequest, HttpResponse, Platform};

const BASIC_CHALLENGE: &str = "Basic realm=\"OAuth\"";

pub async fn handle(request: &HttpRequest, platform: &Platform) -> Result<HttpResponse, AuthError> {
    if request.method() != http::Method::POST {
        return Err(AuthError::invalid_request("Method not allowed").with_status(405).with_header("allow", "POST"));
    }
    let media_type = header(request, http::header::CONTENT_TYPE)
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if media_type.as_deref() != Some("application/x-www-form-urlencoded") {
        return Err(AuthError::invalid_request("Content-Type must be application/x-www-form-urlencoded"));
    }
    let params = Params::parse_bounded(request.body())?;
    if let Some(name) = params.first_repeated(&["resource"]) {
        return Err(AuthError::invalid_request(format!("Request parameter \"{name}\" must not be repeated")));
    }
    let client = authenticate_client(request, &params, platform).await?;
    let grant_type = params.non_empty("grant_type");
    if grant_type.is_none() && params.non_empty("token").is_some() {
        return revoke::revoke(&params, &client, platform).await;
    }
    let grant_type = match grant_type {
        Some(g @ ("authorization_code" | "refresh_token")) => g,
        _ => {
            return Err(AuthError::new(
                ErrorCode::UnsupportedGrantType,
                "Grant type not supported: use authorization_code or refresh_token",
            ))
        }
    };
    // A client uses only the grant types it registered (or its metadata document lists); any other is
    // `unauthorized_client`, RFC 6749 §5.2.
    if !client.allows_grant_type(grant_type, cimd::is_document_url(&client.client_id)) {
        return Err(AuthError::new(ErrorCode::UnauthorizedClient, not_registered_for(grant_type, &client)));
    }
    // The issuer, from which this server's resource derives, as at /authorize and on /mcp.
    let origin = request_origin(request);
    match grant_type {
        "authorization_code" => exchange_code(&params, &client, platform, &origin).await,
        _ => refresh(&params, &client, platform, &origin).await,
    }
}

/// What to tell a client that used a grant type it did not register.
fn not_registered_for(grant_type: &str, client: &StoredClient) -> String {
    let registered = client.grant_types.as_deref().map(|g| g.join(", ")).unwrap_or_else(|| "authorization_code".into());
    let next = if grant_type == "refresh_token" {
        "Authorize again to get a new access token, or register the client again with grant_types [\"authorization_code\", \"refresh_token\"]"
    } else {
        "Register the client again with grant_types including authorization_code"
    };
    format!("This client is not registered for the {grant_type} grant (its grant types: {registered}). {next}.")
}

enum Basic {
    Absent,
    Malformed,
    Credentials(String, String),
}

fn parse_basic(value: Option<&str>) -> Basic {
    let Some(value) = value else { return Basic::Absent };
    let (scheme, rest) = match value.find([' ', '\t']) {
        Some(i) => (&value[..i], Some(&value[i..])),
        None => (value, None),
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Basic::Absent;
    }
    let Some(encoded) = rest.map(str::trim).filter(|e| !e.is_empty() && !e.contains([' ', '\t'])) else {
        return Basic::Malformed;
    };
    let engines = [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::STANDARD_NO_PAD];
    let Some(decoded) = engines.iter().find_map(|e| e.decode(encoded).ok()) else { return Basic::Malformed };
    let Ok(decoded) = String::from_utf8(decoded) else { return Basic::Malformed };
    let Some((id, secret)) = decoded.split_once(':') else { return Basic::Malformed };
    // RFC 6749 §2.3.1: both parts are form-urlencoded before joining.
    let decode =
        |part: &str| form_urlencoded::parse(format!("x={part}").as_bytes()).next().map(|(_, v)| v.into_owned());
    match (decode(id), decode(secret)) {
        (Some(id), Some(secret)) => Basic::Credentials(id, secret),
        _ => Basic::Malformed,
    }
}

/// Identifies and authenticates the client. Every failure is `invalid_client` (401) with no detail beyond
/// what the client could have known, so the endpoint does not confirm which client ids exist.
async fn authenticate_client(
    request: &HttpRequest,
    params: &Params,
    platform: &Platform,
) -> Result<StoredClient, AuthError> {
    let basic = parse_basic(header(request, http::header::AUTHORIZATION));
    let basic_attempted = !matches!(basic, Basic::Absent);
    let invalid_client = |description: &str| {
        let error = AuthError::new(ErrorCode::InvalidClient, description).with_status(401);
        if basic_attempted {
            error.with_header("www-authenticate", BASIC_CHALLENGE)
        } else {
            error
        }
    };
    let (client_id, secret) = match basic {
        Basic::Credentials(..) | Basic::Malformed if params.has("client_id") || params.has("client_secret") => {
            return Err(AuthError::invalid_request("Client must not use multiple authentication methods"));
        }
        Basic::Malformed => return Err(invalid_client("Client authentication failed: invalid Basic credentials")),
        Basic::Credentials(id, secret) => (id, secret),
        Basic::Absent => {
            (params.get("client_id").unwrap_or("").to_owned(), params.get("client_secret").unwrap_or("").to_owned())
        }
    };
    if client_id.is_empty() {
        return Err(invalid_client("Client ID is required"));
    }
    let client = match lookup::lookup(platform, &client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => return Err(invalid_client("Client not found")),
        Err(LookupError::Document(e)) => {
            log::warn(&e.to_string());
            return Err(invalid_client("Client not found"));
        }
        Err(LookupError::Store(e)) => return Err(e),
    };
    let presented = if basic_attempted {
        "client_secret_basic"
    } else if params.has("client_secret") {
        "client_secret_post"
    } else {
        "none"
    };
    if !auth_method_allowed(&client, presented) {
        return Err(invalid_client("Client authentication failed"));
    }
    if presented != "none" {
        if secret.is_empty() {
            return Err(invalid_client("Client authentication failed: missing client_secret"));
        }
        let Some(stored) = client.client_secret.as_deref() else {
            return Err(invalid_client("Client authentication failed: client has no registered secret"));
        };
        if !matches_hash(&secret, stored) {
            return Err(invalid_client("Client authentication failed: invalid client_secret"));
        }
    }
    Ok(client)
}

/// A client authenticates the way it registered. A client that did not choose a method at registration (so
/// got `client_secret_basic` by default) may also post its secret in the body; a metadata-document client
/// never switches.
fn auth_method_allowed(client: &StoredClient, presented: &str) -> bool {
    if presented == client.token_endpoint_auth_method {
        return true;
    }
    let secret_method = |m: &str| m == "client_secret_basic" || m == "client_secret_post";
    !cimd::is_document_url(&client.client_id)
        && client.auth_method_explicit.is_none()
        && secret_method(&client.token_endpoint_auth_method)
        && secret_method(presented)
}

/// The requested scopes that the grant covers; all of them when none are requested. Scope can only narrow.
pub fn downscope(requested: Option<&str>, allowed: &[String]) -> Vec<String> {
    match requested.filter(|r| !r.is_empty()) {
        None => allowed.to_vec(),
        Some(requested) => requested
            .split(' ')
            .filter(|s| !s.is_empty() && allowed.iter().any(|a| a == s))
            .map(str::to_owned)
            .collect(),
    }
}

/// Whether `presented` is the secret whose hash is stored in `stored` (absent: no such secret, nothing matches).
fn matches_stored(presented: &str, stored: Option<&str>) -> bool {
    stored.is_some_and(|hash| matches_hash(presented, hash))
}

async fn exchange_code(
    params: &Params,
    client: &StoredClient,
    platform: &Platform,
    origin: &str,
) -> Result<HttpResponse, AuthError> {
    let Some(code) = params.non_empty("code") else {
        return Err(AuthError::invalid_request("Authorization code is required"));
    };
    let Some((user_id, grant_id)) = split_token(code) else {
        return Err(AuthError::invalid_grant("Invalid authorization code format"));
    };
    let store = Store::new(platform.oauth_kv.as_ref());
    let Some(mut grant) = store.grant(user_id, grant_id).await? else {
        return Err(AuthError::invalid_grant("Grant not found or authorization code expired"));
    };
    // The hash is checked before anything else, so a guessed or altered code changes nothing.
    if !matches_stored(code, grant.auth_code_id.as_deref()) {
        return Err(AuthError::invalid_grant("Invalid authorization code"));
    }
    if grant.client_id != client.client_id {
        return Err(AuthError::invalid_grant("Client ID mismatch"));
    }
    let Some(code_wrapped_key) = grant.auth_code_wrapped_key.clone() else {
        // The issuing client presented a code that was already exchanged: someone else may hold its tokens
        // (RFC 6749 §10.5), so everything issued from this grant is revoked.
        if let Err(e) = store.revoke_grant(user_id, grant_id).await {
            log::warn(&format!("could not revoke grant {grant_id} after a replayed code: {e}"));
        }
        return Err(AuthError::invalid_grant("Authorization code already used"));
    };
    let now = platform.clock.now_secs();
    // KV expires the pending grant after ten minutes, eventually; the stored time decides.
    if now > grant.created_at + AUTH_CODE_TTL_SECS {
        return Err(AuthError::invalid_grant("Authorization code expired"));
    }
    // The authorization endpoint requires PKCE of every client; a pending code without a challenge can only come
    // from before that (or from the TypeScript provider, which let confidential clients skip it). It lives ten
    // minutes, so the client is told to start again rather than let through without the proof.
    let Some(challenge) = grant.code_challenge.clone() else {
        return Err(AuthError::invalid_grant(
            "This authorization code was issued without PKCE, which this server now requires. Start the authorization again with code_challenge_method=S256.",
        ));
    };
    if grant.code_challenge_method.as_deref() != Some("S256") {
        return Err(AuthError::invalid_grant("The plain PKCE method is not allowed. Use S256 instead."));
    }
    if let Some(uri) = params.non_empty("redirect_uri") {
        let registered = redirect::matches_registered(uri, &client.redirect_uris);
        let as_authorized =
            grant.redirect_uri.as_ref().is_none_or(|g| redirect::matches_registered(uri, std::slice::from_ref(g)));
        if !registered || !as_authorized {
            return Err(AuthError::invalid_grant("Invalid redirect URI"));
        }
    }
    let Some(verifier) = params.non_empty("code_verifier") else {
        return Err(AuthError::invalid_request("code_verifier is required for PKCE"));
    };
    // RFC 7636 §4.1: a verifier outside the grammar is a malformed request, whatever its hash.
    if !is_code_verifier(verifier) {
        return Err(AuthError::invalid_request(
            "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 section 4.1)",
        ));
    }
    if !secrets_equal(&challenge, &pkce_s256(verifier)) {
        return Err(AuthError::invalid_grant("Invalid PKCE code_verifier"));
    }
    let audience = resource::resolve_for_token(&params.all("resource"), grant.resource.as_ref(), origin)?;
    let key = PropsKey::unwrap_with(code, &code_wrapped_key)?;
    let scopes = downscope(params.get("scope"), &grant.scope);

    grant.code_challenge = None;
    grant.code_challenge_method = None;
    grant.auth_code_wrapped_key = None;
    grant.clear_previous_refresh_token();
    // A client that may not refresh gets no refresh token (RFC 6749 §1.5: issuing one is the server's choice),
    // rather than one it would be refused with; its grant then lives as long as the access token.
    let refresh_token = if client.allows_grant_type("refresh_token", cimd::is_document_url(&client.client_id)) {
        let token = rotation::new_refresh_token(&mut grant)?;
        grant.refresh_token_id = Some(sha256_hex(&token));
        grant.refresh_token_wrapped_key = Some(key.wrap_for(&token)?);
        grant.expires_at = Some(now + REFRESH_TOKEN_TTL_SECS);
        Some(token)
    } else {
        grant.refresh_token_id = None;
        grant.refresh_token_wrapped_key = None;
        grant.expires_at = Some(now + ACCESS_TOKEN_TTL_SECS);
        None
    };
    store.save_grant(&grant, now).await?;

    // As the TypeScript provider does for a first token, the denormalised grant scope is the token's.
    let access_token = issue_access_token(
        &store,
        &grant,
        &key,
        scopes.clone(),
        scopes.clone(),
        audience.clone(),
        ACCESS_TOKEN_TTL_SECS,
        now,
    )
    .await?;
    let mut body = Map::new();
    body.insert("access_token".into(), json!(access_token));
    body.insert("token_type".into(), json!("bearer"));
    body.insert("expires_in".into(), json!(ACCESS_TOKEN_TTL_SECS));
    body.insert("scope".into(), json!(scopes.join(" ")));
    if let Some(refresh_token) = refresh_token {
        body.insert("refresh_token".into(), json!(refresh_token));
    }
    if let Some(audience) = audience {
        body.insert("resource".into(), json!(audience));
    }
    Ok(no_store(json_response(200, &Value::Object(body))))
}

async fn refresh(
    params: &Params,
    client: &StoredClient,
    platform: &Platform,
    origin: &str,
) -> Result<HttpResponse, AuthError> {
    let Some(presented) = params.non_empty("refresh_token") else {
        return Err(AuthError::invalid_request("Refresh token is required"));
    };
    let Some((user_id, grant_id)) = split_token(presented) else {
        return Err(AuthError::invalid_grant("Invalid token format"));
    };
    let store = Store::new(platform.oauth_kv.as_ref());
    let Some(mut grant) = store.grant(user_id, grant_id).await? else {
        return Err(AuthError::invalid_grant("Grant not found"));
    };
    let now = platform.clock.now_secs();
    // The current token, or the one before it once, briefly: a client whose last refresh answer was lost can
    // retry with the token it still has (`rotation` has the rules).
    let how = rotation::classify(&grant, presented, now);
    let wrapped = match how {
        Presented::Current => grant.refresh_token_wrapped_key.clone(),
        Presented::Retry => grant.previous_refresh_token_wrapped_key.clone(),
        Presented::Replayed => return Err(refresh_token_replayed(&store, &grant).await),
        // Matching nothing proves nothing: anyone who knows a grant id can send this, so nothing is revoked.
        Presented::Unknown => return Err(AuthError::invalid_grant("Invalid refresh token")),
    };
    if grant.client_id != client.client_id {
        return Err(AuthError::invalid_grant("Client ID mismatch"));
    }
    // Under a minute left cannot be written back to KV; treat it as expired.
    if grant.expires_at.is_some_and(|at| at.saturating_sub(now) < KV_MIN_TTL_SECS) {
        return Err(AuthError::invalid_grant("Refresh token has expired"));
    }
    let audience = resource::resolve_for_token(&params.all("resource"), grant.resource.as_ref(), origin)?;
    let Some(wrapped) = wrapped else {
        return Err(AuthError::Corrupt {
            key: super::storage::grant_key(user_id, grant_id),
            reason: "refresh token without a wrapped key".into(),
        });
    };
    let key = PropsKey::unwrap_with(presented, &wrapped)?;
    let scopes = downscope(params.get("scope"), &grant.scope);
    // An access token never outlives the refresh token it came from.
    let ttl = grant.expires_at.map_or(ACCESS_TOKEN_TTL_SECS, |at| ACCESS_TOKEN_TTL_SECS.min(at.saturating_sub(now)));

    let new_refresh = rotation::new_refresh_token(&mut grant)?;
    rotation::rotate(&mut grant, presented, how, wrapped, &new_refresh, &key, now)?;
    store.save_grant(&grant, now).await?;

    let grant_scope = grant.scope.clone();
    let access_token =
        issue_access_token(&store, &grant, &key, scopes.clone(), grant_scope, audience.clone(), ttl, now).await?;
    let mut body = Map::new();
    body.insert("access_token".into(), json!(access_token));
    body.insert("token_type".into(), json!("bearer"));
    body.insert("expires_in".into(), json!(ttl));
    body.insert("refresh_token".into(), json!(new_refresh));
    body.insert("scope".into(), json!(scopes.join(" ")));
    if let Some(audience) = audience {
        body.insert("resource".into(), json!(audience));
    }
    Ok(no_store(json_response(200, &Value::Object(body))))
}

/// A refresh token this grant issued and retired came back (an old one, the previous one a second time or after
/// its window, or one a retry replaced). Its rightful holder moved on to a newer one, so two parties hold tokens
/// of this grant and the server cannot tell which is the thief (RFC 9700 §4.14.2): the whole grant goes, with
/// every access token issued from it, and the person connects the client again. Deliberately done whatever
/// client presents it: the token is proof of a leaked secret, which is what matters.
async fn refresh_token_replayed(store: &Store<'_>, grant: &StoredGrant) -> AuthError {
    if let Err(e) = store.revoke_grant(&grant.user_id, &grant.id).await {
        log::warn(&format!(
            "a retired refresh token of grant {} (client {}) was presented, but revoking the grant failed: {e}",
            grant.id, grant.client_id
        ));
        // Not claimed as revoked: the client is told to retry, and the next attempt revokes it.
        return e;
    }
    log::warn(&format!(
        "a retired refresh token of grant {} (client {}) was presented again: possible token theft, grant revoked",
        grant.id, grant.client_id
    ));
    AuthError::invalid_grant(
        "This refresh token was already used, so it may have been copied: the authorization has been revoked. Connect the client to this server again.",
    )
}

#[allow(clippy::too_many_arguments)]
async fn issue_access_token(
    store: &Store<'_>,
    grant: &StoredGrant,
    key: &PropsKey,
    scope: Vec<String>,
    grant_scope: Vec<String>,
    audience: Option<Resource>,
    ttl: u64,
    now: u64,
) -> Result<String, AuthError> {
    if ttl < KV_MIN_TTL_SECS {
        return Err(AuthError::invalid_request("Requested token lifetime must be at least 60 seconds"));
    }
    let token = format!("{}:{}:{}", grant.user_id, grant.id, random_string(32)?);
    let record = StoredToken {
        id: sha256_hex(&token),
        grant_id: grant.id.clone(),
        user_id: grant.user_id.clone(),
        created_at: now,
        expires_at: now + ttl,
        audience,
        scope: Some(scope),
        wrapped_encryption_key: key.wrap_for(&token)?,
        grant: TokenGrant {
            client_id: grant.client_id.clone(),
            scope: grant_scope,
            encrypted_props: grant.encrypted_props.clone(),
        },
        extra: Default::default(),
    };
    store.put_token(&record, ttl).await?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_form_decoded() {
        let header = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("my%20id:s%3Acret"));
        match parse_basic(Some(&header)) {
            Basic::Credentials(id, secret) => assert_eq!((id.as_str(), secret.as_str()), ("my id", "s:cret")),
            _ => panic!("not parsed"),
        }
        assert!(matches!(parse_basic(Some("Basic")), Basic::Malformed));
        assert!(matches!(parse_basic(Some("Basic !!!")), Basic::Malformed));
        assert!(matches!(parse_basic(Some("Bearer x")), Basic::Absent));
    }

    #[test]
    fn downscoping_only_narrows() {
        let granted = vec!["zotero:read".to_owned()];
        assert_eq!(downscope(Some("zotero:read zotero:write"), &granted), ["zotero:read"]);
        assert_eq!(downscope(None, &granted), ["zotero:read"]);
        assert!(downscope(Some("zotero:write"), &granted).is_empty());
    }
}
