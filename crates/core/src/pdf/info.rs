//! What a PDF says about itself: the document information dictionary, its dates, and page labels.

use lopdf::{Dictionary, Document, Object};
use serde::Serialize;

/// Longest info value kept, in characters (a producer can write anything there).
const MAX_VALUE_CHARS: usize = 2_000;
/// Page-label ranges followed at most, and how deep a number tree is descended.
const MAX_LABEL_RANGES: usize = 10_000;
const MAX_TREE_DEPTH: usize = 16;

/// The document's description of itself.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PdfInfo {
    pub page_count: usize,
    /// The PDF version from the header (`1.7`, `2.0`).
    pub version: String,
    pub encrypted: bool,
    pub title: Option<String>,
    pub author: Option<String>,
    pub subject: Option<String>,
    pub keywords: Option<String>,
    /// The program that made the original document (`LaTeX with hyperref`, `Microsoft Word`).
    pub creator: Option<String>,
    /// The program that wrote the PDF (`pdfTeX-1.40.25`, `Acrobat Distiller 22.0`).
    pub producer: Option<String>,
    /// RFC 3339 where the PDF date is well formed (`2024-03-05T14:30:00+01:00`), else as written.
    pub created: Option<String>,
    pub modified: Option<String>,
    /// Whether the document numbers its pages itself (front matter in roman numerals, say).
    pub has_page_labels: bool,
}

pub(super) fn read(doc: &Document, page_count: usize, encrypted: bool) -> PdfInfo {
    let dict = doc
        .trailer
        .get(b"Info")
        .ok()
        .and_then(|info| doc.dereference(info).ok())
        .and_then(|(_, object)| object.as_dict().ok());
    let text = |key: &[u8]| dict.and_then(|d| d.get(key).ok()).and_then(|o| text_of(doc, o));
    PdfInfo {
        page_count,
        version: doc.version.clone(),
        encrypted,
        title: text(b"Title"),
        author: text(b"Author"),
        subject: text(b"Subject"),
        keywords: text(b"Keywords"),
        creator: text(b"Creator"),
        producer: text(b"Producer"),
        created: text(b"CreationDate").map(|d| pdf_date(&d)),
        modified: text(b"ModDate").map(|d| pdf_date(&d)),
        has_page_labels: page_labels_root(doc).is_some(),
    }
}

/// A text string (PDFDocEncoding or UTF-16 with its byte order mark), trimmed; `None` when empty.
fn text_of(doc: &Document, object: &Object) -> Option<String> {
    let object = doc.dereference(object).ok()?.1;
    let decoded = lopdf::decode_text_string(object).ok()?;
    let cleaned: String = decoded.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let trimmed = cleaned.trim();
    (!trimmed.is_empty()).then(|| trimmed.chars().take(MAX_VALUE_CHARS).collect())
}

/// `D:YYYYMMDDHHmmSSOHH'mm'` (every part after the year optional) as RFC 3339; anything else as written.
pub fn pdf_date(raw: &str) -> String {
    parse_pdf_date(raw).unwrap_or_else(|| raw.trim().to_owned())
}

fn parse_pdf_date(raw: &str) -> Option<String> {
    let s = raw.trim();
    let s = s.strip_prefix("D:").unwrap_or(s);
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    if digits.len() < 4 || digits.len() > 14 || !digits.len().is_multiple_of(2) {
        return None;
    }
    let part = |from: usize, default: u32| -> Option<u32> {
        match digits.get(from..from + 2) {
            Some(p) => p.parse().ok(),
            None => Some(default),
        }
    };
    let year: u32 = digits.get(0..4)?.parse().ok()?;
    let (month, day, hour, minute, second) = (part(4, 1)?, part(6, 1)?, part(8, 0)?, part(10, 0)?, part(12, 0)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let zone = &s[digits.len()..];
    let offset = match zone.chars().next() {
        None | Some('Z') => "Z".to_owned(),
        Some(sign @ ('+' | '-')) => {
            let zone_digits: String = zone[1..].chars().filter(char::is_ascii_digit).collect();
            let hours: u32 = zone_digits.get(0..2)?.parse().ok()?;
            let minutes: u32 = zone_digits.get(2..4).map_or(Some(0), |m| m.parse().ok())?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            format!("{sign}{hours:02}:{minutes:02}")
        }
        Some(_) => return None,
    };
    Some(format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{offset}"))
}

/// How a page-label range numbers its pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PageLabelStyle {
    Decimal,
    UpperRoman,
    LowerRoman,
    UpperLetters,
    LowerLetters,
    /// Only the prefix.
    None,
}

struct LabelRange {
    first_page_index: usize,
    style: PageLabelStyle,
    prefix: String,
    start: usize,
}

fn page_labels_root(doc: &Document) -> Option<&Dictionary> {
    let catalog = doc.catalog().ok()?;
    let labels = catalog.get(b"PageLabels").ok()?;
    doc.dereference(labels).ok()?.1.as_dict().ok()
}

/// The label of 1-based `page`, from the catalog's `/PageLabels` number tree.
pub(super) fn page_label(doc: &Document, page: usize) -> Option<String> {
    let root = page_labels_root(doc)?;
    let mut ranges = Vec::new();
    collect_ranges(doc, root, 0, &mut ranges);
    let index = page.checked_sub(1)?;
    let range = ranges.iter().filter(|r| r.first_page_index <= index).max_by_key(|r| r.first_page_index)?;
    let number = range.start.saturating_add(index - range.first_page_index);
    Some(format!("{}{}", range.prefix, format_number(number, range.style)))
}

/// Walks a number tree (`/Nums` pairs, `/Kids` subtrees), bounded in depth and size.
fn collect_ranges(doc: &Document, node: &Dictionary, depth: usize, out: &mut Vec<LabelRange>) {
    if depth > MAX_TREE_DEPTH || out.len() >= MAX_LABEL_RANGES {
        return;
    }
    if let Ok(nums) = node.get(b"Nums").and_then(Object::as_array) {
        for pair in nums.chunks(2) {
            let [key, value] = pair else { break };
            let Ok(first) = key.as_i64().map(usize::try_from) else { continue };
            let Ok(first) = first else { continue };
            let Some(label) = doc.dereference(value).ok().and_then(|(_, o)| o.as_dict().ok()) else { continue };
            out.push(range_of(doc, first, label));
            if out.len() >= MAX_LABEL_RANGES {
                return;
            }
        }
    }
    if let Ok(kids) = node.get(b"Kids").and_then(Object::as_array) {
        for kid in kids {
            if let Some(kid) = doc.dereference(kid).ok().and_then(|(_, o)| o.as_dict().ok()) {
                collect_ranges(doc, kid, depth + 1, out);
            }
        }
    }
}

fn range_of(doc: &Document, first_page_index: usize, label: &Dictionary) -> LabelRange {
    let style = match label.get(b"S").and_then(Object::as_name) {
        Ok(b"D") => PageLabelStyle::Decimal,
        Ok(b"R") => PageLabelStyle::UpperRoman,
        Ok(b"r") => PageLabelStyle::LowerRoman,
        Ok(b"A") => PageLabelStyle::UpperLetters,
        Ok(b"a") => PageLabelStyle::LowerLetters,
        _ => PageLabelStyle::None,
    };
    let prefix = label.get(b"P").ok().and_then(|p| text_of(doc, p)).unwrap_or_default();
    let start = label.get(b"St").and_then(Object::as_i64).ok().and_then(|n| usize::try_from(n).ok()).unwrap_or(1);
    LabelRange { first_page_index, style, prefix, start: start.max(1) }
}

fn format_number(n: usize, style: PageLabelStyle) -> String {
    match style {
        PageLabelStyle::Decimal => n.to_string(),
        PageLabelStyle::UpperRoman => roman(n),
        PageLabelStyle::LowerRoman => roman(n).to_lowercase(),
        PageLabelStyle::UpperLetters => letters(n),
        PageLabelStyle::LowerLetters => letters(n).to_lowercase(),
        PageLabelStyle::None => String::new(),
    }
}

/// Roman numerals as PDF readers write them; past 3999 the thousands repeat `M`.
fn roman(mut n: usize) -> String {
    const NUMERALS: [(usize, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    // A label number comes from the file; a billion Ms would be a memory bomb.
    n = n.min(100_000);
    let mut out = String::new();
    for (value, numeral) in NUMERALS {
        while n >= value {
            out.push_str(numeral);
            n -= value;
        }
    }
    out
}

/// A, B, …, Z, AA, BB, …: the PDF letter style repeats the letter (ISO 32000-1 §12.4.2).
fn letters(n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    let n = n.min(26 * 1000);
    let letter = char::from(b'A' + ((n - 1) % 26) as u8);
    std::iter::repeat_n(letter, (n - 1) / 26 + 1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdf_dates_become_rfc3339() {
        assert_eq!(pdf_date("D:20240305143000+01'00'"), "2024-03-05T14:30:00+01:00");
        assert_eq!(pdf_date("D:20240305143000Z"), "2024-03-05T14:30:00Z");
        assert_eq!(pdf_date("D:2024"), "2024-01-01T00:00:00Z");
        assert_eq!(pdf_date("D:199812231952-08'00"), "1998-12-23T19:52:00-08:00");
        assert_eq!(pdf_date("Tue Mar 5 2024"), "Tue Mar 5 2024", "kept as written");
        assert_eq!(pdf_date("D:20241399"), "D:20241399", "month 13 is not a date");
    }

    #[test]
    fn numbers_in_each_label_style() {
        assert_eq!(roman(1994), "MCMXCIV");
        assert_eq!(format_number(4, PageLabelStyle::LowerRoman), "iv");
        assert_eq!(letters(1), "A");
        assert_eq!(letters(28), "BB");
        assert_eq!(format_number(3, PageLabelStyle::None), "");
        assert!(roman(usize::MAX).len() <= 100);
    }
}
