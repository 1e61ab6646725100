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
//! - **Bounded by `--memory`**: docs_k(g), the postings of the patch grams and the replica
//!   groups are external sorts (`ditto::analysis::counting::Counter`: sorted runs, spilled to
//!   `--tmp-dir` past their share of `--memory`), joined as streams the way Najork's Figure 5
//!   joins its tables: (gram, document) sorted by gram gives docs_k(g) and, for each patch
//!   gram, (document, gram, other document) records; sorted by document, they give each
//!   document its own postings for patchfrac and the greedy cover, one document at a time
//!   (texts re-read: kept in the store, or read back from each page's source,
//!   `crate::source::text`). What stays outside `--memory` is listed at
//!   [`analyze`]. The output is the same for every `--memory`.
//! - **Foreign** (`--foreign`, Najork §3): sources must be on another registrable domain
//!   (public suffix list; IP hosts and single labels are their own domain): a source document
//!   is allowed when none of its URLs' domains is one of the quilted document's (domains are
//!   compared by 64-bit hash in the sorted streams).
//!
//! JSON Lines, one quilted page a line, highest patchfrac first:
//! `{"url", "replicas", "patchfrac", "grams", "patch_grams", "sources": [{"url",
//! "patch_grams", "sample"}]}` — sources in cover order, `patch_grams` = the patch grams of
//! the page it was the first to cover, `sample` = one patch (a maximal run of those grams) as
//! words.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use detector::fingerprint::Sha1Digest;
use detector::normalize::Normalization;
use detector::quilts::{self, QuiltParams};
use detector::shingles::{hash64, words};
use labelsets::StopChunks;
use serde::Serialize;
use store::Store;

use crate::analysis::counting::{Counter, Counts, Key, TempDir};
use crate::labelset::{load_stops, store_normalization};
use crate::source::text::TextSource;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum QuiltFormat {
    Jsonl,
    Table,
}

/// `ditto quilts` settings.
#[derive(Debug, Clone)]
pub struct QuiltsConfig {
    /// Store written by `ditto scan` or `ditto crawl`.
    pub store: PathBuf,
    /// Words per k-gram.
    pub k: usize,
    /// A patch gram is in more than one and at most m documents.
    pub m: u64,
    /// Fewest sources of a quilted page.
    pub c: usize,
    /// Smallest patch fraction of a quilted page.
    pub theta: f64,
    /// Only sources on another registrable domain count.
    pub foreign: bool,
    /// Memory for the sorts, in bytes; past it, sorted runs spill to `tmp_dir`.
    pub memory: u64,
    /// Where spilled runs go (`None`: the system temporary directory).
    pub tmp_dir: Option<PathBuf>,
    pub format: QuiltFormat,
    /// Extra stop-chunk lists (text or .dls).
    pub stop_chunks: Vec<PathBuf>,
    /// Leave out the built-in stop-chunk list.
    pub no_default_stop_chunks: bool,
    /// Keep template blocks and stop chunks in the k-grams.
    pub keep_templates: bool,
    /// Share of its host's pages that makes a block template...
    pub template_fraction: f64,
    /// ... with at least this many pages.
    pub template_min_pages: u64,
    /// Sources per page given a sample patch.
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
    /// Runs the k-gram count (pass 1) wrote to disk.
    pub runs_spilled: u64,
    /// Largest in-memory footprint of the k-gram counter.
    pub peak_counter_bytes: u64,
    /// Records of the postings join ((d, g, other) and one (d, g, OWN) per patch gram of d).
    pub postings_records: u64,
    /// Runs the postings join wrote to disk.
    pub postings_runs_spilled: u64,
    /// Largest in-memory footprint of the postings sorter.
    pub postings_peak_bytes: u64,
    /// Runs the smaller sorts (blocks per host, pages by file hash, servers, replicas) wrote.
    pub other_runs_spilled: u64,
    /// Largest one document's postings held at once (bytes).
    pub largest_document_bytes: u64,
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

// Sort keys of the external joins. Every field is big-endian, so the byte order the sorter
// ([`Counter`]) keeps is the numeric order of the fields, first field first. Documents are
// named by the ordinal of their first page in the store's URL order (`TextSource::texts`), so
// their order is the order of their first URLs, as the in-memory version numbered them.

/// Pages by file hash: (file SHA-1, page ordinal, server). A group of one hash is one
/// document; its smallest ordinal (first URL) represents it.
type PageKey = [u8; 32];
/// Servers of a document: (document, server); server 0 for all when `--foreign` is off.
type ServerKey = [u8; 12];
/// Stage 1's blocks per host: (host, normalized block hash).
type HostBlockKey = [u8; 16];
/// Pass 1: (gram, document, server).
type GramKey = [u8; 20];
/// The postings, by document: (document, gram, another document of the gram), and
/// (document, gram, [`OWN`]) once for each patch gram of the document.
type PostingKey = [u8; 16];
/// Marks "g is a patch gram of d" in the postings (sorts after every other document of g).
const OWN: u32 = u32::MAX;

fn be_u32(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[..4]);
    u32::from_be_bytes(w)
}

fn be_u64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_be_bytes(w)
}

fn page_key(hash: &Sha1Digest, page: u32, server: u64) -> PageKey {
    let mut k = [0u8; 32];
    k[..20].copy_from_slice(hash);
    k[20..24].copy_from_slice(&page.to_be_bytes());
    k[24..].copy_from_slice(&server.to_be_bytes());
    k
}

fn server_key(doc: u32, server: u64) -> ServerKey {
    let mut k = [0u8; 12];
    k[..4].copy_from_slice(&doc.to_be_bytes());
    k[4..].copy_from_slice(&server.to_be_bytes());
    k
}

fn host_block_key(host: u64, block: u64) -> HostBlockKey {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&host.to_be_bytes());
    k[8..].copy_from_slice(&block.to_be_bytes());
    k
}

fn gram_key(g: u64, doc: u32, server: u64) -> GramKey {
    let mut k = [0u8; 20];
    k[..8].copy_from_slice(&g.to_be_bytes());
    k[8..12].copy_from_slice(&doc.to_be_bytes());
    k[12..].copy_from_slice(&server.to_be_bytes());
    k
}

fn posting_key(doc: u32, g: u64, other: u32) -> PostingKey {
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&doc.to_be_bytes());
    k[4..12].copy_from_slice(&g.to_be_bytes());
    k[12..].copy_from_slice(&other.to_be_bytes());
    k
}

/// A server as a 64-bit hash of its registrable domain (never 0; 0 means "not asked").
fn server_of(url: &str) -> u64 {
    hash64(domain_of(url).as_bytes()).max(1)
}

/// Sorted stream of a finished [`Counter`], peekable, errors as `anyhow`.
struct Sorted<K: Key> {
    inner: std::iter::Peekable<Counts<K>>,
    what: &'static str,
}

impl<K: Key> Sorted<K> {
    fn new(c: Counter<K>, what: &'static str) -> Result<Self> {
        Ok(Sorted { inner: c.finish().with_context(|| format!("sorting {what}"))?.peekable(), what })
    }

    /// The next key if `pred` holds for it (consumed), else `None` (left in place).
    fn next_if(&mut self, pred: impl Fn(&K) -> bool) -> Result<Option<K>> {
        match self.inner.peek() {
            None => Ok(None),
            Some(Err(_)) => match self.inner.next() {
                Some(Err(e)) => Err(anyhow::Error::new(e).context(format!("reading sorted {}", self.what))),
                _ => Ok(None),
            },
            Some(Ok((k, _))) if pred(k) => Ok(self.inner.next().and_then(|r| r.ok()).map(|(k, _)| k)),
            Some(Ok(_)) => Ok(None),
        }
    }

    fn next_key(&mut self) -> Result<Option<K>> {
        self.next_if(|_| true)
    }
}

/// Memory shares of the sorts that are live at the same time (each stays within its share,
/// sorted runs and merge buffers included; see `analyze`).
fn share(memory: u64, parts: u64) -> u64 {
    memory / parts
}

/// Run the analysis over a store; returns the quilted pages (highest patchfrac first).
///
/// Bounded memory: every structure that grows with the corpus (pages by file hash, k-grams,
/// postings) goes through [`Counter`]s that spill sorted runs to `--tmp-dir` past their share
/// of `--memory`; the joins of Najork's Figure 5 are done as sorts and merges of streams:
///
/// 1. **Pages** (one pass over the store's texts, URL order, page ordinal i): (file hash, i,
///    server) sorted by hash gives the exact-replica groups, each one document named by its
///    first page; (host, block) counts give the template blocks. Sorted again: a stream of
///    each document's servers by document, and (document, replica page) pairs.
/// 2. **Pass 1, docs_k(g)** (Najork §3; Figure 5's `grams` ⋈ `docs`): each document's
///    distinct k-grams as (gram, document, server), sorted by gram; the number of documents
///    in a gram's group is `|docs_k(g)|`. For a patch gram (1 < docs ≤ m) every document d
///    of the group gets the records (d, g, o) for the other documents o that may be its
///    sources (`--foreign`: on other servers) and (d, g, OWN), via
///    [`quilts::patch_group`]. A group is at most m documents.
/// 3. **The postings, by document**: those records sorted by d; streaming the documents in
///    order (texts re-read from the store), each document gets only its own records:
///    `pgrams_{k,m}(d)` (the OWN records), patchfrac, and the greedy cover of §2
///    ([`quilts::judge_patches`]). Only that one document's postings are in memory.
/// 4. **URLs** of the sources and replicas of the quilted pages: one more pass over the
///    store's page list.
///
/// Live at once: stage 1 two sorts (½ each); then pages ½, servers ¼, replicas ¼; pass 1
/// servers ¼, replicas ¼, k-grams ½; the group step k-grams ½, replicas ¼, postings ¼; stage
/// 3 postings ¼, replicas ¼. Beyond `--memory`: sled's page cache, one document's texts,
/// grams and postings (≤ m − 1 others per patch gram), the per-host page counts and the set
/// of template blocks (one entry per host and repeated block), and the output rows.
pub fn analyze(cfg: &QuiltsConfig) -> Result<(Vec<QuiltOut>, QuiltTotals)> {
    if cfg.k == 0 || cfg.m < 2 || !(0.0..=1.0).contains(&cfg.theta) {
        bail!("need k ≥ 1, m ≥ 2 and 0 ≤ θ ≤ 1");
    }
    let store = crate::analysis::open_store_for_reading(&cfg.store)?;
    let norm = store_normalization(&store)?;
    let mut run = QuiltRun {
        cfg,
        params: QuiltParams { k: cfg.k, m: cfg.m, c: cfg.c, theta: cfg.theta },
        store,
        tmp: cfg.tmp_dir.clone().unwrap_or_else(std::env::temp_dir),
        totals: QuiltTotals::default(),
    };
    let (by_hash, filter) = run.read_pages(norm)?;
    let (servers, replicas) = run.collapse_replicas(by_hash)?;
    // Pass 1 writes (document, |grams_k(d)|) in document order; stage 3 reads it back.
    let dir = TempDir::create(&run.tmp).context("creating a temporary directory")?;
    let doc_list = dir.path().join("documents.bin");
    let grams = run.count_grams(servers, &filter, &doc_list)?;
    let postings = run.patch_postings(grams)?;
    let pending = run.judge_documents(postings, &filter, &doc_list)?;
    drop(dir);
    let out = resolve_urls(&run.store, pending, replicas)?;
    run.totals.quilted_documents = out.len() as u64;
    Ok((out, run.totals))
}

/// One run of [`analyze`], shared by its stages: the settings, the store, where sorted runs
/// spill, and the totals so far.
struct QuiltRun<'a> {
    cfg: &'a QuiltsConfig,
    params: QuiltParams,
    store: Store,
    tmp: PathBuf,
    totals: QuiltTotals,
}

impl QuiltRun<'_> {
    /// A sorter given `1 / parts` of `--memory` (which sorts are live together: [`analyze`]).
    fn sorter<K: Key>(&self, parts: u64) -> Counter<K> {
        Counter::new(share(self.cfg.memory, parts), &self.tmp)
    }

    /// Stage 1, one pass over the pages: (file hash, page, server) for the exact-replica
    /// groups and, unless templates are kept, each host's distinct blocks, whose counts make
    /// the template blocks. Returns the pages by file hash and the filter of the blocks that
    /// enter the k-grams.
    fn read_pages(&mut self, norm: Normalization) -> Result<(Counter<PageKey>, BlockFilter)> {
        let cfg = self.cfg;
        let mut by_hash: Counter<PageKey> = self.sorter(2);
        let mut host_pages: HashMap<u64, u64> = HashMap::new();
        let mut host_blocks: Counter<HostBlockKey> = self.sorter(2);
        let texts = TextSource::new(&self.store)?;
        for r in texts.texts() {
            let (url, hash, blocks) = r?;
            let page = u32::try_from(self.totals.pages)
                .ok()
                .filter(|&i| i < OWN)
                .context("too many pages for 32-bit page numbers")?;
            self.totals.pages += 1;
            let server = if cfg.foreign { server_of(&url) } else { 0 };
            by_hash.add(page_key(&hash, page, server)).context("sorting pages by file hash")?;
            if !cfg.keep_templates {
                let host = hash64(host_of(&url).as_bytes());
                *host_pages.entry(host).or_default() += 1;
                let mut seen = HashSet::new();
                for b in &blocks {
                    let h = hash64(norm.apply(b).as_bytes());
                    if seen.insert(h) {
                        host_blocks.add(host_block_key(host, h)).context("counting blocks per host")?;
                    }
                }
            }
        }
        if let Some(note) = texts.summary() {
            eprintln!("{note}");
        }
        let (templates, stops) = if cfg.keep_templates {
            (HashSet::new(), None)
        } else {
            let templates = self.template_blocks(host_blocks, host_pages)?;
            (templates, Some(load_stops(norm, &cfg.stop_chunks, cfg.no_default_stop_chunks)?))
        };
        Ok((by_hash, BlockFilter { norm, stops, templates }))
    }

    /// The template blocks, as (host, block hash): blocks on at least `--template-fraction`
    /// of their host's pages and on at least `--template-min-pages` of them.
    fn template_blocks(
        &mut self,
        host_blocks: Counter<HostBlockKey>,
        host_pages: HashMap<u64, u64>,
    ) -> Result<HashSet<(u64, u64)>> {
        let counts = host_blocks.finish().context("counting blocks per host")?;
        self.totals.other_runs_spilled += counts.stats().runs_written;
        let mut templates = HashSet::new();
        for r in counts {
            let (key, n) = r.context("counting blocks per host")?;
            let host = be_u64(&key[..8]);
            let pages = host_pages.get(&host).copied().unwrap_or(0);
            if n >= self.cfg.template_min_pages && n as f64 >= self.cfg.template_fraction * pages as f64 {
                templates.insert((host, be_u64(&key[8..])));
            }
        }
        Ok(templates)
    }

    /// Exact replicas collapsed: the pages sorted by file hash make one document per hash,
    /// named by its first page. Returns each document's servers (document, server) and its
    /// replica pages (document << 32 | page).
    fn collapse_replicas(&mut self, by_hash: Counter<PageKey>) -> Result<(Counter<ServerKey>, Counter<u64>)> {
        let mut servers: Counter<ServerKey> = self.sorter(4);
        let mut replicas: Counter<u64> = self.sorter(4);
        let pages = by_hash.finish().context("sorting pages by file hash")?;
        self.totals.other_runs_spilled += pages.stats().runs_written;
        let mut group: Option<(Sha1Digest, u32)> = None;
        for r in pages {
            let (key, _) = r.context("sorting pages by file hash")?;
            let (hash, page, server) = (&key[..20], be_u32(&key[20..24]), be_u64(&key[24..]));
            let doc = match group {
                Some((h, d)) if h[..] == *hash => d,
                _ => {
                    let mut h = [0u8; 20];
                    h.copy_from_slice(hash);
                    group = Some((h, page));
                    self.totals.documents += 1;
                    page
                }
            };
            servers.add(server_key(doc, server)).context("sorting servers")?;
            if page != doc {
                replicas.add((u64::from(doc) << 32) | u64::from(page)).context("sorting replicas")?;
            }
        }
        Ok((servers, replicas))
    }

    /// Pass 1: each document's distinct k-grams as (gram, document, server), to be sorted by
    /// gram, and the document list (document, |grams_k(d)|) written to `doc_list`.
    fn count_grams(
        &mut self,
        servers: Counter<ServerKey>,
        filter: &BlockFilter,
        doc_list: &Path,
    ) -> Result<Counter<GramKey>> {
        let k = self.params.k;
        let mut list = BufWriter::new(File::create(doc_list).context("writing the document list")?);
        let mut grams: Counter<GramKey> = self.sorter(2);
        let mut servers = Sorted::new(servers, "servers")?;
        let mut doc_servers: Vec<u64> = Vec::new();
        let texts = TextSource::new(&self.store)?;
        for (i, r) in texts.texts().enumerate() {
            let (url, _, blocks) = r?;
            let i = i as u32;
            doc_servers.clear();
            while let Some(key) = servers.next_if(|key| be_u32(key) == i)? {
                doc_servers.push(be_u64(&key[4..]));
            }
            if doc_servers.is_empty() {
                continue; // an exact replica of an earlier page
            }
            let (kept, dropped) = filter.keep(&url, &blocks);
            self.totals.template_blocks_dropped += dropped;
            let set = quilts::gram_set(&quilts::word_hashes(&kept), k);
            self.totals.gram_occurrences += set.len() as u64;
            for &g in &set {
                for &s in &doc_servers {
                    grams.add(gram_key(g, i, s)).context("counting k-grams")?;
                }
            }
            let n = u32::try_from(set.len()).context("a document with more than 2^32 k-grams")?;
            list.write_all(&i.to_be_bytes())?;
            list.write_all(&n.to_be_bytes())?;
        }
        if let Some(key) = servers.next_key()? {
            bail!("the store changed during the run (document {} not found again)", be_u32(&key));
        }
        list.flush().context("writing the document list")?;
        Ok(grams)
    }

    /// docs_k(g) from the k-grams sorted by gram; for every patch gram, the postings of its
    /// documents ((d, g, other) and (d, g, OWN), [`quilts::patch_group`]), to be sorted by
    /// document.
    fn patch_postings(&mut self, grams: Counter<GramKey>) -> Result<Counter<PostingKey>> {
        let (m, foreign) = (self.params.m, self.cfg.foreign);
        let mut postings: Counter<PostingKey> = self.sorter(4);
        let counts = grams.finish().context("counting k-grams")?;
        let cs = counts.stats();
        self.totals.runs_spilled = cs.runs_written;
        self.totals.peak_counter_bytes = cs.peak_table_bytes;
        let patch_grams = &mut self.totals.patch_grams;
        // The current gram's documents (at most m + 1 kept: more is not a patch gram).
        let mut cur: Option<u64> = None;
        let mut members: Vec<(u32, Vec<u64>)> = Vec::new();
        let mut emitted: Vec<PostingKey> = Vec::new();
        let mut flush_group = |g: Option<u64>, members: &mut Vec<(u32, Vec<u64>)>| -> Result<()> {
            if let Some(g) = g {
                emitted.clear();
                let patch = quilts::patch_group(members, m, foreign, |d, others| {
                    emitted.extend(others.iter().map(|&o| posting_key(d, g, o)));
                    emitted.push(posting_key(d, g, OWN));
                });
                if patch.is_some() {
                    *patch_grams += 1;
                    for &key in &emitted {
                        postings.add(key).context("sorting postings")?;
                    }
                }
            }
            members.clear();
            Ok(())
        };
        for r in counts {
            let (key, _) = r.context("counting k-grams")?;
            let (g, doc, server) = (be_u64(&key[..8]), be_u32(&key[8..12]), be_u64(&key[12..]));
            if cur != Some(g) {
                flush_group(cur, &mut members)?;
                cur = Some(g);
            }
            let full = members.len() as u64 > m; // not a patch gram: stop collecting
            match members.last_mut() {
                Some((d, ss)) if *d == doc => ss.push(server),
                _ if full => {}
                _ => members.push((doc, vec![server])),
            }
        }
        flush_group(cur, &mut members)?;
        self.totals.postings_records = postings.stats().occurrences;
        Ok(postings)
    }

    /// Stage 3, by document: each document's own postings give its patch grams, patchfrac
    /// and the greedy cover; returns the quilted documents with their sources in cover order.
    fn judge_documents(
        &mut self,
        postings: Counter<PostingKey>,
        filter: &BlockFilter,
        doc_list: &Path,
    ) -> Result<Vec<Pending>> {
        let p = self.params;
        let counts = postings.finish().context("sorting postings")?;
        let ps = counts.stats();
        self.totals.postings_runs_spilled = ps.runs_written;
        self.totals.postings_peak_bytes = ps.peak_table_bytes;
        let mut postings = Sorted { inner: counts.peekable(), what: "postings" };
        let mut docs = BufReader::new(File::open(doc_list).context("reading the document list")?);
        let mut next_doc = read_doc(&mut docs)?;
        let mut dp = quilts::DocPatches::new();
        let mut pending = Vec::new();
        let texts = TextSource::new(&self.store)?;
        for (i, r) in texts.texts().enumerate() {
            let (url, _, blocks) = r?;
            let i = i as u32;
            let Some((d, n_grams)) = next_doc.filter(|&(d, _)| d == i) else { continue };
            next_doc = read_doc(&mut docs)?;
            dp.clear();
            while let Some(key) = postings.next_if(|key| be_u32(key) == d)? {
                let (g, o) = (be_u64(&key[4..12]), be_u32(&key[12..]));
                if dp.grams().last() != Some(&g) {
                    dp.push_gram(g);
                }
                if o != OWN {
                    dp.push_other(o);
                }
            }
            self.totals.largest_document_bytes = self.totals.largest_document_bytes.max(dp.bytes() as u64);
            let v = quilts::judge_patches(d, n_grams as usize, &dp, &p);
            if v.grams == 0 || v.patchfrac < p.theta {
                continue;
            }
            self.totals.patchy_documents += 1;
            if !v.quilted {
                continue;
            }
            let (kept, _) = filter.keep(&url, &blocks);
            let sources = sources_with_samples(&kept, &v, p.k, self.cfg.samples);
            pending.push(Pending { doc: d, url, replicas: Vec::new(), verdict: v, sources });
        }
        if next_doc.is_some() || postings.next_key()?.is_some() {
            bail!("the store changed during the run (documents not found again)");
        }
        Ok(pending)
    }
}

/// A quilted document's sources in cover order as (document, patch grams, sample); the first
/// `samples` sources get a sample patch: the longest run of the grams they cover, as words
/// re-read from the document's kept blocks (no per-word strings held).
fn sources_with_samples(
    kept: &[&str],
    verdict: &quilts::QuiltVerdict,
    k: usize,
    samples: usize,
) -> Vec<(u32, usize, Option<String>)> {
    let all_words = || kept.iter().flat_map(|b| words(b));
    let wh: Vec<u64> = all_words().map(|x| hash64(x.as_bytes())).collect();
    let order = quilts::grams_in_order(&wh, k);
    verdict
        .sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let sample = (i < samples).then(|| {
                let mut covered = s.grams.clone();
                covered.sort_unstable();
                let spans = quilts::patch_spans(&order, k, &|g| covered.binary_search(&g).is_ok());
                spans
                    .iter()
                    .max_by_key(|(start, end)| end - start)
                    .map(|&(start, end)| {
                        let span: Vec<_> = all_words().skip(start).take(end.min(wh.len()) - start).collect();
                        shorten(&span.join(" "), 200)
                    })
                    .unwrap_or_default()
            });
            (s.doc, s.grams.len(), sample)
        })
        .collect()
}

/// A quilted document before its sources' and replicas' URLs are known.
struct Pending {
    doc: u32,
    url: String,
    /// Replica page ordinals.
    replicas: Vec<u32>,
    verdict: quilts::QuiltVerdict,
    /// (document, patch grams, sample) in cover order.
    sources: Vec<(u32, usize, Option<String>)>,
}

/// The next (document, |grams_k(d)|) of the document list, `None` at its end.
fn read_doc(r: &mut impl Read) -> Result<Option<(u32, u32)>> {
    let mut b = [0u8; 8];
    match r.read_exact(&mut b) {
        Ok(()) => Ok(Some((be_u32(&b[..4]), be_u32(&b[4..])))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(anyhow::Error::new(e).context("reading the document list")),
    }
}

/// Name the sources and replicas of the quilted documents: their page ordinals, resolved in
/// one pass over the store's pages (URL order). Rows come back highest patchfrac first.
fn resolve_urls(store: &Store, mut pending: Vec<Pending>, replicas: Counter<u64>) -> Result<Vec<QuiltOut>> {
    let row_of: HashMap<u32, usize> = pending.iter().enumerate().map(|(i, q)| (q.doc, i)).collect();
    for r in replicas.finish().context("sorting replicas")? {
        let (k, _) = r.context("sorting replicas")?;
        if let Some(&i) = row_of.get(&((k >> 32) as u32)) {
            pending[i].replicas.push(k as u32);
        }
    }
    let mut wanted: Vec<u32> = pending
        .iter()
        .flat_map(|q| q.replicas.iter().copied().chain(q.sources.iter().map(|s| s.0)))
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut urls: HashMap<u32, String> = HashMap::with_capacity(wanted.len());
    if !wanted.is_empty() {
        let mut next = wanted.iter().copied().peekable();
        // Page ordinals count the store's pages in URL order, as `TextSource::texts` does.
        for (i, r) in store.pages().enumerate() {
            if next.peek() != Some(&(i as u32)) {
                continue;
            }
            next.next();
            urls.insert(i as u32, r?.url);
            if next.peek().is_none() {
                break;
            }
        }
    }
    let url = |i: u32| urls.get(&i).cloned().context("the store changed during the run (a page is gone)");
    let mut out = Vec::with_capacity(pending.len());
    for q in pending {
        let sources = q
            .sources
            .into_iter()
            .map(|(d, n, sample)| Ok(SourceOut { url: url(d)?, patch_grams: n, sample }))
            .collect::<Result<Vec<_>>>()?;
        out.push(QuiltOut {
            url: q.url,
            replicas: q.replicas.into_iter().map(url).collect::<Result<Vec<_>>>()?,
            patchfrac: q.verdict.patchfrac,
            grams: q.verdict.grams,
            patch_grams: q.verdict.patch_grams,
            sources,
        });
    }
    out.sort_by(|x, y| y.patchfrac.total_cmp(&x.patchfrac).then_with(|| x.url.cmp(&y.url)));
    Ok(out)
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
pub fn run(cfg: QuiltsConfig) -> Result<()> {
    let (rows, totals) = analyze(&cfg)?;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    write_report(&rows, cfg.format, &mut w)?;
    w.flush()?;
    eprintln!(
        "{} pages, {} documents after collapsing exact replicas; {} template/stop blocks left out; \
         {} k-gram occurrences ({} runs spilled, counter peak {} bytes); {} patch grams; \
         postings: {} records ({} runs spilled, peak {} bytes; largest document {} bytes); \
         other sorts: {} runs spilled; {} documents with patchfrac ≥ {}; {} quilted{}",
        totals.pages,
        totals.documents,
        totals.template_blocks_dropped,
        totals.gram_occurrences,
        totals.runs_spilled,
        totals.peak_counter_bytes,
        totals.patch_grams,
        totals.postings_records,
        totals.postings_runs_spilled,
        totals.postings_peak_bytes,
        totals.largest_document_bytes,
        totals.other_runs_spilled,
        totals.patchy_documents,
        cfg.theta,
        totals.quilted_documents,
        if cfg.foreign { " (foreign-sourced)" } else { "" }
    );
    Ok(())
}
