//! ditto as a plug-in: detection inside somebody else's crawler.
//!
//! ```no_run
//! use ditto::api::{Detector, DetectorConfig};
//! let det = Detector::open("wikipedia.dls", DetectorConfig::default())?;
//! let v = det.page("http://example.org/a.html", Some("text/html"), b"<p>...</p>")?;
//! println!("contains {:.2}, {} labeled chunks", v.contains, v.labeled_chunks);
//! for s in &v.sources { println!("copied from {} ({} chunks)", s.title, s.chunks); }
//! // Accumulate neighborhoods in a store that `ditto report` and `ditto review` read:
//! let store = ditto::api::open_store("crawl.db", &det)?;
//! det.store(&store, &v)?;
//! # Ok::<(), ditto::Error>(())
//! ```
//!
//! A page goes through exactly the stage functions `ditto scan` and `ditto crawl` use
//! (trap filter, clean, fingerprint, match), so the verdicts are the same.

mod warc_scan;

use std::path::Path;

pub use warc_scan::{ScannedPage, WarcScan};

pub use crate::labelset::MatchMode;

use detector::{CleanOptions, Page, PageOrigin, TrapRules};
use store::{PageWrite, Store};

use crate::error::{ErrorKind, Result, ResultExt};
use crate::labelset::{load_for_scan, Loaded};
use crate::pipeline::metrics::Skips;
use crate::pipeline::stages::{self, FilterSettings, Input, Matcher};
use crate::report::rows::match_kind;

/// Options of a [`Detector`].
#[derive(Debug, Clone)]
pub struct DetectorConfig {
    /// Use the built-in list of benign idioms as stop chunks.
    pub default_stop_chunks: bool,
    /// Extra stop-chunk files (text, one per line, or .dls).
    pub stop_chunks: Vec<std::path::PathBuf>,
    /// Recursion-error rules for URLs (pages that break them are skipped).
    pub traps: TrapRules,
    /// Collect the page's outgoing links in the verdict.
    pub links: bool,
    /// `ditto scan --match`: [`MatchMode::Passage`] (the default) also counts blocks covered
    /// by labeled passages (edited copies, issue 36) where the label set has a passage table;
    /// [`MatchMode::Exact`] matches exact chunks only.
    pub match_mode: MatchMode,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            default_stop_chunks: true,
            stop_chunks: Vec::new(),
            traps: TrapRules::default(),
            links: true,
            match_mode: MatchMode::Passage,
        }
    }
}

/// A labeled source a page copies from.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerdictSource {
    pub id: u32,
    pub title: String,
    pub url: String,
    /// Labeled chunk occurrences on the page from this source.
    pub chunks: u32,
}

/// What ditto says about one page.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Verdict {
    pub url: String,
    /// Why the page was not analysed (`status_not_2xx`, `not_text`, `trap_repeated_path`, …).
    pub skipped: Option<String>,
    /// `contains(L_c, page)`: labeled chunk occurrences / chunk occurrences.
    pub contains: f64,
    pub chunks: u32,
    pub labeled_chunks: u32,
    /// SHA-1 of the body, hex.
    pub file_hash: String,
    pub sources: Vec<VerdictSource>,
    /// Copied passages: (source id, passage).
    pub evidence: Vec<(u32, String)>,
    /// How each of `evidence` was found, in its order: `exact` (the whole normalized
    /// paragraph is in the label set) or `passage` (labeled passages cover at least half of
    /// its words: an edited copy), as `ditto report`'s evidence `match`.
    pub evidence_match: Vec<&'static str>,
    /// Words on the page, when passages were matched (`None` with [`MatchMode::Exact`], a
    /// label set without passages, or a skipped page).
    pub words: Option<u32>,
    /// Of them, words that are labeled text (in exact labeled chunks or covered by labeled
    /// passages); `None` as `words`.
    pub covered_words: Option<u32>,
    /// Absolute outgoing links (when [`DetectorConfig::links`]).
    pub links: Vec<String>,
    /// The neighborhoods (URL prefixes) the page counts in.
    pub neighborhoods: Vec<String>,
    #[serde(skip)]
    write: Option<PageWrite>,
}

/// Detection for one label set, usable from many threads.
pub struct Detector {
    loaded: Loaded,
    labelset: labelsets::LabelSet,
    cfg: DetectorConfig,
    /// The matcher `ditto scan` runs for WARC files with no store: the label set and stop
    /// lists of `loaded`, no live near-duplicates, no kept text ([`Detector::scan_warc`]).
    scan_matcher: Matcher,
}

impl Detector {
    /// Open a label set (mmap, milliseconds) and the stop lists.
    pub fn open(labelset: impl AsRef<Path>, cfg: DetectorConfig) -> Result<Detector> {
        let path = labelset.as_ref();
        let mut loaded =
            load_for_scan(path, None, &cfg.stop_chunks, cfg.default_stop_chunks).kind(ErrorKind::LabelSet)?;
        loaded.set_match_mode(cfg.match_mode);
        // Pages handed in by a caller have no WARC or file to be read back from: a store
        // they are added to keeps their text.
        loaded.matcher.keep_text = true;
        let labelset = labelsets::LabelSet::open(path)?;
        let m = &loaded.matcher;
        let scan_matcher = Matcher {
            chunks: m.chunks.clone(),
            files: m.files.clone(),
            stops: m.stops.clone(),
            evidence_per_page: m.evidence_per_page,
            passage_chars: m.passage_chars,
            passages: m.passages.clone(),
            links: None,
            keep_text: false,
            near_dups: None,
            origins: None,
        };
        Ok(Detector { loaded, labelset, cfg, scan_matcher })
    }

    /// Whether pages are matched with labeled passages as well as exact chunks: the
    /// configuration asked for it ([`MatchMode::Passage`]) and the label set has a passage
    /// table this ditto reads (one built by an older ditto, from hashes, or with
    /// `--passages off` has none: exact chunks only).
    pub fn passages(&self) -> bool {
        self.loaded.matcher.passages.is_some()
    }

    /// A labeled source's (title, URL), by id.
    pub fn source(&self, id: u32) -> Option<(String, String)> {
        self.labelset.source(id).map(|s| (s.title.to_string(), s.url.to_string()))
    }

    /// Analyse one fetched page. `content_type` is the HTTP header (it carries the charset).
    pub fn page(&self, url: &str, content_type: Option<&str>, body: &[u8]) -> Result<Verdict> {
        self.page_with_status(url, 200, content_type, body)
    }

    /// As [`Detector::page`], with the HTTP status (non-2xx pages are skipped, as in a scan).
    pub fn page_with_status(
        &self,
        url: &str,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<Verdict> {
        let page = Page {
            url: url.to_string(),
            fetch_time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0),
            status,
            content_type: content_type.map(str::to_string),
            body: body.to_vec(),
            origin: PageOrigin::Fetch,
        };
        let skips = Skips::default();
        let settings = FilterSettings { traps: self.cfg.traps, store: None, skip_stored: false };
        let Some(filtered) = stages::filter(Input::from(page), &settings, &skips) else {
            let reason = skips.counts().into_keys().next().unwrap_or("skipped");
            return Ok(Verdict {
                url: url.to_string(),
                skipped: Some(reason.to_string()),
                contains: 0.0,
                chunks: 0,
                labeled_chunks: 0,
                file_hash: detector::fingerprint::hex(&detector::fingerprint::sha1(body)),
                sources: Vec::new(),
                evidence: Vec::new(),
                evidence_match: Vec::new(),
                words: None,
                covered_words: None,
                links: Vec::new(),
                neighborhoods: Vec::new(),
                write: None,
            });
        };
        let cleaned = stages::clean(filtered, &CleanOptions { extract_links: self.cfg.links });
        let links = cleaned.doc.links.clone();
        let need = stages::DigestNeed::of(&self.loaded.matcher);
        let fp = stages::fingerprint(cleaned, &self.loaded.normalization, &need);
        let w = stages::match_stage(fp, &self.loaded.matcher);
        let r = &w.record;
        let sources = r
            .sources
            .iter()
            .map(|s| {
                let (title, url) = self
                    .labelset
                    .source(s.source)
                    .map(|x| (x.title.to_string(), x.url.to_string()))
                    .unwrap_or_default();
                VerdictSource { id: s.source, title, url, chunks: s.chunks }
            })
            .collect();
        Ok(Verdict {
            url: r.url.clone(),
            skipped: None,
            contains: r.contains,
            chunks: r.chunks,
            labeled_chunks: r.labeled_chunks,
            file_hash: r.file_hash.clone(),
            sources,
            evidence: r.evidence.iter().map(|e| (e.source, e.passage.clone())).collect(),
            evidence_match: r.evidence.iter().map(|e| match_kind(r, e)).collect(),
            words: r.passages.as_ref().map(|s| s.words),
            covered_words: r.passages.as_ref().map(|s| s.covered_words),
            links,
            neighborhoods: w.neighborhoods.clone(),
            write: Some(w),
        })
    }

    /// Add a verdict to a store's pages and neighborhood accumulators (skipped pages and
    /// pages already stored change nothing). Returns whether it was new.
    pub fn store(&self, store: &Store, v: &Verdict) -> Result<bool> {
        match &v.write {
            None => Ok(false),
            Some(w) => Ok(store.write_batch(std::slice::from_ref(w))?.written == 1),
        }
    }

    /// The store identity of this detector's label set (a store holds one label set).
    pub fn label_set_identity(&self) -> &store::LabelSetIdentity {
        &self.loaded.identity
    }
}

/// Open (or create) a store for a detector's verdicts, bound to its label set.
pub fn open_store(path: impl AsRef<Path>, det: &Detector) -> Result<Store> {
    let store = Store::open(path.as_ref())?;
    crate::labelset::bind_store(&store, &det.loaded, det.labelset.path()).kind(ErrorKind::Store)?;
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_keep_their_kind() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("missing.dls");
        let e = Detector::open(&missing, DetectorConfig::default()).err().expect("a missing label set fails");
        assert_eq!(e.kind(), ErrorKind::LabelSet);
        assert!(e.to_string().contains("missing.dls"), "{e}");
        assert!(std::error::Error::source(&e).is_some(), "the io cause is kept");

        // A label set file that is not one: refused by the labelsets crate, kind kept.
        let junk = dir.path().join("junk.dls");
        std::fs::write(&junk, b"not a label set at all, just some bytes to read").expect("write");
        let e = Detector::open(&junk, DetectorConfig::default()).err().expect("junk fails");
        assert_eq!(e.kind(), ErrorKind::LabelSet);
    }
}
