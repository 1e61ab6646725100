//! Live origins: `ditto scan --origins SIZE` and `ditto crawl --origins SIZE` run the origin
//! detector of Abdel-Hamid et al. 2009 (`detector::origins`: NHs selection, Lucky eviction,
//! BE estimation, a fixed table of SIZE bytes; the paper's §2 "preprocessing and query
//! steps", streamed) over pages in arrival order, inside the pipeline.
//!
//! Where: the store writer (one thread), on each page as it arrives there — the order in
//! which pages are stored. The match pool's workers are left alone (live origins cost
//! nothing when off, and one table needs one order). Each page is a query against every
//! page before it, then its shingles enter the table; its row (the same
//! `origins_cmd::PageOut` `ditto origins` prints: dominant origin, copied share, novel
//! segments) is stored under `o/` with its arrival number right after the batch holding the
//! page (`Store::put_live_origins`), and `ditto origins --live` prints the rows.
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

use std::sync::Mutex;

use anyhow::{Context, Result};
use detector::fingerprint::parse_hex;
use detector::origins::{OriginConfig, OriginDetector};
use store::{PageWrite, Store};

use crate::origins_cmd::OriginsStream;

struct Inner {
    stream: OriginsStream,
    next_seq: u64,
    pending: Vec<(u64, Vec<u8>)>,
    errors: u64,
}

/// The live detector and the rows not yet stored.
pub struct LiveOrigins {
    inner: Mutex<Inner>,
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
                stream: OriginsStream::new(det),
                next_seq: 0,
                pending: Vec::new(),
                errors: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Feed the pages `store` already holds to the table (fetch time, then URL), and
    /// continue the arrival numbers after its stored rows. Returns how many pages.
    pub fn load(&self, store: &Store) -> Result<u64> {
        let mut pages: Vec<(i64, String, String)> = Vec::new();
        for r in store.pages() {
            let r = r.context("reading stored pages for live origins")?;
            pages.push((r.fetch_time, r.url, r.file_hash));
        }
        pages.sort();
        let next_seq = store.next_live_origins_seq()?;
        let mut g = self.lock();
        g.next_seq = g.next_seq.max(next_seq);
        for (t, url, hash) in &pages {
            let blocks = match parse_hex(hash) {
                Some(h) => store.page_text(url, &h)?.unwrap_or_default(),
                None => Vec::new(),
            };
            g.stream.page(url, *t, &blocks);
        }
        Ok(pages.len() as u64)
    }

    /// A page reached the store writer: query the table, insert its shingles, keep its row
    /// for [`Self::flush`].
    pub fn observe(&self, w: &PageWrite) {
        let blocks: &[String] = w.text.as_deref().unwrap_or(&[]);
        let mut g = self.lock();
        let row = g.stream.page(&w.record.url, w.record.fetch_time, blocks);
        match serde_json::to_vec(&row) {
            Ok(json) => {
                let seq = g.next_seq;
                g.next_seq += 1;
                g.pending.push((seq, json));
            }
            Err(_) => g.errors += 1,
        }
    }

    /// Store the rows of the pages observed since the last flush.
    pub fn flush(&self, store: &Store) -> Result<()> {
        let rows = std::mem::take(&mut self.lock().pending);
        if rows.is_empty() {
            return Ok(());
        }
        store.put_live_origins(&rows).context("storing live origins")
    }

    /// Pages processed (loaded and observed).
    pub fn pages(&self) -> usize {
        self.lock().stream.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_get_arrival_numbers_and_name_earlier_pages() {
        let lo = LiveOrigins::new(1 << 20);
        let text: Vec<String> = vec![(0..300).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ")];
        let w = |url: &str, text: Vec<String>| PageWrite {
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
            },
            file_hash: [0; 20],
            neighborhoods: Vec::new(),
            accumulator: Default::default(),
            fetched: None,
            links: Vec::new(),
            shingles: Vec::new(),
            text: Some(text),
        };
        lo.observe(&w("http://a/1", text.clone()));
        lo.observe(&w("http://b/copy", text));
        let g = lo.lock();
        assert_eq!(g.pending.iter().map(|p| p.0).collect::<Vec<_>>(), vec![0, 1]);
        let row: crate::origins_cmd::PageOut = serde_json::from_slice(&g.pending[1].1).unwrap();
        assert_eq!(row.dominant_origin.as_deref(), Some("http://a/1"));
        assert!(row.novel_segments.is_empty());
    }
}
