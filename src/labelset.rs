//! The label set a scan or analysis runs with: building label sets from every input kind
//! (including WARC files), loading a label set and stop lists for a scan, and the
//! normalization and stop list an analysis of a finished store uses.

use detector::passages::{PassageHash, PassageLookup, PassageParams};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use detector::matching::{ChunkLookup, StopList};
use detector::{Normalization, Sha1Digest};
use labelsets::{DocumentSink, Kind, LabelSet, LabelSetBuilder, StopChunks};
use store::{LabelSetIdentity, Store};

use crate::pipeline::stages::Matcher;
use crate::report::SourceNames;
use crawler::warc::WarcPages;

pub struct BuildConfig {
    pub name: String,
    pub kind: String,
    pub normalization: Normalization,
    pub min_chars: usize,
    pub url_prefix: Option<String>,
    pub description: String,
    pub inputs: Vec<PathBuf>,
    pub output: PathBuf,
    /// Worker threads; 1 builds sequentially.
    pub threads: usize,
    /// Memory for the chunk table and the passage pairs; past it sorted runs spill to `tmp_dir`.
    pub memory: u64,
    /// Default: the output's directory.
    pub tmp_dir: Option<PathBuf>,
    /// Progress lines on stderr.
    pub progress: bool,
    /// Keep the sources' passages (issue 36) beside the exact chunks, taken with these
    /// parameters; `None`: exact chunks only.
    pub passages: Option<detector::passages::PassageParams>,
}

/// Where spilled runs go: the given directory, else the output's.
fn spill_dir(tmp_dir: &Option<PathBuf>, output: &Path) -> PathBuf {
    match tmp_dir {
        Some(d) => d.clone(),
        None => match output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        },
    }
}

/// `ditto labelset build`. Each input is told by its content (`labelsets::sniff`), read
/// sequentially or on the pool, and reported (what it was read as, what it gave, and why it
/// gave no chunk when it gave none).
pub fn build(cfg: &BuildConfig) -> Result<()> {
    let kind: Kind = cfg.kind.parse().map_err(|e| anyhow::anyhow!("--kind: {e}"))?;
    let description = if cfg.description.is_empty() {
        cfg.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    } else {
        cfg.description.clone()
    };
    let min_chars = u32::try_from(cfg.min_chars).context("--min-chars is too large")?;
    let progress = Arc::new(labelsets::Progress::default());
    let mut b = LabelSetBuilder::new(&cfg.name, kind, cfg.normalization, min_chars, &description)
        .memory(cfg.memory, &spill_dir(&cfg.tmp_dir, &cfg.output))
        .progress(progress.clone())
        .passages(cfg.passages);
    let total: u64 = cfg
        .inputs
        .iter()
        .map(|p| {
            if p.is_dir() {
                labelsets::inputs::dir_size(p)
            } else {
                std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum();
    let started = std::time::Instant::now();
    let reporter = cfg.progress.then(|| BuildProgress::start(progress.clone(), total));
    let opts = labelsets::inputs::InputOptions {
        threads: cfg.threads,
        url_prefix: cfg.url_prefix.clone(),
        progress: Some(progress.clone()),
    };
    let warc = |p: &Path, sink: &mut dyn DocumentSink| -> labelsets::Result<labelsets::ReadStats> {
        read_warc_into(p, sink)
            .map_err(|e| labelsets::Error::Input { path: p.into(), reason: format!("{e:#}") })
    };
    let mut empty = Vec::new();
    for input in &cfg.inputs {
        let r = labelsets::inputs::read_input(&mut b, input, &opts, Some(&warc))
            .with_context(|| format!("reading {}", input.display()))?;
        eprintln!(
            "{}: read as {}: {} documents, {} skipped, {} chunks kept{}",
            input.display(),
            r.read_as,
            r.documents,
            r.skipped,
            r.kept,
            if r.parallel_streams > 0 {
                format!(" ({} streams decoded in parallel)", r.parallel_streams)
            } else {
                String::new()
            }
        );
        if let Some(why) = r.why_nothing_kept(min_chars) {
            eprintln!("warning: {}: no chunk kept: {why}", input.display());
            empty.push(format!("{}: {why}", input.display()));
        }
        if input.is_dir()
            && cfg.url_prefix.is_none()
            && !matches!(crate::source::dir::layout(input), crate::source::dir::Layout::Hosts { .. })
        {
            eprintln!(
                "warning: {}: without --url-prefix its sources are named by file (e.g. Mozilla.html), \
                 which reports and the review page cannot link; give the URL the files were saved \
                 from, e.g. --url-prefix https://en.wikipedia.org/wiki/ (URL = prefix + file name \
                 without extension)",
                input.display()
            );
        }
    }
    let read_secs = started.elapsed().as_secs_f64();
    drop(reporter);
    if b.kept() == 0 {
        bail!(
            "no chunks kept from the inputs (min chars {}): nothing to write\n  {}",
            cfg.min_chars,
            empty.join("\n  ")
        );
    }
    let runs = b.spilled_runs();
    let header = b.write(&cfg.output).with_context(|| format!("writing {}", cfg.output.display()))?;
    eprintln!(
        "wrote {} (read {:.1} s, sorted{} and written {:.1} s, {} threads)",
        cfg.output.display(),
        read_secs,
        if runs > 0 { format!(" {runs} spilled runs, merged,") } else { String::new() },
        started.elapsed().as_secs_f64() - read_secs,
        cfg.threads
    );
    print!("{}", labelsets::info::render_header_text(&header));
    Ok(())
}

/// Progress lines of a build on stderr every 5 s, until dropped.
struct BuildProgress {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BuildProgress {
    fn start(p: Arc<labelsets::Progress>, total: u64) -> BuildProgress {
        use std::sync::atomic::Ordering::Relaxed;
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let mut last_print = start;
            while !s.load(Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(100));
                if last_print.elapsed().as_secs() < 5 {
                    continue;
                }
                last_print = std::time::Instant::now();
                let secs = start.elapsed().as_secs_f64();
                let done = p.input_bytes.load(Relaxed);
                let pct = if total > 0 { 100.0 * done as f64 / total as f64 } else { 0.0 };
                eprintln!(
                    "progress: {:.1}/{:.1} MB input ({pct:.0}%), {} documents, {} chunks kept, {:.1} MB/s input, {:.0}s",
                    done as f64 / 1e6,
                    total as f64 / 1e6,
                    p.documents.load(Relaxed),
                    p.kept.load(Relaxed),
                    done as f64 / 1e6 / secs.max(1e-9),
                    secs
                );
            }
        });
        BuildProgress { stop, thread: Some(thread) }
    }
}

impl Drop for BuildProgress {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub struct MergeConfig {
    pub inputs: Vec<PathBuf>,
    pub output: PathBuf,
    pub name: Option<String>,
    pub description: Option<String>,
    pub memory: u64,
    pub tmp_dir: Option<PathBuf>,
}

/// `ditto labelset merge A.dls B.dls … -o all.dls`.
pub fn merge(cfg: &MergeConfig) -> Result<()> {
    let inputs: Vec<&Path> = cfg.inputs.iter().map(PathBuf::as_path).collect();
    let tmp = spill_dir(&cfg.tmp_dir, &cfg.output);
    let opts = labelsets::merge::MergeOptions {
        name: cfg.name.as_deref(),
        description: cfg.description.as_deref(),
        memory: Some((cfg.memory, &tmp)),
    };
    let header = labelsets::merge::merge(&inputs, &cfg.output, &opts)
        .with_context(|| format!("merging into {}", cfg.output.display()))?;
    eprintln!("wrote {}", cfg.output.display());
    print!("{}", labelsets::info::render_header_text(&header));
    Ok(())
}

/// Feed every page of a WARC file to a label-set sink; the page URL is the source.
fn read_warc_into(path: &Path, sink: &mut dyn DocumentSink) -> Result<labelsets::ReadStats> {
    let mut pages = WarcPages::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut stats = labelsets::ReadStats::default();
    let mut errors = 0u64;
    for item in pages.by_ref() {
        match item {
            Ok(page) if (200..300).contains(&page.status) => {
                let title = page.url.clone();
                sink.document(&title, &page.url, &page.body, page.content_type.as_deref())?;
                stats.documents += 1;
            }
            Ok(_) => stats.skipped += 1,
            Err(e) => {
                errors += 1;
                stats.skipped += 1;
                if errors <= 5 {
                    eprintln!("warning: {}: {e}", path.display());
                }
            }
        }
    }
    if errors > 5 {
        eprintln!("warning: {}: {errors} read errors in all", path.display());
    }
    Ok(stats)
}

/// `ditto labelset info`.
pub fn info(path: &Path, json: bool) -> Result<()> {
    let ls = LabelSet::open(path).with_context(|| format!("opening {}", path.display()))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&labelsets::info::render_json(&ls))?);
    } else {
        print!("{}", labelsets::info::render_text(&ls));
    }
    Ok(())
}

/// `ditto labelset check`: every checksum and the structural checks; prints what was
/// checked, and fails (non-zero exit) when anything is damaged.
pub fn check(path: &Path) -> Result<()> {
    let t = std::time::Instant::now();
    let report = labelsets::check::check(path).with_context(|| format!("checking {}", path.display()))?;
    print!("{}", report.render_text());
    println!("checked in:      {:.2} s", t.elapsed().as_secs_f64());
    if !report.is_ok() {
        bail!("{}: damaged label set: {}", path.display(), report.damaged().join(", "));
    }
    Ok(())
}

/// Label sets and stop lists opened for a scan.
/// What a scan or crawl matches (`--match`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum MatchMode {
    /// Exact chunks and, where the label set has a passage table, labeled passages of
    /// edited copies (issue 36; `detector::passages`).
    #[default]
    Passage,
    /// Exact chunks only: Ardi & Heidemann's method as published, bit for bit.
    Exact,
}

impl MatchMode {
    /// The `--match` value.
    pub fn name(self) -> &'static str {
        match self {
            MatchMode::Passage => "passage",
            MatchMode::Exact => "exact",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            MatchMode::Passage => "exact chunks and labeled passages",
            MatchMode::Exact => "exact chunks only, as asked or because the label set has no passage table",
        }
    }
}

impl Loaded {
    /// Apply `--match`: `Exact` drops the passage table from the matcher.
    pub fn set_match_mode(&mut self, mode: MatchMode) {
        if mode == MatchMode::Exact {
            self.matcher.passages = None;
        }
    }

    /// What the matcher does: [`MatchMode::Passage`] only with a passage table in use.
    pub fn effective_match(&self) -> MatchMode {
        if self.matcher.passages.is_some() {
            MatchMode::Passage
        } else {
            MatchMode::Exact
        }
    }
}

pub struct Loaded {
    pub identity: LabelSetIdentity,
    pub normalization: Normalization,
    pub matcher: Matcher,
    /// The label set whose passage table the matcher uses (stop passages are rebuilt over it
    /// when stop lists are added, [`add_store_stops`]).
    passage_table: Option<Arc<LabelSet>>,
}

struct Lookup(Arc<LabelSet>);
impl ChunkLookup for Lookup {
    fn lookup(&self, h: &Sha1Digest) -> Option<u32> {
        self.0.lookup(h)
    }

    fn lookup_many(&self, hashes: &[Sha1Digest], out: &mut Vec<Option<u32>>) {
        self.0.lookup_many(hashes, out)
    }

    fn min_member_bytes(&self) -> usize {
        self.0.min_member_bytes()
    }
}

/// Several stop lists as one.
struct Stops(Vec<Box<dyn StopList + Send + Sync>>);
impl StopList for Stops {
    fn is_stop(&self, h: &Sha1Digest) -> bool {
        self.0.iter().any(|s| s.is_stop(h))
    }

    fn may_contain_text(&self, normalized: &[u8]) -> bool {
        self.0.iter().any(|s| s.may_contain_text(normalized))
    }

    fn stop_passages(&self, p: PassageParams) -> Vec<PassageHash> {
        self.0.iter().flat_map(|s| s.stop_passages(p)).collect()
    }
}

/// A label set's passage table with the passages of the scan's stop lists as stop passages
/// (issue 36: the stop-chunk mechanism applies to passages; a stop text inside a longer
/// block is no evidence either).
struct PassagesWithStops {
    table: Arc<LabelSet>,
    stops: std::collections::HashSet<PassageHash>,
}

impl PassagesWithStops {
    fn new(table: Arc<LabelSet>, stops: &dyn StopList) -> Self {
        let stops = stops.stop_passages(table.params()).into_iter().collect();
        PassagesWithStops { table, stops }
    }
}

impl PassageLookup for PassagesWithStops {
    fn params(&self) -> PassageParams {
        self.table.params()
    }
    fn lookup_passage(&self, h: PassageHash) -> Option<u32> {
        self.table.lookup_passage(h)
    }
    fn is_stop_passage(&self, h: PassageHash) -> bool {
        self.stops.contains(&h)
    }
}

pub fn load_for_scan(
    labelset: &Path,
    file_labelset: Option<&Path>,
    stop_paths: &[PathBuf],
    default_stops: bool,
) -> Result<Loaded> {
    // Every section's checksum, entries included: lookups read them all, and a damaged byte
    // there would change verdicts silently (0.23 s at Wikipedia scale, labelsets/FORMAT.md).
    let ls = LabelSet::open_verified(labelset)
        .with_context(|| format!("opening label set {}", labelset.display()))?;
    if ls.kind() != Kind::Chunks {
        bail!("{} is a label set of {}, --labelset needs one of chunks", labelset.display(), ls.kind());
    }
    let norm = ls.normalization();
    let identity = identity_of(&ls);
    let files = match file_labelset {
        None => None,
        Some(p) => {
            let f = LabelSet::open_verified(p)
                .with_context(|| format!("opening file label set {}", p.display()))?;
            if f.kind() != Kind::Files {
                bail!("{} is a label set of {}, --file-labelset needs one of files", p.display(), f.kind());
            }
            Some(Arc::new(Lookup(Arc::new(f))) as Arc<dyn ChunkLookup + Send + Sync>)
        }
    };
    let stops = stop_lists(norm, stop_paths, default_stops)?;
    let ls = Arc::new(ls);
    let mut matcher = scan_matcher(Arc::new(Lookup(ls.clone())), files, stops)?;
    let mut passage_table = None;
    // Passage evidence (issue 36) by default where the label set has passages; an older
    // label set matches exact chunks only, and says so once.
    match ls.passage_header() {
        Some(_) if ls.passages().is_some() => {
            matcher.passages = Some(Arc::new(PassagesWithStops::new(ls.clone(), matcher.stops.as_ref())));
            passage_table = Some(ls);
        }
        Some(h) => tracing::warn!(
            labelset = %labelset.display(),
            "this label set's passage table was built by an earlier ditto (word hash {}, this one uses {}): \
             only exact chunks are matched, edited copies are not found; rebuild it with \
             `ditto labelset build` for passage evidence",
            h.word_hash,
            detector::passages::WORD_HASH_VERSION
        ),
        None => tracing::warn!(
            labelset = %labelset.display(),
            "this label set has no passage table (built by an older ditto, from hashes by discover or import, or with --passages off): \
             only exact chunks are matched, edited copies are not found; rebuild it with \
             `ditto labelset build` for passage evidence"
        ),
    }
    Ok(Loaded { identity, normalization: norm, matcher, passage_table })
}

/// The built-in stop list (unless left out) and those of `stop_paths`, in `norm`.
fn stop_lists(
    norm: Normalization,
    stop_paths: &[PathBuf],
    default_stops: bool,
) -> Result<Vec<Box<dyn StopList + Send + Sync>>> {
    let mut stops: Vec<Box<dyn StopList + Send + Sync>> = Vec::new();
    if default_stops {
        stops.push(Box::new(StopChunks::default_list(norm)));
    }
    for p in stop_paths {
        let s = StopChunks::load(p, norm).with_context(|| format!("loading stop chunks {}", p.display()))?;
        stops.push(Box::new(s));
    }
    Ok(stops)
}

/// No label set (`ditto scan` without `--labelset`): no chunk is labeled; a chunk's SHA-1 is
/// computed only where a stop list may hold it.
struct NoLabels;
impl ChunkLookup for NoLabels {
    fn lookup(&self, _: &Sha1Digest) -> Option<u32> {
        None
    }

    fn min_member_bytes(&self) -> usize {
        usize::MAX
    }
}

/// A scan without a label set: the default normalization and the stop lists, nothing
/// labeled. The store keeps what the analyses that need no label set read (SimHash, text
/// hashes, where each page came from); [`require_label_set`] stops the commands that need one.
pub fn load_without_labelset(stop_paths: &[PathBuf], default_stops: bool) -> Result<Loaded> {
    let norm = Normalization::default();
    let stops = stop_lists(norm, stop_paths, default_stops)?;
    Ok(Loaded {
        identity: LabelSetIdentity::none(&norm.to_string()),
        normalization: norm,
        matcher: scan_matcher(Arc::new(NoLabels), None, stops)?,
        passage_table: None,
    })
}

/// A scan's matcher with the defaults the commands start from (3 passages a page, live
/// near-duplicate marking on; the command's flags change the rest).
fn scan_matcher(
    chunks: Arc<dyn ChunkLookup + Send + Sync>,
    files: Option<Arc<dyn ChunkLookup + Send + Sync>>,
    stops: Vec<Box<dyn StopList + Send + Sync>>,
) -> Result<Matcher> {
    Ok(Matcher {
        chunks,
        files,
        stops: Arc::new(Stops(stops)),
        evidence_per_page: 3,
        passage_chars: crate::source::text::PASSAGE_CHARS,
        passages: None,
        links: None,
        keep_text: false,
        near_dups: Some(Arc::new(crate::live::neardups::LiveNearDups::new(
            crate::live::neardups::NEAR_DUP_K,
        )?)),
        origins: None,
    })
}

/// The commands that work on a store scanned without a label set.
pub const WITHOUT_LABELSET: &str =
    "replicas, quilts, origins, discover, stopchunks suggest, export chunks and stats";

/// Stops `command` (`report`, `review`: they judge neighborhoods by their labeled chunks) on
/// a store scanned without a label set, saying so and what works on it.
pub fn require_label_set(stores: &[&Store], command: &str) -> Result<()> {
    for store in stores {
        if store.label_set()?.is_some_and(|id| id.is_none()) {
            bail!(
                "`ditto {command}` needs a label set, and this store was scanned without one (`ditto scan` \
                 without --labelset): no chunk in it is labeled, so no neighborhood can be judged. Scan \
                 into a new store with --labelset FILE.dls for {command}; on this store {WITHOUT_LABELSET} \
                 work"
            );
        }
    }
    Ok(())
}

/// [`require_label_set`] for the store at `path` (read as every reading command reads it).
pub fn require_label_set_at(path: &Path, command: &str) -> Result<()> {
    let store = Store::open_for_reading(path)?;
    require_label_set(&[&store], command)
}

/// What a store records of the label set it was scanned with.
fn identity_of(ls: &LabelSet) -> LabelSetIdentity {
    let h = ls.header();
    LabelSetIdentity {
        name: h.name.clone(),
        normalization: ls.normalization().to_string(),
        entries: ls.len() as u64,
        min_chars: h.min_chars as u64,
    }
}

/// Open (creating it if missing or an empty directory) the store a scan or crawl writes its
/// verdicts to, bound to the label set it runs with, and add the store's reviewed stop chunks
/// to `loaded`: the one way every writing command opens its store (`store::lifecycle`).
/// `cache_bytes` caps sled's page cache (`store::CRAWL_CACHE_BYTES` for a crawl,
/// `store::DEFAULT_CACHE_BYTES` otherwise).
pub fn open_store_for_writing(
    store: &Path,
    labelset: &Path,
    loaded: &mut Loaded,
    cache_bytes: u64,
) -> Result<Arc<Store>> {
    let store = Store::create_or_open_with_cache(store, cache_bytes)?;
    bind_store(&store, loaded, labelset)?;
    add_store_stops(loaded, &store)?;
    Ok(Arc::new(store))
}

/// [`open_store_for_writing`] for a scan without a label set ([`load_without_labelset`]):
/// the store records that it has none, so a later run with one is refused, and so are
/// `report` and `review`.
pub fn open_store_without_labelset(store: &Path, loaded: &mut Loaded) -> Result<Arc<Store>> {
    let store = Store::create_or_open(store)?;
    store.bind_label_set(&loaded.identity)?;
    add_store_stops(loaded, &store)?;
    Ok(Arc::new(store))
}

/// Bind `store` to a label set and a way of matching it (a store holds the verdicts of one
/// label set, matched one way) and remember the file, so reports can name sources without
/// `--labelset`.
pub fn bind_store(store: &Store, loaded: &Loaded, labelset: &Path) -> Result<()> {
    store.bind_label_set(&loaded.identity)?;
    bind_match(store, loaded.effective_match())?;
    let path =
        std::fs::canonicalize(labelset).with_context(|| format!("label set {}", labelset.display()))?;
    store.set_meta("labelset_path", &path.display().to_string())?;
    Ok(())
}

/// Record how a store's pages are matched, or refuse a run that matches otherwise: pages
/// judged with passages beside pages judged without would make `contains` incomparable, as
/// mixing label sets would. A store written before ditto recorded it takes the run's.
fn bind_match(store: &Store, mode: MatchMode) -> Result<()> {
    let key = "match";
    match store.meta(key)? {
        None => Ok(store.set_meta(key, mode.name())?),
        Some(m) if m == mode.name() => Ok(()),
        Some(m) => anyhow::bail!(
            "this store's pages were matched with --match {m}, and this run matches with --match {} ({}); \
             run with --match {m} to go on with this store, or use a new store",
            mode.name(),
            mode.describe()
        ),
    }
}

/// Adds the store's reviewed stop chunks (`ditto review`: `false-positive` evidence, key
/// prefix `x/`) to a scan's stop lists, beside the built-in and `--stop-chunks` lists.
/// Returns how many there are.
pub fn add_store_stops(loaded: &mut Loaded, store: &Store) -> Result<usize> {
    let mut reviewed = StopChunks::new(loaded.normalization);
    for r in store.reviewed_stop_chunks() {
        let (digest, chunk) = r?;
        reviewed.add_text_with_digest(&chunk.text, digest);
    }
    let n = reviewed.len();
    if n > 0 {
        let before = loaded.matcher.stops.clone();
        loaded.matcher.stops = Arc::new(WithReviewed(before, reviewed));
        // Their passages are stop passages too.
        if let (Some(table), Some(_)) = (&loaded.passage_table, &loaded.matcher.passages) {
            loaded.matcher.passages =
                Some(Arc::new(PassagesWithStops::new(table.clone(), loaded.matcher.stops.as_ref())));
        }
    }
    Ok(n)
}

struct WithReviewed(Arc<dyn StopList + Send + Sync>, StopChunks);
impl StopList for WithReviewed {
    fn is_stop(&self, h: &Sha1Digest) -> bool {
        self.0.is_stop(h) || self.1.is_stop(h)
    }
    fn may_contain_text(&self, normalized: &[u8]) -> bool {
        self.0.may_contain_text(normalized) || self.1.may_contain_text(normalized)
    }
    fn stop_passages(&self, p: PassageParams) -> Vec<PassageHash> {
        let mut v = self.0.stop_passages(p);
        v.extend(self.1.stop_passages(p));
        v
    }
}

struct LabelSetNames(LabelSet);
impl SourceNames for LabelSetNames {
    fn name(&self, id: u32) -> Option<(String, String)> {
        self.0.source(id).map(|s| (s.title.to_string(), s.url.to_string()))
    }
}

/// Source titles for `ditto report --labelset FILE`: FILE must be the label set the stores
/// were scanned with (by name, normalization, entries and minimum chunk length, as `scan`
/// checks), or the report would name wrong sources. Without FILE: [`source_names`].
pub fn source_names_checked(stores: &[&Store], labelset: Option<&Path>) -> Result<Box<dyn SourceNames>> {
    let Some(path) = labelset else {
        return Ok(match stores.first() {
            Some(s) => source_names(s, None),
            None => Box::new(crate::report::NoSourceNames),
        });
    };
    let ls = LabelSet::open(path).with_context(|| format!("opening label set {}", path.display()))?;
    let given = identity_of(&ls);
    for store in stores {
        if let Some(bound) = store.label_set()? {
            if bound != given {
                bail!(
                    "--labelset {}: this store was scanned with label set {:?} ({} entries, normalization \
                     {}, chunks > {} chars), not {:?} ({} entries, normalization {}, chunks > {} chars)",
                    path.display(),
                    bound.name,
                    bound.entries,
                    bound.normalization,
                    bound.min_chars,
                    given.name,
                    given.entries,
                    given.normalization,
                    given.min_chars
                );
            }
        }
    }
    Ok(Box::new(LabelSetNames(ls)))
}

/// Source titles for reports: the given label set, or the one the store was scanned with.
pub fn source_names(store: &Store, labelset: Option<&Path>) -> Box<dyn SourceNames> {
    let path = match labelset {
        Some(p) => Some(p.to_path_buf()),
        None => store.meta("labelset_path").ok().flatten().map(PathBuf::from),
    };
    match path.map(|p| (LabelSet::open(&p), p)) {
        Some((Ok(ls), _)) => Box::new(LabelSetNames(ls)),
        Some((Err(e), p)) => {
            eprintln!(
                "warning: cannot open label set {} for source titles ({e}); showing source ids",
                p.display()
            );
            Box::new(crate::report::NoSourceNames)
        }
        None => Box::new(crate::report::NoSourceNames),
    }
}

/// The titles of a label set's sources (for a focused crawl's link scoring).
pub fn source_titles(labelset: &Path) -> Result<Vec<String>> {
    let ls = LabelSet::open(labelset).with_context(|| format!("opening label set {}", labelset.display()))?;
    Ok((0..ls.source_count()).filter_map(|i| ls.source(i as u32).map(|s| s.title.to_string())).collect())
}

/// The normalization a store's chunks were hashed with (its label set's, else the default).
pub fn store_normalization(store: &Store) -> Result<Normalization> {
    match store.label_set()? {
        Some(id) => id.normalization.parse().map_err(|e| anyhow!("the store's normalization: {e}")),
        None => Ok(Normalization::default()),
    }
}

/// The stop list: the built-in list (unless `no_default`) plus `paths`.
pub fn load_stops(norm: Normalization, paths: &[PathBuf], no_default: bool) -> Result<StopChunks> {
    let mut s = if no_default { StopChunks::new(norm) } else { StopChunks::default_list(norm) };
    for p in paths {
        s.add_file(p).with_context(|| format!("loading stop chunks {}", p.display()))?;
    }
    Ok(s)
}
