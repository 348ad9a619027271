//! Zotero object keys, validated once at the boundary.

use std::fmt;

/// An item or collection key: eight characters, uppercase letters and digits, as Zotero issues them.
///
/// Keys are put into URL paths, so a value with `/`, `.`, `%` or anything else outside the alphabet must never
/// get that far. Every client method takes an `ObjectKey`, which can only be made through [`ObjectKey::parse`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(String);

/// A string that is not a Zotero key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a Zotero key: keys are 8 characters, uppercase letters and digits (for example ABCD2345). Use a key returned by a search or listing")]
pub struct KeyError {
    pub value: String,
}

impl ObjectKey {
    pub fn parse(value: &str) -> Result<Self, KeyError> {
        let valid = value.len() == 8 && value.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        if valid {
            Ok(Self(value.to_owned()))
        } else {
            // Keep the echoed value short: it may be anything a model sent.
            let shown: String = value.chars().take(40).collect();
            Err(KeyError { value: shown })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ObjectKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_zotero_keys() {
        assert_eq!(ObjectKey::parse("ABCD2345").unwrap().as_str(), "ABCD2345");
    }

    #[test]
    fn refuses_anything_that_could_change_a_path() {
        for bad in ["abcd2345", "ABCD234", "ABCD23456", "ABC/2345", "../ABCDE", "ABCD%2F5", "ABCD 345", "ÄBCD2345", ""]
        {
            assert!(ObjectKey::parse(bad).is_err(), "{bad}");
        }
    }
}
