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

/// An object whose write's answer was lost and that could not be read back: it may or may not be written.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteUnknown {
    /// The key it was sent with (a new object gets its key before it is sent).
    pub key: String,
    /// Why it is not known, and how to find out.
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
    /// Sent, but whether written is unknown: the answer was lost and reading the objects back failed too.
    pub unknown: BTreeMap<usize, WriteUnknown>,
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
        self.failed.is_empty() && self.unknown.is_empty() && self.not_sent.is_empty()
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

/// Why a batch's answer cannot be merged. Whatever Zotero answered, the write may have happened: each message
/// says so, so that nobody repeats it blindly.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum UnreadableBatch {
    #[error("a batch at position {offset} is out of range; {MAY_BE_WRITTEN}")]
    OutOfRange { offset: usize },
    #[error("it reports index {index}, beyond {batch}; {MAY_BE_WRITTEN}")]
    Beyond { index: usize, batch: String },
    #[error("`{key}` is not a batch index; {MAY_BE_WRITTEN}")]
    NotAnIndex { key: String },
    #[error("it reports index {index} more than once; {MAY_BE_WRITTEN}")]
    Twice { index: usize },
    #[error("it leaves out index {index}; {MAY_BE_WRITTEN}")]
    Gap { index: usize },
    #[error("it reports {count} of {batch}; {MAY_BE_WRITTEN}")]
    Short { count: usize, batch: String },
    #[error("its `successful` names index {key}, which it does not report written; {MAY_BE_WRITTEN}")]
    SuccessfulNotWritten { key: String },
}

const MAY_BE_WRITTEN: &str = "some objects may have been written, so read them back before writing again";

/// Adds one batch's answer, whose indexes count from 0 within the batch, at `offset`.
///
/// The answer is checked before anything is merged, because callers look positions up in what they sent: an
/// index that is not a number, lies beyond the batch, or is reported twice (written *and* failed) makes the
/// whole answer an error instead of a panic or a position that belongs to another object. Zotero reports every
/// object of a batch exactly once, so the indexes named must be 0, 1, … without a gap; as the caller does not
/// pass the batch's length here, no more than [`BATCH_SIZE`] of them. The writer uses [`merge_batch_of`], which
/// knows the length; this form is kept for the tests of the checks that do not need it.
#[cfg(test)]
pub(crate) fn merge_batch(
    outcome: &mut WriteOutcome,
    offset: usize,
    batch: BatchResponse,
) -> Result<(), UnreadableBatch> {
    merge_batch_of(outcome, offset, None, batch)
}

/// [`merge_batch`] for a batch of `sent` objects, when the caller knows it: then the answer must name exactly
/// the indexes `0..sent`.
pub(crate) fn merge_batch_of(
    outcome: &mut WriteOutcome,
    offset: usize,
    sent: Option<usize>,
    batch: BatchResponse,
) -> Result<(), UnreadableBatch> {
    let limit = sent.unwrap_or(BATCH_SIZE);
    let batch_size = || match sent {
        Some(sent) => format!("the {sent} objects sent"),
        None => format!("the {BATCH_SIZE} objects a batch can hold"),
    };
    if offset.checked_add(limit).is_none() {
        return Err(UnreadableBatch::OutOfRange { offset });
    }
    let index = |key: &str| -> Result<usize, UnreadableBatch> {
        match key.parse::<usize>() {
            Ok(index) if index < limit => Ok(index),
            Ok(index) => Err(UnreadableBatch::Beyond { index, batch: batch_size() }),
            Err(_) => Err(UnreadableBatch::NotAnIndex { key: key.to_owned() }),
        }
    };
    // Every object is written, unchanged or failed: exactly one of the three, and none is left out.
    let mut reported = vec![false; limit];
    for key in batch.success.keys().chain(batch.unchanged.keys()).chain(batch.failed.keys()) {
        let i = index(key)?;
        if std::mem::replace(&mut reported[i], true) {
            return Err(UnreadableBatch::Twice { index: i });
        }
    }
    let count = reported.iter().take_while(|r| **r).count();
    if reported[count..].iter().any(|r| *r) {
        return Err(UnreadableBatch::Gap { index: count });
    }
    if sent.is_some_and(|sent| count != sent) {
        return Err(UnreadableBatch::Short { count, batch: batch_size() });
    }
    // `successful` repeats written objects in full; it may not name anything else.
    if let Some(key) = batch.successful.keys().find(|k| !batch.success.contains_key(*k)) {
        return Err(UnreadableBatch::SuccessfulNotWritten { key: key.clone() });
    }
    // Checked above: every index parses, is below `limit`, and `offset + limit` does not overflow.
    let position = |key: &str| index(key).map(|i| i + offset);
    for (key, written) in batch.success {
        outcome.success.insert(position(&key)?, written);
    }
    for (key, object) in batch.successful {
        outcome.successful.insert(position(&key)?, object);
    }
    for (key, same) in batch.unchanged {
        outcome.unchanged.insert(position(&key)?, same);
    }
    for (key, failure) in batch.failed {
        outcome
            .failed
            .insert(position(&key)?, WriteFailure { key: failure.key, code: failure.code, message: failure.message });
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

    fn reply(value: serde_json::Value) -> BatchResponse {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn an_answer_naming_objects_outside_the_batch_is_refused_whole() {
        let bad = [
            json!({ "success": { "0": "AAAAAAAA", "50": "BBBBBBBB" } }),
            json!({ "failed": { "18446744073709551615": { "code": 400, "message": "x" } } }),
            json!({ "success": { "0": "AAAAAAAA" }, "failed": { "0": { "code": 400, "message": "x" } } }),
            json!({ "success": { "0": "AAAAAAAA", "2": "CCCCCCCC" } }),
            json!({ "success": { "x": "AAAAAAAA" } }),
            json!({ "success": { "0": "AAAAAAAA" }, "successful": { "1": {} } }),
        ];
        for answer in bad {
            let mut outcome = WriteOutcome::default();
            let error = merge_batch(&mut outcome, 50, reply(answer.clone())).unwrap_err();
            assert!(error.to_string().contains("read them back"), "{answer}: {error}");
            assert_eq!(outcome, WriteOutcome::default(), "{answer}: nothing is merged");
        }
        let mut outcome = WriteOutcome::default();
        assert!(merge_batch(&mut outcome, usize::MAX - 10, reply(json!({ "success": { "0": "A" } }))).is_err());
    }

    #[test]
    fn with_the_batch_length_every_object_must_be_reported() {
        let three = json!({ "success": { "0": "A", "1": "B" }, "unchanged": { "2": "C" } });
        let mut outcome = WriteOutcome::default();
        merge_batch_of(&mut outcome, 0, Some(3), reply(three.clone())).unwrap();
        assert_eq!(outcome.unchanged[&2], "C");
        let error = merge_batch_of(&mut WriteOutcome::default(), 0, Some(2), reply(three)).unwrap_err();
        assert!(error.to_string().contains("index 2, beyond the 2 objects sent"), "{error}");
        let short = reply(json!({ "success": { "0": "A" } }));
        let error = merge_batch_of(&mut WriteOutcome::default(), 0, Some(2), short).unwrap_err();
        assert!(error.to_string().contains("reports 1 of the 2 objects sent"), "{error}");
    }

    #[test]
    fn write_tokens_are_32_hex_and_fresh() {
        let a = write_token().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, write_token().unwrap());
    }
}
