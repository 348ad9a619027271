//! LaTeX into Unicode, dates, pages and names.

use super::*;

#[test]
fn latex_accents_and_symbols() {
    let cases = [
        (r#"{\"o}"#, "ö"),
        (r#"\"{o}"#, "ö"),
        (r#"\"o"#, "ö"),
        (r"\'e", "é"),
        (r"\`a", "à"),
        (r"\^{o}", "ô"),
        (r"\~n", "ñ"),
        (r"\c{c}", "ç"),
        (r"\c c", "ç"),
        (r"\v{s}", "š"),
        (r"\v{Z}", "Ž"),
        (r"\H{o}", "ő"),
        (r"\k{a}", "ą"),
        (r"\={a}", "ā"),
        (r"\.{Z}", "Ż"),
        (r"\u{g}", "ğ"),
        (r"\r{u}", "ů"),
        (r"\'{\i}", "í"),
        (r"\'\i", "í"),
        (r"\v{q}", "q\u{30c}"),
        (r#"\"{}"#, "\u{308}"),
        (r"Stra\ss e", "Straße"),
        (r"{\o}re", "øre"),
        (r#"\AA{}ngstr\"{o}m"#, "Ångström"),
        (r"{\ae}{\OE}", "æŒ"),
        (r"\L{}\'od\'z", "Łódź"),
        (r"1--2, a---b", "1–2, a—b"),
        (r"A~B", "A B"),
        (r"\& \% \_ \$ \# \{\}", "& % _ $ # {}"),
        (r"{DNA} and {RNA}", "DNA and RNA"),
        (r"\textit{E. coli} \emph{in} \textbf{vivo}", "E. coli in vivo"),
        (r"\textsuperscript{2}", "2"),
        (r"$O(n \log n)$ time", "$O(n \\log n)$ time"),
        (r"costs \$5", "costs $5"),
        ("``quoted''", "“quoted”"),
        (r"\href{https://x.org}{the site}", "the site"),
        (r"\LaTeX\ and \TeX{}", "LaTeX and TeX"),
        (r"a\\b", "a b"),
        ("  spread \n\t out  ", "spread out"),
        (r"\unknown{kept}", "kept"),
        (r"end\", "end"),
        (r#"\"{\"{o}}"#, "ö"),
    ];
    for (raw, expected) in cases {
        assert_eq!(to_unicode(raw), expected, "{raw}");
    }
    assert_eq!(verbatim(r"https://x.org/a\_b{c}\%20"), "https://x.org/a_bc%20");
}

#[test]
fn dates_from_year_month_and_date() {
    let date_of = |fields: &str| only_item(&format!("@article{{k, {fields}}}")).get("date").cloned();
    assert_eq!(date_of("year = 2020, month = {May}"), Some(json!("2020-05")));
    assert_eq!(date_of("year = 2020, month = 5, day = 7"), Some(json!("2020-05-07")));
    assert_eq!(date_of("year = 2020, month = {Sept.}"), Some(json!("2020-09")));
    assert_eq!(date_of("year = 2020, month = {Spring}"), Some(json!("Spring 2020")));
    assert_eq!(date_of("year = 2020, month = jul # {--} # aug"), Some(json!("July–August 2020")));
    assert_eq!(date_of("year = {in press}"), Some(json!("in press")));
    assert_eq!(date_of("date = {2019-03}"), Some(json!("2019-03")));
    assert_eq!(date_of("date = {2019-03-01/2019-03-05}"), Some(json!("2019-03-01")));
    assert_eq!(date_of("date = {2019-03-01/2019-03-05}, year = 1900"), Some(json!("2019-03-01")));
    assert_eq!(date_of("date = {ca. 1850}"), Some(json!("ca. 1850")));
    assert_eq!(date_of("month = may"), None);
}

#[test]
fn pages_use_a_plain_hyphen() {
    assert_eq!(pages("12–34"), "12-34");
    assert_eq!(pages("12 - 34"), "12-34");
    assert_eq!(pages("12-34, 40—42"), "12-34, 40-42");
    assert_eq!(pages("e12345"), "e12345");
}

#[test]
fn names_in_every_form() {
    let person = |first: &str, last: &str| Name::Person { first: first.to_owned(), last: last.to_owned() };
    assert_eq!(names("Donald E. Knuth"), [person("Donald E.", "Knuth")]);
    assert_eq!(names("Knuth, Donald E."), [person("Donald E.", "Knuth")]);
    assert_eq!(names("Ludwig van Beethoven"), [person("Ludwig", "van Beethoven")]);
    assert_eq!(names("Jean de La Fontaine"), [person("Jean", "de La Fontaine")]);
    assert_eq!(names("van Beethoven, Ludwig"), [person("Ludwig", "van Beethoven")]);
    assert_eq!(names("King, Jr, Martin Luther"), [person("Martin Luther, Jr", "King")]);
    assert_eq!(names("{World Health Organization}"), [Name::Single("World Health Organization".to_owned())]);
    assert_eq!(names("{Barnes and Noble}"), [Name::Single("Barnes and Noble".to_owned())]);
    assert_eq!(names("Aristotle"), [Name::Single("Aristotle".to_owned())]);
    assert_eq!(names("D.~E.~Knuth"), [person("D. E.", "Knuth")]);
    assert_eq!(names("{\\\"O}zt{\\\"u}rk, Ay{\\c{s}}e"), [person("Ayşe", "Öztürk")]);
    assert_eq!(names("Jane Doe and others"), [person("Jane", "Doe")]);
    assert_eq!(
        names("A. Smith AND B. Jones\nand\tC. Brown"),
        [person("A.", "Smith"), person("B.", "Jones"), person("C.", "Brown")]
    );
    assert_eq!(names("Alexandra Anderson"), [person("Alexandra", "Anderson")]);
    assert_eq!(names("Doe, "), [Name::Single("Doe".to_owned())]);
    assert_eq!(names(" and and "), []);
}
