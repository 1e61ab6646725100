//! Logging as Rust services do it: the engine emits `tracing` events with fields (`host`,
//! `url`, `error`, `contains`, …) — fetch failures and refused addresses in a crawl, read
//! errors and matched pages in a scan — and this subscriber prints them on stderr: human
//! lines (coloured on a terminal), or one JSON object per line with `--log-format json`.
//! Level: warnings by default, `-v` info (every failed fetch), `-vv` debug (every page),
//! `-q` errors only; `RUST_LOG` (e.g. `RUST_LOG=crawler=debug`) overrides. A command's own
//! summary lines are its output, not log events, and print whatever the level.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// How log events are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Lines for people (coloured when stderr is a terminal).
    #[default]
    Human,
    /// One JSON object per event: timestamp, level, target, fields.
    Json,
}

/// The level directive for `-q`/`-v` counts.
pub fn level(quiet: u8, verbose: u8) -> &'static str {
    match (quiet, verbose) {
        (q, _) if q > 0 => "error",
        (_, 0) => "warn",
        (_, 1) => "info",
        (_, 2) => "debug",
        _ => "trace",
    }
}

/// Install the subscriber (once, at start). `RUST_LOG`, when set, wins over `-q`/`-v`.
pub fn init(quiet: u8, verbose: u8, format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level(quiet, verbose)));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Human => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_and_verbose_pick_the_level() {
        assert_eq!(level(0, 0), "warn");
        assert_eq!(level(0, 1), "info");
        assert_eq!(level(0, 2), "debug");
        assert_eq!(level(1, 2), "error");
    }
}
