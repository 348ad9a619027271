//! The `<KEY>.zip` Zotero Desktop uploads: one entry, the stored file, compressed with Deflate. On the way in,
//! Zotero's own bookkeeping entries (`.zotero-ft-cache`, `.zotero-ft-info`), dot files, directories and macOS
//! resource forks (`__MACOSX/`) are not the attachment. Limits are checked from the archive's directory before
//! anything is inflated, and again while inflating (a header can lie about sizes).
//!
//! rawzip reads and writes the zip structure; Deflate is flate2's and the CRC-32 is [`crc32`] (the size budget:
//! crates/core/Cargo.toml).

use std::io::{Read, Write};

use flate2::bufread::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;
use md5::{Digest, Md5};
use rawzip::time::UtcDateTime;
use rawzip::{
    CompressionMethod, DataDescriptorOutput, ZipArchive, ZipArchiveWriter, ZipFileHeaderRecord, ZipSliceArchive,
};

/// What an archive may hold before it is refused unread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZipLimits {
    /// Entries in the archive (Zotero writes one, plus at most two bookkeeping files).
    pub max_entries: usize,
    /// The stored file, inflated.
    pub max_file_bytes: u64,
    /// Inflated size per compressed byte: text compresses about 3–10×, PDFs hardly at all; a bomb, thousands.
    pub max_ratio: u64,
}

impl Default for ZipLimits {
    /// One file of at most 64 MiB (the size the PDF engine and the text readers accept at all), 1,000 entries,
    /// a ratio of 100.
    fn default() -> Self {
        Self { max_entries: 1_000, max_file_bytes: 64 * 1024 * 1024, max_ratio: 100 }
    }
}

/// The attachment file found in an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFile {
    /// Its name in the archive (without any folder part).
    pub filename: String,
    pub data: Vec<u8>,
}

/// Why an archive could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    #[error(
        "the attachment's file on WebDAV is not a readable zip archive ({detail}); open the item in Zotero Desktop \
         and let it sync the file again"
    )]
    NotAZip { detail: String },
    #[error(
        "the attachment's zip on WebDAV holds no file, only bookkeeping entries ({names}); let Zotero Desktop sync \
         the attachment again"
    )]
    NoFile { names: String },
    /// Over [`ZipLimits`]; the text Zotero Desktop indexed is the way to the file's words (a caller with a
    /// search over that index says so).
    #[error(
        "the attachment's zip on WebDAV is over this server's limit ({detail}); read the text Zotero indexed instead"
    )]
    OverLimit { detail: String },
    #[error("the attachment's zip on WebDAV is encrypted or uses a compression this server does not read ({detail})")]
    Unsupported { detail: String },
    #[error("could not build the zip archive for upload ({detail}); nothing was uploaded")]
    Pack { detail: String },
}

/// The MD5 of `data` as Zotero records it: 32 lowercase hex digits.
pub fn md5_hex(data: &[u8]) -> String {
    Md5::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// Packs `data` as Zotero Desktop does: a single Deflate entry named `filename`, dated `mtime_ms` (milliseconds
/// since the epoch; the zip format keeps local time to two seconds, between 1980 and 2107).
///
/// The name goes through rawzip's conformant form (`\` becomes `/`, `..` and drive letters go): a name Zotero
/// accepts has none of those, and the form sets the UTF-8 flag that non-ASCII names need for readers that
/// otherwise take them as CP437. The entry has a data descriptor and an extended timestamp field (UTC seconds),
/// both standard; zip64 records appear only past 4 GiB, which never reaches here.
pub fn pack(filename: &str, data: &[u8], mtime_ms: u64) -> Result<Vec<u8>, ArchiveError> {
    let pack_error = |e: &dyn std::fmt::Display| ArchiveError::Pack { detail: e.to_string() };
    let mut zip = Vec::with_capacity(data.len() / 2 + 256);
    let mut writer = ZipArchiveWriter::new(&mut zip);
    let mut file = writer.new_file(filename).compression_method(CompressionMethod::DEFLATE);
    if let Some(time) = zip_time(mtime_ms) {
        file = file.last_modified(time);
    }
    let (mut entry, _) = file.start().map_err(|e| pack_error(&e))?;
    let mut deflater = DeflateEncoder::new(&mut entry, Compression::new(6));
    deflater.write_all(data).map_err(|e| pack_error(&e))?;
    deflater.finish().map_err(|e| pack_error(&e))?;
    // The CRC and size are given rather than counted by rawzip's data writer, which would bring its 16 KiB table.
    entry.finish(DataDescriptorOutput::new(crc32(data), data.len() as u64)).map_err(|e| pack_error(&e))?;
    writer.finish().map_err(|e| pack_error(&e))?;
    Ok(zip)
}

/// The attachment file in `bytes`: the entry named `preferred` (the item's `filename`) when there is one,
/// else the first entry that is not bookkeeping, in archive order.
pub fn unpack(bytes: &[u8], preferred: Option<&str>, limits: &ZipLimits) -> Result<StoredFile, ArchiveError> {
    // The count every end record declares is checked before the directory is walked at all: walking it costs no
    // memory, but a directory of millions of entries still costs time, and a reader other than rawzip might take
    // another of the end records for the real one.
    if let Some(declared) = declared_entries(bytes).filter(|&n| n > limits.max_entries as u64) {
        return Err(ArchiveError::OverLimit {
            detail: format!("{declared} entries declared, at most {}", limits.max_entries),
        });
    }
    let not_a_zip = |e: rawzip::Error| ArchiveError::NotAZip { detail: e.to_string() };
    let archive = ZipArchive::from_slice(bytes).map_err(not_a_zip)?;
    // One pass over the directory, whose records rawzip lends one at a time: only the first candidate, the
    // preferred one and the names of the skipped are kept. Past the limit entries are only counted, so that the
    // refusal can say how many there are.
    let mut entries = 0usize;
    let (mut first, mut wanted): (Option<(ZipFileHeaderRecord<'_>, String)>, _) = (None, None);
    let mut skipped = Vec::new();
    for record in archive.entries() {
        let record = record.map_err(not_a_zip)?;
        entries += 1;
        if entries > limits.max_entries {
            continue;
        }
        // Zotero writes UTF-8 names; any other byte is shown as U+FFFD rather than guessed at.
        let name = String::from_utf8_lossy(record.file_path().as_bytes());
        match file_name(&name) {
            Some(base) => {
                if wanted.is_none() && preferred == Some(base) {
                    wanted = Some((record.clone(), base.to_owned()));
                }
                if first.is_none() {
                    first = Some((record, base.to_owned()));
                }
            }
            None => skipped.push(name.into_owned()),
        }
    }
    if entries > limits.max_entries {
        return Err(ArchiveError::OverLimit { detail: format!("{entries} entries, at most {}", limits.max_entries) });
    }
    let Some((record, filename)) = wanted.or(first) else {
        let names = if skipped.is_empty() { "an empty archive".to_owned() } else { skipped.join(", ") };
        return Err(ArchiveError::NoFile { names });
    };
    let data = limits.read(&archive, &record)?;
    Ok(StoredFile { filename, data })
}

impl ZipLimits {
    /// The bytes of `record`'s entry in `archive` (the attachment here, a chapter in `attachment::epub`, which
    /// reaches this through the re-exported type). What the directory declares is checked first: encryption,
    /// the method (stored or Deflate), the size against `max_file_bytes` and the ratio. Inflating then stops one
    /// byte past the declared size, so a lying header costs no more memory than an honest one, and what came out
    /// must have the declared size and CRC-32.
    pub(crate) fn read(
        &self,
        archive: &ZipSliceArchive<&[u8]>,
        record: &ZipFileHeaderRecord<'_>,
    ) -> Result<Vec<u8>, ArchiveError> {
        if record.flags().is_encrypted() {
            return Err(ArchiveError::Unsupported { detail: "the entry is encrypted".into() });
        }
        let method = record.compression_method();
        if method != CompressionMethod::DEFLATE && method != CompressionMethod::STORE {
            return Err(ArchiveError::Unsupported { detail: format!("compression method {}", method.as_u16()) });
        }
        let (size, compressed) = (record.uncompressed_size_hint(), record.compressed_size_hint());
        if size > self.max_file_bytes {
            return Err(ArchiveError::OverLimit {
                detail: format!("the file is {} MB, at most {} MB", size / 1_000_000, self.max_file_bytes / 1_000_000),
            });
        }
        if size > compressed.max(1).saturating_mul(self.max_ratio) && size > 1024 * 1024 {
            return Err(ArchiveError::OverLimit {
                detail: format!("{compressed} bytes would inflate to {size}, more than {}×", self.max_ratio),
            });
        }
        let not_a_zip = |detail: String| ArchiveError::NotAZip { detail };
        let entry = archive.get_entry(record.wayfinder()).map_err(|e| not_a_zip(e.to_string()))?;
        let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(16 * 1024 * 1024));
        // One byte past the declared size: a header that understates the entry is caught, not trusted.
        let cap = size.saturating_add(1);
        let read = if method == CompressionMethod::DEFLATE {
            DeflateDecoder::new(entry.data()).take(cap).read_to_end(&mut data)
        } else {
            Read::take(entry.data(), cap).read_to_end(&mut data)
        }
        .map_err(|e| not_a_zip(e.to_string()))?;
        if read as u64 != size {
            return Err(not_a_zip(format!("the entry holds {read} bytes where its header says {size}")));
        }
        if crc32(&data) != record.crc32() {
            return Err(not_a_zip("the file in it fails its CRC-32 check: the archive is damaged".into()));
        }
        Ok(data)
    }
}

/// The CRC-32 zip uses (reflected, polynomial 0xEDB88320), eight bytes at a time ("slicing by 8") from tables
/// made on each call: 8 KiB of stack, about 2,000 steps. Not crc32fast's or rawzip's, which keep 16 KiB of
/// tables in the binary, about as much gzip size as everything else rawzip saved over the `zip` crate. Measured in
/// wasm (V8): 64 MiB in about 50 ms, where a byte at a time took 170 ms and inflating takes longer still.
fn crc32(data: &[u8]) -> u32 {
    let mut tables = [[0u32; 256]; 8];
    for (byte, slot) in (0u32..).zip(tables[0].iter_mut()) {
        *slot = (0..8).fold(byte, |c, _| if c & 1 == 1 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 });
    }
    // tables[k][n]: the CRC of byte n followed by k zero bytes.
    for k in 1..8 {
        for n in 0..256 {
            let before = tables[k - 1][n];
            tables[k][n] = (before >> 8) ^ tables[0][usize::from(before as u8)];
        }
    }
    let at = |k: usize, word: u32, shift: u32| tables[k][usize::from((word >> shift) as u8)];
    let mut chunks = data.chunks_exact(8);
    let crc = chunks.by_ref().fold(!0u32, |crc, c| {
        let low = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) ^ crc;
        let high = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
        at(7, low, 0)
            ^ at(6, low, 8)
            ^ at(5, low, 16)
            ^ at(4, low, 24)
            ^ at(3, high, 0)
            ^ at(2, high, 8)
            ^ at(1, high, 16)
            ^ at(0, high, 24)
    });
    !chunks.remainder().iter().fold(crc, |c, &b| tables[0][usize::from(c as u8 ^ b)] ^ (c >> 8))
}

/// The largest entry count that any end-of-central-directory record in `bytes` declares, or `None` when there
/// is no such record (the reader then refuses the archive itself).
///
/// The record (`PK\x05\x06`, 22 bytes plus a comment of up to 64 KiB) sits at the end; a reader searches
/// backwards for it and, when one turns out unusable, tries an earlier one, so every signature in that tail
/// whose comment fits in the file counts here, not only the last. The 16-bit counts there say 0xFFFF when the
/// true count is in the zip64 end record, which ends where the zip64 locator (`PK\x06\x07`, 20 bytes, just
/// before the end record) starts; its 64-bit counts count too. Both "on this disk" and "total" are read: a
/// reader loops over one of them.
fn declared_entries(bytes: &[u8]) -> Option<u64> {
    const END: &[u8; 4] = b"PK\x05\x06";
    const END_SIZE: usize = 22;
    const LOCATOR: &[u8; 4] = b"PK\x06\x07";
    const LOCATOR_SIZE: usize = 20;
    const END64: &[u8; 4] = b"PK\x06\x06";
    let u16_at = |at: usize| bytes.get(at..at + 2).map_or(0, |b| u64::from(u16::from_le_bytes([b[0], b[1]])));
    let u64_at =
        |at: usize| bytes.get(at..at + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()).map_or(0, u64::from_le_bytes);
    // The usable end records, each with its two 16-bit counts and the zip64 locator right before it, if any.
    let tail_start = bytes.len().saturating_sub(END_SIZE + usize::from(u16::MAX));
    let records: Vec<([u64; 2], Option<usize>)> = (tail_start..=bytes.len().saturating_sub(END_SIZE))
        .filter(|&at| bytes[at..].starts_with(END))
        // A comment running past the end of the file: not a record any reader takes.
        .filter(|&at| at + END_SIZE + u16_at(at + 20) as usize <= bytes.len())
        .map(|at| {
            let locator = at.checked_sub(LOCATOR_SIZE).filter(|&l| bytes[l..].starts_with(LOCATOR));
            ([u16_at(at + 8), u16_at(at + 10)], locator)
        })
        .collect();
    // What the zip64 end records ending at those locators declare, by locator (ascending and distinct, as the
    // records were found in order; a sorted list rather than a map keeps hashing out of the Worker). A reader
    // looks for them between the offset a locator gives and the locator itself; here the union of those ranges
    // is scanned once (a scan per locator would be quadratic, and keeping every signature found would not be
    // bounded by the tail).
    let mut zip64: Vec<(usize, Option<u64>)> =
        records.iter().filter_map(|(_, locator)| *locator).map(|l| (l, None)).collect();
    let found = |zip64: &[(usize, Option<u64>)], at: usize| zip64.binary_search_by_key(&at, |&(l, _)| l).ok();
    let from = zip64.iter().map(|&(l, _)| usize::try_from(u64_at(l + 8)).unwrap_or(usize::MAX)).min().unwrap_or(0);
    let to = zip64.last().map_or(0, |&(l, _)| l);
    for (offset, _) in bytes.get(from..to).unwrap_or_default().windows(4).enumerate().filter(|(_, w)| w == END64) {
        let p = from + offset;
        let ends_at = u64_at(p + 4).checked_add(p as u64 + 12).and_then(|end| usize::try_from(end).ok());
        if let Some(i) = ends_at.and_then(|end| found(&zip64, end)) {
            let count = &mut zip64[i].1;
            *count = Some(count.unwrap_or(0).max(u64_at(p + 24)).max(u64_at(p + 32)));
        }
    }
    records
        .iter()
        .map(|(counts, locator)| match locator.and_then(|l| found(&zip64, l)).and_then(|i| zip64[i].1) {
            // 0xFFFF in a 16-bit count means "see the zip64 record", which was found.
            Some(count64) => counts.iter().filter(|&&c| c != 0xFFFF).fold(count64, |most, &c| most.max(c)),
            None => counts[0].max(counts[1]),
        })
        .max()
}

/// The file name of an entry that may be the attachment; `None` for bookkeeping: directories, dot files
/// (`.zotero-ft-cache`), anything under `__MACOSX/`.
fn file_name(path: &str) -> Option<&str> {
    if path.split(['/', '\\']).any(|part| part == "__MACOSX") {
        return None;
    }
    let base = path.rsplit(['/', '\\']).next().unwrap_or_default();
    (!base.is_empty() && !base.starts_with('.')).then_some(base)
}

/// A zip timestamp (UTC: Zotero Desktop's own zips carry the machine's local time, which the server does not
/// have; readers use the `.prop` mtime, not this one). Out-of-range times become the format's earliest,
/// 1980-01-01 00:00 (rawzip would clamp only the year); `None` never happens, as that date is valid.
fn zip_time(mtime_ms: u64) -> Option<UtcDateTime> {
    let time = UtcDateTime::from_unix(i64::try_from(mtime_ms / 1000).unwrap_or(i64::MAX));
    if (1980..=2107).contains(&time.year()) {
        Some(time)
    } else {
        UtcDateTime::from_components(1980, 1, 1, 0, 0, 0, 0)
    }
}

#[cfg(test)]
mod tests {
    use rawzip::path::EntryPath;

    use super::*;

    /// An archive with the given entries, stored, under exactly the names given (a name ending in `/` is a
    /// directory entry).
    fn archive(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = Vec::new();
        let mut writer = ZipArchiveWriter::new(&mut zip);
        for (name, data) in entries {
            let (mut entry, config) = writer.new_file(EntryPath::verbatim(name.as_bytes())).start().unwrap();
            let mut data_writer = config.wrap(&mut entry);
            data_writer.write_all(data).unwrap();
            let (_, descriptor) = data_writer.finish().unwrap();
            entry.finish(descriptor).unwrap();
        }
        writer.finish().unwrap();
        zip
    }

    /// Where the (first) central-directory record in `zip` starts.
    fn record_at(zip: &[u8]) -> usize {
        zip.windows(4).position(|w| w == b"PK\x01\x02").unwrap()
    }

    #[test]
    fn packs_one_deflated_entry_that_reads_back_with_its_date() {
        let data = b"%PDF-1.7 a small file, repeated ".repeat(100);
        // 2024-02-29 13:45:30 UTC.
        let zip = pack("Smith - 2024 - Title.pdf", &data, 1_709_214_330_000).unwrap();
        let archive = ZipArchive::from_slice(&zip).unwrap();
        let records = archive.entries().collect::<Result<Vec<_>, _>>().unwrap();
        assert_eq!(records.len(), 1);
        let entry = &records[0];
        assert_eq!(entry.file_path().as_bytes(), b"Smith - 2024 - Title.pdf");
        assert_eq!(entry.compression_method(), CompressionMethod::DEFLATE);
        assert!(!entry.flags().is_utf8(), "an ASCII name needs no UTF-8 flag");
        let time = entry.last_modified_dos();
        assert_eq!(
            (time.year(), time.month(), time.day(), time.hour(), time.minute(), time.second()),
            (2024, 2, 29, 13, 45, 30)
        );
        assert_eq!(entry.crc32(), crc32(&data));
        let back = unpack(&zip, None, &ZipLimits::default()).unwrap();
        assert_eq!(back, StoredFile { filename: "Smith - 2024 - Title.pdf".into(), data });

        // A non-ASCII name is written as UTF-8 and flagged so, which readers need to not take it for CP437.
        let zip = pack("Müller – Übersicht.pdf", b"%PDF", 1_709_214_330_000).unwrap();
        let archive = ZipArchive::from_slice(&zip).unwrap();
        let entry = archive.entries().next_entry().unwrap().unwrap();
        assert!(entry.flags().is_utf8());
        assert_eq!(unpack(&zip, None, &ZipLimits::default()).unwrap().filename, "Müller – Übersicht.pdf");
    }

    #[test]
    fn crc32_is_the_zip_one() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b"The quick brown fox jumps over the lazy dog"), 0x414F_A339);
        // Every length around the eight-byte steps, against the definition a bit at a time.
        let data: Vec<u8> = (0..100u32).map(|i| (i * 37 + i / 7) as u8).collect();
        for len in 0..data.len() {
            let slow = !data[..len].iter().fold(!0u32, |c, &b| {
                (0..8).fold(c ^ u32::from(b), |c, _| if c & 1 == 1 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 })
            });
            assert_eq!(crc32(&data[..len]), slow, "{len} bytes");
        }
    }

    #[test]
    fn bookkeeping_entries_are_not_the_attachment() {
        let zip = archive(&[
            (".zotero-ft-cache", b"indexed words"),
            ("__MACOSX/._paper.pdf", b"resource fork"),
            ("folder/", b""),
            ("folder/paper.pdf", b"%PDF-1.4"),
            ("notes.txt", b"other"),
        ]);
        let found = unpack(&zip, None, &ZipLimits::default()).unwrap();
        assert_eq!((found.filename.as_str(), found.data.as_slice()), ("paper.pdf", &b"%PDF-1.4"[..]));
        // The item's own filename wins over archive order.
        assert_eq!(unpack(&zip, Some("notes.txt"), &ZipLimits::default()).unwrap().data, b"other");
        let only_bookkeeping = archive(&[(".zotero-ft-info", b"x"), (".zotero-ft-cache", b"y")]);
        let err = unpack(&only_bookkeeping, None, &ZipLimits::default()).unwrap_err();
        assert_eq!(err, ArchiveError::NoFile { names: ".zotero-ft-info, .zotero-ft-cache".into() });
        assert!(matches!(unpack(&archive(&[]), None, &ZipLimits::default()), Err(ArchiveError::NoFile { .. })));
    }

    #[test]
    fn bombs_and_junk_are_refused_before_inflating() {
        let bomb = pack("bomb.txt", &vec![0u8; 8 * 1024 * 1024], 0).unwrap();
        assert!(bomb.len() < 100_000);
        assert!(matches!(unpack(&bomb, None, &ZipLimits::default()), Err(ArchiveError::OverLimit { .. })));
        let small = ZipLimits { max_file_bytes: 1024, ..ZipLimits::default() };
        let big = pack("big.pdf", &[7u8; 4096], 0).unwrap();
        assert!(matches!(unpack(&big, None, &small), Err(ArchiveError::OverLimit { .. })));
        let many: Vec<(String, Vec<u8>)> = (0..5).map(|i| (format!("f{i}"), vec![1u8])).collect();
        let many: Vec<(&str, &[u8])> = many.iter().map(|(n, d)| (n.as_str(), d.as_slice())).collect();
        let few = ZipLimits { max_entries: 4, ..ZipLimits::default() };
        assert!(matches!(unpack(&archive(&many), None, &few), Err(ArchiveError::OverLimit { .. })));
        for junk in [&b""[..], b"PK\x03\x04 not really", b"<html>404</html>"] {
            assert!(matches!(unpack(junk, None, &ZipLimits::default()), Err(ArchiveError::NotAZip { .. })), "{junk:?}");
        }
    }

    #[test]
    fn a_lying_or_damaged_entry_is_caught_while_inflating() {
        let data = [7u8; 4096];
        let zip = pack("paper.pdf", &data, 0).unwrap();
        let at = record_at(&zip);
        // The directory understates the size: inflating stops one byte past it, and says so.
        let mut short = zip.clone();
        short[at + 24..at + 28].copy_from_slice(&100u32.to_le_bytes());
        let error = unpack(&short, None, &ZipLimits::default()).unwrap_err();
        let detail = "the entry holds 101 bytes where its header says 100".to_owned();
        assert_eq!(error, ArchiveError::NotAZip { detail });
        // It overstates it: the stream ends first.
        let mut long = zip.clone();
        long[at + 24..at + 28].copy_from_slice(&5000u32.to_le_bytes());
        let error = unpack(&long, None, &ZipLimits::default()).unwrap_err();
        let detail = "the entry holds 4096 bytes where its header says 5000".to_owned();
        assert_eq!(error, ArchiveError::NotAZip { detail });
        // The right size but other bytes: the CRC-32 tells, and the message says what happened and what to do.
        let mut stored = archive(&[("paper.pdf", b"%PDF-1.4 the text")]);
        let byte = stored.windows(8).position(|w| w == b"%PDF-1.4").unwrap();
        stored[byte + 9] = b'T';
        let error = unpack(&stored, None, &ZipLimits::default()).unwrap_err();
        assert!(matches!(error, ArchiveError::NotAZip { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("damaged") && message.contains("let it sync the file again"), "{message}");
    }

    #[test]
    fn no_single_byte_change_or_cut_makes_the_reader_panic() {
        let zip = pack("paper.pdf", b"%PDF-1.4 a small file, a small file, a small file", 1_709_214_330_000).unwrap();
        let stored = archive(&[(".zotero-ft-cache", b"words"), ("paper.pdf", b"%PDF-1.4")]);
        for original in [zip, stored] {
            for end in 0..original.len() {
                assert!(unpack(&original[..end], None, &ZipLimits::default()).is_err(), "cut at {end}");
            }
            for at in 0..original.len() {
                for value in [0, 0xFF, original[at] ^ 1, original[at] ^ 0x80] {
                    let mut changed = original.clone();
                    changed[at] = value;
                    // Any answer will do, as long as it is an answer.
                    let _ = unpack(&changed, Some("paper.pdf"), &ZipLimits::default());
                }
            }
        }
    }

    #[test]
    fn encrypted_entries_and_other_methods_are_refused_unread() {
        let zip = pack("paper.pdf", b"%PDF-1.4", 0).unwrap();
        let at = record_at(&zip);
        let mut encrypted = zip.clone();
        encrypted[at + 8] |= 1;
        let error = unpack(&encrypted, None, &ZipLimits::default()).unwrap_err();
        assert_eq!(error, ArchiveError::Unsupported { detail: "the entry is encrypted".into() });
        let mut bzip2 = zip.clone();
        bzip2[at + 10..at + 12].copy_from_slice(&12u16.to_le_bytes());
        let error = unpack(&bzip2, None, &ZipLimits::default()).unwrap_err();
        assert_eq!(error, ArchiveError::Unsupported { detail: "compression method 12".into() });
        assert!(error.to_string().contains("uses a compression this server does not read"), "{error}");
    }

    /// A zip64 archive whose end records declare `declared` entries and whose central directory holds `real`
    /// of them (46-byte headers with 6-digit names, no file data: a reader builds its list from these alone).
    fn zip64_declaring(declared: u64, real: u64) -> Vec<u8> {
        let mut zip = Vec::new();
        for i in 0..real {
            zip.extend_from_slice(b"PK\x01\x02");
            zip.extend_from_slice(&[45, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // versions, flags, stored, time, date
            zip.extend_from_slice(&[0; 12]); // crc, sizes
            zip.extend_from_slice(&[6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // name length 6, …
            zip.extend_from_slice(format!("{:06}", i % 1_000_000).as_bytes());
        }
        let directory_size = zip.len() as u64;
        let end64 = zip.len() as u64;
        zip.extend_from_slice(b"PK\x06\x06");
        zip.extend_from_slice(&44u64.to_le_bytes());
        zip.extend_from_slice(&[45, 0, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        for value in [declared, declared, directory_size, 0] {
            zip.extend_from_slice(&value.to_le_bytes());
        }
        zip.extend_from_slice(b"PK\x06\x07\0\0\0\0");
        zip.extend_from_slice(&end64.to_le_bytes());
        zip.extend_from_slice(&1u32.to_le_bytes());
        zip.extend_from_slice(b"PK\x05\x06\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\0\0");
        zip
    }

    #[test]
    fn an_archive_declaring_too_many_entries_is_refused_from_its_end_record() {
        // 300,000 entries declared and none present: refused by the declared count, so no directory was read
        // (the zip reader would have called it malformed instead).
        let error = unpack(&zip64_declaring(300_000, 0), None, &ZipLimits::default()).unwrap_err();
        assert_eq!(error, ArchiveError::OverLimit { detail: "300000 entries declared, at most 1000".into() });
        assert!(error.to_string().contains("over this server's limit"), "{error}");

        // The same in a plain (zip32) end record, and in one hidden behind a later stray signature in a comment.
        let mut zip32 = archive(&[("paper.pdf", b"%PDF-1.4")]);
        let end = zip32.len() - 22;
        zip32[end + 8..end + 12].copy_from_slice(&[0x50, 0xc3, 0x50, 0xc3]); // 50,000 entries
        let refused = unpack(&zip32, None, &ZipLimits::default()).unwrap_err();
        assert_eq!(refused, ArchiveError::OverLimit { detail: "50000 entries declared, at most 1000".into() });
        zip32[end + 20] = 22; // a 22-byte comment holding an end record that declares nothing
        zip32.extend_from_slice(b"PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
        assert!(matches!(unpack(&zip32, None, &ZipLimits::default()), Err(ArchiveError::OverLimit { .. })));

        // Within the limit, a zip64 record is read as before (here: its one entry has no file data).
        let few = unpack(&zip64_declaring(1, 1), None, &ZipLimits::default()).unwrap_err();
        assert!(!matches!(few, ArchiveError::OverLimit { .. }), "{few}");
    }

    /// The memory a 300,000-entry central directory costs the zip reader, and what the end-record check costs
    /// instead: `cargo test -p zotero-mcp-core --lib -- --ignored --nocapture central_directory_memory`.
    #[cfg(target_os = "linux")]
    #[test]
    #[ignore = "a measurement: prints figures"]
    fn central_directory_memory() {
        fn peak_kib() -> u64 {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
            line.split_whitespace().nth(1).unwrap().parse().unwrap()
        }
        fn reset_peak() {
            std::fs::write("/proc/self/clear_refs", "5").unwrap();
        }
        let zip = zip64_declaring(300_000, 300_000);
        reset_peak();
        let before = peak_kib();
        let started = std::time::Instant::now();
        let refused = unpack(&zip, None, &ZipLimits::default()).unwrap_err();
        let (checked_kib, checked_ms) = (peak_kib() - before, started.elapsed().as_millis());
        reset_peak();
        let before = peak_kib();
        let started = std::time::Instant::now();
        let parsed = ZipArchive::from_slice(&zip).map(|a| a.entries().filter(Result::is_ok).count());
        let (parsed_kib, parsed_ms) = (peak_kib() - before, started.elapsed().as_millis());
        println!(
            "{} KiB archive, 300,000 entries: unpack refuses in {checked_ms} ms, +{checked_kib} KiB peak ({refused}); \
             the zip reader alone: {parsed:?} in {parsed_ms} ms, +{parsed_kib} KiB peak",
            zip.len() / 1024
        );
        assert_eq!(parsed.unwrap(), 300_000);
        // rawzip lends one record at a time: walking the whole directory builds nothing (the `zip` crate it
        // replaced took 63 MiB here), and the refusal costs no more than it.
        assert!(parsed_kib < 4 * 1024 && checked_kib < 4 * 1024, "+{parsed_kib} KiB, +{checked_kib} KiB");
        // The check's worst case: a zip64 locator that sends the scan over the whole of a 64 MiB download.
        let mut worst = vec![0u8; 64 * 1024 * 1024];
        worst.extend_from_slice(&zip64_declaring(300_000, 0));
        let started = std::time::Instant::now();
        let refused = unpack(&worst, None, &ZipLimits::default()).unwrap_err();
        println!("64 MiB scanned for zip64 records in {} ms: {refused}", started.elapsed().as_millis());
    }

    #[test]
    fn md5_is_lowercase_hex_of_the_bytes() {
        assert_eq!(md5_hex(b"The quick brown fox jumps over the lazy dog"), "9e107d9d372bb6826bd81d3542a419d6");
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
    }

    #[test]
    fn dates_convert_like_the_calendar() {
        let parts = |ms| zip_time(ms).map(|t| (t.year(), t.month(), t.day(), t.hour(), t.minute(), t.second()));
        assert_eq!(parts(1_709_214_330_000), Some((2024, 2, 29, 13, 45, 30)));
        assert_eq!(parts(315_532_800_000), Some((1980, 1, 1, 0, 0, 0)));
        assert_eq!(parts(4_354_819_199_000), Some((2107, 12, 31, 23, 59, 59)));
        // Before 1980 and after 2107 the zip format has no date: the earliest it has.
        for outside in [0, 315_532_799_000, 4_354_819_200_000, u64::MAX] {
            assert_eq!(parts(outside), Some((1980, 1, 1, 0, 0, 0)), "{outside}");
        }
    }
}
