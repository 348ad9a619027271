//! The attributes every variable takes: `case`, `prefix` and `suffix`, `match`, `replaceFrom`/`replaceTo` and
//! `start`.

use super::*;
use crate::attachment::filename::patterns::js_replacement;

#[test]
fn title_case_is_unicode_aware() {
    let item = with(paper(), json!({"title": "école normale d'été: l'œuvre 3d über-große"}));
    assert_eq!(r(r#"{{ title case="title" }}"#, &item), "École Normale D'été: L'œuvre 3d Über-Große");
}

#[test]
fn other_cases() {
    let item = with(paper(), json!({"title": "the BERT model - a study"}));
    assert_eq!(r(r#"{{ title case="sentence" }}"#, &item), "The BERT model - a study");
    assert_eq!(r(r#"{{ title case="hyphen" }}"#, &item), "the-bert-model-a-study");
    assert_eq!(r(r#"{{ title case="snake" }}"#, &item), "the_bert_model_-_a_study");
    assert_eq!(r(r#"{{ title case="camel" }}"#, &item), "theBertModelAStudy");
    assert_eq!(r(r#"{{ title case="pascal" }}"#, &item), "TheBertModelAStudy");
    assert_eq!(r(r#"{{ title case="lower" }}"#, &item), "the bert model - a study");
    let item = with(paper(), json!({"title": "Été à Paris"}));
    assert_eq!(r(r#"{{ title case="camel" }}"#, &item), "étéÀParis");
}

#[test]
fn case_applies_after_affixes_as_in_zotero() {
    assert_eq!(r(r#"{{ year prefix="y" case="upper" }}"#, &paper()), "Y2017");
}

#[test]
fn affixes_are_not_doubled() {
    let item = authors(&["Li", "Zhang", "Ye"]);
    assert_eq!(r(r#"{{ firstCreator suffix="." }}"#, &item), "Li et al.");
    assert_eq!(r(r#"{{ year prefix="20" }}"#, &paper()), "2017");
    assert_eq!(r(r#"{{ year prefix="(" suffix=")" }}"#, &paper()), "(2017)");
}

#[test]
fn match_keeps_the_first_match_and_nothing_else() {
    assert_eq!(r(r#"{{ title match="\w+" }}"#, &paper()), "Attention");
    assert_eq!(r(r#"{{ title match="^a\w+" }}"#, &paper()), "Attention");
    assert_eq!(r(r#"{{ title match="^a\w+" regexOpts="" }}"#, &paper()), "");
    assert_eq!(r(r#"{{ title match="zzz" suffix=" - " }}"#, &paper()), "");
    assert_eq!(r(r#"{{ title match="(" }}"#, &paper()), "");
    assert_eq!(r(r#"{{ date match="\d{4}-\d{2}" suffix="!" }}"#, &paper()), "2017-06");
}

#[test]
fn replace_from_to() {
    assert_eq!(r(r#"{{ title replaceFrom="\s+" replaceTo="_" }}"#, &paper()), "Attention_Is All You Need");
    assert_eq!(
        r(r#"{{ title replaceFrom="\s+" replaceTo="_" regexOpts="g" }}"#, &paper()),
        "Attention_Is_All_You_Need"
    );
    assert_eq!(r(r#"{{ title replaceFrom="(\w+) (\w+)" replaceTo="$2 $1" }}"#, &paper()), "Is Attention All You Need");
    assert_eq!(r(r#"{{ title replaceFrom="all" replaceTo="[$&]" }}"#, &paper()), "Attention Is [All] You Need");
    assert_eq!(r(r#"{{ title replaceFrom="^" replaceTo="$$" }}"#, &paper()), "$Attention Is All You Need");
    assert_eq!(r(r#"{{ title replaceFrom=".*" replaceTo="" suffix="x" }}"#, &paper()), "");
}

#[test]
fn start_skips_characters_of_plain_values() {
    assert_eq!(r(r#"{{ year start="2" }}"#, &paper()), "17");
}

#[test]
fn js_replacements_translate() {
    assert_eq!(js_replacement("$1-$2", 3), "${1}-${2}");
    assert_eq!(js_replacement("$12", 3), "${1}2");
    assert_eq!(js_replacement("$12", 13), "${12}");
    assert_eq!(js_replacement("$<y>/$&/$$/$x/$9", 2), "${y}/${0}/$$/$$x/$$9");
}
