//! The limits that keep a caller's template cheap: what is refused, with what to change, and that realistic
//! templates pass them.

use super::*;

/// The pattern of the review's probe: 50,000 copies of `a?` once compiled.
const HOSTILE: &str = "(((a?){50}){50}){20}";

/// A pattern within the size limit that makes a global replacement read to the end of the text after every match
/// (the `.*` alternatives come first, so they outlive each match of `a`).
const SLOW: &str = "(?:(?:.*){40}x|a)";

fn limit_of(template: &str) -> PatternLimit {
    match check_template(template) {
        Err(TemplateError::PatternLimit { limit, .. }) => limit,
        other => panic!("{template}: {other:?}"),
    }
}

#[test]
fn the_hostile_pattern_is_refused_saying_what_to_change() {
    for attribute in ["match", "replaceFrom"] {
        let template = format!(r#"{{{{ title {attribute}="{HOSTILE}" }}}}"#);
        let error = check_template(&template).expect_err("refused");
        assert!(matches!(error, TemplateError::PatternLimit { limit: PatternLimit::TooBig { .. }, at: 1, .. }));
        let message = error.to_string();
        assert!(message.contains(&format!("{attribute}=\"{HOSTILE}\" compiles to more than 4096 bytes")), "{message}");
        assert!(message.contains("use smaller or fewer"), "{message}");
    }
    // The probe's template: 33 copies. The first is reported, and the lenient parse renders each as nothing.
    let probe = format!(r#"{{{{ title replaceFrom="{HOSTILE}" }}}}"#).repeat(33);
    assert!(matches!(limit_of(&probe), PatternLimit::TooBig { attribute: "replaceFrom", .. }));
    let parsed = Template::parse(&probe);
    assert_eq!(parsed.problems().len(), 33);
    assert_eq!(r(&format!(r#"{{{{ title match="{HOSTILE}" }}}}"#), &paper()), "");
    assert_eq!(r(&format!(r#"{{{{ year replaceFrom="{HOSTILE}" }}}}"#), &paper()), "2017");
}

#[test]
fn too_many_patterns_are_refused() {
    let one = r#"{{ title match="\w+" }}"#;
    assert_eq!(check_template(&one.repeat(MAX_PATTERNS)), Ok(()));
    let limit = limit_of(&one.repeat(MAX_PATTERNS + 1));
    assert_eq!(limit, PatternLimit::TooMany { attribute: "match", number: 9, max: 8 });
    assert!(limit.to_string().contains("at most 8 `match` and `replaceFrom` patterns; use fewer"), "{limit}");
    // Past the count a pattern is not compiled: it matches nothing.
    let rendered = r(&format!("{}{{{{ year match=\"\\d+\" }}}}", one.repeat(MAX_PATTERNS)), &paper());
    assert_eq!(rendered, "Attention".repeat(MAX_PATTERNS));
}

#[test]
fn long_and_deep_patterns_are_refused() {
    let long = "a".repeat(MAX_PATTERN_CHARS + 1);
    assert_eq!(
        limit_of(&format!(r#"{{{{ title replaceFrom="{long}" }}}}"#)),
        PatternLimit::TooLong { attribute: "replaceFrom", chars: 201, max: 200 }
    );
    let deep = format!("{}a{}", "(".repeat(18), ")".repeat(18));
    let limit = limit_of(&format!(r#"{{{{ title match="{deep}" }}}}"#));
    assert!(matches!(limit, PatternLimit::TooDeep { max: 16, .. }), "{limit:?}");
    assert!(limit.to_string().contains("flatten it"), "{limit}");
    // A pattern that is merely wrong is still reported as such.
    assert!(check_template(r#"{{ title match="(" }}"#).expect_err("bad").to_string().contains("not a valid"));
}

#[test]
fn a_long_template_is_refused_whole() {
    let long = "x".repeat(MAX_TEMPLATE_CHARS + 1);
    assert_eq!(check_template(&long), Err(TemplateError::TooLong { chars: 2001, max: 2000 }));
    assert!(check_template(&long).expect_err("long").to_string().contains("at most 2000: shorten it"));
    assert_eq!(check_template(&"é".repeat(MAX_TEMPLATE_CHARS)), Ok(()));
    assert_eq!(render(&long, data(&paper()), None), "");
}

#[test]
fn realistic_templates_pass_the_limits() {
    let item = with(paper(), json!({"title": "Attention Is All You Need: A Study of Transformers (2nd ed.)"}));
    let cases = [
        (DEFAULT_TEMPLATE, "Vaswani and Shazeer - 2017 - Attention Is All You Need: A Study of Transformers (2nd ed.)"),
        (r#"{{ title replaceFrom="\s*\(.*?\)\s*" }}"#, "Attention Is All You Need: A Study of Transformers"),
        (
            r#"{{ title replaceFrom="[:;,!?]+" replaceTo="" regexOpts="g" case="snake" }}"#,
            "attention_is_all_you_need_a_study_of_transformers_(2nd_ed.)",
        ),
        (r#"{{ title match="^[^:]+" }}"#, "Attention Is All You Need"),
        (r#"{{ date replaceFrom="(\d{4})-(\d{2})-(\d{2})" replaceTo="$1$2$3" }}"#, "20170612"),
        (r#"{{ title replaceFrom="^(the|a|an)\s+" }}"#, "Attention Is All You Need: A Study of Transformers (2nd ed.)"),
        (r#"{{ title match="^(.{0,30})\b" }}"#, "Attention Is All You Need: A"),
        (r#"{{ extra match="\w{3,10}\d{4}\w+" }}"#, "vaswani2017attention"),
        (
            r#"{{ title replaceFrom="\s+" replaceTo="_" regexOpts="g" }}"#,
            "Attention_Is_All_You_Need:_A_Study_of_Transformers_(2nd_ed.)",
        ),
    ];
    for (template, expected) in cases {
        assert_eq!(check_template(template), Ok(()), "{template}");
        assert_eq!(r(template, &item), expected, "{template}");
    }
    // Eight patterns at once, on a 300-character title with global replacements, render within the budget.
    let long_title = "word ".repeat(60);
    let item = with(paper(), json!({ "title": long_title }));
    let eight = r#"{{ title replaceFrom="\s+" replaceTo="_" regexOpts="g" }}"#.repeat(4)
        + &r#"{{ title match="\w+" }}"#.repeat(4);
    let template = Template::checked(&eight).expect("within the limits");
    let rendered = template.render(data(&item), None).expect("within the budget");
    assert!(rendered.starts_with("word_word_"), "{rendered}");
}

#[test]
fn a_pattern_reads_the_first_thousand_characters() {
    let title = "a".repeat(MAX_PATTERN_INPUT_CHARS) + "zzz";
    let item = with(paper(), json!({ "title": title }));
    assert_eq!(r(r#"{{ title match="z+" }}"#, &item), "");
    assert_eq!(r(r#"{{ title match="a{3}$" }}"#, &item), "aaa");
}

#[test]
fn a_rendering_that_would_search_too_much_is_refused() {
    let item = with(paper(), json!({ "title": "a".repeat(MAX_PATTERN_INPUT_CHARS) }));
    let template = Template::checked(&format!(r#"{{{{ title replaceFrom="{SLOW}" regexOpts="g" }}}}"#))
        .expect("the pattern is within the size limit");
    let refused = template.render(data(&item), None);
    assert_eq!(refused, Err(RenderError::TooMuchSearching { max: MAX_SEARCHED_CHARS }));
    assert!(refused.expect_err("refused").to_string().contains("use `truncate` before `replaceFrom`"));
    assert_eq!(template.file_name(data(&item), "a.pdf", None), Err(RenderError::TooMuchSearching { max: 10_000 }));
    assert_eq!(
        build_renamed_filename(
            data(&item),
            "a.pdf",
            &format!(r#"{{{{ title replaceFrom="{SLOW}" regexOpts="g" }}}}"#),
            None
        ),
        None
    );
    // The same replacement on a title cut first is within the budget.
    let cut = format!(r#"{{{{ title truncate="100" replaceFrom="{SLOW}" replaceTo="b" regexOpts="g" }}}}"#);
    assert_eq!(r(&cut, &item), "b".repeat(100));
}

#[test]
fn a_template_is_parsed_once_for_many_items() {
    let before = parses_on_this_thread();
    let template = Template::checked(r#"{{ title replaceFrom="\s+" replaceTo="-" regexOpts="g" }}"#).expect("good");
    let names: Vec<Option<String>> =
        (0..5).map(|_| template.file_name(data(&paper()), "x.pdf", None).expect("renders")).collect();
    assert_eq!(parses_on_this_thread() - before, 1);
    assert!(names.iter().all(|n| n.as_deref() == Some("Attention-Is-All-You-Need.pdf")), "{names:?}");
}

/// The worst the limits admit, measured: `cargo test -p zotero-mcp-core --release --lib worst_admitted -- --ignored
/// --nocapture`, with `FIGURES_CASE=<number>` to run one case alone (under `/usr/bin/time -v` for its CPU time
/// and peak memory). Prints the time to parse each template once and render it for 25 items whose titles are
/// 1,000 characters.
#[test]
#[ignore = "prints figures; run by hand"]
fn worst_admitted_template_figures() {
    let item = with(paper(), json!({ "title": "a".repeat(MAX_PATTERN_INPUT_CHARS), "extra": "a".repeat(5000) }));
    let slow_g = format!(r#"{{{{ title replaceFrom="{SLOW}" replaceTo="b" regexOpts="g" }}}}"#);
    let slow_match = format!(r#"{{{{ extra match="{SLOW}" }}}}"#);
    // Global replacements that stay inside the budget: 8 of them on 40 characters each.
    let slow_g_cut = format!(r#"{{{{ title truncate="40" replaceFrom="{SLOW}" replaceTo="b" regexOpts="g" }}}}"#);
    let cases = [
        ("8 x slow global replacement (refused by the budget)", slow_g.repeat(MAX_PATTERNS)),
        ("8 x slow global replacement on 40 characters", slow_g_cut.repeat(MAX_PATTERNS)),
        ("8 x slow match over 1,000 characters", slow_match.repeat(MAX_PATTERNS)),
        ("the probe: 33 x (((a?){50}){50}){20}", format!(r#"{{{{ title replaceFrom="{HOSTILE}" }}}}"#).repeat(33)),
    ];
    let only = std::env::var("FIGURES_CASE").ok();
    for (number, (name, template)) in cases.into_iter().enumerate() {
        if only.as_ref().is_some_and(|only| *only != number.to_string()) {
            continue;
        }
        let started = std::time::Instant::now();
        let parsed = Template::parse(&template);
        let outcomes: Vec<bool> = (0..25).map(|_| parsed.render(data(&item), None).is_ok()).collect();
        let rendered = outcomes.iter().filter(|ok| **ok).count();
        println!("{name}: {:?} for 25 items ({rendered} rendered)", started.elapsed());
    }
}
