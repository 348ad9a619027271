//! Batch writes: Zotero takes at most 50 objects per POST and answers object by object. The outcome maps are
//! re-indexed into the caller's positions, so position 0 of the third batch is reported as 100.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// Objects per POST, Zotero's limit.
pub const BATCH_SIZE: usize = 50;

/// Why one object of a batch was not written.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteFailure {
    /// The object's key, when it had one.
    pub key: Option<String>,
    /// Zotero's per-object code (400 invalid, 409 conflict, 412 stale version, 413 too large, …).
    pub code: u16,
    pub message: String,
}

/// What happened to every object of a batch write, by the caller's positions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WriteOutcome {
    /// Written: position → key.
    pub success: BTreeMap<usize, String>,
    /// Written: position → the object as Zotero now stores it.
    pub successful: BTreeMap<usize, Value>,
    /// Already identical: position → key (nothing written, version unchanged).
    pub unchanged: BTreeMap<usize, String>,
    /// Refused by Zotero, object by object.
    pub failed: BTreeMap<usize, WriteFailure>,
    /// Positions never sent, because an earlier request of the same write failed as a whole.
    pub not_sent: Vec<usize>,
    /// The library version after the last batch that was written.
    pub library_version: u64,
}

impl WriteOutcome {
    /// Whether the object at `position` is now as asked: written, or already identical.
    pub fn is_written(&self, position: usize) -> bool {
        self.success.contains_key(&position) || self.unchanged.contains_key(&position)
    }

    /// True when every object was written or was already identical.
    pub fn is_complete(&self) -> bool {
        self.failed.is_empty() && self.not_sent.is_empty()
    }
}

/// Zotero's response body for a batch write.
#[derive(Debug, Deserialize, Default)]
pub(crate) struct BatchResponse {
    #[serde(default)]
    pub successful: BTreeMap<String, Value>,
    #[serde(default)]
    pub success: BTreeMap<String, String>,
    #[serde(default)]
    pub unchanged: BTreeMap<String, String>,
    #[serde(default)]
    pub failed: BTreeMap<String, BatchFailure>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct BatchFailure {
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub code: u16,
    #[serde(default)]
    pub message: String,
}

/// Adds one batch's answer, whose indexes count from 0 within the batch, at `offset`.
pub(crate) fn merge_batch(outcome: &mut WriteOutcome, offset: usize, batch: BatchResponse) -> Result<(), String> {
    let position = |index: &str| -> Result<usize, String> {
        index.parse::<usize>().map(|i| i + offset).map_err(|_| format!("`{index}` is not a batch index"))
    };
    for (index, key) in batch.success {
        outcome.success.insert(position(&index)?, key);
    }
    for (index, object) in batch.successful {
        outcome.successful.insert(position(&index)?, object);
    }
    for (index, key) in batch.unchanged {
        outcome.unchanged.insert(position(&index)?, key);
    }
    for (index, failure) in batch.failed {
        outcome
            .failed
            .insert(position(&index)?, WriteFailure { key: failure.key, code: failure.code, message: failure.message });
    }
    Ok(())
}

/// A fresh `Zotero-Write-Token`: 32 random hex characters. Zotero refuses a token it has seen recently, which
/// makes a retried POST safe: if the first attempt was written, the retry cannot write twice.
pub(crate) fn write_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merges_indexes_at_the_batch_offset() {
        let mut outcome = WriteOutcome::default();
        let batch: BatchResponse = serde_json::from_value(json!({
            "success": { "0": "AAAAAAAA" }, "unchanged": { "1": "BBBBBBBB" },
            "failed": { "2": { "key": "CCCCCCCC", "code": 400, "message": "bad field" } },
        }))
        .unwrap();
        merge_batch(&mut outcome, 100, batch).unwrap();
        assert_eq!(outcome.success[&100], "AAAAAAAA");
        assert_eq!(outcome.unchanged[&101], "BBBBBBBB");
        assert_eq!(outcome.failed[&102].code, 400);
    }

    #[test]
    fn write_tokens_are_32_hex_and_fresh() {
        let a = write_token().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, write_token().unwrap());
    }
}
