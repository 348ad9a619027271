//! Argument types shared by the tools.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zotero_mcp_core::zotero::ObjectKey;

/// A Zotero item or collection key as a tool argument: validated while the arguments are parsed, so a malformed
/// key is reported as an argument error (naming the argument and the value) before any request is made.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key(pub ObjectKey);

impl Key {
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl std::ops::Deref for Key {
    type Target = ObjectKey;
    fn deref(&self) -> &ObjectKey {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ObjectKey::parse(text.trim()).map(Key).map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl JsonSchema for Key {
    fn schema_name() -> Cow<'static, str> {
        "ZoteroKey".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        // No description: the pattern says what a key is, and a model reads this schema in every tool that
        // takes a key (`tests/catalogue_budget.rs` measures that cost); the argument's own doc comment says which object it names.
        json_schema!({
            "type": "string",
            "pattern": crate::mcp::arguments::KEY_PATTERN,
        })
    }
}

/// Turns a list of keys into the core type.
pub fn object_keys(keys: &[Key]) -> Vec<ObjectKey> {
    keys.iter().map(|k| k.0.clone()).collect()
}

/// The years a search keeps (`fromYear`, `toYear`, both inclusive): one type for `zotero_search` and
/// `zotero_semantic_search`, so both refuse a reversed range alike and keep the same items. The two arguments stay
/// plain fields of each input, so the published schemas do not change; [`YearRange::new`] reads them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct YearRange {
    from: Option<i32>,
    to: Option<i32>,
}

/// A range whose start is after its end: nothing could match, so the call is refused rather than answered empty.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`fromYear` ({from}) is after `toYear` ({to})")]
pub struct ReversedYears {
    from: i32,
    to: i32,
}

impl From<ReversedYears> for crate::mcp::ToolError {
    fn from(reversed: ReversedYears) -> Self {
        crate::mcp::ToolError::invalid(reversed.to_string())
    }
}

impl YearRange {
    /// The range of the arguments `fromYear` and `toYear`, as given: [`YearRange::checked`] refuses a reversed
    /// one (which contains nothing).
    pub fn new(from: Option<i32>, to: Option<i32>) -> Self {
        YearRange { from, to }
    }

    /// The range, or why no item could be in it.
    pub fn checked(self) -> Result<Self, ReversedYears> {
        match (self.from, self.to) {
            (Some(from), Some(to)) if from > to => Err(ReversedYears { from, to }),
            _ => Ok(self),
        }
    }

    /// The range with a bound of 0 taken as no bound, as the semantic index's own filter reads it
    /// (`zotero_mcp_core::index::query`), so the items kept after the index answers are the ones it filtered for.
    pub fn zero_unbounded(self) -> Self {
        YearRange { from: self.from.filter(|y| *y != 0), to: self.to.filter(|y| *y != 0) }
    }

    /// Whether either bound is set.
    pub fn is_bounded(self) -> bool {
        self.from.is_some() || self.to.is_some()
    }

    pub fn from(self) -> Option<i32> {
        self.from
    }

    pub fn to(self) -> Option<i32> {
        self.to
    }

    /// Whether an item dated `date` lies within the range (its year is the first four-digit year of the date). With
    /// a bound set, an item without a year is outside: a search for a period does not return undated items.
    pub fn contains(self, date: Option<&str>) -> bool {
        if !self.is_bounded() {
            return true;
        }
        let Some(year) = date.and_then(zotero_mcp_core::zotero::year_of).map(i32::from) else {
            return false;
        };
        self.from.is_none_or(|from| year >= from) && self.to.is_none_or(|to| year <= to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_year_range_keeps_dated_items_within_it_and_refuses_a_reversed_one() {
        let range = YearRange::new(Some(2000), Some(2010)).checked().unwrap();
        assert!(range.contains(Some("2005-03-01")) && range.contains(Some("March 2010")));
        assert!(!range.contains(Some("1999")) && !range.contains(None));
        assert!(YearRange::default().contains(None));
        let reversed = YearRange::new(Some(2021), Some(2020)).checked().unwrap_err();
        assert_eq!(reversed.to_string(), "`fromYear` (2021) is after `toYear` (2020)");
        // A 0 is a bound in `zotero_search` (undated items are left out) and none in the semantic search.
        let zero = YearRange::new(Some(0), None);
        assert!(!zero.contains(None) && zero.zero_unbounded().contains(None));
    }
}
