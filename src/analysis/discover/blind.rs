//! `ditto discover`: count every object of a corpus exactly, keep those seen more than a
//! threshold that are not stop chunks, write them as a blind label set (§3.2 step 3b).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use detector::fingerprint::Sha1Digest;
use detector::passages::{PassageHash, PassageParams};
use detector::{Normalization, StopList};
use labelsets::{Kind, LabelSetBuilder, StopChunks};

use super::corpus::{for_each_page_with, Corpus, PassStats};
use crate::analysis::counting::{Counter, CounterStats, CountingConfig, Histogram, SampledCounts, TempDir};
use crate::labelset::{load_stops, store_normalization};

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
    /// With `--passages`: what was found of them.
    pub passages: Option<PassageDiscovery>,
}

/// Passages found by [`run_discovery`] (`--passages`): anchors counted once per page.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct PassageDiscovery {
    /// Distinct anchors on more pages than the threshold.
    pub above_threshold: u64,
    /// Of those, stop passages (of the stop lists' texts) left out.
    pub stop_excluded: u64,
    /// Anchors written to the label set's passage table.
    pub written: u64,
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
    /// Count whole-file hashes (L_f) instead of chunks (L_c).
    pub files: bool,
    /// Label objects seen more than this many times. `None`: histogram only.
    pub min_count: Option<u64>,
    /// The label set to write. `None`: histogram only.
    pub output: Option<PathBuf>,
    /// Name recorded in the label set.
    pub name: String,
    pub counting: CountingConfig,
    /// Stop-chunk lists besides the built-in one.
    pub stop_paths: Vec<PathBuf>,
    /// Leave out the built-in list of benign idioms.
    pub no_default_stops: bool,
    /// Also label passages seen on more pages than the threshold (not with `files`).
    pub passages: bool,
}

impl DiscoverConfig {
    /// Only the count distribution is wanted: without a threshold and a file, nothing is
    /// labeled.
    pub fn histogram_only(&self) -> bool {
        self.min_count.is_none() || self.output.is_none()
    }
}

/// Count, threshold, leave out stop chunks, write the blind label set (§3.2 step 3b).
pub fn run_discovery(cfg: &DiscoverConfig) -> Result<Discovery> {
    let norm = corpus_normalization(&cfg.corpus)?;
    let stops = load_stops(norm, &cfg.stop_paths, cfg.no_default_stops)?;
    let mut urls = UrlLog::new(&cfg.counting.tmp_dir).context("creating a temporary file")?;
    let (pass, counts, passage_counts) = count_objects(cfg, &mut urls)?;
    let counter = counts.stats().into();
    let Selection { histogram, above_threshold, stop_excluded, selected } =
        select_above_threshold(counts, cfg.min_count, &stops)?;
    let (passages, selected_passages) = match passage_counts {
        Some(c) => {
            let (d, sel) = select_passages(c, cfg.min_count, &stops)?;
            (Some(d), sel)
        }
        None => (None, Vec::new()),
    };
    let mut out = Discovery {
        pass,
        counter,
        histogram,
        above_threshold,
        stop_excluded,
        entries: 0,
        sources: 0,
        passages,
    };
    let (Some(t), Some(path)) = (cfg.min_count, &cfg.output) else { return Ok(out) };
    let wanted: HashSet<u32> =
        selected.iter().map(|s| s.1).chain(selected_passages.iter().map(|s| s.1)).collect();
    let url_of = urls.resolve(&wanted).context("reading sample URLs")?;
    let header = write_blind_label_set(cfg, norm, t, (&selected, &selected_passages), &url_of, path)?;
    out.entries = header.counts.entries;
    out.sources = header.counts.sources;
    if let Some(p) = &mut out.passages {
        p.written = selected_passages.len() as u64;
    }
    Ok(out)
}

/// Passages above the threshold that are not stop passages: the counts, and the anchors
/// with the page number of their sample URL, in hash order.
fn select_passages(
    counts: SampledCounts<PassageHash>,
    min_count: Option<u64>,
    stops: &StopChunks,
) -> Result<(PassageDiscovery, Vec<(PassageHash, u32)>)> {
    let stop: HashSet<PassageHash> = stops.stop_passages(PassageParams::default()).into_iter().collect();
    let mut d = PassageDiscovery::default();
    let mut selected = Vec::new();
    for item in counts {
        let (key, count, sample) = item.context("reading spilled passage counts")?;
        if min_count.is_some_and(|t| count > t) {
            d.above_threshold += 1;
            if stop.contains(&key) {
                d.stop_excluded += 1;
            } else {
                selected.push((key, sample));
            }
        }
    }
    Ok((d, selected))
}

/// The normalization pages are hashed with: the store's own, or the one given for inputs.
fn corpus_normalization(corpus: &Corpus) -> Result<Normalization> {
    match corpus {
        Corpus::Store(p) => {
            let store = crate::analysis::open_store_for_reading(p)?;
            store_normalization(&store)
        }
        Corpus::Inputs(c) => Ok(c.normalization),
    }
}

/// Exact counts of objects, and of passage anchors (pages holding each) when asked for.
type ObjectCounts = (PassStats, SampledCounts<Sha1Digest>, Option<SampledCounts<PassageHash>>);

/// One pass over the corpus: every object's exact count, sampled with the smallest page
/// number it was seen at; each page's URL goes to `urls`.
fn count_objects(cfg: &DiscoverConfig, urls: &mut UrlLog) -> Result<ObjectCounts> {
    let mut counter: Counter<Sha1Digest> = cfg.counting.counter();
    let wants_passages = cfg.passages && !cfg.files;
    let mut passages: Option<Counter<PassageHash>> = wants_passages.then(|| cfg.counting.counter());
    let files = cfg.files;
    let params = wants_passages.then(PassageParams::default);
    let pass = for_each_page_with(&cfg.corpus, files, params, |p| {
        urls.push(p.seq, &p.url)?;
        if files {
            counter.add_sampled(p.file_hash, 1, p.seq)?;
        } else {
            for h in p.chunks {
                counter.add_sampled(h, 1, p.seq)?;
            }
        }
        if let Some(c) = &mut passages {
            for h in p.passages {
                c.add_sampled(h, 1, p.seq)?;
            }
        }
        Ok(())
    })?;
    let counts = counter.finish_sampled().context("merging counts")?;
    let passage_counts =
        passages.map(|c| c.finish_sampled().context("merging passage counts")).transpose()?;
    Ok((pass, counts, passage_counts))
}

/// The counts' distribution, and the objects above the threshold that are not stop chunks.
struct Selection {
    histogram: Histogram,
    above_threshold: u64,
    stop_excluded: u64,
    /// (object, the page number of its sample URL), in hash order.
    selected: Vec<(Sha1Digest, u32)>,
}

fn select_above_threshold(
    counts: SampledCounts<Sha1Digest>,
    min_count: Option<u64>,
    stops: &StopChunks,
) -> Result<Selection> {
    let mut sel =
        Selection { histogram: Histogram::new(), above_threshold: 0, stop_excluded: 0, selected: Vec::new() };
    for item in counts {
        let (key, count, sample) = item.context("reading spilled counts")?;
        sel.histogram.add(count);
        // §3.2: duplicates(o) > threshold, o ∉ {stop chunks}.
        if min_count.is_some_and(|t| count > t) {
            sel.above_threshold += 1;
            if stops.is_stop(&key) {
                sel.stop_excluded += 1;
            } else {
                sel.selected.push((key, sample));
            }
        }
    }
    Ok(sel)
}

/// Objects and passage anchors selected, each with the page number of its sample URL.
type Selected<'a> = (&'a [(Sha1Digest, u32)], &'a [(PassageHash, u32)]);

/// Write the selected objects as a label set whose sources are their sample URLs.
fn write_blind_label_set(
    cfg: &DiscoverConfig,
    norm: Normalization,
    min_count: u64,
    (selected, passages): Selected<'_>,
    url_of: &HashMap<u32, String>,
    path: &Path,
) -> Result<labelsets::Header> {
    let kind = if cfg.files { Kind::Files } else { Kind::Chunks };
    let what = if cfg.files { "files" } else { "chunks" };
    let source_desc = match &cfg.corpus {
        Corpus::Store(p) => format!("store {}", p.display()),
        Corpus::Inputs(c) => format!("{} input(s)", c.inputs.len()),
    };
    let with_passages =
        if cfg.passages { ", and passages seen on more pages, stop passages left out" } else { "" };
    let desc = format!(
        "blind discovery (Ardi & Heidemann 2014, §3.2 step 3b): {what} seen more than {min_count} times in {source_desc}, \
         stop chunks left out{with_passages}; sources are sample URLs where each was seen"
    );
    // Hashes only, no text: passages only as counted (`--passages`).
    let params = (cfg.passages && !cfg.files).then(PassageParams::default);
    let mut b = LabelSetBuilder::new(&cfg.name, kind, norm, 0, &desc).passages(params);
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
    for (key, sample) in selected {
        let src = match url_of.get(sample).and_then(|u| id_of_url.get(u.as_str())) {
            Some(&s) => s,
            None => *unknown.get_or_insert_with(|| b.add_source("(no sample URL)", "")),
        };
        b.add_digest(src, *key)?;
    }
    for (key, sample) in passages {
        let src = match url_of.get(sample).and_then(|u| id_of_url.get(u.as_str())) {
            Some(&s) => s,
            None => *unknown.get_or_insert_with(|| b.add_source("(no sample URL)", "")),
        };
        b.add_passage_anchors(src, &[*key])?;
    }
    b.write(path).with_context(|| format!("writing {}", path.display()))
}

/// `ditto discover`: the histogram on standard output, a summary on standard error.
pub fn discover(cfg: &DiscoverConfig) -> Result<()> {
    let d = run_discovery(cfg)?;
    let what = if cfg.files { "files" } else { "chunks" };
    print!("{}", d.histogram.render());
    if cfg.histogram_only() {
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
        cfg.min_count.unwrap_or(0),
        d.stop_excluded,
        d.entries,
        d.sources,
        cfg.output.as_deref().map(|p| p.display().to_string()).unwrap_or_default()
    );
    if let Some(p) = d.passages {
        eprintln!(
            "{} distinct passages on more than {} pages; {} of them stop passages, left out; wrote {} passages",
            p.above_threshold,
            cfg.min_count.unwrap_or(0),
            p.stop_excluded,
            p.written
        );
    }
    Ok(())
}
