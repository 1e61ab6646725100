//! The source stage's remote inputs (`ditto scan https://…`, `--input-list`): which files
//! this run reads, fetching them a few at a time ([`crate::source::remote::Prefetcher`]),
//! and recording each finished file in the store so that a rerun passes over it.
//!
//! A file counts as finished only once every page it sent has been stored or dropped: at a
//! checkpoint the source waits for the pipeline to drain (the trap filter drops pages in
//! order on one thread, and the writer counts what it stored), then records the files read
//! since the last checkpoint and flushes the store. A file that broke off is not recorded;
//! a rerun reads it again, and the pages it had stored are passed over at the filter.

use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use anyhow::Result;
use crawler::partition::Partition;
use detector::Page;

use super::metrics::Skips;
use super::source_stage::{InputKind, Plan, SourceCounters, SourceOptions};

/// Store meta key under which a finished remote file is recorded.
pub fn finished_key(url: &str) -> String {
    format!("remote-input-finished\t{url}")
}

/// Time between checkpoints while files keep finishing.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(10);
/// The longest a checkpoint waits for the pipeline to drain.
const DRAIN_LIMIT: Duration = Duration::from_secs(120);

/// The remote part of one run.
pub struct RemoteRun {
    #[cfg(feature = "crawl")]
    prefetch: Option<crate::source::remote::Prefetcher>,
    /// Remote inputs this run reads (owned by its partition, not finished before).
    chosen: std::collections::HashSet<String>,
    /// Files read to the end since the last checkpoint.
    unrecorded: Vec<String>,
    last_checkpoint: Instant,
}

impl RemoteRun {
    /// Pick this run's remote files: those of partition `part` (numbered among the remote
    /// inputs, in order) that the store has not recorded as finished.
    pub fn start(plan: &Plan, opts: &SourceOptions, part: Partition, c: &SourceCounters) -> Result<Self> {
        let mut chosen = Vec::new();
        let remote = plan.inputs.iter().filter(|(_, k)| *k == InputKind::Remote);
        for (i, (path, _)) in remote.enumerate() {
            let url = path.to_string_lossy().into_owned();
            if !part.owns_input(i as u64) {
                continue;
            }
            if finished_before(opts, &url)? {
                c.remote_files_finished_before.fetch_add(1, Relaxed);
                continue;
            }
            chosen.push(url);
        }
        Self::with_files(chosen, opts)
    }

    #[cfg(feature = "crawl")]
    fn with_files(chosen: Vec<String>, opts: &SourceOptions) -> Result<Self> {
        let prefetch = if chosen.is_empty() {
            None
        } else {
            let mut ro = crawler::warc::RemoteOptions {
                retries: opts.remote.retries,
                backoff: opts.remote.backoff,
                ..crawler::warc::RemoteOptions::default()
            };
            if let Some(ua) = &opts.remote.user_agent {
                ro.user_agent = ua.clone();
            }
            let p = crate::source::remote::Prefetcher::new(chosen.clone(), ro, opts.remote.in_flight)
                .map_err(|e| anyhow::anyhow!("starting the HTTP client for remote inputs: {e}"))?;
            Some(p)
        };
        Ok(Self {
            prefetch,
            chosen: chosen.into_iter().collect(),
            unrecorded: Vec::new(),
            last_checkpoint: Instant::now(),
        })
    }

    #[cfg(not(feature = "crawl"))]
    fn with_files(chosen: Vec<String>, _opts: &SourceOptions) -> Result<Self> {
        if let Some(url) = chosen.first() {
            anyhow::bail!(
                "{url}: this build of ditto reads no remote inputs (built without the `crawl` feature)"
            );
        }
        Ok(Self { chosen: Default::default(), unrecorded: Vec::new(), last_checkpoint: Instant::now() })
    }

    /// Read one remote input (if this run reads it) and send its pages on; false when the
    /// pipeline downstream has stopped.
    pub fn read(
        &mut self,
        path: &Path,
        opts: &SourceOptions,
        send: &impl Fn(Page) -> bool,
        skips: &Skips,
        c: &SourceCounters,
    ) -> Result<bool> {
        let url = path.to_string_lossy();
        if !self.chosen.contains(url.as_ref()) {
            return Ok(true);
        }
        if !self.read_next(&url, opts, send, skips, c)? {
            return Ok(false);
        }
        if self.last_checkpoint.elapsed() >= CHECKPOINT_EVERY {
            self.checkpoint(opts, c, false)?;
        }
        Ok(true)
    }

    #[cfg(feature = "crawl")]
    fn read_next(
        &mut self,
        url: &str,
        opts: &SourceOptions,
        send: &impl Fn(Page) -> bool,
        skips: &Skips,
        c: &SourceCounters,
    ) -> Result<bool> {
        let Some((got, mut reader)) = self.prefetch.as_mut().and_then(|p| p.next_file()) else {
            anyhow::bail!("{url}: remote inputs out of step (a bug)");
        };
        if got != url {
            anyhow::bail!("{url}: remote inputs out of step, got {got} (a bug)");
        }
        let max = usize::try_from(opts.max_body_bytes).unwrap_or(usize::MAX);
        let pages = crawler::warc::WarcPages::from_reader(&mut reader, url, 0).with_max_size(max);
        if !super::source_stage::send_warc_pages(pages, url, send, skips, c) {
            return Ok(false);
        }
        if let Some(st) = reader.stats() {
            c.remote_resumes.fetch_add(st.resumes, Relaxed);
            c.remote_retries.fetch_add(st.retries, Relaxed);
        }
        if reader.finished() {
            c.remote_files_read.fetch_add(1, Relaxed);
            self.unrecorded.push(url.to_string());
        } else {
            // The reader reported the failure as a read error; the file is counted here.
            c.remote_files_failed.fetch_add(1, Relaxed);
        }
        Ok(true)
    }

    #[cfg(not(feature = "crawl"))]
    fn read_next(
        &mut self,
        url: &str,
        _opts: &SourceOptions,
        _send: &impl Fn(Page) -> bool,
        _skips: &Skips,
        _c: &SourceCounters,
    ) -> Result<bool> {
        anyhow::bail!("{url}: this build of ditto reads no remote inputs")
    }

    /// Record the files read since the last checkpoint, once the pipeline has stored or
    /// dropped every page sent. `last`: the run's final checkpoint.
    pub fn checkpoint(&mut self, opts: &SourceOptions, c: &SourceCounters, last: bool) -> Result<()> {
        self.last_checkpoint = Instant::now();
        let Some(store) = &opts.store else { return Ok(()) };
        if self.unrecorded.is_empty() {
            return Ok(());
        }
        let start = Instant::now();
        while !c.drained() {
            if start.elapsed() > DRAIN_LIMIT {
                // The writer is stuck or gone (its error ends the run); record nothing.
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(if last { 2 } else { 5 }));
        }
        for url in self.unrecorded.drain(..) {
            store.set_meta(&finished_key(&url), "1")?;
        }
        store.flush()?;
        Ok(())
    }
}

fn finished_before(opts: &SourceOptions, url: &str) -> Result<bool> {
    match &opts.store {
        Some(store) => Ok(store.meta(&finished_key(url))?.is_some()),
        None => Ok(false),
    }
}
