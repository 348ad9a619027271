//! Client names as the consent page may show them. Its own module because both the metadata rules (`client`)
//! and the stored records (`storage`, for names stored before names were cleaned) apply it.

/// Longest client name kept, in characters, after control and bidi characters are removed. The consent page
/// shows it above "approval goes to …", which a longer name would push out of sight.
pub const MAX_CLIENT_NAME_CHARS: usize = 100;

/// Unicode bidirectional formatting characters: LRM, RLM, ALM, the embeddings and overrides (U+202A–U+202E)
/// and the isolates (U+2066–U+2069). In a client name they can reorder the consent page's text around it.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A client name as it may be shown: control characters and bidi controls removed (a line break or tab
/// becomes a space), surrounding whitespace trimmed, and cut to [`MAX_CLIENT_NAME_CHARS`] characters with an
/// ellipsis marking the cut. Names are cleaned rather than refused: a client cannot fix its name, and RFC 7591
/// §3.2.1 lets the server change values, which the registration response then reports.
pub fn sanitize_client_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .filter(|&c| !is_bidi_control(c) && (!c.is_control() || c.is_whitespace()))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.chars().count() <= MAX_CLIENT_NAME_CHARS {
        return cleaned.to_owned();
    }
    let mut cut: String = cleaned.chars().take(MAX_CLIENT_NAME_CHARS - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}
