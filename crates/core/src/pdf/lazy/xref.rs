//! Reading a PDF's cross-reference data and single objects without parsing the whole file.
//!
//! lopdf reads objects on demand internally but exposes only its eager loader, so this module finds objects
//! itself (the `startxref` chain: tables, cross-reference streams, hybrid files) and hands each object's text
//! to lopdf's one public object parser, the object-stream reader: an object is parsed as the single member of
//! a made-up object stream. Anything unexpected gives up (`None`), and the caller falls back to lopdf's eager
//! loader, which repairs what it can.

use std::collections::{HashMap, HashSet};

use lopdf::{Dictionary, Object, ObjectStream, Stream};

/// `/Prev` links followed at most (incremental updates; real files have a handful).
const MAX_SECTIONS: usize = 256;
/// Objects the cross-reference data may list at most: one per 8 bytes of file (real files have one per 70–200),
/// and never more than a million (pgfmanual, 1,321 pages: 66,857). Past it the file goes to the eager loader,
/// whose memory estimate refuses it.
fn max_entries(file_len: usize) -> usize {
    (file_len / 8).clamp(1024, 1_000_000)
}

/// Where an object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// At this byte offset, as `N G obj`.
    Offset(usize),
    /// The `index`-th member of the object stream `container`.
    InStream { container: u32, index: usize },
}

/// The merged cross-reference data: the newest entry of each object, and the newest trailer's keys.
#[derive(Debug)]
pub(super) struct Xref {
    pub entries: HashMap<u32, Entry>,
    pub trailer: Dictionary,
}

/// Reads the cross-reference chain from the last `startxref`. `bytes` starts at `%PDF-` (offsets count from
/// there, as lopdf counts them).
pub(super) fn read(bytes: &[u8], max_stream_bytes: usize) -> Option<Xref> {
    let mut xref = Xref { entries: HashMap::new(), trailer: Dictionary::new() };
    let limit = max_entries(bytes.len());
    let mut next = Some(startxref(bytes)?);
    let mut seen = HashSet::new();
    while let Some(offset) = next.take() {
        if seen.len() >= MAX_SECTIONS || !seen.insert(offset) {
            break;
        }
        let trailer = section(bytes, offset, &mut xref.entries, max_stream_bytes)?;
        if xref.entries.len() > limit {
            return None;
        }
        if let Ok(stream_at) = trailer.get(b"XRefStm").and_then(Object::as_i64) {
            // A hybrid file: the table hides compressed objects; its companion stream lists them.
            let stream_at = usize::try_from(stream_at).ok()?;
            if seen.insert(stream_at) {
                section(bytes, stream_at, &mut xref.entries, max_stream_bytes)?;
            }
            if xref.entries.len() > limit {
                return None;
            }
        }
        next = trailer.get(b"Prev").and_then(Object::as_i64).ok().and_then(|p| usize::try_from(p).ok());
        for (key, value) in trailer {
            if !xref.trailer.has(&key) && !matches!(key.as_slice(), b"Prev" | b"XRefStm") {
                xref.trailer.set(key, value);
            }
        }
    }
    (!xref.entries.is_empty() && xref.trailer.has(b"Root")).then_some(xref)
}

/// One section at `offset` (a table with its trailer, or a cross-reference stream): its entries join `entries`
/// where an object has none yet (newer sections come first); its trailer dictionary is returned.
fn section(
    bytes: &[u8],
    offset: usize,
    entries: &mut HashMap<u32, Entry>,
    max_stream_bytes: usize,
) -> Option<Dictionary> {
    let at = skip_space(bytes, offset);
    if bytes.get(at..)?.starts_with(b"xref") {
        return table(bytes, at + 4, entries);
    }
    let (_, object) = top_level(bytes, at, |_| None)?;
    let Object::Stream(stream) = object else { return None };
    let decoded = stream.decompressed_content_with_limit(max_stream_bytes).ok()?;
    let widths: Vec<usize> = array_of_ints(stream.dict.get(b"W").ok()?)?;
    let [w1, w2, w3] = widths[..] else { return None };
    let size = stream.dict.get(b"Size").and_then(Object::as_i64).ok().and_then(|n| usize::try_from(n).ok())?;
    let index = match stream.dict.get(b"Index") {
        Ok(index) => array_of_ints(index)?,
        Err(_) => vec![0, size],
    };
    let row = w1 + w2 + w3;
    if row == 0 || w1 > 4 || w2 > 8 || w3 > 8 {
        return None;
    }
    let mut rows = decoded.chunks_exact(row);
    let limit = max_entries(bytes.len());
    for pair in index.chunks_exact(2) {
        let (first, count) = (pair[0], pair[1]);
        for n in 0..count {
            let Some(fields) = rows.next() else { break };
            let kind = if w1 == 0 { 1 } else { be(&fields[..w1]) };
            let (f2, f3) = (be(&fields[w1..w1 + w2]), be(&fields[w1 + w2..]));
            let Ok(id) = u32::try_from(first + n) else { continue };
            let entry = match kind {
                1 => Entry::Offset(f2),
                2 => Entry::InStream { container: u32::try_from(f2).ok()?, index: f3 },
                _ => continue,
            };
            entries.entry(id).or_insert(entry);
            if entries.len() > limit {
                return None;
            }
        }
    }
    Some(stream.dict)
}

/// A classic table (`start count` headers, 20-byte rows) and the `trailer` dictionary after it.
fn table(bytes: &[u8], mut at: usize, entries: &mut HashMap<u32, Entry>) -> Option<Dictionary> {
    loop {
        at = skip_space(bytes, at);
        let rest = bytes.get(at..)?;
        if rest.starts_with(b"trailer") {
            let dict = direct(bytes.get(at + 7..)?, 0)?;
            return match dict {
                Object::Dictionary(dict) => Some(dict),
                _ => None,
            };
        }
        let (first, next) = number(bytes, at)?;
        let (count, next) = number(bytes, next)?;
        at = next;
        for n in 0..count.min(max_entries(bytes.len()) + 1) {
            let (offset, next) = number(bytes, at)?;
            let (_generation, next) = number(bytes, next)?;
            let kind_at = skip_space(bytes, next);
            let kind = *bytes.get(kind_at)?;
            at = kind_at + 1;
            if kind == b'n' && offset > 0 {
                if let Ok(id) = u32::try_from(first + n) {
                    entries.entry(id).or_insert(Entry::Offset(offset));
                }
            } else if kind != b'f' {
                return None;
            }
        }
    }
}

/// The object at `offset` (`N G obj … endobj`): its id and value. A stream's `/Length`, when it is a
/// reference, is resolved through `length_of`. Image data is left out: the text layer never reads it.
pub(super) fn top_level(
    bytes: &[u8],
    offset: usize,
    length_of: impl FnOnce(lopdf::ObjectId) -> Option<usize>,
) -> Option<(lopdf::ObjectId, Object)> {
    let (id, at) = number(bytes, offset)?;
    let (generation, at) = number(bytes, at)?;
    let at = skip_space(bytes, at);
    if !bytes.get(at..)?.starts_with(b"obj") {
        return None;
    }
    let body_at = at + 3;
    let id = (u32::try_from(id).ok()?, u16::try_from(generation).ok()?);
    let body = bytes.get(body_at..)?;
    let end = find(body, b"endobj").unwrap_or(body.len());
    let Some(keyword) = find(&body[..end], b"stream").filter(|&k| k > 0 && is_stream_keyword(body, k)) else {
        let object = direct(&body[..end], id.0)?;
        return Some((id, object));
    };
    let dict = direct(&body[..keyword], id.0)?;
    let Object::Dictionary(dict) = dict else { return None };
    let mut start = keyword + 6;
    if body.get(start) == Some(&b'\r') {
        start += 1;
    }
    if body.get(start) == Some(&b'\n') {
        start += 1;
    }
    let declared = match dict.get(b"Length") {
        Ok(Object::Integer(n)) => usize::try_from(*n).ok(),
        Ok(Object::Reference(length_id)) => length_of(*length_id),
        _ => None,
    };
    // Trust /Length only when `endstream` follows it; else look for `endstream` (what readers do).
    let content_end = declared
        .map(|len| start.saturating_add(len))
        .filter(|&e| body.get(skip_space(body, e)..).is_some_and(|r| r.starts_with(b"endstream")))
        .or_else(|| find(body.get(start..)?, b"endstream").map(|e| trim_eol(body, start, start + e)))?;
    let is_image = dict.get(b"Subtype").and_then(Object::as_name).is_ok_and(|s| s == b"Image");
    let content = if is_image { Vec::new() } else { body.get(start..content_end)?.to_vec() };
    Some((id, Object::Stream(Stream::new(dict, content))))
}

/// Parses one direct object from `text` with lopdf's object-stream reader: `text` becomes the only member of
/// a made-up object stream numbered `id`.
pub(super) fn direct(text: &[u8], id: u32) -> Option<Object> {
    let header = format!("{id} 0 ");
    let mut content = Vec::with_capacity(header.len() + text.len());
    content.extend_from_slice(header.as_bytes());
    content.extend_from_slice(text);
    let stream = Stream::new(lopdf::dictionary! { "N" => 1, "First" => header.len() as i64 }, content);
    let mut parsed = ObjectStream::new_with_limit(&stream, None).ok()?;
    parsed.objects.remove(&(id, 0))
}

/// The members of an object stream: (object number, where its text starts) in order, and where the objects
/// begin (`/First`), from its decoded content.
pub(super) fn members(stream: &Stream, decoded: &[u8]) -> Option<(Vec<(u32, usize)>, usize)> {
    let first = stream.dict.get(b"First").and_then(Object::as_i64).ok().and_then(|f| usize::try_from(f).ok())?;
    let header = std::str::from_utf8(decoded.get(..first)?).ok()?;
    let numbers: Vec<usize> = header.split_ascii_whitespace().map_while(|n| n.parse().ok()).collect();
    let pairs = numbers.chunks_exact(2).filter_map(|p| Some((u32::try_from(p[0]).ok()?, p[1]))).collect();
    Some((pairs, first))
}

fn array_of_ints(object: &Object) -> Option<Vec<usize>> {
    object.as_array().ok()?.iter().map(|o| o.as_i64().ok().and_then(|n| usize::try_from(n).ok())).collect()
}

/// A big-endian unsigned number of up to 8 bytes.
fn be(bytes: &[u8]) -> usize {
    bytes.iter().fold(0usize, |acc, b| acc.wrapping_shl(8) | usize::from(*b))
}

/// The number after the last `startxref` (the memory estimate of `pdf/limits.rs` reads it too).
pub(in crate::pdf) fn startxref(bytes: &[u8]) -> Option<usize> {
    let tail_at = bytes.len().saturating_sub(1024);
    let at = bytes[tail_at..].windows(9).rposition(|w| w == b"startxref")?;
    number(bytes, tail_at + at + 9).map(|(n, _)| n)
}

/// A non-negative integer after optional whitespace (and comments): its value and where it ends.
fn number(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let at = skip_space(bytes, at);
    let digits = bytes.get(at..)?.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 15 {
        return None;
    }
    let value = std::str::from_utf8(&bytes[at..at + digits]).ok()?.parse().ok()?;
    Some((value, at + digits))
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(&b) = bytes.get(at) {
        match b {
            b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0' => at += 1,
            b'%' => {
                while bytes.get(at).is_some_and(|&c| c != b'\n' && c != b'\r') {
                    at += 1;
                }
            }
            _ => break,
        }
    }
    at
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `stream` as the keyword that starts stream data: after the dictionary, followed by an end of line.
fn is_stream_keyword(body: &[u8], at: usize) -> bool {
    let before = body[at - 1];
    let after = body.get(at + 6).copied();
    (before.is_ascii_whitespace() || before == b'>') && matches!(after, Some(b'\r' | b'\n'))
}

/// The end of stream data found by searching: before the end of line that precedes `endstream`.
fn trim_eol(body: &[u8], start: usize, mut end: usize) -> usize {
    if end > start && body[end - 1] == b'\n' {
        end -= 1;
    }
    if end > start && body[end - 1] == b'\r' {
        end -= 1;
    }
    end
}
