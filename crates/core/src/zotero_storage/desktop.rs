//! Zotero Desktop's local API behind the Zotero Storage client: the same three steps, sent to the desktop,
//! which puts a stored file where it keeps it ([`crate::zotero::local`]): no zotero.org key, the instance id on
//! every request, a local key on each write.

use std::rc::Rc;

use async_trait::async_trait;

use super::client::{Backend, StoragePolicy, ZoteroStorage, ZoteroStorageWriter};
use super::error::ZoteroStorageError;
use crate::file_changes::StoreKind;
use crate::net::{is_loopback_host, parse_url};
use crate::platform::{Clock, HttpClient, HttpResponse};
use crate::zotero::local::{self, LocalApiAccess};
use crate::zotero::{Capabilities, ZoteroSettings};

impl ZoteroStorageWriter {
    /// Stores the files of `library_prefix` (`/users/0`, `/groups/<n>`) through Zotero Desktop's local API at `base`
    /// (`http://localhost:23119/api`): Zotero itself puts a stored file where Desktop keeps it.
    pub fn for_desktop(
        base: &str,
        library_prefix: &str,
        access: LocalApiAccess,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
        policy: StoragePolicy,
    ) -> Result<Self, ZoteroStorageError> {
        let settings = ZoteroSettings {
            // Never sent: requests to the desktop carry the local key instead.
            api_key: "local".into(),
            library_kind: crate::zotero::LibraryKind::User,
            library_id: None,
            base_url: Some(base.to_owned()),
        };
        let on_loopback = parse_url(base).is_ok_and(|url| url.host().is_some_and(|h| is_loopback_host(&h)));
        if !on_loopback && !base.trim().starts_with("https://") {
            return Err(ZoteroStorageError::Config(format!(
                "ZOTERO_LOCAL_URL must be Zotero Desktop on this machine (http://localhost:23119/api) or an https \
                 URL, not `{base}`: files are sent there"
            )));
        }
        let mut writer = Self::new(&settings, library_prefix, http, clock, policy)?;
        // Only where this build talks to the desktop at all: elsewhere (the Worker) nothing constructs the
        // backend, so its async POST, reachable only through the trait object, is not linked; the writer then
        // stays the Web API's, as it always has there.
        if let Some(access) = local::enabled(&Some(access)) {
            writer.storage.backend = Box::new(LocalApi { access: access.clone() });
        }
        Ok(writer)
    }
}

/// Zotero Desktop's local API as a file store's server.
struct LocalApi {
    access: LocalApiAccess,
}

#[async_trait(?Send)]
impl Backend for LocalApi {
    fn store(&self) -> StoreKind {
        StoreKind::Desktop
    }

    fn caps(&self) -> Capabilities {
        local::CAPABILITIES
    }

    fn credentials(&self, writes: bool, mut builder: http::request::Builder) -> http::request::Builder {
        if let Some(key) = self.access.key.get().filter(|_| writes) {
            builder = builder.header("zotero-api-key", key);
        }
        match &self.access.server_id {
            Some(id) => builder.header("zotero-server-id", id),
            None => builder,
        }
    }

    /// Each POST is a write needing a local key ([`local::with_local_key`]: a key for one write is spent by the
    /// first POST of the three steps, so the next one asks again).
    async fn post_form(
        &self,
        storage: &ZoteroStorage,
        path: &str,
        form: &str,
        precondition: &(&'static str, String),
    ) -> Result<HttpResponse, ZoteroStorageError> {
        let refused = |answer: &Result<HttpResponse, ZoteroStorageError>| {
            answer.as_ref().is_ok_and(|a| a.status() == http::StatusCode::UNAUTHORIZED)
        };
        let (http, clock) = storage.platform();
        let send = || storage.post_form_plain(path, form, precondition);
        local::with_local_key(http, clock, storage.base(), &self.access, refused, send).await
    }
}
