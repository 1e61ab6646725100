//! Progress of long runs: a bar (pages, MB/s, ETA from input bytes) on a terminal, plain
//! periodic lines otherwise, nothing with `--progress none`.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::source_stage::SourceCounters;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ProgressMode {
    /// A bar on a terminal, plain lines otherwise.
    Auto,
    Bar,
    Plain,
    None,
}

pub struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn start(mode: ProgressMode, total_bytes: u64, c: Arc<SourceCounters>) -> Progress {
        let mode = match mode {
            ProgressMode::Auto if std::io::stderr().is_terminal() => ProgressMode::Bar,
            ProgressMode::Auto => ProgressMode::Plain,
            m => m,
        };
        let stop = Arc::new(AtomicBool::new(false));
        match mode {
            ProgressMode::Bar => {
                let bar = ProgressBar::new(total_bytes);
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                let (b, s) = (bar.clone(), stop.clone());
                let thread = std::thread::spawn(move || {
                    while !s.load(Relaxed) {
                        b.set_position(c.input_bytes_done.load(Relaxed));
                        b.set_message(format!("{} pages", c.pages_done.load(Relaxed)));
                        std::thread::sleep(Duration::from_millis(200));
                    }
                });
                Progress { stop, thread: Some(thread), bar: Some(bar) }
            }
            ProgressMode::Plain => {
                let s = stop.clone();
                let thread = std::thread::spawn(move || {
                    let start = Instant::now();
                    let mut next = Duration::from_secs(5);
                    while !s.load(Relaxed) {
                        std::thread::sleep(Duration::from_millis(100));
                        if start.elapsed() < next {
                            continue;
                        }
                        next += Duration::from_secs(5);
                        let done = c.input_bytes_done.load(Relaxed);
                        let secs = start.elapsed().as_secs_f64();
                        let pct =
                            if total_bytes > 0 { 100.0 * done as f64 / total_bytes as f64 } else { 0.0 };
                        eprintln!(
                            "progress: {} pages, {:.1}/{:.1} MB input ({pct:.0}%), {:.1} MB/s payload, {:.0}s",
                            c.pages_done.load(Relaxed),
                            done as f64 / 1e6,
                            total_bytes as f64 / 1e6,
                            c.payload_bytes.load(Relaxed) as f64 / 1e6 / secs.max(1e-9),
                            secs
                        );
                    }
                });
                Progress { stop, thread: Some(thread), bar: None }
            }
            _ => Progress { stop, thread: None, bar: None },
        }
    }

    pub fn finish(mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
