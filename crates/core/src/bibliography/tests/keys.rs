//! Citation keys: chosen, pinned, generated, and unique without one item's key depending on another's.

use super::*;

fn dated(mut item: ZoteroObject, added: &str) -> ZoteroObject {
    item.data.insert("dateAdded".to_owned(), json!(added));
    item
}

fn smith(key: &str, added: &str) -> ZoteroObject {
    dated(article(key, "Deep learning for cats", "2020-04-01", json!([person("Jane", "Smith")])), added)
}

#[test]
fn the_citation_key_field_comes_first() {
    let mut chosen = smith("AAAA2222", "2020-01-01T00:00:00Z");
    chosen.data.insert("citationKey".to_owned(), json!("Smith:Cats"));
    chosen.data.insert("extra".to_owned(), json!("Citation Key: other"));
    assert_eq!(citation_keys(&[chosen]), ["Smith:Cats"]);
}

#[test]
fn a_key_pinned_in_extra() {
    let pinned = |extra: &str| {
        let mut item = smith("AAAA2222", "2020-01-01T00:00:00Z");
        item.data.insert("extra".to_owned(), json!(extra));
        citation_keys(&[item]).remove(0)
    };
    assert_eq!(pinned("PMID: 123\nCitation Key: smithCats2020"), "smithCats2020");
    assert_eq!(pinned("citation key:  lower-label "), "lower-label");
    assert_eq!(pinned("bibtex: oldStyle"), "oldStyle");
    // Characters BibTeX would end a key at are dropped; a key left empty is generated.
    assert_eq!(pinned("Citation Key: my key{1},#%\"x"), "mykey1x");
    assert_eq!(pinned("Citation Key: {}"), "smith2020deep");
    assert_eq!(pinned("Original Date: 1999"), "smith2020deep");
}

#[test]
fn generated_keys() {
    let key = |item: ZoteroObject| citation_keys(&[item]).remove(0);
    assert_eq!(key(smith("AAAA2222", "")), "smith2020deep");
    assert_eq!(key(article("K", "The Art of the Deal", "1987", json!([person("D", "Trump")]))), "trump1987art");
    assert_eq!(key(article("K", "Über Müller", "2001", json!([person("Ö", "Müller")]))), "muller2001uber");
    for (last, folded) in [
        ("Ørsted", "orsted"),
        ("Łódź", "lodz"),
        ("Dvořák", "dvorak"),
        ("Ångström", "angstrom"),
        ("Straßer", "strasser"),
        ("O'Brien", "obrien"),
        ("van der Berg", "vanderberg"),
        ("王", "anon"),
    ] {
        assert_eq!(key(article("K", "Notes", "2000", json!([person("A", last)]))), format!("{folded}2000notes"));
    }
    // A name in one field gives its first word; no creator gives `anon`; the markup of a title is not a word.
    assert_eq!(
        key(article("K", "<i>E. coli</i> in the wild", "2019", json!([organisation("World Health Organization")]))),
        "world2019e"
    );
    assert_eq!(key(article("K", "On the origin", "1859", json!([]))), "anon1859origin");
    assert_eq!(key(article("K", "", "", json!([person("Ann", "Lee")]))), "lee");
    assert_eq!(key(item("ABCD2345", json!({ "itemType": "document" }))), "abcd2345");
    // The author first, then the editor, then whoever comes first.
    let editors = json!([
        { "creatorType": "translator", "firstName": "T", "lastName": "Translator" },
        { "creatorType": "editor", "firstName": "E", "lastName": "Editor" },
    ]);
    let book = item("K", json!({ "itemType": "book", "title": "Essays", "date": "1990", "creators": editors }));
    assert_eq!(key(book), "editor1990essays");
    let translated = json!([{ "creatorType": "translator", "firstName": "T", "lastName": "Translator" }]);
    let book = item("K", json!({ "itemType": "book", "title": "Essays", "date": "1990", "creators": translated }));
    assert_eq!(key(book), "translator1990essays");
}

#[test]
fn in_a_collision_the_item_added_first_keeps_the_key() {
    let older = smith("ZZZZ9999", "2019-01-01T00:00:00Z");
    let newer = smith("AAAA2222", "2021-01-01T00:00:00Z");
    let keys = citation_keys(&[newer.clone(), older.clone()]);
    assert_eq!(keys, ["smith2020deep_aaaa2222", "smith2020deep"]);
    // The order of the items does not matter.
    assert_eq!(citation_keys(&[older, newer]), ["smith2020deep", "smith2020deep_aaaa2222"]);
    // Added at the same moment: the smaller Zotero key keeps it.
    let same = [smith("BBBB3333", "2020-01-01T00:00:00Z"), smith("AAAA2222", "2020-01-01T00:00:00Z")];
    assert_eq!(citation_keys(&same), ["smith2020deep_bbbb3333", "smith2020deep"]);
}

#[test]
fn a_chosen_key_wins_over_a_generated_one() {
    let older_generated = smith("AAAA2222", "2010-01-01T00:00:00Z");
    let mut chosen = smith("BBBB3333", "2022-01-01T00:00:00Z");
    chosen.data.insert("citationKey".to_owned(), json!("Smith2020Deep"));
    // BibTeX compares keys ignoring case, so these two collide.
    assert_eq!(citation_keys(&[older_generated, chosen]), ["smith2020deep_aaaa2222", "Smith2020Deep"]);
    // Two items with one chosen key: the older keeps it.
    let mut first = smith("CCCC4444", "2001-01-01T00:00:00Z");
    first.data.insert("citationKey".to_owned(), json!("mine"));
    let mut second = smith("DDDD5555", "2002-01-01T00:00:00Z");
    second.data.insert("extra".to_owned(), json!("Citation Key: mine"));
    assert_eq!(citation_keys(&[second, first]), ["mine_dddd5555", "mine"]);
}

#[test]
fn an_unrelated_item_changes_no_key() {
    let library = vec![
        smith("AAAA2222", "2019-01-01T00:00:00Z"),
        smith("BBBB3333", "2020-01-01T00:00:00Z"),
        dated(article("CCCC4444", "Graph theory", "2018", json!([person("Ann", "Lee")])), "2018-01-01T00:00:00Z"),
        dated(article("DDDD5555", "Graph theory", "2018", json!([person("Ann", "Lee")])), "2018-06-01T00:00:00Z"),
    ];
    let before = citation_keys(&library);
    assert_eq!(before, ["smith2020deep", "smith2020deep_bbbb3333", "lee2018graph", "lee2018graph_dddd5555"]);

    // Added first in the list, or last, or changed: an item whose key collides with none of theirs.
    let unrelated =
        dated(article("EEEE6666", "Topology", "2017", json!([person("Bo", "Kim")])), "2000-01-01T00:00:00Z");
    let mut added_first = vec![unrelated.clone()];
    added_first.extend(library.iter().cloned());
    assert_eq!(citation_keys(&added_first)[1..], before[..]);
    let mut added_last = library.clone();
    added_last.push(unrelated.clone());
    assert_eq!(citation_keys(&added_last)[..4], before[..]);
    let mut changed = added_last.clone();
    changed[4].data.insert("title".to_owned(), json!("Algebraic topology"));
    assert_eq!(citation_keys(&changed)[..4], before[..]);
    // Removing an item of another group leaves this one alone too.
    let without_lee: Vec<ZoteroObject> = library[..2].to_vec();
    assert_eq!(citation_keys(&without_lee), before[..2]);
    // A new item that does collide takes a suffix; the keys already given stay.
    let mut colliding = library.clone();
    colliding.push(smith("FFFF7777", "2023-01-01T00:00:00Z"));
    assert_eq!(citation_keys(&colliding)[..4], before[..]);
    assert_eq!(citation_keys(&colliding)[4], "smith2020deep_ffff7777");
}

#[test]
fn many_generated_keys_are_all_unique_and_safe() {
    let mut items: Vec<ZoteroObject> = (0..250).map(|n| smith(&format!("K{n:07}"), "2020-01-01T00:00:00Z")).collect();
    // A chosen key spelled like a suffixed one, and one item given twice: still no two keys alike.
    let mut impostor = smith("X0000000", "2020-01-01T00:00:00Z");
    impostor.data.insert("citationKey".to_owned(), json!("smith2020deep_k0000001"));
    items.push(impostor);
    items.push(items[3].clone());
    items.extend(std::iter::repeat_n(items[7].clone(), 1_000));
    let keys = citation_keys(&items);
    let unique: std::collections::HashSet<String> = keys.iter().map(|key| key.to_lowercase()).collect();
    assert_eq!(unique.len(), items.len());
    for key in &keys {
        assert!(
            key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '-'),
            "{key} has a character BibTeX keys should not"
        );
    }
}
