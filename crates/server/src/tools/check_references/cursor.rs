//! The cursor a check hands back when references are left: where the next call starts, bound to the manuscript
//! it was given for.

use super::format_name;
use crate::mcp::ToolError;
use zotero_mcp_core::refcheck::Format;

/// A short hash of what was given, so a cursor is refused on another manuscript (FNV-1a, 64 bits).
pub(super) fn fingerprint(text: &str, bibtex: Option<&str>, format: Format) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes().chain([0]).chain(bibtex.unwrap_or_default().bytes()).chain(format_name(format).bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

pub(super) fn parse_cursor(cursor: &str, fingerprint: &str) -> Result<usize, ToolError> {
    let (at, theirs) =
        cursor.split_once('.').ok_or_else(|| ToolError::invalid("the cursor is not one this tool gave"))?;
    if theirs != fingerprint {
        return Err(ToolError::invalid(
            "the cursor belongs to another text: pass the same text (and bibtex and format) as the call that gave it",
        ));
    }
    at.parse().map_err(|_| ToolError::invalid("the cursor is not one this tool gave"))
}
