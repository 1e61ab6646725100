//! The scan pipeline: stages as actors connected by bounded `crossbeam-channel`s.
//!
//! ```text
//!  source ──► trap filter ──► clean (pool) ──► fingerprint (pool) ──► match (pool) ──► store writer
//!  (WARC /     (recursion      (html5ever       (file + chunk           (stop chunks,      (sled, atomic
//!   dirs)       errors,         blocks)           SHA-1)                 contains,          batches)
//!               status, type)                                            neighborhoods)
//! ```
//!
//! Every channel is bounded, so a slow store slows reading and never grows memory. The CPU
//! stages are pools of `threads` workers each. The crawler hands its fetched pages to the same
//! stages (DESIGN.md), so a scan and a crawl detect identically.

pub mod focus;
pub mod metrics;
pub mod pool;
pub mod progress;
pub mod source_remote;
pub mod source_stage;
pub mod stages;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossbeam_channel::{bounded, Receiver, Sender};
use detector::{CleanOptions, Normalization, TrapRules};
use serde::Serialize;
use store::{PageWrite, Store};

use metrics::{SkipReason, Skips, StageMetrics, StageSnapshot};
use stages::{FilterSettings, Matcher};

/// Everything a scan needs, parsed from the command line or built by a library user.
pub struct ScanConfig {
    pub inputs: Vec<PathBuf>,
    /// URL prefix for directory inputs (default: `http://` for a `DIR/HOST/PATH` folder, else
    /// `file://<absolute dir>/`; `crate::source::dir::url_prefix_for`).
    pub url_prefix: Option<String>,
    pub normalization: Normalization,
    pub traps: TrapRules,
    /// Workers per CPU stage.
    pub threads: usize,
    /// Inputs read at once (`source_stage::run_partition`); 0: as many as `threads`.
    pub readers: usize,
    /// Pages per store batch.
    pub batch_size: usize,
    /// Largest body read, in bytes.
    pub max_body_bytes: u64,
    pub progress: progress::ProgressMode,
    /// How `http://` and `https://` inputs are fetched.
    pub remote: source_remote::RemoteInputs,
}

/// Totals of one run, for the end-of-run summary and `--stats-json`.
#[derive(Debug, Clone, Serialize)]
pub struct ScanStats {
    pub seconds: f64,
    pub input_bytes: u64,
    pub payload_bytes: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    pub skipped: std::collections::BTreeMap<&'static str, u64>,
    pub errors: u64,
    pub error_samples: Vec<String>,
    pub stages: Vec<StageSnapshot>,
    /// Remote (HTTP) inputs; all zero for a local scan.
    pub remote: RemoteTotals,
}

/// What happened to a run's remote inputs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RemoteTotals {
    /// Files read to the end in this run (and recorded in the store).
    pub files_read: u64,
    /// Files passed over: an earlier run into this store finished them.
    pub files_finished_before: u64,
    /// Files given up after their retries (reported as read errors; a rerun tries again).
    pub files_failed: u64,
    /// Transfers resumed with `Range`, and failed attempts retried.
    pub resumes: u64,
    pub retries: u64,
}

/// Run a scan of `cfg.inputs` into `store`, matching against `matcher`.
pub fn run_scan(cfg: &ScanConfig, store: Arc<Store>, matcher: Matcher) -> Result<ScanStats> {
    run_scan_partition(cfg, store, matcher, crawler::partition::Partition::SINGLE)
}

/// [`run_scan`] for one partition of a scan split over several processes: it reads the
/// inputs numbered ≡ i (mod N) (`source_stage::run_partition`); `ditto report` merges the
/// stores.
pub fn run_scan_partition(
    cfg: &ScanConfig,
    store: Arc<Store>,
    matcher: Matcher,
    part: crawler::partition::Partition,
) -> Result<ScanStats> {
    // The input size is needed only for a progress bar.
    let plan = source_stage::plan_for_scan(&cfg.inputs, cfg.progress != progress::ProgressMode::None, part)?;
    for notice in plan.layout_notices(cfg.url_prefix.as_deref()) {
        eprintln!("{notice}");
    }
    let total = plan.total_bytes;
    let opts = source_stage::SourceOptions {
        url_prefix: cfg.url_prefix.clone(),
        max_body_bytes: cfg.max_body_bytes,
        remote: cfg.remote.clone(),
        store: Some(store.clone()),
        readers: if cfg.readers == 0 { cfg.threads } else { cfg.readers },
    };
    let settings = PipelineSettings {
        normalization: cfg.normalization,
        traps: cfg.traps,
        threads: cfg.threads,
        batch_size: cfg.batch_size,
        progress: cfg.progress,
        extract_links: false,
        progress_total_bytes: total,
        durable_batches: false,
        max_batch_age: SCAN_BATCH_AGE,
        source_waiting: None,
    };
    run_pipeline(&settings, store, matcher, move |tx, skips, counters| {
        source_stage::run_partition(plan, opts, part, tx, &skips, &counters)
    })
}

/// Settings every pipeline run shares (scan or crawl).
pub struct PipelineSettings {
    pub normalization: Normalization,
    pub traps: TrapRules,
    pub threads: usize,
    pub batch_size: usize,
    pub progress: progress::ProgressMode,
    /// Collect links in the clean stage (crawls need them).
    pub extract_links: bool,
    /// Input size for the progress bar (0 when unknown).
    pub progress_total_bytes: u64,
    /// Flush the store to disk soon after each batch (batches written within
    /// [`SYNC_EVERY`] share a flush, at most [`SYNC_PAGES`] pages). Crawls want this: a page
    /// stored but not yet flushed when the process is killed is fetched again on resume.
    /// (Scans redo lost work from their inputs, so they leave flushing to sled's timer.)
    pub durable_batches: bool,
    /// A batch is written when full or when its first page has waited this long
    /// ([`SCAN_BATCH_AGE`], [`CRAWL_BATCH_AGE`]).
    pub max_batch_age: Duration,
    /// Set while the source (a crawl) waits on the pages it has sent: the writer then writes
    /// its batch at once rather than at its age (checked every [`WAITING_POLL`]).
    pub source_waiting: Option<Arc<AtomicBool>>,
}

impl PipelineSettings {
    /// Workers per CPU stage (at least one).
    fn workers(&self) -> usize {
        self.threads.max(1)
    }

    /// Pages each channel between two stages holds.
    fn channel_capacity(&self) -> usize {
        16 * self.workers()
    }
}

/// Run the stages over what `source` sends, until it returns and everything is stored.
pub fn run_pipeline<S>(
    cfg: &PipelineSettings,
    store: Arc<Store>,
    matcher: Matcher,
    source: S,
) -> Result<ScanStats>
where
    S: FnOnce(Sender<stages::Input>, Arc<Skips>, Arc<source_stage::SourceCounters>) -> Result<()>
        + Send
        + 'static,
{
    let start = Instant::now();
    load_earlier_pages(&store, &matcher)?;
    let live_origins = matcher.origins.clone();
    let cap = cfg.channel_capacity();
    let skips = Arc::new(Skips::default());
    let counters = Arc::new(source_stage::SourceCounters::default());
    let (src_tx, src_rx) = bounded(cap);
    let (m_tx, m_rx) = bounded::<PageWrite>(cap.max(cfg.batch_size));
    let metrics = PipelineMetrics::new();
    let progress = progress::Progress::start(cfg.progress, cfg.progress_total_bytes, counters.clone());

    // Source: a thread (the scan's readers start more, `source_stage::run_partition`; or the
    // crawler's runtime).
    let source = {
        let (skips, counters) = (skips.clone(), counters.clone());
        std::thread::Builder::new()
            .name("source".into())
            .spawn(move || source(src_tx, skips, counters))
            .context("spawning the source thread")?
    };
    let tallies = (skips.clone(), counters.clone());
    let workers = spawn_stages(cfg, &store, matcher, &tallies, &metrics, src_rx, m_tx);

    // Store writer: this thread, in batches.
    let mut writer = StoreWriter {
        store: &store,
        live_origins: live_origins.as_deref(),
        durable_batches: cfg.durable_batches,
        skips: &skips,
        counters: &counters,
        metrics: &metrics.store,
        batch: Vec::with_capacity(cfg.batch_size),
        batch_size: cfg.batch_size,
        max_batch_age: cfg.max_batch_age,
        source_waiting: cfg.source_waiting.clone(),
        unsynced: 0,
        unsynced_since: None,
        written: 0,
    };
    let writer_cpu = metrics::CpuSpan::start();
    let write_result = writer.run(&m_rx);
    writer_cpu.end(writer.metrics);
    let written = writer.written;
    // On a write error, dropping the receiver makes the pools stop.
    drop(m_rx);
    for w in workers {
        let _ = w.join();
    }
    let source_result = source.join().map_err(|_| anyhow::anyhow!("the source thread panicked"))?;
    progress.finish();
    write_result?;
    source_result?;
    store.flush().context("flushing the store")?;

    let c = &counters;
    use std::sync::atomic::Ordering::Relaxed;
    Ok(ScanStats {
        seconds: start.elapsed().as_secs_f64(),
        input_bytes: c.input_bytes_done.load(Relaxed),
        payload_bytes: c.payload_bytes.load(Relaxed),
        pages_read: c.pages_read.load(Relaxed),
        pages_written: written,
        skipped: skips.counts(),
        errors: skips.errors_total(),
        error_samples: skips.errors(),
        stages: {
            // The source's readers, where the source is a scan's (a crawl's reports none).
            let source = (c.stage.workers.load(Relaxed) > 0).then(|| c.stage.snapshot());
            source.into_iter().chain(metrics.snapshots()).collect()
        },
        remote: RemoteTotals {
            files_read: c.remote.files_read.load(Relaxed),
            files_finished_before: c.remote.files_finished_before.load(Relaxed),
            files_failed: c.remote.files_failed.load(Relaxed),
            resumes: c.remote.resumes.load(Relaxed),
            retries: c.remote.retries.load(Relaxed),
        },
    })
}

/// Pages stored before (a resumed crawl or scan, or another scan into the same store) count
/// as earlier pages for live near-duplicate marking and live origins (`--origins`).
fn load_earlier_pages(store: &Arc<Store>, matcher: &Matcher) -> Result<()> {
    if let Some(nd) = &matcher.near_dups {
        let mut earlier = Vec::new();
        for rec in store.pages() {
            let rec = rec?;
            if let (Some(simhash), Some(_)) = (rec.simhash, &rec.text_hash) {
                earlier.push((rec.url, simhash));
            }
        }
        nd.load(earlier);
    }
    if let Some(lo) = &matcher.origins {
        lo.load(store)?;
    }
    Ok(())
}

/// Each stage's metrics, in pipeline order.
struct PipelineMetrics {
    filter: Arc<StageMetrics>,
    clean: Arc<StageMetrics>,
    fingerprint: Arc<StageMetrics>,
    matching: Arc<StageMetrics>,
    store: Arc<StageMetrics>,
}

impl PipelineMetrics {
    fn new() -> PipelineMetrics {
        let store = Arc::new(StageMetrics::new("store"));
        store.workers.store(1, std::sync::atomic::Ordering::Relaxed);
        PipelineMetrics {
            filter: Arc::new(StageMetrics::new("filter")),
            clean: Arc::new(StageMetrics::new("clean")),
            fingerprint: Arc::new(StageMetrics::new("fingerprint")),
            matching: Arc::new(StageMetrics::new("match")),
            store,
        }
    }

    fn snapshots(&self) -> Vec<StageSnapshot> {
        [&self.filter, &self.clean, &self.fingerprint, &self.matching, &self.store]
            .iter()
            .map(|m| m.snapshot())
            .collect()
    }
}

/// The CPU stages between the source and the store writer: trap filter, clean, fingerprint
/// and match pools of `cfg.threads` workers each.
fn spawn_stages(
    cfg: &PipelineSettings,
    store: &Arc<Store>,
    matcher: Matcher,
    (skips, counters): &(Arc<Skips>, Arc<source_stage::SourceCounters>),
    metrics: &PipelineMetrics,
    input: Receiver<stages::Input>,
    output: Sender<PageWrite>,
) -> Vec<JoinHandle<()>> {
    let (threads, cap) = (cfg.workers(), cfg.channel_capacity());
    let (flt_tx, flt_rx) = bounded(cap);
    let (cln_tx, cln_rx) = bounded(cap);
    let (fp_tx, fp_rx) = bounded(cap);
    let mut workers = Vec::new();
    // A store that fails to answer keeps the per-page lookup (its errors are counted there).
    let skip_stored = store.has_any_page().unwrap_or(true);
    let filter_settings = FilterSettings { traps: cfg.traps, store: Some(store.clone()), skip_stored };
    let (s, c) = (skips.clone(), counters.clone());
    workers.extend(pool::spawn_pool(metrics.filter.clone(), threads, input, flt_tx, move |p| {
        let kept = stages::filter(p, &filter_settings, &s);
        if kept.is_none() {
            c.pages_dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        kept
    }));
    let clean_opts = CleanOptions { extract_links: cfg.extract_links };
    workers.extend(pool::spawn_pool(metrics.clean.clone(), threads, flt_rx, cln_tx, move |p| {
        Some(stages::clean(p, &clean_opts))
    }));
    let norm = cfg.normalization;
    let need = stages::DigestNeed::of(&matcher);
    workers.extend(pool::spawn_pool(metrics.fingerprint.clone(), threads, cln_rx, fp_tx, move |p| {
        Some(stages::fingerprint(p, &norm, &need))
    }));
    // The store keeps each evidence passage's source and block, not its text (read back
    // from the page's source for reports), and nothing after this pool reads the passages:
    // they are not built.
    let matcher = Arc::new(Matcher { passage_chars: 0, ..matcher });
    let s = skips.clone();
    workers.extend(pool::spawn_pool(metrics.matching.clone(), threads, fp_rx, output, move |p| {
        // The store rows are encoded here, in the pool: the writer only applies them.
        let mut w = stages::match_stage(p, &matcher);
        match w.encode() {
            Ok(()) => {
                // Live origins reads the text blocks in the writer; nothing else there does.
                w.shed_encoded(matcher.origins.is_some());
                Some(w)
            }
            Err(e) => {
                s.add(SkipReason::ReadError, 1);
                s.error(format!("encoding a store record: {e}"));
                None
            }
        }
    }));
    workers
}

/// A scan's batches close when full or when their first page is this old.
pub const SCAN_BATCH_AGE: Duration = Duration::from_millis(200);

/// A crawl's batches close sooner: a page's links enter the frontier with its batch, and a
/// host's next URLs are often those links (its politeness delay, e.g. 20 ms, is the budget);
/// the crawl also ends only once its last pages' batch is written.
pub const CRAWL_BATCH_AGE: Duration = Duration::from_millis(20);

/// With `durable_batches`, the batches written are made durable together (one sled flush,
/// which waits for the disk) once the oldest not yet durable is this old, or once this many
/// pages are: a flush per batch cost a crawl more than its batches did. A kill (or a crash)
/// loses at most these pages' records and ticket completions, and they are fetched again
/// on resume, nothing is lost.
pub const SYNC_EVERY: Duration = Duration::from_millis(100);
/// See [`SYNC_EVERY`].
pub const SYNC_PAGES: usize = 256;

/// How often the writer of a batch not yet due checks whether its source waits on it
/// ([`PipelineSettings::source_waiting`]). At the end of a crawl, the last pages' batch
/// was written up to [`CRAWL_BATCH_AGE`] after they came, and the crawl waited on it.
const WAITING_POLL: Duration = Duration::from_millis(2);

/// How long the writer waits for a page while its batch is empty.
const IDLE_WAIT: Duration = Duration::from_secs(1);

/// How long the store writer sleeps when its queue is empty while a batch is open
/// ([`recv_polling`]).
const OPEN_BATCH_POLL: Duration = Duration::from_millis(1);

/// `rx.recv_timeout(wait)` for a writer with a batch open: when the queue is empty it sleeps
/// [`OPEN_BATCH_POLL`] and looks again, taking the pages that came meanwhile one by one.
///
/// Why not block on the channel: a blocking receive spins and calls `sched_yield` a few
/// times before it parks, once per page, as the writer is faster than the pages come. Each
/// yield tells Linux's scheduler (EEVDF) that the writer has used its turn, so when the batch
/// is full the writer's flush ran as the least entitled thread on its core and was cut into
/// by every other stage: on one pinned core, 21.9–23.3 ms of wall for 10.8–11.0 ms of CPU
/// over 10 flushes, 14–32 involuntary switches (text-heavy pages). Polling, its busy share
/// of the scan fell from 4.4–7.2 % to 2.4–3.1 %, for 0.5 points more CPU (the wakeups;
/// BENCHMARKS.md, issue 22 round 7). While no batch is open the writer has nothing to flush
/// and blocks as before.
fn recv_polling(
    rx: &Receiver<PageWrite>,
    wait: Duration,
) -> Result<PageWrite, crossbeam_channel::RecvTimeoutError> {
    use crossbeam_channel::{RecvTimeoutError, TryRecvError};
    let until = Instant::now() + wait;
    loop {
        match rx.try_recv() {
            Ok(page) => return Ok(page),
            Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(RecvTimeoutError::Timeout);
                }
                std::thread::sleep(left.min(OPEN_BATCH_POLL));
            }
        }
    }
}

/// The store writer: matched pages written in batches, fed to live origins in arrival order.
struct StoreWriter<'a> {
    store: &'a Store,
    live_origins: Option<&'a crate::live::origins::LiveOrigins>,
    durable_batches: bool,
    skips: &'a Skips,
    counters: &'a source_stage::SourceCounters,
    metrics: &'a StageMetrics,
    batch: Vec<PageWrite>,
    batch_size: usize,
    max_batch_age: Duration,
    source_waiting: Option<Arc<AtomicBool>>,
    unsynced: usize,
    unsynced_since: Option<Instant>,
    /// Pages written so far.
    written: u64,
}

impl StoreWriter<'_> {
    /// Write everything `rx` sends until the match stage is done, then the last batch;
    /// stops at the first write error.
    fn run(&mut self, rx: &Receiver<PageWrite>) -> Result<()> {
        // When the batch's first page came.
        let mut started: Option<Instant> = None;
        loop {
            let mut wait = match started {
                Some(t) => self.max_batch_age.saturating_sub(t.elapsed()),
                None => IDLE_WAIT,
            };
            if let Some(t) = self.unsynced_since {
                wait = wait.min(SYNC_EVERY.saturating_sub(t.elapsed()));
            }
            if started.is_some() && self.source_waiting.is_some() {
                wait = wait.min(WAITING_POLL);
            }
            let got = if started.is_some() { recv_polling(rx, wait) } else { rx.recv_timeout(wait) };
            match got {
                Ok(page) => {
                    if let Some(lo) = self.live_origins {
                        lo.observe(&page);
                    }
                    self.batch.push(page);
                    started.get_or_insert_with(Instant::now);
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            }
            if self.batch.len() >= self.batch_size
                || started.is_some_and(|t| t.elapsed() >= self.max_batch_age)
                || (started.is_some() && self.source_is_waiting())
            {
                self.flush()?;
                started = None;
            }
            if self.unsynced_since.is_some_and(|t| t.elapsed() >= SYNC_EVERY) {
                self.sync()?;
            }
        }
        self.flush()?;
        if let Some(lo) = self.live_origins {
            lo.finish()?;
        }
        Ok(())
    }

    /// Whether the source waits on the pages sent ([`PipelineSettings::source_waiting`]).
    fn source_is_waiting(&self) -> bool {
        self.source_waiting.as_ref().is_some_and(|w| w.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Make the batches written so far durable.
    fn sync(&mut self) -> Result<()> {
        self.store.flush().context("flushing the store")?;
        self.unsynced = 0;
        self.unsynced_since = None;
        Ok(())
    }

    /// Write the batch (and live origins' table); with `durable_batches`, flush to disk when
    /// the pages not yet durable are [`SYNC_EVERY`] old or [`SYNC_PAGES`] many.
    fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let t = Instant::now();
        let n = self.batch.len();
        let out = self.store.write_batch(&self.batch).context("writing to the store")?;
        if let Some(lo) = self.live_origins {
            lo.flush(self.store)?;
        }
        if self.durable_batches {
            self.unsynced += n;
            self.unsynced_since.get_or_insert(t);
            if self.unsynced >= SYNC_PAGES || self.unsynced_since.is_some_and(|s| s.elapsed() >= SYNC_EVERY) {
                self.sync()?;
            }
        }
        self.written += out.written;
        self.skips.add(SkipReason::AlreadyStored, out.already_stored);
        self.counters.pages_done.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        for _ in 0..n {
            self.metrics.record(t.elapsed() / n as u32, true);
        }
        self.batch.clear();
        Ok(())
    }
}
