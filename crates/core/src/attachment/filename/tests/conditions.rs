//! `if`/`elseif`/`else` blocks, comparisons, literals and broken tags, and a parsed template used again.

use super::*;

#[test]
fn if_elseif_else() {
    let t = "{{ if authors }}A{{ elseif editors }}E{{ else }}N{{ endif }}";
    assert_eq!(r(t, &paper()), "A");
    let editors = with(paper(), json!({"creators": [{"creatorType": "editor", "lastName": "Ed"}]}));
    assert_eq!(r(t, &editors), "E");
    assert_eq!(r(t, &with(paper(), json!({"creators": []}))), "N");
}

#[test]
fn conditions_compare_case_insensitively_and_numbers_as_numbers() {
    let t = r#"{{ if itemType == "JournalArticle" }}J{{ else }}O{{ endif }}"#;
    assert_eq!(r(t, &paper()), "J");
    assert_eq!(r(t, &with(paper(), json!({"itemType": "book"}))), "O");
    assert_eq!(r(r#"{{ if itemType != "book" }}not a book{{ endif }}"#, &paper()), "not a book");
    assert_eq!(r("{{ if authorsCount > 1 }}many{{ else }}one{{ endif }}", &paper()), "many");
    assert_eq!(r("{{ if authorsCount >= 10 }}lots{{ else }}few{{ endif }}", &paper()), "few");
    assert_eq!(r(r#"{{ if {{ authors max="1" }} == 'vaswani' }}V{{ endif }}"#, &paper()), "V");
    assert_eq!(r("{{ if {{ authorsCount == 2 }} }}two{{ endif }}", &paper()), "two");
    assert_eq!(r(r#"{{ if title == "a == b" }}eq{{ else }}ne{{ endif }}"#, &paper()), "ne");
}

#[test]
fn nested_ifs() {
    let t = "{{ if authors }}[{{ if year }}{{ year }}{{ else }}n.d.{{ endif }}]{{ else }}{{ if year }}y{{ endif \
             }}none{{ endif }}";
    assert_eq!(r(t, &paper()), "[2017]");
    assert_eq!(r(t, &with(paper(), json!({"date": ""}))), "[n.d.]");
    assert_eq!(r(t, &with(paper(), json!({"creators": []}))), "ynone");
    // Only the first true branch renders, and nothing inside a branch not taken does.
    let t = "{{ if title }}1{{ elseif title }}2{{ else }}3{{ endif }}|{{ if nothing }}{{ if title }}x{{ endif }}{{ \
             else }}y{{ endif }}";
    assert_eq!(r(t, &paper()), "1|y");
}

#[test]
fn conditional_template_for_files() {
    let t = r#"{{ if itemType == "book" }}{{ authors max="1" suffix=" - " }}{{ else }}{{ firstCreator suffix=" - " }}{{ endif }}{{ year suffix=" - " }}{{ title }}"#;
    let book = with(paper(), json!({"itemType": "book"}));
    assert_eq!(
        build_renamed_filename(data(&book), "x.epub", t, None).as_deref(),
        Some("Vaswani - 2017 - Attention Is All You Need.epub")
    );
    assert_eq!(
        build_renamed_filename(data(&paper()), "x.pdf", t, None).as_deref(),
        Some("Vaswani and Shazeer - 2017 - Attention Is All You Need.pdf")
    );
}

#[test]
fn template_may_span_lines_and_have_literals() {
    let t = "{{ firstCreator }}\n{{ \" -- \" }}\r\n{{ year }}";
    assert_eq!(r(t, &paper()), "Vaswani and Shazeer -- 2017");
}

#[test]
fn broken_tags_render_as_nothing() {
    assert_eq!(r("a{{ }}b{{ 1x }}c{{ title, }}d", &paper()), "abcd");
    // An unclosed tag is left as text, as in Zotero.
    assert_eq!(r("{{ year }} {{ title", &paper()), "2017 {{ title");
}

#[test]
fn template_is_reusable() {
    let template = Template::parse(DEFAULT_TEMPLATE);
    assert!(template.problems().is_empty());
    let other = authors(&["Li", "Zhang", "Ye"]);
    assert_eq!(
        template.render(data(&paper()), None).as_deref(),
        Ok("Vaswani and Shazeer - 2017 - Attention Is All You Need")
    );
    assert_eq!(
        template.file_name(data(&other), "a.pdf", None),
        Ok(Some("Li et al. - 2017 - Attention Is All You Need.pdf".to_owned()))
    );
}

#[test]
fn deeply_nested_templates_do_not_overflow() {
    // As deep as the length limit allows (25 characters a level).
    let deep = "{{ if title }}".repeat(79) + "x" + &"{{ endif }}".repeat(79);
    assert_eq!(r(&deep, &paper()), "x");
    assert_eq!(check_template(&deep), Ok(()));
    // Deeper is longer than a template may be: refused, and rendered as nothing.
    let deeper = "{{ if title }}".repeat(20_000) + "x" + &"{{ endif }}".repeat(20_000);
    assert_eq!(r(&deeper, &paper()), "");
    assert_eq!(check_template(&deeper), Err(TemplateError::TooLong { chars: 500_001, max: MAX_TEMPLATE_CHARS }));
}
