//! The `.prop` file Zotero writes beside each `<KEY>.zip`: when the stored file was last modified and its MD5.
//! Zotero Desktop compares both with its local copy to decide whether to download, so they must describe the
//! file inside the zip exactly (milliseconds since the epoch; lowercase hex of the uncompressed bytes).

/// What a `.prop` file says about the stored file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProps {
    /// The file's modification time, in milliseconds since the Unix epoch.
    pub mtime_ms: u64,
    /// The MD5 of the uncompressed file, 32 lowercase hex digits.
    pub md5: String,
}

impl FileProps {
    /// The XML exactly as Zotero Desktop writes it: no declaration, two-space indent, no final newline.
    pub fn render(&self) -> String {
        format!(
            "<properties version=\"1\">\n  <mtime>{}</mtime>\n  <hash>{}</hash>\n</properties>",
            self.mtime_ms, self.md5
        )
    }

    /// Reads a `.prop` file; `None` unless it has both a numeric `<mtime>` and a 32-digit hex `<hash>`.
    pub fn parse(xml: &str) -> Option<Self> {
        let mtime_ms = element(xml, "mtime")?.parse::<u64>().ok()?;
        let md5 = element(xml, "hash")?;
        if md5.len() != 32 || !md5.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(Self { mtime_ms, md5: md5.to_ascii_lowercase() })
    }
}

/// The trimmed text between `<name>` and `</name>`.
fn element<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&close)?;
    Some(xml[start..end].trim())
}

#[cfg(test)]
mod tests {
    use super::FileProps;

    #[test]
    fn renders_what_zotero_writes_and_reads_it_back() {
        let props = FileProps { mtime_ms: 1_700_000_000_123, md5: "9e107d9d372bb6826bd81d3542a419d6".into() };
        let xml = props.render();
        assert_eq!(
            xml,
            "<properties version=\"1\">\n  <mtime>1700000000123</mtime>\n  <hash>9e107d9d372bb6826bd81d3542a419d6</hash>\n</properties>"
        );
        assert_eq!(FileProps::parse(&xml), Some(props));
    }

    #[test]
    fn reads_what_other_writers_produce_and_refuses_the_incomplete() {
        let spaced = "<?xml version=\"1.0\"?>\r\n<properties version=\"1\"><mtime> 42 </mtime>\r\n\
                      <hash>ABCDEF0123456789ABCDEF0123456789</hash></properties>\r\n";
        assert_eq!(
            FileProps::parse(spaced),
            Some(FileProps { mtime_ms: 42, md5: "abcdef0123456789abcdef0123456789".into() })
        );
        assert_eq!(FileProps::parse("<properties><mtime>1</mtime></properties>"), None);
        assert_eq!(FileProps::parse("<mtime>x</mtime><hash>abcdef0123456789abcdef0123456789</hash>"), None);
        assert_eq!(FileProps::parse("<mtime>1</mtime><hash>abc</hash>"), None);
        assert_eq!(FileProps::parse(""), None);
    }
}
