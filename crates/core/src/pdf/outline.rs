//! The outline (bookmarks), walked here rather than through lopdf's table of contents, which follows `/Next`
//! without a cycle guard: a file whose outline loops (one of the adversarial probes) made it allocate until the
//! process died. Every node is visited once, the depth and the entry count are capped, and entries whose
//! destination cannot be resolved are kept without a page, as pdf.js keeps them.

use std::collections::{HashMap, HashSet};

use lopdf::{Dictionary, Document, Object, ObjectId};

/// Entries kept at most: a real outline has hundreds (the 1,321-page pgfmanual: 1,182).
const MAX_ENTRIES: usize = 10_000;
/// Longest title kept, in characters.
const MAX_TITLE_CHARS: usize = 500;
/// Deepest nesting followed (outlines are 3–5 deep; the limit keeps the recursion's stack small).
const MAX_DEPTH: usize = 32;
/// Name-tree nodes read at most when resolving named destinations.
const MAX_NAME_NODES: usize = 20_000;

/// One outline entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OutlineEntry {
    pub title: String,
    /// 1 for top-level entries, 2 for their children, and so on.
    pub depth: usize,
    /// The 1-based page the entry opens; `None` when its destination names no page of this document (a link
    /// to a web page, a broken reference).
    pub page: Option<usize>,
}

pub(super) fn read(doc: &Document, pages: &[ObjectId]) -> Vec<OutlineEntry> {
    let Some(root) = doc.catalog().ok().and_then(|c| dict(doc, c.get(b"Outlines").ok())) else { return Vec::new() };
    let mut walk = Walk {
        doc,
        page_numbers: pages.iter().enumerate().map(|(i, id)| (*id, i + 1)).collect(),
        named: None,
        seen: HashSet::new(),
        out: Vec::new(),
    };
    walk.siblings(root.get(b"First").ok(), 1);
    walk.out
}

struct Walk<'a> {
    doc: &'a Document,
    page_numbers: HashMap<ObjectId, usize>,
    /// Named destinations, read the first time an entry names one.
    named: Option<HashMap<Vec<u8>, &'a Object>>,
    seen: HashSet<ObjectId>,
    out: Vec<OutlineEntry>,
}

impl<'a> Walk<'a> {
    /// An item and its `/Next` siblings, each followed by its children.
    fn siblings(&mut self, mut next: Option<&'a Object>, depth: usize) {
        while let Some(Object::Reference(id)) = next {
            if depth > MAX_DEPTH || self.out.len() >= MAX_ENTRIES || !self.seen.insert(*id) {
                return;
            }
            let Ok(item) = self.doc.get_dictionary(*id) else { return };
            let title = item.get(b"Title").ok().and_then(|t| text(self.doc, t)).unwrap_or_default();
            let page = self.page_of(item);
            self.out.push(OutlineEntry { title, depth, page });
            self.siblings(item.get(b"First").ok(), depth + 1);
            next = item.get(b"Next").ok();
        }
    }

    /// The page an item opens: its `/Dest`, or the destination of its `/GoTo` action.
    fn page_of(&mut self, item: &'a Dictionary) -> Option<usize> {
        let dest = match item.get(b"Dest") {
            Ok(dest) => dest,
            Err(_) => {
                let action = dict(self.doc, item.get(b"A").ok())?;
                if action.get(b"S").and_then(Object::as_name).ok()? != b"GoTo" {
                    return None;
                }
                action.get(b"D").ok()?
            }
        };
        self.destination_page(dest, 0)
    }

    fn destination_page(&mut self, dest: &'a Object, hops: usize) -> Option<usize> {
        if hops > 2 {
            return None;
        }
        let (_, dest) = self.doc.dereference(dest).ok()?;
        match dest {
            // `[page /XYZ left top zoom]` and the like: the page is a reference (or, in remote links, a number).
            Object::Array(parts) => match parts.first()? {
                Object::Reference(page) => self.page_numbers.get(page).copied(),
                _ => None,
            },
            // A destination dictionary wraps the array in `/D`.
            Object::Dictionary(d) => self.destination_page(d.get(b"D").ok()?, hops + 1),
            Object::Name(name) | Object::String(name, _) => {
                let target = self.named_destinations().get(name.as_slice()).copied()?;
                self.destination_page(target, hops + 1)
            }
            _ => None,
        }
    }

    fn named_destinations(&mut self) -> &HashMap<Vec<u8>, &'a Object> {
        let doc = self.doc;
        self.named.get_or_insert_with(|| {
            let mut found = HashMap::new();
            let Ok(catalog) = doc.catalog() else { return found };
            // PDF 1.1: a `/Dests` dictionary in the catalog.
            if let Some(dests) = dict(doc, catalog.get(b"Dests").ok()) {
                for (name, value) in dests.iter() {
                    found.insert(name.clone(), value);
                }
            }
            // PDF 1.2 and later: the `/Dests` name tree in `/Names`.
            if let Some(tree) = dict(doc, catalog.get(b"Names").ok()).and_then(|n| dict(doc, n.get(b"Dests").ok())) {
                let mut budget = MAX_NAME_NODES;
                let mut seen = HashSet::new();
                name_tree(doc, tree, &mut found, &mut budget, &mut seen, 0);
            }
            found
        })
    }
}

/// The leaves of a name tree: `/Names [key value …]` in leaves, `/Kids` in inner nodes.
fn name_tree<'a>(
    doc: &'a Document,
    node: &'a Dictionary,
    found: &mut HashMap<Vec<u8>, &'a Object>,
    budget: &mut usize,
    seen: &mut HashSet<ObjectId>,
    depth: usize,
) {
    if depth > MAX_DEPTH || *budget == 0 {
        return;
    }
    *budget -= 1;
    if let Ok((_, Object::Array(names))) = node.get(b"Names").and_then(|n| doc.dereference(n)) {
        for pair in names.chunks(2) {
            if let [Object::String(key, _), value] = pair {
                found.insert(key.clone(), value);
            }
        }
    }
    if let Ok((_, Object::Array(kids))) = node.get(b"Kids").and_then(|k| doc.dereference(k)) {
        for kid in kids {
            if let Object::Reference(id) = kid {
                if !seen.insert(*id) {
                    continue;
                }
                if let Ok(kid) = doc.get_dictionary(*id) {
                    name_tree(doc, kid, found, budget, seen, depth + 1);
                }
            }
        }
    }
}

fn dict<'a>(doc: &'a Document, object: Option<&'a Object>) -> Option<&'a Dictionary> {
    doc.dereference(object?).ok()?.1.as_dict().ok()
}

/// A title as a reader shows it: decoded (PDFDocEncoding, UTF-16 or UTF-8 with their byte order marks),
/// control characters (a stray CR, NUL padding) as spaces, runs of whitespace as one space, very long ones cut.
fn text(doc: &Document, object: &Object) -> Option<String> {
    let (_, object) = doc.dereference(object).ok()?;
    let raw = lopdf::decode_text_string(object).ok()?;
    Some(clean_title(&raw))
}

fn clean_title(raw: &str) -> String {
    let spaced: String = raw.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_TITLE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_lose_control_characters_and_extra_spaces() {
        assert_eq!(clean_title("  Intro\r\nduction\u{0}\u{0} "), "Intro duction");
        assert_eq!(clean_title(&"x".repeat(2000)).chars().count(), MAX_TITLE_CHARS);
    }
}
