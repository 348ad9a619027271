//! A formatted reference list (APA, Vancouver, Harvard, IEEE, numbered or not) cut into its references, and
//! what can be read off each without a registry: its identifiers, year, first author's family name and title.
//! Guesses are only ever used to search: the tool says how a reference was matched.

use std::collections::HashSet;

use super::{TooLarge, MAX_REFERENCES};
use crate::sources::{detect_each, Identifier};

/// One reference of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedReference {
    /// Its number in the list (`[3]`, `3.`, `3)`), where it has one.
    pub number: Option<u32>,
    /// The reference as written, white space collapsed.
    pub text: String,
    pub identifiers: Vec<Identifier>,
    pub year: Option<String>,
    /// The first author's family name, as far as the style shows it.
    pub first_author: Option<String>,
    pub title: Option<String>,
}

/// The references of `text`: a numbered list is cut at each number (continuation lines join their reference);
/// an unnumbered one at blank lines, or at every line when it has none. More than [`MAX_REFERENCES`] is
/// [`TooLarge::References`], found before any reference is read.
pub fn references(text: &str) -> Result<Vec<ListedReference>, TooLarge> {
    let lines: Vec<&str> = text.lines().collect();
    let numbered = lines.iter().filter(|l| number_of(l).is_some()).count();
    let mut pieces: Vec<(Option<u32>, String)> = Vec::new();
    if numbered >= 1 && numbered * 2 >= lines.iter().filter(|l| !l.trim().is_empty()).count().min(numbered * 2) {
        for line in &lines {
            match number_of(line) {
                Some((number, rest)) => pieces.push((Some(number), rest.to_owned())),
                None => match pieces.last_mut() {
                    Some((_, text)) if !line.trim().is_empty() => {
                        text.push(' ');
                        text.push_str(line.trim());
                    }
                    _ => {}
                },
            }
        }
    } else if lines.iter().any(|l| l.trim().is_empty()) {
        for block in text.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
            pieces.push((None, block.to_owned()));
        }
    } else {
        pieces.extend(lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty()).map(|l| (None, l.to_owned())));
    }
    if pieces.len() > MAX_REFERENCES {
        return Err(TooLarge::References);
    }
    Ok(pieces.into_iter().map(|(number, text)| read(number, &text)).collect())
}

/// `[3] …`, `3. …`, `3) …` → (3, the rest).
fn number_of(line: &str) -> Option<(u32, &str)> {
    let line = line.trim_start();
    let (digits, rest) = match line.strip_prefix('[') {
        Some(inner) => {
            let close = inner.find(']')?;
            (&inner[..close], &inner[close + 1..])
        }
        None => {
            let end = line.find(|c: char| !c.is_ascii_digit())?;
            let rest = line[end..].strip_prefix(['.', ')'])?;
            (&line[..end], rest)
        }
    };
    if digits.is_empty() || digits.len() > 4 || !rest.starts_with(char::is_whitespace) {
        return None;
    }
    Some((digits.parse().ok()?, rest.trim()))
}

fn read(number: Option<u32>, raw: &str) -> ListedReference {
    let text = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = text.to_ascii_lowercase();
    let mut seen = HashSet::new();
    let identifiers = detect_each(&text)
        .filter_map(|(_, found)| found.ok())
        // A bare number (a page, an article number) would read as a PMID or an ISBN: those count only when the
        // reference names them.
        .filter(|id| match id {
            Identifier::Isbn { .. } => lower.contains("isbn"),
            Identifier::Pmid(_) => lower.contains("pmid"),
            _ => true,
        })
        .filter(|id| seen.insert(id.clone()))
        .collect();
    ListedReference {
        number,
        year: year_of(&text),
        first_author: first_author(&text),
        title: title_of(&text),
        identifiers,
        text,
    }
}

/// The publication year: the first 1800–2099 standing alone (or with a letter, `2020a`), preferring one in
/// parentheses (author–date styles).
fn year_of(text: &str) -> Option<String> {
    let years: Vec<(usize, &str)> = text
        .match_indices(|c: char| c.is_ascii_digit())
        .filter_map(|(at, _)| {
            let candidate = text.get(at..at + 4)?;
            let alone_before = text[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
            let after = text[at + 4..].chars().next();
            let alone_after =
                after.is_none_or(|c| !c.is_ascii_digit() && (!c.is_alphabetic() || c.is_ascii_lowercase()));
            let plausible =
                candidate.bytes().all(|b| b.is_ascii_digit()) && matches!(&candidate[..2], "18" | "19" | "20");
            (alone_before && alone_after && plausible).then_some((at, candidate))
        })
        .collect();
    years
        .iter()
        .find(|(at, _)| text[..*at].ends_with('('))
        .or_else(|| years.first())
        .map(|(_, year)| (*year).to_owned())
}

/// The first author's family name: `Smith, J.` (APA, Harvard) or `Smith J` (Vancouver) give `Smith`;
/// `J. Smith` (IEEE) gives `Smith`.
fn first_author(text: &str) -> Option<String> {
    let head = text.split([',', '(']).next()?.trim();
    let initial = |w: &str| w.trim_end_matches('.').chars().all(|c| c.is_uppercase() || c == '-') && w.len() <= 4;
    // A lone author without a comma (Vancouver `Weiss A. Title.`) ends at the initials' full stop after the
    // family name; `J. Smith` has its initials first, so its stops end nothing.
    // Whether a word so far is a name, kept as the words come: asking it of every word again per word made a
    // reference of forty thousand initials take seconds.
    let mut words: Vec<&str> = Vec::new();
    let mut named = false;
    for word in head.split_whitespace() {
        words.push(word);
        named = named || !initial(word);
        if word.ends_with('.') && named {
            break;
        }
    }
    let name = match words.as_slice() {
        [] => return None,
        [one] => *one,
        // `J. Smith`, `J.-P. Sartre and N. Shazeer`: initials first, then the family name.
        [first, rest @ ..] if initial(first) => match rest.iter().find(|w| !initial(w)) {
            Some(name) => *name,
            None => return None,
        },
        // `Smith JA`, `van der Berg A`: the words before the initials.
        words => {
            let end = words.iter().rposition(|w| !initial(w)).map_or(1, |i| i + 1);
            return Some(words[..end].join(" ")).filter(|n| n.chars().any(char::is_alphabetic));
        }
    };
    Some(name.trim_end_matches('.').to_owned()).filter(|n| n.chars().any(char::is_alphabetic))
}

/// The title: quoted (IEEE: `“A title,”`); else around the year (APA `(2007). Title.`, Harvard `(2007) Title.`
/// or `2007. Title.`); else the second sentence, after the authors (Vancouver: `Smith J, Doe A. Title. Journal.`,
/// whose initials carry no dots).
fn title_of(text: &str) -> Option<String> {
    for (open, close) in [('“', '”'), ('"', '"')] {
        if let Some(start) = text.find(open) {
            let from = start + open.len_utf8();
            if let Some(len) = text[from..].find(close) {
                let title = text[from..from + len].trim().trim_end_matches([',', '.']);
                if title.split_whitespace().count() >= 2 {
                    return Some(title.to_owned());
                }
            }
        }
    }
    let pieces: Vec<&str> = text.split(". ").map(str::trim).collect();
    let worded = |t: &str| {
        let t = t.trim().trim_end_matches('.');
        (t.split_whitespace().count() >= 2).then(|| t.to_owned())
    };
    if let Some(year) = year_of(text) {
        for (at, piece) in pieces.iter().enumerate() {
            let Some(found) = piece.find(year.as_str()) else { continue };
            let before = piece[..found].trim_end_matches('(').trim();
            let after = piece[found + year.len()..].trim_start_matches(|c: char| c.is_ascii_lowercase());
            let after = after.trim_start_matches(')').trim();
            if after.is_empty() {
                // `… (2007)` or `… 2007` ending its sentence: the title is the next one.
                return pieces.get(at + 1).and_then(|next| worded(next));
            }
            if before.is_empty() || before.ends_with(',') {
                // `(2007) Title of work`: the rest of the sentence.
                if let Some(title) = worded(after) {
                    return Some(title);
                }
            }
            break;
        }
    }
    pieces.get(1).and_then(|second| worded(second))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_numbered_vancouver_list() {
        let list = "1. Jumper J, Evans R, Pritzel A. Highly accurate protein structure prediction with AlphaFold.\n   \
                    Nature. 2021;596(7873):583-9. doi:10.1038/s41586-021-03819-2\n\
                    2. Lin Z, Akin H. Evolutionary-scale prediction of atomic-level protein structure with a language \
                    model. Science. 2023;379:1123-30.";
        let refs = references(list).unwrap();
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[0].number, Some(1));
        assert_eq!(refs[0].first_author.as_deref(), Some("Jumper"));
        assert_eq!(refs[0].year.as_deref(), Some("2021"));
        assert_eq!(refs[0].title.as_deref(), Some("Highly accurate protein structure prediction with AlphaFold"));
        assert_eq!(refs[0].identifiers, vec![Identifier::Doi("10.1038/s41586-021-03819-2".into())]);
        assert_eq!(
            refs[1].title.as_deref(),
            Some("Evolutionary-scale prediction of atomic-level protein structure with a language model")
        );
    }

    #[test]
    fn apa_and_ieee_entries() {
        let apa = "Lobell, D. B., & Field, C. B. (2007). Global scale climate–crop yield relationships and the \
                   impacts of recent warming. Environmental Research Letters, 2(1), 014002.\n\n\
                   Vaswani, A., Shazeer, N. (2017a). Attention is all you need. arXiv:1706.03762";
        let refs = references(apa).unwrap();
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[0].number, None);
        assert_eq!(refs[0].first_author.as_deref(), Some("Lobell"));
        assert_eq!(refs[0].year.as_deref(), Some("2007"));
        assert_eq!(
            refs[0].title.as_deref(),
            Some("Global scale climate–crop yield relationships and the impacts of recent warming")
        );
        assert_eq!(refs[1].year.as_deref(), Some("2017"));
        assert_eq!(refs[1].title.as_deref(), Some("Attention is all you need"));
        assert!(matches!(refs[1].identifiers.as_slice(), [Identifier::Arxiv { .. }]), "{:?}", refs[1].identifiers);

        let ieee = "[1] A. Vaswani and N. Shazeer, “Attention is all you need,” in Proc. NeurIPS, 2017, pp. 5998–6008.";
        let refs = references(ieee).unwrap();
        assert_eq!(refs[0].number, Some(1));
        assert_eq!(refs[0].first_author.as_deref(), Some("Vaswani"));
        assert_eq!(refs[0].title.as_deref(), Some("Attention is all you need"));
        assert_eq!(refs[0].year.as_deref(), Some("2017"));
    }

    #[test]
    fn a_lone_vancouver_author_ends_at_the_initials() {
        for (text, author) in [
            ("1. Weiss A. Folding intermediates seen by the lab. J Lab Res. 2024;1:1-9.", "Weiss"),
            ("2. Weiss AB. Folding intermediates seen by the lab. J Lab Res. 2024;1:1-9.", "Weiss"),
            ("3. J. Smith and N. Jones. A title of a paper. In Proc. 2020.", "Smith"),
            ("4. van der Berg A, Smith B. A title of a paper. Nature. 2020;1:2.", "van der Berg"),
        ] {
            let found = references(text).unwrap();
            assert_eq!(found[0].first_author.as_deref(), Some(author), "{text}");
        }
        let lone = &references("1. Weiss A. Folding intermediates seen by the lab. J Lab Res. 2024;1:1-9.").unwrap()[0];
        assert_eq!(lone.title.as_deref(), Some("Folding intermediates seen by the lab"));
    }
}
