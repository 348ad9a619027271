//! Text folded for matching the way Zotero's own search folds it: compatibility decomposition (NFKD, so a
//! ligature or a full-width letter reads as its plain letters), diacritics dropped (`café` matches `cafe`),
//! typographic quotes and dashes made plain, letters lower-cased. Only the words used for ranking are folded:
//! the passage a reader gets back is always the original text. The decomposition itself is the platform's
//! ([`crate::platform::Platform::decompose`]): the Worker's JavaScript engine, or Rust's tables natively.

use crate::platform::Decompose;

/// `text` folded (see the module). Letters that no decomposition reaches but Zotero folds too (`ø`, `æ`, `ß`,
/// `ł`, …) are spelled out.
pub fn fold(text: &str, decompose: Decompose) -> String {
    let mut out = String::with_capacity(text.len());
    let decomposed;
    let letters = if text.is_ascii() {
        text
    } else {
        decomposed = decompose(text);
        &decomposed
    };
    for c in letters.chars() {
        if c.is_ascii() {
            out.push(if c == '`' { '\'' } else { c.to_ascii_lowercase() });
            continue;
        }
        let spelled = match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => "'",
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
pub fn terms(text: &str, decompose: Decompose) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(&fold(text, decompose), |term| out.push(term.to_owned()));
    out
}

/// Calls `each` with every word of an already [`fold`]ed text that [`terms`] would give, without allocating
/// for most: ranking a long PDF counts a million characters of words.
pub fn for_each_term(folded: &str, mut each: impl FnMut(&str)) {
    let mut buffer = String::new();
    for word in folded.split(|c: char| !c.is_alphanumeric()) {
        let counted = match word.len() {
            0 => false,
            1 => word.as_bytes()[0].is_ascii_digit(),
            // More than one byte is more than one letter unless it is one non-ASCII letter.
            _ => word.chars().nth(1).is_some() || word.chars().all(|c| c.is_ascii_digit()),
        };
        // Every stopword is short: most words skip the list.
        if !counted || (word.len() <= 5 && STOPWORDS.contains(&word)) {
            continue;
        }
        each(singular(word, &mut buffer));
    }
}

fn singular<'a>(word: &'a str, buffer: &'a mut String) -> &'a str {
    let long = word.chars().count() > 4;
    if long && word.ends_with("ies") {
        buffer.clear();
        buffer.push_str(&word[..word.len() - 3]);
        buffer.push('y');
        buffer
    } else if long && word.ends_with('s') && !(word.ends_with("ss") || word.ends_with("us") || word.ends_with("is")) {
        &word[..word.len() - 1]
    } else {
        word
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::decompose_with_tables as tables;

    #[test]
    fn folding_matches_what_zotero_s_search_matches() {
        assert_eq!(fold("Café", tables), "cafe");
        assert_eq!(fold("Ångström", tables), "angstrom");
        assert_eq!(fold("\u{FB01}nd", tables), "find", "a ligature decomposes");
        assert_eq!(fold("ＡＢＣ", tables), "abc", "full-width letters decompose");
        assert_eq!(fold("“quoted” ‘single’", tables), "\"quoted\" 'single'");
        assert_eq!(fold("2010–2020 — x‐y", tables), "2010-2020 - x-y");
        assert_eq!(fold("Øresund Straße Łódź", tables), "oresund strasse lodz");
    }

    #[test]
    fn terms_drop_grammar_and_plurals() {
        assert_eq!(terms("The proteins of Café-society, in 2020!", tables), ["protein", "cafe", "society", "2020"]);
        assert_eq!(terms("studies glass bus analysis", tables), ["study", "glass", "bus", "analysis"]);
        assert_eq!(terms("a I x 7", tables), ["7"]);
    }
}
