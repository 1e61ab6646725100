//! Typed pipeline events feeding counters: pages in/out per stage, busy time, and pages
//! skipped by reason. Printed at the end of a run and written by `--stats-json`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

/// Counters of one stage, shared by its workers.
#[derive(Debug, Default)]
pub struct StageMetrics {
    pub name: &'static str,
    pub workers: AtomicU64,
    pub items_in: AtomicU64,
    pub items_out: AtomicU64,
    pub busy_nanos: AtomicU64,
}

impl StageMetrics {
    pub fn new(name: &'static str) -> Self {
        StageMetrics { name, ..Default::default() }
    }

    pub fn record(&self, busy: Duration, produced: bool) {
        self.items_in.fetch_add(1, Ordering::Relaxed);
        self.items_out.fetch_add(produced as u64, Ordering::Relaxed);
        self.busy_nanos.fetch_add(busy.as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> StageSnapshot {
        StageSnapshot {
            stage: self.name,
            workers: self.workers.load(Ordering::Relaxed),
            items_in: self.items_in.load(Ordering::Relaxed),
            items_out: self.items_out.load(Ordering::Relaxed),
            busy_seconds: self.busy_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }
}

/// A stage's counters at one moment.
#[derive(Debug, Clone, Serialize)]
pub struct StageSnapshot {
    pub stage: &'static str,
    pub workers: u64,
    pub items_in: u64,
    pub items_out: u64,
    /// Summed over the stage's workers.
    pub busy_seconds: f64,
}

/// Why a page or input did not make it into the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// URL recursion error: a path sequence repeated (§3.4.1).
    TrapRepeatedPath,
    /// URL recursion error: prefix deeper than the limit (appendix A).
    TrapTooDeep,
    /// HTTP status outside 200–299.
    StatusNot2xx,
    /// Not HTML or text (images, PDFs, scripts …).
    NotText,
    /// Already in the store (same URL and body digest).
    AlreadyStored,
    /// Over the body size cap.
    TooLarge,
    /// A WARC record or file that could not be read (the error is reported).
    ReadError,
    /// No URL could be formed.
    BadUrl,
    /// A robots.txt file (in crawl WARCs): rules, not content.
    RobotsTxt,
    /// A WARC page record whose Content-Length does not match where the record really ends:
    /// its block is not the page (the error, with file and offset, is reported).
    WarcLengthMismatch,
    /// A FIFO, socket or device file among the inputs: not read.
    NotRegularFile,
}

impl SkipReason {
    /// Why a WARC record was skipped: a length that disagrees with the block has its own
    /// count, every other reader error is a read error.
    pub fn of_warc_error(e: &crawler::warc::WarcError) -> SkipReason {
        match e.kind {
            crawler::warc::WarcErrorKind::LengthMismatch => SkipReason::WarcLengthMismatch,
            _ => SkipReason::ReadError,
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            SkipReason::TrapRepeatedPath => "trap_repeated_path",
            SkipReason::TrapTooDeep => "trap_too_deep",
            SkipReason::StatusNot2xx => "status_not_2xx",
            SkipReason::NotText => "not_text",
            SkipReason::AlreadyStored => "already_stored",
            SkipReason::TooLarge => "too_large",
            SkipReason::ReadError => "read_error",
            SkipReason::BadUrl => "bad_url",
            SkipReason::RobotsTxt => "robots_txt",
            SkipReason::WarcLengthMismatch => "warc_length_mismatch",
            SkipReason::NotRegularFile => "not_regular_file",
        }
    }
}

/// Skip counters plus a bounded list of error messages for the user.
#[derive(Debug, Default)]
pub struct Skips {
    counts: Mutex<BTreeMap<SkipReason, u64>>,
    errors: Mutex<Vec<String>>,
    errors_total: AtomicU64,
}

/// Keep at most this many error messages (all are counted).
const MAX_KEPT_ERRORS: usize = 200;

impl Skips {
    pub fn add(&self, reason: SkipReason, n: u64) {
        if n == 0 {
            return;
        }
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        *c.entry(reason).or_default() += n;
    }

    pub fn error(&self, msg: String) {
        tracing::warn!(error = %msg, "read error");
        self.errors_total.fetch_add(1, Ordering::Relaxed);
        let mut e = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        if e.len() < MAX_KEPT_ERRORS {
            e.push(msg);
        }
    }

    pub fn counts(&self) -> BTreeMap<&'static str, u64> {
        let c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.iter().map(|(k, v)| (k.as_str(), *v)).collect()
    }

    pub fn errors(&self) -> Vec<String> {
        self.errors.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn errors_total(&self) -> u64 {
        self.errors_total.load(Ordering::Relaxed)
    }
}
