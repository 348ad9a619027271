//! Finding the client of a request: a registered one in KV, or one described by its metadata document.

use super::cimd::{self, CimdError};
use super::error::AuthError;
use super::storage::{Store, StoredClient};
use crate::platform::Platform;

/// Why a client could not be looked up (as opposed to: it does not exist).
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error(transparent)]
    Store(#[from] AuthError),
    #[error(transparent)]
    Document(#[from] CimdError),
}

/// The client with this id: a registered one from KV, or, for an `https://` id with a path, the one its
/// metadata document describes. `Ok(None)` means it definitely does not exist.
pub async fn lookup(platform: &Platform, client_id: &str) -> Result<Option<StoredClient>, LookupError> {
    if cimd::is_document_url(client_id) {
        return Ok(Some(cimd::resolve(platform, client_id).await?));
    }
    Ok(Store::new(platform.oauth_kv.as_ref()).client(client_id).await?)
}
