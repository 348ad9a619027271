//! Just enough of `multipart/form-data` (RFC 7578) to read an S3 POST Object upload: named parts, in order,
//! bytes untouched. Zotero's upload is the API's `prefix`, the raw file, then its `suffix`, so the file part is
//! binary and may contain anything but the closing delimiter.

/// One part of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    pub data: Vec<u8>,
}

/// The `boundary` parameter of a `multipart/form-data` content type, or `None` for any other type.
pub fn boundary(content_type: &str) -> Option<String> {
    let mut params = content_type.split(';');
    let media = params.next()?.trim();
    if !media.eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.find_map(|p| {
        let (name, value) = p.split_once('=')?;
        name.trim().eq_ignore_ascii_case("boundary").then(|| value.trim().trim_matches('"').to_string())
    })
}

/// The parts of `body`, or why it is not a well-formed form.
pub fn parse(body: &[u8], boundary: &str) -> Result<Vec<Part>, String> {
    let delimiter = format!("--{boundary}").into_bytes();
    let between = format!("\r\n--{boundary}").into_bytes();
    let mut at = find(body, &delimiter, 0).ok_or("the body has no boundary line")?;
    at += delimiter.len();
    let mut parts = Vec::new();
    loop {
        if body[at..].starts_with(b"--") {
            return Ok(parts);
        }
        if !body[at..].starts_with(b"\r\n") {
            return Err("a boundary line is not followed by CRLF".into());
        }
        let head_start = at + 2;
        let head_end = find(body, b"\r\n\r\n", head_start).ok_or("a part has no blank line after its headers")?;
        let head = String::from_utf8_lossy(&body[head_start..head_end]);
        let name = part_name(&head).ok_or("a part has no Content-Disposition name")?;
        let data_start = head_end + 4;
        let data_end = find(body, &between, data_start).ok_or("the form is not closed by its boundary")?;
        parts.push(Part { name, data: body[data_start..data_end].to_vec() });
        at = data_end + between.len();
    }
}

/// `name="…"` from a part's `Content-Disposition: form-data; name="…"` header.
fn part_name(head: &str) -> Option<String> {
    let line = head.lines().find(|l| l.to_ascii_lowercase().starts_with("content-disposition:"))?;
    line.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim() == "name").then(|| v.trim().trim_matches('"').to_string())
    })
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|i| i + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_a_binary_file_part() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nabc\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n\x00\r\n--Xy\xff\r\n--XyZ--";
        let parts = parse(body, "XyZ").unwrap();
        assert_eq!(parts[0], Part { name: "key".into(), data: b"abc".to_vec() });
        assert_eq!(parts[1], Part { name: "file".into(), data: b"\x00\r\n--Xy\xff".to_vec() });
        assert_eq!(boundary("multipart/form-data; boundary=XyZ").as_deref(), Some("XyZ"));
        assert_eq!(boundary("application/x-www-form-urlencoded"), None);
    }

    #[test]
    fn refuses_an_unclosed_form() {
        assert!(parse(b"--B\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc", "B").is_err());
        assert!(parse(b"no boundary here", "B").is_err());
    }
}
