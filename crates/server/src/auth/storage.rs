//! The `OAUTH_KV` layout of workers-oauth-provider 0.10.3, field for field (see its `storage-schema.md`):
//!
//! | key | value | lifetime |
//! |---|---|---|
//! | `client:{clientId}` | [`StoredClient`] | 24 hours for a registered client until it is first approved, then 90 days from its registration |
//! | `grant:{userId}:{grantId}` | [`StoredGrant`] | 10 min while the code is pending, then the refresh lifetime (the access token's for a client not registered for `refresh_token`) |
//! | `token:{userId}:{grantId}:{sha256(token)}` | [`StoredToken`] | the access token's lifetime |
//!
//! JSON is camelCase with absent fields omitted, as `JSON.stringify` writes it. Fields this version does not
//! know are kept (`extra`) so a record written by a newer TypeScript deployment survives a rewrite here.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use zotero_mcp_core::platform::{KvStore, KvWrite};

use super::error::AuthError;

/// How long a pending authorization code (and its grant) lives.
pub const AUTH_CODE_TTL_SECS: u64 = 600;
/// Access token lifetime.
pub const ACCESS_TOKEN_TTL_SECS: u64 = 3600;
/// Refresh token (and so grant) lifetime.
pub const REFRESH_TOKEN_TTL_SECS: u64 = 30 * 24 * 3600;
/// Lifetime of a dynamically registered client that has been approved once, from its registration.
pub const CLIENT_REGISTRATION_TTL_SECS: u64 = 90 * 24 * 3600;
/// Lifetime of a dynamically registered client until someone approves it. Registration is open to anyone, and
/// real clients register right before they send the person to the consent page; a registration nobody approves
/// within a day is abandoned or abuse, and need not occupy the store for 90 days.
pub const UNUSED_CLIENT_TTL_SECS: u64 = 24 * 3600;
/// How long after [`UNUSED_CLIENT_TTL_SECS`] an approval still extends a client: KV may serve a record for a
/// little while after it expired, and a client approved then must not vanish right after.
const UNUSED_CLIENT_GRACE_SECS: u64 = 3600;
/// Workers KV refuses expirations closer than this.
pub const KV_MIN_TTL_SECS: u64 = 60;
/// Headroom over the KV minimum for absolute expirations, which KV checks against its own clock.
const KV_EXPIRATION_MARGIN_SECS: u64 = 5;
/// Grants per KV listing page when scanning a user's grants.
const LIST_PAGE: u32 = 50;
/// How many retired refresh tokens from before family keys a grant remembers (see
/// [`StoredGrant::retire_refresh_token_id`]). Only tokens without a tag go there (at most the two a grant held
/// when this server first rotated it, more only if the TypeScript server rotated it in between), so the list
/// stops growing; the cap bounds a record someone else wrote. Each costs 64 bytes of the record.
pub const RETIRED_REFRESH_TOKENS_KEPT: usize = 20;
/// The grant field (in `extra`) holding the hashes of its retired untagged refresh tokens, oldest first.
const RETIRED_REFRESH_TOKEN_IDS: &str = "retiredRefreshTokenIds";
/// The grant field (in `extra`) holding the key that tags its refresh tokens (`crypto::refresh_token_tag`).
const REFRESH_TOKEN_FAMILY_KEY: &str = "refreshTokenFamilyKey";
/// The grant field (in `extra`) saying until when its previous refresh token may be used once more:
/// `{"id": <the previous token's hash>, "until": <seconds>}`. The hash ties it to the token it was written for,
/// so a previous token another server put there (the TypeScript one rotates grants without knowing the field)
/// gets no retry from it.
const PREVIOUS_REFRESH_TOKEN_RETRY: &str = "previousRefreshTokenRetry";

/// One resource indicator or several (RFC 8707 allows repeating `resource`); stored as a string or an array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Resource {
    One(String),
    Many(Vec<String>),
}

impl Resource {
    pub fn from_values(values: Vec<String>) -> Option<Self> {
        match values.len() {
            0 => None,
            1 => values.into_iter().next().map(Resource::One),
            _ => Some(Resource::Many(values)),
        }
    }
    pub fn values(&self) -> Vec<&str> {
        match self {
            Resource::One(one) => vec![one.as_str()],
            Resource::Many(many) => many.iter().map(String::as_str).collect(),
        }
    }
}

/// A registered OAuth client (`client:{clientId}`). `client_secret` is the SHA-256 hex of the secret.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredClient {
    pub client_id: String,
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub i18n: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contacts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_date: Option<u64>,
    #[serde(default = "default_auth_method")]
    pub token_endpoint_auth_method: String,
    /// Set when the client chose its auth method at registration; then it may not switch between the two
    /// secret methods at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method_explicit: Option<bool>,
    /// Set when the client named its `grant_types` at registration; then they are enforced exactly as written.
    /// Records without it that list `authorization_code` may hold the old default (this server and the
    /// TypeScript provider stored `["authorization_code"]` for a registration that named none, and such clients
    /// have been refreshing), so they keep `refresh_token` too. The TypeScript provider ignores the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_explicit: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn default_auth_method() -> String {
    "client_secret_basic".to_owned()
}

impl StoredClient {
    pub fn is_public(&self) -> bool {
        self.token_endpoint_auth_method == "none"
    }

    /// Whether the client may use `grant_type` at the token endpoint: one of its registered grant types (RFC
    /// 7591 §2: `authorization_code` when the record names none), or `refresh_token` for a registered client
    /// whose record may hold the old default (see [`Self::grant_types_explicit`]). Metadata-document clients
    /// are parsed afresh on every lookup, so they get exactly what their document says.
    pub fn allows_grant_type(&self, grant_type: &str, is_document_client: bool) -> bool {
        let default = ["authorization_code".to_owned()];
        let registered = self.grant_types.as_deref().unwrap_or(&default);
        let listed = |g: &str| registered.iter().any(|r| r == g);
        if listed(grant_type) {
            return true;
        }
        grant_type == "refresh_token"
            && !is_document_client
            && self.grant_types_explicit.is_none()
            && listed("authorization_code")
    }
    /// The name to show a person: the registered name, else the id.
    /// The name shown on the consent page: the registered name cleaned again (records stored before names
    /// were cleaned at registration may still hold control or bidi characters), or the client id.
    pub fn display_name(&self) -> String {
        let name = self.client_name.as_deref().map(super::client_name::sanitize_client_name).unwrap_or_default();
        if name.trim().is_empty() {
            self.client_id.clone()
        } else {
            name
        }
    }
}

/// An authorization (`grant:{userId}:{grantId}`). Holds only hashes and wrapped keys, never a usable secret.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredGrant {
    pub id: String,
    pub client_id: String,
    pub user_id: String,
    #[serde(default)]
    pub scope: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    pub encrypted_props: String,
    pub created_at: u64,
    /// When the refresh token (and the grant) expires; absent while the code is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token_wrapped_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_refresh_token_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_refresh_token_wrapped_key: Option<String>,
    /// Hash of the authorization code; kept after the exchange so a replayed code is recognised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_code_id: Option<String>,
    /// Present only until the code is exchanged: its absence marks the code as used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_code_wrapped_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<Resource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What refresh-token rotation remembers beyond the TypeScript layout (`auth::rotation` has the rules). The fields
/// live in `extra` rather than as struct fields so that a malformed value (not written by this server) is ignored
/// instead of making the grant unreadable; workers-oauth-provider does not know them and keeps them when it
/// rewrites the grant (it updates the record in place), and a record without them (any it wrote) simply has no
/// family key, no retry allowance and no retired tokens.
impl StoredGrant {
    /// The key that tags this grant's refresh tokens, when it has one.
    pub fn refresh_family_key(&self) -> Option<&str> {
        self.extra.get(REFRESH_TOKEN_FAMILY_KEY).and_then(Value::as_str).filter(|k| !k.is_empty())
    }

    /// Sets the key that tags this grant's refresh tokens. Set once per grant: changing it would make every
    /// token tagged before unrecognisable.
    pub fn set_refresh_family_key(&mut self, key: String) {
        self.extra.insert(REFRESH_TOKEN_FAMILY_KEY.to_owned(), Value::String(key));
    }

    /// Until when the previous refresh token may still be used once, if it may: only when the allowance was
    /// written for that very token.
    pub fn previous_refresh_retry_until(&self) -> Option<u64> {
        let previous = self.previous_refresh_token_id.as_deref()?;
        let retry = self.extra.get(PREVIOUS_REFRESH_TOKEN_RETRY)?;
        let id = retry.get("id").and_then(Value::as_str)?;
        (id == previous).then(|| retry.get("until").and_then(Value::as_u64)).flatten()
    }

    /// Allows the previous refresh token (whose hash is `id`) one more use until `until` (seconds).
    pub fn allow_previous_refresh_retry(&mut self, id: &str, until: u64) {
        let mut retry = Map::new();
        retry.insert("id".to_owned(), Value::String(id.to_owned()));
        retry.insert("until".to_owned(), Value::from(until));
        self.extra.insert(PREVIOUS_REFRESH_TOKEN_RETRY.to_owned(), Value::Object(retry));
    }

    /// Forgets the previous refresh token and its retry allowance: it has no use left.
    pub fn clear_previous_refresh_token(&mut self) {
        self.previous_refresh_token_id = None;
        self.previous_refresh_token_wrapped_key = None;
        self.extra.remove(PREVIOUS_REFRESH_TOKEN_RETRY);
    }

    /// Whether `presented` is one of this grant's retired untagged refresh tokens (compared as hashes, in
    /// constant time).
    pub fn is_retired_refresh_token(&self, presented: &str) -> bool {
        self.retired_refresh_token_ids().any(|id| super::crypto::matches_hash(presented, id))
    }

    /// Remembers the hash of an untagged refresh token that no longer works, forgetting the oldest beyond
    /// [`RETIRED_REFRESH_TOKENS_KEPT`]. A malformed stored list (not written by this server) is replaced; a hash
    /// already listed is not listed twice.
    pub fn retire_refresh_token_id(&mut self, hash: String) {
        let mut ids: Vec<Value> = self.retired_refresh_token_ids().map(|id| Value::String(id.to_owned())).collect();
        if ids.iter().any(|id| id.as_str() == Some(hash.as_str())) {
            return;
        }
        ids.push(Value::String(hash));
        let excess = ids.len().saturating_sub(RETIRED_REFRESH_TOKENS_KEPT);
        ids.drain(..excess);
        self.extra.insert(RETIRED_REFRESH_TOKEN_IDS.to_owned(), Value::Array(ids));
    }

    fn retired_refresh_token_ids(&self) -> impl Iterator<Item = &str> {
        self.extra
            .get(RETIRED_REFRESH_TOKEN_IDS)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }
}

/// An access token (`token:{userId}:{grantId}:{sha256(token)}`), with the grant fields a request needs
/// denormalised into it so a request costs one read.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredToken {
    pub id: String,
    pub grant_id: String,
    pub user_id: String,
    pub created_at: u64,
    pub expires_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Resource>,
    /// Absent on records older than token-level scopes; then the grant's scope applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Vec<String>>,
    pub wrapped_encryption_key: String,
    pub grant: TokenGrant,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenGrant {
    pub client_id: String,
    #[serde(default)]
    pub scope: Vec<String>,
    pub encrypted_props: String,
}

/// What a grant authorizes, encrypted in the grant and every token: the TypeScript project's `AuthProps`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Props {
    pub user_id: String,
    #[serde(default)]
    pub scopes: Vec<String>,
}

pub fn client_key(client_id: &str) -> String {
    format!("client:{client_id}")
}
pub fn grant_key(user_id: &str, grant_id: &str) -> String {
    format!("grant:{user_id}:{grant_id}")
}
pub fn token_key(user_id: &str, grant_id: &str, token_hash: &str) -> String {
    format!("token:{user_id}:{grant_id}:{token_hash}")
}

/// A token, code or refresh token split into its `userId:grantId:secret` parts (exactly three).
pub fn split_token(token: &str) -> Option<(&str, &str)> {
    let mut parts = token.split(':');
    let (user, grant, _secret) = (parts.next()?, parts.next()?, parts.next()?);
    parts.next().is_none().then_some((user, grant))
}

/// Typed access to `OAUTH_KV`.
pub struct Store<'a> {
    kv: &'a dyn KvStore,
}

impl<'a> Store<'a> {
    pub fn new(kv: &'a dyn KvStore) -> Self {
        Self { kv }
    }

    async fn read<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>, AuthError> {
        match self.kv.get(key).await? {
            None => Ok(None),
            Some(text) => serde_json::from_slice(text.as_bytes())
                .map(Some)
                .map_err(|e| AuthError::Corrupt { key: key.to_owned(), reason: e.to_string() }),
        }
    }

    async fn write<T: Serialize>(&self, key: &str, value: &T, lifetime: KvWrite) -> Result<(), AuthError> {
        let text = serde_json::to_string(value)
            .map_err(|e| AuthError::Corrupt { key: key.to_owned(), reason: e.to_string() })?;
        Ok(self.kv.put(key, &text, lifetime).await?)
    }

    pub async fn client(&self, client_id: &str) -> Result<Option<StoredClient>, AuthError> {
        self.read(&client_key(client_id)).await
    }

    pub async fn put_client(&self, client: &StoredClient, lifetime: KvWrite) -> Result<(), AuthError> {
        self.write(&client_key(&client.client_id), client, lifetime).await
    }

    /// Gives a registered client that may still be on its short first lifetime ([`UNUSED_CLIENT_TTL_SECS`]) the
    /// full one, 90 days from its registration, because someone approved it. Only a client registered within
    /// the last day (plus the grace) can be on the short lifetime, so older ones, including every record written
    /// by the TypeScript provider or before this rule, are left exactly as they are. Returns whether it wrote.
    pub async fn keep_approved_client(&self, client: &StoredClient, now: u64) -> Result<bool, AuthError> {
        let Some(registered) = client.registration_date else { return Ok(false) };
        if now >= registered.saturating_add(UNUSED_CLIENT_TTL_SECS + UNUSED_CLIENT_GRACE_SECS) {
            return Ok(false);
        }
        let until = registered.saturating_add(CLIENT_REGISTRATION_TTL_SECS);
        let lifetime = KvWrite::ExpiresAt(until.max(now + KV_MIN_TTL_SECS + KV_EXPIRATION_MARGIN_SECS));
        self.put_client(client, lifetime).await?;
        Ok(true)
    }

    pub async fn grant(&self, user_id: &str, grant_id: &str) -> Result<Option<StoredGrant>, AuthError> {
        self.read(&grant_key(user_id, grant_id)).await
    }

    /// An access token's record and whether its grant still exists, in one read of both keys (the bearer check
    /// on every `/mcp` request; the grant is not parsed, its presence is all that check needs).
    pub async fn token_and_grant(
        &self,
        user_id: &str,
        grant_id: &str,
        hash: &str,
    ) -> Result<(Option<StoredToken>, bool), AuthError> {
        let token_key = token_key(user_id, grant_id, hash);
        let values = self.kv.get_many(&[&token_key, &grant_key(user_id, grant_id)]).await?;
        let mut values = values.into_iter();
        let (token, grant) = (values.next().flatten(), values.next().flatten());
        let token = match token {
            None => None,
            Some(text) => Some(
                serde_json::from_slice(text.as_bytes())
                    .map_err(|e| AuthError::Corrupt { key: token_key, reason: e.to_string() })?,
            ),
        };
        Ok((token, grant.is_some()))
    }

    /// Stores a grant whose code is still pending: it disappears with the code.
    pub async fn put_pending_grant(&self, grant: &StoredGrant) -> Result<(), AuthError> {
        self.write(&grant_key(&grant.user_id, &grant.id), grant, KvWrite::ExpiresIn(AUTH_CODE_TTL_SECS)).await
    }

    /// Stores an active grant until its refresh token expires (never less than KV accepts).
    pub async fn save_grant(&self, grant: &StoredGrant, now: u64) -> Result<(), AuthError> {
        let lifetime = match grant.expires_at {
            Some(at) => KvWrite::ExpiresAt(at.max(now + KV_MIN_TTL_SECS + KV_EXPIRATION_MARGIN_SECS)),
            None => KvWrite::Forever,
        };
        self.write(&grant_key(&grant.user_id, &grant.id), grant, lifetime).await
    }

    pub async fn token(&self, user_id: &str, grant_id: &str, hash: &str) -> Result<Option<StoredToken>, AuthError> {
        self.read(&token_key(user_id, grant_id, hash)).await
    }

    pub async fn put_token(&self, token: &StoredToken, ttl_secs: u64) -> Result<(), AuthError> {
        self.write(&token_key(&token.user_id, &token.grant_id, &token.id), token, KvWrite::ExpiresIn(ttl_secs)).await
    }

    pub async fn delete_token(&self, user_id: &str, grant_id: &str, hash: &str) -> Result<(), AuthError> {
        Ok(self.kv.delete(&token_key(user_id, grant_id, hash)).await?)
    }

    /// Deletes a grant and every access token issued under it. Tokens go first: a grant without tokens is
    /// harmless, tokens without their grant are refused by the bearer check anyway.
    pub async fn revoke_grant(&self, user_id: &str, grant_id: &str) -> Result<(), AuthError> {
        let prefix = format!("token:{user_id}:{grant_id}:");
        let mut cursor: Option<String> = None;
        loop {
            let page = self.kv.list(&prefix, cursor.as_deref(), 1000).await?;
            for key in &page.keys {
                self.kv.delete(&key.name).await?;
            }
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        Ok(self.kv.delete(&grant_key(user_id, grant_id)).await?)
    }

    /// Every grant of a user (pending ones included). A record that no longer parses is skipped, not fatal:
    /// this scan only decides which old grants to revoke.
    pub async fn user_grants(&self, user_id: &str) -> Result<Vec<StoredGrant>, AuthError> {
        let prefix = format!("grant:{user_id}:");
        let mut grants = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.kv.list(&prefix, cursor.as_deref(), LIST_PAGE).await?;
            for key in &page.keys {
                match self.read::<StoredGrant>(&key.name).await {
                    Ok(Some(grant)) => grants.push(grant),
                    Ok(None) => {}
                    Err(e) => super::log::warn(&e.to_string()),
                }
            }
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        Ok(grants)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_into_exactly_three_parts() {
        assert_eq!(split_token("owner:g1:secret"), Some(("owner", "g1")));
        assert_eq!(split_token("owner:g1"), None);
        assert_eq!(split_token("a:b:c:d"), None);
    }

    #[test]
    fn grant_types_are_enforced_except_where_a_record_may_hold_the_old_default() {
        let client = |grant_types: Option<&[&str]>, explicit: bool| {
            let mut record = serde_json::json!({ "clientId": "c", "redirectUris": [] });
            if let Some(g) = grant_types {
                record["grantTypes"] = serde_json::json!(g);
            }
            if explicit {
                record["grantTypesExplicit"] = serde_json::json!(true);
            }
            serde_json::from_value::<StoredClient>(record).unwrap()
        };
        let both = client(Some(&["authorization_code", "refresh_token"]), true);
        assert!(both.allows_grant_type("authorization_code", false) && both.allows_grant_type("refresh_token", false));
        let codes_only = client(Some(&["authorization_code"]), true);
        assert!(codes_only.allows_grant_type("authorization_code", false));
        assert!(!codes_only.allows_grant_type("refresh_token", false), "named explicitly, so enforced");
        let refresh_only = client(Some(&["refresh_token"]), true);
        assert!(!refresh_only.allows_grant_type("authorization_code", false));
        // No marker: the record may hold the old default of a registration that named none.
        let old_default = client(Some(&["authorization_code"]), false);
        assert!(old_default.allows_grant_type("refresh_token", false));
        assert!(!old_default.allows_grant_type("refresh_token", true), "a metadata document means what it says");
        assert!(!old_default.allows_grant_type("urn:ietf:params:oauth:grant-type:jwt-bearer", false));
        let no_field = client(None, false);
        assert!(no_field.allows_grant_type("authorization_code", false), "RFC 7591's default");
        assert!(!no_field.allows_grant_type("refresh_token", true));
        assert!(!client(Some(&["refresh_token"]), false).allows_grant_type("authorization_code", false));
    }

    #[test]
    fn retired_refresh_tokens_are_bounded_and_matched_by_hash() {
        let mut grant: StoredGrant = serde_json::from_value(serde_json::json!({ "id": "g", "clientId": "c",
            "userId": "owner", "encryptedProps": "AAAA", "createdAt": 1 }))
        .unwrap();
        assert!(serde_json::to_value(&grant).unwrap().get("retiredRefreshTokenIds").is_none());
        for n in 0..25 {
            grant.retire_refresh_token_id(super::super::crypto::sha256_hex(&format!("owner:g:{n}")));
        }
        assert!(!grant.is_retired_refresh_token("owner:g:4"), "the oldest are forgotten");
        assert!(grant.is_retired_refresh_token("owner:g:5") && grant.is_retired_refresh_token("owner:g:24"));
        assert!(!grant.is_retired_refresh_token("owner:g:25"));
        let back = serde_json::to_value(&grant).unwrap();
        assert_eq!(back["retiredRefreshTokenIds"].as_array().map(Vec::len), Some(RETIRED_REFRESH_TOKENS_KEPT));
        // A list this server did not write is ignored rather than fatal, and replaced on the next retirement.
        grant.extra.insert("retiredRefreshTokenIds".into(), serde_json::json!("not a list"));
        assert!(!grant.is_retired_refresh_token("owner:g:24"));
        grant.retire_refresh_token_id("h".into());
        assert_eq!(serde_json::to_value(&grant).unwrap()["retiredRefreshTokenIds"], serde_json::json!(["h"]));
    }

    #[test]
    fn records_written_by_the_typescript_provider_parse_and_keep_unknown_fields() {
        let ts = r#"{"id":"g","clientId":"c","userId":"owner","scope":["zotero:read"],"metadata":{"clientName":"X"},
            "encryptedProps":"AAAA","createdAt":1,"authCodeId":"h","resource":["https://a/mcp","https://b/mcp"],
            "redirectUri":"https://x/cb","futureField":true}"#;
        let grant: StoredGrant = serde_json::from_str(ts).unwrap();
        assert_eq!(grant.resource, Some(Resource::Many(vec!["https://a/mcp".into(), "https://b/mcp".into()])));
        let back = serde_json::to_value(&grant).unwrap();
        assert_eq!(back["futureField"], true);
        assert!(back.get("expiresAt").is_none(), "absent fields stay absent");
    }
}
