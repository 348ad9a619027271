//! `zotero-sim --listen 127.0.0.1:PORT [--storage-listen 127.0.0.1:PORT] [--demo [--demo-files-on-zotero-storage]]
//! [--api-key KEY] [--user-id N] [--exit-after SECONDS] [--control] [--synthetic N [--seed S]]`
//!
//! Serves the Zotero Web API simulator over HTTP on a loopback address, and its Zotero Storage origin on a
//! second one. See docs/simulator.md.

use std::process::ExitCode;

fn main() -> ExitCode {
    let result = zotero_sim::server::parse_args(std::env::args().skip(1))
        .and_then(|command_line| zotero_sim::server::run_command_line(&command_line));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zotero-sim: {e}");
            ExitCode::from(2)
        }
    }
}
