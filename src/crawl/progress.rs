//! Progress while crawling: pages/s, hosts active, queued hosts, in flight, and events
//! (errors, backoffs) — a live line on a terminal, plain periodic lines otherwise.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crawler::crawl::{CrawlCounters, CrawlEvent};
use indicatif::{ProgressBar, ProgressStyle};

use crate::pipeline::progress::ProgressMode;

pub struct CrawlProgress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// One status line.
pub fn status_line(c: &CrawlCounters, secs: f64) -> String {
    let pages = c.pages_out.load(Relaxed);
    let errors = c.sum(|e| matches!(e, CrawlEvent::FetchError(_)));
    let backoffs = c.sum(|e| matches!(e, CrawlEvent::BackoffRetryAfter | CrawlEvent::BackoffExponential));
    format!(
        "{pages} pages ({:.1}/s), {} requests, {} hosts active, {} hosts queued, {} in flight, {errors} errors, {backoffs} backoffs",
        pages as f64 / secs.max(1e-9),
        c.requests.load(Relaxed),
        c.hosts_active.load(Relaxed),
        c.queued_hosts.load(Relaxed),
        c.in_flight.load(Relaxed),
    )
}

impl CrawlProgress {
    pub fn start(mode: ProgressMode, c: Arc<CrawlCounters>) -> CrawlProgress {
        let mode = match mode {
            ProgressMode::Auto if std::io::stderr().is_terminal() => ProgressMode::Bar,
            ProgressMode::Auto => ProgressMode::Plain,
            m => m,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = match mode {
            ProgressMode::None => None,
            ProgressMode::Bar => Some(std::thread::spawn(move || {
                let bar = ProgressBar::new_spinner();
                bar.set_style(
                    ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                let start = Instant::now();
                while !s.load(Relaxed) {
                    bar.set_message(status_line(&c, start.elapsed().as_secs_f64()));
                    bar.tick();
                    std::thread::sleep(Duration::from_millis(200));
                }
                bar.finish_and_clear();
            })),
            _ => Some(std::thread::spawn(move || {
                let start = Instant::now();
                let mut next = Duration::from_secs(5);
                while !s.load(Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    if start.elapsed() >= next {
                        next += Duration::from_secs(5);
                        eprintln!("crawl: {}", status_line(&c, start.elapsed().as_secs_f64()));
                    }
                }
            })),
        };
        CrawlProgress { stop, thread }
    }

    pub fn finish(mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
