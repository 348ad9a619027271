//! OAuth clients: the metadata rules shared by Dynamic Client Registration and Client ID Metadata Documents,
//! and looking a client up by id (KV for registered clients, the document itself for URL client ids).

use serde_json::{Map, Value};

use super::redirect;
use super::storage::StoredClient;

/// What this server supports, as advertised in its metadata.
pub const GRANT_TYPES: &[&str] = &["authorization_code", "refresh_token"];
pub const RESPONSE_TYPES: &[&str] = &["code"];
pub const AUTH_METHODS: &[&str] = &["client_secret_basic", "client_secret_post", "none"];
/// Methods built on a shared secret; a metadata document is public, so its client cannot hold one.
const SHARED_SECRET_METHODS: &[&str] = &["client_secret_basic", "client_secret_post", "client_secret_jwt"];

/// Client metadata as sent (RFC 7591 §2), after type checks. Each error names the field and the rule.
#[derive(Debug, Default)]
pub struct ClientMetadata {
    pub client_id: Option<String>,
    pub redirect_uris: Option<Vec<String>>,
    pub client_name: Option<String>,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub policy_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub jwks_uri: Option<String>,
    pub i18n: Option<Map<String, Value>>,
    pub contacts: Option<Vec<String>>,
    pub grant_types: Option<Vec<String>>,
    pub response_types: Option<Vec<String>>,
    pub auth_method: Option<String>,
    pub auth_methods_supported: Option<Vec<String>>,
}

/// Why client metadata was refused (sent to the client as `invalid_client_metadata`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MetadataError(pub String);

fn err(message: impl Into<String>) -> MetadataError {
    MetadataError(message.into())
}

fn opt_string(raw: &Map<String, Value>, field: &str) -> Result<Option<String>, MetadataError> {
    match raw.get(field) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(err(format!("Invalid {field}: expected a string, got {}", type_name(other)))),
    }
}

fn opt_strings(raw: &Map<String, Value>, field: &str) -> Result<Option<Vec<String>>, MetadataError> {
    match raw.get(field) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| err(format!("Invalid {field}: array must contain only strings")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(err(format!("Invalid {field}: expected an array, got {}", type_name(other)))),
    }
}

fn opt_http_uri(raw: &Map<String, Value>, field: &str) -> Result<Option<String>, MetadataError> {
    let Some(uri) = opt_string(raw, field)? else { return Ok(None) };
    match url::Url::parse(&uri) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(Some(uri)),
        _ => Err(err(format!("Invalid {field}: must be an absolute http: or https: URL"))),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Localized variants (`client_name#fr`, `logo_uri#ja`, …), validated like their base field.
fn i18n(raw: &Map<String, Value>) -> Result<Option<Map<String, Value>>, MetadataError> {
    let mut out = Map::new();
    for key in raw.keys() {
        let Some((base, tag)) = key.split_once('#') else { continue };
        if base.is_empty() || tag.is_empty() {
            continue;
        }
        let value = match base {
            "client_name" => opt_string(raw, key)?,
            "client_uri" | "logo_uri" | "tos_uri" | "policy_uri" => opt_http_uri(raw, key)?,
            _ => continue,
        };
        if let Some(value) = value {
            out.insert(key.clone(), Value::String(value));
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

impl ClientMetadata {
    pub fn parse(raw: &Map<String, Value>) -> Result<Self, MetadataError> {
        let metadata = Self {
            client_id: opt_string(raw, "client_id")?,
            redirect_uris: opt_strings(raw, "redirect_uris")?,
            client_name: opt_string(raw, "client_name")?,
            client_uri: opt_http_uri(raw, "client_uri")?,
            logo_uri: opt_http_uri(raw, "logo_uri")?,
            policy_uri: opt_http_uri(raw, "policy_uri")?,
            tos_uri: opt_http_uri(raw, "tos_uri")?,
            jwks_uri: opt_http_uri(raw, "jwks_uri")?,
            i18n: i18n(raw)?,
            contacts: opt_strings(raw, "contacts")?,
            grant_types: opt_strings(raw, "grant_types")?,
            response_types: opt_strings(raw, "response_types")?,
            auth_method: opt_string(raw, "token_endpoint_auth_method")?,
            auth_methods_supported: opt_strings(raw, "token_endpoint_auth_methods_supported")?,
        };
        opt_string(raw, "token_endpoint_auth_signing_alg")?;
        opt_strings(raw, "token_endpoint_auth_signing_alg_values_supported")?;
        if let (Some(method), Some(methods)) = (&metadata.auth_method, &metadata.auth_methods_supported) {
            if !methods.contains(method) {
                return Err(err(
                    "token_endpoint_auth_method must be included in token_endpoint_auth_methods_supported",
                ));
            }
        }
        Ok(metadata)
    }

    fn redirect_uris_checked(&self) -> Result<Vec<String>, MetadataError> {
        let uris = self.redirect_uris.clone().unwrap_or_default();
        if uris.is_empty() {
            return Err(err("redirect_uris is required and must not be empty"));
        }
        if let Some(bad) = uris.iter().find(|u| !redirect::is_acceptable(u)) {
            return Err(err(format!("Invalid redirect URI `{bad}`: it needs a scheme, and javascript:, data:, vbscript:, file:, mailto: and blob: are refused")));
        }
        Ok(uris)
    }

    /// The client a registration request describes, before an id and secret are assigned.
    pub fn into_registered_client(self) -> Result<StoredClient, MetadataError> {
        let auth_method = negotiate_auth_method(
            AUTH_METHODS,
            "client_secret_basic",
            self.auth_method.as_deref(),
            self.auth_methods_supported.as_deref(),
            "Client",
        )?;
        let grant_types = self.grant_types.clone().unwrap_or_else(|| vec!["authorization_code".to_owned()]);
        let response_types = self.response_types.clone().unwrap_or_else(|| vec!["code".to_owned()]);
        check_grant_and_response_types(&grant_types, &response_types)?;
        let redirect_uris = self.redirect_uris_checked()?;
        let explicit = self.auth_method.is_some() || self.auth_methods_supported.is_some();
        Ok(self.into_client(String::new(), redirect_uris, grant_types, response_types, auth_method, explicit))
    }

    /// The client a metadata document describes, fetched from `url`.
    pub fn into_document_client(self, url: &str, raw: &Map<String, Value>) -> Result<StoredClient, MetadataError> {
        if self.client_id.as_deref() != Some(url) {
            return Err(err(format!(
                "client_id `{}` does not match the metadata URL `{url}`",
                self.client_id.as_deref().unwrap_or("(missing)")
            )));
        }
        if self.client_name.as_deref().is_none_or(|n| n.trim().is_empty()) {
            return Err(err("client_name is required and must not be empty"));
        }
        let redirect_uris = self.redirect_uris_checked()?;
        if raw.contains_key("client_secret") || raw.contains_key("client_secret_expires_at") {
            return Err(err("a client metadata document must not contain a client secret"));
        }
        if contains_private_jwk(raw.get("jwks"))? {
            return Err(err("a client metadata document must not contain private key material"));
        }
        if let Some(method) = self.auth_method.as_deref().filter(|m| SHARED_SECRET_METHODS.contains(m)) {
            return Err(err(format!("a metadata-document client cannot use the shared-secret method {method}")));
        }
        let accepted: Vec<&str> = AUTH_METHODS.iter().copied().filter(|m| !SHARED_SECRET_METHODS.contains(m)).collect();
        let auth_method = negotiate_auth_method(
            &accepted,
            "none",
            self.auth_method.as_deref(),
            self.auth_methods_supported.as_deref(),
            "The metadata-document client",
        )?;
        // Unlike a registration, a published document is written for many servers: grant types this server
        // does not offer (claude.ai lists jwt-bearer) are dropped rather than refused.
        let keep = |list: &Option<Vec<String>>, default: &str, supported: &[&str]| -> Vec<String> {
            list.clone()
                .unwrap_or_else(|| vec![default.to_owned()])
                .into_iter()
                .filter(|t| supported.contains(&t.as_str()))
                .collect()
        };
        let grant_types = keep(&self.grant_types, "authorization_code", GRANT_TYPES);
        let response_types = keep(&self.response_types, "code", RESPONSE_TYPES);
        check_grant_and_response_types(&grant_types, &response_types)?;
        Ok(self.into_client(url.to_owned(), redirect_uris, grant_types, response_types, auth_method, false))
    }

    fn into_client(
        self,
        client_id: String,
        redirect_uris: Vec<String>,
        grant_types: Vec<String>,
        response_types: Vec<String>,
        token_endpoint_auth_method: String,
        explicit: bool,
    ) -> StoredClient {
        StoredClient {
            client_id,
            redirect_uris,
            client_name: self.client_name,
            logo_uri: self.logo_uri,
            client_uri: self.client_uri,
            policy_uri: self.policy_uri,
            tos_uri: self.tos_uri,
            jwks_uri: self.jwks_uri,
            i18n: self.i18n,
            contacts: self.contacts,
            grant_types: Some(grant_types),
            response_types: Some(response_types),
            registration_date: None,
            token_endpoint_auth_method,
            auth_method_explicit: explicit.then_some(true),
            client_secret: None,
            extra: Map::new(),
        }
    }
}

fn negotiate_auth_method(
    accepted: &[&str],
    default: &str,
    preferred: Option<&str>,
    supported: Option<&[String]>,
    who: &str,
) -> Result<String, MetadataError> {
    if let Some(preferred) = preferred.filter(|p| accepted.contains(p)) {
        return Ok(preferred.to_owned());
    }
    let advertised: Vec<&str> = match supported {
        Some(list) => list.iter().map(String::as_str).collect(),
        None => vec![preferred.unwrap_or(default)],
    };
    accepted.iter().find(|m| advertised.contains(m)).map(|m| (*m).to_owned()).ok_or_else(|| {
        err(format!(
            "{who} supports no token endpoint authentication method this server accepts (accepted: {}; offered: {})",
            accepted.join(", "),
            advertised.join(", ")
        ))
    })
}

fn check_grant_and_response_types(grant_types: &[String], response_types: &[String]) -> Result<(), MetadataError> {
    if let Some(bad) = grant_types.iter().find(|g| !GRANT_TYPES.contains(&g.as_str())) {
        return Err(err(format!("Unsupported grant_type: {bad} (supported: {})", GRANT_TYPES.join(", "))));
    }
    if let Some(bad) = response_types.iter().find(|r| !RESPONSE_TYPES.contains(&r.as_str())) {
        return Err(err(format!("Unsupported response_type: {bad} (supported: code)")));
    }
    if grant_types.iter().any(|g| g == "authorization_code") != response_types.iter().any(|r| r == "code") {
        return Err(err("grant_types authorization_code and response_types code must be registered together"));
    }
    Ok(())
}

fn contains_private_jwk(jwks: Option<&Value>) -> Result<bool, MetadataError> {
    let Some(jwks) = jwks else { return Ok(false) };
    let keys = jwks.get("keys").and_then(Value::as_array).ok_or_else(|| err("Invalid jwks: keys must be an array"))?;
    const PRIVATE: &[&str] = &["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
    keys.iter().try_fold(false, |found, key| {
        let key = key.as_object().ok_or_else(|| err("Invalid jwks: every key must be an object"))?;
        Ok(found || key.keys().any(|m| PRIVATE.contains(&m.as_str())))
    })
}
