//! The note writer (`format::note_html`: Markdown to note HTML through a whitelisting renderer) and the note
//! reader (`zotero_mcp_core::html_text::html_to_text`, re-exported as `format::note_html::html_to_text`).
//!
//! Input: the first line is a note title, the rest its Markdown body; the whole input is also read as stored
//! note HTML (anything an editor or another API client may have written).
//!
//! What must hold for the note HTML made from Markdown (`raw = false`):
//! - it is Zotero's wrapper around a fragment, and `note_html(None, body)` is exactly the wrapper around
//!   `markdown_to_html(body)`;
//! - every `<` opens a whitelisted tag (p, h1–h6, em, strong, s, code, pre, blockquote, ul, ol, li, table parts,
//!   hr, br, a, sup, sub, and the wrapper div), closed by `>`; the only attributes are `href` on `a` with an
//!   http/https/zotero URL (entities decoded; so never `javascript:`, `data:` …), `start` on `ol` with digits,
//!   and the wrapper's `data-schema-version="9"`: no `on…` event handler, no `style`, no `src`;
//! - tags are balanced (void elements aside) and properly nested;
//! - all text is escaped: outside tags there is no `>`, `"` or `'`, and every `&` starts `&amp;`, `&lt;`,
//!   `&gt;`, `&quot;` or `&#39;`; so `<script` and `javascript:` can only be inert text;
//! - the title is escaped in raw mode too.
//!
//! What must hold for caller HTML (`raw = true`, `format::note_sanitize`):
//! - the body is the sanitizer's output, after the escaped title heading;
//! - every `<` opens or closes a tag of Zotero's notes (the grammar above plus span, img, b, i, u, strike, del,
//!   ins, caption, tfoot), balanced, void elements (hr, br, img) unclosed;
//! - attributes are `name="value"` from a short list, never an `on…` handler, `style` or `src`; an `href` is
//!   an http/https/zotero URL once entities are decoded;
//! - text has no `<` or `>`, and every `&` starts a well-formed character reference;
//! - sanitizing the output again changes nothing.
//!
//! For `html_to_text` on anything: no panic; the text is trimmed, has no trailing spaces on a line and no more
//! than one blank line in a row; input without `<` or `&` reads as its words joined by single spaces.

#![no_main]

use libfuzzer_sys::fuzz_target;
use zotero_mcp_core::html_text::{collapse_whitespace, decode_entities, html_to_text, note_title, title_line};
use zotero_mcp_server::format::note_html::{append_fragment, markdown_to_html, note_fragment, note_html};
use zotero_mcp_server::format::note_sanitize::sanitize_note_html;

const WRAPPER_OPEN: &str = "<div data-schema-version=\"9\">";
const WRAPPER_CLOSE: &str = "</div>";
const TAGS: &[&str] = &[
    "div", "p", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "s", "code", "pre", "blockquote", "ul", "ol", "li",
    "table", "thead", "tbody", "tr", "th", "td", "hr", "br", "a", "sup", "sub",
];
const VOID: &[&str] = &["hr", "br"];
/// What caller HTML may keep besides [`TAGS`].
const RAW_TAGS: &[&str] = &["span", "img", "b", "i", "u", "strike", "del", "ins", "caption", "tfoot"];

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let (title, body) = input.split_once('\n').unwrap_or((input, ""));

    let html = note_html(Some(title), body, false);
    let inner = html
        .strip_prefix(WRAPPER_OPEN)
        .and_then(|h| h.strip_suffix(WRAPPER_CLOSE))
        .unwrap_or_else(|| panic!("not in Zotero's wrapper: {html:?}"));
    assert_eq!(inner, note_fragment(Some(title), body, false));
    let untitled = note_html(None, body, false);
    assert_eq!(untitled, format!("{WRAPPER_OPEN}{}{WRAPPER_CLOSE}", markdown_to_html(body)));
    zotero_mcp_fuzz::debug(|| format!("note {html:?}"));
    check_sanitized(&html, input);
    check_sanitized(&note_html(None, input, false), input);

    // Raw mode: the escaped title, then the body through the sanitizer.
    let sanitized = sanitize_note_html(body);
    let raw = note_html(Some(title), body, true);
    assert!(raw.ends_with(&sanitized));
    let head = &raw[..raw.len() - sanitized.len()];
    if title.trim().is_empty() {
        assert_eq!(head, "");
    } else {
        let escaped = head.strip_prefix("<h1>").and_then(|h| h.strip_suffix("</h1>\n")).expect("title heading");
        check_text(escaped, head);
    }
    zotero_mcp_fuzz::debug(|| format!("raw {sanitized:?}"));
    check_raw(&sanitized, body);
    assert_eq!(sanitize_note_html(&sanitized), sanitized, "sanitizing twice changed {body:?}");
    check_raw(&sanitize_note_html(input), input);

    // Appending keeps what is there and adds the fragment once.
    let appended = append_fragment(input, inner);
    assert!(appended.contains(inner));
    let kept = input.trim_end();
    let kept = kept.strip_suffix(WRAPPER_CLOSE).unwrap_or(kept);
    assert!(appended.starts_with(kept), "append_fragment lost the existing note");

    // Reading notes back: the sanitized note, and whatever HTML may be stored.
    for source in [html.as_str(), input] {
        let text = html_to_text(source);
        check_text_output(&text, source);
        let title = note_title(source);
        assert_eq!(title, title_line(&text));
    }
    if !input.contains(['<', '&']) {
        assert_eq!(html_to_text(input), collapse_whitespace(input), "plain text must read as its words");
    }
    let _ = decode_entities(input);
});

/// The invariants of note HTML made from Markdown.
fn check_sanitized(html: &str, input: &str) {
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<script"), "<script in {html:?} from {input:?}");
    let mut open: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        check_text(&rest[..at], html);
        let after = &rest[at + 1..];
        let end = after.find('>').unwrap_or_else(|| panic!("unclosed tag in {html:?} from {input:?}"));
        let tag = &after[..end];
        let (closing, tag) = match tag.strip_prefix('/') {
            Some(t) => (true, t),
            None => (false, tag),
        };
        let name_end = tag.find(' ').unwrap_or(tag.len());
        let (name, attributes) = (&tag[..name_end], &tag[name_end..]);
        assert!(TAGS.contains(&name), "tag <{tag}> outside the grammar in {html:?} from {input:?}");
        if closing {
            assert!(attributes.is_empty(), "attributes on a closing tag: {tag:?}");
            let top = open.pop().unwrap_or_else(|| panic!("</{name}> closes nothing in {html:?} from {input:?}"));
            assert_eq!(top, name, "</{name}> closes <{top}> in {html:?} from {input:?}");
        } else {
            check_attributes(name, attributes, html, input);
            if !VOID.contains(&name) {
                open.push(name.to_owned());
            }
        }
        rest = &after[end + 1..];
    }
    check_text(rest, html);
    assert!(open.is_empty(), "unclosed {open:?} in {html:?} from {input:?}");
}

fn check_attributes(name: &str, attributes: &str, html: &str, input: &str) {
    if attributes.is_empty() {
        return;
    }
    let lower = attributes.to_ascii_lowercase();
    assert!(!lower.contains(" on"), "an event handler attribute in <{name}{attributes}> from {input:?}");
    match name {
        "div" => assert_eq!(attributes, " data-schema-version=\"9\"", "{html:?}"),
        "ol" => {
            let digits = attributes.strip_prefix(" start=\"").and_then(|a| a.strip_suffix('"')).expect("start");
            assert!(!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()), "start={digits:?}");
        }
        "a" => {
            let href = attributes
                .strip_prefix(" href=\"")
                .and_then(|a| a.strip_suffix('"'))
                .unwrap_or_else(|| panic!("<a{attributes}> from {input:?}"));
            check_text(href, html);
            // What a browser would follow: the entity-decoded value, with the whitespace and controls it strips.
            let followed: String = decode_entities(href).chars().filter(|c| !c.is_whitespace() && !c.is_control()).collect();
            let scheme = followed.split(':').next().unwrap_or("").to_ascii_lowercase();
            assert!(
                followed.contains(':') && matches!(scheme.as_str(), "http" | "https" | "zotero"),
                "link to {followed:?} in {html:?} from {input:?}"
            );
            let url = url::Url::parse(&followed);
            assert!(
                url.as_ref().map_or(true, |u| matches!(u.scheme(), "http" | "https" | "zotero")),
                "link parses as {:?} from {input:?}",
                url.map(|u| u.scheme().to_owned())
            );
        }
        _ => panic!("attributes {attributes:?} on <{name}> in {html:?} from {input:?}"),
    }
}

/// The invariants of sanitized caller HTML.
fn check_raw(html: &str, input: &str) {
    assert!(!html.to_ascii_lowercase().contains("<script"), "<script in {html:?} from {input:?}");
    let mut open: Vec<&str> = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        check_raw_text(&rest[..at], html);
        let after = &rest[at + 1..];
        let end = after.find('>').unwrap_or_else(|| panic!("unclosed tag in {html:?} from {input:?}"));
        let tag = &after[..end];
        rest = &after[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let top = open.pop().unwrap_or_else(|| panic!("</{name}> closes nothing in {html:?} from {input:?}"));
            assert_eq!(top, name, "</{name}> closes <{top}> in {html:?} from {input:?}");
            continue;
        }
        let name_end = tag.find(' ').unwrap_or(tag.len());
        let name = &tag[..name_end];
        assert!(TAGS.contains(&name) || RAW_TAGS.contains(&name), "tag <{tag}> in {html:?} from {input:?}");
        let mut attributes = &tag[name_end..];
        while !attributes.is_empty() {
            let (attribute, value) = attributes
                .strip_prefix(' ')
                .and_then(|a| a.split_once("=\""))
                .unwrap_or_else(|| panic!("attributes {attributes:?} in {html:?} from {input:?}"));
            let value_end = value.find('"').unwrap_or_else(|| panic!("unquoted value in <{tag}> from {input:?}"));
            let (value, after_value) = (&value[..value_end], &value[value_end + 1..]);
            check_text_references(value, html);
            assert!(!value.contains(['<', '>', '\'']), "unescaped value {value:?} in {html:?}");
            assert!(
                !attribute.starts_with("on") && !matches!(attribute, "style" | "src" | "srcset" | "action"),
                "{attribute} on <{name}> in {html:?} from {input:?}"
            );
            if attribute == "href" {
                let followed: String =
                    decode_entities(value).chars().filter(|c| !c.is_whitespace() && !c.is_control()).collect();
                let scheme = followed.split(':').next().unwrap_or("").to_ascii_lowercase();
                assert!(
                    followed.contains(':') && matches!(scheme.as_str(), "http" | "https" | "zotero"),
                    "link to {followed:?} in {html:?} from {input:?}"
                );
            }
            attributes = after_value;
        }
        if !matches!(name, "hr" | "br" | "img") {
            open.push(name);
        }
    }
    check_raw_text(rest, html);
    assert!(open.is_empty(), "unclosed {open:?} in {html:?} from {input:?}");
}

/// Text of sanitized HTML: no `<` or `>`, and every `&` a well-formed reference.
fn check_raw_text(text: &str, html: &str) {
    assert!(!text.contains(['<', '>']), "unescaped markup character in text {text:?} of {html:?}");
    check_text_references(text, html);
}

fn check_text_references(text: &str, html: &str) {
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        rest = &rest[at + 1..];
        let end = rest.find(';').unwrap_or_else(|| panic!("a bare & in {text:?} of {html:?}"));
        let name = &rest[..end];
        let well_formed = match name.strip_prefix('#') {
            Some(n) => match n.strip_prefix(['x', 'X']) {
                Some(hex) => !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()),
                None => !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
            },
            None => name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()) && name.bytes().all(|b| b.is_ascii_alphanumeric()),
        };
        assert!(well_formed, "&{name}; in {text:?} of {html:?}");
        rest = &rest[end + 1..];
    }
}

/// Escaped text: no markup characters but in their entity forms.
fn check_text(text: &str, html: &str) {
    assert!(!text.contains(['<', '>', '"', '\'']), "unescaped markup character in text {text:?} of {html:?}");
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        rest = &rest[at..];
        let entity = ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].into_iter().find(|e| rest.starts_with(e));
        let entity = entity.unwrap_or_else(|| panic!("a bare & in text {text:?} of {html:?}"));
        rest = &rest[entity.len()..];
    }
}

fn check_text_output(text: &str, source: &str) {
    assert_eq!(text, text.trim(), "untrimmed text from {source:?}");
    assert!(!text.contains("\n\n\n"), "two blank lines in a row in {text:?} from {source:?}");
    for line in text.lines() {
        assert_eq!(line, line.trim_end(), "trailing whitespace in line {line:?} from {source:?}");
    }
}
