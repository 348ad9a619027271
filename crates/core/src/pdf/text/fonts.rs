//! Fonts as the text layer needs them: how a string splits into character codes, what each code reads as, and
//! how wide it is. Read once per extraction, keyed by the font dictionary's address.

use std::collections::HashMap;

use lopdf::{Dictionary, Document, Object};

use super::cmap::ToUnicode;
use super::encoding;

/// Widths (`/W` ranges) and codes kept per font at most: real fonts have a few hundred.
const MAX_WIDTH_RANGES: usize = 65_536;

/// One character code of a string.
pub(super) struct Code {
    pub code: u32,
    /// A single-byte code 32, to which word spacing (`Tw`) applies.
    pub is_space: bool,
}

enum Widths {
    /// Simple fonts: `/Widths` from `/FirstChar`, and the width of codes outside it.
    Simple { first: u32, widths: Vec<f64>, missing: f64 },
    /// Composite fonts: `/W` ranges over CIDs, and `/DW`.
    Composite { ranges: Vec<(u32, u32, f64)>, default: f64 },
}

pub(super) struct Font {
    /// Two-byte codes (Type0 with Identity-H/V and the like), else one byte per code.
    two_byte: bool,
    /// Simple fonts: what each of the 256 codes reads as, worked out once.
    table: Vec<String>,
    /// Composite fonts: the `/ToUnicode` map.
    to_unicode: Option<ToUnicode>,
    widths: Widths,
    /// Glyph space to text space: 1/1000 except for Type3 fonts, whose `/FontMatrix` says.
    scale: f64,
}

impl Font {
    pub(super) fn codes(&self, bytes: &[u8]) -> Vec<Code> {
        if self.two_byte {
            bytes
                .chunks(2)
                .map(|pair| {
                    let code = pair.iter().fold(0u32, |acc, b| acc << 8 | u32::from(*b));
                    Code { code, is_space: false }
                })
                .collect()
        } else {
            bytes.iter().map(|&b| Code { code: u32::from(b), is_space: b == 32 }).collect()
        }
    }

    /// The width of `code` in text space units (multiply by the font size).
    pub(super) fn width(&self, code: u32) -> f64 {
        let glyph = match &self.widths {
            Widths::Simple { first, widths, missing } => {
                code.checked_sub(*first).and_then(|i| widths.get(i as usize)).copied().unwrap_or(*missing)
            }
            Widths::Composite { ranges, default } => {
                ranges.iter().find(|(lo, hi, _)| (*lo..=*hi).contains(&code)).map_or(*default, |(_, _, w)| *w)
            }
        };
        glyph * self.scale
    }

    /// What `code` reads as. A code nothing maps reads as nothing, as in pdf.js (CJK fonts without ToUnicode lose
    /// their text there too).
    pub(super) fn text(&self, code: &Code) -> String {
        if !self.two_byte {
            return self.table.get(code.code as usize).cloned().unwrap_or_default();
        }
        self.to_unicode.as_ref().and_then(|map| map.get(code.code)).map(str::to_owned).unwrap_or_default()
    }
}

/// The fonts of one extraction.
pub(super) struct FontCache {
    max_stream_bytes: usize,
    fonts: HashMap<usize, Option<Font>>,
}

impl FontCache {
    pub(super) fn new(max_stream_bytes: usize) -> Self {
        Self { max_stream_bytes, fonts: HashMap::new() }
    }

    /// The font of `dict`, read the first time it is asked for; `None` for a dictionary that is no usable font.
    pub(super) fn get(&mut self, doc: &Document, dict: &Dictionary) -> Option<&Font> {
        // The document is not changed while it is read, so a dictionary's address names it.
        let key = std::ptr::from_ref(dict) as usize;
        let max = self.max_stream_bytes;
        self.fonts.entry(key).or_insert_with(|| read_font(doc, dict, max)).as_ref()
    }
}

fn read_font(doc: &Document, dict: &Dictionary, max_stream_bytes: usize) -> Option<Font> {
    let subtype = dict.get(b"Subtype").and_then(Object::as_name).ok()?;
    let to_unicode = to_unicode(doc, dict, max_stream_bytes);
    if subtype == b"Type0" {
        let descendant = dict
            .get(b"DescendantFonts")
            .ok()
            .and_then(|d| doc.dereference(d).ok())
            .and_then(|(_, d)| d.as_array().ok())
            .and_then(|a| a.first())
            .and_then(|d| doc.dereference(d).ok())
            .and_then(|(_, d)| d.as_dict().ok());
        let default = descendant.and_then(|d| num(doc, d.get(b"DW").ok())).unwrap_or(1000.0);
        let ranges = descendant.map(|d| cid_widths(doc, d)).unwrap_or_default();
        return Some(Font {
            two_byte: true,
            table: Vec::new(),
            to_unicode,
            widths: Widths::Composite { ranges, default },
            scale: 0.001,
        });
    }
    let table = simple_table(doc, dict, to_unicode.as_ref(), max_stream_bytes);
    let first =
        dict.get(b"FirstChar").ok().and_then(|o| num(doc, Some(o))).map_or(0, |f| f.clamp(0.0, 65_535.0) as u32);
    let widths: Vec<f64> = dict
        .get(b"Widths")
        .ok()
        .and_then(|w| doc.dereference(w).ok())
        .and_then(|(_, w)| w.as_array().ok())
        .map(|a| a.iter().take(MAX_WIDTH_RANGES).map(|w| num(doc, Some(w)).unwrap_or(0.0)).collect())
        .unwrap_or_default();
    let descriptor =
        dict.get(b"FontDescriptor").ok().and_then(|d| doc.dereference(d).ok()).and_then(|(_, d)| d.as_dict().ok());
    // The standard 14 fonts come without widths; half an em is the average glyph of Helvetica and Times.
    let missing = descriptor
        .and_then(|d| num(doc, d.get(b"MissingWidth").ok()))
        .filter(|w| *w > 0.0)
        .unwrap_or(if widths.is_empty() { 500.0 } else { 0.0 });
    let scale = if subtype == b"Type3" {
        dict.get(b"FontMatrix")
            .ok()
            .and_then(|m| doc.dereference(m).ok())
            .and_then(|(_, m)| m.as_array().ok())
            .and_then(|m| m.first())
            .and_then(|a| num(doc, Some(a)))
            .filter(|a| a.is_finite() && *a != 0.0)
            .map_or(0.001, f64::abs)
    } else {
        0.001
    };
    Some(Font { two_byte: false, table, to_unicode: None, widths: Widths::Simple { first, widths, missing }, scale })
}

/// What each code of a simple font reads as: its `/ToUnicode` map where that knows the code, else its encoding.
/// A Type1 font with no `/Encoding` (TeX's Computer Modern fonts, for one) uses the encoding built into its
/// font program, where `fi` is code 12 rather than standard 0xAE: that encoding is read from the embedded
/// program, with the font's own `/Differences` on top.
fn simple_table(
    doc: &Document,
    dict: &Dictionary,
    to_unicode: Option<&ToUnicode>,
    max_stream_bytes: usize,
) -> Vec<String> {
    if to_unicode.is_none() && is_dingbats(dict) {
        // Dingbats are symbols (bullets, arrows, check marks), not letters: read with the standard encoding they
        // would come out as stray letters (`l` for a bullet), so they read as nothing, spaces aside.
        return (0..=255u8).map(|code| if code == b' ' { " ".to_owned() } else { String::new() }).collect();
    }
    let own = dict.get(b"Encoding").ok().and_then(|e| doc.dereference(e).ok()).map(|(_, e)| e);
    let base_font = dict.get(b"BaseFont").and_then(Object::as_name).unwrap_or_default();
    let (base, differences) = match own {
        Some(Object::Name(name)) => (encoding::named(name), None),
        Some(Object::Dictionary(enc)) => (
            enc.get(b"BaseEncoding").and_then(Object::as_name).ok().and_then(encoding::named),
            enc.get(b"Differences").ok().and_then(|d| doc.dereference(d).ok()).and_then(|(_, d)| d.as_array().ok()),
        ),
        _ => (None, None),
    };
    let base = base.unwrap_or_else(|| encoding::default_for(base_font));
    let mut table: Vec<String> = (0..=255u8).map(|code| encoding::base_text(base, code)).collect();
    // A name the glyph list does not know (`/a46` in a TeX bitmap font, `/g12`) keeps the base encoding's
    // reading of its code, as pdf.js and lopdf do: for those fonts the code is the character more often than not.
    for (code, name) in builtin_encoding(doc, dict, max_stream_bytes).unwrap_or_default() {
        if let Some(text) = encoding::glyph_text(&String::from_utf8_lossy(&name)) {
            table[usize::from(code)] = text;
        }
    }
    // `[code /name /name … code /name …]`: each name takes the next code.
    let mut code: Option<usize> = None;
    for item in differences.into_iter().flatten() {
        match doc.dereference(item).map(|(_, o)| o) {
            Ok(Object::Integer(n)) => code = usize::try_from(*n).ok().filter(|n| *n < 256),
            Ok(Object::Name(name)) => {
                if let Some(at) = code {
                    if name.as_slice() == b".notdef" {
                        table[at].clear();
                    } else if let Some(text) = encoding::glyph_text(&String::from_utf8_lossy(name)) {
                        table[at] = text;
                    }
                    code = Some(at + 1).filter(|n| *n < 256);
                }
            }
            _ => {}
        }
    }
    if let Some(map) = to_unicode {
        for (code, text) in table.iter_mut().enumerate() {
            if let Some(mapped) = map.get(code as u32) {
                mapped.clone_into(text);
            }
        }
    }
    table
}

/// Whether the font is ITC Zapf Dingbats (one of the 14 standard fonts, often not embedded).
fn is_dingbats(dict: &Dictionary) -> bool {
    let Ok(name) = dict.get(b"BaseFont").and_then(Object::as_name) else { return false };
    // A subset font's name starts with six capitals and `+`.
    let name = name.iter().position(|&b| b == b'+').map_or(name, |plus| &name[plus + 1..]);
    name == b"ZapfDingbats" || name.ends_with(b"Dingbats")
}

/// The encoding a Type1 font program declares in its clear-text part (`dup 12 /fi put`), when the font has no
/// `/Encoding` of its own or one without `/BaseEncoding`. `None` for standard-encoded or non-Type1 programs.
fn builtin_encoding(doc: &Document, dict: &Dictionary, max_stream_bytes: usize) -> Option<Vec<(u8, Vec<u8>)>> {
    let has_base = match dict.get(b"Encoding").ok().and_then(|e| doc.dereference(e).ok()).map(|(_, e)| e) {
        None => false,
        Some(Object::Dictionary(enc)) => enc.has(b"BaseEncoding"),
        Some(_) => true,
    };
    if has_base {
        return None;
    }
    let descriptor =
        dict.get(b"FontDescriptor").ok().and_then(|d| doc.dereference(d).ok()).and_then(|(_, d)| d.as_dict().ok())?;
    let program =
        descriptor.get(b"FontFile").ok().and_then(|f| doc.dereference(f).ok()).and_then(|(_, f)| f.as_stream().ok())?;
    let bytes = match program.decompressed_content_with_limit(max_stream_bytes) {
        Ok(bytes) => bytes,
        Err(_) => program.content.clone(),
    };
    let clear_len = program
        .dict
        .get(b"Length1")
        .and_then(Object::as_i64)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(bytes.len())
        .min(bytes.len());
    let clear = &bytes[..clear_len];
    let clear = match clear.windows(5).position(|w| w == b"eexec") {
        Some(end) => &clear[..end],
        None => clear,
    };
    let text = String::from_utf8_lossy(clear);
    if text.contains("/Encoding StandardEncoding") {
        return None;
    }
    let tokens: Vec<&str> = text.split_ascii_whitespace().collect();
    let mut entries = Vec::new();
    for window in tokens.windows(4) {
        let [dup, code, name, put] = window else { continue };
        if *dup != "dup" || *put != "put" {
            continue;
        }
        let (Ok(code), Some(name)) = (code.parse::<u8>(), name.strip_prefix('/')) else { continue };
        entries.push((code, name.as_bytes().to_vec()));
    }
    Some(entries)
}

/// The font's `/ToUnicode` map, when it has one that decodes within the stream limit.
fn to_unicode(doc: &Document, dict: &Dictionary, max_stream_bytes: usize) -> Option<ToUnicode> {
    let (_, object) = doc.dereference(dict.get(b"ToUnicode").ok()?).ok()?;
    let stream = object.as_stream().ok()?;
    let bytes = if stream.dict.has(b"Filter") {
        stream.decompressed_content_with_limit(max_stream_bytes).ok()?
    } else {
        stream.content.clone()
    };
    Some(ToUnicode::parse(&bytes))
}

/// `/W` of a CIDFont: `[c [w1 w2 …]]` and `[c_first c_last w]` entries.
fn cid_widths(doc: &Document, descendant: &Dictionary) -> Vec<(u32, u32, f64)> {
    let Some(array) =
        descendant.get(b"W").ok().and_then(|w| doc.dereference(w).ok()).and_then(|(_, w)| w.as_array().ok())
    else {
        return Vec::new();
    };
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < array.len() && ranges.len() < MAX_WIDTH_RANGES {
        let Some(first) = num(doc, array.get(i)).map(|f| f.clamp(0.0, f64::from(u32::MAX)) as u32) else { break };
        match array.get(i + 1).and_then(|o| doc.dereference(o).ok()).map(|(_, o)| o) {
            Some(Object::Array(list)) => {
                for (offset, width) in list.iter().take(MAX_WIDTH_RANGES).enumerate() {
                    let code = first.saturating_add(offset as u32);
                    ranges.push((code, code, num(doc, Some(width)).unwrap_or(0.0)));
                }
                i += 2;
            }
            Some(last) => {
                let Some(last) = num(doc, Some(last)).map(|l| l.clamp(0.0, f64::from(u32::MAX)) as u32) else { break };
                let width = num(doc, array.get(i + 2)).unwrap_or(0.0);
                ranges.push((first, last, width));
                i += 3;
            }
            None => break,
        }
    }
    ranges
}

/// A number, through a reference if need be; clamped to what a width can mean.
fn num(doc: &Document, object: Option<&Object>) -> Option<f64> {
    let object = doc.dereference(object?).ok()?.1;
    let value = match object {
        Object::Integer(i) => *i as f64,
        Object::Real(r) => f64::from(*r),
        _ => return None,
    };
    value.is_finite().then(|| value.clamp(-1.0e6, 1.0e6))
}
