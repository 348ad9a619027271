//! `check_template`: good templates pass, and each problem of a bad one is reported once, where it is, with how
//! to fix it.

use super::*;

#[test]
fn good_templates_pass() {
    for t in [
        DEFAULT_TEMPLATE,
        "{{ if authors }}{{ authors max=\"2\" join=\" & \" }}{{ elseif editors }}{{ editors }}{{ else }}anon{{ endif }}",
        r#"{{ title match="\w+" regexOpts="i" case="title" }}"#,
        "{{ if {{ authorsCount > 2 }} }}many{{ endif }}",
        "{{ itemType localize=\"true\" }}",
        "plain text",
    ] {
        assert_eq!(check_template(t), Ok(()), "{t}");
    }
}

#[test]
fn bad_templates_say_what_to_fix() {
    let cases = [
        ("", "empty"),
        ("{{ if title }}x", "add `{{ endif }}`"),
        ("x{{ endif }}", "no `{{ if … }}` before it"),
        ("{{ else }}", "no `{{ if … }}`"),
        ("{{ if a }}1{{ else }}2{{ elseif b }}3{{ endif }}", "after the `{{ else }}`"),
        ("{{ if a }}1{{ else }}2{{ else }}3{{ endif }}", "after the `{{ else }}`"),
        ("{{ title", "never closed"),
        ("title }}", "closes nothing"),
        ("{{ title case=\"shout\" }}", "is not a case"),
        ("{{ title truncate=\"ten\" }}", "whole number"),
        ("{{ title sufix=\" - \" }}", "has no attribute `sufix`"),
        ("{{ title match=\"(\" }}", "not a valid regular expression"),
        ("{{ title regexOpts=\"q\" }}", "not a regular-expression flag"),
        ("{{ title suffix= - }}", "is not an attribute"),
        ("{{ 2title }}", "not a variable"),
        ("{{ }}", "empty"),
        ("{{ if a }}{{ else if x }}{{ endif }}", "elseif"),
        ("{{ authors name=\"nick\" }}", "not a name style"),
    ];
    for (template, needle) in cases {
        match check_template(template) {
            Err(e) => assert!(e.to_string().contains(needle), "{template}: {e}"),
            Ok(()) => panic!("{template} passed"),
        }
    }
}

#[test]
fn each_problem_is_reported_once() {
    let template = Template::parse(r#"{{ title name="nick" }}{{ authors start="x" }}{{ title match="(" }}"#);
    let messages: Vec<String> = template.problems().iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert!(messages[0].contains("`title` has no attribute `name`"), "{}", messages[0]);
    assert!(messages[1].contains(r#"start="x" must be a whole number"#), "{}", messages[1]);
    assert!(messages[2].contains(r#"match="(" is not a valid regular expression ("#), "{}", messages[2]);
}

#[test]
fn error_positions_count_characters() {
    let e = check_template("é{{ title }}{{ endif }}").expect_err("stray endif");
    assert_eq!(e, TemplateError::Orphan { tag: "{{ endif }}".into(), at: 13 });
    let e = check_template("ab }}").expect_err("stray close");
    assert_eq!(e, TemplateError::StrayClose { at: 4 });
}
