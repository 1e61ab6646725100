//! Typed pipeline events feeding counters: pages in/out per stage, busy time, and pages
//! skipped by reason. Printed at the end of a run and written by `--stats-json`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

/// Buckets of the per-item time histogram: four per doubling of microseconds, up to
/// 2^(HIST_BUCKETS/4) µs (≈ 18 hours).
const HIST_BUCKETS: usize = 128;

/// The histogram bucket of `us` microseconds: ⌊4·log2(us + 1)⌋.
fn bucket_of(us: u64) -> usize {
    let x = (us + 1) as f64;
    ((x.log2() * 4.0) as usize).min(HIST_BUCKETS - 1)
}

/// The upper bound of bucket `b`, in milliseconds.
fn bucket_upper_ms(b: usize) -> f64 {
    (2f64.powf((b + 1) as f64 / 4.0) - 1.0) / 1000.0
}

/// Counters of one stage, shared by its workers.
#[derive(Debug)]
pub struct StageMetrics {
    pub name: &'static str,
    pub workers: AtomicU64,
    pub items_in: AtomicU64,
    pub items_out: AtomicU64,
    pub busy_nanos: AtomicU64,
    /// CPU time of the stage's threads while they ran it ([`thread_cpu_time`]), nanoseconds.
    pub cpu_nanos: AtomicU64,
    /// Slowest item, nanoseconds.
    pub max_nanos: AtomicU64,
    /// Items by time taken ([`bucket_of`]), for the p99.
    hist: [AtomicU64; HIST_BUCKETS],
}

impl StageMetrics {
    pub fn new(name: &'static str) -> Self {
        StageMetrics {
            name,
            workers: AtomicU64::new(0),
            items_in: AtomicU64::new(0),
            items_out: AtomicU64::new(0),
            busy_nanos: AtomicU64::new(0),
            cpu_nanos: AtomicU64::new(0),
            max_nanos: AtomicU64::new(0),
            hist: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Add CPU time a thread spent on this stage.
    pub fn add_cpu(&self, cpu: Duration) {
        self.cpu_nanos.fetch_add(cpu.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Add busy time not spent on an item (a reader listing a folder, or reading past the
    /// last page of a file).
    pub fn add_busy(&self, busy: Duration) {
        self.busy_nanos.fetch_add(busy.as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn record(&self, busy: Duration, produced: bool) {
        let nanos = busy.as_nanos() as u64;
        self.items_in.fetch_add(1, Ordering::Relaxed);
        self.items_out.fetch_add(produced as u64, Ordering::Relaxed);
        self.busy_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.max_nanos.fetch_max(nanos, Ordering::Relaxed);
        self.hist[bucket_of(nanos / 1000)].fetch_add(1, Ordering::Relaxed);
    }

    /// The 99th percentile of item times in milliseconds, as its histogram bucket's upper
    /// bound (at most 19 % above the true value) or the slowest item, whichever is less; 0
    /// with no items.
    pub fn p99_ms(&self) -> f64 {
        // Never above the slowest item (the bucket's bound can be).
        let max = self.max_nanos.load(Ordering::Relaxed) as f64 / 1e6;
        let counts: Vec<u64> = self.hist.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return 0.0;
        }
        let rank = total - total / 100; // items at or below the p99
        let mut acc = 0;
        for (b, c) in counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                return bucket_upper_ms(b).min(max);
            }
        }
        max
    }

    pub fn snapshot(&self) -> StageSnapshot {
        StageSnapshot {
            stage: self.name,
            workers: self.workers.load(Ordering::Relaxed),
            items_in: self.items_in.load(Ordering::Relaxed),
            items_out: self.items_out.load(Ordering::Relaxed),
            busy_seconds: self.busy_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            cpu_seconds: self.cpu_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            max_ms: self.max_nanos.load(Ordering::Relaxed) as f64 / 1e6,
            p99_ms: self.p99_ms(),
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
    /// Summed over the stage's workers: wall time from taking an item to handing it on,
    /// which includes time the thread was runnable but not running (threads that share a
    /// core, as in a pinned one-core scan, count each other's turns).
    pub busy_seconds: f64,
    /// CPU time the stage's threads used (summed; 0 where the OS does not tell): the share
    /// of the machine a stage takes, whatever else runs beside it. Filled in when its
    /// threads end (for the store writer: when it stops).
    pub cpu_seconds: f64,
    /// The slowest item (page, or a batch's share for the store writer), milliseconds.
    pub max_ms: f64,
    /// 99th percentile of item times, milliseconds (within 19 % above).
    pub p99_ms: f64,
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

/// CPU time the calling thread has used so far (`CLOCK_THREAD_CPUTIME_ID`); `None` where the
/// OS does not tell.
pub fn thread_cpu_time() -> Option<Duration> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        if rc == 0 {
            return Some(Duration::new(u64::try_from(ts.tv_sec).ok()?, u32::try_from(ts.tv_nsec).ok()?));
        }
        None
    }
    #[cfg(not(unix))]
    None
}

/// The CPU time the calling thread spends from now until [`CpuSpan::end`].
pub struct CpuSpan(Option<Duration>);

impl CpuSpan {
    pub fn start() -> CpuSpan {
        CpuSpan(thread_cpu_time())
    }

    /// Add the CPU time spent since [`CpuSpan::start`] to `metrics`.
    pub fn end(self, metrics: &StageMetrics) {
        if let (Some(a), Some(b)) = (self.0, thread_cpu_time()) {
            metrics.add_cpu(b.saturating_sub(a));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p99_and_max_follow_the_slow_items() {
        let m = StageMetrics::new("t");
        assert_eq!(m.p99_ms(), 0.0);
        for _ in 0..990 {
            m.record(Duration::from_micros(100), true);
        }
        for _ in 0..10 {
            m.record(Duration::from_millis(50), true);
        }
        let p = m.p99_ms();
        assert!((0.1..=0.119).contains(&p), "p99 {p} ms");
        for _ in 0..20 {
            m.record(Duration::from_millis(50), true);
        }
        // The bucket's bound is 55.1 ms; the slowest item caps it.
        assert_eq!(m.p99_ms(), 50.0);
        let s = m.snapshot();
        assert!((s.max_ms - 50.0).abs() < 1e-6 && s.items_in == 1020);
    }

    #[test]
    fn cpu_spans_count_the_thread_s_cpu_time_not_its_sleep() {
        let m = StageMetrics::new("t");
        let wall = std::time::Instant::now();
        let span = CpuSpan::start();
        std::thread::sleep(Duration::from_millis(30));
        let mut x = 1u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        assert_ne!(x, 0);
        span.end(&m);
        let (cpu, wall) = (m.snapshot().cpu_seconds, wall.elapsed().as_secs_f64());
        if thread_cpu_time().is_some() {
            // The 30 ms asleep are not CPU time.
            assert!(cpu > 0.0 && cpu <= wall - 0.025, "cpu {cpu} s, wall {wall} s");
        }
    }
}
