//! What a run found: one [`Step`] per check, the clean-up of what a `--write` run created, and their rendering
//! — a line per step for people (printed as each step ends, so a slow server shows where it is), or one JSON
//! document for machines (`--json`).

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Passed,
    Failed,
    /// Not run, because a step it needs failed (or there was nothing to run it on).
    Skipped,
}

/// One check, or one clean-up action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub name: String,
    pub outcome: Outcome,
    pub ms: u64,
    /// What was found (a count, a key) or what went wrong.
    pub detail: String,
    /// For a failure: what to do about it.
    pub fix: Option<String>,
}

impl Step {
    pub fn ok(&self) -> bool {
        self.outcome != Outcome::Failed
    }

    /// The step as one line (two when it failed: the fix goes below).
    pub fn line(&self) -> String {
        let mark = match self.outcome {
            Outcome::Passed => "✓",
            Outcome::Failed => "✗",
            Outcome::Skipped => "–",
        };
        let time = if self.outcome == Outcome::Skipped { " ".repeat(9) } else { format!("{:>6} ms", self.ms) };
        let mut line = format!("{mark} {:<34} {time}  {}", self.name, self.detail);
        if let Some(fix) = &self.fix {
            line.push_str(&format!("\n    → {fix}"));
        }
        line.trim_end().to_owned()
    }

    fn to_json(&self) -> Value {
        let mut step = json!({
            "name": self.name,
            "ok": self.ok(),
            "outcome": self.outcome,
            "ms": self.ms,
            "detail": self.detail,
        });
        if let Some(fix) = &self.fix {
            step["fix"] = json!(fix);
        }
        step
    }
}

/// Why a step failed: what happened, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub detail: String,
    pub fix: String,
}

impl Failure {
    pub fn new(detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { detail: detail.into(), fix: fix.into() }
    }
}

/// The steps of a run, printed as they end unless the run renders JSON at the end.
pub struct Report {
    pub server: String,
    pub write: bool,
    pub steps: Vec<Step>,
    pub cleanup: Vec<Step>,
    /// Keys of what the `--write` cycle created: `item`, `attachment`.
    pub scratch: Vec<(&'static str, String)>,
    json: bool,
    started: Instant,
}

impl Report {
    pub fn new(server: String, write: bool, json: bool) -> Self {
        Self {
            server,
            write,
            steps: Vec::new(),
            cleanup: Vec::new(),
            scratch: Vec::new(),
            json,
            started: Instant::now(),
        }
    }

    /// Prints a line of its own (a heading or a note), in the human form only.
    pub fn note(&self, text: &str) {
        if !self.json {
            println!("{text}");
        }
    }

    /// Runs a check, times it and records it: `Ok(detail)` passes, `Err` fails. Returns whether it passed.
    pub fn check(&mut self, name: &str, run: impl FnOnce() -> Result<String, Failure>) -> bool {
        self.check_with(name, || run().map(|detail| ((), detail))).is_some()
    }

    /// [`Report::check`] for a step whose result a later step needs; `None` when it failed.
    pub fn check_with<T>(&mut self, name: &str, run: impl FnOnce() -> Result<(T, String), Failure>) -> Option<T> {
        let (result, elapsed) = timed(run);
        let (value, step) = match result {
            Ok((value, detail)) => (Some(value), step(name, Outcome::Passed, elapsed, detail, None)),
            Err(failure) => (None, step(name, Outcome::Failed, elapsed, failure.detail, Some(failure.fix))),
        };
        self.push(step);
        value
    }

    /// Records a step that did not run, and why.
    pub fn skip(&mut self, name: &str, why: &str) {
        self.push(step(name, Outcome::Skipped, Duration::ZERO, why.to_owned(), None));
    }

    /// Runs and records a clean-up action (listed apart from the checks: it is not what the run checks, but a
    /// failed one leaves something behind, so it fails the run too).
    pub fn clean(&mut self, name: &str, run: impl FnOnce() -> Result<String, Failure>) -> bool {
        let (result, elapsed) = timed(run);
        let step = match result {
            Ok(detail) => step(name, Outcome::Passed, elapsed, detail, None),
            Err(failure) => step(name, Outcome::Failed, elapsed, failure.detail, Some(failure.fix)),
        };
        let ok = step.ok();
        if !self.json {
            println!("{}", step.line());
        }
        self.cleanup.push(step);
        ok
    }

    fn push(&mut self, step: Step) {
        if !self.json {
            println!("{}", step.line());
        }
        self.steps.push(step);
    }

    /// Whether every step and every clean-up action passed (skipped ones count as passed: a skip follows a
    /// failure, which is counted, or means there was nothing to check).
    pub fn passed(&self) -> bool {
        self.steps.iter().chain(&self.cleanup).all(Step::ok)
    }

    /// The closing line of the human form.
    pub fn summary_line(&self) -> String {
        let count = |o| self.steps.iter().filter(|s| s.outcome == o).count();
        let (passed, failed, skipped) = (count(Outcome::Passed), count(Outcome::Failed), count(Outcome::Skipped));
        let cleanup_failed = self.cleanup.iter().filter(|s| !s.ok()).count();
        let mut line = format!(
            "{}: {passed} passed, {failed} failed{} in {} ms",
            if self.passed() { "PASSED" } else { "FAILED" },
            if skipped > 0 { format!(", {skipped} skipped") } else { String::new() },
            self.started.elapsed().as_millis()
        );
        if cleanup_failed > 0 {
            line.push_str(&format!(
                "; {cleanup_failed} clean-up action(s) failed: the scratch items above are still in the library \
                 (tag zotero-mcp-e2e), delete them in Zotero"
            ));
        } else if !self.cleanup.is_empty() {
            line.push_str("; everything the run created was removed");
        }
        line
    }

    /// The whole run as one JSON document.
    pub fn to_json(&self) -> Value {
        let count = |o| self.steps.iter().filter(|s| s.outcome == o).count();
        let scratch: serde_json::Map<String, Value> =
            self.scratch.iter().map(|(what, key)| ((*what).to_owned(), json!(key))).collect();
        json!({
            "server": self.server,
            "mode": if self.write { "write" } else { "read-only" },
            "steps": self.steps.iter().map(Step::to_json).collect::<Vec<_>>(),
            "cleanup": self.cleanup.iter().map(Step::to_json).collect::<Vec<_>>(),
            "scratch": scratch,
            "summary": {
                "ok": self.passed(),
                "passed": count(Outcome::Passed),
                "failed": count(Outcome::Failed),
                "skipped": count(Outcome::Skipped),
                "cleanupFailed": self.cleanup.iter().filter(|s| !s.ok()).count(),
                "ms": self.started.elapsed().as_millis() as u64,
            },
        })
    }
}

fn timed<T>(run: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let result = run();
    (result, start.elapsed())
}

fn step(name: &str, outcome: Outcome, elapsed: Duration, detail: String, fix: Option<String>) -> Step {
    Step { name: name.to_owned(), outcome, ms: elapsed.as_millis() as u64, detail, fix }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet() -> Report {
        Report::new("https://zotero.example.org/mcp".into(), true, true)
    }

    #[test]
    fn a_line_shows_the_mark_the_name_the_time_and_the_fix() {
        let passed = step("search", Outcome::Passed, Duration::from_millis(42), "3 hits".into(), None);
        assert_eq!(passed.line(), format!("✓ {:<34}     42 ms  3 hits", "search"));
        let failed = step(
            "write: highlight",
            Outcome::Failed,
            Duration::from_millis(7),
            "HTTP 500".into(),
            Some("retry".into()),
        );
        assert_eq!(failed.line(), format!("✗ {:<34}      7 ms  HTTP 500\n    → retry", "write: highlight"));
        let skipped = step("item read", Outcome::Skipped, Duration::ZERO, "no hit to read".into(), None);
        assert!(skipped.line().starts_with("– item read"), "{}", skipped.line());
        assert!(!skipped.line().contains("ms"), "a skipped step has no time: {}", skipped.line());
    }

    #[test]
    fn the_json_document_has_steps_cleanup_scratch_and_summary() {
        let mut report = quiet();
        assert!(report.check("metadata", || Ok("ok".into())));
        assert_eq!(report.check_with("search", || Ok((5, "5 hits".into()))), Some(5));
        assert!(!report.check("write: highlight", || Err(Failure::new("HTTP 500 from Zotero", "try again"))));
        report.skip("write: rename", "an earlier write step failed");
        report.scratch.push(("item", "ABCD2345".into()));
        assert!(report.clean("cleanup: delete item ABCD2345", || Ok("deleted".into())));
        let doc = report.to_json();
        assert_eq!(doc["mode"], "write");
        assert_eq!(doc["steps"].as_array().map(Vec::len), Some(4));
        assert_eq!(
            doc["steps"][2],
            json!({
                "name": "write: highlight", "ok": false, "outcome": "failed", "ms": doc["steps"][2]["ms"],
                "detail": "HTTP 500 from Zotero", "fix": "try again",
            })
        );
        assert_eq!(doc["steps"][3]["outcome"], "skipped");
        assert_eq!(doc["steps"][3]["ok"], true);
        assert_eq!(doc["cleanup"][0]["name"], "cleanup: delete item ABCD2345");
        assert_eq!(doc["scratch"], json!({ "item": "ABCD2345" }));
        let summary = &doc["summary"];
        assert_eq!((summary["ok"].clone(), summary["passed"].clone()), (json!(false), json!(2)));
        assert_eq!((summary["failed"].clone(), summary["skipped"].clone()), (json!(1), json!(1)));
        assert_eq!(summary["cleanupFailed"], 0);
    }

    #[test]
    fn a_failed_cleanup_fails_the_run_and_says_what_is_left() {
        let mut report = quiet();
        assert!(report.check("search", || Ok("1 hit".into())));
        assert!(report.passed());
        assert!(!report.clean("cleanup: delete item ABCD2345", || Err(Failure::new("HTTP 503", "delete it"))));
        assert!(!report.passed());
        let line = report.summary_line();
        assert!(line.starts_with("FAILED: 1 passed, 0 failed"), "{line}");
        assert!(line.contains("still in the library"), "{line}");
    }

    #[test]
    fn the_summary_counts_skips_and_says_when_everything_was_removed() {
        let mut report = quiet();
        report.check("a", || Ok(String::new()));
        report.skip("b", "nothing to read");
        report.clean("cleanup: delete item K", || Ok(String::new()));
        let line = report.summary_line();
        assert!(line.starts_with("PASSED: 1 passed, 0 failed, 1 skipped in "), "{line}");
        assert!(line.ends_with("everything the run created was removed"), "{line}");
    }
}
