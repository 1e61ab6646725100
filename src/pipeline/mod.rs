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

pub mod metrics;
pub mod pool;
pub mod progress;
pub mod source_stage;
pub mod stages;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossbeam_channel::{bounded, Sender};
use detector::{CleanOptions, Normalization, TrapRules};
use serde::Serialize;
use store::{PageWrite, Store};

use metrics::{SkipReason, Skips, StageMetrics, StageSnapshot};
use stages::{FilterSettings, Matcher};

/// Everything a scan needs, parsed from the command line or built by a library user.
pub struct ScanConfig {
    pub inputs: Vec<PathBuf>,
    /// URL prefix for directory inputs (default `file://<absolute dir>/`).
    pub url_prefix: Option<String>,
    pub normalization: Normalization,
    pub traps: TrapRules,
    /// Workers per CPU stage.
    pub threads: usize,
    /// Pages per store batch.
    pub batch_size: usize,
    /// Largest body read, in bytes.
    pub max_body_bytes: u64,
    pub progress: progress::ProgressMode,
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
    let plan = source_stage::plan(&cfg.inputs)?;
    let total = plan.total_bytes;
    let opts = source_stage::SourceOptions {
        url_prefix: cfg.url_prefix.clone(),
        max_body_bytes: cfg.max_body_bytes,
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
    /// Flush the store to disk after every batch. Crawls want this: a page stored but not
    /// yet flushed when the process is killed would be fetched again on resume. (Scans redo
    /// lost work from their inputs, so they leave flushing to sled's timer.)
    pub durable_batches: bool,
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
    // Live near-duplicate marking: pages stored before (a resumed crawl or scan, or another
    // scan into the same store) count as earlier pages.
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
    // Live origins (`--origins`): pages stored before count as earlier documents.
    let live_origins = matcher.origins.clone();
    if let Some(lo) = &live_origins {
        lo.load(&store)?;
    }
    let threads = cfg.threads.max(1);
    let cap = 16 * threads;
    let skips = Arc::new(Skips::default());
    let counters = Arc::new(source_stage::SourceCounters::default());

    let (src_tx, src_rx) = bounded(cap);
    let (flt_tx, flt_rx) = bounded(cap);
    let (cln_tx, cln_rx) = bounded(cap);
    let (fp_tx, fp_rx) = bounded(cap);
    let (m_tx, m_rx) = bounded::<PageWrite>(cap.max(cfg.batch_size));

    let m_filter = Arc::new(StageMetrics::new("filter"));
    let m_clean = Arc::new(StageMetrics::new("clean"));
    let m_fp = Arc::new(StageMetrics::new("fingerprint"));
    let m_match = Arc::new(StageMetrics::new("match"));
    let m_store = Arc::new(StageMetrics::new("store"));
    m_store.workers.store(1, std::sync::atomic::Ordering::Relaxed);

    let progress = progress::Progress::start(cfg.progress, cfg.progress_total_bytes, counters.clone());

    // Source: one thread (WARC/directory reader, or the crawler's runtime).
    let source = {
        let (skips, counters) = (skips.clone(), counters.clone());
        std::thread::Builder::new()
            .name("source".into())
            .spawn(move || source(src_tx, skips, counters))
            .context("spawning the source thread")?
    };

    let mut workers = Vec::new();
    let filter_settings = FilterSettings { traps: cfg.traps, store: Some(store.clone()) };
    let s = skips.clone();
    workers.extend(pool::spawn_pool(m_filter.clone(), 1, src_rx, flt_tx, move |p| {
        stages::filter(p, &filter_settings, &s)
    }));
    let clean_opts = CleanOptions { extract_links: cfg.extract_links };
    workers.extend(pool::spawn_pool(m_clean.clone(), threads, flt_rx, cln_tx, move |p| {
        Some(stages::clean(p, &clean_opts))
    }));
    let norm = cfg.normalization;
    let need = stages::DigestNeed::of(&matcher);
    workers.extend(pool::spawn_pool(m_fp.clone(), threads, cln_rx, fp_tx, move |p| {
        Some(stages::fingerprint(p, &norm, &need))
    }));
    let matcher = Arc::new(matcher);
    workers.extend(pool::spawn_pool(m_match.clone(), threads, fp_rx, m_tx, move |p| {
        Some(stages::match_stage(p, &matcher))
    }));

    // Store writer: this thread, in batches.
    let mut written = 0u64;
    let mut batch: Vec<PageWrite> = Vec::with_capacity(cfg.batch_size);
    let mut write_error = None;
    let durable_batches = cfg.durable_batches;
    let flush = |batch: &mut Vec<PageWrite>, written: &mut u64| -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let t = Instant::now();
        let n = batch.len();
        let out = store.write_batch(batch).context("writing to the store")?;
        if let Some(lo) = &live_origins {
            lo.flush(&store)?;
        }
        if durable_batches {
            store.flush().context("flushing the store")?;
        }
        *written += out.written;
        skips.add(SkipReason::AlreadyStored, out.already_stored);
        counters.pages_done.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        for _ in 0..n {
            m_store.record(t.elapsed() / n as u32, true);
        }
        batch.clear();
        Ok(())
    };
    let mut last_flush = Instant::now();
    // Batches close when full or 200 ms old, so a slow source (a crawl) still sees its
    // pages, and their links, stored promptly.
    const MAX_BATCH_AGE: Duration = Duration::from_millis(200);
    loop {
        let wait = MAX_BATCH_AGE.saturating_sub(last_flush.elapsed()).max(Duration::from_millis(1));
        let closed = match m_rx.recv_timeout(wait) {
            Ok(page) => {
                if let Some(lo) = &live_origins {
                    lo.observe(&page);
                }
                batch.push(page);
                false
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => false,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => true,
        };
        if closed {
            break;
        }
        if batch.len() >= cfg.batch_size || last_flush.elapsed() >= MAX_BATCH_AGE {
            if let Err(e) = flush(&mut batch, &mut written) {
                write_error = Some(e);
                break;
            }
            last_flush = Instant::now();
        }
    }
    if write_error.is_none() {
        if let Err(e) = flush(&mut batch, &mut written) {
            write_error = Some(e);
        }
    }
    if let (None, Some(lo)) = (&write_error, &live_origins) {
        if let Err(e) = lo.finish() {
            write_error = Some(e);
        }
    }
    // On a write error, dropping the receiver makes the pools stop.
    drop(m_rx);
    for w in workers {
        let _ = w.join();
    }
    let source_result = source.join().map_err(|_| anyhow::anyhow!("the source thread panicked"))?;
    progress.finish();
    if let Some(e) = write_error {
        return Err(e);
    }
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
        stages: [&m_filter, &m_clean, &m_fp, &m_match, &m_store].iter().map(|m| m.snapshot()).collect(),
    })
}
