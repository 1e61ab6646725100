//! `ditto origins`: the origin of every page's text segments, in arrival order and in fixed
//! memory (Abdel-Hamid et al. 2009; the algorithm is `detector::origins`, cited there).
//!
//! Pages are processed in arrival order: fetch time, then URL (`--order arrival`: the order
//! a live run recorded, see `crate::live::origins`; `--live` prints a live run's rows). A page's text is its cleaned
//! blocks joined with one space (k-shingles run across blocks). Each page is a query against
//! every earlier page, then its shingles enter the table (§2: the preprocessing and query
//! steps, streamed). `--memory` sizes the table (buckets of 64 entries of 16 bytes);
//! `--exact` keeps every shingle (All selection, NB, unbounded): the paper's reference.
//!
//! JSON Lines, one page a line, in arrival order: `{"url", "fetch_time", "tokens",
//! "selected", "copied_share", "dominant_origin", "novel_segments": [{"start", "end",
//! "text"}]}`. `dominant_origin` is the URL of the dominant origin (§3.1's 10 % rule; the
//! page's own URL when it is mostly its own), or null when no origin dominates;
//! `copied_share` is the share of selected shingles with another origin; novel segments are
//! token ranges `[start, end)` (tokens: lower-cased words) with their words.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use detector::fingerprint::parse_hex;
use detector::origins::{Estimation, Eviction, OriginConfig, OriginDetector, Selection, BRIDGE_T};
use detector::shingles::{visible_text, words};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum OriginFormat {
    Jsonl,
    Table,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum SelectionArg {
    /// Hailstorm with no complete overlap (the paper's best).
    Nhs,
    /// Hailstorm.
    Hs,
    /// Every shingle.
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum EvictionArg {
    /// The paper's Lucky eviction (§2.2, rules a–e).
    Lucky,
    /// The paper's baseline: least recently used.
    Lru,
    /// ditto's own policy, not the paper's: Lucky's scores, halved every 128 insertions into a
    /// bucket (aging).
    LuckyAging,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum EstimationArg {
    /// Bridging with expansion.
    Be,
    /// Bridging.
    B,
    /// Expansion.
    E,
    /// No bridging: only shingles found in the table.
    Nb,
}

/// `ditto origins` settings.
#[derive(Debug, Clone)]
pub struct OriginsConfig {
    /// Store written by `ditto scan` or `ditto crawl`.
    pub store: PathBuf,
    /// Size of the shingle table in bytes.
    pub memory: u64,
    /// Keep every shingle (unbounded memory): the reference answer.
    pub exact: bool,
    /// Which shingles of a page are selected.
    pub selection: SelectionArg,
    /// Which entry a full bucket of the table gives up.
    pub eviction: EvictionArg,
    /// How the origins of selected shingles not in the table are estimated.
    pub estimation: EstimationArg,
    /// Tokens per shingle.
    pub k: usize,
    pub format: OriginFormat,
    /// Print the rows a live run stored instead of computing them.
    pub live: bool,
    /// Order the pages are processed in.
    pub order: OrderArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum OrderArg {
    FetchTime,
    Arrival,
}

impl OriginsConfig {
    /// The detector these settings describe.
    pub fn detector(&self) -> OriginDetector {
        if self.exact {
            return OriginDetector::exact(self.k);
        }
        let cfg = OriginConfig {
            k: self.k,
            selection: match self.selection {
                SelectionArg::Nhs => Selection::Nhs,
                SelectionArg::Hs => Selection::Hs,
                SelectionArg::All => Selection::All,
            },
            eviction: match self.eviction {
                EvictionArg::Lucky => Eviction::Lucky,
                EvictionArg::Lru => Eviction::Lru,
                EvictionArg::LuckyAging => Eviction::LuckyAging,
            },
            estimation: match self.estimation {
                EstimationArg::Be => Estimation::Be,
                EstimationArg::B => Estimation::B,
                EstimationArg::E => Estimation::E,
                EstimationArg::Nb => Estimation::Nb,
            },
            bridge_limit: BRIDGE_T,
        };
        OriginDetector::new(cfg, self.memory)
    }
}

/// A novel segment: token range `[start, end)` and its words (shortened).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// One page's row of the report (JSON Lines).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct PageOut {
    pub url: String,
    pub fetch_time: i64,
    pub tokens: usize,
    pub selected: usize,
    pub copied_share: f64,
    pub dominant_origin: Option<String>,
    pub novel_segments: Vec<Segment>,
}

fn shorten(words: &[String]) -> String {
    const MAX: usize = 40;
    if words.len() <= MAX {
        words.join(" ")
    } else {
        format!("{} … {}", words[..MAX / 2].join(" "), words[words.len() - MAX / 2..].join(" "))
    }
}

/// Pages in arrival order through one detector: what `ditto origins` runs over a store and
/// `ditto scan/crawl --origins` runs live in the store writer (`crate::live::origins`), so
/// both give the same rows for the same order.
pub struct OriginsStream {
    pub det: OriginDetector,
    /// URLs by arrival number.
    urls: Vec<String>,
}

impl OriginsStream {
    pub fn new(det: OriginDetector) -> Self {
        OriginsStream { det, urls: Vec::new() }
    }

    /// Pages processed so far.
    pub fn len(&self) -> usize {
        self.urls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }

    /// The next page (cleaned text blocks, joined with one space) in arrival order.
    pub fn page<B: detector::BlockList + ?Sized>(
        &mut self,
        url: &str,
        fetch_time: i64,
        blocks: &B,
    ) -> PageOut {
        let text = visible_text(blocks);
        let r = self.det.process(self.urls.len().min(u32::MAX as usize) as u32, &text);
        self.urls.push(url.to_string());
        let segs: Vec<(usize, usize)> = r.novel_segments();
        let toks: Vec<String> =
            if segs.is_empty() { Vec::new() } else { words(&text).map(|w| w.into_owned()).collect() };
        let novel_segments = segs
            .into_iter()
            .map(|(s, e)| Segment {
                start: s,
                end: e,
                text: shorten(toks.get(s..e.min(toks.len())).unwrap_or(&[])),
            })
            .collect();
        PageOut {
            url: url.to_string(),
            fetch_time,
            tokens: r.tokens,
            selected: r.origins.len(),
            copied_share: r.copied_share(),
            dominant_origin: r.dominant.and_then(|d| self.urls.get(d as usize)).cloned(),
            novel_segments,
        }
    }
}

/// Write one row in `format`.
pub fn write_row(w: &mut impl Write, row: &PageOut, format: OriginFormat) -> Result<()> {
    match format {
        OriginFormat::Jsonl => {
            serde_json::to_writer(&mut *w, row)?;
            writeln!(w)?;
        }
        OriginFormat::Table => {
            let novel: usize = row.novel_segments.iter().map(|s| s.end - s.start).sum();
            writeln!(
                w,
                "{:>6}  {:>6.1}%  {:>6}  {} → {}",
                row.tokens,
                100.0 * row.copied_share,
                novel,
                row.url,
                row.dominant_origin.as_deref().unwrap_or("(none)")
            )?;
        }
    }
    Ok(())
}

fn write_header(w: &mut impl Write, format: OriginFormat) -> Result<()> {
    if format == OriginFormat::Table {
        writeln!(
            w,
            "{:>6}  {:>7}  {:>6}  url → dominant origin; novel segments",
            "tokens", "copied", "novel"
        )?;
    }
    Ok(())
}

/// `ditto origins --live`: the rows `ditto scan/crawl --origins` stored, in arrival order.
fn run_live(cfg: &OriginsConfig) -> Result<()> {
    let store = crate::analysis::open_store_for_reading(&cfg.store)?;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    write_header(&mut w, cfg.format)?;
    let mut n = 0u64;
    for r in store.live_origins() {
        let (_, json) = r?;
        let row: PageOut = serde_json::from_slice(&json).context("a stored live origins row")?;
        if cfg.format == OriginFormat::Jsonl {
            // The stored bytes as written: serde_json's float parsing may be 1 ulp off, so a
            // parsed and re-printed copied_share could differ from the offline run's.
            w.write_all(&json)?;
            writeln!(w)?;
        } else {
            write_row(&mut w, &row, cfg.format)?;
        }
        n += 1;
    }
    w.flush()?;
    eprintln!("{n} pages with live origins (ditto scan/crawl --origins), in arrival order");
    Ok(())
}

/// `ditto origins`.
pub fn run(cfg: OriginsConfig) -> Result<()> {
    if cfg.live {
        return run_live(&cfg);
    }
    let store = crate::analysis::open_store_for_reading(&cfg.store)?;
    let mut pages: Vec<(i64, String, String)> = Vec::new();
    for r in store.pages() {
        let r = r?;
        pages.push((r.fetch_time, r.url, r.file_hash));
    }
    pages.sort();
    if cfg.order == OrderArg::Arrival {
        let mut pos: std::collections::HashMap<(String, i64), u64> = std::collections::HashMap::new();
        for r in store.live_origins() {
            let (seq, json) = r?;
            let row: PageOut = serde_json::from_slice(&json).context("a stored live origins row")?;
            pos.entry((row.url, row.fetch_time)).or_insert(seq);
        }
        pages.sort_by_cached_key(|(t, u, _)| {
            (pos.get(&(u.clone(), *t)).copied().unwrap_or(u64::MAX), *t, u.clone())
        });
    }
    let mut stream = OriginsStream::new(cfg.detector());
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    write_header(&mut w, cfg.format)?;
    let start = std::time::Instant::now();
    let texts = crate::source::text::TextSource::new(&store)?;
    for (fetch_time, url, hash) in &pages {
        // A page whose source is gone or changed enters with no text (counted, noted below).
        let blocks = match parse_hex(hash) {
            Some(h) => texts.text_of_key(url, &h)?.blocks().unwrap_or_default(),
            None => {
                eprintln!("warning: {url}: bad file hash {hash:?}, no text");
                Vec::new()
            }
        };
        let row = stream.page(url, *fetch_time, &blocks);
        write_row(&mut w, &row, cfg.format)?;
    }
    w.flush()?;
    if let Some(note) = texts.summary() {
        eprintln!("{note}");
    }
    let secs = start.elapsed().as_secs_f64();
    let det = &stream.det;
    eprintln!(
        "{} pages in {:.2} s ({:.0} pages/s); {} of {} shingles selected; table: {} shingles, {} bytes, {} evictions{}",
        det.docs,
        secs,
        det.docs as f64 / secs.max(1e-9),
        det.selected_total,
        det.shingles_total,
        det.stored(),
        det.memory_bytes(),
        det.evictions(),
        if cfg.exact { " (exact)" } else { "" }
    );
    Ok(())
}
