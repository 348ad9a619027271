//! Imported item data fitted to Zotero's template for its type, before it is written.

use serde_json::{Map, Value};

use crate::zotero::MANAGED_FIELDS;

/// The object `POST /items` takes for one import.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    pub data: Map<String, Value>,
    /// Fields the item type does not have, kept as `Field: value` lines of `extra` rather than dropped (the
    /// TypeScript server dropped them: a book's journal, a dataset's ISSN). Zotero Desktop reads such lines.
    pub moved_to_extra: Vec<String>,
}

/// Fits `data` (from a source or a BibTeX/RIS entry) to `template` (`GET /items/new?itemType=…`): fields the
/// type has are set, the others move to `extra`; the caller's `tags` join the entry's own and `collections`
/// are the caller's.
pub fn fit_to_template(
    template: &Map<String, Value>,
    data: &Map<String, Value>,
    tags: &[Value],
    collections: &[String],
) -> Payload {
    let mut out = template.clone();
    let mut extra_lines: Vec<String> = Vec::new();
    let mut moved_lines: Vec<String> = Vec::new();
    let mut moved = Vec::new();
    for (name, value) in data {
        match name.as_str() {
            // A record never names an existing item, its version, its dates in this library or the trash: an
            // import always makes a new item (and such a field is dropped, not kept in `extra`).
            managed if MANAGED_FIELDS.contains(&managed) => {}
            "itemType" | "collections" | "relations" | "tags" => {}
            "extra" => {
                if let Some(text) = value.as_str().filter(|t| !t.trim().is_empty()) {
                    extra_lines.extend(text.lines().map(str::to_owned));
                }
            }
            "creators" => {
                if out.contains_key("creators") {
                    out.insert(name.clone(), value.clone());
                }
            }
            _ if out.contains_key(name) => {
                out.insert(name.clone(), value.clone());
            }
            _ => {
                let text = match value {
                    Value::String(text) => text.clone(),
                    Value::Null => continue,
                    other => other.to_string(),
                };
                if !text.trim().is_empty() {
                    moved_lines.push(format!("{name}: {text}"));
                    moved.push(name.clone());
                }
            }
        }
    }
    if let Some(item_type) = data.get("itemType") {
        out.insert("itemType".into(), item_type.clone());
    }
    // The entry's own extra first, then what moved there.
    extra_lines.extend(moved_lines);
    if !extra_lines.is_empty() && out.contains_key("extra") {
        let mut seen = Vec::new();
        extra_lines.retain(|line| {
            let fresh = !seen.contains(line);
            seen.push(line.clone());
            fresh
        });
        out.insert("extra".into(), Value::String(extra_lines.join("\n")));
    }
    let mut all_tags: Vec<Value> = data.get("tags").and_then(Value::as_array).cloned().unwrap_or_default();
    for tag in tags {
        let name = tag.get("tag");
        if !all_tags.iter().any(|known| known.get("tag") == name) {
            all_tags.push(tag.clone());
        }
    }
    out.insert("tags".into(), Value::Array(all_tags));
    out.insert("collections".into(), Value::Array(collections.iter().cloned().map(Value::String).collect()));
    Payload { data: out, moved_to_extra: moved }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_the_type_lacks_move_to_extra_and_tags_join() {
        let template = json!({"itemType": "book", "title": "", "creators": [], "ISBN": "", "extra": "", "tags": [],
                              "collections": [], "relations": {}});
        let data = json!({"itemType": "book", "title": "T", "ISBN": "9780306406157", "publicationTitle": "J",
                          "extra": "OCLC: 1", "tags": [{"tag": "a"}],
                          "creators": [{"creatorType": "author", "lastName": "X", "firstName": "Y"}]});
        let payload = fit_to_template(
            template.as_object().unwrap(),
            data.as_object().unwrap(),
            &[json!({"tag": "a"}), json!({"tag": "b", "type": 1})],
            &["COLLAAAA".into()],
        );
        assert_eq!(payload.moved_to_extra, ["publicationTitle"]);
        assert_eq!(payload.data["extra"], "OCLC: 1\npublicationTitle: J");
        assert_eq!(payload.data["tags"], json!([{"tag": "a"}, {"tag": "b", "type": 1}]));
        assert_eq!(payload.data["collections"], json!(["COLLAAAA"]));
        assert_eq!(payload.data["ISBN"], "9780306406157");
        assert_eq!(payload.data["relations"], json!({}));
    }

    #[test]
    fn a_record_never_names_an_existing_item_or_its_bookkeeping() {
        let template = json!({"itemType": "book", "title": "", "extra": "", "tags": [], "collections": []});
        let mut data = json!({"itemType": "book", "title": "T"});
        for (n, field) in MANAGED_FIELDS.iter().enumerate() {
            data[*field] = json!(format!("value {n}"));
        }
        let payload = fit_to_template(template.as_object().unwrap(), data.as_object().unwrap(), &[], &[]);
        for field in MANAGED_FIELDS {
            assert!(!payload.data.contains_key(field), "{field} reached the payload");
        }
        assert_eq!(payload.data["extra"], "", "nor is it kept as an extra line");
        assert!(payload.moved_to_extra.is_empty());
    }
}
