//! Note HTML to readable plain text: the one converter of the workspace.
//!
//! Zotero stores notes as HTML. The MCP server shows them to models as text, and the simulator derives a note's
//! title from them the way Zotero does; both need the same reading of the same markup, or a note would be titled
//! one way by the simulator and another way by the server. The converter is a small tolerant scanner, not an HTML
//! parser: notes come from many editors (Zotero Desktop, iOS, the web library, imports, other tools through the
//! API), so it must accept anything, including cut, unbalanced or hostile markup, without panicking. It is pure
//! Rust with no dependencies so that it costs nothing on wasm.
//!
//! What it does: block elements become line breaks (paragraphs and headings a blank line), headings get `# `,
//! list items `- ` or `1. ` (indented when nested), block quotes `> `, table cells ` | `, links keep their text
//! followed by their URL (http, https and zotero only), `<br>` is a line break, `<pre>` keeps its lines;
//! character references are decoded; comments, doctypes and the content of `script`, `style`, `template`,
//! `title` and `noscript` are dropped; other whitespace collapses to single spaces.

/// Readable text from note HTML: headings as `# `, list items as `- ` (or `1. `), block quotes as `> `,
/// paragraphs separated by blank lines, table cells by ` | `, links followed by their URL, entities decoded,
/// scripts and styles dropped. Meant for reading, not for converting back.
pub fn html_to_text(html: &str) -> String {
    let mut writer = TextWriter::default();
    let bytes = html.as_bytes();
    let mut i = 0;
    let mut text_start = 0;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            i += 1;
            continue;
        }
        let Some(tag) = parse_tag(html, i) else {
            i += 1;
            continue;
        };
        writer.text(&html[text_start..i]);
        i = tag.end;
        match tag.kind {
            TagKind::Skip => {}
            TagKind::Element { ref name, closing, self_closing } => {
                let raw_text = matches!(name.as_str(), "script" | "style" | "template" | "title" | "noscript");
                if raw_text && !closing && !self_closing {
                    // Skip the element's content, up to its closing tag (or the end).
                    let close = format!("</{name}");
                    i = find_ignore_case(html, i, &close)
                        .map(|at| html[at..].find('>').map_or(html.len(), |gt| at + gt + 1))
                        .unwrap_or(html.len());
                } else {
                    writer.element(name, closing, self_closing, tag.attributes);
                }
            }
        }
        text_start = i;
    }
    writer.text(&html[text_start..]);
    writer.finish()
}

enum TagKind {
    /// A comment, doctype or processing instruction.
    Skip,
    Element {
        name: String,
        closing: bool,
        self_closing: bool,
    },
}

struct ParsedTag<'a> {
    kind: TagKind,
    attributes: &'a str,
    /// Byte index just past the tag.
    end: usize,
}

/// The tag starting at `start` (a `<`), or `None` when the `<` is just text (`a < b`, `<3`).
fn parse_tag(html: &str, start: usize) -> Option<ParsedTag<'_>> {
    let rest = &html[start..];
    if let Some(comment) = rest.strip_prefix("<!--") {
        let end = comment.find("-->").map_or(html.len(), |at| start + 4 + at + 3);
        return Some(ParsedTag { kind: TagKind::Skip, attributes: "", end });
    }
    if rest.starts_with("<!") || rest.starts_with("<?") {
        let end = rest.find('>').map_or(html.len(), |at| start + at + 1);
        return Some(ParsedTag { kind: TagKind::Skip, attributes: "", end });
    }
    let (closing, after) = match rest.strip_prefix("</") {
        Some(after) => (true, after),
        None => (false, &rest[1..]),
    };
    if !after.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let name_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(after.len());
    let name = after[..name_len].to_ascii_lowercase();
    let name_end = html.len() - after.len() + name_len;
    // Find the closing `>`, skipping quoted attribute values. Bytes, not chars: the three delimiters are ASCII,
    // which never occurs inside a multi-byte UTF-8 sequence, and Zotero's citation attributes run to kilobytes.
    let mut quote: Option<u8> = None;
    let mut end = None;
    for (offset, &b) in html.as_bytes()[name_end..].iter().enumerate() {
        match (quote, b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => {
                end = Some(name_end + offset);
                break;
            }
            _ => {}
        }
    }
    let end = end.unwrap_or(html.len());
    let attributes = &html[name_end..end];
    let self_closing = attributes.trim_end().ends_with('/');
    Some(ParsedTag {
        kind: TagKind::Element { name, closing, self_closing },
        attributes,
        end: (end + 1).min(html.len()),
    })
}

/// Byte index of `needle` (ASCII) in `haystack` at or after `from`, ignoring ASCII case.
fn find_ignore_case(haystack: &str, from: usize, needle: &str) -> Option<usize> {
    let hay = haystack.as_bytes();
    let needle = needle.as_bytes();
    (from..=hay.len().saturating_sub(needle.len())).find(|&at| hay[at..at + needle.len()].eq_ignore_ascii_case(needle))
}

/// The value of attribute `name` in a tag's attribute text, entities decoded.
fn attribute(attributes: &str, name: &str) -> Option<String> {
    let bytes = attributes.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'/') {
            i += 1;
        }
        let key_start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'=' && bytes[i] != b'/' {
            i += 1;
        }
        let key = &attributes[key_start..i];
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = None;
        if i < bytes.len() && bytes[i] == b'=' {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < bytes.len() && (bytes[i] == b'"' || bytes[i] == b'\'') {
                let quote = bytes[i];
                let value_start = i + 1;
                i = value_start;
                while i < bytes.len() && bytes[i] != quote {
                    i += 1;
                }
                value = Some(&attributes[value_start..i]);
                i += 1;
            } else {
                let value_start = i;
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = Some(&attributes[value_start..i]);
            }
        }
        if key.eq_ignore_ascii_case(name) {
            return value.map(decode_entities);
        }
    }
    None
}

/// Decodes character references: the named ones notes use, and every numeric one.
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest[1..]
            .find(';')
            .filter(|&semi| semi > 0 && semi <= 32)
            .and_then(|semi| entity(&rest[1..=semi]).map(|c| (c, semi + 2)));
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse::<u32>().ok()?,
        };
        return Some(char::from_u32(code).filter(|c| *c != '\0').unwrap_or('\u{FFFD}'));
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "middot" => '·',
        "bull" => '•',
        "times" => '×',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "deg" => '°',
        "shy" => '\u{AD}',
        _ => return None,
    })
}

/// Builds readable text from a stream of text and elements.
#[derive(Default)]
struct TextWriter {
    out: String,
    /// Line breaks owed before the next text: 1 = new line, 2 = blank line.
    pending: u8,
    /// Nothing has been written on the current line yet (its prefix included).
    line_fresh: bool,
    /// Written before the next text, after the line prefix (a list marker or heading marker).
    marker: Option<String>,
    /// Open lists: ordered, and the next number.
    lists: Vec<(bool, u64)>,
    quote_depth: usize,
    pre_depth: usize,
    /// Cells written in the current table row.
    cells: usize,
    /// Open links: their URL when it is worth showing, and where their text starts.
    links: Vec<(Option<String>, usize)>,
}

impl TextWriter {
    fn request_break(&mut self, lines: u8) {
        if !self.out.is_empty() {
            self.pending = self.pending.max(lines);
        }
    }

    /// Starts the line for new text: owed breaks, then the quote and list prefix, then any marker.
    fn begin_text(&mut self) {
        if self.pending > 0 {
            while self.out.ends_with(' ') {
                self.out.pop();
            }
            for _ in 0..self.pending {
                self.out.push('\n');
            }
            self.pending = 0;
            self.line_fresh = true;
        }
        if self.line_fresh || self.out.is_empty() {
            for _ in 0..self.quote_depth {
                self.out.push_str("> ");
            }
            if !self.lists.is_empty() {
                let depth = self.lists.len() - 1;
                self.out.push_str(&"  ".repeat(depth));
                if self.marker.is_none() {
                    self.out.push_str("  ");
                }
            }
            self.line_fresh = false;
        }
        if let Some(marker) = self.marker.take() {
            self.out.push_str(&marker);
        }
    }

    fn text(&mut self, raw: &str) {
        if raw.is_empty() {
            return;
        }
        let text = decode_entities(raw);
        if self.pre_depth > 0 {
            for (index, line) in text.split('\n').enumerate() {
                if index > 0 {
                    self.out.push('\n');
                    self.line_fresh = true;
                }
                if !line.is_empty() {
                    self.begin_text();
                    self.out.push_str(line);
                }
            }
            return;
        }
        let starts_with_space = text.starts_with(char::is_whitespace);
        let ends_with_space = text.ends_with(char::is_whitespace);
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.is_empty() {
            if starts_with_space && !self.at_line_start() && !self.out.ends_with(' ') {
                self.out.push(' ');
            }
            return;
        }
        if starts_with_space && self.pending == 0 && !self.at_line_start() && !self.out.ends_with(' ') {
            self.out.push(' ');
        }
        self.begin_text();
        self.out.push_str(&words.join(" "));
        if ends_with_space {
            self.out.push(' ');
        }
    }

    fn at_line_start(&self) -> bool {
        self.out.is_empty() || self.out.ends_with('\n') || self.line_fresh || self.marker.is_some()
    }

    fn element(&mut self, name: &str, closing: bool, self_closing: bool, attributes: &str) {
        match name {
            "p" | "section" | "article" | "header" | "footer" | "figure" | "address" | "dl" | "details" => {
                self.request_break(2)
            }
            "div" | "dt" | "dd" | "figcaption" | "summary" | "caption" => self.request_break(1),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.request_break(2);
                if !closing {
                    let level = name[1..].parse::<usize>().unwrap_or(1);
                    self.marker = Some(format!("{} ", "#".repeat(level)));
                } else {
                    self.marker = None;
                }
            }
            "ul" | "ol" => {
                self.request_break(if self.lists.len() > usize::from(closing) { 1 } else { 2 });
                if closing {
                    self.lists.pop();
                } else if !self_closing {
                    let start = attribute(attributes, "start").and_then(|s| s.trim().parse().ok()).unwrap_or(1);
                    self.lists.push((name == "ol", start));
                }
            }
            "li" => {
                self.request_break(1);
                if closing {
                    self.marker = None;
                } else {
                    let marker = match self.lists.last_mut() {
                        Some((true, next)) => {
                            *next += 1;
                            format!("{}. ", *next - 1)
                        }
                        _ => "- ".to_owned(),
                    };
                    self.marker = Some(marker);
                }
            }
            "blockquote" => {
                self.request_break(2);
                if closing {
                    self.quote_depth = self.quote_depth.saturating_sub(1);
                } else if !self_closing {
                    self.quote_depth += 1;
                }
            }
            "pre" => {
                self.request_break(2);
                if closing {
                    self.pre_depth = self.pre_depth.saturating_sub(1);
                } else if !self_closing {
                    self.pre_depth += 1;
                }
            }
            "br" => {
                if self.out.is_empty() {
                    return;
                }
                self.pending = (self.pending + 1).min(2);
            }
            "hr" => {
                self.request_break(2);
                self.begin_text();
                self.out.push_str("---");
                self.request_break(2);
            }
            "table" => self.request_break(2),
            "tr" => {
                self.request_break(1);
                self.cells = 0;
            }
            "td" | "th" if !closing => {
                if self.cells > 0 {
                    self.begin_text();
                    self.out.push_str(" | ");
                }
                self.cells += 1;
            }
            "a" if !self_closing => {
                if closing {
                    if let Some((Some(href), start)) = self.links.pop() {
                        let shown = self.out.get(start..).unwrap_or_default().trim();
                        if !shown.is_empty() && shown != href {
                            self.out.push_str(&format!(" ({href})"));
                        }
                    }
                } else {
                    let href = attribute(attributes, "href")
                        .filter(|h| h.starts_with("http://") || h.starts_with("https://") || h.starts_with("zotero:"));
                    self.links.push((href, self.out.len()));
                }
            }
            _ => {}
        }
    }

    fn finish(self) -> String {
        let mut text = String::with_capacity(self.out.len());
        let mut blank_run = 0;
        for line in self.out.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                blank_run += 1;
                if blank_run > 1 {
                    continue;
                }
            } else {
                blank_run = 0;
            }
            text.push_str(line);
            text.push('\n');
        }
        text.trim().to_owned()
    }
}

/// Collapses runs of whitespace (including line breaks) to single spaces, for one-line previews.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first non-empty line of text made by [`html_to_text`], without the heading, quote and bullet markers
/// the converter added: what Zotero shows as a note's title. Numbered-list markers stay, because a line such
/// as `2024. A year` cannot be told apart from one. Not shortened; callers cut it to their own length.
pub fn title_line(text: &str) -> &str {
    let mut line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
    loop {
        // A heading marker is one to six `#` and a space; `#hashtag` is text.
        let hashes = line.len() - line.trim_start_matches('#').len();
        let rest = if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            &line[hashes..]
        } else if let Some(rest) = line.strip_prefix("> ").or_else(|| line.strip_prefix("- ")) {
            rest
        } else {
            return line;
        };
        line = rest.trim_start();
    }
}

/// A note's title from its HTML: [`title_line`] of [`html_to_text`].
pub fn note_title(html: &str) -> String {
    title_line(&html_to_text(html)).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_note_html_as_text() {
        let html = "<div data-schema-version=\"9\"><h1>Reading&nbsp;notes</h1>\n<p>A &amp; B &lt;3 &#169; &#x263A;</p>\
                    <script>alert(1)</script><style>p{}</style><ul><li>one</li><li>two<ul><li>deep</li></ul></li></ul>\
                    <ol start=\"3\"><li>three</li><li>four</li></ol><blockquote><p>quoted</p></blockquote>\
                    <p>line<br>break <a href=\"https://x.org\">link</a> <a href=\"javascript:x\">bad</a></p>\
                    <pre>code\n  indented</pre><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table></div>";
        assert_eq!(
            html_to_text(html),
            "# Reading notes\n\nA & B <3 © ☺\n\n- one\n- two\n  - deep\n\n3. three\n4. four\n\n> quoted\n\n\
             line\nbreak link (https://x.org) bad\n\ncode\n  indented\n\na | b\n1 | 2"
        );
    }

    #[test]
    fn reads_odd_html_as_text() {
        assert_eq!(html_to_text("a < b and c<3 <!-- hidden --> d"), "a < b and c<3 d");
        assert_eq!(html_to_text("<SCRIPT type=x>alert('<p>')</SCRIPT>ok"), "ok");
        assert_eq!(html_to_text("<p>unclosed <script>never ends"), "unclosed");
        assert_eq!(html_to_text("<p title=\"a > b\">text</p>"), "text");
        assert_eq!(html_to_text("&bogus; &amp &#0; &#xD800;"), "&bogus; &amp \u{FFFD} \u{FFFD}");
        assert_eq!(html_to_text("plain text note"), "plain text note");
        assert_eq!(html_to_text("<p>one</p><p></p><p>two</p>"), "one\n\ntwo");
        assert_eq!(html_to_text("<p>中文 <strong>粗体</strong>文本</p>"), "中文 粗体文本");
    }

    #[test]
    fn reads_any_cut_of_odd_html_without_panicking() {
        let html = "<div data-schema-version=\"9\"><p title='é'=\"ü\"é x=ÿ>中文&amp;&#x4e2d;&中;</p><a href=\"https://é.org\">ö</a>\
                    <ol start=\"é\"><li>ü</li></ol><!-- é --><script>é<p>\u{1F600}</p></SCRIPT><br/><pre>é\n ü</pre></div>";
        let cuts: Vec<usize> = (0..=html.len()).filter(|&i| html.is_char_boundary(i)).collect();
        for &start in &cuts {
            for &end in cuts.iter().filter(|&&e| e >= start).step_by(7) {
                let _ = html_to_text(&html[start..end]);
            }
        }
        assert_eq!(attribute(" x=\"é\"é='1' start=\"5\"", "start").as_deref(), Some("5"));
        assert_eq!(attribute("=\"é\"ü href=x", "href").as_deref(), Some("x"));
    }

    #[test]
    fn survives_unclosed_and_broken_markup() {
        assert_eq!(html_to_text("<p>open <b>bold <i>both"), "open bold both");
        assert_eq!(html_to_text("<p>cut inside a tag <a href=\"https://x.org"), "cut inside a tag");
        assert_eq!(html_to_text("text then <"), "text then <");
        assert_eq!(html_to_text("<!-- never closed <p>hidden</p>"), "");
        assert_eq!(html_to_text("</p></li></ul></blockquote>after"), "after");
        assert_eq!(html_to_text("<li>stray item</li>"), "- stray item");
        assert_eq!(html_to_text("<<p>>x"), "<\n\n>x");
        assert_eq!(html_to_text(""), "");
    }

    #[test]
    fn drops_scripts_styles_and_their_lookalikes() {
        assert_eq!(html_to_text("a<script>document.write('<p>b</p>')</script>c"), "ac");
        assert_eq!(html_to_text("a<style>p { content: '</p>' }</style>c"), "ac");
        assert_eq!(html_to_text("a<script src=x />c"), "ac");
        assert_eq!(html_to_text("<scripted>kept</scripted>"), "kept");
        assert_eq!(html_to_text("<p>x</p><ScRiPt>\nalert(1)\n</sCrIpT >y"), "x\n\ny");
        assert_eq!(html_to_text("<noscript>no</noscript><template><p>t</p></template>ok"), "ok");
    }

    #[test]
    fn decodes_entities_and_leaves_the_unknown() {
        assert_eq!(decode_entities("&lt;b&gt; &amp;amp; &quot;q&quot; &apos;a&apos;"), "<b> &amp; \"q\" 'a'");
        assert_eq!(decode_entities("&#20013;&#x6587; &#X1F600;"), "中文 \u{1F600}");
        assert_eq!(decode_entities("&#1114112; &#xFFFFFFFFFF; &#; &#x;"), "\u{FFFD} &#xFFFFFFFFFF; &#; &#x;");
        assert_eq!(decode_entities("AT&T & co; &unknown;"), "AT&T & co; &unknown;");
        assert_eq!(html_to_text("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"), "<script>alert(1)</script>");
    }

    #[test]
    fn nests_lists_with_their_numbers() {
        let html = "<ol><li>one<ol start=\"5\"><li>five<ul><li>deep</li></ul></li><li>six</li></ol></li>\
                    <li>two</li></ol><ul><li><p>para in item</p></li></ul>";
        assert_eq!(html_to_text(html), "1. one\n  5. five\n    - deep\n  6. six\n2. two\n\n- para in item");
        // Thousands of open lists neither recurse nor panic.
        let deep = "<ul><li>x".repeat(5000);
        assert!(html_to_text(&deep).ends_with("- x"));
    }

    #[test]
    fn keeps_chinese_and_other_scripts_intact() {
        assert_eq!(
            html_to_text(
                "<h2>宋代科技史</h2><p>沈括《梦溪笔谈》&nbsp;记载了<strong>活字印刷</strong>。</p><p>Ünïcödé → ok</p>"
            ),
            "## 宋代科技史\n\n沈括《梦溪笔谈》 记载了活字印刷。\n\nÜnïcödé → ok"
        );
        assert_eq!(note_title("<h1>宋代科技史</h1><p>正文</p>"), "宋代科技史");
    }

    #[test]
    fn collapses_whitespace_outside_pre() {
        assert_eq!(html_to_text("<p>  a \n\t b  </p>\n\n\n<p>c</p>"), "a b\n\nc");
        assert_eq!(html_to_text("<pre>  a\n\n  b</pre>"), "a\n\n  b");
        assert_eq!(collapse_whitespace(" a\n\n b\t c "), "a b c");
    }

    #[test]
    fn titles_are_first_lines_without_markers() {
        assert_eq!(title_line("# Heading\n\nbody"), "Heading");
        assert_eq!(title_line("\n\n- item\n"), "item");
        assert_eq!(title_line("> > ### quoted heading"), "quoted heading");
        assert_eq!(title_line("#hashtag"), "#hashtag");
        assert_eq!(title_line("1. first"), "1. first");
        assert_eq!(title_line(""), "");
        assert_eq!(note_title("<p>First &amp; best</p><p>second</p>"), "First & best");
        assert_eq!(note_title("<div data-schema-version=\"9\"><h1>Plan</h1>\n<p>x</p></div>"), "Plan");
        assert_eq!(note_title("line one<br>line two"), "line one");
    }
}
