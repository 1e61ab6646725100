//! How a store comes to be, is opened, is shared and is checked.
//!
//! - **Creation.** Only the commands that write verdicts (`ditto scan`, `ditto crawl`,
//!   `ditto demo`) create a store ([`Store::create_or_open`]); every other command opens an
//!   existing one ([`Store::open_existing`]): a missing path is an error naming it.
//! - **Marker.** A store directory holds [`MARKER`] (`ditto-store.json`: what it is, its
//!   format version, who created it, and the nonce of its last clean close). A path that
//!   exists and is neither a ditto store nor an empty directory is refused and never written
//!   into. A store written before the marker existed (sled's `conf` + `db`, with ditto's tree
//!   and format stamp) is adopted.
//! - **Damage.** sled panics on some damaged files (an index out of bounds while recovering a
//!   truncated segment, …). Every sled call goes through [`guard`], which catches the panic,
//!   keeps its message off the terminal and turns it into [`StoreError::Damaged`]. A store that
//!   sled opens but that has lost data (its files truncated or replaced, so sled recovers an
//!   older state) is caught by the close nonce: at every clean close a fresh nonce is written
//!   into the store and then into the marker; on open the store must hold the marker's nonce.
//!   The marker is also marked `open` from an open to its clean close. A store found open
//!   was left by a holder that never closed it (kill -9, crash): sled recovers such files to
//!   a state at or before the kill, once seen (CI, after a SIGKILL) to be older than the last
//!   nonce's write, so the nonce is not checked then; lost records still show through the
//!   record counts ([`Counts`]) and `ditto store check`.
//! - **Holder.** sled allows one process per store. The opener records itself in [`OWNER`]
//!   (`ditto-store.owner`: command, pid); a second opener that finds the lock taken reports
//!   `store in use by ditto crawl (pid N)` instead of sled's raw lock error. A long-running
//!   holder (`ditto crawl`, `ditto review`, `ditto scan`) also serves consistent snapshots on
//!   loopback ([`Store::serve_snapshots`]; address and a random token in the owner file, which
//!   only the store's owner can read): [`Store::open_for_reading`] fetches one into a temporary
//!   store, so `ditto report`, `ditto stats` and `ditto labels export` work while a crawl runs.
//! - **Check.** [`Store::check`] walks every sled tree and decodes every record.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sled::IVec;

use crate::{CompactSeenSet, Result, Store, StoreError, FORMAT_VERSION, READABLE_OLDER_FORMAT};

/// The marker file that makes a directory a ditto store.
pub const MARKER: &str = "ditto-store.json";
/// The file naming the process that holds the store open.
pub const OWNER: &str = "ditto-store.owner";
/// The value of the marker's `kind` field.
const MARKER_KIND: &str = "ditto store";
/// The key of the close nonce in the store (`m/` meta).
const CLOSE_NONCE_KEY: &[u8] = b"m/close_nonce";
/// The key of the record counts ([`Counts`]).
const COUNTS_KEY: &[u8] = b"m/counts";
/// The key of the format stamp (written by `Store::check_version`).
const FORMAT_KEY: &[u8] = b"m/format_version";
/// The sled tree holding everything of ditto.
pub(crate) const TREE: &str = "ditto";

// ---------------------------------------------------------------------------------------
// The panic guard.

thread_local! {
    /// > 0 while this thread runs inside [`guard`].
    static GUARDED: Cell<u32> = const { Cell::new(0) };
    /// The message of the last panic caught on this thread.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: std::sync::Once = std::sync::Once::new();

/// Install (once) a panic hook that keeps sled's panics, and any panic inside [`guard`], off
/// the terminal: they become [`StoreError::Damaged`] errors. Other panics go to the hook that
/// was there before.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_sled = info.location().is_some_and(|l| l.file().contains("/sled-"));
            let guarded = GUARDED.with(|g| g.get() > 0);
            if !(guarded || in_sled) {
                return previous(info);
            }
            let what = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            let at = info
                .location()
                .map(|l| {
                    let file = l.file().rsplit("/src/").next().unwrap_or(l.file());
                    format!(" at {file}:{}", l.line())
                })
                .unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(escape(&format!("{what}{at}"))));
        }));
    });
}

/// Run `f` (a call into sled), turning a panic into [`StoreError::Damaged`].
pub(crate) fn guard<T>(f: impl FnOnce() -> T) -> Result<T> {
    install_hook();
    GUARDED.with(|g| g.set(g.get() + 1));
    let r = std::panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get().saturating_sub(1)));
    r.map_err(|_| {
        let why = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "unknown failure".into());
        StoreError::Damaged(format!("the storage engine (sled) failed reading it: {why}"))
    })
}

/// Like [`guard`] for a call returning sled's `Result`.
fn sled_call<T>(f: impl FnOnce() -> sled::Result<T>) -> Result<T> {
    guard(f)?.map_err(StoreError::from)
}

/// What every guarded handle of one store shares: where the store is (for messages) and
/// whether sled failed on it.
pub(crate) struct Health {
    /// Set when a sled call panicked: sled's state is no longer trusted, and the store is not
    /// closed with a fresh nonce (see [`close_cleanly`]).
    failed: AtomicBool,
    /// The store's directory as shown in messages.
    shown: String,
}

impl Health {
    fn new(shown: String) -> Arc<Health> {
        Arc::new(Health { failed: AtomicBool::new(false), shown })
    }

    /// sled's error on this store as a [`StoreError`]: an I/O error names the store's
    /// directory and the OS's reason in words ([`StoreError::Disk`]).
    fn error(&self, e: sled::Error) -> StoreError {
        match e {
            sled::Error::Io(cause) => StoreError::Disk { path: self.shown.clone(), cause },
            e => StoreError::from(e),
        }
    }
}

/// [`guard`] on one store: a panic also sets the store's `failed` flag.
fn guard_on<T>(health: &Health, f: impl FnOnce() -> T) -> Result<T> {
    let r = guard(f);
    if r.is_err() {
        health.failed.store(true, Ordering::SeqCst);
    }
    r
}

/// [`sled_call`] on one store (see [`guard_on`]).
fn sled_call_on<T>(health: &Health, f: impl FnOnce() -> sled::Result<T>) -> Result<T> {
    guard_on(health, f)?.map_err(|e| health.error(e))
}

impl From<sled::Error> for StoreError {
    fn from(e: sled::Error) -> StoreError {
        match e {
            sled::Error::Corruption { at, .. } => StoreError::Damaged(match at {
                Some(at) => format!("the storage engine (sled) found corrupt data at {at:?}"),
                None => "the storage engine (sled) found corrupt data".into(),
            }),
            sled::Error::ReportableBug(why) => {
                StoreError::Damaged(format!("the storage engine (sled) failed: {}", escape(&why)))
            }
            e => StoreError::Sled(e),
        }
    }
}

/// `s` with control characters escaped (messages never print raw bytes).
pub(crate) fn escape(s: &str) -> String {
    s.chars().flat_map(|c| if c.is_control() { c.escape_default().collect() } else { vec![c] }).collect()
}

// ---------------------------------------------------------------------------------------
// sled behind the guard.

/// A sled database whose every call is guarded (see [`guard`]).
pub(crate) struct Db(Option<sled::Db>, Arc<Health>);

/// A sled tree whose every call is guarded.
#[derive(Clone)]
pub(crate) struct Tree(Option<sled::Tree>, Arc<Health>);

/// A guarded sled iterator: a panic or error ends it after one `Err` item.
pub(crate) struct Iter(Option<sled::Iter>, Arc<Health>);

impl Db {
    fn inner(&self) -> &sled::Db {
        // Only `Drop` takes the database out.
        self.0.as_ref().expect("a store's database is present until it is dropped")
    }

    pub(crate) fn generate_id(&self) -> Result<u64> {
        sled_call_on(&self.1, || self.inner().generate_id())
    }

    pub(crate) fn flush(&self) -> Result<usize> {
        sled_call_on(&self.1, || self.inner().flush())
    }

    pub(crate) fn size_on_disk(&self) -> Result<u64> {
        sled_call_on(&self.1, || self.inner().size_on_disk())
    }

    fn open_tree(&self, name: &[u8]) -> Result<Tree> {
        Ok(Tree(Some(sled_call_on(&self.1, || self.inner().open_tree(name))?), Arc::clone(&self.1)))
    }

    fn tree_names(&self) -> Result<Vec<IVec>> {
        guard_on(&self.1, || self.inner().tree_names())
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Some(db) = self.0.take() {
            let _ = guard(move || drop(db));
        }
    }
}

impl Tree {
    fn inner(&self) -> &sled::Tree {
        self.0.as_ref().expect("a store's tree is present until it is dropped")
    }

    pub(crate) fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<IVec>> {
        sled_call_on(&self.1, || self.inner().get(key))
    }

    pub(crate) fn insert(&self, key: impl AsRef<[u8]>, value: impl Into<IVec>) -> Result<Option<IVec>> {
        sled_call_on(&self.1, || self.inner().insert(key, value))
    }

    pub(crate) fn remove(&self, key: impl AsRef<[u8]>) -> Result<Option<IVec>> {
        sled_call_on(&self.1, || self.inner().remove(key))
    }

    pub(crate) fn contains_key(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        sled_call_on(&self.1, || self.inner().contains_key(key))
    }

    pub(crate) fn apply_batch(&self, batch: sled::Batch) -> Result<()> {
        sled_call_on(&self.1, || self.inner().apply_batch(batch))
    }

    pub(crate) fn flush(&self) -> Result<usize> {
        sled_call_on(&self.1, || self.inner().flush())
    }

    pub(crate) fn iter(&self) -> Iter {
        Iter(guard_on(&self.1, || self.inner().iter()).ok(), Arc::clone(&self.1))
    }

    pub(crate) fn scan_prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        Iter(guard_on(&self.1, || self.inner().scan_prefix(prefix)).ok(), Arc::clone(&self.1))
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            let _ = guard(move || drop(t));
        }
    }
}

impl Iter {
    fn step(&mut self, back: bool) -> Option<Result<(IVec, IVec)>> {
        let it = self.0.as_mut()?;
        let r = guard_on(&self.1, || if back { it.next_back() } else { it.next() });
        let item = match r {
            Ok(None) => None,
            Ok(Some(Ok(kv))) => return Some(Ok(kv)),
            Ok(Some(Err(e))) => Some(Err(self.1.error(e))),
            Err(damaged) => Some(Err(damaged)),
        };
        if let Some(dead) = self.0.take() {
            let _ = guard(move || drop(dead));
        }
        item
    }
}

impl Iterator for Iter {
    type Item = Result<(IVec, IVec)>;
    fn next(&mut self) -> Option<Self::Item> {
        self.step(false)
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.step(true)
    }
}

impl Drop for Iter {
    fn drop(&mut self) {
        if let Some(it) = self.0.take() {
            let _ = guard(move || drop(it));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Record counts.

/// How many pages, neighborhoods and page texts the store's batches wrote, kept under
/// `m/counts` (3 × u64 LE) and updated in the same atomic batch as the records. sled can lose
/// records to damaged files without an error (a leaf it cannot read is left out of an
/// iteration); a full pass over pages, neighborhoods or texts that finds fewer than recorded
/// ends with [`StoreError::Damaged`] ([`Counted`]). Stores created before the counts existed
/// have none and are not checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub pages: u64,
    pub neighborhoods: u64,
    pub texts: u64,
    /// What the pages written hold, summed (4 × u64 LE after the counts), so that the end of
    /// a scan or crawl need not read every page record again; none in stores made before
    /// they were kept (those are summed by a full pass).
    pub page_sums: Option<PageSums>,
}

/// Sums over the pages written: [`crate::StoreTotals`] without a pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageSums {
    pub chunks: u64,
    pub labeled_chunks: u64,
    pub pages_with_labeled_chunks: u64,
    /// Σ contains, fixed point ([`detector::neighborhood::contains_fixed`]).
    pub contains_sum_fixed: u64,
}

impl PageSums {
    /// The sums of `t` (its page count aside, kept in [`Counts::pages`]).
    pub(crate) fn of(t: &crate::StoreTotals) -> PageSums {
        PageSums {
            chunks: t.chunks,
            labeled_chunks: t.labeled_chunks,
            pages_with_labeled_chunks: t.pages_with_labeled_chunks,
            contains_sum_fixed: t.contains_sum_fixed,
        }
    }

    fn add(&mut self, o: &PageSums) {
        self.chunks += o.chunks;
        self.labeled_chunks += o.labeled_chunks;
        self.pages_with_labeled_chunks += o.pages_with_labeled_chunks;
        self.contains_sum_fixed += o.contains_sum_fixed;
    }
}

impl Counts {
    /// The counts of a new store: all zero, the page sums kept.
    pub(crate) fn fresh() -> Counts {
        Counts { page_sums: Some(PageSums::default()), ..Counts::default() }
    }

    fn encode(&self) -> Vec<u8> {
        let mut n = vec![self.pages, self.neighborhoods, self.texts];
        if let Some(s) = &self.page_sums {
            n.extend([s.chunks, s.labeled_chunks, s.pages_with_labeled_chunks, s.contains_sum_fixed]);
        }
        n.iter().flat_map(|n| n.to_le_bytes()).collect()
    }

    fn decode(v: &[u8]) -> Option<Counts> {
        let n = |i: usize| {
            v.get(i * 8..i * 8 + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()).map(u64::from_le_bytes)
        };
        let page_sums = match v.len() {
            24 => None,
            56 => Some(PageSums {
                chunks: n(3)?,
                labeled_chunks: n(4)?,
                pages_with_labeled_chunks: n(5)?,
                contains_sum_fixed: n(6)?,
            }),
            _ => return None,
        };
        Some(Counts { pages: n(0)?, neighborhoods: n(1)?, texts: n(2)?, page_sums })
    }
}

/// The counts recorded in the store, if it keeps them (unreadable counts read as none: the
/// full pass that wants them meets the damage itself, and `store check` reports it).
pub(crate) fn recorded_counts(tree: &Tree) -> Option<Counts> {
    tree.get(COUNTS_KEY).ok().flatten().and_then(|v| Counts::decode(&v))
}

/// Add a batch's new records to the recorded counts, in the batch (when the store keeps them).
pub(crate) fn add_counts(tree: &Tree, batch: &mut sled::Batch, new: &Counts) -> Result<()> {
    let Some(v) = tree.get(COUNTS_KEY)? else { return Ok(()) };
    let mut c = Counts::decode(&v)
        .ok_or_else(|| crate::corrupt("m/counts", "record counts are neither 24 nor 56 bytes"))?;
    c.pages += new.pages;
    c.neighborhoods += new.neighborhoods;
    c.texts += new.texts;
    // A store made before the sums were kept stays without them.
    if let (Some(sums), Some(more)) = (&mut c.page_sums, &new.page_sums) {
        sums.add(more);
    }
    batch.insert(COUNTS_KEY, c.encode());
    Ok(())
}

/// A full pass over one kind of record, checked at its end against the recorded count.
pub(crate) struct Counted<I> {
    inner: I,
    seen: u64,
    expected: Option<u64>,
    what: &'static str,
    done: bool,
}

impl<I> Counted<I> {
    pub(crate) fn new(inner: I, expected: Option<u64>, what: &'static str) -> Counted<I> {
        Counted { inner, seen: 0, expected, what, done: false }
    }
}

impl<T, I: Iterator<Item = Result<T>>> Iterator for Counted<I> {
    type Item = Result<T>;
    fn next(&mut self) -> Option<Result<T>> {
        if self.done {
            return None;
        }
        match self.inner.next() {
            Some(Ok(x)) => {
                self.seen += 1;
                Some(Ok(x))
            }
            Some(Err(e)) => {
                self.done = true;
                Some(Err(e))
            }
            None => {
                self.done = true;
                match self.expected {
                    Some(n) if n != self.seen => Some(Err(StoreError::Damaged(format!(
                        "it holds {} {} but its batches wrote {n}: records were lost (files damaged?)",
                        self.seen, self.what
                    )))),
                    _ => None,
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Marker, owner, opening.

/// What the marker file says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    /// Always "ditto store".
    pub kind: String,
    /// The format version written when the store was last closed cleanly.
    pub format_version: u32,
    /// The command that created the store (e.g. "ditto crawl").
    pub created_by: String,
    /// Seconds since the Unix epoch.
    pub created_at: u64,
    /// The nonce written into the store at its last clean close (`None` before the first).
    #[serde(default)]
    pub close_nonce: Option<String>,
    /// The nonce before it, accepted too while a close is under way.
    #[serde(default)]
    pub previous_close_nonce: Option<String>,
    /// Set (durably) when a process opens the store, cleared by its clean close. Found set at
    /// an open, the last holder stopped without closing (killed, crashed, disk full): sled
    /// then recovers the store to a state of its own choosing at or before the kill, which
    /// may lie before the close nonce's write (seen once in CI after a SIGKILL), so the nonce
    /// cannot judge it. Stores marked by an older ditto read as `false`.
    #[serde(default)]
    pub open: bool,
}

/// Who holds a store open (the owner file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The command, e.g. "ditto crawl".
    pub command: String,
    pub pid: u32,
    /// Where the holder serves snapshots (loopback), when it does.
    #[serde(default)]
    pub snapshot_addr: Option<SocketAddr>,
    #[serde(default)]
    pub token: Option<String>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (pid {})", escape(&self.command), self.pid)
    }
}

/// What this process opened: a store directory (marker and owner file kept up to date), or
/// a temporary copy of a snapshot served by the process that holds one.
pub(crate) enum Life {
    Dir { path: PathBuf, owner_written: bool, server: Mutex<Option<SnapshotServer>> },
    Snapshot { of: Holder },
}

static HOLDER_NAME: OnceLock<String> = OnceLock::new();

/// Name this process in owner files and markers (e.g. "ditto crawl"); set once, early.
/// Without it the name is the program name.
pub fn set_holder_name(name: &str) {
    let _ = HOLDER_NAME.set(name.to_string());
}

fn holder_name() -> String {
    HOLDER_NAME.get().cloned().unwrap_or_else(|| {
        std::env::args()
            .next()
            .and_then(|a| Path::new(&a).file_name().map(|f| f.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "ditto".into())
    })
}

/// What is at a path given as a store.
enum Found {
    Missing,
    EmptyDir,
    Store(Marker),
    /// sled's files without a marker: a store written before markers, if ditto's tree is there.
    Unmarked,
}

fn not_a_store(path: &Path, why: &str) -> StoreError {
    StoreError::NotAStore { path: path.display().to_string(), why: why.into() }
}

fn look_at(path: &Path) -> Result<Found> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(StoreError::Io { path: path.display().to_string(), cause: e }),
        Ok(m) => m,
    };
    let meta = if meta.file_type().is_symlink() { std::fs::metadata(path).unwrap_or(meta) } else { meta };
    if !meta.is_dir() {
        return Err(not_a_store(path, "it is not a directory"));
    }
    let marker = path.join(MARKER);
    match std::fs::read(&marker) {
        Ok(bytes) => {
            let m: Marker = serde_json::from_slice(&bytes).map_err(|e| {
                StoreError::Damaged(format!("its marker file {} is unreadable: {e}", marker.display()))
            })?;
            if m.kind != MARKER_KIND {
                return Err(not_a_store(path, &format!("{MARKER} does not describe a ditto store")));
            }
            return Ok(Found::Store(m));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(StoreError::Io { path: marker.display().to_string(), cause: e }),
    }
    let mut names = Vec::new();
    let entries =
        std::fs::read_dir(path).map_err(|e| StoreError::Io { path: path.display().to_string(), cause: e })?;
    for e in entries {
        let e = e.map_err(|e| StoreError::Io { path: path.display().to_string(), cause: e })?;
        names.push(e.file_name().to_string_lossy().into_owned());
    }
    if names.is_empty() {
        return Ok(Found::EmptyDir);
    }
    if names.iter().any(|n| n == "conf") && names.iter().any(|n| n == "db") {
        return Ok(Found::Unmarked);
    }
    Err(not_a_store(path, "it is a directory without a ditto store marker, and not empty"))
}

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// 128 unpredictable bits, hex (std's hasher keys come from the OS's random source).
fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut s = String::new();
    for i in 0..2u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        h.write_u128(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        s.push_str(&format!("{:016x}", h.finish()));
    }
    s
}

/// Write `bytes` to `path` through a temporary file and a rename; `private`: mode 0600;
/// `durable`: synced to disk before the rename.
fn write_file_atomically(path: &Path, bytes: &[u8], private: bool, durable: bool) -> Result<()> {
    let io = |e| StoreError::Io { path: path.display().to_string(), cause: e };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let written = opts.open(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        if durable {
            f.sync_all()?;
        }
        Ok(())
    });
    // A failed write (a full disk) leaves no temporary file behind; `path` is untouched.
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(io(e))
        }
    }
}

fn write_marker(dir: &Path, m: &Marker) -> Result<()> {
    let json = serde_json::to_vec_pretty(m).map_err(|e| StoreError::Damaged(e.to_string()))?;
    write_file_atomically(&dir.join(MARKER), &json, false, true)
}

/// The holder recorded in a store directory, if any.
pub fn read_holder(dir: &Path) -> Option<Holder> {
    std::fs::read(dir.join(OWNER)).ok().and_then(|b| serde_json::from_slice(&b).ok())
}

fn is_lock_error(e: &sled::Error) -> bool {
    matches!(e, sled::Error::Io(io) if io.to_string().contains("could not acquire lock")
        || io.kind() == std::io::ErrorKind::WouldBlock)
}

/// sled's page cache for a store opened by [`Store::create_or_open`] and the readers.
pub const DEFAULT_CACHE_BYTES: u64 = 256 << 20;

/// sled's page cache for a crawl's store (part of the crawl's documented memory bound). sled
/// uses several times its nominal cache (issue 26: 256, 64, 16 and 8 MiB gave peak RSS of
/// 4.5 GiB, ≈ 560–720, ≈ 410 and ≈ 340 MiB on the same hostile crawl; 4 MiB no less than 8).
pub const CRAWL_CACHE_BYTES: u64 = 8 << 20;

/// How a store is being opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Create,
    Existing,
}

impl Store {
    /// Open the store at `path`, creating it when the path is missing or an empty directory:
    /// for the commands that write verdicts (`ditto scan`, `ditto crawl`, `ditto demo`).
    pub fn create_or_open(path: &Path) -> Result<Store> {
        open_dir(path, Mode::Create, DEFAULT_CACHE_BYTES)
    }

    /// [`Store::create_or_open`] with sled's page cache capped at `cache_bytes` (a crawl
    /// uses [`CRAWL_CACHE_BYTES`] so its memory bound holds).
    pub fn create_or_open_with_cache(path: &Path, cache_bytes: u64) -> Result<Store> {
        open_dir(path, Mode::Create, cache_bytes)
    }

    /// Open an existing store: a missing path, or one that is not a ditto store, is an error.
    pub fn open_existing(path: &Path) -> Result<Store> {
        open_dir(path, Mode::Existing, DEFAULT_CACHE_BYTES)
    }

    /// Open an existing store to read it. When another process holds it and serves
    /// snapshots (`ditto crawl`, `ditto review`, `ditto scan`), read a consistent snapshot
    /// of it instead ([`Store::snapshot_of`] then names the holder).
    pub fn open_for_reading(path: &Path) -> Result<Store> {
        match open_dir(path, Mode::Existing, DEFAULT_CACHE_BYTES) {
            Err(StoreError::InUse { holder: Some(h), path: p }) if h.snapshot_addr.is_some() => {
                fetch_snapshot(&h).map_err(|e| StoreError::SnapshotFailed {
                    holder: h.to_string(),
                    path: p,
                    why: e.to_string(),
                })
            }
            r => r,
        }
    }

    /// The process whose snapshot this store is, when it was opened from one.
    pub fn snapshot_of(&self) -> Option<&Holder> {
        match &self.life {
            Life::Snapshot { of } => Some(of),
            Life::Dir { .. } => None,
        }
    }

    /// Serve consistent snapshots of this store on a loopback port until it is dropped, so
    /// that `ditto report`/`stats`/`labels export` can read it while this process holds it.
    /// Returns the address (also recorded in the owner file).
    pub fn serve_snapshots(&self) -> Result<SocketAddr> {
        let Life::Dir { path, server, .. } = &self.life else {
            return Err(StoreError::Damaged("a snapshot cannot serve snapshots".into()));
        };
        let mut server = server.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = server.as_ref() {
            return Ok(s.addr);
        }
        let token = random_hex();
        let s = SnapshotServer::start(self.tree.clone(), Arc::clone(&self.write_lock), token.clone())
            .map_err(|e| StoreError::Io { path: "127.0.0.1:0".into(), cause: e })?;
        let holder = Holder {
            command: holder_name(),
            pid: std::process::id(),
            snapshot_addr: Some(s.addr),
            token: Some(token),
        };
        write_owner(path, &holder)?;
        let addr = s.addr;
        *server = Some(s);
        Ok(addr)
    }
}

fn write_owner(dir: &Path, h: &Holder) -> Result<()> {
    let json = serde_json::to_vec(h).map_err(|e| StoreError::Damaged(e.to_string()))?;
    // Not synced: the owner file only says who holds the store now and goes at close. After
    // a crash it may be stale, empty or missing, which readers take as "not held" (the lock
    // is sled's, not this file's), so a sync (two per scan) would buy nothing.
    write_file_atomically(&dir.join(OWNER), &json, true, false)
}

fn open_dir(path: &Path, mode: Mode, cache_bytes: u64) -> Result<Store> {
    let shown = || path.display().to_string();
    let found = look_at(path)?;
    let marker = match (&found, mode) {
        (Found::Missing, Mode::Existing) => return Err(StoreError::Missing { path: shown() }),
        (Found::EmptyDir, Mode::Existing) => {
            return Err(not_a_store(path, "it is an empty directory (a scan or crawl creates a store)"))
        }
        (Found::Store(m), _) => Some(m.clone()),
        _ => None,
    };
    let fresh = matches!(found, Found::Missing | Found::EmptyDir);
    let db = guard(|| {
        sled::Config::new().path(path).cache_capacity(cache_bytes).flush_every_ms(Some(1000)).open()
    })?
    .map_err(|e| {
        if is_lock_error(&e) {
            return StoreError::InUse { holder: read_holder(path), path: shown() };
        }
        match StoreError::from(e) {
            // sled refusing the files of an existing store: they are damaged (a
            // damaged `conf` reads as an unsupported sled version).
            StoreError::Sled(sled::Error::Unsupported(why)) if !fresh => {
                StoreError::Damaged(format!("the storage engine (sled) cannot open it: {}", escape(&why)))
            }
            StoreError::Sled(cause) => StoreError::Open { path: shown(), cause },
            other => other,
        }
    })?;
    let db = Db(Some(db), Health::new(shown()));
    let has_tree = db.tree_names()?.iter().any(|n| n.as_ref() == TREE.as_bytes());
    if !fresh && !has_tree {
        return Err(match found {
            Found::Unmarked => not_a_store(path, "it is a sled database without ditto's records"),
            _ => StoreError::Damaged(format!("{} holds none of ditto's records", shown())),
        });
    }
    let tree = db.open_tree(TREE.as_bytes())?;
    if fresh {
        // A new store keeps record counts from its first batch on.
        tree.insert(COUNTS_KEY, Counts::fresh().encode())?;
    }
    if !fresh && tree.get(FORMAT_KEY)?.is_none() {
        return Err(match found {
            Found::Unmarked => not_a_store(path, "it is a sled database without ditto's format stamp"),
            _ => StoreError::Damaged(
                "its format stamp is missing: the store has lost records (files truncated or overwritten?)"
                    .into(),
            ),
        });
    }
    // A marker found open stays so; else from here until the clean close the nonce no longer
    // vouches for the files.
    if let Some(m) = marker.as_ref().filter(|m| !m.open) {
        check_close_nonce(&tree, m)?;
        write_marker(path, &Marker { open: true, ..m.clone() })?;
    }
    let store = Store {
        db,
        tree,
        write_lock: Arc::new(Mutex::new(())),
        seen: Mutex::new(CompactSeenSet::default()),
        cap: crate::frontier::FrontierCap::default(),
        queued_hosts: crate::frontier::QueuedHosts::default(),
        queues: Mutex::new(Default::default()),
        stamp_current: Default::default(),
        life: Life::Dir { path: path.to_path_buf(), owner_written: false, server: Mutex::new(None) },
    };
    store.check_version()?;
    if marker.is_none() {
        let m = Marker {
            kind: MARKER_KIND.into(),
            format_version: FORMAT_VERSION,
            created_by: if fresh { holder_name() } else { "an earlier ditto (adopted)".into() },
            created_at: now_secs(),
            close_nonce: None,
            previous_close_nonce: None,
            open: true,
        };
        store.tree.flush()?;
        write_marker(path, &m)?;
    }
    let mut store = store;
    write_owner(
        path,
        &Holder { command: holder_name(), pid: std::process::id(), snapshot_addr: None, token: None },
    )?;
    if let Life::Dir { owner_written, .. } = &mut store.life {
        *owner_written = true;
    }
    Ok(store)
}

fn check_close_nonce(tree: &Tree, m: &Marker) -> Result<()> {
    let Some(expected) = &m.close_nonce else { return Ok(()) };
    let found = tree.get(CLOSE_NONCE_KEY)?;
    let ok = found.as_ref().is_some_and(|v| {
        v.as_ref() == expected.as_bytes()
            || m.previous_close_nonce.as_ref().is_some_and(|p| v.as_ref() == p.as_bytes())
    });
    if ok {
        Ok(())
    } else {
        Err(StoreError::Damaged(
            "it does not hold what it held when it was last closed (files truncated, overwritten or \
             replaced by an older copy?)"
                .into(),
        ))
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let Life::Dir { path, owner_written, server } = &mut self.life else { return };
        if let Some(s) = server.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            s.stop();
        }
        // A clean close: a fresh nonce into the marker (the old one still accepted), into the
        // store, then the marker alone, no longer open. Skipped when anything failed (the
        // marker stays open: the next open takes the store as sled recovers it).
        let _ = close_cleanly(path, &self.tree, &self.db);
        if *owner_written {
            let _ = std::fs::remove_file(path.join(OWNER));
        }
    }
}

fn close_cleanly(path: &Path, tree: &Tree, db: &Db) -> Result<()> {
    if db.1.failed.load(Ordering::SeqCst) {
        return Ok(());
    }
    let Found::Store(mut m) = look_at(path)? else { return Ok(()) };
    let nonce = random_hex();
    m.previous_close_nonce = m.close_nonce.take();
    m.close_nonce = Some(nonce.clone());
    // The stamp in the tree: a format 5 store stays 5 until a compact queue entry is written.
    m.format_version = match tree.get(FORMAT_KEY)? {
        Some(v) => std::str::from_utf8(&v).ok().and_then(|v| v.parse().ok()).unwrap_or(FORMAT_VERSION),
        None => FORMAT_VERSION,
    };
    write_marker(path, &m)?;
    tree.insert(CLOSE_NONCE_KEY, nonce.as_bytes())?;
    db.flush()?;
    m.previous_close_nonce = None;
    m.open = false;
    write_marker(path, &m)
}

// ---------------------------------------------------------------------------------------
// Snapshots served on loopback.

const SNAPSHOT_HELLO: &str = "DITTO-SNAPSHOT-1";
/// The frame length that ends a snapshot.
const END: u32 = u32::MAX;

pub(crate) struct SnapshotServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SnapshotServer {
    fn start(tree: Tree, write_lock: Arc<Mutex<()>>, token: String) -> std::io::Result<SnapshotServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let thread = std::thread::Builder::new().name("store-snapshots".into()).spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(conn) = conn {
                    let _ = serve_one(conn, &tree, &write_lock, &token);
                }
            }
        })?;
        Ok(SnapshotServer { addr, stop, thread: Some(thread) })
    }

    fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One snapshot request: `DITTO-SNAPSHOT-1 TOKEN\n`, answered `OK\n` and every key and value
/// of the store's tree as length-prefixed frames (u32 LE), ended by a length of `u32::MAX`,
/// all read while holding the store's write lock (no batch lands half in a snapshot).
fn serve_one(conn: TcpStream, tree: &Tree, write_lock: &Mutex<()>, token: &str) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut line = String::new();
    BufReader::new((&conn).take(256)).read_line(&mut line)?;
    let mut out = BufWriter::new(&conn);
    if line.trim_end() != format!("{SNAPSHOT_HELLO} {token}") {
        out.write_all(b"DENIED\n")?;
        return out.flush();
    }
    out.write_all(b"OK\n")?;
    let _lock = write_lock.lock().unwrap_or_else(|e| e.into_inner());
    for kv in tree.iter() {
        let (k, v) = match kv {
            Ok(kv) => kv,
            Err(e) => {
                // Ends the stream without its end frame: the reader reports it incomplete.
                return Err(std::io::Error::other(e.to_string()));
            }
        };
        for part in [k.as_ref(), v.as_ref()] {
            let n = u32::try_from(part.len()).map_err(|_| std::io::Error::other("record too large"))?;
            out.write_all(&n.to_le_bytes())?;
            out.write_all(part)?;
        }
    }
    out.write_all(&END.to_le_bytes())?;
    out.flush()
}

fn read_frame(r: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut n = [0u8; 4];
    r.read_exact(&mut n)?;
    let n = u32::from_le_bytes(n);
    if n == END {
        return Ok(None);
    }
    let mut buf = Vec::new();
    r.take(u64::from(n)).read_to_end(&mut buf)?;
    if buf.len() != n as usize {
        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "snapshot cut short"));
    }
    Ok(Some(buf))
}

/// Fetch a snapshot from the process holding a store into a temporary store.
fn fetch_snapshot(h: &Holder) -> Result<Store> {
    let io = |e: std::io::Error| StoreError::Io { path: "snapshot".into(), cause: e };
    let (Some(addr), Some(token)) = (h.snapshot_addr, h.token.as_deref()) else {
        return Err(StoreError::Damaged("no snapshot address".into()));
    };
    if !addr.ip().is_loopback() {
        return Err(io(std::io::Error::other("the snapshot address is not loopback")));
    }
    let conn = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(io)?;
    conn.set_read_timeout(Some(Duration::from_secs(600))).map_err(io)?;
    (&conn).write_all(format!("{SNAPSHOT_HELLO} {token}\n").as_bytes()).map_err(io)?;
    let mut r = BufReader::new(&conn);
    let mut status = String::new();
    r.read_line(&mut status).map_err(io)?;
    if status != "OK\n" {
        return Err(io(std::io::Error::other("the holder refused the snapshot request")));
    }
    let db = Db(
        Some(sled_call(|| sled::Config::new().temporary(true).open())?),
        Health::new("a snapshot's temporary copy".into()),
    );
    let tree = db.open_tree(TREE.as_bytes())?;
    let mut batch = sled::Batch::default();
    let mut in_batch = 0;
    while let Some(k) = read_frame(&mut r).map_err(io)? {
        let v = read_frame(&mut r)
            .map_err(io)?
            .ok_or_else(|| io(std::io::Error::other("snapshot ends between a key and its value")))?;
        batch.insert(k, v);
        in_batch += 1;
        if in_batch == 10_000 {
            tree.apply_batch(std::mem::take(&mut batch))?;
            in_batch = 0;
        }
    }
    tree.apply_batch(batch)?;
    let store = Store {
        db,
        tree,
        write_lock: Arc::new(Mutex::new(())),
        seen: Mutex::new(CompactSeenSet::default()),
        cap: crate::frontier::FrontierCap::default(),
        queued_hosts: crate::frontier::QueuedHosts::default(),
        queues: Mutex::new(Default::default()),
        stamp_current: Default::default(),
        life: Life::Snapshot { of: h.clone() },
    };
    store.check_version()?;
    Ok(store)
}

// ---------------------------------------------------------------------------------------
// `ditto store check`.

/// What [`Store::check`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// Records read per kind (key prefix), e.g. `p/` → pages.
    pub records: BTreeMap<String, u64>,
    /// sled trees walked and their entries.
    pub trees: BTreeMap<String, u64>,
    /// What is wrong (empty when the store is sound), at most 100 lines.
    pub problems: Vec<String>,
    /// Problems beyond the first 100.
    pub more_problems: u64,
}

impl CheckReport {
    pub fn is_sound(&self) -> bool {
        self.problems.is_empty()
    }

    fn problem(&mut self, what: String) {
        if self.problems.len() < 100 {
            self.problems.push(escape(&what));
        } else {
            self.more_problems += 1;
        }
    }

    /// Count an item of a record iterator, noting its error.
    fn count<T>(&mut self, kind: &str, item: Result<T>) {
        match item {
            Ok(_) => *self.records.entry(kind.into()).or_default() += 1,
            Err(e) => self.problem(format!("{kind}: {e}")),
        }
    }
}

/// Key prefixes of the ditto tree that [`Store::check`] knows.
const KNOWN_PREFIXES: [&[u8]; 17] = [
    b"m/", b"p/", b"n/", b"t/", b"w/", b"o/", b"l/", b"x/", b"q/", b"ql/", b"qd/", b"i/", b"s/", b"sb/",
    b"hc/", b"rf/", b"d/",
];

impl Store {
    /// Verify the store completely: every sled tree is walked, every record decoded (pages,
    /// neighborhoods, texts, shingle sets, live origins, labels, stop chunks, frontier
    /// entries), and the format stamp and label-set binding read. Never panics.
    pub fn check(&self) -> Result<CheckReport> {
        let mut r = CheckReport::default();
        for name in self.db.tree_names()? {
            let shown = escape(&String::from_utf8_lossy(&name));
            let tree = match self.db.open_tree(&name) {
                Ok(t) => t,
                Err(e) => {
                    r.problem(format!("tree {shown}: {e}"));
                    continue;
                }
            };
            let mut n = 0u64;
            for kv in tree.iter() {
                match kv {
                    Ok((k, _)) => {
                        n += 1;
                        if shown == TREE && !KNOWN_PREFIXES.iter().any(|p| k.starts_with(p)) {
                            r.problem(format!(
                                "unknown record kind under key {}",
                                escape(&String::from_utf8_lossy(&k))
                            ));
                        }
                    }
                    Err(e) => r.problem(format!("tree {shown}: {e}")),
                }
            }
            r.trees.insert(shown, n);
        }
        match self.tree.get(FORMAT_KEY)? {
            None => r.problem("format stamp m/format_version missing".into()),
            Some(v)
                if v.as_ref() != FORMAT_VERSION.to_string().as_bytes()
                    && v.as_ref() != READABLE_OLDER_FORMAT.to_string().as_bytes() =>
            {
                r.problem(format!(
                    "format stamp is {:?}, not {FORMAT_VERSION} (or {READABLE_OLDER_FORMAT}, still read)",
                    escape(&String::from_utf8_lossy(&v))
                ))
            }
            Some(_) => {}
        }
        if let Err(e) = self.label_set() {
            r.problem(format!("label-set binding: {e}"));
        }
        for p in self.pages() {
            r.count("p/ pages", p);
        }
        for n in self.neighborhoods() {
            r.count("n/ neighborhoods", n);
        }
        // The sums the end of a scan or crawl prints are recorded, not counted: compare.
        if let (Some(recorded), Ok(counted)) = (self.recorded_totals(), self.totals()) {
            if recorded != counted {
                r.problem(format!(
                    "the recorded page sums (m/counts) differ from the records: {recorded:?} recorded, {counted:?} counted"
                ));
            }
        }
        for t in self.texts() {
            r.count("t/ page texts", t);
        }
        for kv in self.tree.scan_prefix(crate::SHINGLES) {
            let item = kv.and_then(|(k, v)| {
                if v.len() % 4 == 0 {
                    Ok(())
                } else {
                    Err(crate::corrupt(
                        &String::from_utf8_lossy(&k),
                        "shingle set is not a multiple of 4 bytes",
                    ))
                }
            });
            r.count("w/ shingle sets", item);
        }
        for o in self.live_origins() {
            let item = o.and_then(|(n, v)| {
                serde_json::from_slice::<serde_json::Value>(&v)
                    .map(|_| ())
                    .map_err(|e| crate::corrupt(&format!("o/{n}"), e))
            });
            r.count("o/ live origins", item);
        }
        for l in self.labels() {
            r.count("l/ review labels", l);
        }
        for x in self.reviewed_stop_chunks() {
            r.count("x/ reviewed stop chunks", x);
        }
        for prefix in [crate::frontier::QUEUE, crate::frontier::INFLIGHT] {
            let kind = if prefix == crate::frontier::QUEUE { "q/ queued URLs" } else { "i/ URLs in flight" };
            for kv in self.tree.scan_prefix(prefix) {
                let item = kv.and_then(|(k, v)| crate::frontier::decode_entry(&k, &v));
                r.count(kind, item);
            }
        }
        // The queue's log: entries queued, then the marks of those finished.
        for kv in self.tree.scan_prefix(crate::queues::LOG) {
            match kv.and_then(|(k, v)| crate::queues::decode_record(&k, &v)) {
                Ok(entries) => {
                    *r.records.entry("ql/ queue log entries".into()).or_default() += entries.len() as u64
                }
                Err(e) => r.problem(format!("ql/ queue log: {e}")),
            }
        }
        for kv in self.tree.scan_prefix(crate::queues::DONE) {
            match kv.and_then(|(k, v)| crate::queues::decode_done(&k, &v)) {
                Ok(ids) => {
                    *r.records.entry("qd/ finished queue log entries".into()).or_default() += ids.len() as u64
                }
                Err(e) => r.problem(format!("qd/ finished queue log entries: {e}")),
            }
        }
        for kv in self.tree.scan_prefix(crate::frontier::SEEN) {
            let item = kv.and_then(|(k, _)| crate::frontier::seen_key_fingerprint(&k));
            r.count("s/ seen URLs", item);
        }
        for kv in self.tree.scan_prefix(crate::frontier::SEEN_BATCH) {
            match kv.and_then(|(k, v)| crate::frontier::seen_batch_fingerprints(&k, &v)) {
                Ok(fps) => *r.records.entry("s/ seen URLs".into()).or_default() += fps.len() as u64,
                Err(e) => r.problem(format!("sb/ seen URLs: {e}")),
            }
        }
        for kv in self.tree.scan_prefix(crate::frontier::HOST_COUNT) {
            let item = kv.and_then(|(k, v)| {
                if v.len() == 8 {
                    Ok(())
                } else {
                    Err(crate::corrupt(&String::from_utf8_lossy(&k), "host count is not 8 bytes"))
                }
            });
            r.count("hc/ host page counts", item);
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::page;

    #[test]
    fn a_panic_inside_the_guard_is_a_damaged_store_error() {
        let r: Result<()> = guard(|| panic!("index out of bounds: the len is 3 but the index is 7"));
        match r {
            Err(StoreError::Damaged(why)) => assert!(why.contains("index out of bounds"), "{why}"),
            other => panic!("expected Damaged, got {other:?}"),
        }
        // Panics outside the guard still reach the previous hook and unwind as before.
        assert!(std::panic::catch_unwind(|| panic!("elsewhere")).is_err());
    }

    #[test]
    fn missing_foreign_and_empty_paths() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("typo.db");
        assert!(matches!(Store::open_existing(&missing), Err(StoreError::Missing { .. })));
        assert!(!missing.exists());
        let foreign = dir.path().join("photos");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("a.jpg"), b"x").unwrap();
        for r in [Store::open_existing(&foreign), Store::create_or_open(&foreign)] {
            assert!(matches!(r, Err(StoreError::NotAStore { .. })));
        }
        assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 1);
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        assert!(matches!(Store::create_or_open(&file), Err(StoreError::NotAStore { .. })));
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(matches!(Store::open_existing(&empty), Err(StoreError::NotAStore { .. })));
        drop(Store::create_or_open(&empty).unwrap());
        let m = marker_of(&empty);
        assert!(m.close_nonce.is_some() && m.previous_close_nonce.is_none());
        assert!(!empty.join(OWNER).exists());
        drop(Store::open_existing(&empty).unwrap());
    }

    #[test]
    fn a_store_rolled_back_behind_its_last_clean_close_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        drop(Store::create_or_open(&path).unwrap());
        // An older copy of the sled files: the marker names a nonce they do not hold.
        let mut m = marker_of(&path);
        m.close_nonce = Some("0123".into());
        write_marker(&path, &m).unwrap();
        match Store::open_existing(&path) {
            Err(e @ StoreError::Damaged(_)) => assert!(e.to_string().starts_with("store damaged: ")),
            Err(e) => panic!("expected Damaged, got {e}"),
            Ok(_) => panic!("expected Damaged, got a store"),
        }
    }

    fn marker_of(dir: &Path) -> Marker {
        serde_json::from_slice(&std::fs::read(dir.join(MARKER)).unwrap()).unwrap()
    }

    #[test]
    fn a_store_whose_holder_never_closed_it_is_taken_as_sled_recovers_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        drop(Store::create_or_open(&path).unwrap());
        let read = || marker_of(&path);
        assert!(!read().open, "a clean close clears the open mark");
        let held = Store::open_existing(&path).unwrap();
        assert!(read().open, "an open store is marked open on disk");
        drop(held);
        // What a SIGKILLed holder leaves when sled recovers a state from before the last
        // close nonce's write: the marker still open, its nonce not in the files.
        let mut m = read();
        m.open = true;
        m.close_nonce = Some("0123".into());
        write_marker(&path, &m).unwrap();
        drop(Store::open_existing(&path).expect("a killed holder's store opens"));
        // Its clean close makes the nonce judge again.
        assert!(!read().open);
        drop(Store::open_existing(&path).unwrap());
    }

    #[test]
    fn a_store_from_before_page_sums_keeps_its_counts_and_sums_by_a_pass() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create_or_open(&dir.path().join("s.db")).unwrap();
        store.write_batch(&[page("http://h/a/1", b"1", 1, 2)]).unwrap();
        // The counts as stores made before the page sums wrote them: 3 × u64.
        let old = Counts { page_sums: None, ..recorded_counts(&store.tree).unwrap() };
        assert_eq!(old.encode().len(), 24);
        store.tree.insert(COUNTS_KEY, old.encode()).unwrap();
        store.write_batch(&[page("http://h/a/2", b"2", 0, 3)]).unwrap();
        let now = recorded_counts(&store.tree).unwrap();
        assert_eq!((now.pages, now.page_sums), (2, None));
        assert_eq!(store.recorded_totals(), None);
        let t = store.totals().unwrap();
        assert_eq!((t.pages, t.chunks, t.labeled_chunks), (2, 5, 1));
    }

    #[test]
    fn records_lost_without_an_error_end_a_full_pass_with_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create_or_open(&dir.path().join("s.db")).unwrap();
        store.write_batch(&[page("http://h/a/1", b"1", 1, 2), page("http://h/a/2", b"2", 0, 2)]).unwrap();
        store.write_batch(&[page("http://h/a/1", b"1", 1, 2)]).unwrap();
        let sums =
            PageSums { chunks: 4, labeled_chunks: 1, pages_with_labeled_chunks: 1, contains_sum_fixed: 0 };
        let recorded = recorded_counts(&store.tree).unwrap();
        assert_eq!(
            Counts {
                page_sums: recorded.page_sums.map(|s| PageSums { contains_sum_fixed: 0, ..s }),
                ..recorded
            },
            Counts { pages: 2, neighborhoods: 2, texts: 2, page_sums: Some(sums) }
        );
        // The recorded sums are what a full pass over the records finds.
        assert_eq!(store.recorded_totals(), Some(store.totals().unwrap()));
        // `store check` compares them.
        let mut bad = recorded;
        if let Some(s) = &mut bad.page_sums {
            s.chunks += 1;
        }
        store.tree.insert(COUNTS_KEY, bad.encode()).unwrap();
        assert!(!store.check().unwrap().is_sound());
        store.tree.insert(COUNTS_KEY, recorded.encode()).unwrap();
        assert!(store.check().unwrap().is_sound());
        // What sled does with a leaf it cannot read: the records are just not there.
        let key = crate::page_key("http://h/a/2", &detector::fingerprint::sha1(b"2"));
        store.tree.remove(&key).unwrap();
        store.tree.remove(b"n/http://h/a/").unwrap();
        let last = store.pages().last().unwrap();
        assert!(matches!(last, Err(StoreError::Damaged(ref w)) if w.contains("holds 1 pages")), "{last:?}");
        assert!(store.totals().is_err());
        assert!(store.neighborhoods().any(|n| n.is_err()));
        let report = store.check().unwrap();
        assert_eq!(report.problems.len(), 2, "{:?}", report.problems);
        // A partial pass (a prefix) is not a full one: no count to compare.
        assert!(store.pages_under("http://h/a/1").all(|p| p.is_ok()));
    }

    #[test]
    fn snapshots_are_served_to_readers_while_the_store_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let store = Store::create_or_open(&path).unwrap();
        store.write_batch(&[page("http://h/1", b"1", 1, 2)]).unwrap();
        // Without a server: one plain error naming the holder.
        match Store::open_for_reading(&path) {
            Err(e @ StoreError::InUse { .. }) => {
                assert!(e.to_string().contains(&format!("(pid {})", std::process::id())), "{e}")
            }
            Err(e) => panic!("expected InUse, got {e}"),
            Ok(_) => panic!("expected InUse, got a store"),
        }
        store.serve_snapshots().unwrap();
        let snap = Store::open_for_reading(&path).unwrap();
        assert_eq!(snap.snapshot_of().map(|h| h.pid), Some(std::process::id()));
        assert_eq!(snap.totals().unwrap(), store.totals().unwrap());
        // The snapshot is a copy: later writes to the store are not in it.
        store.write_batch(&[page("http://h/2", b"2", 0, 2)]).unwrap();
        assert_eq!(snap.totals().unwrap().pages, 1);
        assert_eq!(Store::open_for_reading(&path).unwrap().totals().unwrap().pages, 2);
        // A wrong token is refused.
        let mut h = read_holder(&path).unwrap();
        h.token = Some("0".repeat(32));
        assert!(fetch_snapshot(&h).is_err());
        drop(store);
        assert!(!path.join(OWNER).exists());
        assert_eq!(Store::open_for_reading(&path).unwrap().totals().unwrap().pages, 2);
    }
}
