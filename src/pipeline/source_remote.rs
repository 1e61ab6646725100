//! The source stage's remote inputs (`ditto scan https://…`, `--input-list`): fetching them
//! a few at a time ([`crate::source::remote::Prefetcher`]) and recording each finished file
//! in the store so that a rerun passes over it.
//!
//! A file counts as finished only once every page it sent has been stored or dropped: at a
//! checkpoint the source stops its readers from sending (they wait at its gate), waits for
//! the pipeline to drain (the trap filter counts what it dropped, the writer what it
//! stored), then records the files read to their end since the last checkpoint and flushes
//! the store. Several files may be in flight, read by several readers. A file that broke off is not recorded;
//! a rerun reads it again, and the pages it had stored are passed over at the filter.

#[cfg(not(feature = "crawl"))]
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use store::Store;

/// How remote (HTTP) inputs are read.
#[derive(Debug, Clone)]
pub struct RemoteInputs {
    /// Files fetched at once (the one being read, and the next ones).
    pub in_flight: usize,
    /// Attempts after a failure before a file is given up.
    pub retries: u32,
    /// First wait before a retry, doubled each time.
    pub backoff: Duration,
    pub user_agent: Option<String>,
}

impl Default for RemoteInputs {
    fn default() -> Self {
        Self { in_flight: 3, retries: 5, backoff: Duration::from_millis(500), user_agent: None }
    }
}

/// What happened to a run's remote files.
#[derive(Debug, Default)]
pub struct RemoteCounters {
    /// Read to the end (and recorded), passed over as finished by an earlier run, given up.
    pub files_read: AtomicU64,
    pub files_finished_before: AtomicU64,
    pub files_failed: AtomicU64,
    /// Transfers resumed with `Range`, and failed attempts retried.
    pub resumes: AtomicU64,
    pub retries: AtomicU64,
}

/// Store meta key under which a finished remote file is recorded.
pub fn finished_key(url: &str) -> String {
    format!("remote-input-finished\t{url}")
}

/// Time between checkpoints while files keep finishing.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(10);
/// The longest a checkpoint waits for the pipeline to drain.
const DRAIN_LIMIT: Duration = Duration::from_secs(120);

/// A remote file being read: its stream.
#[cfg(feature = "crawl")]
pub type RemoteReader = crate::source::remote::PipeReader;

/// A remote file being read (none in a build without `crawl`).
#[cfg(not(feature = "crawl"))]
pub struct RemoteReader(std::convert::Infallible);

#[cfg(not(feature = "crawl"))]
impl Read for RemoteReader {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        match self.0 {}
    }
}

/// The remote part of one run.
pub struct RemoteRun {
    #[cfg(feature = "crawl")]
    prefetch: Option<crate::source::remote::Prefetcher>,
    /// How many remote files this run reads (its partition's, not finished before).
    files: usize,
    store: Option<Arc<Store>>,
    /// Files read to the end since the last checkpoint.
    unrecorded: Vec<String>,
    last_checkpoint: Instant,
}

impl RemoteRun {
    /// Start fetching `urls` (in order), less those `store` records as finished.
    pub fn start(
        urls: Vec<String>,
        settings: &RemoteInputs,
        store: Option<Arc<Store>>,
        c: &RemoteCounters,
    ) -> Result<Self> {
        let mut chosen = Vec::new();
        for url in urls {
            let finished = match &store {
                Some(s) => s.meta(&finished_key(&url))?.is_some(),
                None => false,
            };
            if finished {
                c.files_finished_before.fetch_add(1, Relaxed);
            } else {
                chosen.push(url);
            }
        }
        let mut run = Self {
            #[cfg(feature = "crawl")]
            prefetch: None,
            files: chosen.len(),
            store,
            unrecorded: Vec::new(),
            last_checkpoint: Instant::now(),
        };
        run.start_fetching(chosen, settings)?;
        Ok(run)
    }

    #[cfg(feature = "crawl")]
    fn start_fetching(&mut self, urls: Vec<String>, settings: &RemoteInputs) -> Result<()> {
        if urls.is_empty() {
            return Ok(());
        }
        let mut opts = crawler::warc::RemoteOptions {
            retries: settings.retries,
            backoff: settings.backoff,
            ..crawler::warc::RemoteOptions::default()
        };
        if let Some(ua) = &settings.user_agent {
            opts.user_agent = ua.clone();
        }
        let p = crate::source::remote::Prefetcher::new(urls, opts, settings.in_flight)
            .map_err(|e| anyhow::anyhow!("starting the HTTP client for remote inputs: {e}"))?;
        self.prefetch = Some(p);
        Ok(())
    }

    #[cfg(not(feature = "crawl"))]
    fn start_fetching(&mut self, urls: Vec<String>, _settings: &RemoteInputs) -> Result<()> {
        match urls.first() {
            Some(url) => {
                anyhow::bail!("{url}: this build of ditto reads no remote inputs (built without `crawl`)")
            }
            None => Ok(()),
        }
    }

    /// How many remote files this run reads: each is one [`RemoteRun::take`].
    pub fn files(&self) -> usize {
        self.files
    }

    /// The next remote file to read, in listing order (its fetch started earlier where the
    /// in-flight limit allowed); `None` once every file has been handed out. Several
    /// readers may hold one each.
    #[cfg(feature = "crawl")]
    pub fn take(&mut self) -> Option<(String, RemoteReader)> {
        self.prefetch.as_mut().and_then(|p| p.next_file())
    }

    #[cfg(not(feature = "crawl"))]
    pub fn take(&mut self) -> Option<(String, RemoteReader)> {
        None
    }

    /// A file taken with [`RemoteRun::take`] has been read (its pages all sent): counted,
    /// and noted for the next checkpoint if it was read to its end. Returns whether a
    /// checkpoint is due ([`RemoteRun::checkpoint`]).
    pub fn done(&mut self, url: &str, reader: &RemoteReader, c: &RemoteCounters) -> bool {
        self.note_done(url, reader, c);
        self.last_checkpoint.elapsed() >= CHECKPOINT_EVERY
    }

    #[cfg(feature = "crawl")]
    fn note_done(&mut self, url: &str, reader: &RemoteReader, c: &RemoteCounters) {
        if let Some(st) = reader.stats() {
            c.resumes.fetch_add(st.resumes, Relaxed);
            c.retries.fetch_add(st.retries, Relaxed);
        }
        if reader.finished() {
            c.files_read.fetch_add(1, Relaxed);
            self.unrecorded.push(url.to_string());
        } else {
            // The WARC reader reported the failure as a read error; the file is counted here.
            c.files_failed.fetch_add(1, Relaxed);
        }
    }

    #[cfg(not(feature = "crawl"))]
    fn note_done(&mut self, _url: &str, reader: &RemoteReader, _c: &RemoteCounters) {
        match reader.0 {}
    }

    /// Record the files read since the last checkpoint, once the pipeline has stored or
    /// dropped every page sent (`drained`). `last`: the run's final checkpoint. With several
    /// readers, the caller keeps them from sending while this runs (the source's gate), so
    /// that the pipeline drains.
    pub fn checkpoint(&mut self, drained: &dyn Fn() -> bool, last: bool) -> Result<()> {
        self.last_checkpoint = Instant::now();
        let Some(store) = &self.store else { return Ok(()) };
        if self.unrecorded.is_empty() {
            return Ok(());
        }
        let start = Instant::now();
        while !drained() {
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
