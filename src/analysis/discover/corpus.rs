//! Where discovery's pages come from: a store (its stored cleaned text blocks,
//! re-fingerprinted with the store's normalization) or inputs read through the scan's own
//! filter and clean stages, each page as its hashes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{anyhow, Context, Result};
use crossbeam_channel::Receiver;
use detector::fingerprint::{fingerprint_with_file_hash, parse_hex, sha1, Sha1Digest};
use detector::passages::{document_anchors, PassageHash, PassageParams};
use detector::{BlockList, CleanOptions, Normalization, TrapRules};

use crate::labelset::store_normalization;
use crate::pipeline::metrics::{Skips, StageMetrics};
use crate::pipeline::source_stage::{self, SourceCounters, SourceOptions};
use crate::pipeline::{pool, stages};

/// Where pages come from.
#[derive(Debug, Clone)]
pub enum Corpus {
    Store(PathBuf),
    Inputs(InputsConfig),
}

/// Reading pages straight from inputs, with the scan's filter and clean stages.
#[derive(Debug, Clone)]
pub struct InputsConfig {
    pub inputs: Vec<PathBuf>,
    pub url_prefix: Option<String>,
    pub normalization: Normalization,
    pub traps: TrapRules,
    pub threads: usize,
    pub max_body_bytes: u64,
}

/// One page's hashes, as counting sees them.
#[derive(Debug, Clone)]
pub struct PageHashes {
    pub url: String,
    /// The page's number in reading order (URL order for a store).
    pub seq: u32,
    pub file_hash: Sha1Digest,
    /// The chunk hash vector (empty when only files are counted).
    pub chunks: Vec<Sha1Digest>,
    /// The page's distinct passage anchors, when asked for ([`for_each_page_with`]).
    pub passages: Vec<PassageHash>,
}

/// What a pass over the corpus read.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PassStats {
    pub pages: u64,
    /// Pages seen again with the same URL and body (counted once, as a store keeps them).
    pub duplicate_pages: u64,
    pub skipped: std::collections::BTreeMap<&'static str, u64>,
    pub errors: Vec<String>,
}

/// Feed every page of `corpus` to `f`. `files`: only file hashes are needed (no cleaning
/// for inputs, no text for a store).
pub fn for_each_page(
    corpus: &Corpus,
    files: bool,
    f: impl FnMut(PageHashes) -> Result<()>,
) -> Result<PassStats> {
    for_each_page_with(corpus, files, None, f)
}

/// [`for_each_page`], with each page's passage anchors taken with `passages` (not with
/// `files`).
pub fn for_each_page_with(
    corpus: &Corpus,
    files: bool,
    passages: Option<PassageParams>,
    f: impl FnMut(PageHashes) -> Result<()>,
) -> Result<PassStats> {
    let passages = passages.filter(|_| !files);
    match corpus {
        Corpus::Store(path) => pages_from_store(path, files, passages, f),
        Corpus::Inputs(cfg) => pages_from_inputs(cfg, files, passages, f),
    }
}

/// A store's pages in URL order (its key order), numbered in that order.
fn pages_from_store(
    path: &Path,
    files: bool,
    passages: Option<PassageParams>,
    mut f: impl FnMut(PageHashes) -> Result<()>,
) -> Result<PassStats> {
    let store = crate::analysis::open_store_for_reading(path)?;
    let norm = store_normalization(&store)?;
    let mut st = PassStats::default();
    let mut seq = 0u32;
    let mut next_seq = || -> Result<u32> {
        let s = seq;
        seq = seq.checked_add(1).ok_or_else(|| anyhow!("more than 2^32 pages"))?;
        Ok(s)
    };
    if files {
        for rec in store.pages() {
            let rec = rec?;
            let Some(file_hash) = parse_hex(&rec.file_hash) else {
                st.errors.push(format!("{}: bad file hash {:?}", rec.url, rec.file_hash));
                continue;
            };
            st.pages += 1;
            f(PageHashes {
                url: rec.url,
                seq: next_seq()?,
                file_hash,
                chunks: Vec::new(),
                passages: Vec::new(),
            })?;
        }
    } else {
        // Kept text, or each page read back from its source (none when that is gone).
        let texts = crate::source::text::TextSource::new(&store)?;
        for item in texts.texts() {
            let (url, file_hash, blocks) = item?;
            let fp = fingerprint_with_file_hash(file_hash, &blocks, &norm);
            st.pages += 1;
            let chunks = fp.chunks.iter().map(|c| c.hash).collect();
            let passages =
                passages.map_or_else(Vec::new, |p| document_anchors(blocks.iter().map(String::as_str), p));
            f(PageHashes { url, seq: next_seq()?, file_hash, chunks, passages })?;
        }
        if let Some(note) = texts.summary() {
            eprintln!("{note}");
        }
    }
    Ok(st)
}

/// Inputs read, numbered, filtered, cleaned and hashed on `cfg.threads` workers; pages go
/// to `f` once per (URL, body).
fn pages_from_inputs(
    cfg: &InputsConfig,
    files: bool,
    passages: Option<PassageParams>,
    f: impl FnMut(PageHashes) -> Result<()>,
) -> Result<PassStats> {
    let threads = cfg.threads.max(1);
    let cap = 16 * threads;
    let skips = Arc::new(Skips::default());
    let (reader, numbered_pages) = NumberedReader::spawn(cfg, cap, &skips)?;
    let (out_tx, out_rx) = crossbeam_channel::bounded::<PageHashes>(cap);
    let filter_settings = stages::FilterSettings { traps: cfg.traps, store: None, skip_stored: false };
    let norm = cfg.normalization;
    let s = skips.clone();
    let workers = pool::spawn_pool(
        Arc::new(StageMetrics::new("discover")),
        threads,
        numbered_pages,
        out_tx,
        move |(seq, input): (u32, stages::Input)| {
            let what = Wanted { files, passages, norm };
            hash_page(seq, input, what, &filter_settings, &s)
        },
    );
    let mut st = PassStats::default();
    let result = feed_unique_pages(&out_rx, &mut st, f);
    // Dropping the receiver stops the workers and, through them, the reader.
    drop(out_rx);
    for w in workers {
        let _ = w.join();
    }
    let (numbered, read) = reader.join()?;
    result?;
    numbered?;
    read?;
    st.skipped = skips.counts();
    st.errors = skips.errors();
    Ok(st)
}

/// The source stage on one thread and a thread numbering its pages in reading order, so
/// "the first URL a chunk was seen at" does not depend on thread timing.
struct NumberedReader {
    source: JoinHandle<Result<()>>,
    numbering: JoinHandle<Result<()>>,
}

impl NumberedReader {
    /// The threads, and the receiver of (page number, page) in reading order.
    fn spawn(
        cfg: &InputsConfig,
        cap: usize,
        skips: &Arc<Skips>,
    ) -> Result<(NumberedReader, Receiver<(u32, stages::Input)>)> {
        let plan = source_stage::plan(&cfg.inputs)?;
        let opts = SourceOptions::local(cfg.url_prefix.clone(), cfg.max_body_bytes);
        let counters = Arc::new(SourceCounters::default());
        let (src_tx, src_rx) = crossbeam_channel::bounded::<stages::Input>(cap);
        let (seq_tx, seq_rx) = crossbeam_channel::bounded::<(u32, stages::Input)>(cap);
        let source = {
            let skips = skips.clone();
            std::thread::Builder::new()
                .name("source".into())
                .spawn(move || source_stage::run(plan, opts, src_tx, &skips, &counters))
                .context("spawning the source thread")?
        };
        let numbering = std::thread::Builder::new()
            .name("number".into())
            .spawn(move || -> Result<()> {
                for (i, input) in src_rx.into_iter().enumerate() {
                    let seq = u32::try_from(i).map_err(|_| anyhow!("more than 2^32 pages"))?;
                    if seq_tx.send((seq, input)).is_err() {
                        break;
                    }
                }
                Ok(())
            })
            .context("spawning a thread")?;
        Ok((NumberedReader { source, numbering }, seq_rx))
    }

    /// Wait for both threads (they stop once the receiver is dropped); a panic is the
    /// error, else what each returned: (numbering, source).
    fn join(self) -> Result<(Result<()>, Result<()>)> {
        let numbered = self.numbering.join().map_err(|_| anyhow!("the numbering thread panicked"))?;
        let read = self.source.join().map_err(|_| anyhow!("the source thread panicked"))?;
        Ok((numbered, read))
    }
}

/// One page through the scan's filter and clean stages to its hashes; `None` when the
/// filter skips it (counted in `skips`).
/// What to take of each page.
#[derive(Clone, Copy)]
struct Wanted {
    /// The file hash only.
    files: bool,
    passages: Option<PassageParams>,
    norm: Normalization,
}

fn hash_page(
    seq: u32,
    input: stages::Input,
    what: Wanted,
    filter_settings: &stages::FilterSettings,
    skips: &Skips,
) -> Option<PageHashes> {
    let p = stages::filter(input, filter_settings, skips)?;
    if what.files {
        let file_hash = p.file_hash();
        return Some(PageHashes {
            url: p.page.url,
            seq,
            file_hash,
            chunks: Vec::new(),
            passages: Vec::new(),
        });
    }
    let c = stages::clean(p, &CleanOptions { extract_links: false });
    let file_hash = c.file_hash();
    let fp = fingerprint_with_file_hash(file_hash, &c.doc.blocks, &what.norm);
    let chunks = fp.chunks.iter().map(|x| x.hash).collect();
    let passages = what.passages.map_or_else(Vec::new, |p| document_anchors(c.doc.blocks.blocks(), p));
    Some(PageHashes { url: c.page.url, seq, file_hash, chunks, passages })
}

/// Hand the workers' pages to `f`, each (URL, body) once, as the store keys pages; stops at
/// `f`'s first error.
fn feed_unique_pages(
    out_rx: &Receiver<PageHashes>,
    st: &mut PassStats,
    mut f: impl FnMut(PageHashes) -> Result<()>,
) -> Result<()> {
    let mut seen: HashSet<Sha1Digest> = HashSet::new();
    for page in out_rx.iter() {
        let mut key = Vec::with_capacity(page.url.len() + 21);
        key.extend_from_slice(page.url.as_bytes());
        key.push(0);
        key.extend_from_slice(&page.file_hash);
        if !seen.insert(sha1(&key)) {
            st.duplicate_pages += 1;
            continue;
        }
        st.pages += 1;
        f(page)?;
    }
    Ok(())
}
