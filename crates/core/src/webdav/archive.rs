//! The `<KEY>.zip` Zotero Desktop uploads: one entry, the stored file, compressed with Deflate. On the way in,
//! Zotero's own bookkeeping entries (`.zotero-ft-cache`, `.zotero-ft-info`), dot files, directories and macOS
//! resource forks (`__MACOSX/`) are not the attachment. Limits are checked from the archive's directory before
//! anything is inflated, and again while inflating (a header can lie about sizes).

use std::io::{Cursor, Read, Write};

use md5::{Digest, Md5};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};

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
pub fn pack(filename: &str, data: &[u8], mtime_ms: u64) -> Result<Vec<u8>, ArchiveError> {
    let pack_error = |e: &dyn std::fmt::Display| ArchiveError::Pack { detail: e.to_string() };
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(6))
        .last_modified_time(zip_time(mtime_ms))
        // Files over 4 GiB never reach here, but the writer must not guess: large files get zip64 headers.
        .large_file(data.len() as u64 >= u64::from(u32::MAX));
    let mut writer = ZipWriter::new(Cursor::new(Vec::with_capacity(data.len() / 2 + 256)));
    writer.start_file(filename, options).map_err(|e| pack_error(&e))?;
    writer.write_all(data).map_err(|e| pack_error(&e))?;
    Ok(writer.finish().map_err(|e| pack_error(&e))?.into_inner())
}

/// The attachment file in `bytes`: the entry named `preferred` (the item's `filename`) when there is one,
/// else the first entry that is not bookkeeping, in archive order.
pub fn unpack(bytes: &[u8], preferred: Option<&str>, limits: &ZipLimits) -> Result<StoredFile, ArchiveError> {
    // The zip reader builds every central-directory entry in memory (a few hundred bytes each) before it can
    // be asked how many there are, so the count the end records declare is checked first.
    if let Some(declared) = declared_entries(bytes).filter(|&n| n > limits.max_entries as u64) {
        return Err(ArchiveError::OverLimit {
            detail: format!("{declared} entries declared, at most {}", limits.max_entries),
        });
    }
    let mut archive =
        ZipArchive::new(Cursor::new(bytes)).map_err(|e| ArchiveError::NotAZip { detail: e.to_string() })?;
    // Checked again: the reader may have found a directory the scan above did not take for one.
    if archive.len() > limits.max_entries {
        return Err(ArchiveError::OverLimit {
            detail: format!("{} entries, at most {}", archive.len(), limits.max_entries),
        });
    }
    let mut candidates = Vec::new();
    let mut skipped = Vec::new();
    for index in 0..archive.len() {
        let Some(Ok(name)) = archive.name_for_index(index) else { continue };
        let name = name.into_owned();
        match file_name(&name) {
            Some(base) => candidates.push((index, base.to_owned())),
            None => skipped.push(name),
        }
    }
    let chosen = preferred
        .and_then(|want| candidates.iter().find(|(_, base)| base == want))
        .or_else(|| candidates.first())
        .cloned();
    let Some((index, filename)) = chosen else {
        let names = if skipped.is_empty() { "an empty archive".to_owned() } else { skipped.join(", ") };
        return Err(ArchiveError::NoFile { names });
    };
    let entry = archive.by_index(index).map_err(|e| match e {
        zip::result::ZipError::UnsupportedArchive(what) => ArchiveError::Unsupported { detail: what.to_owned() },
        other => ArchiveError::NotAZip { detail: other.to_string() },
    })?;
    if entry.encrypted() {
        return Err(ArchiveError::Unsupported { detail: "the entry is encrypted".into() });
    }
    let (size, compressed) = (entry.size(), entry.compressed_size());
    if size > limits.max_file_bytes {
        return Err(ArchiveError::OverLimit {
            detail: format!("the file is {} MB, at most {} MB", size / 1_000_000, limits.max_file_bytes / 1_000_000),
        });
    }
    if size > compressed.max(1).saturating_mul(limits.max_ratio) && size > 1024 * 1024 {
        return Err(ArchiveError::OverLimit {
            detail: format!("{compressed} bytes would inflate to {size}, more than {}×", limits.max_ratio),
        });
    }
    let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(16 * 1024 * 1024));
    // One byte past the declared size: a header that understates the entry is caught, not trusted.
    let read = entry
        .take(size.saturating_add(1).min(limits.max_file_bytes.saturating_add(1)))
        .read_to_end(&mut data)
        .map_err(|e| ArchiveError::NotAZip { detail: e.to_string() })?;
    if read as u64 != size {
        return Err(ArchiveError::NotAZip {
            detail: format!("the entry holds {read} bytes where its header says {size}"),
        });
    }
    Ok(StoredFile { filename, data })
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
/// have; readers use the `.prop` mtime, not this one). Out-of-range times become the format's earliest.
fn zip_time(mtime_ms: u64) -> DateTime {
    let secs = mtime_ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let (year, month, day) = civil_from_days(days);
    let rest = secs % 86_400;
    let (hour, minute, second) = ((rest / 3600) as u8, ((rest % 3600) / 60) as u8, (rest % 60) as u8);
    u16::try_from(year)
        .ok()
        .and_then(|year| DateTime::from_date_and_time(year, month, day, hour, minute, second).ok())
        .unwrap_or_default()
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day) (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days.saturating_add(719_468);
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An archive with the given entries, stored or deflated as the writer likes.
    fn archive(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data) in entries {
            writer.start_file(*name, SimpleFileOptions::default()).unwrap();
            writer.write_all(data).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    #[test]
    fn packs_one_deflated_entry_that_reads_back_with_its_date() {
        let data = b"%PDF-1.7 a small file, repeated ".repeat(100);
        // 2024-02-29 13:45:30 UTC.
        let zip = pack("Smith - 2024 - Title.pdf", &data, 1_709_214_330_000).unwrap();
        let mut archive = ZipArchive::new(Cursor::new(&zip)).unwrap();
        assert_eq!(archive.len(), 1);
        let entry = archive.by_index(0).unwrap();
        assert_eq!(entry.name().unwrap(), "Smith - 2024 - Title.pdf");
        assert_eq!(entry.compression(), CompressionMethod::Deflated);
        let time = entry.last_modified().unwrap();
        assert_eq!((time.year(), time.month(), time.day(), time.hour(), time.minute()), (2024, 2, 29, 13, 45));
        drop(entry);
        let back = unpack(&zip, None, &ZipLimits::default()).unwrap();
        assert_eq!(back, StoredFile { filename: "Smith - 2024 - Title.pdf".into(), data });
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
        let parsed = ZipArchive::new(Cursor::new(&zip)).map(|a| a.len());
        let (parsed_kib, parsed_ms) = (peak_kib() - before, started.elapsed().as_millis());
        println!(
            "{} KiB archive, 300,000 entries: unpack refuses in {checked_ms} ms, +{checked_kib} KiB peak ({refused}); \
             the zip reader alone: {parsed:?} in {parsed_ms} ms, +{parsed_kib} KiB peak",
            zip.len() / 1024
        );
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
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // Before 1980 the zip format has no date: the earliest it has.
        assert_eq!(zip_time(0), DateTime::default());
    }
}
