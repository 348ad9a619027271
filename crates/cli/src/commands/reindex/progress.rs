//! What `zotero-mcp reindex` prints while it works: one line per sending call, and the indexing backlog as a
//! bar that redraws itself on a terminal (plain lines otherwise), each with a rate and an ETA.

use std::io::Write;
use std::time::{Duration, Instant};

const BAR_WIDTH: usize = 24;

/// Items sent and removed so far in this run, and since when.
pub struct Sending {
    started: Instant,
    pub sent: u64,
    pub removed: u64,
}

impl Sending {
    pub fn new() -> Self {
        Self { started: Instant::now(), sent: 0, removed: 0 }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Counts a call and returns its progress line.
    pub fn record(&mut self, call: u32, submitted: u64, removed: u64, remaining: u64) -> String {
        self.sent += submitted;
        self.removed += removed;
        let rate = per_second(self.sent, self.elapsed());
        let removed = if self.removed > 0 { format!(", {} removed", self.removed) } else { String::new() };
        format!(
            "call {call}: sent {submitted} ({} so far{removed}), {remaining} remaining, {}, ETA {}",
            self.sent,
            format_rate(rate, "items"),
            eta(remaining, rate)
        )
    }
}

/// The indexing backlog as it drains: the highest count seen is the bar's whole.
pub struct Backlog {
    peak: u64,
    peak_at: Instant,
    started: Instant,
    terminal: bool,
    drawn: bool,
}

impl Backlog {
    pub fn new(terminal: bool) -> Self {
        let now = Instant::now();
        Self { peak: 0, peak_at: now, started: now, terminal, drawn: false }
    }

    /// Time since the backlog was first seen.
    pub fn waited(&self) -> Duration {
        self.started.elapsed()
    }

    /// Shows `left` documents still to index: redraws the bar in place on a terminal, prints a line otherwise.
    pub fn show(&mut self, left: u64) {
        if left > self.peak {
            // More than before (new documents arrived): the rate starts over from here.
            self.peak = left;
            self.peak_at = Instant::now();
        }
        let rate = per_second(self.peak - left, self.peak_at.elapsed());
        let line = backlog_line(left, self.peak, rate);
        let mut out = std::io::stdout().lock();
        if self.terminal {
            let _ = write!(out, "\r{line}\x1b[K");
            self.drawn = true;
        } else {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }

    /// Ends the in-place line, so that what follows starts on its own.
    pub fn finish(&mut self) {
        if self.drawn {
            println!();
            self.drawn = false;
        }
    }
}

/// An error message printed after the run starts on a line of its own.
impl Drop for Backlog {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `indexing [#####-----] 50% 5 of 10 documents left, 0.8 docs/s, ETA 6s`.
pub fn backlog_line(left: u64, total: u64, rate: f64) -> String {
    let total = total.max(left).max(1);
    let done = total - left;
    let filled = (done as usize * BAR_WIDTH) / total as usize;
    let bar = format!("{}{}", "#".repeat(filled), "-".repeat(BAR_WIDTH - filled));
    let percent = done * 100 / total;
    format!(
        "indexing [{bar}] {percent:>3}% {left} of {total} documents left, {}, ETA {}",
        format_rate(rate, "docs"),
        eta(left, rate)
    )
}

fn per_second(count: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if count == 0 || secs <= 0.0 {
        0.0
    } else {
        count as f64 / secs.max(0.001)
    }
}

fn format_rate(rate: f64, unit: &str) -> String {
    if rate <= 0.0 {
        format!("– {unit}/s")
    } else {
        format!("{rate:.1} {unit}/s")
    }
}

fn eta(left: u64, rate: f64) -> String {
    if left == 0 {
        "0s".into()
    } else if rate <= 0.0 {
        "unknown".into()
    } else {
        duration((left as f64 / rate).ceil() as u64)
    }
}

/// `45s`, `3m 05s`, `2h 07m`.
pub fn duration(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(59), "59s");
        assert_eq!(duration(65), "1m 05s");
        assert_eq!(duration(7620), "2h 07m");
    }

    #[test]
    fn the_bar_fills_as_the_backlog_drains() {
        assert_eq!(
            backlog_line(5, 10, 0.5),
            "indexing [############------------]  50% 5 of 10 documents left, 0.5 docs/s, ETA 10s"
        );
        assert!(backlog_line(0, 10, 2.0).starts_with(&format!("indexing [{}] 100%", "#".repeat(BAR_WIDTH))));
        assert!(backlog_line(3, 3, 0.0).ends_with("– docs/s, ETA unknown"));
    }

    #[test]
    fn a_sending_line_has_the_totals_the_rate_and_an_eta() {
        let mut sending = Sending::new();
        let line = sending.record(1, 100, 0, 200);
        assert!(line.starts_with("call 1: sent 100 (100 so far), 200 remaining, "), "{line}");
        assert!(line.contains(" items/s, ETA "), "{line}");
        let line = sending.record(2, 100, 3, 0);
        assert!(line.starts_with("call 2: sent 100 (200 so far, 3 removed), 0 remaining, "), "{line}");
        assert!(line.ends_with("ETA 0s"), "{line}");
    }
}
