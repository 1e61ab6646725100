//! Live origins: `ditto scan --origins SIZE` and `ditto crawl --origins SIZE` run the origin
//! detector of Abdel-Hamid et al. 2009 (`detector::origins`: NHs selection, Lucky eviction,
//! BE estimation, a fixed table of SIZE bytes; the paper's §2 "preprocessing and query
//! steps", streamed) over pages in arrival order, inside the pipeline.
//!
//! Where: the store writer (one thread) hands each page, as it arrives there — the order in
//! which pages are stored — to one worker thread that owns the table (bounded queue). The
//! match pool's workers are left alone (live origins cost nothing when off, and one table
//! needs one order). Each page is a query against every page before it, then its shingles
//! enter the table; its row (the same `origins_cmd::PageOut` `ditto origins` prints:
//! dominant origin, copied share, novel segments) is stored under `o/` with its arrival
//! number (`Store::put_live_origins`, batches of 256 rows, not atomic with the pages: a kill
//! may lose the last rows), and `ditto origins --live` prints the rows.
//!
//! Same answer as offline: `ditto origins --memory SIZE` over the store processes the pages
//! in fetch-time-then-URL order through the same `OriginsStream`; when pages arrive in that
//! order (a `--threads 1` scan of inputs in that order) the rows are equal
//! (`tests/origins_live.rs`). With several workers per stage pages may arrive in another
//! order, and the live rows are those of the arrival order.
//!
//! Pages stored before this run (a resumed crawl, a second scan into the same store) count
//! as earlier documents: at start they are fed to the table in fetch-time-then-URL order
//! (no rows written for them), so a resumed run continues where the store left off, up to
//! that order.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::{anyhow, Context, Result};
use crossbeam_channel::{bounded, Sender};
use detector::fingerprint::parse_hex;
use detector::origins::{OriginConfig, OriginDetector};
use store::{PageWrite, Store};

use crate::analysis::origins::OriginsStream;

/// Pages a worker may have queued: the writer waits beyond this (bounded memory).
const QUEUE: usize = 256;
/// Rows per `o/` batch written by the worker.
const ROWS_PER_BATCH: usize = 256;

/// A page for the worker: arrival number, URL, fetch time, cleaned text blocks.
type Job = (u64, String, i64, detector::TextBlocks);

struct Inner {
    /// The detector, while no worker holds it.
    stream: Option<OriginsStream>,
    next_seq: u64,
    pending: Vec<(u64, Vec<u8>)>,
    /// The worker thread (started by [`LiveOrigins::load`]) and its queue.
    worker: Option<(Sender<Job>, JoinHandle<Result<OriginsStream>>)>,
}

/// The live detector and the rows not yet stored.
///
/// After [`Self::load`] a worker thread owns the detector: the store writer only queues each
/// page's text ([`Self::observe`]) and the worker computes and stores the rows in the same
/// order, so the writer is not slowed by the detector unless the queue is full;
/// [`Self::finish`] waits for it. Without `load` the rows are computed inline and stored by
/// [`Self::flush`].
pub struct LiveOrigins {
    inner: Mutex<Inner>,
}

fn row_json<B: detector::BlockList + ?Sized>(
    stream: &mut OriginsStream,
    url: &str,
    fetch_time: i64,
    blocks: &B,
) -> Result<Vec<u8>> {
    let row = stream.page(url, fetch_time, blocks);
    serde_json::to_vec(&row).context("encoding a live origins row")
}

impl LiveOrigins {
    /// The paper's best combination (NHs + Lucky + BE, k = 8, T = 30) with a table of
    /// `memory` bytes.
    pub fn new(memory: u64) -> Self {
        Self::with_detector(OriginDetector::new(OriginConfig::default(), memory))
    }

    pub fn with_detector(det: OriginDetector) -> Self {
        LiveOrigins {
            inner: Mutex::new(Inner {
                stream: Some(OriginsStream::new(det)),
                next_seq: 0,
                pending: Vec::new(),
                worker: None,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Feed the pages `store` already holds to the table (fetch time, then URL), continue the
    /// arrival numbers after its stored rows, and start the worker that stores the rows of
    /// the pages observed from now on. Returns how many pages were loaded.
    pub fn load(&self, store: &Arc<Store>) -> Result<u64> {
        let mut pages: Vec<(i64, String, String)> = Vec::new();
        for r in store.pages() {
            let r = r.context("reading stored pages for live origins")?;
            pages.push((r.fetch_time, r.url, r.file_hash));
        }
        pages.sort();
        let next_seq = store.next_live_origins_seq()?;
        let mut g = self.lock();
        g.next_seq = g.next_seq.max(next_seq);
        let mut stream = g.stream.take().ok_or_else(|| anyhow!("live origins loaded twice"))?;
        let texts = crate::source::text::TextSource::new(store)?;
        for (t, url, hash) in &pages {
            // Kept text or the page read back from its source; none when that is gone.
            let blocks = match parse_hex(hash) {
                Some(h) => texts.text_of_key(url, &h)?.blocks().unwrap_or_default(),
                None => Vec::new(),
            };
            stream.page(url, *t, &blocks);
        }
        let (tx, rx) = bounded::<Job>(QUEUE);
        let store = store.clone();
        let handle = std::thread::Builder::new()
            .name("live-origins".into())
            .spawn(move || -> Result<OriginsStream> {
                let mut rows = Vec::with_capacity(ROWS_PER_BATCH);
                for (seq, url, fetch_time, blocks) in rx {
                    rows.push((seq, row_json(&mut stream, &url, fetch_time, &blocks)?));
                    if rows.len() >= ROWS_PER_BATCH {
                        store.put_live_origins(&rows).context("storing live origins")?;
                        rows.clear();
                    }
                }
                store.put_live_origins(&rows).context("storing live origins")?;
                Ok(stream)
            })
            .context("starting the live origins thread")?;
        g.worker = Some((tx, handle));
        Ok(pages.len() as u64)
    }

    /// A page reached the store writer: its row (query the table, then insert its shingles)
    /// is computed by the worker, or inline without one.
    pub fn observe(&self, w: &PageWrite) {
        let none = detector::TextBlocks::new();
        let blocks = w.text.as_ref().unwrap_or(&none);
        let mut g = self.lock();
        let seq = g.next_seq;
        g.next_seq += 1;
        if let Some((tx, _)) = &g.worker {
            // A send fails only when the worker stopped on an error; finish() reports it.
            let _ = tx.send((seq, w.record.url.clone(), w.record.fetch_time, blocks.clone()));
            return;
        }
        let Inner { stream, pending, .. } = &mut *g;
        if let Some(stream) = stream.as_mut() {
            if let Ok(json) = row_json(stream, &w.record.url, w.record.fetch_time, blocks) {
                pending.push((seq, json));
            }
        }
    }

    /// Store the rows computed inline since the last flush (the worker stores its own).
    pub fn flush(&self, store: &Store) -> Result<()> {
        let rows = std::mem::take(&mut self.lock().pending);
        if rows.is_empty() {
            return Ok(());
        }
        store.put_live_origins(&rows).context("storing live origins")
    }

    /// Wait for the worker to store every observed page's row (the detector comes back, so
    /// more pages may follow inline).
    pub fn finish(&self) -> Result<()> {
        let worker = self.lock().worker.take();
        if let Some((tx, handle)) = worker {
            drop(tx);
            let stream = handle.join().map_err(|_| anyhow!("the live origins thread panicked"))??;
            self.lock().stream = Some(stream);
        }
        Ok(())
    }

    /// Pages processed (loaded and observed; observed pages still queued not counted).
    pub fn pages(&self) -> usize {
        self.lock().stream.as_ref().map_or(0, OriginsStream::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_get_arrival_numbers_and_name_earlier_pages() {
        let lo = LiveOrigins::new(1 << 20);
        let text: detector::TextBlocks =
            [(0..300).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ")].into_iter().collect();
        let w = |url: &str, text: detector::TextBlocks| PageWrite {
            record: store::PageRecord {
                url: url.into(),
                fetch_time: 1,
                status: 200,
                file_hash: String::new(),
                chunks: 0,
                labeled_chunks: 0,
                stop_chunks: 0,
                contains: 0.0,
                file_match: None,
                sources: Vec::new(),
                evidence: Vec::new(),
                origin: Default::default(),
                simhash: None,
                text_hash: None,
                shingles: 0,
                near_duplicate_of: None,
                passages: None,
                sketch: Default::default(),
            },
            file_hash: [0; 20],
            neighborhoods: Vec::new(),
            accumulator: Default::default(),
            fetched: None,
            links: Vec::new(),
            shingles: Vec::new(),
            text: Some(text),
            keep_text: false,
            encoded: None,
        };
        lo.observe(&w("http://a/1", text.clone()));
        lo.observe(&w("http://b/copy", text));
        let g = lo.lock();
        assert_eq!(g.pending.iter().map(|p| p.0).collect::<Vec<_>>(), vec![0, 1]);
        let row: crate::analysis::origins::PageOut = serde_json::from_slice(&g.pending[1].1).unwrap();
        assert_eq!(row.dominant_origin.as_deref(), Some("http://a/1"));
        assert!(row.novel_segments.is_empty());
    }
}
