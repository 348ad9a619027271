//! Text folded for matching the way Zotero's own search folds it: compatibility decomposition (NFKD, so a
//! ligature or a full-width letter reads as its plain letters), diacritics dropped (`café` matches `cafe`),
//! typographic quotes and dashes made plain, letters lower-cased. Only the words used for ranking are folded:
//! the passage a reader gets back is always the original text.

/// `text` folded (see the module). Letters that no decomposition reaches but Zotero folds too (`ø`, `æ`, `ß`,
/// `ł`, …) are spelled out.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in decompose(text).chars() {
        let spelled = match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '`' => "'",
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}' | '\u{00BB}' => "\"",
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => "-",
            'ø' | 'Ø' => "o",
            'æ' | 'Æ' => "ae",
            'œ' | 'Œ' => "oe",
            'ß' => "ss",
            'ł' | 'Ł' => "l",
            'đ' | 'Đ' => "d",
            'ð' | 'Ð' => "d",
            'þ' | 'Þ' => "th",
            'ı' => "i",
            c => {
                out.extend(c.to_lowercase());
                continue;
            }
        };
        out.push_str(spelled);
    }
    out
}

/// `text` in compatibility decomposition (NFKD) without its combining marks (General Category M).
#[cfg(not(target_arch = "wasm32"))]
fn decompose(text: &str) -> String {
    use unicode_normalization::char::is_combining_mark;
    use unicode_normalization::UnicodeNormalization;
    text.nfkd().filter(|c| !is_combining_mark(*c)).collect()
}

/// The same, by the JavaScript engine the Worker runs in: it holds the Unicode tables already, and a Rust copy of
/// them would add about 60 KiB of gzip to the Worker's bundle (measured). `tests/fold_wasm.rs` runs the cases
/// of this module's tests through it.
#[cfg(target_arch = "wasm32")]
fn decompose(text: &str) -> String {
    let marks = js_sys::RegExp::new("\\p{M}", "gu");
    String::from(js_sys::JsString::from(text).normalize("NFKD").replace_by_pattern(&marks, ""))
}

/// Words too common to say what a passage is about: they would rank a passage for its grammar.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "had", "has", "have", "how",
    "in", "into", "is", "it", "its", "of", "on", "or", "our", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with",
];

/// The folded words of `text` that ranking counts: runs of letters and digits, without one-letter words and
/// [`STOPWORDS`], each reduced to a crude singular (`proteins` and `protein` count as one word; `analyses` and
/// `analysis` do not, which costs a little recall and never a false match between unrelated words).
pub fn terms(text: &str) -> Vec<String> {
    fold(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() > 1 || word.chars().all(|c| c.is_ascii_digit()))
        .filter(|word| !word.is_empty() && !STOPWORDS.contains(word))
        .map(singular)
        .collect()
}

fn singular(word: &str) -> String {
    let long = word.chars().count() > 4;
    if long && word.ends_with("ies") {
        format!("{}y", &word[..word.len() - 3])
    } else if long && word.ends_with('s') && !(word.ends_with("ss") || word.ends_with("us") || word.ends_with("is")) {
        word[..word.len() - 1].to_owned()
    } else {
        word.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_matches_what_zotero_s_search_matches() {
        assert_eq!(fold("Café"), "cafe");
        assert_eq!(fold("Ångström"), "angstrom");
        assert_eq!(fold("\u{FB01}nd"), "find", "a ligature decomposes");
        assert_eq!(fold("ＡＢＣ"), "abc", "full-width letters decompose");
        assert_eq!(fold("“quoted” ‘single’"), "\"quoted\" 'single'");
        assert_eq!(fold("2010–2020 — x‐y"), "2010-2020 - x-y");
        assert_eq!(fold("Øresund Straße Łódź"), "oresund strasse lodz");
    }

    #[test]
    fn terms_drop_grammar_and_plurals() {
        assert_eq!(terms("The proteins of Café-society, in 2020!"), ["protein", "cafe", "society", "2020"]);
        assert_eq!(terms("studies glass bus analysis"), ["study", "glass", "bus", "analysis"]);
        assert_eq!(terms("a I x 7"), ["7"]);
    }
}
