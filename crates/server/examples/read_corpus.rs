//! Every PDF of a corpus read page by page through `zotero_read_attachment`, as a client reads a long document
//! (`scripts/read-corpus.sh`, `make read-corpus`): one call with default arguments, then
//! `fromPage = nextFromPage` until the answer is no longer truncated.
//!
//! Each file is uploaded, on a fresh bench (the Zotero simulator with the demo library and an in-memory WebDAV
//! folder, tests/common/dav.rs), as the file of the demo attachment `UN79YVS8`, which has no entry in Zotero's
//! full-text index, so every call reads the file. The text cache is keyed by the attachment's md5, which the
//! simulator does not change on upload, so a bench is never reused for a second file.
//!
//! Per file: the pages the engine counts, the calls, the pages read (which must be exactly 1..=total, in order,
//! with no gap and no repeat), the largest answer in characters (structuredContent JSON + text blocks, as
//! clients count them), the time, and a verdict. An error answer, a gap, a repeat, an answer over
//! `MAX_RESULT_CHARS`, a read that does not end on the last page, or a page count other than the one `corpus.tsv`
//! (next to the directory, from pdfinfo) records is a FAIL. A refusal is `ok (refused: …)` only when it says the
//! pages have no text layer (a scan), or for a file in a directory named `adversarial`. Exits 1 when anything
//! failed, 2 on bad arguments.
//!
//! Built with the tests' features, so every answer is also checked against the tool's published output schema
//! (a mismatch panics; the panic is caught per file and reported as a FAIL).
//!
//! Usage: `cargo run --release -p zotero-mcp-server --example read_corpus -- <file.pdf | directory>…`

#[path = "../tests/common/mod.rs"]
#[allow(unused_imports)]
mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zotero_mcp_core::pdf::{PdfDocument, PdfLimits};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::mcp::registry::MAX_RESULT_CHARS;

/// A PDF attachment of the demo library without an entry in Zotero's full-text index (parent KPDKK5UT).
const ATTACHMENT: &str = "UN79YVS8";
const TOOL: &str = "zotero_read_attachment";
/// How much of a refusal's message is shown.
const MESSAGE_CHARS: usize = 100;
/// How much of each answer's text `READ_CORPUS_VERBOSE=1` shows.
const VERBOSE_TEXT_CHARS: usize = 160;

/// `READ_CORPUS_VERBOSE=1`: one line per call on stderr (pages, size, truncated, nextFromPage, note, the text's
/// beginning), to see why a file fails.
fn verbose() -> bool {
    std::env::var_os("READ_CORPUS_VERBOSE").is_some_and(|v| !v.is_empty() && v != "0")
}

/// How a file's read ended.
enum Verdict {
    Ok,
    /// Refused with an expected error: at which page, and the message.
    Refused {
        at: usize,
        message: String,
    },
    Fail(String),
}

/// One file's figures.
struct Report {
    name: String,
    total: Option<u64>,
    calls: usize,
    pages: Vec<usize>,
    largest: usize,
    /// Characters of document text read, over all calls.
    text_chars: usize,
    /// Pages too long for one answer, sent cut (their beginning only).
    cut: Vec<usize>,
    elapsed: Duration,
    verdict: Verdict,
}

impl Report {
    /// A file not read yet: nothing counted, verdict ok until something fails.
    fn new(file: &Path) -> Self {
        Report {
            name: file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned()),
            total: None,
            calls: 0,
            pages: Vec::new(),
            largest: 0,
            text_chars: 0,
            cut: Vec::new(),
            elapsed: Duration::ZERO,
            verdict: Verdict::Ok,
        }
    }
}

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments.is_empty() || arguments.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!("usage: read_corpus <file.pdf | directory>…  (a directory: every *.pdf in it)");
        return ExitCode::from(2);
    }
    let mut files = Vec::new();
    for argument in &arguments {
        match pdfs_in(Path::new(argument)) {
            Ok(found) => files.extend(found),
            Err(message) => {
                eprintln!("read_corpus: {argument}: {message}");
                return ExitCode::from(2);
            }
        }
    }
    if files.is_empty() {
        eprintln!("read_corpus: no PDF in {}", arguments.join(", "));
        return ExitCode::from(2);
    }

    let started = Instant::now();
    println!(
        "{:<24} {:>6} {:>6} {:<12} {:>8} {:>9} {:>8}  verdict",
        "file", "pages", "calls", "read", "largest", "text", "time"
    );
    let mut reports = Vec::new();
    for file in &files {
        let report = check_in_thread(file);
        println!("{}", line(&report));
        reports.push(report);
    }

    let count = |f: fn(&Verdict) -> bool| reports.iter().filter(|r| f(&r.verdict)).count();
    let ok = count(|v| matches!(v, Verdict::Ok));
    let refused = count(|v| matches!(v, Verdict::Refused { .. }));
    let failed = count(|v| matches!(v, Verdict::Fail(_)));
    let largest = reports.iter().max_by_key(|r| r.largest);
    let calls: usize = reports.iter().map(|r| r.calls).sum();
    let pages: usize = reports.iter().map(|r| r.pages.len()).sum();
    println!(
        "\n{} files: {ok} ok, {refused} refused as expected, {failed} FAIL · {pages} pages in {calls} calls · \
         largest answer {} characters ({}; the limit is {MAX_RESULT_CHARS}) · {:.1} s",
        reports.len(),
        largest.map_or(0, |r| r.largest),
        largest.map_or("-", |r| r.name.as_str()),
        started.elapsed().as_secs_f64(),
    );
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `path` itself, or every `*.pdf` directly in it (sorted by name).
fn pdfs_in(path: &Path) -> Result<Vec<PathBuf>, String> {
    let metadata = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !metadata.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| e.to_string())?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("pdf")))
        .collect();
    found.sort();
    Ok(found)
}

/// The page counts `corpus.tsv` (in the directory above the file's) records, by file name.
fn recorded_pages(file: &Path) -> HashMap<String, u64> {
    let Some(tsv) = file.parent().and_then(Path::parent).map(|dir| dir.join("corpus.tsv")) else {
        return HashMap::new();
    };
    let Ok(text) = std::fs::read_to_string(tsv) else { return HashMap::new() };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let (Some(name_at), Some(pages_at)) =
        (header.iter().position(|h| *h == "file"), header.iter().position(|h| *h == "pages"))
    else {
        return HashMap::new();
    };
    lines
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            Some((cells.get(name_at)?.to_string(), cells.get(pages_at)?.trim().parse().ok()?))
        })
        .collect()
}

/// [`check`] on a thread of its own, so that a panic (a schema mismatch, a bug) is one file's FAIL.
fn check_in_thread(file: &Path) -> Report {
    let started = Instant::now();
    let owned = file.to_owned();
    let joined = std::thread::Builder::new()
        // The size of a main thread's stack, which is what the native server's requests run on.
        .stack_size(8 << 20)
        .spawn(move || check(&owned))
        .map_err(|e| format!("cannot start a thread: {e}"))
        .and_then(|handle| {
            handle.join().map_err(|panic| {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "(no message)".to_owned());
                format!("panicked: {}", first_line(&message))
            })
        });
    match joined {
        Ok(report) => report,
        Err(why) => Report { elapsed: started.elapsed(), verdict: Verdict::Fail(why), ..Report::new(file) },
    }
}

fn check(file: &Path) -> Report {
    let started = Instant::now();
    let mut report = Report::new(file);
    let data = match std::fs::read(file) {
        Ok(data) => data,
        Err(e) => {
            report.verdict = Verdict::Fail(format!("cannot read the file: {e}"));
            return report;
        }
    };
    let adversarial = file.parent().and_then(Path::file_name).is_some_and(|d| d == "adversarial");
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "file.pdf".into());
    let recorded = recorded_pages(file).get(&name).copied();

    let bench = common::dav::bench(true);
    bench.upload(ATTACHMENT, &name, &data);
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a tokio runtime");
    report.verdict = runtime.block_on(read_all(&bench, adversarial, &mut report));
    if report.total.is_none() {
        // Refused before any answer said how long the document is: count its pages here, for the table only.
        report.total = PdfDocument::open_owned(data, &PdfLimits::default()).ok().map(|d| d.page_count() as u64);
    }
    if let (Verdict::Ok, Some(total), Some(recorded)) = (&report.verdict, report.total, recorded) {
        if total != recorded {
            report.verdict = Verdict::Fail(format!("{total} pages counted, corpus.tsv (pdfinfo) says {recorded}"));
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// The calls, from the default one to the last continuation; what they add up to.
async fn read_all(bench: &common::dav::Bench, adversarial: bool, report: &mut Report) -> Verdict {
    let mut arguments = json!({ "itemKey": ATTACHMENT });
    // The page the next answer must start with.
    let mut next = 1usize;
    loop {
        if let Some(total) = report.total {
            if report.calls >= 2 * total as usize + 5 {
                return Verdict::Fail(format!("no end after {} calls (at page {next})", report.calls));
            }
        }
        let result = bench.tool(TOOL, Grant::read_only("owner"), arguments.clone()).await;
        report.calls += 1;
        let size = answer_chars(&result);
        report.largest = report.largest.max(size);
        if size > MAX_RESULT_CHARS {
            return Verdict::Fail(format!("the answer from page {next} has {size} characters"));
        }
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            let message = message_of(&result);
            if verbose() {
                eprintln!("  {}: from page {next} · {size} chars · error: {message}", report.name);
            }
            return if message.contains("no text layer") || adversarial {
                Verdict::Refused { at: next, message: message.chars().take(MESSAGE_CHARS).collect() }
            } else {
                Verdict::Fail(format!("error at fromPage {next} ({size} chars): {message}"))
            };
        }
        let out = &result["structuredContent"];
        if out["source"] != "webdav" {
            return Verdict::Fail(format!("the text came from {} (expected the file on WebDAV)", out["source"]));
        }
        let Some(total) = out["totalPages"].as_u64() else {
            return Verdict::Fail(format!("no totalPages in the answer from page {next}"));
        };
        if report.total.is_some_and(|known| known != total) {
            return Verdict::Fail(format!("totalPages changed to {total} at page {next}"));
        }
        report.total = Some(total);
        let pages: Vec<usize> = out["pages"]
            .as_array()
            .map(|pages| pages.iter().filter_map(Value::as_u64).map(|p| p as usize).collect())
            .unwrap_or_default();
        if pages.is_empty() {
            return Verdict::Fail(format!("no pages in the answer from page {next}"));
        }
        for &page in &pages {
            if page != next {
                let what = if page > next { "gap" } else { "repeat" };
                return Verdict::Fail(format!("{what}: page {page} where page {next} was due"));
            }
            report.pages.push(page);
            next += 1;
        }
        if out["note"].as_str().is_some_and(|n| n.contains("alone is longer")) {
            report.cut.extend(pages.last());
        }
        let text = out["text"].as_str().unwrap_or_default();
        report.text_chars += text.chars().count();
        let truncated = out["truncated"].as_bool() == Some(true);
        if verbose() {
            let head: String = text.chars().take(VERBOSE_TEXT_CHARS).collect();
            eprintln!(
                "  {}: pages {} · {size} chars · truncated {truncated} · nextFromPage {} · note {} · text {head:?}",
                report.name,
                span(&pages),
                out["nextFromPage"],
                out["note"],
            );
        }
        match (truncated, out["nextFromPage"].as_u64()) {
            (true, Some(from)) if from as usize == next => {
                arguments = json!({ "itemKey": ATTACHMENT, "fromPage": from })
            }
            (true, Some(from)) => {
                return Verdict::Fail(format!("nextFromPage {from} after page {}", next - 1));
            }
            _ => break,
        }
    }
    let total = report.total.unwrap_or_default() as usize;
    if next - 1 != total {
        return Verdict::Fail(format!("the read ended at page {} of {total}", next - 1));
    }
    Verdict::Ok
}

/// An answer's size as clients count it: the structuredContent as JSON, plus every text block.
fn answer_chars(result: &Value) -> usize {
    let structured = result.get("structuredContent").map_or(0, |s| s.to_string().chars().count());
    let texts: usize = result["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).map(|t| t.chars().count()).sum())
        .unwrap_or_default();
    structured + texts
}

fn message_of(result: &Value) -> String {
    let message = result["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// `1-63`, or the pages as they came when they are not one run.
fn span(pages: &[usize]) -> String {
    match (pages.first(), pages.last()) {
        (None, _) | (_, None) => "-".to_owned(),
        (Some(first), Some(last)) if last - first + 1 == pages.len() => format!("{first}-{last}"),
        _ => format!("{} pages", pages.len()),
    }
}

fn line(report: &Report) -> String {
    let total = report.total.map_or_else(|| "?".to_owned(), |t| t.to_string());
    let mut verdict = match &report.verdict {
        Verdict::Ok => "ok".to_owned(),
        Verdict::Refused { at: 1, message } => format!("ok (refused: {message})"),
        Verdict::Refused { at, message } => format!("ok (refused at page {at}: {message})"),
        Verdict::Fail(why) => format!("FAIL: {why}"),
    };
    if !report.cut.is_empty() {
        let cut: Vec<String> = report.cut.iter().map(usize::to_string).collect();
        verdict.push_str(&format!(" [cut to fit: p.{}]", cut.join(", ")));
    }
    format!(
        "{:<24} {:>6} {:>6} {:<12} {:>8} {:>9} {:>7.2}s  {verdict}",
        report.name,
        total,
        report.calls,
        span(&report.pages),
        report.largest,
        report.text_chars,
        report.elapsed.as_secs_f64(),
    )
}
