//! Small text helpers shared by the renderers.

/// Escapes text for HTML element content and quoted attribute values. The one escaper of the crate: pages,
/// the consent page and note HTML all use it.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped_html(&mut out, text);
    out
}

/// [`escape_html`], appending to `out`.
pub fn push_escaped_html(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
}

/// Cuts `text` to at most `max` characters, ending with "…" when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

// Note HTML is read as text by the core crate's converter (`zotero_mcp_core::html_text`), the one the simulator
// uses too; one-line previews collapse its output with this.
pub use zotero_mcp_core::html_text::collapse_whitespace;

/// The year of a Zotero date string as four digits, by the core's one year rule ([`zotero_mcp_core::zotero::year_of`]).
pub fn year_of(date: &str) -> Option<String> {
    zotero_mcp_core::zotero::year_of(date).map(|year| format!("{year:04}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_by_characters() {
        assert_eq!(truncate("short", 10), "short");
        assert_eq!(truncate("中文标题很长很长", 5), "中文标题…");
    }

    #[test]
    fn finds_standalone_years() {
        assert_eq!(year_of("2021-03-04").as_deref(), Some("2021"));
        assert_eq!(year_of("March 1999").as_deref(), Some("1999"));
        assert_eq!(year_of("12345"), None);
        assert_eq!(year_of(""), None);
    }
}
