//! `ditto quilts`: quilted pages among a store's pages (Najork 2012; the algorithm is
//! `detector::quilts`, cited there by section).
//!
//! How the store is read:
//! - **Exact replicas collapsed first.** Pages with the same file SHA-1 are one document of
//!   the corpus D: its body counts once in `docs_k(g)`, and since it is one document it can
//!   never be its own source — a page and its mirror are not each other's patch source. The
//!   document is reported under its first URL (URL order) with the others as `replicas`.
//! - **Templates left out before forming k-grams**: blocks that are stop chunks (the default
//!   list plus `--stop-chunks`, normalized as the store's chunks) and blocks on at least
//!   `--template-fraction` of the pages of their host (and at least `--template-min-pages`
//!   pages) are dropped; `--keep-templates` keeps them (to see their effect: template grams
//!   are shared by a host's pages, inflate patchfrac and add same-site sources).
//! - **docs_k(g) counted exactly within `--memory`** by `ditto::counting::Counter` (sorted
//!   runs spill to `--tmp-dir` past it); the patch grams (1 < count ≤ m) are kept in memory,
//!   and postings are built only for the patch grams of documents whose patchfrac ≥ θ (the
//!   only ones needing a cover, as the paper's Figure 5).
//! - **Foreign** (`--foreign`, Najork §3): sources must be on another registrable domain
//!   (public suffix list; IP hosts and single labels are their own domain): a source document
//!   is allowed when none of its URLs' domains is one of the quilted document's.
//!
//! JSON Lines, one quilted page a line, highest patchfrac first:
//! `{"url", "replicas", "patchfrac", "grams", "patch_grams", "sources": [{"url",
//! "patch_grams", "sample"}]}` — sources in cover order, `patch_grams` = the patch grams of
//! the page it was the first to cover, `sample` = one patch (a maximal run of those grams) as
//! words.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use detector::fingerprint::Sha1Digest;
use detector::normalize::Normalization;
use detector::quilts::{self, PatchGrams, Postings, QuiltParams};
use detector::shingles::{hash64, words};
use labelsets::StopChunks;
use serde::Serialize;
use store::Store;

use crate::counting::Counter;
use crate::discover::{load_stops, parse_bytes, store_normalization};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QuiltFormat {
    Jsonl,
    Table,
}

/// `ditto quilts` options.
#[derive(Debug, Clone, clap::Args)]
pub struct QuiltsArgs {
    /// Store written by `ditto scan` or `ditto crawl`.
    #[arg(long)]
    pub store: PathBuf,
    /// Words per k-gram.
    #[arg(long, default_value_t = 5)]
    pub k: usize,
    /// A patch gram is in more than one and at most m documents.
    #[arg(long, default_value_t = 50)]
    pub m: u64,
    /// Fewest sources (greedy set cover) of a quilted page.
    #[arg(long, default_value_t = 4)]
    pub c: usize,
    /// Smallest patch fraction of a quilted page.
    #[arg(long, default_value_t = 0.5)]
    pub theta: f64,
    /// Only sources on another registrable domain count (foreign-sourced quilts).
    #[arg(long)]
    pub foreign: bool,
    /// Memory for counting docs_k(g) (e.g. 256MB); past it, sorted runs spill to --tmp-dir.
    #[arg(long, default_value = "256MB", value_parser = parse_bytes)]
    pub memory: u64,
    /// Where spilled runs go (default: the system temporary directory).
    #[arg(long)]
    pub tmp_dir: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: QuiltFormat,
    /// Extra stop-chunk lists (text or .dls). May repeat.
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Do not use the built-in stop-chunk list.
    #[arg(long)]
    pub no_default_stop_chunks: bool,
    /// Keep template blocks and stop chunks in the k-grams.
    #[arg(long)]
    pub keep_templates: bool,
    /// A block on at least this share of its host's pages is template (navigation, footers,
    /// rotating related-link lists).
    #[arg(long, default_value_t = 0.3)]
    pub template_fraction: f64,
    /// ... and on at least this many of them.
    #[arg(long, default_value_t = 4)]
    pub template_min_pages: u64,
    /// Sources per page given a sample patch (all sources are listed).
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
}

/// One source of a quilted page.
#[derive(Debug, Clone, Serialize)]
pub struct SourceOut {
    pub url: String,
    pub patch_grams: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<String>,
}

/// One quilted page.
#[derive(Debug, Clone, Serialize)]
pub struct QuiltOut {
    pub url: String,
    pub replicas: Vec<String>,
    pub patchfrac: f64,
    pub grams: usize,
    pub patch_grams: usize,
    pub sources: Vec<SourceOut>,
}

/// Totals of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QuiltTotals {
    pub pages: u64,
    pub documents: u64,
    pub template_blocks_dropped: u64,
    pub gram_occurrences: u64,
    pub patch_grams: u64,
    pub patchy_documents: u64,
    pub quilted_documents: u64,
    pub runs_spilled: u64,
    pub peak_counter_bytes: u64,
}

struct Doc {
    file_hash: Sha1Digest,
    urls: Vec<String>,
}

fn host_of(url: &str) -> String {
    url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default()
}

fn domain_of(url: &str) -> String {
    let h = host_of(url);
    crawler::urls::registrable_domain(&h).unwrap_or(h)
}

/// Which blocks of a page enter the k-grams.
struct BlockFilter {
    norm: Normalization,
    stops: Option<StopChunks>,
    templates: HashSet<(u64, u64)>,
}

impl BlockFilter {
    fn block_hash(&self, b: &str) -> u64 {
        hash64(self.norm.apply(b).as_bytes())
    }

    fn keep<'a>(&self, url: &str, blocks: &'a [String]) -> (Vec<&'a str>, u64) {
        let Some(stops) = &self.stops else { return (blocks.iter().map(String::as_str).collect(), 0) };
        let host = hash64(host_of(url).as_bytes());
        let mut dropped = 0;
        let kept = blocks
            .iter()
            .filter(|b| {
                let keep = !stops.is_stop_text(b) && !self.templates.contains(&(host, self.block_hash(b)));
                dropped += u64::from(!keep);
                keep
            })
            .map(String::as_str)
            .collect();
        (kept, dropped)
    }
}

/// Run the analysis over a store; returns the quilted pages (highest patchfrac first).
pub fn analyze(a: &QuiltsArgs) -> Result<(Vec<QuiltOut>, QuiltTotals)> {
    if a.k == 0 || a.m < 2 || !(0.0..=1.0).contains(&a.theta) {
        bail!("need k ≥ 1, m ≥ 2 and 0 ≤ θ ≤ 1");
    }
    let p = QuiltParams { k: a.k, m: a.m, c: a.c, theta: a.theta };
    let store = Store::open(&a.store).with_context(|| format!("opening {}", a.store.display()))?;
    let tmp = a.tmp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let norm = store_normalization(&store)?;
    let mut totals = QuiltTotals::default();

    // Documents: pages collapsed by file hash (first URL in URL order represents).
    let mut docs: Vec<Doc> = Vec::new();
    let mut by_hash: HashMap<Sha1Digest, u32> = HashMap::new();
    let mut host_pages: HashMap<u64, u64> = HashMap::new();
    let mut tcount: Counter<[u8; 16]> = Counter::new(a.memory / 2, &tmp);
    for r in store.texts() {
        let (url, hash, blocks) = r?;
        totals.pages += 1;
        match by_hash.get(&hash) {
            Some(&d) => docs[d as usize].urls.push(url.clone()),
            None => {
                by_hash.insert(hash, docs.len() as u32);
                docs.push(Doc { file_hash: hash, urls: vec![url.clone()] });
            }
        }
        if !a.keep_templates {
            let host = hash64(host_of(&url).as_bytes());
            *host_pages.entry(host).or_default() += 1;
            let mut seen = HashSet::new();
            for b in &blocks {
                let h = hash64(norm.apply(b).as_bytes());
                if seen.insert(h) {
                    let mut key = [0u8; 16];
                    key[..8].copy_from_slice(&host.to_be_bytes());
                    key[8..].copy_from_slice(&h.to_be_bytes());
                    tcount.add(key).context("counting blocks per host")?;
                }
            }
        }
    }
    totals.documents = docs.len() as u64;
    drop(by_hash);
    let mut templates = HashSet::new();
    if !a.keep_templates {
        for r in tcount.finish().context("counting blocks per host")? {
            let (key, n) = r.context("counting blocks per host")?;
            let mut hb = [0u8; 8];
            hb.copy_from_slice(&key[..8]);
            let host = u64::from_be_bytes(hb);
            hb.copy_from_slice(&key[8..]);
            let pages = host_pages.get(&host).copied().unwrap_or(0);
            if n >= a.template_min_pages && n as f64 >= a.template_fraction * pages as f64 {
                templates.insert((host, u64::from_be_bytes(hb)));
            }
        }
    } else {
        drop(tcount);
    }
    let filter = BlockFilter {
        norm,
        stops: if a.keep_templates {
            None
        } else {
            Some(load_stops(norm, &a.stop_chunks, a.no_default_stop_chunks)?)
        },
        templates,
    };

    // The word hashes of a document's kept blocks.
    let doc_words = |d: &Doc| -> Result<(Vec<String>, Vec<u64>, u64)> {
        let url = &d.urls[0];
        let blocks = store.page_text(url, &d.file_hash)?.unwrap_or_default();
        let (kept, dropped) = filter.keep(url, &blocks);
        let w: Vec<String> = kept.iter().flat_map(|b| words(b).map(|w| w.into_owned())).collect();
        let h = w.iter().map(|x| hash64(x.as_bytes())).collect();
        Ok((w, h, dropped))
    };

    // Pass 1: docs_k(g), each distinct gram of each document once.
    let mut counter: Counter<u64> = Counter::new(a.memory, &tmp);
    for d in &docs {
        let (_, wh, dropped) = doc_words(d)?;
        totals.template_blocks_dropped += dropped;
        for g in quilts::gram_set(&wh, p.k) {
            counter.add(g).context("counting k-grams")?;
        }
    }
    let mut counts = counter.finish().context("counting k-grams")?;
    let patch = PatchGrams::from_counts(counts.by_ref(), p.m).context("counting k-grams")?;
    let cs = counts.stats();
    totals.gram_occurrences = cs.occurrences;
    totals.runs_spilled = cs.runs_written;
    totals.peak_counter_bytes = cs.peak_table_bytes;
    totals.patch_grams = patch.len() as u64;
    drop(counts);

    // Pass 2: patchfrac; the documents reaching θ need a cover.
    let mut patchy: Vec<(u32, Vec<u64>, usize)> = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        let (_, wh, _) = doc_words(d)?;
        let grams = quilts::gram_set(&wh, p.k);
        let pg = quilts::pgrams(&grams, &patch);
        if !grams.is_empty() && quilts::patchfrac(pg.len(), grams.len()) >= p.theta {
            patchy.push((i as u32, pg, grams.len()));
        }
    }
    totals.patchy_documents = patchy.len() as u64;

    // Pass 3: postings of the patchy documents' patch grams.
    let mut postings = Postings::wanted(patchy.iter().flat_map(|(_, pg, _)| pg.iter().copied()));
    for (i, d) in docs.iter().enumerate() {
        let (_, wh, _) = doc_words(d)?;
        postings.add_doc(i as u32, &quilts::gram_set(&wh, p.k));
    }

    let domains: Vec<HashSet<String>> = if a.foreign {
        docs.iter().map(|d| d.urls.iter().map(|u| domain_of(u)).collect()).collect()
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    for (d, pg, n_grams) in patchy {
        let allowed = |o: u32| !a.foreign || domains[o as usize].is_disjoint(&domains[d as usize]);
        let sources = quilts::greedy_cover(d, &pg, |g| postings.docs(g), allowed);
        let frac = quilts::patchfrac(pg.len(), n_grams);
        if !quilts::is_quilted(frac, sources.len(), &p) {
            continue;
        }
        let doc = &docs[d as usize];
        let (w, wh, _) = doc_words(doc)?;
        let order = quilts::grams_in_order(&wh, p.k);
        let srcs = sources
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let sample = (i < a.samples).then(|| {
                    let set: HashSet<u64> = s.grams.iter().copied().collect();
                    let spans = quilts::patch_spans(&order, p.k, &|g| set.contains(&g));
                    spans
                        .iter()
                        .max_by_key(|(a, b)| b - a)
                        .map(|&(s, e)| shorten(&w[s..e.min(w.len())].join(" "), 200))
                        .unwrap_or_default()
                });
                SourceOut { url: docs[s.doc as usize].urls[0].clone(), patch_grams: s.grams.len(), sample }
            })
            .collect();
        out.push(QuiltOut {
            url: doc.urls[0].clone(),
            replicas: doc.urls[1..].to_vec(),
            patchfrac: frac,
            grams: n_grams,
            patch_grams: pg.len(),
            sources: srcs,
        });
    }
    totals.quilted_documents = out.len() as u64;
    out.sort_by(|x, y| y.patchfrac.total_cmp(&x.patchfrac).then_with(|| x.url.cmp(&y.url)));
    Ok((out, totals))
}

fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Write the report.
pub fn write_report(rows: &[QuiltOut], format: QuiltFormat, w: &mut impl Write) -> Result<()> {
    match format {
        QuiltFormat::Jsonl => {
            for r in rows {
                serde_json::to_writer(&mut *w, r)?;
                writeln!(w)?;
            }
        }
        QuiltFormat::Table => {
            writeln!(
                w,
                "{:>9}  {:>7}  {:>7}  url / sources (patch grams) and a sample patch",
                "patchfrac", "grams", "sources"
            )?;
            for r in rows {
                writeln!(w, "{:>9.3}  {:>7}  {:>7}  {}", r.patchfrac, r.grams, r.sources.len(), r.url)?;
                for s in &r.sources {
                    writeln!(w, "{:>30}  {:>5}  {}", "", s.patch_grams, s.url)?;
                    if let Some(x) = &s.sample {
                        writeln!(w, "{:>37}  “{}”", "", x)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// `ditto quilts`.
pub fn run(a: QuiltsArgs) -> Result<()> {
    let (rows, totals) = analyze(&a)?;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    write_report(&rows, a.format, &mut w)?;
    w.flush()?;
    eprintln!(
        "{} pages, {} documents after collapsing exact replicas; {} template/stop blocks left out; \
         {} k-gram occurrences ({} runs spilled, counter peak {} bytes); {} patch grams; {} documents \
         with patchfrac ≥ {}; {} quilted{}",
        totals.pages,
        totals.documents,
        totals.template_blocks_dropped,
        totals.gram_occurrences,
        totals.runs_spilled,
        totals.peak_counter_bytes,
        totals.patch_grams,
        totals.patchy_documents,
        a.theta,
        totals.quilted_documents,
        if a.foreign { " (foreign-sourced)" } else { "" }
    );
    Ok(())
}
