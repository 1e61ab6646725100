//! Blind discovery and stop chunks (Ardi & Heidemann 2014, §3.2 step 3b and §3.4.2):
//! `ditto discover`, `ditto stopchunks suggest` and `ditto export chunks`.
//!
//! - **Discover** (§3.2): "Given a threshold, all objects o in the corpus C whose number of
//!   duplicates exceeds the threshold and are not 'stop chunks' are automatically labeled":
//!   `L := ∀o ∈ C: duplicates(o) > threshold, o ∉ {stop chunks}`. `duplicates(o)` is the
//!   number of occurrences of `o` over the whole corpus (the paper's example adds them:
//!   1000 + 100 = 1100), and the comparison is strict. Discovery "is not distributive": the
//!   count is global, computed exactly by [`crate::analysis::counting::Counter`] within `--memory`.
//!   Objects are chunks (`L_c`, every occurrence of a chunk hash in every page's chunk hash
//!   vector, §3.1 step 2) or, with `--files`, whole files (`L_f`, one file hash per page).
//!   The result is an ordinary `.dls` label set whose sources are sample URLs, so reports
//!   built on it stay explainable. The sample is the page with the smallest number: a store
//!   numbers its pages in URL order (its keys are `URL \0 file hash`), so from a store the
//!   sample is the byte-wise smallest URL holding the object — a rule the cluster path
//!   (`examples/spark/discover.py`, `min(url)`) computes too, so its hash list imported with
//!   `ditto labelset import` gives the same label set. From inputs it is the first page in
//!   reading order.
//! - **Import** (`ditto labelset import`): a hash list (`HASH<TAB>COUNT<TAB>URL`, see
//!   [`parse_hash_list`]) written as that same label set.
//! - **Stop chunks** (§3.4.2): "we manually examine the 500 most frequently occurring chunks
//!   … and identify 226 as benign". `stopchunks suggest` lists the most frequent chunks with
//!   counts, a sample URL and the text, in the stop-list text format, for a person to review.
//! - **Export** writes every chunk occurrence (hash, URL, host, neighborhood) for the cluster
//!   path (a Spark job computing the same counts).
//!
//! Pages come from a store (their stored cleaned text blocks, re-fingerprinted with the
//! store's normalization, exactly as the scan hashed them) or straight from inputs (WARC
//! files, directories, files) through the scan's own filter and clean stages. Pages are
//! counted once per (URL, body digest), as a store keeps them.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use detector::fingerprint::{fingerprint_with_file_hash, hex, parse_hex, sha1, Sha1Digest};
use detector::{CleanOptions, Normalization, StopList, TrapRules};
use labelsets::{Kind, LabelSetBuilder, StopChunks};
use store::Store;

use crate::analysis::counting::{Counter, CounterStats, Histogram, TempDir};
use crate::labelset::{load_stops, store_normalization};
use crate::pipeline::metrics::{Skips, StageMetrics};
use crate::pipeline::source_stage::{self, SourceCounters, SourceOptions};
use crate::pipeline::{pool, stages};

/// `ditto discover`.
#[derive(Args, Debug, Clone)]
pub struct DiscoverArgs {
    /// Count the pages of this store (a finished scan or crawl). Or give INPUTS instead.
    #[arg(long, conflicts_with = "inputs")]
    pub store: Option<PathBuf>,
    /// Label objects seen MORE than this many times (§3.2: duplicates(o) > threshold; the
    /// paper used 10^5 for chunks and 10^3 for files on Common Crawl). Not needed with
    /// --histogram.
    #[arg(long, required_unless_present = "histogram")]
    pub min_count: Option<u64>,
    /// The blind label set to write (.dls).
    #[arg(short = 'o', long = "output", required_unless_present = "histogram")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub counting: CountingArgs,
    /// Extra stop-chunk lists (text, one chunk per line, or .dls); stop chunks never enter
    /// the blind label set (§3.4.2). May repeat.
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Do not use the built-in list of benign idioms.
    #[arg(long)]
    pub no_default_stop_chunks: bool,
    /// Count whole-file hashes (L_f) instead of chunks (L_c).
    #[arg(long)]
    pub files: bool,
    /// Only print the count distribution (log-binned histogram and knee candidates).
    #[arg(long)]
    pub histogram: bool,
    /// Name recorded in the label set.
    #[arg(long, default_value = "blind")]
    pub name: String,
    /// Normalization for INPUTS (a store uses the one it was scanned with).
    #[arg(long, default_value = "nfkc,lower,collapse-ws,trim")]
    pub normalization: String,
    /// URL prefix for directory inputs (as `ditto scan --url-prefix`).
    #[arg(long)]
    pub url_prefix: Option<String>,
    /// Workers cleaning and hashing INPUTS. Default: number of cores.
    #[arg(long)]
    pub threads: Option<usize>,
    /// As `ditto scan --max-path-repeats`.
    #[arg(long, default_value_t = 3)]
    pub max_path_repeats: usize,
    /// As `ditto scan --max-depth`.
    #[arg(long, default_value_t = 96)]
    pub max_depth: usize,
    /// As `ditto scan --max-body-bytes`.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_body_bytes: u64,
    /// WARC files, directories of pages or files (instead of --store).
    pub inputs: Vec<PathBuf>,
}

/// The exact counter's memory options (`crate::analysis::counting`), shared by the commands that count
/// chunk occurrences.
#[derive(Args, Debug, Clone)]
pub struct CountingArgs {
    /// Memory for counting (e.g. 512MB, 2GiB; K/M/G are powers of 1024). Past it, sorted
    /// runs spill to --tmp-dir and are merged; the result is the same, exactly.
    #[arg(long, default_value = "512MB", value_parser = crate::cli::flags::parse_bytes)]
    pub memory: u64,
    /// Where spilled runs go (default: the system temporary directory). Removed afterwards.
    #[arg(long)]
    pub tmp_dir: Option<PathBuf>,
}

impl CountingArgs {
    /// `--tmp-dir`, or the system temporary directory.
    pub fn tmp_dir(&self) -> PathBuf {
        self.tmp_dir.clone().unwrap_or_else(std::env::temp_dir)
    }
}

/// `ditto stopchunks …`.
#[derive(Subcommand, Debug, Clone)]
pub enum StopchunksCommand {
    /// List a store's most frequent chunks (count, a sample URL, the text) as a stop-chunk
    /// list for a person to review: delete the lines that are NOT benign, then pass the file
    /// to `--stop-chunks`.
    Suggest(SuggestArgs),
    /// Write the store's reviewed stop chunks (added on the review page from `false-positive`
    /// evidence) in the stop-list text format, for `--stop-chunks` elsewhere.
    Export(StopchunksExportArgs),
}

/// `ditto stopchunks export`.
#[derive(Args, Debug, Clone)]
pub struct StopchunksExportArgs {
    /// The store whose reviewed stop chunks to write.
    #[arg(long)]
    pub store: PathBuf,
}

/// `ditto stopchunks suggest`.
#[derive(Args, Debug, Clone)]
pub struct SuggestArgs {
    /// The store to count (a finished scan or crawl).
    #[arg(long)]
    pub store: PathBuf,
    /// How many chunks to list (the paper reviewed the top 500, §6.1).
    #[arg(long, default_value_t = 500)]
    pub top: usize,
    /// Write here instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub counting: CountingArgs,
    /// Stop-chunk lists already reviewed; their chunks are not suggested again.
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Also suggest chunks of the built-in list (left out by default).
    #[arg(long)]
    pub no_default_stop_chunks: bool,
}

/// `ditto export …`.
#[derive(Subcommand, Debug, Clone)]
pub enum ExportCommand {
    /// Every chunk occurrence of a store: chunk SHA-1, URL, host, neighborhood (the page's
    /// deepest URL prefix) and whether it is a stop chunk, for counting elsewhere.
    Chunks(ExportChunksArgs),
    /// Every page of a store: file SHA-1 (of the body as received, the paper's L_f objects),
    /// URL, host, neighborhood and whether the hash is on the stop list, as CSV — for counting
    /// file duplicates elsewhere (`examples/spark/discover.py --files-from`).
    Files(ExportChunksArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ExportFormat {
    Csv,
    Parquet,
}

/// `ditto export chunks`.
#[derive(Args, Debug, Clone)]
pub struct ExportChunksArgs {
    /// The store to export (a finished scan or crawl).
    #[arg(long)]
    pub store: PathBuf,
    /// CSV, or Parquet (needs a build with `--features parquet`).
    #[arg(long, value_enum, default_value = "csv")]
    pub format: ExportFormat,
    /// The file to write; for Parquet also a directory (existing, or ending in `/`), which
    /// gets `part-00000.parquet`.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Stop-chunk lists for the `stop` column (besides the built-in list).
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Do not count the built-in list of benign idioms as stop chunks.
    #[arg(long)]
    pub no_default_stop_chunks: bool,
}

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
    mut f: impl FnMut(PageHashes) -> Result<()>,
) -> Result<PassStats> {
    match corpus {
        Corpus::Store(path) => {
            let store = Store::open(path).with_context(|| format!("opening store {}", path.display()))?;
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
                    f(PageHashes { url: rec.url, seq: next_seq()?, file_hash, chunks: Vec::new() })?;
                }
            } else {
                for item in store.texts() {
                    let (url, file_hash, blocks) = item?;
                    let fp = fingerprint_with_file_hash(file_hash, &blocks, &norm);
                    st.pages += 1;
                    let chunks = fp.chunks.iter().map(|c| c.hash).collect();
                    f(PageHashes { url, seq: next_seq()?, file_hash, chunks })?;
                }
            }
            Ok(st)
        }
        Corpus::Inputs(cfg) => pages_from_inputs(cfg, files, f),
    }
}

fn pages_from_inputs(
    cfg: &InputsConfig,
    files: bool,
    mut f: impl FnMut(PageHashes) -> Result<()>,
) -> Result<PassStats> {
    let plan = source_stage::plan(&cfg.inputs)?;
    let opts = SourceOptions { url_prefix: cfg.url_prefix.clone(), max_body_bytes: cfg.max_body_bytes };
    let threads = cfg.threads.max(1);
    let cap = 16 * threads;
    let skips = Arc::new(Skips::default());
    let counters = Arc::new(SourceCounters::default());
    let (src_tx, src_rx) = crossbeam_channel::bounded::<stages::Input>(cap);
    let (seq_tx, seq_rx) = crossbeam_channel::bounded::<(u32, stages::Input)>(cap);
    let (out_tx, out_rx) = crossbeam_channel::bounded::<PageHashes>(cap);
    let source = {
        let (skips, counters) = (skips.clone(), counters.clone());
        std::thread::Builder::new()
            .name("source".into())
            .spawn(move || source_stage::run(plan, opts, src_tx, &skips, &counters))
            .context("spawning the source thread")?
    };
    // Pages are numbered in reading order, so "the first URL a chunk was seen at" does not
    // depend on thread timing.
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
    let filter_settings = stages::FilterSettings { traps: cfg.traps, store: None };
    let norm = cfg.normalization;
    let s = skips.clone();
    let workers = pool::spawn_pool(Arc::new(StageMetrics::new("discover")), threads, seq_rx, out_tx, {
        move |(seq, input): (u32, stages::Input)| {
            let p = stages::filter(input, &filter_settings, &s)?;
            if files {
                let file_hash = p.file_hash();
                return Some(PageHashes { url: p.page.url, seq, file_hash, chunks: Vec::new() });
            }
            let c = stages::clean(p, &CleanOptions { extract_links: false });
            let file_hash = c.file_hash();
            let fp = fingerprint_with_file_hash(file_hash, &c.doc.blocks, &norm);
            Some(PageHashes {
                url: c.page.url,
                seq,
                file_hash,
                chunks: fp.chunks.iter().map(|x| x.hash).collect(),
            })
        }
    });
    let mut st = PassStats::default();
    // One key per (URL, body), as the store keys pages.
    let mut seen: HashSet<Sha1Digest> = HashSet::new();
    let mut result = Ok(());
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
        if let Err(e) = f(page) {
            result = Err(e);
            break;
        }
    }
    drop(out_rx);
    for w in workers {
        let _ = w.join();
    }
    let numbered = numbering.join().map_err(|_| anyhow!("the numbering thread panicked"))?;
    let read = source.join().map_err(|_| anyhow!("the source thread panicked"))?;
    result?;
    numbered?;
    read?;
    st.skipped = skips.counts();
    st.errors = skips.errors();
    Ok(st)
}

/// Sample URLs by page number, kept in a temporary file (bounded memory).
struct UrlLog {
    dir: TempDir,
    w: BufWriter<File>,
}

impl UrlLog {
    fn new(tmp: &Path) -> io::Result<UrlLog> {
        let dir = TempDir::create(tmp)?;
        let w = BufWriter::new(File::create(dir.path().join("urls.bin"))?);
        Ok(UrlLog { dir, w })
    }

    fn push(&mut self, seq: u32, url: &str) -> io::Result<()> {
        let len = u32::try_from(url.len()).map_err(|_| io::Error::other("URL longer than 4 GiB"))?;
        self.w.write_all(&seq.to_le_bytes())?;
        self.w.write_all(&len.to_le_bytes())?;
        self.w.write_all(url.as_bytes())
    }

    /// The URLs of the wanted page numbers.
    fn resolve(mut self, wanted: &HashSet<u32>) -> io::Result<HashMap<u32, String>> {
        self.w.flush()?;
        let mut out = HashMap::with_capacity(wanted.len());
        let mut r = BufReader::new(File::open(self.dir.path().join("urls.bin"))?);
        let mut head = [0u8; 8];
        loop {
            match r.read_exact(&mut head) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(e),
            }
            let seq = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
            let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
            let mut url = vec![0u8; len];
            r.read_exact(&mut url)?;
            if wanted.contains(&seq) {
                out.insert(seq, String::from_utf8_lossy(&url).into_owned());
            }
        }
        Ok(out)
    }
}

/// What `discover` found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Discovery {
    pub pass: PassStats,
    pub counter: CounterStatsOut,
    pub histogram: Histogram,
    /// Distinct objects with a count above the threshold.
    pub above_threshold: u64,
    /// Of those, stop chunks left out.
    pub stop_excluded: u64,
    /// Entries and sample URLs written to the label set.
    pub entries: u64,
    pub sources: u64,
}

/// [`CounterStats`] for JSON.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct CounterStatsOut {
    pub occurrences: u64,
    pub runs_written: u64,
    pub bytes_spilled: u64,
    pub peak_table_bytes: u64,
}

impl From<CounterStats> for CounterStatsOut {
    fn from(s: CounterStats) -> Self {
        CounterStatsOut {
            occurrences: s.occurrences,
            runs_written: s.runs_written,
            bytes_spilled: s.bytes_spilled,
            peak_table_bytes: s.peak_table_bytes,
        }
    }
}

/// Settings of one discovery.
#[derive(Debug, Clone)]
pub struct DiscoverConfig {
    pub corpus: Corpus,
    pub files: bool,
    /// `None`: histogram only.
    pub min_count: Option<u64>,
    pub output: Option<PathBuf>,
    pub name: String,
    pub memory: u64,
    pub tmp_dir: PathBuf,
    pub stop_paths: Vec<PathBuf>,
    pub no_default_stops: bool,
}

/// Count, threshold, leave out stop chunks, write the blind label set (§3.2 step 3b).
pub fn run_discovery(cfg: &DiscoverConfig) -> Result<Discovery> {
    let norm = match &cfg.corpus {
        Corpus::Store(p) => {
            let store = Store::open(p).with_context(|| format!("opening store {}", p.display()))?;
            store_normalization(&store)?
        }
        Corpus::Inputs(c) => c.normalization,
    };
    let stops = load_stops(norm, &cfg.stop_paths, cfg.no_default_stops)?;
    let mut counter: Counter<Sha1Digest> = Counter::new(cfg.memory, &cfg.tmp_dir);
    let mut urls = UrlLog::new(&cfg.tmp_dir).context("creating a temporary file")?;
    let files = cfg.files;
    let pass = for_each_page(&cfg.corpus, files, |p| {
        urls.push(p.seq, &p.url)?;
        if files {
            counter.add_sampled(p.file_hash, 1, p.seq)?;
        } else {
            for h in p.chunks {
                counter.add_sampled(h, 1, p.seq)?;
            }
        }
        Ok(())
    })?;
    let counts = counter.finish_sampled().context("merging counts")?;
    let cstats = counts.stats();
    let mut histogram = Histogram::new();
    let mut selected: Vec<(Sha1Digest, u32)> = Vec::new();
    let (mut above, mut stop_excluded) = (0u64, 0u64);
    for item in counts {
        let (key, count, sample) = item.context("reading spilled counts")?;
        histogram.add(count);
        // §3.2: duplicates(o) > threshold, o ∉ {stop chunks}.
        if cfg.min_count.is_some_and(|t| count > t) {
            above += 1;
            if stops.is_stop(&key) {
                stop_excluded += 1;
            } else {
                selected.push((key, sample));
            }
        }
    }
    let mut out = Discovery {
        pass,
        counter: cstats.into(),
        histogram,
        above_threshold: above,
        stop_excluded,
        entries: 0,
        sources: 0,
    };
    let (Some(t), Some(path)) = (cfg.min_count, &cfg.output) else { return Ok(out) };
    let wanted: HashSet<u32> = selected.iter().map(|s| s.1).collect();
    let url_of = urls.resolve(&wanted).context("reading sample URLs")?;
    let kind = if cfg.files { Kind::Files } else { Kind::Chunks };
    let what = if cfg.files { "files" } else { "chunks" };
    let source_desc = match &cfg.corpus {
        Corpus::Store(p) => format!("store {}", p.display()),
        Corpus::Inputs(c) => format!("{} input(s)", c.inputs.len()),
    };
    let desc = format!(
        "blind discovery (Ardi & Heidemann 2014, §3.2 step 3b): {what} seen more than {t} times in {source_desc}, \
         stop chunks left out; sources are sample URLs where each was seen"
    );
    let mut b = LabelSetBuilder::new(&cfg.name, kind, norm, 0, &desc);
    // One source per distinct sample URL, in byte order of the URL (as `ditto labelset
    // import` adds them, so a hash list from the cluster path gives the same file), so ids
    // depend neither on hash order nor on a URL stored twice with two bodies.
    let mut urls: Vec<&str> = url_of.values().map(String::as_str).collect();
    urls.sort_unstable();
    urls.dedup();
    let mut id_of_url: HashMap<&str, u32> = HashMap::with_capacity(urls.len());
    for url in urls {
        id_of_url.insert(url, b.add_source(url, url));
    }
    let mut unknown = None;
    for (key, sample) in &selected {
        let src = match url_of.get(sample).and_then(|u| id_of_url.get(u.as_str())) {
            Some(&s) => s,
            None => *unknown.get_or_insert_with(|| b.add_source("(no sample URL)", "")),
        };
        b.add_digest(src, *key)?;
    }
    let header = b.write(path).with_context(|| format!("writing {}", path.display()))?;
    out.entries = header.counts.entries;
    out.sources = header.counts.sources;
    Ok(out)
}

/// `ditto labelset import`.
#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// The hash list (see [`parse_hash_list`] for the format; `examples/spark/discover.py`
    /// writes it).
    pub input: PathBuf,
    /// The label set to write (.dls).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Name recorded in the label set.
    #[arg(long, default_value = "blind")]
    pub name: String,
    /// `chunks` (L_c) or `files` (L_f). Default: the list's `# kind=` line, else chunks.
    #[arg(long, value_parser = ["chunks", "files"])]
    pub kind: Option<String>,
    /// Normalization the hashes were made with (recorded in the label set; a scan uses it).
    /// Default: the list's `# normalization=` line, else nfkc,lower,collapse-ws,trim.
    #[arg(long)]
    pub normalization: Option<String>,
    /// Check that every count is MORE than this (§3.2: duplicates(o) > threshold). Default:
    /// the list's `# min_count=` line, if any.
    #[arg(long)]
    pub min_count: Option<u64>,
}

/// One line of a hash list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashListEntry {
    pub hash: Sha1Digest,
    pub count: u64,
    /// The sample URL ("" when none).
    pub url: String,
}

/// A parsed hash list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HashList {
    /// `# key=value` settings from the comment lines (`kind`, `normalization`, `min_count`).
    pub settings: std::collections::BTreeMap<String, String>,
    pub entries: Vec<HashListEntry>,
}

/// Parse a hash list, the cluster path's output (Ardi & Heidemann 2014, §3.2 step 3b: the
/// objects seen more than a threshold, with where each was seen):
///
/// ```text
/// # ditto hash list
/// # kind=chunks
/// # min_count=5
/// # normalization=nfkc,lower,collapse-ws,trim
/// 3f786850e387550fdab836ed7e6dc881de23001b<TAB>17<TAB>http://a.test/x.html
/// ```
///
/// UTF-8, one object per line: 40 hex digits of the SHA-1, a TAB, the count (decimal), a
/// TAB, the sample URL (the rest of the line; may be empty). Lines starting with `#` are
/// comments; `# key=value` comments carry settings. Blank lines are ignored; a trailing `\r`
/// is dropped. A hash listed twice, a bad hash, a bad count or a missing field is an error
/// naming the line.
pub fn parse_hash_list(text: &str) -> Result<HashList> {
    let mut out = HashList::default();
    let mut seen: HashSet<Sha1Digest> = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            if let Some((k, v)) = c.trim().split_once('=') {
                if !k.trim().is_empty() && !k.contains(' ') {
                    out.settings.insert(k.trim().to_string(), v.trim().to_string());
                }
            }
            continue;
        }
        let mut f = line.splitn(3, '\t');
        let (Some(h), Some(c)) = (f.next(), f.next()) else {
            bail!("line {n}: expected HASH<TAB>COUNT<TAB>URL, found {:?}", truncate(line, 80));
        };
        let url = f.next().unwrap_or("");
        let hash = parse_hex(h)
            .filter(|_| h.len() == 40)
            .ok_or_else(|| anyhow!("line {n}: {:?} is not a SHA-1 (40 hex digits)", truncate(h, 60)))?;
        let count: u64 = c
            .parse()
            .map_err(|_| anyhow!("line {n}: count {:?} is not a non-negative integer", truncate(c, 40)))?;
        if !seen.insert(hash) {
            bail!("line {n}: hash {} is listed twice", hex(&hash));
        }
        out.entries.push(HashListEntry { hash, count, url: url.to_string() });
    }
    Ok(out)
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Write a hash list as a label set: sources are the sample URLs, added in byte order of the
/// URL, as `ditto discover` adds them (its sample is the smallest page number, and a store
/// numbers pages in URL order), so the two files have the same entries and sources.
pub fn import_hash_list(
    list: &HashList,
    kind: Kind,
    norm: Normalization,
    name: &str,
    desc: &str,
    path: &Path,
) -> Result<labelsets::Header> {
    let mut urls: Vec<&str> = list.entries.iter().map(|e| e.url.as_str()).filter(|u| !u.is_empty()).collect();
    urls.sort_unstable();
    urls.dedup();
    let mut b = LabelSetBuilder::new(name, kind, norm, 0, desc);
    let mut source_of: HashMap<&str, u32> = HashMap::with_capacity(urls.len());
    for u in urls {
        source_of.insert(u, b.add_source(u, u));
    }
    let mut unknown = None;
    for e in &list.entries {
        let src = match source_of.get(e.url.as_str()) {
            Some(&s) => s,
            None => *unknown.get_or_insert_with(|| b.add_source("(no sample URL)", "")),
        };
        b.add_digest(src, e.hash)?;
    }
    b.write(path).with_context(|| format!("writing {}", path.display()))
}

/// `ditto labelset import`.
pub fn import(a: ImportArgs) -> Result<()> {
    let text = std::fs::read(&a.input).with_context(|| format!("reading {}", a.input.display()))?;
    let text = String::from_utf8(text).map_err(|e| anyhow!("{}: not UTF-8 ({e})", a.input.display()))?;
    let list = parse_hash_list(&text).with_context(|| format!("{}", a.input.display()))?;
    let kind: Kind = match a.kind.as_deref().or(list.settings.get("kind").map(String::as_str)) {
        Some(k) => k.parse().map_err(|e| anyhow!("kind {k:?}: {e}"))?,
        None => Kind::Chunks,
    };
    let norm_text = a
        .normalization
        .clone()
        .or_else(|| list.settings.get("normalization").cloned())
        .unwrap_or_else(|| Normalization::default().to_string());
    let norm: Normalization = norm_text.parse().map_err(|e| anyhow!("normalization {norm_text:?}: {e}"))?;
    let min = match (a.min_count, list.settings.get("min_count")) {
        (Some(t), _) => Some(t),
        (None, Some(t)) => Some(
            t.parse::<u64>()
                .map_err(|_| anyhow!("{}: min_count={t:?} is not a number", a.input.display()))?,
        ),
        (None, None) => None,
    };
    if let Some(t) = min {
        if let Some(e) = list.entries.iter().find(|e| e.count <= t) {
            bail!(
                "{}: {} has count {}, not more than the threshold {t} (§3.2: duplicates(o) > threshold)",
                a.input.display(),
                hex(&e.hash),
                e.count
            );
        }
    }
    let desc = format!(
        "blind discovery (Ardi & Heidemann 2014, §3.2 step 3b) imported from the hash list {}{}; sources are sample URLs where each was seen",
        a.input.display(),
        min.map(|t| format!(" ({kind} seen more than {t} times)")).unwrap_or_default()
    );
    let header = import_hash_list(&list, kind, norm, &a.name, &desc, &a.output)?;
    eprintln!(
        "wrote {} entries with {} sample URLs to {}",
        header.counts.entries,
        header.counts.sources,
        a.output.display()
    );
    Ok(())
}

/// `ditto discover`.
pub fn discover(a: DiscoverArgs) -> Result<()> {
    let corpus = match (&a.store, a.inputs.is_empty()) {
        (Some(s), true) => Corpus::Store(s.clone()),
        (None, false) => Corpus::Inputs(InputsConfig {
            inputs: a.inputs.clone(),
            url_prefix: a.url_prefix.clone(),
            normalization: a.normalization.parse().context("--normalization")?,
            traps: TrapRules {
                max_repeats: a.max_path_repeats,
                max_depth: a.max_depth,
                ..TrapRules::default()
            },
            threads: a
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)),
            max_body_bytes: a.max_body_bytes,
        }),
        (Some(_), false) => bail!("give --store or inputs, not both"),
        (None, true) => bail!("give --store DB or inputs (WARC files, directories)"),
    };
    let cfg = DiscoverConfig {
        corpus,
        files: a.files,
        min_count: if a.histogram { None } else { a.min_count },
        output: if a.histogram { None } else { a.output.clone() },
        name: a.name.clone(),
        memory: a.counting.memory,
        tmp_dir: a.counting.tmp_dir(),
        stop_paths: a.stop_chunks.clone(),
        no_default_stops: a.no_default_stop_chunks,
    };
    let d = run_discovery(&cfg)?;
    let what = if a.files { "files" } else { "chunks" };
    print!("{}", d.histogram.render());
    if a.histogram {
        return Ok(());
    }
    eprintln!(
        "{} pages, {} {what} occurrences, {} distinct ({} runs spilled, {} bytes)",
        d.pass.pages,
        d.counter.occurrences,
        d.histogram.distinct(),
        d.counter.runs_written,
        d.counter.bytes_spilled
    );
    for (k, v) in &d.pass.skipped {
        eprintln!("skipped {k}: {v}");
    }
    for e in d.pass.errors.iter().take(5) {
        eprintln!("error: {e}");
    }
    eprintln!(
        "{} distinct {what} seen more than {} times; {} of them stop chunks, left out; wrote {} entries with {} sample URLs to {}",
        d.above_threshold,
        a.min_count.unwrap_or(0),
        d.stop_excluded,
        d.entries,
        d.sources,
        a.output.as_deref().map(|p| p.display().to_string()).unwrap_or_default()
    );
    Ok(())
}

/// One suggested stop chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub hash: Sha1Digest,
    pub count: u64,
    pub url: String,
    /// The raw text block (as cleaned), when found.
    pub text: Option<String>,
}

/// The `top` most frequent chunks of a store that are not already stop chunks, most
/// frequent first (ties by hash), with a sample URL (the first page in URL order) and text.
/// Also returns how many known stop chunks ranked among them were skipped.
pub fn suggest(
    store_path: &Path,
    top: usize,
    memory: u64,
    tmp_dir: &Path,
    stops: &StopChunks,
) -> Result<(Vec<Suggestion>, u64)> {
    let corpus = Corpus::Store(store_path.to_path_buf());
    let mut counter: Counter<Sha1Digest> = Counter::new(memory, tmp_dir);
    for_each_page(&corpus, false, |p| {
        for h in p.chunks {
            counter.add(h)?;
        }
        Ok(())
    })?;
    // Min-heap of the best `top` (count, then smaller hash first).
    let mut heap: BinaryHeap<std::cmp::Reverse<(u64, std::cmp::Reverse<Sha1Digest>)>> = BinaryHeap::new();
    let mut known = 0u64;
    for item in counter.finish().context("merging counts")? {
        let (key, count) = item.context("reading spilled counts")?;
        if stops.is_stop(&key) {
            known += 1;
            continue;
        }
        let e = std::cmp::Reverse((count, std::cmp::Reverse(key)));
        if heap.len() < top {
            heap.push(e);
        } else if heap.peek().is_some_and(|m| e < *m) {
            heap.pop();
            heap.push(e);
        }
    }
    let mut best: Vec<(u64, Sha1Digest)> = heap.into_iter().map(|e| (e.0 .0, e.0 .1 .0)).collect();
    best.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // Second pass: the first page (URL order) holding each chunk, and its text there.
    let mut found: HashMap<Sha1Digest, (String, String)> = HashMap::with_capacity(best.len());
    let wanted: HashSet<Sha1Digest> = best.iter().map(|b| b.1).collect();
    let store = Store::open(store_path)?;
    let norm = store_normalization(&store)?;
    for item in store.texts() {
        if found.len() == wanted.len() {
            break;
        }
        let (url, file_hash, blocks) = item?;
        let fp = fingerprint_with_file_hash(file_hash, &blocks, &norm);
        for c in &fp.chunks {
            if wanted.contains(&c.hash) && !found.contains_key(&c.hash) {
                let text = blocks.get(c.block as usize).cloned().unwrap_or_default();
                found.insert(c.hash, (url.clone(), text));
            }
        }
    }
    let out = best
        .into_iter()
        .map(|(count, hash)| {
            let (url, text) = match found.remove(&hash) {
                Some((u, t)) => (u, Some(t)),
                None => (String::new(), None),
            };
            Suggestion { hash, count, url, text }
        })
        .collect();
    Ok((out, known))
}

/// A line of the stop-list text format that loads back as exactly `hash` under `norm`, or
/// `None` when the chunk cannot be written as one line.
pub fn stop_list_line(raw: &str, norm: Normalization, hash: &Sha1Digest) -> Option<String> {
    let normalized = norm.apply(raw).into_owned();
    let mut candidates = vec![raw.to_string(), raw.trim().to_string(), normalized];
    for c in candidates.clone() {
        if c.starts_with('#') {
            candidates.push(format!("\\{c}"));
        }
    }
    candidates.into_iter().find(|line| {
        !line.contains(['\n', '\r']) && !line.trim().is_empty() && {
            let s = StopChunks::from_text(line, norm);
            s.len() == 1 && s.is_stop(hash)
        }
    })
}

/// Write suggestions in the stop-list text format (`labelsets/data/default-stopchunks.txt`).
pub fn write_suggestions(
    w: &mut impl Write,
    store: &Path,
    norm: Normalization,
    list: &[Suggestion],
    known: u64,
) -> io::Result<()> {
    writeln!(w, "# ditto stop-chunk suggestions (Ardi & Heidemann 2014, §3.4.2) from {}", store.display())?;
    writeln!(
        w,
        "# The {} most frequent chunks that are not stop chunks yet ({known} known ones skipped).",
        list.len()
    )?;
    writeln!(w, "# Review: keep the lines of benign idioms (navigation, boilerplate, licence notices,")?;
    writeln!(w, "# template text), DELETE the lines of content a copier would take, then pass this file")?;
    writeln!(w, "# to `ditto scan|discover --stop-chunks FILE`. Lines starting with # are comments.")?;
    writeln!(w, "# Normalization: {norm}")?;
    for s in list {
        writeln!(w)?;
        writeln!(w, "# count {}, e.g. {}", s.count, s.url)?;
        match s.text.as_deref().and_then(|t| stop_list_line(t, norm, &s.hash)) {
            Some(line) => writeln!(w, "{line}")?,
            None => writeln!(
                w,
                "# sha1 {} cannot be written as one line here; list it in a .dls stop list instead",
                hex(&s.hash)
            )?,
        }
    }
    Ok(())
}

/// Write a store's reviewed stop chunks in the stop-list text format; returns how many.
pub fn write_reviewed_stops(w: &mut impl Write, store: &Store) -> Result<u64> {
    let norm = store_normalization(store)?;
    writeln!(w, "# ditto reviewed stop chunks (false-positive evidence marked on the review page)")?;
    writeln!(w, "# Normalization: {norm}")?;
    let mut n = 0;
    for r in store.reviewed_stop_chunks() {
        let (h, c) = r?;
        writeln!(w)?;
        writeln!(
            w,
            "# from {} by {} at {}",
            c.neighborhood.replace(['\n', '\r'], " "),
            c.reviewer.replace(['\n', '\r'], " "),
            c.time
        )?;
        match stop_list_line(&c.text, norm, &h) {
            Some(line) => writeln!(w, "{line}")?,
            None => writeln!(w, "# sha1 {} cannot be written as one line here", hex(&h))?,
        }
        n += 1;
    }
    Ok(n)
}

/// `ditto stopchunks`.
pub fn stopchunks(c: StopchunksCommand) -> Result<()> {
    let a = match c {
        StopchunksCommand::Suggest(a) => a,
        StopchunksCommand::Export(a) => {
            let store =
                Store::open(&a.store).with_context(|| format!("opening store {}", a.store.display()))?;
            let stdout = io::stdout();
            let mut w = io::BufWriter::new(stdout.lock());
            let n = write_reviewed_stops(&mut w, &store)?;
            w.flush()?;
            eprintln!("{n} reviewed stop chunks");
            return Ok(());
        }
    };
    let store = Store::open(&a.store).with_context(|| format!("opening store {}", a.store.display()))?;
    let norm = store_normalization(&store)?;
    drop(store);
    let stops = load_stops(norm, &a.stop_chunks, a.no_default_stop_chunks)?;
    let (list, known) = suggest(&a.store, a.top, a.counting.memory, &a.counting.tmp_dir(), &stops)?;
    match &a.output {
        Some(path) => write_atomically(path, |w| Ok(write_suggestions(w, &a.store, norm, &list, known)?))?,
        None => {
            let stdout = io::stdout();
            let mut w = io::BufWriter::new(stdout.lock());
            write_suggestions(&mut w, &a.store, norm, &list, known)?;
            w.flush()?;
        }
    }
    eprintln!("{} suggestions ({known} known stop chunks skipped)", list.len());
    Ok(())
}

/// Write through a temporary file beside `path`, renamed into place when complete; the
/// temporary file is removed on error.
fn write_atomically(path: &Path, f: impl FnOnce(&mut BufWriter<File>) -> Result<()>) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> Result<()> {
        let mut w = BufWriter::new(File::create(&tmp)?);
        f(&mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}

/// A CSV field (RFC 4180 quoting when needed).
fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

/// Rows written by [`export_chunks_csv`].
pub fn export_chunks_csv(store_path: &Path, stops: &StopChunks, w: &mut impl Write) -> Result<u64> {
    writeln!(w, "chunk_sha1,url,host,neighborhood,stop")?;
    let mut rows = 0u64;
    for_each_page(&Corpus::Store(store_path.to_path_buf()), false, |p| {
        let url = csv_field(&p.url).into_owned();
        let host = csv_field(detector::page::host_of(&p.url)).into_owned();
        let hood = detector::neighborhoods(&p.url).pop().unwrap_or_default();
        let hood = csv_field(&hood).into_owned();
        for h in &p.chunks {
            writeln!(w, "{},{url},{host},{hood},{}", hex(h), stops.is_stop(h))?;
            rows += 1;
        }
        Ok(())
    })?;
    Ok(rows)
}

/// The rows of [`export_chunks_csv`] as Parquet (schema in docs/report-schema.md).
#[cfg(feature = "parquet")]
pub fn export_chunks_parquet(store_path: &Path, stops: &StopChunks, f: File) -> Result<u64> {
    let mut w = crate::report::parquet::ChunkWriter::new(f)?;
    for_each_page(&Corpus::Store(store_path.to_path_buf()), false, |p| {
        let host = detector::page::host_of(&p.url);
        let hood = detector::neighborhoods(&p.url).pop().unwrap_or_default();
        for h in &p.chunks {
            w.push(&hex(h), &p.url, host, &hood, stops.is_stop(h))?;
        }
        Ok(())
    })?;
    w.finish()
}

/// One row per page of a store: file SHA-1, URL, host, neighborhood, stop (CSV); pages in
/// URL order, as `ditto discover --files` counts them. Returns the rows written.
pub fn export_files_csv(store_path: &Path, stops: &StopChunks, w: &mut impl Write) -> Result<u64> {
    writeln!(w, "file_sha1,url,host,neighborhood,stop")?;
    let mut rows = 0u64;
    let st = for_each_page(&Corpus::Store(store_path.to_path_buf()), true, |p| {
        let url = csv_field(&p.url).into_owned();
        let host = csv_field(detector::page::host_of(&p.url)).into_owned();
        let hood = detector::neighborhoods(&p.url).pop().unwrap_or_default();
        writeln!(
            w,
            "{},{url},{host},{},{}",
            hex(&p.file_hash),
            csv_field(&hood),
            stops.is_stop(&p.file_hash)
        )?;
        rows += 1;
        Ok(())
    })?;
    for e in st.errors.iter().take(5) {
        eprintln!("error: {e}");
    }
    Ok(rows)
}

/// `ditto export`.
pub fn export(c: ExportCommand) -> Result<()> {
    let (a, files) = match c {
        ExportCommand::Chunks(a) => (a, false),
        ExportCommand::Files(a) => (a, true),
    };
    if files && a.format != ExportFormat::Csv {
        bail!("ditto export files writes CSV only; use --format csv");
    }
    if a.format == ExportFormat::Parquet && !cfg!(feature = "parquet") {
        bail!("{}; use --format csv", crate::report::PARQUET_MISSING);
    }
    let store = Store::open(&a.store).with_context(|| format!("opening store {}", a.store.display()))?;
    let norm = store_normalization(&store)?;
    drop(store);
    let stops = load_stops(norm, &a.stop_chunks, a.no_default_stop_chunks)?;
    let mut rows = 0;
    if files {
        write_atomically(&a.output, |w| {
            rows = export_files_csv(&a.store, &stops, w)?;
            Ok(())
        })?;
        eprintln!("{rows} pages written to {}", a.output.display());
        return Ok(());
    }
    #[cfg(feature = "parquet")]
    if a.format == ExportFormat::Parquet {
        let path = crate::report::parquet::chunks_output_file(&a.output)?;
        crate::report::parquet::write_atomically(&path, |f| {
            rows = export_chunks_parquet(&a.store, &stops, f)?;
            Ok(())
        })?;
        eprintln!("{rows} chunk occurrences written to {}", path.display());
        return Ok(());
    }
    write_atomically(&a.output, |w| {
        rows = export_chunks_csv(&a.store, &stops, w)?;
        Ok(())
    })?;
    eprintln!("{rows} chunk occurrences written to {}", a.output.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_list_lines_load_back_to_the_same_hash() {
        let n = Normalization::default();
        let h = |t: &str| detector::fingerprint::chunk_hash(&n.apply(t));
        assert_eq!(stop_list_line("  Back to Top ", n, &h("back to top")).as_deref(), Some("  Back to Top "));
        assert_eq!(stop_list_line("#1 Home", n, &h("#1 home")).as_deref(), Some("\\#1 Home"));
        assert_eq!(stop_list_line("two\nlines", n, &h("two lines")).as_deref(), Some("two lines"));
        assert_eq!(stop_list_line("x", n, &h("y")), None);
        // Without whitespace folding a two-line chunk has no one-line form.
        let raw = Normalization::NONE;
        let h2 = detector::fingerprint::chunk_hash("a\nb");
        assert_eq!(stop_list_line("a\nb", raw, &h2), None);
    }

    #[test]
    fn hash_lists_parse_with_settings_and_line_numbered_errors() {
        let h = "3f786850e387550fdab836ed7e6dc881de23001b";
        let text = format!("# ditto hash list\n# min_count=3\n\n{h}\t4\thttp://a/x\r\n");
        let l = parse_hash_list(&text).unwrap();
        assert_eq!(l.settings.get("min_count").map(String::as_str), Some("3"));
        assert_eq!(l.entries.len(), 1);
        assert_eq!(
            (hex(&l.entries[0].hash), l.entries[0].count, l.entries[0].url.as_str()),
            (h.into(), 4, "http://a/x")
        );
        // An empty sample URL is allowed.
        assert_eq!(parse_hash_list(&format!("{h}\t9\t\n")).unwrap().entries[0].url, "");
        let err = |t: &str| format!("{:#}", parse_hash_list(t).unwrap_err());
        assert!(err(&format!("#\n{h}x\t1\tu\n")).starts_with("line 2: "));
        assert!(err(&format!("{h}\t-1\tu\n")).contains("line 1: count \"-1\""));
        assert!(err(&format!("{h} 1 u\n")).contains("line 1: expected"));
        assert!(err(&format!("{h}\t1\tu\n{h}\t2\tv\n")).contains("line 2: hash"));
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field("http://a/b"), "http://a/b");
        assert_eq!(csv_field("http://a/b,c"), "\"http://a/b,c\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
