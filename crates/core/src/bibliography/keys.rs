//! Citation keys: chosen, pinned or generated, then made unique (the rules are in the parent module's doc).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::sources::bibtex::latex::COMPOSED;
use crate::zotero::ZoteroObject;

use super::{strip_markup, Entry, Name};

/// Title words a generated key skips.
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "by", "for", "from", "in", "into", "is", "it", "its", "of", "on",
    "onto", "or", "over", "the", "to", "upon", "via", "with",
];

/// Characters a key may not contain: BibTeX (and biber) would end or misread the key at them.
const UNSAFE_IN_KEY: &[char] = &[',', '{', '}', '(', ')', '#', '%', '"', '\'', '=', '\\', '~'];

/// A key before the collisions are settled.
struct Candidate {
    key: String,
    /// Chosen by the user (the `citationKey` field or a line of `extra`), not generated.
    chosen: bool,
}

/// Stable citation keys for `items`, in the same order, every one unique (ignoring case).
pub fn citation_keys(items: &[ZoteroObject]) -> Vec<String> {
    let candidates: Vec<Candidate> = items.iter().map(candidate).collect();
    let mut groups: HashMap<String, Vec<usize>> = HashMap::with_capacity(items.len());
    for (index, candidate) in candidates.iter().enumerate() {
        groups.entry(candidate.key.to_lowercase()).or_default().push(index);
    }
    let mut keys: Vec<Option<String>> = vec![None; items.len()];
    let mut taken: HashSet<String> = HashSet::with_capacity(items.len());
    for (lower, members) in &groups {
        let keeper = members.iter().copied().min_by(|&a, &b| {
            let rank = |index: usize| {
                let item = &items[index];
                let added = item.field("dateAdded");
                (!candidates[index].chosen, added.is_none(), added, item.key.as_str(), index)
            };
            rank(a).cmp(&rank(b))
        });
        if let Some(keeper) = keeper {
            keys[keeper] = Some(candidates[keeper].key.clone());
            taken.insert(lower.clone());
        }
    }
    // The others of each group, in the items' order: a suffix that is itself taken (a chosen key spelled like
    // one, or one item given twice) gets a number too, so every key is unique whatever the input. The next
    // number of each such key is remembered, so even one item given many times costs linear time.
    let mut next_number: HashMap<String, usize> = HashMap::new();
    keys.into_iter()
        .enumerate()
        .map(|(index, key)| {
            key.unwrap_or_else(|| {
                let base = format!("{}_{}", candidates[index].key, clean(&items[index].key).to_lowercase());
                if taken.insert(base.to_lowercase()) {
                    return base;
                }
                let number = next_number.entry(base.to_lowercase()).or_insert(2);
                loop {
                    let key = format!("{base}_{number}");
                    *number += 1;
                    if taken.insert(key.to_lowercase()) {
                        return key;
                    }
                }
            })
        })
        .collect()
}

/// An item's own key: chosen when it has one, else generated.
fn candidate(item: &ZoteroObject) -> Candidate {
    let chosen = item.field("citationKey").map(clean).filter(|key| !key.is_empty()).or_else(|| pinned(item));
    match chosen {
        Some(key) => Candidate { key, chosen: true },
        None => Candidate { key: generated(item), chosen: false },
    }
}

/// A key pinned in `extra`: `Citation Key: …` (any case), or the older `bibtex: …`.
fn pinned(item: &ZoteroObject) -> Option<String> {
    item.field("extra")?.lines().find_map(|line| {
        let (label, value) = line.split_once(':')?;
        let label = label.trim();
        let is_key = label.eq_ignore_ascii_case("citation key") || label.eq_ignore_ascii_case("bibtex");
        Some(clean(value)).filter(|key| is_key && !key.is_empty())
    })
}

/// A chosen key without the characters BibTeX does not take in a key.
fn clean(key: &str) -> String {
    key.chars().filter(|c| !c.is_whitespace() && !c.is_control() && !UNSAFE_IN_KEY.contains(c)).collect()
}

/// `<last name><year><title word>`, each folded to ASCII lower case.
fn generated(item: &ZoteroObject) -> String {
    let entry = Entry { item, key: "" };
    let primary = entry.primary_role();
    let first_creator = entry
        .creators_as(primary)
        .next()
        .or_else(|| entry.creators_as("editor").next())
        .or_else(|| entry.creators().next().map(|(_, name)| name));
    let creator = first_creator.map(|name| match name {
        Name::Person { last, first } => fold(if last.is_empty() { first } else { last }),
        Name::Literal(name) => fold(name.split_whitespace().next().unwrap_or_default()),
    });
    let year = entry.date().map(|date| format!("{:04}", date.year)).unwrap_or_default();
    let title = entry.title().map(strip_markup).unwrap_or_default();
    let word = title
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(fold)
        .find(|word| !word.is_empty() && !STOP_WORDS.contains(&word.as_str()))
        .unwrap_or_default();
    match creator.filter(|creator| !creator.is_empty()) {
        Some(creator) => format!("{creator}{year}{word}"),
        None if year.is_empty() && word.is_empty() => clean(&item.key).to_lowercase(),
        None => format!("anon{year}{word}"),
    }
}

/// Letters without a combining accent, and what they fold to.
const LETTERS: &[(char, &str)] = &[
    ('ß', "ss"),
    ('ẞ', "ss"),
    ('æ', "ae"),
    ('Æ', "ae"),
    ('œ', "oe"),
    ('Œ', "oe"),
    ('ø', "o"),
    ('Ø', "o"),
    ('ł', "l"),
    ('Ł', "l"),
    ('ı', "i"),
    ('ȷ', "j"),
    ('ð', "d"),
    ('Ð', "d"),
    ('đ', "d"),
    ('Đ', "d"),
    ('þ', "th"),
    ('Þ', "th"),
    ('ŋ', "ng"),
    ('Ŋ', "ng"),
    ('ħ', "h"),
    ('Ħ', "h"),
];

/// `text` as ASCII lower-case letters and digits: accented letters as their base letter (from the table the
/// BibTeX reader composes accents with), the letters of [`LETTERS`] spelled out, anything else dropped.
pub(super) fn fold(text: &str) -> String {
    static TABLE: OnceLock<HashMap<char, &'static str>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table: HashMap<char, &'static str> = LETTERS.iter().copied().collect();
        for (_, pairs) in COMPOSED {
            let mut chars = pairs.char_indices();
            while let (Some((at, _)), Some((_, accented))) = (chars.next(), chars.next()) {
                // The base letter is ASCII: one byte at `at`.
                table.entry(accented).or_insert(&pairs[at..at + 1]);
            }
        }
        table
    });
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if let Some(folded) = table.get(&c) {
            out.extend(folded.chars().map(|c| c.to_ascii_lowercase()));
        }
    }
    out
}
