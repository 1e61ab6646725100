//! Source stage: reads the inputs in order (WARC files, directories, single files) and sends
//! [`Page`]s down the pipeline. Read errors are reported and counted; the stage goes on with
//! the next record or file where the format allows it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use crossbeam_channel::Sender;
use detector::Page;

use super::metrics::{SkipReason, Skips};
use super::source_remote::{RemoteCounters, RemoteInputs, RemoteRun};
use super::stages::Input;
use crate::source::dir::{self, DirSource};
use crawler::partition::Partition;
use crawler::warc::{printable, WarcPages};
use store::Store;

/// Counters the progress display reads.
#[derive(Debug, Default)]
pub struct SourceCounters {
    /// Input bytes consumed (compressed bytes for `.warc.gz`).
    pub input_bytes_done: AtomicU64,
    /// Payload bytes of pages sent on.
    pub payload_bytes: AtomicU64,
    pub pages_read: AtomicU64,
    /// Pages the store writer has handled.
    pub pages_done: AtomicU64,
    /// Pages the trap filter dropped (with `pages_done`: every page sent has settled).
    pub pages_dropped: AtomicU64,
    /// What happened to remote files.
    pub remote: RemoteCounters,
}

impl SourceCounters {
    /// Whether every page sent so far has been stored or dropped.
    pub fn drained(&self) -> bool {
        self.pages_done.load(Relaxed) + self.pages_dropped.load(Relaxed) >= self.pages_read.load(Relaxed)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Warc,
    Dir,
    File,
    /// A WARC file at an `http://` or `https://` URL.
    Remote,
}

/// The inputs of a run, classified, with their total size for the progress bar.
#[derive(Debug, Clone)]
pub struct Plan {
    pub inputs: Vec<(PathBuf, InputKind)>,
    pub total_bytes: u64,
}

impl Plan {
    /// Without a URL prefix, what each folder's pages will be called
    /// ([`crate::source::dir::layout_notice`]): read as `HOST/PATH`, or a warning that its
    /// `file://` URLs form no neighborhoods.
    pub fn layout_notices(&self, url_prefix: Option<&str>) -> Vec<String> {
        if url_prefix.is_some() {
            return Vec::new();
        }
        self.inputs
            .iter()
            .filter(|(_, kind)| *kind == InputKind::Dir)
            .map(|(p, _)| crate::source::dir::layout_notice(p))
            .collect()
    }
}

pub struct SourceOptions {
    pub url_prefix: Option<String>,
    pub max_body_bytes: u64,
    pub remote: RemoteInputs,
    /// Where finished remote files are recorded (so a rerun passes over them).
    pub store: Option<Arc<Store>>,
}

impl SourceOptions {
    /// Options for local inputs (remote ones with the defaults, nothing recorded).
    pub fn local(url_prefix: Option<String>, max_body_bytes: u64) -> Self {
        Self { url_prefix, max_body_bytes, remote: RemoteInputs::default(), store: None }
    }
}

/// Classify inputs; a missing path is an error before any work starts.
pub fn plan(inputs: &[PathBuf]) -> Result<Plan> {
    plan_with(inputs, true)
}

/// [`plan`], leaving `total_bytes` at 0 for directories unless `count_bytes` (it walks each
/// directory once more, only for a progress bar).
pub fn plan_with(inputs: &[PathBuf], count_bytes: bool) -> Result<Plan> {
    if inputs.is_empty() {
        bail!("no inputs: give WARC files, directories of pages, or files");
    }
    let mut out = Vec::new();
    let mut total = 0u64;
    for p in inputs {
        if p.to_str().is_some_and(crate::source::listing::is_url) {
            out.push((p.clone(), InputKind::Remote));
            continue;
        }
        let meta = std::fs::metadata(p).with_context(|| format!("input {}", p.display()))?;
        // Absolute, so a page's origin (where evidence is read back from) does not depend on
        // the directory a later command runs in.
        let p = &std::fs::canonicalize(p).with_context(|| format!("input {}", p.display()))?;
        if meta.is_dir() {
            // WARC files inside a directory are read as WARCs, the other files as pages.
            for w in crate::source::dir::warc_files_under(p) {
                out.push((w, InputKind::Warc));
            }
            if count_bytes {
                total += crate::source::dir::total_bytes(p);
            }
            out.push((p.clone(), InputKind::Dir));
        } else {
            total += meta.len();
            // A FIFO or device named on the command line is read only as a WARC stream
            // named so (`x.warc.gz`); is_warc's sniffing would block on it or eat its first
            // bytes, so any other one is a File, which the source skips and counts.
            let kind = if is_warc_name(p) || (meta.is_file() && is_warc(p)) {
                InputKind::Warc
            } else {
                InputKind::File
            };
            out.push((p.clone(), kind));
        }
    }
    Ok(Plan { inputs: out, total_bytes: total })
}

fn is_warc_name(p: &Path) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    name.ends_with(".warc") || name.ends_with(".warc.gz")
}

/// A WARC by name (`.warc`, `.warc.gz`, `.arc`-less) or by its first bytes.
fn is_warc(p: &Path) -> bool {
    if is_warc_name(p) {
        return true;
    }
    let mut head = [0u8; 5];
    match std::fs::File::open(p).and_then(|mut f| std::io::Read::read(&mut f, &mut head)) {
        Ok(5) => &head == b"WARC/",
        _ => false,
    }
}

/// Read every input and send its pages on. Returns when all inputs are read or the
/// pipeline downstream has stopped.
pub fn run(
    plan: Plan,
    opts: SourceOptions,
    tx: Sender<Input>,
    skips: &Skips,
    c: &SourceCounters,
) -> Result<()> {
    run_partition(plan, opts, Partition::SINGLE, tx, skips, c)
}

/// [`run`] for one partition of a scan split over N processes (`ditto scan --partition i/N`):
/// the inputs are numbered in plan order — each WARC file and each single file is one
/// input, and each file of a directory walk (sorted by name) is one input — and this
/// partition reads those whose number ≡ i (mod N). Every partition walks directories whole
/// (the other partitions' files are passed over); WARC files of others are not opened.
pub fn run_partition(
    plan: Plan,
    opts: SourceOptions,
    part: Partition,
    tx: Sender<Input>,
    skips: &Skips,
    c: &SourceCounters,
) -> Result<()> {
    let mut unit = 0u64;
    let mut mine = || {
        let owned = part.owns_input(unit);
        unit += 1;
        owned
    };
    let send = |page: Page| -> bool {
        c.pages_read.fetch_add(1, Relaxed);
        c.payload_bytes.fetch_add(page.body.len() as u64, Relaxed);
        tx.send(page.into()).is_ok()
    };
    // Remote files are numbered among themselves for partitions.
    let remote_inputs = plan.inputs.iter().filter(|(_, k)| *k == InputKind::Remote);
    let remote_urls = remote_inputs
        .enumerate()
        .filter(|(i, _)| part.owns_input(*i as u64))
        .map(|(_, (p, _))| p.to_string_lossy().into_owned())
        .collect();
    let mut remote = RemoteRun::start(remote_urls, &opts.remote, opts.store.clone(), &c.remote)?;
    let drained = || c.drained();
    let max_body = usize::try_from(opts.max_body_bytes).unwrap_or(usize::MAX);
    for (path, kind) in plan.inputs {
        if !matches!(kind, InputKind::Dir | InputKind::Remote) && !mine() {
            continue;
        }
        match kind {
            InputKind::Warc => {
                let pages = match WarcPages::open(&path) {
                    Ok(p) => p.with_max_size(usize::try_from(opts.max_body_bytes).unwrap_or(usize::MAX)),
                    Err(e) => {
                        skips.add(SkipReason::ReadError, 1);
                        skips.error(format!("{}: {e}", printable(&path.display().to_string())));
                        continue;
                    }
                };
                if !send_warc_pages(pages, &path.display().to_string(), &send, skips, c) {
                    return Ok(());
                }
            }
            InputKind::Remote => {
                let send_pages = |reader: &mut dyn std::io::Read, name: &str| {
                    let pages = WarcPages::from_reader(reader, name, 0).with_max_size(max_body);
                    send_warc_pages(pages, name, &send, skips, c)
                };
                if !remote.read(&path, &c.remote, &drained, send_pages)? {
                    return Ok(());
                }
            }
            InputKind::Dir => {
                let mut pages = match DirSource::new(&path, opts.url_prefix.as_deref()) {
                    Ok(p) => p.with_max_file(opts.max_body_bytes),
                    Err(e) => {
                        skips.add(SkipReason::ReadError, 1);
                        skips.error(format!("{}: {e}", printable(&path.display().to_string())));
                        continue;
                    }
                };
                for item in pages.by_ref() {
                    if !mine() {
                        continue;
                    }
                    match item {
                        Ok(page) => {
                            c.input_bytes_done.fetch_add(page.body.len() as u64, Relaxed);
                            if !send(page) {
                                return Ok(());
                            }
                        }
                        Err(e) => {
                            skips.add(SkipReason::ReadError, 1);
                            skips.error(e.to_string());
                        }
                    }
                }
                skips.add(SkipReason::TooLarge, pages.stats().too_large);
                skips.add(SkipReason::NotRegularFile, pages.stats().not_regular);
            }
            InputKind::File => match single_file(&path, opts.url_prefix.as_deref(), opts.max_body_bytes) {
                Ok(SingleFile::Page(page)) => {
                    c.input_bytes_done.fetch_add(page.body.len() as u64, Relaxed);
                    if !send(page) {
                        return Ok(());
                    }
                }
                Ok(SingleFile::TooLarge) => skips.add(SkipReason::TooLarge, 1),
                Ok(SingleFile::NotRegular) => skips.add(SkipReason::NotRegularFile, 1),
                Err(e) => {
                    skips.add(SkipReason::ReadError, 1);
                    skips.error(format!("{}: {e}", printable(&path.display().to_string())));
                }
            },
        }
    }
    remote.checkpoint(&drained, true)
}

/// Send the pages of one WARC file on; false when the pipeline downstream has stopped.
fn send_warc_pages<R: std::io::Read>(
    mut pages: WarcPages<R>,
    name: &str,
    send: &impl Fn(Page) -> bool,
    skips: &Skips,
    c: &SourceCounters,
) -> bool {
    let mut last = 0u64;
    while let Some(item) = pages.next() {
        let off = pages.input_offset();
        c.input_bytes_done.fetch_add(off.saturating_sub(last), Relaxed);
        last = off;
        match item {
            Ok(page) => {
                if !send(page) {
                    return false;
                }
            }
            Err(e) => {
                skips.add(SkipReason::of_warc_error(&e), 1);
                skips.error(format!("{}: {e}", printable(name)));
            }
        }
    }
    c.input_bytes_done.fetch_add(pages.file_size().saturating_sub(last), Relaxed);
    let st = pages.stats();
    skips.add(SkipReason::TooLarge, st.warc.oversized + st.truncated);
    true
}

/// What became of one file given on the command line.
enum SingleFile {
    Page(Page),
    TooLarge,
    /// A FIFO, socket or device: not read (it could block or never end).
    NotRegular,
}

/// One file given on the command line: URL = prefix + file name, or its `file://` URL.
fn single_file(path: &Path, url_prefix: Option<&str>, max: u64) -> std::io::Result<SingleFile> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Ok(SingleFile::NotRegular);
    }
    if meta.len() > max {
        return Ok(SingleFile::TooLarge);
    }
    let name = Path::new(path.file_name().unwrap_or_default());
    let url = match url_prefix {
        Some(p) => dir::path_to_url(p, name),
        None => {
            let abs = std::fs::canonicalize(path)?;
            let parent = abs.parent().unwrap_or(Path::new("/"));
            dir::path_to_url(&dir::file_url_prefix(parent), name)
        }
    };
    let fetch_time = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    Ok(SingleFile::Page(Page {
        url,
        fetch_time,
        status: 200,
        content_type: dir::guess_content_type(path).map(str::to_string),
        body: std::fs::read(path)?,
        origin: detector::PageOrigin::File { path: path.display().to_string() },
    }))
}
