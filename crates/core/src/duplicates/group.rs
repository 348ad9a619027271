//! Grouping: items that share an identifier, or a title key when no identifier tells them apart.

use std::cmp::Reverse;
use std::collections::HashMap;

use serde_json::Value;

use super::fingerprint::{Fingerprints, Reason};
use crate::zotero::ZoteroObject;

/// Picks one kind of identifier out of an item's fingerprints.
type IdentifiersOf = fn(&Fingerprints) -> &Vec<String>;

/// Items that look like one work, the one to keep first.
#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateGroup {
    /// The strongest evidence that joined the group.
    pub reason: Reason,
    /// Richest first ([`richness`]); the first is the master a merge keeps.
    pub items: Vec<ZoteroObject>,
}

impl DuplicateGroup {
    pub fn keys(&self) -> Vec<String> {
        self.items.iter().map(|item| item.key.clone()).collect()
    }

    pub fn titles(&self) -> Vec<String> {
        self.items.iter().map(|item| item.field("title").unwrap_or_default().to_owned()).collect()
    }
}

/// Whether an item can take part: regular items only (no notes, attachments, annotations), not in the trash.
pub fn is_candidate(item: &ZoteroObject) -> bool {
    !matches!(item.item_type(), None | Some("note" | "attachment" | "annotation")) && !item.is_trashed()
}

/// Groups `items` (non-candidates are skipped). Items sharing a DOI are one work; items sharing an ISBN (books),
/// an arXiv id or a title key join unless their groups carry different identifiers of one kind (two DOIs, two
/// arXiv ids, two ISBNs): a preprint and its journal version with the same title stay apart when both have
/// DOIs, and so do two editions of a book. Unlike the TypeScript server, a copy with a DOI and one without still
/// meet on their title. Groups come in the order of their first item in `items`.
pub fn group_duplicates(items: &[ZoteroObject]) -> Vec<DuplicateGroup> {
    let candidates: Vec<&ZoteroObject> = items.iter().filter(|item| is_candidate(item)).collect();
    let prints: Vec<Fingerprints> = candidates.iter().map(|item| Fingerprints::of(item)).collect();
    let mut sets = Clusters::new(&prints);

    let strong: [(Reason, IdentifiersOf); 3] =
        [(Reason::Doi, |p| &p.dois), (Reason::Isbn, |p| &p.isbns), (Reason::Arxiv, |p| &p.arxiv)];
    for (reason, values) in strong {
        let mut first_with: HashMap<&str, usize> = HashMap::new();
        for (index, print) in prints.iter().enumerate() {
            for value in values(print) {
                match first_with.get(value.as_str()) {
                    Some(&other) => sets.join(other, index, reason),
                    None => {
                        first_with.insert(value, index);
                    }
                }
            }
        }
    }
    let mut first_with_title: HashMap<&str, usize> = HashMap::new();
    for (index, print) in prints.iter().enumerate() {
        if let Some(key) = &print.title_key {
            match first_with_title.get(key.as_str()) {
                Some(&other) => sets.join(other, index, Reason::TitleYearCreator),
                None => {
                    first_with_title.insert(key, index);
                }
            }
        }
    }

    let mut members: Vec<Vec<usize>> = vec![Vec::new(); candidates.len()];
    for index in 0..candidates.len() {
        let root = sets.root(index);
        members[root].push(index);
    }
    let mut groups: Vec<(usize, DuplicateGroup)> = Vec::new();
    for (root, indices) in members.into_iter().enumerate() {
        if indices.len() < 2 {
            continue;
        }
        let Some(reason) = sets.reason[root] else { continue };
        let mut group: Vec<ZoteroObject> = indices.iter().map(|&index| candidates[index].clone()).collect();
        sort_by_richness(&mut group);
        groups.push((indices[0], DuplicateGroup { reason, items: group }));
    }
    crate::sort::sort_by_key(&mut groups, |(first, _)| *first);
    groups.into_iter().map(|(_, group)| group).collect()
}

/// How much an item holds: its non-empty data values, plus three for each child (notes and files are what
/// a person would least like to lose).
pub fn richness(item: &ZoteroObject) -> u64 {
    let filled = item
        .data
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "key" | "version"))
        .filter(|(_, value)| match value {
            Value::Null => false,
            Value::String(text) => !text.is_empty(),
            Value::Array(list) => !list.is_empty(),
            Value::Object(map) => !map.is_empty(),
            _ => true,
        })
        .count() as u64;
    let children = item.meta.get("numChildren").and_then(Value::as_u64).unwrap_or(0);
    filled + 3 * children
}

/// Richest first; among equals the one added first (it has been cited longest), then by key for a stable order.
pub fn sort_by_richness(items: &mut [ZoteroObject]) {
    crate::sort::sort_by_cached_key(items, |item| {
        (Reverse(richness(item)), item.field("dateAdded").unwrap_or("~").to_owned(), item.key.clone())
    });
}

/// Union–find over the candidates, each set remembering its identifiers (to refuse joins that contradict them)
/// and the strongest reason that joined it.
struct Clusters<'a> {
    parent: Vec<usize>,
    reason: Vec<Option<Reason>>,
    dois: Vec<Vec<&'a str>>,
    isbns: Vec<Vec<&'a str>>,
    arxiv: Vec<Vec<&'a str>>,
}

impl<'a> Clusters<'a> {
    fn new(prints: &'a [Fingerprints]) -> Self {
        let strs = |list: &'a Vec<String>| list.iter().map(String::as_str).collect::<Vec<_>>();
        Clusters {
            parent: (0..prints.len()).collect(),
            reason: vec![None; prints.len()],
            dois: prints.iter().map(|p| strs(&p.dois)).collect(),
            isbns: prints.iter().map(|p| strs(&p.isbns)).collect(),
            arxiv: prints.iter().map(|p| strs(&p.arxiv)).collect(),
        }
    }

    fn root(&mut self, mut index: usize) -> usize {
        while self.parent[index] != index {
            self.parent[index] = self.parent[self.parent[index]];
            index = self.parent[index];
        }
        index
    }

    /// Joins the sets of `a` and `b` for `reason`, unless a shared DOI is not the evidence and the two sets
    /// name different works by some identifier kind.
    fn join(&mut self, a: usize, b: usize, reason: Reason) {
        let (a, b) = (self.root(a), self.root(b));
        if a == b {
            if self.reason[a].is_none_or(|known| reason < known) {
                self.reason[a] = Some(reason);
            }
            return;
        }
        if reason != Reason::Doi
            && (contradicts(&self.dois[a], &self.dois[b])
                || contradicts(&self.isbns[a], &self.isbns[b])
                || contradicts(&self.arxiv[a], &self.arxiv[b]))
        {
            return;
        }
        let (keep, gone) = if a < b { (a, b) } else { (b, a) };
        self.parent[gone] = keep;
        for lists in [&mut self.dois, &mut self.isbns, &mut self.arxiv] {
            let moved = std::mem::take(&mut lists[gone]);
            for value in moved {
                if !lists[keep].contains(&value) {
                    lists[keep].push(value);
                }
            }
        }
        let strongest = [self.reason[keep], self.reason[gone], Some(reason)].into_iter().flatten().min();
        self.reason[keep] = strongest;
    }
}

/// Both sides know identifiers of this kind and share none of them.
fn contradicts(a: &[&str], b: &[&str]) -> bool {
    !a.is_empty() && !b.is_empty() && !a.iter().any(|value| b.contains(value))
}
