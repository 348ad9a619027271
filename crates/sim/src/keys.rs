//! Object keys and API keys.
//!
//! Zotero object keys are 8 characters from an alphabet without the look-alikes 0, 1, O (and lowercase); the
//! server rejects anything else, and clients may create objects under keys they generated themselves.

use std::collections::BTreeMap;

/// The characters Zotero object keys are made of.
pub const KEY_ALPHABET: &[u8] = b"23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";

/// `^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$`.
pub fn is_valid_key(key: &str) -> bool {
    key.len() == 8 && key.bytes().all(|b| KEY_ALPHABET.contains(&b))
}

/// A small deterministic generator (SplitMix64): keys only need to be unique and well formed, and a seeded
/// generator keeps runs reproducible.
#[derive(Debug, Clone)]
pub struct KeyGen {
    state: u64,
}

impl KeyGen {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A fresh 8-character key.
    pub fn key(&mut self) -> String {
        (0..8).map(|_| KEY_ALPHABET[(self.next_u64() % KEY_ALPHABET.len() as u64) as usize] as char).collect()
    }
}

/// What an API key may do: its user's library and any groups it was given.
#[derive(Debug, Clone)]
pub struct Grant {
    pub user_id: u64,
    pub user_write: bool,
    /// File access to the user library (`access.user.files`); group members always have it for their groups.
    pub user_files: bool,
    /// Group ID → write access.
    pub groups: BTreeMap<u64, bool>,
    /// Whether the key reaches its user's library at all (`access.user`): a key made for groups only has no
    /// `user` block.
    pub user_library: bool,
    /// `access.groups.all` (with its write access): the key reaches every group its user belongs to (the groups
    /// of `groups`, whose own rights it then replaces), and `/keys/current` lists no group one by one.
    pub all_groups: Option<bool>,
}

impl Grant {
    /// Write access to group `id`, `None` when the key does not reach it.
    pub fn group(&self, id: u64) -> Option<bool> {
        let own = self.groups.get(&id).copied()?;
        Some(self.all_groups.unwrap_or(own))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_valid() {
        let mut g = KeyGen::new(1);
        for _ in 0..100 {
            assert!(is_valid_key(&g.key()));
        }
        assert!(!is_valid_key("ABCD234O"));
        assert!(!is_valid_key("abcd2345"));
    }
}
