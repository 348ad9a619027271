//! Stand-in for `stringprep`, linked into lopdf through `[patch.crates-io]` (see ../README.md).
//!
//! lopdf runs SASLprep (RFC 4013) on the password of a revision-6 encrypted PDF. zotero-mcp only ever opens
//! encrypted files with the empty password (a file that needs a real one is refused earlier, with its own
//! message), so the full Unicode tables (normalization, bidi, properties: about 150 KB of wasm) bought nothing.
//! For printable ASCII, SASLprep is the identity; anything else is refused rather than prepared wrongly.

use std::borrow::Cow;
use std::fmt;

/// Why a password was not prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A control character: prohibited by SASLprep itself.
    Prohibited(char),
    /// A character outside ASCII: the real SASLprep would map or normalize it, which this stand-in does not do.
    NotAscii(char),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Prohibited(c) => write!(f, "prohibited character {c:?} in the password"),
            Error::NotAscii(c) => write!(f, "the password has a non-ASCII character ({c:?}), which is not supported"),
        }
    }
}

impl std::error::Error for Error {}

/// SASLprep for ASCII: printable ASCII (and the empty string) comes back unchanged.
pub fn saslprep(input: &str) -> Result<Cow<'_, str>, Error> {
    match input.chars().find(|c| !(' '..='~').contains(c)) {
        None => Ok(Cow::Borrowed(input)),
        Some(c) if c.is_ascii() => Err(Error::Prohibited(c)),
        Some(c) => Err(Error::NotAscii(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_ascii_is_unchanged() {
        assert_eq!(saslprep("").unwrap(), "");
        assert_eq!(saslprep("correct horse ~!").unwrap(), "correct horse ~!");
    }

    #[test]
    fn control_and_non_ascii_characters_are_refused() {
        assert_eq!(saslprep("a\u{7}b"), Err(Error::Prohibited('\u{7}')));
        assert_eq!(saslprep("pass\u{7f}"), Err(Error::Prohibited('\u{7f}')));
        assert_eq!(saslprep("Ünïcode"), Err(Error::NotAscii('Ü')));
    }
}
