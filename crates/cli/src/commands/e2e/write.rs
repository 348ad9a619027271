//! The `--write` cycle on a scratch item of its own: create it, attach a real PDF, read the file back, highlight
//! a sentence, rename the file (a dry run, then applied), delete the attachment and the item — every deletion
//! permanent, so the library ends as it was. When a step fails the rest are skipped, and whatever was created is
//! deleted anyway ([`clean_up`]), each deletion reported.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::checks::{call, one_line, structured};
use super::report::{Failure, Report};
use crate::commands::mcp_client::Client;

/// The tag every scratch item carries, so that one left behind (a run killed half-way) can be found.
pub const TAG: &str = "zotero-mcp-e2e";
/// What scratch titles start with; the UTC time of the run follows, which is how [`sweep`] tells their age.
const TITLE_PREFIX: &str = "zotero-mcp e2e ";
/// Scratch items older than this are leftovers of an earlier run, not of one running now.
const LEFTOVER_SECS: u64 = 3600;
/// The file attached: the apa7 package's two-page sample (LPPL 1.3c, see crates/sim/demo/files/LICENSES.md),
/// a real TeX PDF whose text the PDF engine is known to read and locate — a made-up PDF would check less.
const PDF: &[u8] = include_bytes!("../../../../sim/demo/files/shortsample.pdf");
const PDF_NAME: &str = "zotero-mcp-e2e.pdf";
/// Words on the sample's first page, and the sentence highlighted (whitespace as the engine may give it).
const PDF_WORDS: &str = "demonstration paper";
const QUOTE: &str = "This demonstration paper uses the apa7";

const FIX_WRITE: &str = "the server could not write to the library: the message says why (a read-only Zotero key, \
                         the token's scope, Zotero refusing); /health says whether the key is set";
const FIX_FILES: &str = "attachment files need a file store: /health says whether Zotero Storage (the key's \
                         file access) or WebDAV (WEBDAV_URL, WEBDAV_USERNAME, WEBDAV_PASSWORD) answers";

/// What the cycle created and has not deleted yet.
#[derive(Debug, Default)]
pub struct Scratch {
    pub item: Option<String>,
    pub attachment: Option<String>,
}

/// The steps in order, for skipping those after a failure.
const STEPS: [&str; 8] = [
    "write: create item",
    "write: attach PDF",
    "write: read back",
    "write: highlight",
    "write: rename (dry run)",
    "write: rename",
    "write: delete attachment",
    "write: delete item",
];

/// Runs the cycle; returns what is left to clean up (nothing when every step passed).
pub fn cycle(report: &mut Report, client: &mut Client) -> Scratch {
    let mut scratch = Scratch::default();
    let now = unix_now();
    let done = run_steps(report, client, &mut scratch, now);
    if let Some(failed_at) = done {
        for name in &STEPS[failed_at + 1..] {
            report.skip(name, "an earlier write step failed");
        }
    }
    scratch
}

/// The steps; `Some(index)` of the step that failed.
fn run_steps(report: &mut Report, client: &mut Client, scratch: &mut Scratch, now: u64) -> Option<usize> {
    let title = format!("{TITLE_PREFIX}{}", utc(now));
    let item = report.check_with(STEPS[0], || {
        let arguments = json!({ "items": [{
            "itemType": "report",
            "title": title,
            "creators": [{ "creatorType": "author", "firstName": "Check", "lastName": "Zotero-MCP" }],
            "tags": [{ "tag": TAG }],
            "fields": {
                "date": utc(now)[..10].to_owned(),
                "extra": "A scratch item of `zotero-mcp e2e --write`; the run deletes it. Safe to delete.",
            },
        }] });
        let created = structured("zotero_create_items", call(client, "zotero_create_items", arguments, FIX_WRITE)?)?;
        let key = created["created"][0].as_str().map(str::to_owned).ok_or_else(|| {
            Failure::new(format!("nothing was created: {}", one_line(&created["failed"].to_string())), FIX_WRITE)
        })?;
        Ok((key.clone(), format!("{key} “{title}”")))
    })?;
    scratch.item = Some(item.clone());
    report.scratch.push(("item", item.clone()));
    let Some(attachment) = report.check_with(STEPS[1], || attach(client, &item)) else { return Some(1) };
    scratch.attachment = Some(attachment.clone());
    report.scratch.push(("attachment", attachment.clone()));
    let Some(text) = report.check_with(STEPS[2], || read_back(client, &attachment)) else { return Some(2) };
    if !report.check(STEPS[3], || highlight(client, &attachment, &text)) {
        return Some(3);
    }
    let Some(planned) = report.check_with(STEPS[4], || rename(client, &attachment, None)) else { return Some(4) };
    if !report.check(STEPS[5], || rename(client, &attachment, Some(&planned)).map(|(_, detail)| detail)) {
        return Some(5);
    }
    if !report.check(STEPS[6], || delete_attachment(client, &attachment)) {
        return Some(6);
    }
    scratch.attachment = None;
    if !report.check(STEPS[7], || delete_item(client, &item)) {
        return Some(7);
    }
    scratch.item = None;
    None
}

fn attach(client: &mut Client, item: &str) -> Result<(String, String), Failure> {
    use base64::Engine as _;
    let arguments = json!({
        "parentItemKey": item,
        "base64Data": base64::engine::general_purpose::STANDARD.encode(PDF),
        "filename": PDF_NAME,
        "contentType": "application/pdf",
    });
    let put = structured("zotero_put_attachment", call(client, "zotero_put_attachment", arguments, FIX_FILES)?)?;
    let key = put["attachmentKey"].as_str().map(str::to_owned).ok_or_else(|| {
        Failure::new(format!("no attachmentKey in {}", one_line(&put.to_string())), "deploy the current build")
    })?;
    if put["bytes"].as_u64() != Some(PDF.len() as u64) {
        return Err(Failure::new(
            format!("stored {} bytes of {}", put["bytes"], PDF.len()),
            "the upload was cut short: the server's log says where",
        ));
    }
    if put["recorded"] == json!(false) {
        return Err(Failure::new(
            format!("the file is stored but the item does not record it: {}", put["warning"]),
            FIX_WRITE,
        ));
    }
    let store = put["storedIn"].as_str().unwrap_or("WebDAV");
    Ok((key.clone(), format!("{key}, {} bytes on {store}, md5 {}", PDF.len(), put["md5"].as_str().unwrap_or("?"))))
}

fn read_back(client: &mut Client, attachment: &str) -> Result<(String, String), Failure> {
    let arguments = json!({ "itemKey": attachment, "forceFile": true, "fromPage": 1, "toPage": 1 });
    let read = structured("zotero_read_attachment", call(client, "zotero_read_attachment", arguments, FIX_FILES)?)?;
    let text = read["text"].as_str().unwrap_or_default().to_owned();
    let store = match read["source"].as_str() {
        Some("webdav") => "WebDAV",
        Some("zotero-storage") => "Zotero Storage",
        _ => "",
    };
    if store.is_empty() || !squeeze(&text).contains(PDF_WORDS) {
        return Err(Failure::new(
            format!("read from {} without “{PDF_WORDS}”: {}", read["source"], one_line(&text)),
            "the stored file is not the one uploaded, or the PDF engine reads it wrongly: the server's log says more",
        ));
    }
    Ok((text.clone(), format!("page 1 from {store}, {} characters", text.chars().count())))
}

fn highlight(client: &mut Client, attachment: &str, text: &str) -> Result<String, Failure> {
    // The known sentence, unless this engine's text has it otherwise: then six words of the page as read.
    let quote = if squeeze(text).contains(&squeeze(QUOTE)) { QUOTE.to_owned() } else { six_words(text) };
    let arguments = json!({
        "action": "create", "itemKey": attachment, "page": 1, "text": quote, "comment": "zotero-mcp e2e",
    });
    let fix = "the highlight could not be placed or stored: the message says which; Zotero's refusal is in the \
               server's log";
    let created = structured("zotero_annotations", call(client, "zotero_annotations", arguments, fix)?)?;
    let annotation = &created["created"];
    let key = annotation["annotationKey"].as_str().unwrap_or("?");
    let got = annotation["text"].as_str().unwrap_or_default();
    if squeeze(got) != squeeze(&quote) {
        return Err(Failure::new(format!("highlighted “{got}” for “{quote}”"), "the quote location is off: report it"));
    }
    Ok(format!("{key} on page {}: “{quote}”", annotation["page"]))
}

/// A dry run (`applied` None) returns the planned name; applying checks the file got it.
fn rename(client: &mut Client, attachment: &str, applied: Option<&str>) -> Result<(String, String), Failure> {
    let mut arguments = json!({ "itemKeys": [attachment] });
    if applied.is_some() {
        arguments["apply"] = json!(true);
    }
    let renamed =
        structured("zotero_rename_attachments", call(client, "zotero_rename_attachments", arguments, FIX_FILES)?)?;
    let plan = renamed["planned"].as_array().and_then(|p| p.iter().find(|p| p["attachmentKey"] == attachment));
    let Some(plan) = plan else {
        return Err(Failure::new(
            format!("{attachment} is not in the plan: {}", one_line(&renamed.to_string())),
            FIX_FILES,
        ));
    };
    let (from, to, status) =
        (plan["from"].as_str().unwrap_or(""), plan["to"].as_str().unwrap_or(""), plan["status"].as_str().unwrap_or(""));
    let wanted = if applied.is_some() { "renamed" } else { "planned" };
    if status != wanted || from != PDF_NAME || to == from || applied.is_some_and(|name| name != to) {
        return Err(Failure::new(format!("{from} → {to}: {status}"), FIX_FILES));
    }
    Ok((to.to_owned(), format!("{from} → {to}")))
}

fn delete_attachment(client: &mut Client, attachment: &str) -> Result<String, Failure> {
    let arguments = json!({ "attachmentKey": attachment, "permanent": true });
    let fix = "delete it by hand in Zotero (and, on WebDAV, its .zip/.prop)";
    let deleted = structured("zotero_delete_attachment", call(client, "zotero_delete_attachment", arguments, fix)?)?;
    if deleted["filesRemoved"] != json!(true) {
        return Err(Failure::new(
            format!("{attachment} deleted, but not its files: {}", one_line(deleted["note"].as_str().unwrap_or(""))),
            format!("remove zotero/{attachment}.zip and .prop from the WebDAV folder"),
        ));
    }
    Ok(format!("{attachment} and its stored file, permanently"))
}

fn delete_item(client: &mut Client, item: &str) -> Result<String, Failure> {
    let arguments = json!({ "keys": [item], "permanent": true });
    let fix = format!("delete {item} by hand in Zotero (tag {TAG})");
    let deleted = structured("zotero_delete_items", call(client, "zotero_delete_items", arguments, &fix)?)?;
    if !deleted["deleted"].as_array().is_some_and(|d| d.iter().any(|k| k == item)) {
        return Err(Failure::new(format!("not deleted: {}", one_line(&deleted["failed"].to_string())), fix));
    }
    Ok(format!("{item}, permanently"))
}

/// Deletes what a failed cycle left, best effort: the attachment first (with its files), then the item (whose
/// permanent delete would take the attachment's record but leave its files on WebDAV).
pub fn clean_up(report: &mut Report, client: &mut Client, scratch: Scratch) {
    if scratch.item.is_none() && scratch.attachment.is_none() {
        return;
    }
    report.note("Cleaning up what the run created:");
    if let Some(attachment) = &scratch.attachment {
        report.clean(&format!("cleanup: delete attachment {attachment}"), || delete_attachment(client, attachment));
    }
    if let Some(item) = &scratch.item {
        report.clean(&format!("cleanup: delete item {item}"), || delete_item(client, item));
    }
}

/// Removes scratch items of earlier runs that did not get to clean up (killed half-way), when older than an hour
/// so that a run going on elsewhere keeps its own.
pub fn sweep(report: &mut Report, client: &mut Client) {
    report.check("sweep: leftovers of earlier runs", || {
        let arguments = json!({ "tags": [TAG], "includeTrashed": true, "limit": 50 });
        let found = structured("zotero_search", call(client, "zotero_search", arguments, FIX_WRITE)?)?;
        let now = unix_now();
        let old: Vec<String> = found["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["title"].as_str().and_then(started_at).is_some_and(|t| now.saturating_sub(t) > LEFTOVER_SECS))
            .filter_map(|i| i["key"].as_str().map(str::to_owned))
            .collect();
        for item in &old {
            // Its attachments first, so their files go too.
            let read = call(client, "zotero_get_item", json!({ "key": item, "includeChildren": true }), FIX_WRITE)?;
            let children = structured("zotero_get_item", read)?["children"].as_array().cloned().unwrap_or_default();
            for child in children.iter().filter(|c| c["itemType"] == "attachment") {
                if let Some(key) = child["key"].as_str() {
                    delete_attachment(client, key)?;
                }
            }
            delete_item(client, item)?;
        }
        Ok(match old.len() {
            0 => "none".to_owned(),
            n => format!("deleted {n}: {}", old.join(", ")),
        })
    });
}

/// Text with every run of whitespace made one space, lowercased: how quotes are compared.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Six words in a row from the first line of the text that has that many.
fn six_words(text: &str) -> String {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() >= 6)
        .map(|w| w[..6].join(" "))
        .unwrap_or_else(|| QUOTE.to_owned())
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// `YYYY-MM-DD HH:MM:SS UTC` of a Unix time.
pub fn utc(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = zotero_mcp_core::calendar::civil_from_days(days as i64);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// The Unix time in a scratch item's title, if it is one.
pub fn started_at(title: &str) -> Option<u64> {
    let stamp = title.strip_prefix(TITLE_PREFIX)?;
    let number = |range: std::ops::Range<usize>| stamp.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    let days = zotero_mcp_core::calendar::days_from_civil(year, month, day);
    u64::try_from(days * 86_400 + hour * 3600 + minute * 60 + second).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_carry_the_time_of_the_run_and_give_it_back() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_785_412_345), "2026-07-30 11:52:25 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        for secs in [0, 951_782_400, 1_785_412_345, 4_102_444_799] {
            assert_eq!(started_at(&format!("{TITLE_PREFIX}{}", utc(secs))), Some(secs));
        }
        assert_eq!(started_at("zotero-mcp e2e yesterday"), None);
        assert_eq!(started_at("A paper about zotero-mcp e2e 2026-07-30 11:52:25 UTC"), None);
    }

    #[test]
    fn quotes_are_compared_without_case_or_spacing() {
        assert_eq!(squeeze("This  demonstration\npaper "), "this demonstration paper");
        assert_eq!(six_words("short line\none two three four five six seven"), "one two three four five six");
        assert_eq!(six_words("too short"), QUOTE);
    }

    #[test]
    fn the_attached_file_is_the_sample_pdf() {
        assert!(PDF.starts_with(b"%PDF-"));
        assert_eq!(PDF.len(), 69_692, "crates/sim/demo/files/LICENSES.md lists this size");
    }
}
