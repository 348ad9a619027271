use std::io::Write;

/// The server's operator diagnostics (the `log` facade) as lines on stderr, which stays free for them on
/// stdio too: stdout carries the protocol.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            let _ = writeln!(std::io::stderr(), "zotero-mcp: {}: {}", record.target(), record.args());
        }
    }

    fn flush(&self) {}
}

/// Routes the `log` facade to stderr (once per process).
pub fn install() {
    static LOGGER: StderrLog = StderrLog;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
}
