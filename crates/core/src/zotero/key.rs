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

/// The characters of a Zotero key (no 0, 1, O: they are easily confused).
const KEY_ALPHABET: &[u8] = b"23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";

/// A fresh random key for an object this client creates, as Zotero Desktop assigns one before syncing: sent
/// with the new object, it lets a write whose answer was lost be checked by reading that key back.
pub(crate) fn new_key() -> Result<String, getrandom::Error> {
    let mut key = String::with_capacity(8);
    // Bytes at or above the largest multiple of the alphabet's size are drawn again, so each character is
    // equally likely.
    let limit = (256 / KEY_ALPHABET.len() * KEY_ALPHABET.len()) as u8;
    while key.len() < 8 {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)?;
        for byte in bytes.into_iter().filter(|b| *b < limit) {
            if key.len() < 8 {
                key.push(char::from(KEY_ALPHABET[usize::from(byte) % KEY_ALPHABET.len()]));
            }
        }
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_zotero_keys() {
        assert_eq!(ObjectKey::parse("ABCD2345").unwrap().as_str(), "ABCD2345");
    }

    #[test]
    fn new_keys_are_zotero_keys_and_fresh() {
        let a = new_key().unwrap();
        assert_eq!(a.len(), 8);
        assert!(a.bytes().all(|b| KEY_ALPHABET.contains(&b)), "{a}");
        assert!(ObjectKey::parse(&a).is_ok());
        assert_ne!(a, new_key().unwrap());
    }

    #[test]
    fn refuses_anything_that_could_change_a_path() {
        for bad in ["abcd2345", "ABCD234", "ABCD23456", "ABC/2345", "../ABCDE", "ABCD%2F5", "ABCD 345", "ÄBCD2345", ""]
        {
            assert!(ObjectKey::parse(bad).is_err(), "{bad}");
        }
    }
}
