//! What the attachment-file tests share, whichever store holds the files: the demo paper they write to, a PDF
//! to store, and the check that the API key never reached Zotero Storage's origin.

use base64::Engine;
use serde_json::Value;
use zotero_sim::{LibraryRef, Simulator};

use super::{DEMO_KEY, DEMO_USER};

pub const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
/// A paper of the demo library with a PDF attachment (UN79YVS8) that has no full-text index entry.
pub const PARENT: &str = "KPDKK5UT";
pub const ATTACHMENT: &str = "UN79YVS8";

/// A two-page PDF with known words on each page.
pub fn pdf() -> Vec<u8> {
    zotero_mcp_core::testing::pdf_of_pages(&[
        "Residue contacts emerge early in training",
        "Side chains pack without any rotamer library",
    ])
}

pub fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// An item's editable data, as the simulator holds it.
pub fn item_data(sim: &Simulator, key: &str) -> Option<Value> {
    sim.item(LIB, key).map(|i| i["data"].clone())
}

/// No request to the storage origin carried the API key: the simulator's storage refuses one, and this looks at
/// the requests themselves too. Fails when nothing reached the storage origin at all.
pub fn assert_key_stayed_with_the_api(sim: &Simulator) {
    let requests = sim.storage_requests();
    assert!(!requests.is_empty(), "nothing reached the storage origin");
    for request in requests {
        let leaked = request
            .headers
            .iter()
            .any(|(name, value)| name == "zotero-api-key" || name == "authorization" || value.contains(DEMO_KEY))
            || request.query.contains("key=");
        assert!(!leaked, "the API key reached the storage origin: {request:?}");
    }
}
