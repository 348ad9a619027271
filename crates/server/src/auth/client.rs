//! OAuth clients: the metadata rules shared by Dynamic Client Registration and Client ID Metadata Documents,
//! and looking a client up by id (KV for registered clients, the document itself for URL client ids).

use super::client_name::sanitize_client_name;
#[cfg(test)]
use super::client_name::MAX_CLIENT_NAME_CHARS;
use serde_json::{Map, Value};
use zotero_mcp_core::net::parse_url;

/// Most redirect URIs a client may register.
pub const MAX_REDIRECT_URIS: usize = 10;

use super::redirect;
use super::storage::StoredClient;

/// What this server supports, as advertised in its metadata.
pub const GRANT_TYPES: &[&str] = &["authorization_code", "refresh_token"];
pub const RESPONSE_TYPES: &[&str] = &["code"];
pub const AUTH_METHODS: &[&str] = &["client_secret_basic", "client_secret_post", "none"];
/// Methods built on a shared secret; a metadata document is public, so its client cannot hold one.
const SHARED_SECRET_METHODS: &[&str] = &["client_secret_basic", "client_secret_post", "client_secret_jwt"];

// Registration is open to anyone (RFC 7591 §3 without an initial access token) and a record lives up to 90 days, so
// every field is bounded. The bounds are far above what real clients send: a handful of redirect URIs at most,
// names like "Claude Code", callback URLs under 100 bytes. The 16 KiB body limit (`register`) bounds the total.

/// Longest URI or other free-text value (`client_uri`, `logo_uri`, `contacts` entries, `software_id`, …), in bytes.
pub const MAX_TEXT_BYTES: usize = 2048;
/// Most `contacts` entries.
pub const MAX_CONTACTS: usize = 5;

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

/// An error if `value` of `field` is over [`MAX_TEXT_BYTES`].
fn check_text_length(field: &str, value: &str) -> Result<(), MetadataError> {
    if value.len() > MAX_TEXT_BYTES {
        return Err(err(format!(
            "Invalid {field}: at most {MAX_TEXT_BYTES} bytes are accepted, got {}; send a shorter value",
            value.len()
        )));
    }
    Ok(())
}

fn opt_http_uri(raw: &Map<String, Value>, field: &str) -> Result<Option<String>, MetadataError> {
    let Some(uri) = opt_string(raw, field)? else { return Ok(None) };
    check_text_length(field, &uri)?;
    match parse_url(&uri) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(Some(uri)),
        _ => Err(err(format!("Invalid {field}: must be an absolute http: or https: URL"))),
    }
}

/// `contacts`: at most [`MAX_CONTACTS`] strings of at most [`MAX_TEXT_BYTES`] each.
fn opt_contacts(raw: &Map<String, Value>) -> Result<Option<Vec<String>>, MetadataError> {
    let Some(contacts) = opt_strings(raw, "contacts")? else { return Ok(None) };
    if contacts.len() > MAX_CONTACTS {
        return Err(err(format!(
            "Invalid contacts: at most {MAX_CONTACTS} are accepted, got {}; list only the people responsible for this client",
            contacts.len()
        )));
    }
    for contact in &contacts {
        check_text_length("contacts", contact)?;
    }
    Ok(Some(contacts))
}

/// `software_id` and `software_version` (RFC 7591 §2) are neither stored nor shown; a string over
/// [`MAX_TEXT_BYTES`] is still refused, like every other free-text field. Other types are left alone, as before.
fn check_software_fields(raw: &Map<String, Value>) -> Result<(), MetadataError> {
    for field in ["software_id", "software_version"] {
        if let Some(Value::String(value)) = raw.get(field) {
            check_text_length(field, value)?;
        }
    }
    Ok(())
}

fn opt_client_name(raw: &Map<String, Value>, field: &str) -> Result<Option<String>, MetadataError> {
    Ok(opt_string(raw, field)?.map(|name| sanitize_client_name(&name)))
}

/// A redirect URI for a message: long ones are cut, so the refusal does not echo kilobytes back.
fn shown(uri: &str) -> String {
    const SHOWN_CHARS: usize = 100;
    if uri.chars().count() <= SHOWN_CHARS {
        return uri.to_owned();
    }
    let mut cut: String = uri.chars().take(SHOWN_CHARS).collect();
    cut.push('…');
    cut
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
            "client_name" => opt_client_name(raw, key)?,
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
            client_name: opt_client_name(raw, "client_name")?,
            client_uri: opt_http_uri(raw, "client_uri")?,
            logo_uri: opt_http_uri(raw, "logo_uri")?,
            policy_uri: opt_http_uri(raw, "policy_uri")?,
            tos_uri: opt_http_uri(raw, "tos_uri")?,
            jwks_uri: opt_http_uri(raw, "jwks_uri")?,
            i18n: i18n(raw)?,
            contacts: opt_contacts(raw)?,
            grant_types: opt_strings(raw, "grant_types")?,
            response_types: opt_strings(raw, "response_types")?,
            auth_method: opt_string(raw, "token_endpoint_auth_method")?,
            auth_methods_supported: opt_strings(raw, "token_endpoint_auth_methods_supported")?,
        };
        check_software_fields(raw)?;
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
        if uris.len() > MAX_REDIRECT_URIS {
            return Err(err(format!(
                "redirect_uris: at most {MAX_REDIRECT_URIS} are accepted, got {}; register the ones this client uses",
                uris.len()
            )));
        }
        for uri in &uris {
            if let Some(problem) = redirect::problem(uri) {
                return Err(err(format!("Invalid redirect URI `{}`: it {problem}", shown(uri))));
            }
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
        // Grant types are enforced at the token endpoint. A client that names none gets both this server offers
        // rather than RFC 7591's `authorization_code` alone (§3.2.1 lets the server substitute, and the answer
        // says what was stored): every code exchange issues a refresh token, and clients that name nothing
        // have always refreshed with it.
        let grant_types_explicit = self.grant_types.is_some();
        let grant_types =
            self.grant_types.clone().unwrap_or_else(|| GRANT_TYPES.iter().map(|g| (*g).to_owned()).collect());
        let response_types = self.response_types.clone().unwrap_or_else(|| vec!["code".to_owned()]);
        check_grant_and_response_types(&grant_types, &response_types)?;
        let redirect_uris = self.redirect_uris_checked()?;
        let explicit = self.auth_method.is_some() || self.auth_methods_supported.is_some();
        let mut client =
            self.into_client(String::new(), redirect_uris, grant_types, response_types, auth_method, explicit);
        client.grant_types_explicit = grant_types_explicit.then_some(true);
        Ok(client)
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
        // does not offer (claude.ai lists jwt-bearer) are dropped rather than refused. A document that names no
        // grant types gets both this server offers, as a registration does (grant types are enforced).
        let keep = |list: &Option<Vec<String>>, default: &[&str], supported: &[&str]| -> Vec<String> {
            list.clone()
                .unwrap_or_else(|| default.iter().map(|d| (*d).to_owned()).collect())
                .into_iter()
                .filter(|t| supported.contains(&t.as_str()))
                .collect()
        };
        let grant_types = keep(&self.grant_types, GRANT_TYPES, GRANT_TYPES);
        let response_types = keep(&self.response_types, &["code"], RESPONSE_TYPES);
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
            grant_types_explicit: None,
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn metadata(value: Value) -> Result<ClientMetadata, MetadataError> {
        let Value::Object(raw) = value else { panic!("an object") };
        ClientMetadata::parse(&raw)
    }

    #[test]
    fn client_names_lose_control_and_bidi_characters_and_are_cut_to_100_characters() {
        assert_eq!(sanitize_client_name("Claude"), "Claude");
        assert_eq!(sanitize_client_name("Evil\u{202E}edualC\u{202C}"), "EviledualC");
        let every_bidi =
            "\u{202A}\u{202B}\u{202C}\u{202D}\u{202E}\u{2066}\u{2067}\u{2068}\u{2069}\u{200E}\u{200F}\u{061C}";
        assert_eq!(sanitize_client_name(&format!("a{every_bidi}b")), "ab");
        assert_eq!(sanitize_client_name("two\nlines\tand\u{7}bell\u{0}"), "two lines andbell");
        assert_eq!(sanitize_client_name("  \u{202E} "), "");
        let hundred = "é".repeat(100);
        assert_eq!(sanitize_client_name(&hundred), hundred, "100 characters (200 bytes) are kept whole");
        let cut = sanitize_client_name(&"x".repeat(100_000));
        assert_eq!(cut.chars().count(), MAX_CLIENT_NAME_CHARS);
        assert!(cut.ends_with("x…"));
        // Characters removed do not count towards the limit.
        let padded = format!("{}{}", "\u{202E}".repeat(500), "n".repeat(100));
        assert_eq!(sanitize_client_name(&padded), "n".repeat(100));
    }

    #[test]
    fn grant_types_default_to_both_and_named_ones_are_marked_explicit() {
        let named =
            metadata(json!({ "redirect_uris": ["https://app.example/cb"], "grant_types": ["authorization_code"] }));
        let named = named.unwrap().into_registered_client().unwrap();
        assert_eq!(named.grant_types.as_deref(), Some(&["authorization_code".to_owned()][..]));
        assert_eq!(named.grant_types_explicit, Some(true));
        let unnamed = metadata(json!({ "redirect_uris": ["https://app.example/cb"] })).unwrap();
        let unnamed = unnamed.into_registered_client().unwrap();
        assert_eq!(unnamed.grant_types, Some(vec!["authorization_code".to_owned(), "refresh_token".to_owned()]));
        assert_eq!(unnamed.grant_types_explicit, None);
        // A metadata document that names none gets both as well; one that names grant types gets those.
        let url = "https://app.example/client.json";
        let document = |extra: Value| {
            let mut raw = json!({ "client_id": url, "client_name": "App", "redirect_uris": ["https://app.example/cb"],
                "token_endpoint_auth_method": "none" });
            raw.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let Value::Object(raw) = raw else { unreachable!() };
            ClientMetadata::parse(&raw).unwrap().into_document_client(url, &raw).unwrap()
        };
        assert_eq!(document(json!({})).grant_types, unnamed.grant_types);
        let codes_only = document(json!({ "grant_types": ["authorization_code"] }));
        assert_eq!(codes_only.grant_types.as_deref(), Some(&["authorization_code".to_owned()][..]));
        assert!(!codes_only.allows_grant_type("refresh_token", true));
    }

    #[test]
    fn names_are_cleaned_in_every_language() {
        let parsed = metadata(json!({ "client_name": "A\u{202E}B", "client_name#fr": "C\u{2066}D" })).unwrap();
        assert_eq!(parsed.client_name.as_deref(), Some("AB"));
        assert_eq!(parsed.i18n.unwrap()["client_name#fr"], "CD");
    }

    #[test]
    fn free_text_fields_are_bounded() {
        let long = format!("https://app.example/{}", "a".repeat(MAX_TEXT_BYTES));
        for field in ["client_uri", "logo_uri", "policy_uri", "tos_uri", "jwks_uri", "logo_uri#ja"] {
            let refused = metadata(json!({ field: long })).unwrap_err().0;
            assert!(refused.contains(field) && refused.contains("at most 2048 bytes"), "{refused}");
        }
        for field in ["software_id", "software_version"] {
            let refused = metadata(json!({ field: "v".repeat(MAX_TEXT_BYTES + 1) })).unwrap_err().0;
            assert!(refused.contains(field), "{refused}");
            assert!(metadata(json!({ field: "1.0" })).is_ok());
        }
        let six = metadata(json!({ "contacts": ["a@x", "b@x", "c@x", "d@x", "e@x", "f@x"] })).unwrap_err().0;
        assert!(six.contains("at most 5"), "{six}");
        assert!(metadata(json!({ "contacts": ["a@x", "b@x", "c@x", "d@x", "e@x"] })).is_ok());
        let long_contact = metadata(json!({ "contacts": ["x".repeat(MAX_TEXT_BYTES + 1)] })).unwrap_err().0;
        assert!(long_contact.contains("contacts"), "{long_contact}");
    }

    #[test]
    fn redirect_uris_are_counted_and_checked_one_by_one() {
        let uris = |n: usize| (0..n).map(|i| format!("https://app.example/cb{i}")).collect::<Vec<_>>();
        let ten = metadata(json!({ "redirect_uris": uris(MAX_REDIRECT_URIS) })).unwrap();
        assert_eq!(ten.into_registered_client().unwrap().redirect_uris.len(), MAX_REDIRECT_URIS);
        let eleven = metadata(json!({ "redirect_uris": uris(MAX_REDIRECT_URIS + 1) })).unwrap();
        let refused = eleven.into_registered_client().unwrap_err().0;
        assert!(refused.contains("at most 10") && refused.contains("register the ones this client uses"), "{refused}");
        let long = format!("https://app.example/{}", "a".repeat(10_000));
        let refused = metadata(json!({ "redirect_uris": [long] })).unwrap().into_registered_client().unwrap_err().0;
        assert!(refused.contains("at most 2048") && refused.chars().count() < 400, "the URI is not echoed whole");
    }
}
