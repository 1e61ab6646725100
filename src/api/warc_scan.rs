//! One WARC file through the scan's stages, with no store: what a task of a distributed scan
//! needs (`examples/spark/scan.py` calls it through the `ditto_detect` wheel).
//!
//! Each page goes through exactly the stage functions of `ditto scan` (trap filter, clean,
//! fingerprint, match; `crate::pipeline::stages`) with the same settings, and a capture (URL +
//! body SHA-1) seen twice in the file counts once, as the store counts it. The result is the
//! page rows and the file's per-neighborhood integer accumulators (pages, chunks, labeled
//! chunks, Σ contains in fixed point): sums of integers, so files scanned anywhere add up to
//! exactly what one store holding them all would have (`crate::report::merged`).

use std::collections::{BTreeMap, HashSet};
use std::io::Read;

use crawler::warc::{printable, WarcPages};
use detector::neighborhood::contains_fixed;
use detector::{CleanOptions, NeighborhoodAccumulator, PageOrigin};

use super::Detector;
use crate::pipeline::metrics::{SkipReason, Skips};
use crate::pipeline::stages::{self, DigestNeed, FilterSettings, Input};
use crate::report::rows::match_kind;

/// One analysed page of a WARC file: the fields of its store record that reports use.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannedPage {
    pub url: String,
    /// SHA-1 of the body, hex.
    pub file_hash: String,
    /// Offset of the record (of its gzip member) in the WARC file.
    pub warc_offset: u64,
    pub fetch_time: i64,
    pub status: u16,
    pub chunks: u32,
    pub labeled_chunks: u32,
    pub stop_chunks: u32,
    /// `contains(L_c, page)`.
    pub contains: f64,
    /// `contains` in fixed point, as accumulators sum it
    /// ([`detector::neighborhood::CONTAINS_SCALE`]).
    pub contains_fixed: u64,
    pub neighborhoods: Vec<String>,
    /// (source id, labeled chunks), at most 20, most chunks first (as stored).
    pub sources: Vec<(u32, u32)>,
    /// Copied passages (source id, passage), as stored.
    pub evidence: Vec<(u32, String)>,
    /// How each of `evidence` was found (`exact` or `passage`), as `ditto report`'s evidence
    /// `match`.
    pub evidence_match: Vec<&'static str>,
    /// Words on the page and those that are labeled text, when passages were matched
    /// (`None` with [`super::MatchMode::Exact`] or a label set without passages), as
    /// `ditto report --level page`'s `words` and `covered_words`.
    pub words: Option<u32>,
    pub covered_words: Option<u32>,
}

/// What scanning one WARC file gave.
#[derive(Debug, Default)]
pub struct WarcScan {
    /// Analysed pages, in file order, each capture once.
    pub pages: Vec<ScannedPage>,
    /// The file's contribution to every neighborhood it touches.
    pub accumulators: BTreeMap<String, NeighborhoodAccumulator>,
    /// WARC records read.
    pub records: u64,
    /// Page records (responses and resources) read.
    pub pages_read: u64,
    /// Payload bytes of the pages read.
    pub payload_bytes: u64,
    /// Input bytes consumed (compressed bytes for `.warc.gz`).
    pub input_bytes: u64,
    /// Pages skipped, by reason (`status_not_2xx`, `not_text`, `already_stored`, …).
    pub skips: BTreeMap<&'static str, u64>,
    /// Read errors (all counted in `skips["read_error"]`; at most 200 messages kept).
    pub errors: Vec<String>,
}

impl Detector {
    /// Scan one WARC file (gzip-per-record or plain, read as `ditto scan` reads it: damaged
    /// records are reported and skipped, reading goes on where the format allows) from any
    /// reader. `name` labels errors. Records or bodies over `max_body_bytes` are skipped and
    /// counted (`too_large`), as `ditto scan --max-body-bytes` does.
    pub fn scan_warc<R: Read>(&self, input: R, name: &str, max_body_bytes: u64) -> WarcScan {
        let max = usize::try_from(max_body_bytes).unwrap_or(usize::MAX);
        // The records-to-pages rules (caps, cut bodies) are `ditto scan`'s own.
        let mut pages = WarcPages::from_reader(input, name, 0).with_max_size(max);
        let skips = Skips::default();
        let settings = FilterSettings { traps: self.cfg.traps, store: None, skip_stored: false };
        let need = DigestNeed::of(&self.scan_matcher);
        let clean_opts = CleanOptions { extract_links: false };
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        let mut out = WarcScan::default();
        for item in pages.by_ref() {
            let page = match item {
                Ok(page) => page,
                Err(e) => {
                    skips.add(SkipReason::of_warc_error(&e), 1);
                    skips.error(format!("{}: {e}", printable(name)));
                    continue;
                }
            };
            out.pages_read += 1;
            out.payload_bytes += page.body.len() as u64;
            let Some(filtered) = stages::filter(Input::from(page), &settings, &skips) else { continue };
            let warc_offset = match &filtered.page.origin {
                PageOrigin::Warc { offset, .. } => *offset,
                _ => 0,
            };
            let cleaned = stages::clean(filtered, &clean_opts);
            let fp = stages::fingerprint(cleaned, &self.loaded.normalization, &need);
            let w = stages::match_stage(fp, &self.scan_matcher);
            // A capture stored once per store: the second copy in a file adds nothing.
            if !seen.insert(store::page_key(&w.record.url, &w.file_hash)) {
                skips.add(SkipReason::AlreadyStored, 1);
                continue;
            }
            for n in &w.neighborhoods {
                out.accumulators.entry(n.clone()).or_default().add(&w.accumulator);
            }
            let r = w.record;
            let evidence_match = r.evidence.iter().map(|e| match_kind(&r, e)).collect();
            let (words, covered_words) = r.passages.as_ref().map(|s| (s.words, s.covered_words)).unzip();
            out.pages.push(ScannedPage {
                url: r.url,
                file_hash: r.file_hash,
                warc_offset,
                fetch_time: r.fetch_time,
                status: r.status,
                chunks: r.chunks,
                labeled_chunks: r.labeled_chunks,
                stop_chunks: r.stop_chunks,
                contains: r.contains,
                contains_fixed: contains_fixed(r.contains),
                neighborhoods: w.neighborhoods,
                sources: r.sources.iter().map(|s| (s.source, s.chunks)).collect(),
                evidence: r.evidence.into_iter().map(|e| (e.source, e.passage)).collect(),
                evidence_match,
                words,
                covered_words,
            });
        }
        let st = pages.stats();
        skips.add(SkipReason::TooLarge, st.warc.oversized + st.truncated);
        out.records = st.warc.records;
        out.input_bytes = pages.input_offset();
        out.skips = skips.counts();
        out.errors = skips.errors();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::DetectorConfig;

    fn shared(p: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data").join(p)
    }

    /// A small label set (one source, one block of more than 100 characters).
    fn labelset(dir: &std::path::Path) -> std::path::PathBuf {
        let mut b = labelsets::LabelSetBuilder::new(
            "t",
            labelsets::Kind::Chunks,
            detector::Normalization::default(),
            100,
            "unit test",
        );
        let src = b.add_source("PostgreSQL", "https://www.postgresql.org/");
        let text = "PostgreSQL is a powerful, open source object-relational database system that uses and extends the SQL language.";
        b.add_text_block(src, text).expect("block");
        let out = dir.join("t.dls");
        b.write(&out).expect("write");
        out
    }

    #[test]
    fn a_damaged_file_reports_errors_and_keeps_the_pages_before() {
        let dir = tempfile::tempdir().expect("tmp");
        let det = Detector::open(labelset(dir.path()), DetectorConfig::default()).expect("open");
        let f = std::fs::File::open(shared("warc/big/debian-docs-html.truncated.warc.gz")).expect("warc");
        let s = det.scan_warc(std::io::BufReader::new(f), "t.warc.gz", 64 << 20);
        assert_eq!(s.pages_read, 760, "the complete responses before the cut (MANIFEST)");
        assert_eq!(s.records, 1522);
        assert!(s.skips.get("read_error").copied().unwrap_or(0) >= 1, "{:?}", s.skips);
        assert!(s.errors.iter().any(|e| e.starts_with("t.warc.gz: ")), "{:?}", s.errors);
        let analysed = s.pages.len() as u64;
        let skipped: u64 = s.skips.iter().filter(|(k, _)| **k != "read_error").map(|(_, v)| v).sum();
        assert_eq!(analysed + skipped, s.pages_read);
        // Every page counts in its neighborhoods, and in each once.
        let root: u64 =
            s.accumulators.iter().filter(|(k, _)| k.matches('/').count() == 3).map(|(_, a)| a.pages).sum();
        assert_eq!(root, analysed);
    }
}
