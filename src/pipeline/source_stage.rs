//! Source stage: reads the inputs (WARC files, directories, single files, remote WARC files),
//! several at once ([`run_partition`]), and sends [`Page`]s down the pipeline. Read errors
//! are reported and counted; the stage goes on with the next record or file where the format
//! allows it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use crossbeam_channel::Sender;
use detector::Page;

use super::metrics::{SkipReason, Skips, StageMetrics};
use super::source_remote::{RemoteCounters, RemoteInputs, RemoteRun};
use super::stages::Input;
use crate::source::dir;
use crawler::partition::Partition;
use crawler::warc::{printable, WarcPages};
use store::Store;

/// Counters the progress display reads.
#[derive(Debug)]
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
    /// The readers' work: a page each (busy: the time a reader took to produce it, not
    /// the time it waited to hand it on), and the readers' CPU time. Unused (no workers)
    /// where the source is not [`run`] (a crawl).
    pub stage: StageMetrics,
}

impl Default for SourceCounters {
    fn default() -> Self {
        Self {
            input_bytes_done: AtomicU64::new(0),
            payload_bytes: AtomicU64::new(0),
            pages_read: AtomicU64::new(0),
            pages_done: AtomicU64::new(0),
            pages_dropped: AtomicU64::new(0),
            remote: RemoteCounters::default(),
            stage: StageMetrics::new("source"),
        }
    }
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
    /// The WARC files inside folder inputs are listed as inputs of their own, before their
    /// folder (a walk passes over them); else the walk reads them where it meets them.
    pub dir_warcs_listed: bool,
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
    /// Inputs read at once ([`run_partition`]); 1 reads them one by one, in plan order.
    pub readers: usize,
}

impl SourceOptions {
    /// Options for local inputs (remote ones with the defaults, nothing recorded).
    pub fn local(url_prefix: Option<String>, max_body_bytes: u64) -> Self {
        Self { url_prefix, max_body_bytes, remote: RemoteInputs::default(), store: None, readers: 1 }
    }
}

/// Classify inputs; a missing path is an error before any work starts.
pub fn plan(inputs: &[PathBuf]) -> Result<Plan> {
    plan_with(inputs, true)
}

/// [`plan`], leaving `total_bytes` at 0 for directories unless `count_bytes` (it walks each
/// directory once more, only for a progress bar).
pub fn plan_with(inputs: &[PathBuf], count_bytes: bool) -> Result<Plan> {
    plan_inputs(inputs, count_bytes, true)
}

/// [`plan_with`] for a scan: the WARC files inside folders are listed (a walk of each
/// folder before the scan, on one thread) only for a partitioned scan, which numbers them
/// in plan order; any other scan's readers read them where their walk meets them.
pub fn plan_for_scan(inputs: &[PathBuf], count_bytes: bool, part: Partition) -> Result<Plan> {
    plan_inputs(inputs, count_bytes, part != Partition::SINGLE)
}

fn plan_inputs(inputs: &[PathBuf], count_bytes: bool, list_dir_warcs: bool) -> Result<Plan> {
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
            if list_dir_warcs {
                for w in crate::source::dir::warc_files_under(p) {
                    out.push((w, InputKind::Warc));
                }
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
    Ok(Plan { inputs: out, total_bytes: total, dir_warcs_listed: list_dir_warcs })
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

/// Files of a folder per reader job: a folder of many files is read by several readers.
const FILES_PER_JOB: usize = 32;

/// One reader's piece of work ([`Jobs`]).
enum Job {
    Warc(PathBuf),
    File(PathBuf),
    /// A folder of a walk: listed, its subfolders become jobs, its files batches of
    /// [`FILES_PER_JOB`]. `ancestors`: its identity and those of the folders above it.
    Dir {
        walk: Arc<Walk>,
        dir: PathBuf,
        ancestors: Vec<dir::DirId>,
    },
    /// Files of a folder, read in order.
    Files {
        walk: Arc<Walk>,
        files: Vec<PathBuf>,
    },
    /// The next remote file ([`RemoteRun::take`]).
    Remote,
}

/// A folder input being walked.
struct Walk {
    root: PathBuf,
    /// URL prefix of its pages.
    prefix: String,
    /// Read the WARC files met in the walk (else the plan lists them as inputs of their own).
    warcs: bool,
}

/// The readers' work: a stack shared by every reader (the last job pushed is taken first,
/// so one reader reads in exactly the order of a sorted depth-first walk, and several
/// readers work near each other in the tree), ended when it is empty and nobody is working
/// on a job that could push more.
struct Jobs {
    state: Mutex<JobState>,
    wake: Condvar,
}

struct JobState {
    stack: Vec<Job>,
    /// Readers working on a job.
    active: usize,
    /// The planner may still push jobs.
    feeding: bool,
    stop: bool,
}

impl Jobs {
    fn new() -> Jobs {
        Jobs {
            state: Mutex::new(JobState { stack: Vec::new(), active: 0, feeding: true, stop: false }),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, JobState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Push `jobs`, the first of them to be taken first.
    fn push(&self, jobs: Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        let n = jobs.len();
        self.lock().stack.extend(jobs.into_iter().rev());
        if n == 1 {
            self.wake.notify_one();
        } else {
            self.wake.notify_all();
        }
    }

    /// The next job, or `None` when there is none left (or the readers are to stop).
    fn take(&self) -> Option<Job> {
        let mut st = self.lock();
        loop {
            if st.stop {
                return None;
            }
            if let Some(job) = st.stack.pop() {
                st.active += 1;
                return Some(job);
            }
            if st.active == 0 && !st.feeding {
                return None;
            }
            st = self.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// A job taken with [`Jobs::take`] is done (the jobs it made are pushed).
    fn done(&self) {
        let mut st = self.lock();
        st.active -= 1;
        if st.active == 0 && st.stack.is_empty() {
            self.wake.notify_all();
        }
    }

    /// The planner has pushed its last job.
    fn fed(&self) {
        self.lock().feeding = false;
        self.wake.notify_all();
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.wake.notify_all();
    }

    fn stopped(&self) -> bool {
        self.lock().stop
    }

    /// [`Jobs::take`] without waiting: `None` when no job waits.
    fn try_take(&self) -> Option<Job> {
        let mut st = self.lock();
        if st.stop {
            return None;
        }
        let job = st.stack.pop()?;
        st.active += 1;
        Some(job)
    }

    fn waiting(&self) -> usize {
        self.lock().stack.len()
    }
}

/// What every reader shares.
struct Readers<'a> {
    jobs: Jobs,
    tx: Sender<Input>,
    skips: &'a Skips,
    c: &'a SourceCounters,
    max_body: u64,
    /// Remote files: taken one at a time, read by any reader.
    remote: Mutex<RemoteRun>,
    /// Held (shared) by a reader while it sends a page, and exclusively by a remote
    /// checkpoint while it waits for the pipeline to drain.
    gate: RwLock<()>,
    /// The first error that ends the run.
    error: Mutex<Option<anyhow::Error>>,
    /// Set when the pipeline downstream stopped taking pages.
    cut: AtomicBool,
    url_prefix: Option<String>,
}

/// [`run`] for one partition of a scan split over N processes (`ditto scan --partition i/N`):
/// the inputs are numbered in plan order — each WARC file and each single file is one
/// input, and each file of a directory walk (sorted by name) is one input — and this
/// partition reads those whose number ≡ i (mod N). Every partition walks directories whole
/// (the other partitions' files are passed over); WARC files of others are not opened.
///
/// The inputs are read by `opts.readers` readers at once (this thread and others): each
/// WARC file, local or remote, by one reader, inflated and parsed there; a folder walked by
/// all of them, each listing a folder or reading a batch of its files
/// ([`FILES_PER_JOB`]). Memory stays bounded: a reader holds one page at a time besides
/// its WARC reader's buffers, and the channel downstream is bounded. With one reader the
/// pages come in plan order, each folder in sorted depth-first order. A partitioned scan's
/// folders are walked by this thread alone (the files are numbered in walk order), their
/// files read by every reader.
pub fn run_partition(
    plan: Plan,
    opts: SourceOptions,
    part: Partition,
    tx: Sender<Input>,
    skips: &Skips,
    c: &SourceCounters,
) -> Result<()> {
    // Remote files are numbered among themselves for partitions.
    let remote_inputs = plan.inputs.iter().filter(|(_, k)| *k == InputKind::Remote);
    let remote_urls = remote_inputs
        .enumerate()
        .filter(|(i, _)| part.owns_input(*i as u64))
        .map(|(_, (p, _))| p.to_string_lossy().into_owned())
        .collect();
    let remote = RemoteRun::start(remote_urls, &opts.remote, opts.store.clone(), &c.remote)?;
    let remote_files = remote.files();
    let readers = Readers {
        jobs: Jobs::new(),
        tx,
        skips,
        c,
        max_body: opts.max_body_bytes,
        remote: Mutex::new(remote),
        gate: RwLock::new(()),
        error: Mutex::new(None),
        cut: AtomicBool::new(false),
        url_prefix: opts.url_prefix.clone(),
    };
    let n = opts.readers.max(1);
    c.stage.workers.store(n as u64, Relaxed);
    std::thread::scope(|s| -> Result<()> {
        let mut threads = Vec::new();
        for i in 1..n {
            let r = &readers;
            let t = std::thread::Builder::new()
                .name(format!("source-{i}"))
                .spawn_scoped(s, move || {
                    let cpu = super::metrics::CpuSpan::start();
                    r.work();
                    cpu.end(&r.c.stage);
                })
                .context("spawning a source thread");
            match t {
                Ok(t) => threads.push(t),
                Err(e) => {
                    readers.jobs.stop();
                    return Err(e);
                }
            }
        }
        let cpu = super::metrics::CpuSpan::start();
        readers.plan_jobs(&plan, &opts, part, remote_files);
        readers.jobs.fed();
        readers.work();
        cpu.end(&readers.c.stage);
        for t in threads {
            if t.join().is_err() {
                readers.fail(anyhow::anyhow!("a source thread panicked"));
            }
        }
        Ok(())
    })?;
    let Readers { remote, error, cut, .. } = readers;
    if let Some(e) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    if cut.load(Relaxed) {
        // The pipeline downstream has stopped: nothing more will be stored.
        return Ok(());
    }
    let drained = || c.drained();
    remote.into_inner().unwrap_or_else(|e| e.into_inner()).checkpoint(&drained, true)
}

impl Readers<'_> {
    /// Push the plan's inputs as jobs, in plan order; walk a partitioned scan's folders
    /// here, numbering their files.
    fn plan_jobs(&self, plan: &Plan, opts: &SourceOptions, part: Partition, remote_files: usize) {
        let mut unit = 0u64;
        let mut mine = || {
            let owned = part.owns_input(unit);
            unit += 1;
            owned
        };
        let mut jobs = Vec::new();
        let mut remote_jobs = remote_files;
        for (path, kind) in &plan.inputs {
            match kind {
                InputKind::Warc if mine() => jobs.push(Job::Warc(path.clone())),
                InputKind::File if mine() => jobs.push(Job::File(path.clone())),
                InputKind::Warc | InputKind::File => {}
                InputKind::Remote => {
                    // As many jobs as files this run reads, where the plan has them.
                    if remote_jobs > 0 {
                        remote_jobs -= 1;
                        jobs.push(Job::Remote);
                    }
                }
                InputKind::Dir => {
                    let prefix = match dir::url_prefix_for(path, opts.url_prefix.as_deref()) {
                        Ok(p) => p,
                        Err(e) => {
                            self.read_error(format!("{}: {e}", printable(&path.display().to_string())));
                            continue;
                        }
                    };
                    let walk = Arc::new(Walk { root: path.clone(), prefix, warcs: !plan.dir_warcs_listed });
                    if part == Partition::SINGLE {
                        let ancestors = match dir::DirId::of(path) {
                            Ok(id) => vec![id],
                            Err(e) => {
                                self.read_error(format!("{}: {e}", printable(&path.display().to_string())));
                                continue;
                            }
                        };
                        jobs.push(Job::Dir { walk, dir: path.clone(), ancestors });
                    } else {
                        // Numbered in walk order: the jobs so far first, then this walk's.
                        self.jobs.push(std::mem::take(&mut jobs));
                        self.walk_numbered(&walk, &mut mine);
                    }
                }
            }
        }
        self.jobs.push(jobs);
    }

    /// Walk a folder on this thread (sorted, as [`DirSource`]), pushing the files
    /// `mine` owns as jobs for every reader; holds back while many jobs wait.
    fn walk_numbered(&self, walk: &Arc<Walk>, mine: &mut impl FnMut() -> bool) {
        let limit = 64 * self.c.stage.workers.load(Relaxed).max(1) as usize;
        let mut batch = Vec::new();
        let entries = walkdir::WalkDir::new(&walk.root).follow_links(true).sort_by_file_name();
        for entry in entries {
            if self.jobs.stopped() {
                return;
            }
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    // An error is numbered as a file would be.
                    if mine() {
                        let path = e.path().map(Path::to_path_buf).unwrap_or_default();
                        self.read_error(dir::DirError { path, message: e.to_string() }.to_string());
                    }
                    continue;
                }
            };
            let kind = entry.file_type();
            if !kind.is_file() {
                if !kind.is_dir() {
                    self.skips.add(SkipReason::NotRegularFile, 1);
                }
                continue;
            }
            if dir::is_warc_name(entry.path()) || !mine() {
                continue;
            }
            batch.push(entry.into_path());
            if batch.len() >= FILES_PER_JOB {
                self.jobs.push(vec![Job::Files { walk: walk.clone(), files: std::mem::take(&mut batch) }]);
                // Many jobs waiting: read some here rather than list further.
                while self.jobs.waiting() > limit {
                    match self.jobs.try_take() {
                        Some(job) => self.run_one(job, &mut Instant::now()),
                        None => break,
                    }
                }
            }
        }
        self.jobs.push(vec![Job::Files { walk: walk.clone(), files: batch }]);
    }

    /// A reader: jobs until there are none left.
    fn work(&self) {
        while let Some(job) = self.jobs.take() {
            self.run_one(job, &mut Instant::now());
        }
    }

    /// Run a job taken from the stack; `busy`: when the work on it began.
    fn run_one(&self, job: Job, busy: &mut Instant) {
        let go_on = match self.run_job(job, busy) {
            Ok(go_on) => go_on,
            Err(e) => {
                self.fail(e);
                true
            }
        };
        self.c.stage.add_busy(busy.elapsed());
        self.jobs.done();
        if !go_on {
            self.cut.store(true, Relaxed);
            self.jobs.stop();
        }
    }

    fn fail(&self, e: anyhow::Error) {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
        self.jobs.stop();
    }

    fn read_error(&self, msg: String) {
        self.skips.add(SkipReason::ReadError, 1);
        self.skips.error(msg);
    }

    /// Send a page on; false when the pipeline downstream has stopped. `busy`: when this
    /// reader's work on the page began (its time until now is the source's busy time).
    fn send(&self, page: Page, busy: &mut Instant) -> bool {
        self.c.stage.record(busy.elapsed(), true);
        let ok = {
            let _open = self.gate.read().unwrap_or_else(|e| e.into_inner());
            self.c.pages_read.fetch_add(1, Relaxed);
            self.c.payload_bytes.fetch_add(page.body.len() as u64, Relaxed);
            self.tx.send(page.into()).is_ok()
        };
        *busy = Instant::now();
        ok
    }

    /// One job; false when the pipeline downstream has stopped.
    fn run_job(&self, job: Job, busy: &mut Instant) -> Result<bool> {
        let max_body = usize::try_from(self.max_body).unwrap_or(usize::MAX);
        match job {
            Job::Warc(path) => {
                let name = path.display().to_string();
                let pages = match WarcPages::open(&path) {
                    Ok(p) => p.with_max_size(max_body),
                    Err(e) => {
                        self.read_error(format!("{}: {e}", printable(&name)));
                        return Ok(true);
                    }
                };
                Ok(self.send_warc_pages(pages, &name, busy))
            }
            Job::Remote => {
                let taken = self.remote.lock().unwrap_or_else(|e| e.into_inner()).take();
                let Some((url, mut reader)) = taken else {
                    bail!("remote inputs out of step (a bug)");
                };
                let pages = WarcPages::from_reader(&mut reader, &url, 0).with_max_size(max_body);
                if !self.send_warc_pages(pages, &url, busy) {
                    return Ok(false);
                }
                let mut remote = self.remote.lock().unwrap_or_else(|e| e.into_inner());
                if remote.done(&url, &reader, &self.c.remote) {
                    // No reader sends while the pipeline drains.
                    let _closed = self.gate.write().unwrap_or_else(|e| e.into_inner());
                    remote.checkpoint(&|| self.c.drained(), false)?;
                }
                Ok(true)
            }
            Job::File(path) => {
                match single_file(&path, self.url_prefix.as_deref(), self.max_body) {
                    Ok(SingleFile::Page(page)) => {
                        self.c.input_bytes_done.fetch_add(page.body.len() as u64, Relaxed);
                        return Ok(self.send(page, busy));
                    }
                    Ok(SingleFile::TooLarge) => self.skips.add(SkipReason::TooLarge, 1),
                    Ok(SingleFile::NotRegular) => self.skips.add(SkipReason::NotRegularFile, 1),
                    Err(e) => self.read_error(format!("{}: {e}", printable(&path.display().to_string()))),
                }
                Ok(true)
            }
            Job::Dir { walk, dir, ancestors } => {
                let entries = match dir::list_dir(&dir, &ancestors) {
                    Ok(e) => e,
                    Err(e) => {
                        self.read_error(e.to_string());
                        return Ok(true);
                    }
                };
                let mut jobs = Vec::new();
                let mut files = Vec::new();
                for entry in entries {
                    match entry {
                        dir::Entry::File(p) => {
                            files.push(p);
                            if files.len() >= FILES_PER_JOB {
                                jobs.push(Job::Files {
                                    walk: walk.clone(),
                                    files: std::mem::take(&mut files),
                                });
                            }
                            continue;
                        }
                        dir::Entry::Warc(p) if walk.warcs => {
                            if !files.is_empty() {
                                jobs.push(Job::Files {
                                    walk: walk.clone(),
                                    files: std::mem::take(&mut files),
                                });
                            }
                            jobs.push(Job::Warc(p));
                        }
                        dir::Entry::Warc(_) => {}
                        dir::Entry::Dir(p, id) => {
                            if !files.is_empty() {
                                jobs.push(Job::Files {
                                    walk: walk.clone(),
                                    files: std::mem::take(&mut files),
                                });
                            }
                            let mut up = ancestors.clone();
                            up.push(id);
                            jobs.push(Job::Dir { walk: walk.clone(), dir: p, ancestors: up });
                        }
                        dir::Entry::NotRegular => self.skips.add(SkipReason::NotRegularFile, 1),
                        dir::Entry::Failed(e) => self.read_error(e.to_string()),
                    }
                }
                if !files.is_empty() {
                    jobs.push(Job::Files { walk, files });
                }
                self.jobs.push(jobs);
                Ok(true)
            }
            Job::Files { walk, files } => {
                for path in files {
                    match dir::read_file_page(&walk.root, &walk.prefix, &path, self.max_body) {
                        dir::FileRead::Page(page) => {
                            self.c.input_bytes_done.fetch_add(page.body.len() as u64, Relaxed);
                            if !self.send(page, busy) {
                                return Ok(false);
                            }
                        }
                        dir::FileRead::TooLarge => self.skips.add(SkipReason::TooLarge, 1),
                        dir::FileRead::Failed(e) => self.read_error(e.to_string()),
                    }
                }
                Ok(true)
            }
        }
    }
}

impl Readers<'_> {
    /// Send the pages of one WARC file on; false when the pipeline downstream has stopped.
    fn send_warc_pages<R: std::io::Read>(
        &self,
        mut pages: WarcPages<R>,
        name: &str,
        busy: &mut Instant,
    ) -> bool {
        let c = self.c;
        let mut last = 0u64;
        while let Some(item) = pages.next() {
            let off = pages.input_offset();
            c.input_bytes_done.fetch_add(off.saturating_sub(last), Relaxed);
            last = off;
            match item {
                Ok(page) => {
                    if !self.send(page, busy) {
                        return false;
                    }
                }
                Err(e) => {
                    self.skips.add(SkipReason::of_warc_error(&e), 1);
                    self.skips.error(format!("{}: {e}", printable(name)));
                }
            }
        }
        c.input_bytes_done.fetch_add(pages.file_size().saturating_sub(last), Relaxed);
        let st = pages.stats();
        self.skips.add(SkipReason::TooLarge, st.warc.oversized + st.truncated);
        true
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages (URL, body) the source sends for `inputs` with `readers` readers, in arrival
    /// order, and its skip counts.
    type Pages = Vec<(String, Vec<u8>)>;

    fn read_all(inputs: &[PathBuf], readers: usize) -> (Pages, Vec<(&'static str, u64)>) {
        let plan = plan_for_scan(inputs, false, Partition::SINGLE).unwrap();
        let mut opts = SourceOptions::local(Some("http://".into()), 2000);
        opts.readers = readers;
        let (tx, rx) = crossbeam_channel::bounded(4);
        let skips = Skips::default();
        let c = SourceCounters::default();
        let pages = std::thread::scope(|s| {
            let got =
                s.spawn(move || rx.iter().map(|i: Input| (i.page.url, i.page.body)).collect::<Vec<_>>());
            run(plan, opts, tx, &skips, &c).unwrap();
            got.join().unwrap()
        });
        assert_eq!(c.pages_read.load(Relaxed), pages.len() as u64);
        assert_eq!(c.stage.snapshot().items_out, pages.len() as u64);
        assert_eq!(c.stage.workers.load(Relaxed), readers as u64);
        (pages, skips.counts().into_iter().collect())
    }

    /// A folder walked by four readers gives the pages one reader gives (one reader: in the
    /// sorted depth-first order of `DirSource`), with the same skips: a file over the cap, a
    /// FIFO, a symlink loop, and WARC files met in the walk read as WARC inputs.
    #[test]
    fn four_readers_read_what_one_reads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("site");
        for h in 0..3 {
            for d in 0..4 {
                let sub = root.join(format!("h{h}.test/d{d}"));
                std::fs::create_dir_all(&sub).unwrap();
                for f in 0..(20 + 17 * d) {
                    std::fs::write(sub.join(format!("p{f}.html")), format!("<p>{h} {d} {f}</p>")).unwrap();
                }
            }
        }
        std::fs::write(root.join("h0.test/big.html"), vec![b'x'; 3000]).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("h1.test"), root.join("h1.test/d2/up")).unwrap();
            let fifo = root.join("h2.test/pipe.html");
            let _ = std::process::Command::new("mkfifo").arg(&fifo).status();
        }
        let warc = crate::source::dir::warc_files_under(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/warc/valid/warcio"),
        );
        let warc = warc.iter().find(|p| p.ends_with("example.warc.gz")).unwrap();
        std::fs::copy(warc, root.join("h2.test/crawl.warc.gz")).unwrap();

        let inputs = [root.clone()];
        let (one, skips_one) = read_all(&inputs, 1);
        let walked: Vec<String> = crate::source::dir::DirSource::new(&root, Some("http://"))
            .unwrap()
            .with_max_file(2000)
            .filter_map(|p| p.ok().map(|p| p.url))
            .collect();
        let urls: Vec<&str> = one.iter().map(|(u, _)| u.as_str()).collect();
        // DirSource passes over WARC files; the walk read this one where it met it.
        let from_dir: Vec<&str> = urls.iter().copied().filter(|u| u.contains(".test/")).collect();
        assert_eq!(from_dir, walked);
        assert!(urls.len() > from_dir.len(), "the WARC file's pages: {urls:?}");
        assert!(skips_one.contains(&("too_large", 1)), "{skips_one:?}");
        assert!(skips_one.iter().any(|(k, _)| *k == "read_error"), "the loop: {skips_one:?}");

        let from_warc = urls.len() - from_dir.len();
        let (mut four, skips_four) = read_all(&inputs, 4);
        let mut one = one;
        one.sort();
        four.sort();
        assert_eq!(one.len(), 3 * (20 + 37 + 54 + 71) + from_warc);
        assert!(one == four, "four readers read other pages");
        assert_eq!(skips_one, skips_four);
    }
}
