//! Variables: `firstCreator` and the creator lists, fields (base fields too), `year`, `citationKey`, and HTML
//! removed from what they render (cases from the TypeScript server's rename.test.ts, then more).

use super::*;

#[test]
fn t01_default_template() {
    assert_eq!(r(DEFAULT_TEMPLATE, &paper()), "Vaswani and Shazeer - 2017 - Attention Is All You Need");
}

#[test]
fn t02_first_creator_summary() {
    let all = ["Vaswani", "Shazeer", "Parmar", "Uszkoreit"];
    assert_eq!(r("{{ firstCreator }}", &authors(&all[..1])), "Vaswani");
    assert_eq!(r("{{ firstCreator }}", &authors(&all[..2])), "Vaswani and Shazeer");
    assert_eq!(r("{{ firstCreator }}", &authors(&all[..3])), "Vaswani et al.");
    assert_eq!(r("{{ firstCreator }}", &authors(&all)), "Vaswani et al.");
}

#[test]
fn t03_first_creator_falls_back_to_editors_then_others() {
    let editors = with(
        paper(),
        json!({"creators": [
            {"creatorType": "editor", "lastName": "Editor"},
            {"creatorType": "editor", "lastName": "Other"}
        ]}),
    );
    assert_eq!(r("{{ firstCreator }}", &editors), "Editor and Other");
    let director = with(paper(), json!({"creators": [{"creatorType": "director", "lastName": "Kurosawa"}]}));
    assert_eq!(r("{{ firstCreator }}", &director), "Kurosawa");
    let translator = with(paper(), json!({"creators": [{"creatorType": "translator", "lastName": "Pevear"}]}));
    assert_eq!(r("{{ firstCreator }}", &translator), "Pevear");
}

#[test]
fn t04_creator_summary_is_preferred() {
    let item = paper();
    assert_eq!(render("{{ firstCreator }}", data(&item), Some("Vaswani and colleagues")), "Vaswani and colleagues");
    // A blank summary is no summary; bidi isolates are not part of names.
    assert_eq!(render("{{ firstCreator }}", data(&item), Some("  ")), "Vaswani and Shazeer");
    assert_eq!(render("{{ firstCreator }}", data(&item), Some("\u{2068}Li\u{2069} et al.")), "Li et al.");
}

#[test]
fn t05_empty_variables_drop_their_affixes() {
    let no_authors = with(paper(), json!({"creators": []}));
    assert_eq!(r(DEFAULT_TEMPLATE, &no_authors), "2017 - Attention Is All You Need");
    let no_date = with(paper(), json!({"date": ""}));
    assert_eq!(r(DEFAULT_TEMPLATE, &no_date), "Vaswani and Shazeer - Attention Is All You Need");
}

#[test]
fn t06_creator_lists() {
    assert_eq!(r(r#"{{ authors join=" & " }}"#, &paper()), "Vaswani & Shazeer");
    assert_eq!(r(r#"{{ authors start="1" }}"#, &paper()), "Shazeer");
    assert_eq!(r("{{ editors }}", &paper()), "Editor");
    assert_eq!(r("{{ creators }}", &paper()), "Vaswani, Shazeer, Editor");
    assert_eq!(r(r#"{{ creators max="2" }}"#, &paper()), "Vaswani, Shazeer");
    assert_eq!(r(r#"{{ creators max="0" }}"#, &paper()), "Vaswani, Shazeer, Editor");
    // A negative max takes the last names, last first (as in Zotero).
    assert_eq!(r(r#"{{ authors max="-1" }}"#, &paper()), "Shazeer");
}

#[test]
fn t07_truncate_and_case() {
    assert_eq!(r(r#"{{ title truncate="9" }}"#, &paper()), "Attention");
    // Zotero 7 lowercases for snake and hyphen case (the TypeScript server did not).
    assert_eq!(r(r#"{{ title case="snake" }}"#, &paper()), "attention_is_all_you_need");
    assert_eq!(r(r#"{{ title case="upper" truncate="4" }}"#, &paper()), "ATTE");
    // Truncation cuts, then trims the end.
    assert_eq!(r(r#"{{ title truncate="10" }}"#, &paper()), "Attention");
}

#[test]
fn t08_fields_citation_key_and_unknown_fields() {
    assert_eq!(r("{{ publicationTitle }}", &paper()), "NeurIPS");
    assert_eq!(r("{{ citationKey }}", &paper()), "vaswani2017attention");
    assert_eq!(r("{{ nonexistentField }}", &paper()), "");
    assert_eq!(r("{{ itemType }}", &paper()), "journalArticle");
    assert_eq!(r("{{ version }}", &paper()), "3");
}

#[test]
fn t09_year_from_any_date() {
    assert_eq!(r("{{ year }}", &with(paper(), json!({"date": "June 2017"}))), "2017");
    assert_eq!(r("{{ year }}", &with(paper(), json!({"date": "n.d."}))), "");
    assert_eq!(r("{{ year }}", &with(paper(), json!({"date": "12/06/2017"}))), "2017");
    assert_eq!(r("{{ year }}", &with(paper(), json!({"date": "2017年6月"}))), "2017");
    assert_eq!(r("{{ year }}", &with(paper(), json!({"date": "ISBN 123456"}))), "");
}

#[test]
fn t10_html_is_stripped_from_titles() {
    assert_eq!(r("{{ title }}", &with(paper(), json!({"title": "A <i>Study</i> of X"}))), "A Study of X");
    assert_eq!(r("{{ title }}", &with(paper(), json!({"title": "x < y and y > z"}))), "x  z");
}

#[test]
fn name_styles_and_initials() {
    let item = with(
        paper(),
        json!({"creators": [
            {"creatorType": "author", "firstName": "Ashish", "lastName": "Vaswani"},
            {"creatorType": "author", "name": "OpenAI"}
        ]}),
    );
    assert_eq!(r(r#"{{ authors name="given" }}"#, &item), "Ashish, OpenAI");
    assert_eq!(r(r#"{{ authors name="full" }}"#, &item), "Ashish Vaswani, OpenAI");
    assert_eq!(
        r(r#"{{ authors name="family-given" name-part-separator=", " join="; " }}"#, &item),
        "Vaswani, Ashish; OpenAI"
    );
    assert_eq!(r(r#"{{ authors name="full" initialize="given" }}"#, &item), "A. Vaswani, OpenAI");
    assert_eq!(r(r#"{{ authors name="full" initialize="full" initialize-with="" }}"#, &item), "A V, O");
    assert_eq!(r("{{ firstCreator }}", &item), "Vaswani and OpenAI");
}

#[test]
fn primary_creators_follow_the_item_type() {
    let film = json!({"itemType": "film", "title": "Ran", "date": "1985", "creators": [
        {"creatorType": "scriptwriter", "lastName": "Oguni"},
        {"creatorType": "director", "firstName": "Akira", "lastName": "Kurosawa"}
    ]});
    assert_eq!(r("{{ authors }}", &film), "Kurosawa");
    assert_eq!(r(DEFAULT_TEMPLATE, &film), "Kurosawa - 1985 - Ran");
}

#[test]
fn base_fields_reach_type_specific_ones() {
    let case = json!({"itemType": "case", "caseName": "Marbury v. Madison", "dateDecided": "1803",
        "creators": [{"creatorType": "author", "lastName": "Marshall"}]});
    assert_eq!(r(DEFAULT_TEMPLATE, &case), "Marshall - 1803 - Marbury v. Madison");
    let chapter = json!({"itemType": "bookSection", "bookTitle": "Handbook"});
    assert_eq!(r("{{ publicationTitle }}", &chapter), "Handbook");
}

#[test]
fn citation_key_sources() {
    let own = with(paper(), json!({"citationKey": "own2017"}));
    assert_eq!(r("{{ citationKey }}", &own), "own2017");
    let lower = with(paper(), json!({"extra": "tex.foo: bar\n  citation key:  low2017 trailing\nmore"}));
    assert_eq!(r("{{ citationKey }}", &lower), "low2017");
    assert_eq!(r("{{ citationKey }}", &with(paper(), json!({"extra": "Key: x"}))), "");
}

#[test]
fn hyphenated_names_are_camel_case() {
    assert_eq!(
        r(r#"{{ first-creator suffix=" - " }}{{ publication-title }}"#, &paper()),
        "Vaswani and Shazeer - NeurIPS"
    );
}
