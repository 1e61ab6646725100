//! `ditto discover`: count every object of a corpus exactly, keep those seen more than a
//! threshold that are not stop chunks, write them as a blind label set (§3.2 step 3b).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use detector::fingerprint::Sha1Digest;
use detector::{StopList, TrapRules};
use labelsets::{Kind, LabelSetBuilder};
use store::Store;

use super::corpus::{for_each_page, Corpus, InputsConfig, PassStats};
use crate::analysis::counting::{Counter, CounterStats, Histogram, TempDir};
use crate::labelset::{load_stops, store_normalization};

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
