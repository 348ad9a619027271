//! HTML a caller hands in for a note (`zotero_notes` with `raw=true`), cut down to what Zotero's note editor
//! writes and nothing that runs.
//!
//! Notes are rendered by Zotero Desktop, iOS and the web library, so HTML stored as given would let whoever can
//! prompt the model put `<script>`, `onerror=` or `javascript:` links into them. Every tag is rebuilt here
//! from a whitelist: its name, and only the attributes Zotero's own notes carry (links to http/https/zotero
//! URLs, list starts, table spans, image sizes, the editor's `data-` attributes for citations, annotations and
//! embedded images), each value re-escaped. Other tags are dropped and keep their text; `script`, `style` and
//! the other elements whose content is not text lose their content too. Comments and declarations go. In text,
//! `<`, `>` and a bare `&` are escaped; quotes and well-formed character references (`&nbsp;`) are inert there. The output is balanced: a
//! closing tag that closes nothing is dropped, and what is still open at the end is closed.

use super::text::push_escaped_html;

/// URL schemes a link may keep. Anything else keeps its text but loses the link.
const ALLOWED_SCHEMES: &[&str] = &["http", "https", "zotero"];

/// The elements a note may contain (Zotero's note-editor schema, without the ones that carry styles).
const TAGS: &[&str] = &[
    "div",
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "table",
    "caption",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "th",
    "td",
    "hr",
    "br",
    "a",
    "span",
    "img",
    "strong",
    "b",
    "em",
    "i",
    "u",
    "s",
    "strike",
    "del",
    "ins",
    "sub",
    "sup",
    "code",
];

/// Elements without content or a closing tag.
const VOID: &[&str] = &["hr", "br", "img"];

/// Elements whose content is code, styles or foreign markup rather than text: dropped with everything inside.
const DROPPED_WITH_CONTENT: &[&str] = &[
    "script", "style", "iframe", "object", "embed", "template", "noscript", "noembed", "noframes", "textarea", "title",
    "svg", "math", "xmp", "select", "head",
];

/// The link target to keep, if its scheme is allowed: trimmed, without control characters or whitespace.
pub(crate) fn allowed_href(url: &str) -> Option<&str> {
    let url = url.trim();
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return None;
    }
    let (scheme, _) = url.split_once(':')?;
    ALLOWED_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)).then_some(url)
}

/// Caller HTML as note HTML: whitelisted tags and attributes only, text escaped, tags balanced.
pub fn sanitize_note_html(html: &str) -> String {
    let mut out = String::with_capacity(html.len() + html.len() / 8);
    let mut open: Vec<&'static str> = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        push_text(&mut out, &rest[..at]);
        rest = &rest[at..];
        rest = match markup(rest, &mut out, &mut open) {
            Some(after) => after,
            None => {
                out.push_str("&lt;");
                &rest[1..]
            }
        };
    }
    push_text(&mut out, rest);
    while let Some(name) = open.pop() {
        push_close(&mut out, name);
    }
    out
}

/// The markup at the start of `html` (which starts with `<`): writes what of it is kept and returns what follows
/// it, or `None` when the `<` starts no markup and is text. Comments, declarations and processing instructions
/// are dropped; an unterminated one takes the rest.
fn markup<'a>(html: &'a str, out: &mut String, open: &mut Vec<&'static str>) -> Option<&'a str> {
    let bytes = html.as_bytes();
    match bytes.get(1) {
        Some(b'!') if html.starts_with("<!--") => Some(html[4..].find("-->").map_or("", |end| &html[4 + end + 3..])),
        Some(b'!' | b'?') => Some(html.find('>').map_or("", |end| &html[end + 1..])),
        Some(b'/') if bytes.get(2).is_some_and(u8::is_ascii_alphabetic) => {
            let end = html.find('>')?;
            close(out, open, tag_name(&html[2..]));
            Some(&html[end + 1..])
        }
        Some(b) if b.is_ascii_alphabetic() => open_tag(html, out, open),
        _ => None,
    }
}

/// Bytes of `text` before the first byte `stop` accepts (all of it when none does). Every caller stops at ASCII
/// bytes, which never occur inside a multi-byte character, so the result is a character boundary. One scan
/// over bytes for every stop set: a `str::find` per predicate would link a character searcher each.
fn until(text: &str, stop: fn(u8) -> bool) -> usize {
    text.bytes().position(stop).unwrap_or(text.len())
}

/// Bytes of ASCII whitespace at the start of `text`.
fn spaces(text: &str) -> usize {
    until(text, |b| !b.is_ascii_whitespace())
}

/// The tag name at the start of `text`: up to whitespace, `/` or `>`.
fn tag_name(text: &str) -> &str {
    &text[..until(text, |b| b.is_ascii_whitespace() || b == b'/' || b == b'>')]
}

/// An opening tag at the start of `html`: written when its element is allowed (with the attributes it may
/// keep), its content skipped when it is one of [`DROPPED_WITH_CONTENT`]; `None` when it never ends (then its
/// `<` is text and nothing of it stays written). Names compare without regard to ASCII case and are written in
/// lowercase.
fn open_tag<'a>(html: &'a str, out: &mut String, open: &mut Vec<&'static str>) -> Option<&'a str> {
    let name = tag_name(&html[1..]);
    let kept = TAGS.iter().copied().find(|t| t.eq_ignore_ascii_case(name));
    let written = out.len();
    if let Some(tag) = kept {
        out.push('<');
        out.push_str(tag);
    }
    let Some((len, self_closing)) = attributes(html, 1 + name.len(), kept, out) else {
        out.truncate(written);
        return None;
    };
    let after = &html[len..];
    if DROPPED_WITH_CONTENT.iter().any(|t| t.eq_ignore_ascii_case(name)) {
        return Some(if self_closing { after } else { skip_element(after, name) });
    }
    if let Some(tag) = kept {
        out.push('>');
        if !VOID.contains(&tag) {
            open.push(tag);
        }
    }
    Some(after)
}

/// Reads an opening tag's attributes from byte `at` of `html` to its `>`, writing those that `tag` (when it is
/// kept) may carry, each value entity-decoded, checked by [`keep_attribute`] and escaped again. Of two
/// same-named attributes the first counts, as in browsers. Returns the tag's length (from `<` to `>`
/// inclusive) and whether it ended with `/>`, or `None` when it never ends.
fn attributes(html: &str, mut at: usize, tag: Option<&str>, out: &mut String) -> Option<(usize, bool)> {
    let mut seen: Vec<&str> = Vec::new();
    let mut self_closing = false;
    loop {
        at += spaces(html.get(at..)?);
        let rest = &html[at..];
        match rest.as_bytes().first()? {
            b'>' => return Some((at + 1, self_closing)),
            b'/' => {
                self_closing = rest.as_bytes().get(1) == Some(&b'>');
                at += 1;
                continue;
            }
            _ => {}
        }
        // A name runs to whitespace, `/`, `>`, `=` or the end; a `=` where a name should start is one of its own.
        let name_len = match until(rest, |b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>' | b'=')) {
            0 => 1,
            n => n,
        };
        let name = &rest[..name_len];
        at += name_len;
        let gap = spaces(&html[at..]);
        let mut raw = None;
        if html[at + gap..].starts_with('=') {
            at += gap + 1;
            at += spaces(&html[at..]);
            let rest = &html[at..];
            raw = Some(match rest.as_bytes().first()? {
                quote @ (b'"' | b'\'') => {
                    let end = rest[1..].find(*quote as char)?;
                    at += end + 2;
                    &rest[1..=end]
                }
                _ => {
                    let end = until(rest, |b| b.is_ascii_whitespace() || b == b'>');
                    at += end;
                    &rest[..end]
                }
            });
        }
        if seen.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            continue;
        }
        seen.push(name);
        let Some(tag) = tag else { continue };
        let name = name.to_ascii_lowercase();
        let value = raw.map(zotero_mcp_core::html_text::decode_entities).unwrap_or_default();
        if let Some(value) = keep_attribute(tag, &name, &value) {
            out.push(' ');
            out.push_str(&name);
            out.push_str("=\"");
            push_escaped_html(out, value);
            out.push('"');
        }
    }
}

/// Skips an element's content and its closing tag; everything when it is never closed.
fn skip_element<'a>(html: &'a str, name: &str) -> &'a str {
    let mut at = 0;
    while let Some(found) = html[at..].find("</") {
        let start = at + found;
        let candidate = &html[start + 2..];
        let matches = candidate.get(..name.len()).is_some_and(|n| n.eq_ignore_ascii_case(name))
            && candidate.as_bytes().get(name.len()).is_some_and(|&b| b.is_ascii_whitespace() || b == b'>' || b == b'/');
        if matches {
            return html[start..].find('>').map_or("", |end| &html[start + end + 1..]);
        }
        at = start + 2;
    }
    ""
}

/// The value to keep for an attribute, if the element may carry it and the value is of its kind.
fn keep_attribute<'a>(tag: &str, attribute: &str, value: &'a str) -> Option<&'a str> {
    let digits = |v: &'a str| (!v.is_empty() && v.len() <= 9 && v.bytes().all(|b| b.is_ascii_digit())).then_some(v);
    match (tag, attribute) {
        ("a", "href") => allowed_href(value),
        ("a", "title") | ("img", "alt") => Some(value),
        ("ol", "start") | ("td" | "th", "colspan" | "rowspan") | ("img", "width" | "height") => digits(value),
        ("div", "data-schema-version") => digits(value),
        // Zotero's editor keeps citations, annotations and embedded images in these; they are data, never run.
        ("div", "data-citation-items") | ("span", "data-citation") | ("span" | "img", "data-annotation") => Some(value),
        ("img", "data-attachment-key") => value.bytes().all(|b| b.is_ascii_alphanumeric()).then_some(value),
        ("span", "class") => {
            value.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b' ' | b'-' | b'_')).then_some(value)
        }
        (_, "dir") => matches!(value, "ltr" | "rtl" | "auto").then_some(value),
        _ => None,
    }
}

/// Closes `name` and everything opened inside it; a closing tag that closes nothing open is dropped.
fn close(out: &mut String, open: &mut Vec<&'static str>, name: &str) {
    let Some(at) = open.iter().rposition(|n| n.eq_ignore_ascii_case(name)) else { return };
    for name in open.drain(at..).rev() {
        push_close(out, name);
    }
}

fn push_close(out: &mut String, name: &str) {
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// Text between tags: `<`, `>` and a bare `&` escaped; quotes (inert outside a tag) and well-formed character
/// references kept as they are.
fn push_text(out: &mut String, text: &str) {
    let mut rest = text;
    loop {
        let at = until(rest, |b| matches!(b, b'&' | b'<' | b'>'));
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(&first) = rest.as_bytes().first() else { return };
        let kept = if first == b'&' { reference_len(rest) } else { None };
        match kept {
            Some(len) => {
                out.push_str(&rest[..len]);
                rest = &rest[len..];
            }
            None => {
                push_escaped_html(out, &rest[..1]);
                rest = &rest[1..];
            }
        }
    }
}

/// The length of the character reference at the start of `text` (`&name;`, `&#123;`, `&#x1F;`), if it is one.
fn reference_len(text: &str) -> Option<usize> {
    let body = &text[1..];
    let end = body.find(';').filter(|&end| end > 0 && end <= 32)?;
    let name = &body[..end];
    let valid = match name.strip_prefix('#') {
        Some(number) => match number.strip_prefix(['x', 'X']) {
            Some(hex) => !hex.is_empty() && hex.len() <= 6 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            None => !number.is_empty() && number.len() <= 7 && number.bytes().all(|b| b.is_ascii_digit()),
        },
        None => name.bytes().all(|b| b.is_ascii_alphanumeric()) && name.as_bytes()[0].is_ascii_alphabetic(),
    };
    valid.then_some(end + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_zotero_notes_use() {
        let html = "<div data-schema-version=\"9\"><h1>Title</h1>\n<p>Some <strong>bold</strong>, <em>em</em>, \
                    <u>under</u> and <a href=\"https://example.org/?a=1&amp;b=2\">a link</a>&nbsp;here.</p>\
                    <ol start=\"3\"><li>three</li></ol><table><tbody><tr><td colspan=\"2\">cell</td></tr></tbody></table>\
                    <p><span class=\"highlight\" data-annotation=\"{&quot;k&quot;:1}\">quoted</span></p>\
                    <img data-attachment-key=\"ABCD2345\" width=\"640\" height=\"480\"></div>";
        assert_eq!(sanitize_note_html(html), html);
    }

    #[test]
    fn drops_scripts_handlers_styles_and_other_schemes() {
        let html = "<p onclick=\"x()\" style=\"color:red\">hi<script>alert(1)</script></p>\
                    <img src=\"x\" onerror=\"alert(2)\"><a href=\" javascript:alert(3)\">j</a>\
                    <a href=\"jav&#x09;ascript:alert(4)\">k</a><style>p{}</style><iframe src=\"https://e.x\"></iframe>\
                    <svg><script>alert(5)</script></svg><!-- <script>alert(6)</script> -->";
        assert_eq!(sanitize_note_html(html), "<p>hi</p><img><a>j</a><a>k</a>");
    }

    #[test]
    fn unknown_tags_keep_their_text_and_stray_markup_is_escaped() {
        assert_eq!(
            sanitize_note_html("<font color=red>red</font> a < b > c & d \"q\" 'a' </p><p>open"),
            "red a &lt; b &gt; c &amp; d \"q\" 'a' <p>open</p>"
        );
    }

    #[test]
    fn balances_what_it_keeps() {
        assert_eq!(sanitize_note_html("<ul><li><b>one</ul>two</b>"), "<ul><li><b>one</b></li></ul>two");
        assert_eq!(sanitize_note_html("<p title=\"x\"<b>unterminated"), "<p>unterminated</p>");
        assert_eq!(sanitize_note_html("<p a=\"never closed>text"), "&lt;p a=\"never closed&gt;text");
        assert_eq!(sanitize_note_html("<script>never closed <p>gone"), "");
        // An attribute name that starts with a multi-byte character and runs to the end: text, not a panic.
        assert_eq!(sanitize_note_html("<p é"), "&lt;p é");
        assert_eq!(sanitize_note_html("a<b c=1 ü=\"x\">b</b>"), "a<b>b</b>");
    }

    #[test]
    fn attribute_values_are_decoded_then_escaped() {
        assert_eq!(
            sanitize_note_html("<a href='https://e.x/\"onmouseover=\"x' title=a&lt;b>t</a>"),
            "<a href=\"https://e.x/&quot;onmouseover=&quot;x\" title=\"a&lt;b\">t</a>"
        );
    }

    #[test]
    fn sanitizing_twice_changes_nothing() {
        for html in [
            "<p onclick=x>a &amp; b &nbsp; &bogus c</p><script>x</script><ul><li>open",
            "<a href='https://e.x/?a=\"b\"&amp;c' title=\"it's\">t</a><img data-attachment-key=ABCD2345 src=x>",
            "<span class=\"highlight\" data-annotation='{\"a\":\"<b>\"}'>q</span></b></i>< p>",
        ] {
            let once = sanitize_note_html(html);
            assert_eq!(sanitize_note_html(&once), once, "{html}");
        }
    }
}
