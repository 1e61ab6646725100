//! Source stage: reads the inputs in order (WARC files, directories, single files) and sends
//! [`Page`]s down the pipeline. Read errors are reported and counted; the stage goes on with
//! the next record or file where the format allows it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use anyhow::{bail, Context, Result};
use crossbeam_channel::Sender;
use detector::Page;

use super::metrics::{SkipReason, Skips};
use super::stages::Input;
use crate::source::dir::{self, DirSource};
use crawler::partition::Partition;
use crawler::warc::WarcPages;

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Warc,
    Dir,
    File,
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
}

/// Classify inputs; a missing path is an error before any work starts.
pub fn plan(inputs: &[PathBuf]) -> Result<Plan> {
    if inputs.is_empty() {
        bail!("no inputs: give WARC files, directories of pages, or files");
    }
    let mut out = Vec::new();
    let mut total = 0u64;
    for p in inputs {
        let meta = std::fs::metadata(p).with_context(|| format!("input {}", p.display()))?;
        if meta.is_dir() {
            // WARC files inside a directory are read as WARCs, the other files as pages.
            for w in crate::source::dir::warc_files_under(p) {
                out.push((w, InputKind::Warc));
            }
            total += crate::source::dir::total_bytes(p);
            out.push((p.clone(), InputKind::Dir));
        } else {
            total += meta.len();
            let kind = if is_warc(p) { InputKind::Warc } else { InputKind::File };
            out.push((p.clone(), kind));
        }
    }
    Ok(Plan { inputs: out, total_bytes: total })
}

/// A WARC by name (`.warc`, `.warc.gz`, `.arc`-less) or by its first bytes.
fn is_warc(p: &Path) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    if name.ends_with(".warc") || name.ends_with(".warc.gz") {
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
    for (path, kind) in plan.inputs {
        if kind != InputKind::Dir && !mine() {
            continue;
        }
        match kind {
            InputKind::Warc => {
                let mut pages = match WarcPages::open(&path) {
                    Ok(p) => p.with_max_size(usize::try_from(opts.max_body_bytes).unwrap_or(usize::MAX)),
                    Err(e) => {
                        skips.add(SkipReason::ReadError, 1);
                        skips.error(format!("{}: {e}", path.display()));
                        continue;
                    }
                };
                let mut last = 0u64;
                while let Some(item) = pages.next() {
                    let off = pages.input_offset();
                    c.input_bytes_done.fetch_add(off.saturating_sub(last), Relaxed);
                    last = off;
                    match item {
                        Ok(page) => {
                            if !send(page) {
                                return Ok(());
                            }
                        }
                        Err(e) => {
                            skips.add(SkipReason::ReadError, 1);
                            skips.error(format!("{}: {e}", path.display()));
                        }
                    }
                }
                c.input_bytes_done.fetch_add(pages.file_size().saturating_sub(last), Relaxed);
                let st = pages.stats();
                skips.add(SkipReason::TooLarge, st.warc.oversized + st.truncated);
            }
            InputKind::Dir => {
                let mut pages = match DirSource::new(&path, opts.url_prefix.as_deref()) {
                    Ok(p) => p.with_max_file(opts.max_body_bytes),
                    Err(e) => {
                        skips.add(SkipReason::ReadError, 1);
                        skips.error(format!("{}: {e}", path.display()));
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
            }
            InputKind::File => match single_file(&path, opts.url_prefix.as_deref(), opts.max_body_bytes) {
                Ok(Some(page)) => {
                    c.input_bytes_done.fetch_add(page.body.len() as u64, Relaxed);
                    if !send(page) {
                        return Ok(());
                    }
                }
                Ok(None) => skips.add(SkipReason::TooLarge, 1),
                Err(e) => {
                    skips.add(SkipReason::ReadError, 1);
                    skips.error(format!("{}: {e}", path.display()));
                }
            },
        }
    }
    Ok(())
}

/// One file given on the command line: URL = prefix + file name, or its `file://` URL.
fn single_file(path: &Path, url_prefix: Option<&str>, max: u64) -> std::io::Result<Option<Page>> {
    let meta = std::fs::metadata(path)?;
    if meta.len() > max {
        return Ok(None);
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let url = match url_prefix {
        Some(p) => dir::path_to_url(p, Path::new(&name)),
        None => {
            let abs = std::fs::canonicalize(path)?;
            let parent = abs.parent().unwrap_or(Path::new("/"));
            let prefix = format!("file://{}/", parent.display());
            dir::path_to_url(&prefix, Path::new(&name))
        }
    };
    let fetch_time = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    Ok(Some(Page {
        url,
        fetch_time,
        status: 200,
        content_type: dir::guess_content_type(path).map(str::to_string),
        body: std::fs::read(path)?,
        origin: detector::PageOrigin::File { path: path.display().to_string() },
    }))
}
