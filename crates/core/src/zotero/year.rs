//! The one year rule (upstream Q11: its searches, index, display and duplicate check each read a year their own
//! way, so an item could show 2021 and still fall outside `fromYear: 2021`).

/// The year of a Zotero date string: the first run of exactly four ASCII digits that no other digit touches
/// ("2021-03-04", "March 2021", "2021年", "c. 1999"); `None` when there is none ("", "n.d.", "12345").
///
/// Zotero stores dates as typed, so this reads what a person would: a day or month number never has four digits,
/// and a longer number (an id, a page count) is not a year.
pub fn year_of(date: &str) -> Option<u16> {
    let bytes = date.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let run = bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
        if run == 4 {
            return date[at..at + 4].parse().ok();
        }
        at += run;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::year_of;

    #[test]
    fn reads_the_year_of_every_date_shape_zotero_keeps() {
        for (date, year) in [
            ("2021-03-04", Some(2021)),
            ("2021-4-2", Some(2021)),
            ("March 2021", Some(2021)),
            ("4 March 2021", Some(2021)),
            ("2021", Some(2021)),
            ("2017年6月", Some(2017)),
            ("c. 1999", Some(1999)),
            ("1999/2000", Some(1999)),
            ("0999", Some(999)),
            ("12345", None),
            ("12345 2020", Some(2020)),
            ("n.d.", None),
            ("", None),
            ("12/03/21", None),
        ] {
            assert_eq!(year_of(date), year, "{date:?}");
        }
    }
}
