//! Timestamps and Zotero's "multipart" dates.
//!
//! Zotero stores the free-text `date` field next to a parsed `YYYY-MM-DD` form (zeros for unknown parts), which
//! drives `meta.parsedDate`, `sort=date` and the year match of `qmode=titleCreatorYear`. The parser here follows
//! the shape of Zotero's `strToDate` for the forms libraries really contain (ISO dates, `M/D/Y`, `D Month Y`,
//! `Month D, Y`, bare years); it does not try to reproduce every locale rule.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, from the host clock.
pub fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// `2024-05-06T07:08:09Z` for a Unix time.
pub fn iso_from_unix(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, (rem % 3600) / 60, rem % 60)
}

/// The current time as the API prints it.
pub fn now_iso() -> String {
    iso_from_unix(unix_now())
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `YYYY-MM-DD` with a valid month and day.
pub fn is_sql_date(s: &str) -> bool {
    parse_ymd(s).is_some()
}

fn parse_ymd(s: &str) -> Option<(i64, u32, u32)> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&s[0..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y as i64, m, d))
}

fn parse_hms(s: &str) -> Option<(u32, u32, u32)> {
    let b = s.as_bytes();
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, mi, se) = (digits(&s[0..2])?, digits(&s[3..5])?, digits(&s[6..8])?);
    (h < 24 && mi < 60 && se < 61).then_some((h, mi, se))
}

/// `YYYY-MM-DD hh:mm:ss` (Zotero's UTC SQL form) → ISO 8601 UTC.
fn sql_datetime_to_iso(s: &str) -> Option<String> {
    let (date, time) = s.split_once(' ')?;
    parse_ymd(date)?;
    parse_hms(time)?;
    Some(format!("{date}T{time}Z"))
}

/// ISO 8601 date-time (`Z` or a `±hh:mm` offset, optional fraction) → UTC ISO 8601 with `Z`.
fn iso8601_to_utc(s: &str) -> Option<String> {
    let (date, rest) = s.split_once('T')?;
    let (y, m, d) = parse_ymd(date)?;
    if rest.len() < 8 {
        return None;
    }
    let (h, mi, se) = parse_hms(&rest[..8])?;
    let mut tail = &rest[8..];
    if let Some(frac) = tail.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        tail = &frac[n..];
    }
    let offset_secs: i64 = match tail {
        "Z" | "z" => 0,
        _ => {
            let sign = match tail.as_bytes().first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return None,
            };
            let body = tail[1..].replace(':', "");
            if body.len() != 4 {
                return None;
            }
            let oh = digits(&body[..2])? as i64;
            let om = digits(&body[2..])? as i64;
            sign * (oh * 3600 + om * 60)
        }
    };
    let secs = days_from_civil(y, m, d) * 86_400 + (h * 3600 + mi * 60 + se) as i64 - offset_secs;
    (secs >= 0).then(|| iso_from_unix(secs as u64))
}

/// A `dateAdded`/`dateModified` value as Zotero accepts it (ISO 8601 or UTC `YYYY-MM-DD hh:mm:ss`), normalized
/// to the ISO form the API returns; `None` when Zotero would reject it.
pub fn normalize_timestamp(s: &str) -> Option<String> {
    iso8601_to_utc(s).or_else(|| sql_datetime_to_iso(s))
}

/// An `accessDate` value: `""`, `CURRENT_TIMESTAMP`, a SQL date or date-time, or ISO 8601. Returns the stored
/// form (ISO for date-times, `YYYY-MM-DD` for bare dates), or `None` when invalid.
pub fn normalize_access_date(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some(String::new());
    }
    if s == "CURRENT_TIMESTAMP" {
        return Some(now_iso());
    }
    if is_sql_date(s) {
        return Some(s.to_string());
    }
    normalize_timestamp(s)
}

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// A parsed free-text date: zero for unknown parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartialDate {
    pub year: u32,
    pub month: u32,
    pub day: u32,
}

impl PartialDate {
    /// `YYYY-MM-DD` with zeros, the SQL part of Zotero's multipart date (sortable as a string).
    pub fn sql(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// `meta.parsedDate`: reduced precision, absent when there is no year.
    pub fn parsed(&self) -> Option<String> {
        if self.year == 0 {
            return None;
        }
        let mut out = format!("{:04}", self.year);
        if self.month != 0 {
            out.push_str(&format!("-{:02}", self.month));
            if self.day != 0 {
                out.push_str(&format!("-{:02}", self.day));
            }
        }
        Some(out)
    }
}

/// Parses a free-text date the way Zotero's `strToDate` does for common forms.
pub fn parse_date(input: &str) -> PartialDate {
    let s = input.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.is_empty() {
        return PartialDate::default();
    }
    if let Some(d) = numeric_date(&s) {
        return d;
    }
    // Fallback: pick out a year (3–4 digits), a month name and a day number.
    let tokens: Vec<&str> = s.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).collect();
    let mut date = PartialDate::default();
    let mut year_idx = None;
    for (i, t) in tokens.iter().enumerate() {
        if (t.len() == 3 || t.len() == 4) && t.bytes().all(|b| b.is_ascii_digit()) {
            date.year = t.parse().unwrap_or(0);
            year_idx = Some(i);
            break;
        }
    }
    for t in &tokens {
        let lower = t.to_lowercase();
        if let Some(pos) = MONTHS.iter().position(|m| lower.starts_with(m)) {
            date.month = pos as u32 + 1;
            break;
        }
    }
    for (i, t) in tokens.iter().enumerate() {
        if Some(i) == year_idx {
            continue;
        }
        let num: String = t.chars().take_while(char::is_ascii_digit).collect();
        let suffix = &t[num.len()..];
        if !num.is_empty() && num.len() <= 2 && matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
            if let Ok(d) = num.parse::<u32>() {
                if (1..=31).contains(&d) {
                    date.day = d;
                    break;
                }
            }
        }
    }
    date
}

/// `YYYY-MM-DD`, `YYYY-MM`, `YYYY/MM/DD`, `M/D/YYYY`, `D.M.YYYY`, with an optional time or text after it.
fn numeric_date(s: &str) -> Option<PartialDate> {
    let head = s.split([' ', 'T']).next().unwrap_or(s);
    let sep = head.chars().find(|c| matches!(c, '-' | '/' | '.'))?;
    let parts: Vec<&str> = head.split(sep).collect();
    if parts.len() < 2 || parts.len() > 3 || parts.iter().any(|p| digits(p).is_none()) {
        return None;
    }
    let nums: Vec<u32> = parts.iter().filter_map(|p| digits(p)).collect();
    let mut d = PartialDate::default();
    if parts[0].len() >= 3 {
        // Big-endian (ISO).
        d.year = nums[0];
        d.month = nums[1];
        d.day = nums.get(2).copied().unwrap_or(0);
    } else if parts.len() == 3 {
        // en-US: month first; Zotero swaps when the "month" is over 12.
        d.year = expand_two_digit_year(nums[2], parts[2].len());
        d.month = nums[0];
        d.day = nums[1];
        if d.month > 12 {
            std::mem::swap(&mut d.month, &mut d.day);
        }
    } else {
        return None;
    }
    (d.month <= 12 && d.day <= 31).then_some(d)
}

fn expand_two_digit_year(year: u32, len: usize) -> u32 {
    if len > 2 {
        return year;
    }
    let (now_year, _, _) = civil_from_days((unix_now() / 86_400) as i64);
    let century = (now_year as u32 / 100) * 100;
    if year <= now_year as u32 % 100 {
        century + year
    } else {
        century - 100 + year
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_unix_times() {
        assert_eq!(iso_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_from_unix(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn normalizes_timestamps() {
        assert_eq!(normalize_timestamp("2014-06-12T21:28:55Z").as_deref(), Some("2014-06-12T21:28:55Z"));
        assert_eq!(normalize_timestamp("2014-06-12 21:28:55").as_deref(), Some("2014-06-12T21:28:55Z"));
        assert_eq!(normalize_timestamp("2014-06-12T23:28:55+02:00").as_deref(), Some("2014-06-12T21:28:55Z"));
        assert_eq!(normalize_timestamp("yesterday"), None);
    }

    #[test]
    fn parses_common_dates() {
        assert_eq!(parse_date("2020-05-01").parsed().as_deref(), Some("2020-05-01"));
        assert_eq!(parse_date("2020").parsed().as_deref(), Some("2020"));
        assert_eq!(parse_date("May 2019").parsed().as_deref(), Some("2019-05"));
        assert_eq!(parse_date("March 3, 2001").parsed().as_deref(), Some("2001-03-03"));
        assert_eq!(parse_date("3 March 2001").parsed().as_deref(), Some("2001-03-03"));
        assert_eq!(parse_date("12/25/1999").parsed().as_deref(), Some("1999-12-25"));
        assert_eq!(parse_date("").parsed(), None);
        assert_eq!(parse_date("n.d.").parsed(), None);
    }
}
