//! Finding the library items a reference may name, in the mirror, without reading the library: each regular
//! item is stored with its match keys (one per DOI, ISBN, arXiv id, PMID and citation key, and its title key), and
//! a reference's keys select the items sharing one (`store::reference_candidates`). What is selected is a
//! superset of what the caller's rules match (every rule needs a shared identifier, citation key or title key),
//! so the caller confirms with them.
//!
//! The keys are held as lines of one column (`\nd:10.1000/x\nt:deep learning|2020|lecun\n`), found with `instr`:
//! an index per kind would write a row per key on D1, whose free plan counts index rows among the 100,000
//! written a day; one column keeps the first fill of a large library to one row per item.

use serde_json::{Map, Value};

use crate::duplicates::Fingerprints;
use crate::zotero::ZoteroObject;

/// The match keys of an item, as stored (`None` for what no reference can name: notes, attachments).
pub fn keys_of(object: &ZoteroObject) -> Option<String> {
    if matches!(object.item_type(), None | Some("note" | "attachment" | "annotation")) {
        return None;
    }
    let keys = keys(&object.data, &pmids_in_extra(&object.data), citation_keys(&object.data));
    (!keys.is_empty()).then(|| format!("\n{}\n", keys.join("\n")))
}

/// The probes selecting the items that may match a reference read as `data` (its fields, or only its
/// identifiers), with the PMIDs and the citation key it names.
pub fn probes_of(data: &Map<String, Value>, pmids: &[String], citation_key: Option<&str>) -> Vec<String> {
    let keys = keys(data, pmids, citation_key.map(str::to_owned).into_iter().collect());
    keys.into_iter().map(|key| format!("\n{key}\n")).collect()
}

fn keys(data: &Map<String, Value>, pmids: &[String], citation_keys: Vec<String>) -> Vec<String> {
    let object = ZoteroObject { key: String::new(), version: 0, meta: Map::new(), data: data.clone() };
    let prints = Fingerprints::of(&object);
    let mut keys = Vec::new();
    keys.extend(prints.dois.iter().map(|doi| format!("d:{doi}")));
    keys.extend(prints.isbns.iter().map(|isbn| format!("i:{isbn}")));
    keys.extend(prints.arxiv.iter().map(|id| format!("a:{id}")));
    keys.extend(pmids.iter().map(|pmid| format!("p:{}", pmid.trim().trim_start_matches('0'))));
    keys.extend(citation_keys.iter().map(|key| format!("c:{}", key.trim().to_ascii_lowercase())));
    keys.extend(prints.title_key.iter().map(|title| format!("t:{title}")));
    // A key with a line break inside would match across two; none can have one, but a probe must never do so.
    keys.retain(|key| !key.contains('\n') && key.len() > 2);
    keys
}

/// The PMIDs an item's `extra` names (`PMID: 0123` is 123).
pub fn pmids_in_extra(data: &Map<String, Value>) -> Vec<String> {
    labelled_lines(data, "pmid").into_iter().map(|pmid| pmid.trim_start_matches('0').to_owned()).collect()
}

/// Zotero's `citationKey` field and Better BibTeX's `Citation Key:` lines of `extra`.
fn citation_keys(data: &Map<String, Value>) -> Vec<String> {
    let field = data.get("citationKey").and_then(Value::as_str).map(str::trim).filter(|key| !key.is_empty());
    field.map(str::to_owned).into_iter().chain(labelled_lines(data, "citation key")).collect()
}

fn labelled_lines(data: &Map<String, Value>, label: &str) -> Vec<String> {
    let extra = data.get("extra").and_then(Value::as_str).unwrap_or_default();
    extra
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            let value = value.trim();
            (name.trim().eq_ignore_ascii_case(label) && !value.is_empty()).then(|| value.to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn item(data: Value) -> ZoteroObject {
        let Value::Object(data) = data else { unreachable!("an object") };
        ZoteroObject { key: "AAAA2222".into(), version: 1, meta: Map::new(), data }
    }

    #[test]
    fn an_item_is_keyed_by_every_identifier_its_citation_keys_and_its_title() {
        let keys = keys_of(&item(json!({
            "itemType": "journalArticle",
            "title": "Deep Learning: A Review",
            "date": "2015-05-28",
            "creators": [{"creatorType": "author", "firstName": "Yann", "lastName": "LeCun"}],
            "DOI": "https://doi.org/10.1038/NATURE14539",
            "citationKey": "lecun2015",
            "extra": "PMID: 0026017442\nCitation Key: LeCun2015deep\narXiv: 1706.03762v2"
        })))
        .expect("keys");
        for key in [
            "d:10.1038/nature14539",
            "a:1706.03762",
            "p:26017442",
            "c:lecun2015",
            "c:lecun2015deep",
            "t:deep learning a review|2015|lecun",
        ] {
            assert!(keys.contains(&format!("\n{key}\n")), "{key} in {keys:?}");
        }
    }

    #[test]
    fn notes_and_attachments_have_no_keys() {
        assert_eq!(keys_of(&item(json!({"itemType": "note", "note": "doi 10.1/x"}))), None);
        assert_eq!(keys_of(&item(json!({"itemType": "attachment", "title": "A long enough title here"}))), None);
    }

    #[test]
    fn a_probe_matches_a_whole_key_never_a_prefix_of_one() {
        let stored = keys_of(&item(json!({"itemType": "journalArticle", "DOI": "10.1000/abc12"}))).expect("keys");
        let probe = probes_of(&Map::from_iter([("DOI".to_owned(), json!("10.1000/abc1"))]), &[], None);
        assert_eq!(probe, vec!["\nd:10.1000/abc1\n".to_owned()]);
        assert!(!stored.contains(&probe[0]));
    }
}
