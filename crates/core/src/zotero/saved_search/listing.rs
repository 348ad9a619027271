//! Reading saved searches from the API (`GET /searches`, `GET /searches/<key>`).

use serde_json::Value;

use super::model::SavedSearch;
use crate::zotero::{ObjectKey, Page, Query, ZoteroClient, ZoteroError};

impl ZoteroClient {
    /// Every saved search of the library, every page, in the API's order (last modified first).
    pub async fn saved_searches(&self) -> Result<Vec<SavedSearch>, ZoteroError> {
        Ok(self.saved_searches_up_to(usize::MAX).await?.0)
    }

    /// The first `max` saved searches, in the API's order (last modified first), and how many the library
    /// has when Zotero said: a bounded read, one request per hundred.
    pub async fn saved_searches_up_to(&self, max: usize) -> Result<(Vec<SavedSearch>, Option<u64>), ZoteroError> {
        let path = self.library_path("/searches").await?;
        let page: Page<Value> = self.list(path, &Query::new(), max).await?;
        Ok((page.items.iter().filter_map(SavedSearch::from_api).collect(), page.total_results))
    }

    /// One saved search.
    pub async fn saved_search(&self, key: &ObjectKey) -> Result<SavedSearch, ZoteroError> {
        let reply = self.get(self.library_path(&format!("/searches/{key}")).await?, Vec::new()).await?;
        let json: Value = reply.json()?;
        SavedSearch::from_api(&json).ok_or_else(|| reply.decode_error("the saved search has no key".to_owned()))
    }
}
