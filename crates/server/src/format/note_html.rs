//! Zotero notes: Markdown in, note HTML out, and notes in results (read back as text by
//! [`zotero_mcp_core::html_text`]).
//!
//! Notes are HTML that Zotero (Desktop, iOS, the web library) renders, so what a caller writes must never reach
//! them as markup unless it is in a small grammar: paragraphs, headings, emphasis, strong, strikethrough, inline
//! code and code blocks, block quotes, lists, tables, rules, line breaks, and links to `http`, `https` and
//! `zotero` URLs. pulldown-cmark parses the Markdown; the renderer below writes every tag itself and escapes every
//! piece of text, so raw HTML in the input (`<script>`, `<img onerror=…>`, `<a href="javascript:…">`) shows as
//! text and a link to any other scheme keeps its text but loses the link. HTML handed in as such (`raw`) goes
//! through [`super::note_sanitize`] instead.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
// Reading notes back as text is the core crate's converter, shared with the simulator, so a note reads the same
// everywhere; it is re-exported here because the tools find everything about notes in this module.
pub use zotero_mcp_core::html_text::html_to_text;
use zotero_mcp_core::html_text::title_line;
use zotero_mcp_core::zotero::ZoteroObject;

use super::text::truncate;

/// The wrapper Zotero Desktop's note editor writes around a note (its schema version 9).
const WRAPPER_OPEN: &str = "<div data-schema-version=\"9\">";
const WRAPPER_CLOSE: &str = "</div>";

use super::note_sanitize::{allowed_href, sanitize_note_html};
pub use super::text::escape_html;
use super::text::push_escaped_html as push_escaped;

/// Markdown to the inside of a note (no wrapper), through the whitelisted grammar.
pub fn markdown_to_html(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut renderer = Renderer::default();
    for event in Parser::new_ext(markdown, options) {
        renderer.event(event);
    }
    renderer.out.trim_end().to_owned()
}

/// The HTML of a new note (or of a replaced body): an optional first heading, then the body, in Zotero's wrapper.
/// The body is Markdown unless `raw`, when it is HTML the user supplied: then it is stored through
/// [`sanitize_note_html`] (Zotero's tags and attributes, nothing that runs), with no wrapper added (only the
/// escaped title heading goes before it).
pub fn note_html(title: Option<&str>, body: &str, raw: bool) -> String {
    let fragment = note_fragment(title, body, raw);
    if raw {
        fragment
    } else {
        format!("{WRAPPER_OPEN}{fragment}{WRAPPER_CLOSE}")
    }
}

/// The inside of a note for `title` and `body` (see [`note_html`]), without the wrapper.
pub fn note_fragment(title: Option<&str>, body: &str, raw: bool) -> String {
    let mut html = String::new();
    if let Some(title) = title.map(str::trim).filter(|t| !t.is_empty()) {
        html.push_str("<h1>");
        push_escaped(&mut html, title);
        html.push_str("</h1>\n");
    }
    if raw {
        html.push_str(&sanitize_note_html(body));
    } else {
        html.push_str(&markdown_to_html(body));
    }
    html
}

/// Appends a fragment to an existing note: inside its wrapper when it has Zotero's, after it otherwise.
pub fn append_fragment(existing: &str, fragment: &str) -> String {
    let trimmed = existing.trim_end();
    if trimmed.is_empty() {
        return format!("{WRAPPER_OPEN}{fragment}{WRAPPER_CLOSE}");
    }
    let wrapped = trimmed.trim_start().starts_with("<div data-schema-version=") && trimmed.ends_with(WRAPPER_CLOSE);
    if wrapped {
        let body = &trimmed[..trimmed.len() - WRAPPER_CLOSE.len()];
        let separator = if body.ends_with('\n') { "" } else { "\n" };
        format!("{body}{separator}{fragment}{WRAPPER_CLOSE}")
    } else {
        format!("{trimmed}\n{fragment}")
    }
}

/// Writes HTML for pulldown-cmark's events. Each `Start` pushes the closing markup that its `End` writes, so
/// the output is balanced whatever the input, and only tags written here can appear.
#[derive(Default)]
struct Renderer {
    out: String,
    /// The closing markup for each open element (empty for elements rendered as bare text).
    closers: Vec<&'static str>,
    /// Inside an image: only its alt text is written.
    image_depth: usize,
    /// Text of the current raw HTML block or code block, written escaped at its end.
    block_text: Option<String>,
    /// In a table's head row: cells are `<th>`.
    in_table_head: bool,
    /// The current table's `<tbody>` is open.
    table_body_open: bool,
}

impl Renderer {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(end) => self.end(end),
            Event::Text(text) | Event::Code(text) if self.image_depth > 0 => push_escaped(&mut self.out, &text),
            Event::Text(text) | Event::Html(text) | Event::InlineMath(text) | Event::DisplayMath(text)
                if self.block_text.is_some() =>
            {
                if let Some(buffer) = self.block_text.as_mut() {
                    buffer.push_str(&text);
                }
            }
            Event::Text(text) => push_escaped(&mut self.out, &text),
            Event::Code(code) => {
                self.out.push_str("<code>");
                push_escaped(&mut self.out, &code);
                self.out.push_str("</code>");
            }
            // Raw HTML (inline, or outside a block) and anything this grammar does not know is shown as text.
            Event::Html(html) | Event::InlineHtml(html) => push_escaped(&mut self.out, &html),
            Event::InlineMath(text) | Event::DisplayMath(text) => push_escaped(&mut self.out, &text),
            Event::FootnoteReference(label) => {
                self.out.push_str("[^");
                push_escaped(&mut self.out, &label);
                self.out.push(']');
            }
            Event::TaskListMarker(checked) => self.out.push_str(if checked { "[x] " } else { "[ ] " }),
            Event::SoftBreak | Event::HardBreak if self.image_depth > 0 => self.out.push(' '),
            // A single newline stays a line break, as it does in a plain-text note.
            Event::SoftBreak | Event::HardBreak => self.out.push_str("<br>\n"),
            Event::Rule => self.out.push_str("<hr>\n"),
        }
    }

    fn open(&mut self, markup: &str, closer: &'static str) {
        self.out.push_str(markup);
        self.closers.push(closer);
    }

    fn start(&mut self, tag: Tag<'_>) {
        if self.image_depth > 0 {
            // Nothing but alt text inside an image; keep the stack balanced.
            if matches!(tag, Tag::Image { .. }) {
                self.image_depth += 1;
            }
            self.closers.push("");
            return;
        }
        match tag {
            Tag::Paragraph => self.open("<p>", "</p>\n"),
            Tag::Heading { level, .. } => {
                let (open, close) = match level {
                    HeadingLevel::H1 => ("<h1>", "</h1>\n"),
                    HeadingLevel::H2 => ("<h2>", "</h2>\n"),
                    HeadingLevel::H3 => ("<h3>", "</h3>\n"),
                    HeadingLevel::H4 => ("<h4>", "</h4>\n"),
                    HeadingLevel::H5 => ("<h5>", "</h5>\n"),
                    HeadingLevel::H6 => ("<h6>", "</h6>\n"),
                };
                self.open(open, close);
            }
            Tag::BlockQuote(_) => self.open("<blockquote>\n", "</blockquote>\n"),
            Tag::CodeBlock(_) => {
                self.block_text = Some(String::new());
                self.open("<pre>", "</pre>\n");
            }
            Tag::HtmlBlock => {
                self.block_text = Some(String::new());
                self.open("<p>", "</p>\n");
            }
            Tag::List(Some(start)) if start != 1 => {
                let open = format!("<ol start=\"{start}\">\n");
                self.open(&open, "</ol>\n");
            }
            Tag::List(Some(_)) => self.open("<ol>\n", "</ol>\n"),
            Tag::List(None) => self.open("<ul>\n", "</ul>\n"),
            Tag::Item => self.open("<li>", "</li>\n"),
            Tag::Table(_) => {
                self.table_body_open = false;
                self.open("<table>\n", "</table>\n");
            }
            Tag::TableHead => {
                self.in_table_head = true;
                self.open("<thead>\n<tr>", "</tr>\n</thead>\n");
            }
            Tag::TableRow => {
                if !self.table_body_open {
                    self.table_body_open = true;
                    self.out.push_str("<tbody>\n");
                }
                self.open("<tr>", "</tr>\n");
            }
            Tag::TableCell if self.in_table_head => self.open("<th>", "</th>"),
            Tag::TableCell => self.open("<td>", "</td>"),
            Tag::Emphasis => self.open("<em>", "</em>"),
            Tag::Strong => self.open("<strong>", "</strong>"),
            Tag::Strikethrough => self.open("<s>", "</s>"),
            Tag::Superscript => self.open("<sup>", "</sup>"),
            Tag::Subscript => self.open("<sub>", "</sub>"),
            Tag::Link { dest_url, .. } => match allowed_href(&dest_url) {
                Some(href) => {
                    self.out.push_str("<a href=\"");
                    push_escaped(&mut self.out, href);
                    self.out.push_str("\">");
                    self.closers.push("</a>");
                }
                // Another scheme (javascript:, data:, file:, …) or a relative link: the text stays, the link goes.
                None => self.closers.push(""),
            },
            Tag::Image { .. } => {
                self.image_depth = 1;
                self.closers.push("");
            }
            // Not enabled, so not expected; their content is rendered without markup of their own.
            _ => self.closers.push(""),
        }
    }

    fn end(&mut self, end: TagEnd) {
        match end {
            TagEnd::Image if self.image_depth > 0 => self.image_depth -= 1,
            TagEnd::CodeBlock | TagEnd::HtmlBlock if self.image_depth == 0 => {
                let text = self.block_text.take().unwrap_or_default();
                let text = text.trim_end_matches('\n');
                if end == TagEnd::CodeBlock {
                    push_escaped(&mut self.out, text);
                } else {
                    let lines: Vec<String> = text.split('\n').map(escape_html).collect();
                    self.out.push_str(&lines.join("<br>\n"));
                }
            }
            TagEnd::TableHead => self.in_table_head = false,
            TagEnd::Table if self.table_body_open => {
                self.table_body_open = false;
                self.out.push_str("</tbody>\n");
            }
            _ => {}
        }
        if let Some(closer) = self.closers.pop() {
            self.out.push_str(closer);
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Notes in results

/// Readable text kept per note in a listing.
pub const NOTE_TEXT_MAX: usize = 2000;
/// Characters kept of a note's title (its first line).
const NOTE_TITLE_MAX: usize = 200;

/// One note in a listing.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NoteSummary {
    /// The note's key, for update and delete.
    pub key: String,
    /// The item the note belongs to; null for a standalone note.
    pub parent_item: Option<String>,
    /// The note's first line, as Zotero shows it.
    pub title: String,
    /// The note as readable text (headings as `# `, list items as `- `), cut at about 2000 characters.
    pub text: String,
    /// True when `text` was cut.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(default)]
    pub truncated: bool,
    /// The stored HTML, unchanged, when `raw` was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    pub tags: Vec<String>,
    pub date_modified: Option<String>,
}

/// A note object as a summary; `raw` adds the stored HTML.
pub fn summarize_note(note: &ZoteroObject, raw: bool) -> NoteSummary {
    let html = note.field("note").unwrap_or_default();
    let full = html_to_text(html);
    let truncated = full.chars().count() > NOTE_TEXT_MAX;
    NoteSummary {
        key: note.key.clone(),
        parent_item: note.field("parentItem").map(str::to_owned),
        title: truncate(title_line(&full), NOTE_TITLE_MAX),
        text: truncate(&full, NOTE_TEXT_MAX),
        truncated,
        html: raw.then(|| html.to_owned()),
        tags: note
            .data
            .get("tags")
            .and_then(Value::as_array)
            .map(|tags| tags.iter().filter_map(|t| t.get("tag").and_then(Value::as_str)).map(str::to_owned).collect())
            .unwrap_or_default(),
        date_modified: note.field("dateModified").map(str::to_owned),
    }
}

/// Notes as Markdown: a heading per note (key, parent, date, tags), then its text, or its HTML when `raw`.
pub fn notes_markdown(notes: &[NoteSummary]) -> String {
    if notes.is_empty() {
        return "_No notes._".to_owned();
    }
    notes
        .iter()
        .map(|note| {
            let place = note.parent_item.as_deref().map_or_else(|| "standalone".to_owned(), |p| format!("on {p}"));
            let mut head = format!("### {} ({place})", note.key);
            if let Some(date) = &note.date_modified {
                head.push_str(&format!(" · modified {date}"));
            }
            if !note.tags.is_empty() {
                head.push_str(&format!(" · tags: {}", note.tags.join(", ")));
            }
            let body = match &note.html {
                Some(html) => format!("```html\n{html}\n```"),
                None if note.text.is_empty() => "_(empty note)_".to_owned(),
                None => note.text.clone(),
            };
            format!("{head}\n\n{body}")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(markdown: &str) -> String {
        markdown_to_html(markdown)
    }

    /// No tag outside the grammar, and no attribute but href/start, survives.
    fn assert_whitelisted(html: &str) {
        const TAGS: &[&str] = &[
            "div",
            "p",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "em",
            "strong",
            "s",
            "code",
            "pre",
            "blockquote",
            "ul",
            "ol",
            "li",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "hr",
            "br",
            "a",
            "sup",
            "sub",
        ];
        let mut rest = html;
        while let Some(at) = rest.find('<') {
            let tag = &rest[at + 1..];
            let end = tag.find('>').expect("every < in the output opens a tag");
            let inner = tag[..end].trim_start_matches('/');
            let name = inner.split_whitespace().next().unwrap_or_default();
            assert!(TAGS.contains(&name), "tag `{name}` in {html}");
            let attrs = inner[name.len()..].trim();
            assert!(
                attrs.is_empty()
                    || attrs.starts_with("href=\"http")
                    || attrs.starts_with("href=\"zotero:")
                    || attrs.starts_with("start=\"")
                    || attrs == "data-schema-version=\"9\"",
                "attributes `{attrs}` in {html}"
            );
            rest = &tag[end + 1..];
        }
    }

    #[test]
    fn renders_the_grammar() {
        let html = body("# Title\n\nSome *em*, **strong**, ~~gone~~ and `a < b`.\n\n> quoted\n\n- one\n- two\n\n3. three\n4. four\n\n---\n\nline one\nline two  \nline three");
        assert_eq!(
            html,
            "<h1>Title</h1>\n<p>Some <em>em</em>, <strong>strong</strong>, <s>gone</s> and <code>a &lt; b</code>.</p>\n\
             <blockquote>\n<p>quoted</p>\n</blockquote>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n\
             <ol start=\"3\">\n<li>three</li>\n<li>four</li>\n</ol>\n<hr>\n\
             <p>line one<br>\nline two<br>\nline three</p>"
        );
        assert_whitelisted(&html);
    }

    #[test]
    fn escapes_script_blocks_and_inline_html() {
        let html = body("<script>alert(1)</script>\n\nText <b onclick=\"x()\">bold</b> & more");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<b "), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(html.contains("&lt;b onclick=&quot;x()&quot;&gt;bold&lt;/b&gt; &amp; more"), "{html}");
        assert_whitelisted(&html);
    }

    #[test]
    fn escapes_img_onerror_and_markdown_images() {
        let html = body("<img src=x onerror=alert(1)>\n\n![alt *text*](https://evil.example/x.png \"t\")");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "{html}");
        assert!(html.contains("<p>alt text</p>"), "{html}");
        assert!(!html.contains("evil.example"), "{html}");
        assert_whitelisted(&html);
    }

    #[test]
    fn drops_links_with_other_schemes() {
        for hostile in [
            "[x](javascript:alert(1))",
            "[x](JavaScript:alert(1))",
            "[x](data:text/html;base64,PHNjcmlwdD4=)",
            "[x](file:///etc/passwd)",
            "[x](vbscript:msgbox)",
            "[x](/relative/path)",
            "[x](<java script:alert(1)>)",
            "[x][r]\n\n[r]: javascript:alert(1)",
        ] {
            let html = body(hostile);
            assert!(!html.contains("<a"), "{hostile} -> {html}");
            assert!(html.starts_with("<p>x</p>"), "{hostile} -> {html}");
            assert_whitelisted(&html);
        }
        let html = body("<javascript:alert(1)>");
        assert!(!html.contains("<a"), "{html}");
    }

    #[test]
    fn keeps_allowed_links_escaped() {
        let html = body("[paper](https://example.org/?a=1&b=\"2\") and [item](zotero://select/library/items/ABCD2345) and <http://x.org>");
        assert_eq!(
            html,
            "<p><a href=\"https://example.org/?a=1&amp;b=&quot;2&quot;\">paper</a> and \
             <a href=\"zotero://select/library/items/ABCD2345\">item</a> and <a href=\"http://x.org\">http://x.org</a></p>"
        );
        assert_whitelisted(&html);
    }

    #[test]
    fn escapes_html_anchors_with_javascript() {
        let html = body("<a href=\"javascript:alert(1)\">click</a> and <a href='data:text/html,x'>y</a>");
        assert!(!html.contains("<a "), "{html}");
        assert!(html.contains("&lt;a href=&quot;javascript:alert(1)&quot;&gt;click&lt;/a&gt;"), "{html}");
        assert_whitelisted(&html);
    }

    #[test]
    fn nests_emphasis_and_escapes_code() {
        let html = body(
            "***both*** and *a **b** c*\n\n```html\n<script>x</script>\n</pre><img src=x>\n```\n\n    indented <b>",
        );
        assert!(html.contains("<em><strong>both</strong></em>"), "{html}");
        assert!(html.contains("<em>a <strong>b</strong> c</em>"), "{html}");
        assert!(html.contains("<pre>&lt;script&gt;x&lt;/script&gt;\n&lt;/pre&gt;&lt;img src=x&gt;</pre>"), "{html}");
        assert!(html.contains("<pre>indented &lt;b&gt;</pre>"), "{html}");
        assert_whitelisted(&html);
    }

    #[test]
    fn renders_tables() {
        let html = body("| a | b <i> |\n|---|:-:|\n| 1 | **2** |\n| 3 | 4 |");
        assert_eq!(
            html,
            "<table>\n<thead>\n<tr><th>a</th><th>b &lt;i&gt;</th></tr>\n</thead>\n<tbody>\n\
             <tr><td>1</td><td><strong>2</strong></td></tr>\n<tr><td>3</td><td>4</td></tr>\n</tbody>\n</table>"
        );
        assert_whitelisted(&html);
    }

    #[test]
    fn survives_unbalanced_and_odd_input() {
        for input in [
            "</div></p><div>",
            "*unclosed **strong",
            "<!-- comment -->",
            "<![CDATA[x]]>",
            "\u{0}",
            "",
            "```\nopen",
            "> - [ ] task\n>\n> [^1]",
        ] {
            let html = body(input);
            assert_whitelisted(&html);
            assert!(!html.contains("<!--"));
        }
    }

    #[test]
    fn hostile_fragments_in_any_combination_stay_text() {
        const FRAGMENTS: &[&str] = &[
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "[x](javascript:alert(1))",
            "[x](jav&#97;script:alert(1))",
            "<a href=\"javascript:alert(1)\">a</a>",
            "![i](data:image/svg+xml;base64,PHN2Zz4=)",
            "<iframe src=\"data:text/html,x\"></iframe>",
            "<svg><style>x</style></svg>",
            "**bold *em",
            "`code <b>`",
            "| a |\n|---|\n| <td onclick=x> |",
            "> <div onmouseover=x>",
            "- <li>\n  - [y](file:///etc/passwd)",
            "```\n</pre><script>\n```",
            "<!-- x --><![CDATA[ y ]]>",
            "\n\n",
            "&lt;escaped&gt; &amp; &#60;script&#62;",
        ];
        for a in FRAGMENTS {
            for b in FRAGMENTS {
                for joiner in ["", " ", "\n", "\n\n"] {
                    let input = format!("{a}{joiner}{b}");
                    let html = note_html(Some(a), &input, false);
                    assert_whitelisted(&html);
                    assert!(!html.to_ascii_lowercase().contains("javascript:alert(1)\""), "{input:?} -> {html}");
                    assert!(!html.contains("<script"), "{input:?} -> {html}");
                }
            }
        }
    }

    #[test]
    fn wraps_like_zotero_and_escapes_the_title() {
        let html = note_html(Some("A <b>title</b>"), "body", false);
        assert_eq!(html, "<div data-schema-version=\"9\"><h1>A &lt;b&gt;title&lt;/b&gt;</h1>\n<p>body</p></div>");
        // Raw HTML keeps its tags but not its handlers.
        assert_eq!(note_html(None, "<p>kept <b onclick=x>bold</b></p>", true), "<p>kept <b>bold</b></p>");
        assert_eq!(note_html(Some("T<"), "<p>kept</p>", true), "<h1>T&lt;</h1>\n<p>kept</p>");
        assert_eq!(note_html(Some("  "), "x", false), "<div data-schema-version=\"9\"><p>x</p></div>");
    }

    #[test]
    fn appends_inside_the_wrapper() {
        let existing = "<div data-schema-version=\"9\"><p>one</p>\n</div>";
        assert_eq!(
            append_fragment(existing, "<p>two</p>"),
            "<div data-schema-version=\"9\"><p>one</p>\n<p>two</p></div>"
        );
        assert_eq!(append_fragment("<p>old</p>", "<p>new</p>"), "<p>old</p>\n<p>new</p>");
        assert_eq!(append_fragment("", "<p>new</p>"), "<div data-schema-version=\"9\"><p>new</p></div>");
    }

    #[test]
    fn round_trips_markdown_to_readable_text() {
        let markdown = "# Plan\n\nFirst *step* & <script>x</script>\n\n- a\n- b\n\n> note";
        let text = html_to_text(&note_html(Some("Title"), markdown, false));
        assert_eq!(text, "# Title\n\n# Plan\n\nFirst step & <script>x</script>\n\n- a\n- b\n\n> note");
    }
}
