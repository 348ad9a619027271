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
    #[error(
        "the attachment's zip on WebDAV is over this server's limit ({detail}); read the text Zotero indexed instead \
         (zotero_search finds words in indexed files)"
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
    let mut archive =
        ZipArchive::new(Cursor::new(bytes)).map_err(|e| ArchiveError::NotAZip { detail: e.to_string() })?;
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
