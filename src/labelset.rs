//! The label set a scan or analysis runs with: building label sets from every input kind
//! (including WARC files), loading a label set and stop lists for a scan, and the
//! normalization and stop list an analysis of a finished store uses.

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
}

/// What kind of label-set input a path is.
fn input_kind(p: &Path) -> &'static str {
    let name = p.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let base = name.trim_end_matches(".gz").trim_end_matches(".bz2");
    if p.is_dir() {
        "dir"
    } else if base.ends_with(".warc") {
        "warc"
    } else if base.ends_with(".ndjson") || base.ends_with(".jsonl") || base.ends_with(".json") {
        "ndjson"
    } else if base.ends_with(".xml") {
        "xml"
    } else {
        "file"
    }
}

/// `ditto labelset build`.
pub fn build(cfg: &BuildConfig) -> Result<()> {
    let kind: Kind = cfg.kind.parse().map_err(|e| anyhow::anyhow!("--kind: {e}"))?;
    let description = if cfg.description.is_empty() {
        cfg.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    } else {
        cfg.description.clone()
    };
    let min_chars = u32::try_from(cfg.min_chars).context("--min-chars is too large")?;
    let mut b = LabelSetBuilder::new(&cfg.name, kind, cfg.normalization, min_chars, &description);
    for input in &cfg.inputs {
        let before = b.kept();
        match input_kind(input) {
            "dir" => labelsets::readers::read_directory(input, cfg.url_prefix.as_deref(), &mut b).map(|_| ()),
            "file" => read_file_into(input, cfg.url_prefix.as_deref(), &mut b),
            "ndjson" => labelsets::readers::read_enterprise_ndjson(input, &mut b).map(|_| ()),
            "xml" => labelsets::readers::read_mediawiki_xml(
                input,
                cfg.url_prefix.as_deref().unwrap_or(labelsets::readers::ENWIKI_URL_PREFIX),
                &mut b,
            )
            .map(|_| ()),
            _ => {
                read_warc_into(input, &mut b)?;
                Ok(())
            }
        }
        .with_context(|| format!("reading {}", input.display()))?;
        eprintln!("{}: {} entries kept", input.display(), b.kept() - before);
        if input_kind(input) == "dir"
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
    if b.kept() == 0 {
        bail!("no chunks kept from the inputs (min chars {}): nothing to write", cfg.min_chars);
    }
    let header = b.write(&cfg.output).with_context(|| format!("writing {}", cfg.output.display()))?;
    eprintln!("wrote {}", cfg.output.display());
    print!("{}", labelsets::info::render_header_text(&header));
    Ok(())
}

/// One HTML or text file as one source.
fn read_file_into(
    path: &Path,
    url_prefix: Option<&str>,
    sink: &mut dyn DocumentSink,
) -> labelsets::Result<()> {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let url = match url_prefix {
        Some(p) => format!("{p}{stem}"),
        None => path.display().to_string(),
    };
    let body = std::fs::read(path)
        .map_err(|e| labelsets::Error::Input { path: path.to_path_buf(), reason: e.to_string() })?;
    let name = path.to_string_lossy().to_lowercase();
    let ct = if name.ends_with(".txt") { Some("text/plain") } else { None };
    sink.document(&labelsets::readers::title_from_stem(&stem), &url, &body, ct)
}

/// Feed every page of a WARC file to a label-set sink; the page URL is the source.
fn read_warc_into(path: &Path, sink: &mut dyn DocumentSink) -> Result<()> {
    let mut pages = WarcPages::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut errors = 0u64;
    for item in pages.by_ref() {
        match item {
            Ok(page) if (200..300).contains(&page.status) => {
                let title = page.url.clone();
                sink.document(&title, &page.url, &page.body, page.content_type.as_deref())?;
            }
            Ok(_) => {}
            Err(e) => {
                errors += 1;
                if errors <= 5 {
                    eprintln!("warning: {}: {e}", path.display());
                }
            }
        }
    }
    if errors > 5 {
        eprintln!("warning: {}: {errors} read errors in all", path.display());
    }
    Ok(())
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
pub struct Loaded {
    pub identity: LabelSetIdentity,
    pub normalization: Normalization,
    pub matcher: Matcher,
}

struct Lookup(LabelSet);
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
    let h = ls.header();
    let identity = LabelSetIdentity {
        name: h.name.clone(),
        normalization: norm.to_string(),
        entries: ls.len() as u64,
        min_chars: h.min_chars as u64,
    };
    let files = match file_labelset {
        None => None,
        Some(p) => {
            let f = LabelSet::open_verified(p)
                .with_context(|| format!("opening file label set {}", p.display()))?;
            if f.kind() != Kind::Files {
                bail!("{} is a label set of {}, --file-labelset needs one of files", p.display(), f.kind());
            }
            Some(Arc::new(Lookup(f)) as Arc<dyn ChunkLookup + Send + Sync>)
        }
    };
    let mut stops: Vec<Box<dyn StopList + Send + Sync>> = Vec::new();
    if default_stops {
        stops.push(Box::new(StopChunks::default_list(norm)));
    }
    for p in stop_paths {
        let s = StopChunks::load(p, norm).with_context(|| format!("loading stop chunks {}", p.display()))?;
        stops.push(Box::new(s));
    }
    Ok(Loaded {
        identity,
        normalization: norm,
        matcher: Matcher {
            chunks: Arc::new(Lookup(ls)),
            files,
            stops: Arc::new(Stops(stops)),
            evidence_per_page: 3,
            passage_chars: 300,
            links: None,
            keep_text: true,
            near_dups: Some(Arc::new(crate::live::neardups::LiveNearDups::new(
                crate::live::neardups::NEAR_DUP_K,
            )?)),
            origins: None,
        },
    })
}

/// Open (creating it if missing) the store a scan or crawl writes its verdicts to, bound to
/// the label set it runs with, and add the store's reviewed stop chunks to `loaded`: the one
/// way every writing command opens its store.
pub fn open_store_for_writing(store: &Path, labelset: &Path, loaded: &mut Loaded) -> Result<Arc<Store>> {
    let store = Store::open(store)?;
    bind_store(&store, &loaded.identity, labelset)?;
    add_store_stops(loaded, &store)?;
    Ok(Arc::new(store))
}

/// Bind `store` to a label set (a store holds the verdicts of one label set) and remember the
/// file, so reports can name sources without `--labelset`.
pub fn bind_store(store: &Store, identity: &LabelSetIdentity, labelset: &Path) -> Result<()> {
    store.bind_label_set(identity)?;
    let path =
        std::fs::canonicalize(labelset).with_context(|| format!("label set {}", labelset.display()))?;
    store.set_meta("labelset_path", &path.display().to_string())?;
    Ok(())
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
}

struct LabelSetNames(LabelSet);
impl SourceNames for LabelSetNames {
    fn name(&self, id: u32) -> Option<(String, String)> {
        self.0.source(id).map(|s| (s.title.to_string(), s.url.to_string()))
    }
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
