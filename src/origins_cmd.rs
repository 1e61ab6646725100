//! `ditto origins`: the origin of every page's text segments, in arrival order and in fixed
//! memory (Abdel-Hamid et al. 2009; the algorithm is `detector::origins`, cited there).
//!
//! Pages are processed in arrival order: fetch time, then URL. A page's text is its cleaned
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
use detector::origins::{Estimation, Eviction, OriginConfig, OriginDetector, Selection, BRIDGE_T, K};
use detector::shingles::{visible_text, words};
use serde::Serialize;
use store::Store;

use crate::discover::parse_bytes;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OriginFormat {
    Jsonl,
    Table,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SelectionArg {
    /// Hailstorm with no complete overlap (the paper's best).
    Nhs,
    /// Hailstorm.
    Hs,
    /// Every shingle.
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvictionArg {
    Lucky,
    Lru,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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

/// `ditto origins` options.
#[derive(Debug, Clone, clap::Args)]
pub struct OriginsArgs {
    /// Store written by `ditto scan` or `ditto crawl`.
    #[arg(long)]
    pub store: PathBuf,
    /// Size of the shingle table (e.g. 64MB).
    #[arg(long, default_value = "64MB", value_parser = parse_bytes)]
    pub memory: u64,
    /// Keep every shingle (unbounded memory): the reference answer.
    #[arg(long)]
    pub exact: bool,
    #[arg(long, value_enum, default_value = "nhs")]
    pub selection: SelectionArg,
    #[arg(long, value_enum, default_value = "lucky")]
    pub eviction: EvictionArg,
    #[arg(long, value_enum, default_value = "be")]
    pub estimation: EstimationArg,
    /// Tokens per shingle.
    #[arg(long, default_value_t = K)]
    pub k: usize,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: OriginFormat,
}

impl OriginsArgs {
    /// The detector these options describe.
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

#[derive(Debug, Serialize)]
struct Segment {
    start: usize,
    end: usize,
    text: String,
}

#[derive(Debug, Serialize)]
struct PageOut<'a> {
    url: &'a str,
    fetch_time: i64,
    tokens: usize,
    selected: usize,
    copied_share: f64,
    dominant_origin: Option<&'a str>,
    novel_segments: Vec<Segment>,
}

fn shorten(words: &[String]) -> String {
    const MAX: usize = 40;
    if words.len() <= MAX {
        words.join(" ")
    } else {
        format!("{} … {}", words[..MAX / 2].join(" "), words[words.len() - MAX / 2..].join(" "))
    }
}

/// `ditto origins`.
pub fn run(a: OriginsArgs) -> Result<()> {
    let store = Store::open(&a.store).with_context(|| format!("opening {}", a.store.display()))?;
    let mut pages: Vec<(i64, String, String)> = Vec::new();
    for r in store.pages() {
        let r = r?;
        pages.push((r.fetch_time, r.url, r.file_hash));
    }
    pages.sort();
    let mut det = a.detector();
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    if a.format == OriginFormat::Table {
        writeln!(
            w,
            "{:>6}  {:>7}  {:>6}  url → dominant origin; novel segments",
            "tokens", "copied", "novel"
        )?;
    }
    let start = std::time::Instant::now();
    let mut urls: Vec<String> = Vec::with_capacity(pages.len());
    for (i, (fetch_time, url, hash)) in pages.iter().enumerate() {
        let blocks = match parse_hex(hash) {
            Some(h) => store.page_text(url, &h)?.unwrap_or_default(),
            None => {
                eprintln!("warning: {url}: bad file hash {hash:?}, no text");
                Vec::new()
            }
        };
        let text = visible_text(&blocks);
        let toks: Vec<String> = words(&text).map(|w| w.into_owned()).collect();
        let r = det.process(i as u32, &text);
        urls.push(url.clone());
        let segs: Vec<Segment> = r
            .novel_segments()
            .into_iter()
            .map(|(s, e)| Segment { start: s, end: e, text: shorten(&toks[s..e.min(toks.len())]) })
            .collect();
        let dominant = r.dominant.and_then(|d| urls.get(d as usize)).map(String::as_str);
        match a.format {
            OriginFormat::Jsonl => {
                let row = PageOut {
                    url,
                    fetch_time: *fetch_time,
                    tokens: r.tokens,
                    selected: r.origins.len(),
                    copied_share: r.copied_share(),
                    dominant_origin: dominant,
                    novel_segments: segs,
                };
                serde_json::to_writer(&mut w, &row)?;
                writeln!(w)?;
            }
            OriginFormat::Table => {
                let novel: usize = segs.iter().map(|s| s.end - s.start).sum();
                writeln!(
                    w,
                    "{:>6}  {:>6.1}%  {:>6}  {} → {}",
                    r.tokens,
                    100.0 * r.copied_share(),
                    novel,
                    url,
                    dominant.unwrap_or("(none)")
                )?;
            }
        }
    }
    w.flush()?;
    let secs = start.elapsed().as_secs_f64();
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
        if a.exact { " (exact)" } else { "" }
    );
    Ok(())
}
