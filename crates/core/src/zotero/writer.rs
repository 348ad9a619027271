//! The writing half of the Zotero Web API client.

use std::ops::Deref;
use std::rc::Rc;

use http::Method;
use serde_json::Value;

use super::batch::{merge_batch_of, write_token, BatchResponse, WriteOutcome, BATCH_SIZE};
use super::client::{ZoteroClient, ZoteroSettings};
use super::error::ZoteroError;
use super::key::ObjectKey;
use super::transport::{Call, RetryPolicy};
use super::types::{FullText, ObjectKind};
use crate::platform::{Clock, HttpClient};

/// A Zotero client that can change the library: every read of [`ZoteroClient`] (through `Deref`) plus the
/// writes. Whoever holds only the `&ZoteroClient` it derefs to cannot write, which is how the server makes the
/// write scope a matter of types: a request context hands out this writer only to a grant with `zotero:write`.
pub struct ZoteroWriter {
    client: ZoteroClient,
}

impl Deref for ZoteroWriter {
    type Target = ZoteroClient;

    fn deref(&self) -> &ZoteroClient {
        &self.client
    }
}

impl ZoteroWriter {
    pub fn new(settings: ZoteroSettings, http: Rc<dyn HttpClient>, clock: Rc<dyn Clock>) -> Result<Self, ZoteroError> {
        Self::with_policy(settings, http, clock, RetryPolicy::default())
    }

    pub fn with_policy(
        settings: ZoteroSettings,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
        policy: RetryPolicy,
    ) -> Result<Self, ZoteroError> {
        Ok(Self { client: ZoteroClient::with_policy(settings, http, clock, policy)? })
    }

    /// Stores an attachment's full text; returns the new library version.
    pub async fn put_fulltext(&self, key: &ObjectKey, text: &FullText) -> Result<u64, ZoteroError> {
        let body = serde_json::to_value(text).map_err(|e| ZoteroError::Config(e.to_string()))?;
        let call =
            Call::new(Method::PUT, self.client.library_path(&format!("/items/{key}/fulltext")).await?).json_body(&body);
        Ok(self.client.transport.execute(&call).await?.last_modified_version())
    }

    /// Creates or updates objects, 50 per request, each request with a fresh write token. Objects that carry a
    /// `key` and `version` update that object only if it is still at that version (else they fail with 412).
    ///
    /// When the very first request fails as a whole, nothing was written and the error is returned. When a later
    /// one fails, the outcome says which objects were written, which failed, and which were never sent.
    pub async fn write_objects(&self, kind: ObjectKind, objects: &[Value]) -> Result<WriteOutcome, ZoteroError> {
        let path = self.client.library_path(&format!("/{}", kind.path_segment())).await?;
        let mut outcome = WriteOutcome::default();
        for (batch_index, chunk) in objects.chunks(BATCH_SIZE).enumerate() {
            let offset = batch_index * BATCH_SIZE;
            let token = write_token().map_err(|e| {
                ZoteroError::Config(format!("no secure random source for a write token ({e}); nothing was written"))
            })?;
            let call = Call::new(Method::POST, path.clone())
                .header("zotero-write-token", token)
                .json_body(&Value::Array(chunk.to_vec()));
            match self.client.transport.execute(&call).await {
                Ok(reply) => {
                    let batch: BatchResponse = reply.json()?;
                    merge_batch_of(&mut outcome, offset, Some(chunk.len()), batch)
                        .map_err(|reason| reply.decode_error(reason))?;
                    outcome.library_version = reply.last_modified_version();
                }
                Err(error) if batch_index == 0 => return Err(error),
                Err(error) => {
                    let status = error.status().unwrap_or(0);
                    let message = error.to_string();
                    for (index, object) in chunk.iter().enumerate() {
                        let key = object.get("key").and_then(Value::as_str).map(str::to_owned);
                        outcome.failed.insert(
                            offset + index,
                            super::batch::WriteFailure { key, code: status, message: message.clone() },
                        );
                    }
                    outcome.not_sent = (offset + chunk.len()..objects.len()).collect();
                    break;
                }
            }
        }
        Ok(outcome)
    }

    /// Changes some fields of an item, only if it is still at `version`. Returns the new library version.
    pub async fn patch_item(&self, key: &ObjectKey, version: u64, changes: &Value) -> Result<u64, ZoteroError> {
        self.patch(format!("/items/{key}"), version, changes).await
    }

    /// Changes a collection (name, parent), only if it is still at `version`.
    pub async fn patch_collection(&self, key: &ObjectKey, version: u64, changes: &Value) -> Result<u64, ZoteroError> {
        self.patch(format!("/collections/{key}"), version, changes).await
    }

    async fn patch(&self, rest: String, version: u64, changes: &Value) -> Result<u64, ZoteroError> {
        let call = Call::new(Method::PATCH, self.client.library_path(&rest).await?)
            .header("if-unmodified-since-version", version.to_string())
            .json_body(changes);
        Ok(self.client.transport.execute(&call).await?.last_modified_version())
    }

    /// Deletes one item permanently, only if it is still at its own `version` (one request per item, so one
    /// stale item cannot block the others).
    pub async fn delete_item(&self, key: &ObjectKey, version: u64) -> Result<u64, ZoteroError> {
        self.delete(format!("/items/{key}"), version).await
    }

    pub async fn delete_collection(&self, key: &ObjectKey, version: u64) -> Result<u64, ZoteroError> {
        self.delete(format!("/collections/{key}"), version).await
    }

    async fn delete(&self, rest: String, version: u64) -> Result<u64, ZoteroError> {
        let call = Call::new(Method::DELETE, self.client.library_path(&rest).await?)
            .header("if-unmodified-since-version", version.to_string());
        Ok(self.client.transport.execute(&call).await?.last_modified_version())
    }
}
