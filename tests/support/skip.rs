//! A test that cannot run where it is run says so here, instead of returning as if it had passed. Included with
//! `#[path = "…/tests/support/skip.rs"] mod skip;` by the test files that need it (any crate).
//!
//! libtest has no skipped outcome, and it keeps a passing test's output to itself, so the skip is both printed
//! (seen with `--nocapture`) and appended to the file `ZOTERO_MCP_SKIP_LOG` names: `scripts/unit.sh` (`make unit`)
//! sets it, counts the skips beside the passed and failed tests, and fails on one that `tests/expected-skips.txt`
//! does not declare for this environment.

/// Records that `test` (its function name, as `tests/expected-skips.txt` names it) did not run, and why.
pub fn skip(test: &str, reason: &str) {
    use std::io::Write;
    eprintln!("SKIP: {test} — {reason}");
    let Some(path) = std::env::var_os("ZOTERO_MCP_SKIP_LOG") else { return };
    // One short append per skip: lines from tests running at once do not interleave.
    let line = format!("{test}\t{reason}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(error) = written {
        panic!("{test} skipped ({reason}), and the skip could not be recorded in {}: {error}", path.to_string_lossy());
    }
}
