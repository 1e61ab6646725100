//! `store`: everything persistent of a scan or crawl, kept in `sled` behind this API.
//!
//! Layout: one sled tree, keys prefixed by record kind, so that one page and all the
//! neighborhood accumulators it touches are written in ONE atomic `apply_batch`. sled's merge
//! operators cannot take part in a batch or a transaction, so an update made with them could
//! be half applied when the process is killed; instead the single store writer reads the
//! current accumulators, adds the batch's deltas and writes page records and accumulators
//! together. Killed at any moment, a store holds either all of a batch or none of it, and a
//! re-run skips the pages it already has (keyed by URL + file hash), so totals come out
//! exactly as in an uninterrupted run.
//!
//! | prefix | key | value |
//! |---|---|---|
//! | `m/` | meta name | format version, label-set identity |
//! | `p/` | URL `\0` file SHA-1 (20 bytes) | [`PageRecord`], binary ([`record`]), encoded in the worker pools, with the page's shingle sketch |
//! | `n/` | neighborhood URL prefix | [`NeighborhoodAccumulator`] (32 bytes LE) |
//! | `t/` | URL `\0` file SHA-1 (as `p/`) | only with `--keep-text`: the page's cleaned text blocks ([`record::encode_text`]), deflated |
//! | `w/` | URL `\0` file SHA-1 (20 bytes) | the page's shingle set: sorted distinct `u32` LE, 4 bytes per shingle (optional since format 2: scans no longer write it; `ditto replicas` compares the records' sketches since format 4) |
//! | `o/` | arrival number (u64 BE) | live origins row of `ditto scan/crawl --origins` (JSON) |
//! | `l/` | neighborhood URL prefix | review label (see [`labels`]) |
//! | `x/` | chunk SHA-1 (20 bytes) | reviewed stop chunk (see [`labels`]) |
//! | `q/` `i/` `s/` `hc/` | | the crawl frontier (see [`frontier`]) |
//!
//! The store keeps verdicts, not a second copy of the pages: by default no text is stored.
//! Each record keeps where its page came from (WARC file and record offset, or file path)
//! and the body's SHA-1 (in the key), so evidence and analyses read the page back from its
//! source and clean it again with the same cleaner (`ditto::source::text`), checking the
//! digest. `--keep-text` stores the cleaned text under `t/` for inputs that will not stay.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use detector::fingerprint::{hex, Sha1Digest};
use detector::{NeighborhoodAccumulator, PageOrigin};
use serde::{Deserialize, Serialize};

pub mod frontier;
pub mod labels;
pub mod lifecycle;
mod queue_entry;
mod queues;
pub mod record;
pub use frontier::{url_fingerprint, AddOutcome, CompactSeenSet, FrontierEntry, LINK_BATCH, SEEN_IN_MEMORY};
pub use lifecycle::{CRAWL_CACHE_BYTES, DEFAULT_CACHE_BYTES};

/// The store format this code writes and reads.
///
/// History:
/// - 1: every page with visible text has its shingle set under `w/`; records are JSON.
/// - 2 (2026-11-23): `w/` is optional — scans leave the shingle set to `ditto replicas`,
///   which derives it from the page's text (`t/`).
/// - 3 (2026-11-24): records are binary ([`record`]), encoded in the worker pools; text is
///   stored only with `--keep-text` (evidence is read back from the page's source).
///   Older stores are refused with a message to re-scan.
/// - 4 (2026-11-24, branch `sketch` only): each record carries the page's bounded shingle
///   sketch (record layout 2), so near-replica analysis reads no page text; the sketch was of
///   all words' 4-shingles, from a word pass of its own.
/// - 5 (2026-11-24): the same record layout, but the sketch is of the 4-shingles of the long
///   words (more than 3 characters), computed in the SimHash's word pass
///   (`detector::shingles::long_word_sketch_of_blocks`): other hashes, so format 4 sketches
///   cannot be compared with these and format 4 stores are refused (re-scan).
/// - 6 (2026-11-29): queue entries (`q/`) are compact values
///   ([`frontier`], `encode_queued`), no longer JSON. Format 5 stores are read as they are
///   ([`READABLE_OLDER_FORMAT`]): their JSON entries still decode, and the batch that first
///   writes a compact entry into one raises its stamp to 6, so a ditto that reads only 5
///   refuses the store with a message instead of reading the new entries as damaged.
pub const STORE_FORMAT_VERSION: u32 = 6;

/// The older format this code still reads (see [`STORE_FORMAT_VERSION`]).
pub const READABLE_OLDER_FORMAT: u32 = 5;

/// The same as [`STORE_FORMAT_VERSION`] (the older name).
pub const FORMAT_VERSION: u32 = STORE_FORMAT_VERSION;

const META: &[u8] = b"m/";
const PAGE: &[u8] = b"p/";
const HOOD: &[u8] = b"n/";
const TEXT: &[u8] = b"t/";
// Not `s/`: that is the frontier's seen set (store/src/frontier.rs).
const SHINGLES: &[u8] = b"w/";
const LIVE_ORIGINS: &[u8] = b"o/";
/// Page directives a crawl was told (issue 38): `d/` + URL → JSON [`PageDirectives`].
const DIRECTIVES: &[u8] = b"d/";

/// What a crawled page said of itself, kept per URL for reports: `noindex` (meta robots or
/// `X-Robots-Tag`), and the canonical URL it names when that is another URL (syndication
/// names its original so). Written by the crawler only for pages that say either.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageDirectives {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub noindex: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
}

/// What went wrong, by kind.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open store {path}: {}", sled_words(cause))]
    Open { path: String, cause: sled::Error },
    /// sled's errors other than corruption (those are [`StoreError::Damaged`]) and I/O on an
    /// open store (those are [`StoreError::Disk`]).
    #[error("store error: {}", sled_words(.0))]
    Sled(sled::Error),
    /// A file of the store or beside it could not be read or written. (`cause` is not an
    /// error source: the message already says it, and a chain would say it twice.)
    #[error("{path}: {}{}", io_words(cause), advice(cause))]
    Io { path: String, cause: std::io::Error },
    /// The storage engine could not read or write the files of an open store (a full disk):
    /// the store's directory, the OS's reason in words, and what to do.
    #[error("store {path}: {}{}", io_words(cause), advice(cause))]
    Disk { path: String, cause: std::io::Error },
    #[error("no ditto store at {path} (a store is created by `ditto scan` or `ditto crawl`)")]
    Missing { path: String },
    #[error("{path} is not a ditto store: {why}; refusing to use it")]
    NotAStore { path: String, why: String },
    /// The store's files are damaged (sled's panics on them end up here too).
    #[error("store damaged: {0}")]
    Damaged(String),
    #[error("store in use by {}: {path} is held open by that process; try again when it ends",
             holder.as_ref().map_or("another process (pid unknown)".into(), |h| h.to_string()))]
    InUse { path: String, holder: Option<lifecycle::Holder> },
    #[error("store in use by {holder}: {path}: reading a snapshot from it failed: {why}")]
    SnapshotFailed { path: String, holder: String, why: String },
    #[error(
        "store format version {found} is not one this ditto reads ({STORE_FORMAT_VERSION}, or \
         {READABLE_OLDER_FORMAT}): \
         the store was written by another version of ditto; scan again into a new store"
    )]
    Version { found: String },
    #[error("store damaged: corrupt record under key {key}: {why}")]
    Corrupt { key: String, why: String },
    #[error("{0}")]
    LabelSetMismatch(String),
    /// A file given to the store (e.g. `ditto labels import`) is not what it should be: the
    /// input is bad, not the store.
    #[error("{what}: {why}")]
    BadInput { what: String, why: String },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// sled's error in words: an I/O error as the OS's reason (`No space left on device (os error
/// 28)`), not sled's own text, which prints it in Rust's debug form (`Os { code: 28, … }`).
fn sled_words(e: &sled::Error) -> String {
    match e {
        sled::Error::Io(io) => format!("{}{}", io_words(io), advice(io)),
        sled::Error::Unsupported(why) => lifecycle::escape(why),
        sled::Error::CollectionNotFound(name) => {
            format!("no tree named {}", lifecycle::escape(&String::from_utf8_lossy(name)))
        }
        e => lifecycle::escape(&e.to_string()),
    }
}

/// An I/O error's reason in words: `No space left on device (os error 28)`. sled hands its
/// I/O errors on as new errors whose text is the original's debug form (`Os { code: 28, kind:
/// StorageFull, message: "No space left on device" }`): the OS's words are recovered from the
/// code, or the message is taken out of it.
pub fn io_words(e: &std::io::Error) -> String {
    if let Some(code) = e.raw_os_error() {
        return std::io::Error::from_raw_os_error(code).to_string();
    }
    if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<std::io::Error>()) {
        return io_words(inner);
    }
    let text = e.to_string();
    if let Some(rest) = text.strip_prefix("Os { code: ") {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(code) = digits.parse::<i32>() {
            return std::io::Error::from_raw_os_error(code).to_string();
        }
    }
    if text.starts_with("Custom {") || text.starts_with("Kind(") {
        // `Custom { kind: K, error: "words" }`: the words; `Kind(K)`: the kind's.
        return match (text.find("error: \""), text.rfind('"')) {
            (Some(a), Some(b)) if a + 8 <= b => lifecycle::escape(&text[a + 8..b]),
            _ => e.kind().to_string(),
        };
    }
    lifecycle::escape(&text)
}

/// What to do about an I/O error, after its reason (empty when there is nothing to add).
pub fn advice(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::StorageFull | K::QuotaExceeded | K::FileTooLarge => {
            "; free space on that disk and run the same command again: the store is intact and \
             the command resumes where it stopped"
        }
        K::PermissionDenied => "; check that this user may read and write it",
        K::ReadOnlyFilesystem => "; its file system is read-only: use a store on a writable one",
        _ => "",
    }
}

/// A passage of a page found in the label set, with its source: evidence a person can check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub source: u32,
    /// The page's passage (cleaned text, shortened). The store keeps only `block`: a record
    /// read from the store has an empty passage until it is read back from the page's text
    /// (`ditto::source::text::TextSource::fill_passages`).
    pub passage: String,
    /// Which of the page's cleaned text blocks the passage is.
    #[serde(default)]
    pub block: u32,
}

/// How many chunk occurrences of a page came from one source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceCount {
    pub source: u32,
    pub chunks: u32,
}

/// One stored page (one capture: URL + file hash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRecord {
    pub url: String,
    pub fetch_time: i64,
    pub status: u16,
    /// SHA-1 of the body, hex.
    pub file_hash: String,
    /// Chunk occurrences after stop-chunk removal.
    pub chunks: u32,
    pub labeled_chunks: u32,
    pub stop_chunks: u32,
    pub contains: f64,
    /// Source id of a whole-file match in `L_f`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_match: Option<u32>,
    /// Matched sources, most chunks first.
    #[serde(default)]
    pub sources: Vec<SourceCount>,
    /// A few copied passages.
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    #[serde(default)]
    pub origin: PageOrigin,
    /// Khan & Ali 2015 SimHash of the visible text (`detector::simhash::page_simhash`);
    /// `None` in records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simhash: Option<u64>,
    /// SHA-1 of the normalized visible text, hex (exact replicas by content); `None` when
    /// the page has no text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_hash: Option<String>,
    /// Distinct long-word 4-shingles of the page (the sketch's shingles): exact when `sketch`
    /// is complete, else estimated from it.
    #[serde(default)]
    pub shingles: u32,
    /// The page's bounded shingle sketch (`detector::shingles::ShingleSketch`, at most
    /// `SKETCH_SIZE` hashes of its long-word 4-shingles), computed in the fingerprint pool's
    /// SimHash word pass: what `ditto replicas` compares, so it needs no page text. Empty for
    /// a page of fewer than four long words.
    #[serde(skip)]
    pub sketch: detector::shingles::ShingleSketch,
    /// URL of an earlier page of the same scan or crawl whose SimHash is within k (default 3)
    /// of this one's, marked live in the match stage; `None` when there is none (or in
    /// records written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near_duplicate_of: Option<String>,
    /// Passage evidence (issue 36): `None` when the page was matched by exact chunks only
    /// (`--match exact`, a label set without passages, records written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passages: Option<PassageSummary>,
}

/// What passage matching found on a page (`detector::matching::add_passages`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassageSummary {
    /// Words on the page.
    pub words: u32,
    /// Words covered by labeled passages.
    pub covered_words: u32,
    /// Blocks counted as labeled through passages (included in `labeled_chunks`).
    pub chunks: u32,
    /// Those blocks' indices (the first [`MAX_PASSAGE_BLOCKS`]).
    pub blocks: Vec<u32>,
}

/// Most passage-matched block indices a record keeps.
pub const MAX_PASSAGE_BLOCKS: usize = 256;

impl PageRecord {
    fn key(&self, file_hash: &Sha1Digest) -> Vec<u8> {
        page_key(&self.url, file_hash)
    }
}

/// The key of a page capture: `p/` URL `\0` SHA-1.
pub fn page_key(url: &str, file_hash: &Sha1Digest) -> Vec<u8> {
    let mut k = page_url_prefix(url, file_hash.len());
    k.extend_from_slice(file_hash);
    k
}

/// The start every page key of `url` shares (`PAGE`, the URL, a 0 byte), with room for
/// `extra` more bytes.
fn page_url_prefix(url: &str, extra: usize) -> Vec<u8> {
    let mut k = Vec::with_capacity(PAGE.len() + url.len() + 1 + extra);
    k.extend_from_slice(PAGE);
    k.extend_from_slice(url.as_bytes());
    k.push(0);
    k
}

/// A page ready to be written: its record, its digest and its neighborhoods.
#[derive(Debug, Clone)]
pub struct PageWrite {
    pub record: PageRecord,
    pub file_hash: Sha1Digest,
    pub neighborhoods: Vec<String>,
    pub accumulator: NeighborhoodAccumulator,
    /// Crawl only: the frontier ticket this page completes (its in-flight URL and host key).
    pub fetched: Option<(String, String)>,
    /// Crawl only: links found on the page, queued when not seen before: in the page's batch,
    /// or (past [`LINK_BATCH`] in one write) in batches of their own just before it.
    pub links: Vec<FrontierEntry>,
    /// The page's word-4-shingle set (sorted, distinct 32-bit hashes,
    /// `detector::shingles::shingle_set`), stored under `w/` with the record when not
    /// empty. Scans leave it empty (the set follows from the stored text).
    pub shingles: Vec<u32>,
    /// The page's cleaned text blocks, when something downstream needs them (live origins,
    /// `--keep-text`); stored under `t/` only when `keep_text`.
    pub text: Option<detector::TextBlocks>,
    /// Store `text` (`--keep-text`).
    pub keep_text: bool,
    /// The rows to write, encoded by [`PageWrite::encode`] in the worker that made the page;
    /// [`Store::write_batch`] encodes pages that come without.
    pub encoded: Option<EncodedPage>,
}

/// A page's store rows, encoded off the writer thread.
#[derive(Debug, Clone)]
pub struct EncodedPage {
    key: Vec<u8>,
    record: Vec<u8>,
    text: Option<Vec<u8>>,
    shingles: Option<Vec<u8>>,
}

impl PageWrite {
    /// Encode the page's rows (record, kept text, shingle set) now, so the store writer only
    /// applies them.
    pub fn encode(&mut self) -> Result<()> {
        if self.encoded.is_none() {
            self.encoded = Some(self.encoded_rows()?);
        }
        Ok(())
    }

    /// After [`PageWrite::encode`]: drop what only the encoding read (the record's evidence,
    /// sources and sketch, the shingle set, and the text unless `keep_text_blocks`), so that
    /// the store writer thread does not spend its time freeing them. The writer reads the
    /// encoded rows, the URL, the neighborhoods and the crawl fields. Nothing is dropped from
    /// a page not yet encoded.
    pub fn shed_encoded(&mut self, keep_text_blocks: bool) {
        if self.encoded.is_none() {
            return;
        }
        self.record.evidence = Vec::new();
        self.record.sources = Vec::new();
        self.record.sketch = Default::default();
        self.shingles = Vec::new();
        if !keep_text_blocks {
            self.text = None;
        }
    }

    fn encoded_rows(&self) -> Result<EncodedPage> {
        let key = self.record.key(&self.file_hash);
        let record = record::encode_record(&self.record).map_err(|e| corrupt(&self.record.url, e))?;
        let text = match (&self.text, self.keep_text) {
            (Some(blocks), true) => {
                Some(record::encode_text(blocks.iter()).map_err(|e| corrupt(&self.record.url, e))?)
            }
            _ => None,
        };
        let shingles =
            (!self.shingles.is_empty()).then(|| self.shingles.iter().flat_map(|s| s.to_le_bytes()).collect());
        Ok(EncodedPage { key, record, text, shingles })
    }
}

/// What a batch write did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchOutcome {
    pub written: u64,
    /// Pages skipped because the store already had that URL + digest.
    pub already_stored: u64,
    /// New links queued in the frontier.
    pub links_queued: u64,
}

/// Identity of the label set a store was scanned with; mixing label sets in one store
/// would make `contains` values incomparable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelSetIdentity {
    pub name: String,
    pub normalization: String,
    pub entries: u64,
    pub min_chars: u64,
}

impl LabelSetIdentity {
    /// What a store scanned without a label set records (`ditto scan` without
    /// `--labelset`): no chunk is labeled, so no neighborhood can be judged, but everything
    /// the analyses that need no label set read (SimHash, text hashes, sources) is there.
    pub fn none(normalization: &str) -> Self {
        LabelSetIdentity {
            name: String::new(),
            normalization: normalization.to_string(),
            entries: 0,
            min_chars: 0,
        }
    }

    /// Whether this is [`LabelSetIdentity::none`].
    pub fn is_none(&self) -> bool {
        self.name.is_empty() && self.entries == 0
    }

    /// How messages name it.
    fn describe(&self) -> String {
        if self.is_none() {
            "no label set".to_string()
        } else {
            format!(
                "label set {:?} ({} entries, normalization {})",
                self.name, self.entries, self.normalization
            )
        }
    }
}

/// Summary counts of a store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoreTotals {
    pub pages: u64,
    pub chunks: u64,
    pub labeled_chunks: u64,
    pub pages_with_labeled_chunks: u64,
    pub neighborhoods: u64,
    /// Σ contains over pages, fixed point (exact, order independent).
    pub contains_sum_fixed: u64,
}

impl StoreTotals {
    /// Count one page in.
    pub fn add_page(&mut self, p: &PageCounts) {
        self.pages += 1;
        self.chunks += u64::from(p.chunks);
        self.labeled_chunks += u64::from(p.labeled_chunks);
        self.pages_with_labeled_chunks += u64::from(p.labeled_chunks > 0);
        self.contains_sum_fixed += detector::neighborhood::contains_fixed(p.contains);
    }
}

/// The counts of one page record ([`Store::page_counts`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageCounts {
    pub chunks: u32,
    pub labeled_chunks: u32,
    pub contains: f64,
}

/// An open store.
pub struct Store {
    /// sled, every call guarded against its panics (see [`lifecycle`]).
    db: lifecycle::Db,
    tree: lifecycle::Tree,
    /// One writer at a time: batches read accumulators before writing them (shared with the
    /// snapshot server, which reads under it).
    write_lock: Arc<Mutex<()>>,
    /// The frontier's seen set in memory (see [`frontier`]).
    seen: Mutex<CompactSeenSet>,
    /// The frontier's cap on open URLs (queued + in flight; see [`Store::set_frontier_cap`]).
    cap: frontier::FrontierCap,
    /// Hosts that had URLs queued since the crawler last asked (see [`frontier`]).
    queued_hosts: frontier::QueuedHosts,
    /// The frontier's queues in memory, taken entries among them (see [`queues`]).
    queues: Mutex<queues::Queues>,
    /// The format stamp on disk is [`STORE_FORMAT_VERSION`] (else [`READABLE_OLDER_FORMAT`],
    /// raised with the first compact queue entry written).
    stamp_current: std::sync::atomic::AtomicBool,
    /// The store directory (marker, owner file, snapshot server) or the snapshot this is.
    life: lifecycle::Life,
}

impl Store {
    /// Open (creating if absent) the store at `path`: [`Store::create_or_open`]. Commands
    /// that only read use [`Store::open_existing`] or [`Store::open_for_reading`].
    pub fn open(path: &Path) -> Result<Store> {
        Store::create_or_open(path)
    }

    /// The stamp to write with a batch that holds a compact queue entry, the first time one
    /// is written into a store stamped [`READABLE_OLDER_FORMAT`] (see [`STORE_FORMAT_VERSION`]).
    /// A batch that fails ends the run; the next one reads the stamp from disk again.
    pub(crate) fn stamp_to_raise(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let was = self.stamp_current.swap(true, std::sync::atomic::Ordering::SeqCst);
        (!was).then(|| (meta_key("format_version"), FORMAT_VERSION.to_string().into_bytes()))
    }

    fn check_version(&self) -> Result<()> {
        let key = meta_key("format_version");
        match self.tree.get(&key)? {
            None => {
                self.tree.insert(key, FORMAT_VERSION.to_string().as_bytes())?;
                self.tree.flush()?;
                self.stamp_current.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            }
            Some(v) if v.as_ref() == FORMAT_VERSION.to_string().as_bytes() => {
                self.stamp_current.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            }
            Some(v) if v.as_ref() == READABLE_OLDER_FORMAT.to_string().as_bytes() => Ok(()),
            Some(v) => Err(StoreError::Version { found: printable(&v) }),
        }
    }

    /// Record the label set this store is scanned with, or check it matches the one
    /// recorded by an earlier run.
    pub fn bind_label_set(&self, id: &LabelSetIdentity) -> Result<()> {
        let key = meta_key("labelset");
        let json = serde_json::to_vec(id).map_err(|e| corrupt("m/labelset", e))?;
        match self.tree.get(&key)? {
            None => {
                self.tree.insert(key, json)?;
                Ok(())
            }
            Some(v) => {
                let old: LabelSetIdentity =
                    serde_json::from_slice(&v).map_err(|e| corrupt("m/labelset", e))?;
                if &old == id {
                    Ok(())
                } else {
                    Err(StoreError::LabelSetMismatch(format!(
                        "this store was scanned with {}, not {}; use a new store",
                        old.describe(),
                        id.describe()
                    )))
                }
            }
        }
    }

    /// The label set recorded by [`Store::bind_label_set`].
    pub fn label_set(&self) -> Result<Option<LabelSetIdentity>> {
        match self.tree.get(meta_key("labelset"))? {
            None => Ok(None),
            Some(v) => Ok(Some(serde_json::from_slice(&v).map_err(|e| corrupt("m/labelset", e))?)),
        }
    }

    /// Store arbitrary metadata (e.g. the path of the label set used).
    pub fn set_meta(&self, name: &str, value: &str) -> Result<()> {
        self.tree.insert(meta_key(name), value.as_bytes())?;
        Ok(())
    }

    pub fn meta(&self, name: &str) -> Result<Option<String>> {
        Ok(self.tree.get(meta_key(name))?.map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Record what the page at `url` said of itself ([`PageDirectives`]; the latest fetch's).
    pub fn put_page_directives(&self, url: &str, d: &PageDirectives) -> Result<()> {
        let v = serde_json::to_vec(d).map_err(|e| corrupt(url, e))?;
        self.tree.insert([DIRECTIVES, url.as_bytes()].concat(), v)?;
        Ok(())
    }

    /// What the page at `url` said of itself, if the crawl recorded anything.
    pub fn page_directives(&self, url: &str) -> Result<Option<PageDirectives>> {
        match self.tree.get([DIRECTIVES, url.as_bytes()].concat())? {
            None => Ok(None),
            Some(v) => serde_json::from_slice(&v).map(Some).map_err(|e| corrupt(url, e)),
        }
    }

    /// True when some capture of this URL (any digest) is stored.
    pub fn has_url(&self, url: &str) -> Result<bool> {
        self.has_key_with_prefix(page_url_prefix(url, 0))
    }

    /// True when the store holds at least one page capture. A scan into a store that holds
    /// none skips [`Store::has_url`] per page: only a capture of this same scan could match,
    /// and [`Store::write_batch`] skips those already.
    pub fn has_any_page(&self) -> Result<bool> {
        self.has_key_with_prefix(PAGE)
    }

    /// True when some key starts with `prefix`.
    fn has_key_with_prefix(&self, prefix: impl AsRef<[u8]>) -> Result<bool> {
        Ok(self.tree.scan_prefix(prefix).next().transpose()?.is_some())
    }

    /// True when this capture (URL + digest) is already stored.
    pub fn has_page(&self, url: &str, file_hash: &Sha1Digest) -> Result<bool> {
        self.tree.contains_key(page_key(url, file_hash))
    }

    /// Write pages and their neighborhood contributions atomically. Pages already stored
    /// (same URL and digest) are skipped and do not count again.
    pub fn write_batch(&self, pages: &[PageWrite]) -> Result<BatchOutcome> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = BatchOutcome::default();
        let mut batch = sled::Batch::default();
        let mut deltas: BTreeMap<&str, NeighborhoodAccumulator> = BTreeMap::new();
        let mut seen_in_batch = std::collections::HashSet::new();
        let mut host_counts: BTreeMap<&str, u64> = BTreeMap::new();
        let mut links: Vec<FrontierEntry> = Vec::new();
        let mut fresh;
        let mut counts = lifecycle::Counts::default();
        // What the pages written hold, summed as a full pass would ([`Store::totals`]).
        let mut written = StoreTotals::default();
        let mut tickets = Vec::new();
        for p in pages {
            if let Some((url, host)) = &p.fetched {
                // The ticket goes with the record, atomically (see `frontier`): written below.
                let fp = url_fingerprint(url);
                if !tickets.contains(&fp) {
                    tickets.push(fp);
                }
                *host_counts.entry(host.as_str()).or_default() += 1;
                links.extend(p.links.iter().cloned());
            }
            let rows = match &p.encoded {
                Some(rows) => rows,
                None => {
                    fresh = p.encoded_rows()?;
                    &fresh
                }
            };
            let key = rows.key.as_slice();
            if !seen_in_batch.insert((p.record.url.as_str(), &p.file_hash)) || self.tree.contains_key(key)? {
                out.already_stored += 1;
                continue;
            }
            if let Some(text) = &rows.text {
                counts.texts += 1;
                batch.insert([TEXT, &key[PAGE.len()..]].concat(), text.as_slice());
            }
            if let Some(shingles) = &rows.shingles {
                batch.insert([SHINGLES, &key[PAGE.len()..]].concat(), shingles.as_slice());
            }
            batch.insert(key, rows.record.as_slice());
            let r = &p.record;
            written.add_page(&PageCounts {
                chunks: r.chunks,
                labeled_chunks: r.labeled_chunks,
                contains: r.contains,
            });
            for n in &p.neighborhoods {
                deltas.entry(n.as_str()).or_default().add(&p.accumulator);
            }
            out.written += 1;
        }
        for (n, delta) in deltas {
            let key = hood_key(n);
            let mut acc = match self.tree.get(&key)? {
                Some(v) => NeighborhoodAccumulator::decode(&v)
                    .ok_or_else(|| corrupt(n, "neighborhood accumulator is not 32 bytes"))?,
                None => {
                    counts.neighborhoods += 1;
                    NeighborhoodAccumulator::default()
                }
            };
            acc.add(&delta);
            batch.insert(key, acc.encode().to_vec());
        }
        let completed_tickets = !host_counts.is_empty();
        self.write_ticket_finish(&tickets, &mut batch)?;
        for (host, n) in host_counts {
            let n = self.host_pages(host)? + n;
            batch.insert([frontier::HOST_COUNT, host.as_bytes()].concat(), n.to_le_bytes().to_vec());
        }
        counts.pages = out.written;
        counts.page_sums = Some(lifecycle::PageSums::of(&written));
        lifecycle::add_counts(&self.tree, &mut batch, &counts)?;
        // All but the last LINK_BATCH links go in batches of their own first (a crawl's
        // batch of pages can carry hundreds of thousands of links; see `frontier`).
        let (early, last) = links.split_at(links.len().saturating_sub(frontier::LINK_BATCH));
        let added_early = self.queue_in_batches(early)?;
        let (mut writes, mut fresh) = (Vec::new(), Vec::new());
        let added = self.stage_links(last, &mut writes, &mut fresh)?;
        for (k, v) in writes {
            batch.insert(k, v);
        }
        out.links_queued = added_early.queued + added.queued;
        self.tree.apply_batch(batch)?;
        self.queues()?.finished(&tickets);
        self.commit_seen(fresh)?;
        if completed_tickets {
            // Tickets completed: a crawler waiting for its last pages may stop now.
            self.queued_hosts.wake();
        }
        Ok(out)
    }

    /// The cleaned text blocks of a stored page capture, when the scan kept them.
    pub fn page_text(&self, url: &str, file_hash: &Sha1Digest) -> Result<Option<Vec<String>>> {
        let key = page_key(url, file_hash);
        match self.tree.get([TEXT, &key[PAGE.len()..]].concat())? {
            None => Ok(None),
            Some(v) => Ok(Some(record::decode_text(&v).map_err(|e| corrupt(url, e))?)),
        }
    }

    /// Every stored text, in URL order: (URL, file SHA-1, blocks).
    pub fn texts(&self) -> impl Iterator<Item = Result<(String, Sha1Digest, Vec<String>)>> + '_ {
        let expected = lifecycle::recorded_counts(&self.tree).map(|c| c.texts);
        let it = self.tree.scan_prefix(TEXT).map(|kv| {
            let (k, v) = kv?;
            let rest = &k[TEXT.len()..];
            if rest.len() < 21 {
                return Err(corrupt(&String::from_utf8_lossy(&k), "text key too short"));
            }
            let (url, hash) = rest.split_at(rest.len() - 20);
            let url = String::from_utf8_lossy(&url[..url.len() - 1]).into_owned();
            let mut d = [0u8; 20];
            d.copy_from_slice(hash);
            let blocks = record::decode_text(&v).map_err(|e| corrupt(&url, e))?;
            Ok((url, d, blocks))
        });
        lifecycle::Counted::new(it, expected, "page texts")
    }

    /// Make everything written so far durable.
    pub fn flush(&self) -> Result<()> {
        self.db.flush()?;
        Ok(())
    }

    /// All pages, in URL order.
    /// At its end, the count is checked against the one recorded by the batches (see
    /// [`lifecycle::Counts`]): records sled lost to damaged files are an error, not a
    /// shorter answer.
    pub fn pages(&self) -> impl Iterator<Item = Result<PageRecord>> + '_ {
        let expected = lifecycle::recorded_counts(&self.tree).map(|c| c.pages);
        lifecycle::Counted::new(self.pages_under(""), expected, "pages")
    }

    /// Every page's counts ([`PageCounts`]), in URL order, read without decoding the rest of
    /// its record; checked against the recorded count at its end as [`Store::pages`] is.
    pub fn page_counts(&self) -> impl Iterator<Item = Result<PageCounts>> + '_ {
        let expected = lifecycle::recorded_counts(&self.tree).map(|c| c.pages);
        let counts = self.tree.scan_prefix(PAGE).map(|kv| {
            let (k, v) = kv?;
            let (chunks, labeled_chunks, contains) =
                record::decode_counts(&v).map_err(|e| corrupt(&printable(&k), e))?;
            Ok(PageCounts { chunks, labeled_chunks, contains })
        });
        lifecycle::Counted::new(counts, expected, "pages")
    }

    /// Pages whose URL starts with `prefix` (e.g. a neighborhood), in URL order.
    pub fn pages_under(&self, prefix: &str) -> impl Iterator<Item = Result<PageRecord>> + '_ {
        let mut k = PAGE.to_vec();
        k.extend_from_slice(prefix.as_bytes());
        self.tree.scan_prefix(k).map(|kv| {
            let (k, v) = kv?;
            decode_page(&k, &v)
        })
    }

    /// One stored page capture (URL + file SHA-1).
    pub fn page(&self, url: &str, file_hash: &Sha1Digest) -> Result<Option<PageRecord>> {
        let key = page_key(url, file_hash);
        match self.tree.get(&key)? {
            None => Ok(None),
            Some(v) => Ok(Some(decode_page(&key, &v)?)),
        }
    }

    /// The stored shingle set of a page (empty when it has none or was stored without).
    pub fn shingles_of(&self, url: &str, file_hash: &Sha1Digest) -> Result<Vec<u32>> {
        let key = [SHINGLES, &page_key(url, file_hash)[PAGE.len()..]].concat();
        match self.tree.get(&key)? {
            None => Ok(Vec::new()),
            Some(v) if v.len() % 4 == 0 => {
                Ok(v.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
            }
            Some(_) => Err(corrupt(url, "shingle set is not a multiple of 4 bytes")),
        }
    }

    /// Store live origins rows (`ditto scan/crawl --origins`, Abdel-Hamid et al. 2009) under
    /// their arrival numbers, in one batch. The store writer writes them right after the
    /// batch of the pages they describe (not atomically with it: a kill in between loses
    /// only these rows).
    pub fn put_live_origins(&self, rows: &[(u64, Vec<u8>)]) -> Result<()> {
        let mut b = sled::Batch::default();
        for (seq, v) in rows {
            b.insert([LIVE_ORIGINS, &seq.to_be_bytes()[..]].concat(), v.as_slice());
        }
        self.tree.apply_batch(b)?;
        Ok(())
    }

    /// Live origins rows in arrival order: (arrival number, JSON).
    pub fn live_origins(&self) -> impl Iterator<Item = Result<(u64, Vec<u8>)>> + '_ {
        self.tree.scan_prefix(LIVE_ORIGINS).map(|kv| {
            let (k, v) = kv?;
            let n = k
                .get(LIVE_ORIGINS.len()..)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(u64::from_be_bytes)
                .ok_or_else(|| corrupt(&String::from_utf8_lossy(&k), "live origins key is not 8 bytes"))?;
            Ok((n, v.to_vec()))
        })
    }

    /// The arrival number after the last live origins row (0 when there is none).
    pub fn next_live_origins_seq(&self) -> Result<u64> {
        match self.tree.scan_prefix(LIVE_ORIGINS).next_back() {
            None => Ok(0),
            Some(kv) => {
                let (k, _) = kv?;
                let n = k.get(LIVE_ORIGINS.len()..).and_then(|b| <[u8; 8]>::try_from(b).ok());
                Ok(n.map(u64::from_be_bytes).map_or(0, |n| n.saturating_add(1)))
            }
        }
    }

    /// All neighborhoods with their accumulators, in prefix order.
    pub fn neighborhoods(&self) -> impl Iterator<Item = Result<(String, NeighborhoodAccumulator)>> + '_ {
        let expected = lifecycle::recorded_counts(&self.tree).map(|c| c.neighborhoods);
        let it = self.tree.scan_prefix(HOOD).map(|kv| {
            let (k, v) = kv?;
            let name = String::from_utf8_lossy(&k[HOOD.len()..]).into_owned();
            let acc = NeighborhoodAccumulator::decode(&v)
                .ok_or_else(|| corrupt(&name, "neighborhood accumulator is not 32 bytes"))?;
            Ok((name, acc))
        });
        lifecycle::Counted::new(it, expected, "neighborhoods")
    }

    /// One neighborhood's accumulator.
    pub fn neighborhood(&self, prefix: &str) -> Result<Option<NeighborhoodAccumulator>> {
        match self.tree.get(hood_key(prefix))? {
            None => Ok(None),
            Some(v) => Ok(Some(
                NeighborhoodAccumulator::decode(&v).ok_or_else(|| corrupt(prefix, "bad accumulator"))?,
            )),
        }
    }

    /// Totals over the whole store (a full pass over pages and neighborhoods).
    pub fn totals(&self) -> Result<StoreTotals> {
        let mut t = StoreTotals::default();
        for p in self.page_counts() {
            t.add_page(&p?);
        }
        for n in self.neighborhoods() {
            n?;
            t.neighborhoods += 1;
        }
        Ok(t)
    }

    /// [`Store::recorded_totals`], or for a store made before page sums were kept,
    /// [`Store::totals`] (a full pass).
    pub fn totals_as_recorded(&self) -> Result<StoreTotals> {
        match self.recorded_totals() {
            Some(t) => Ok(t),
            None => self.totals(),
        }
    }

    /// [`Store::totals`] from the counts the store's batches recorded, without reading a
    /// record (None for a store made before page sums were kept). Unlike `totals`, it does
    /// not notice records lost to damaged files: `ditto store check` and the full passes do.
    pub fn recorded_totals(&self) -> Option<StoreTotals> {
        let c = lifecycle::recorded_counts(&self.tree)?;
        let s = c.page_sums?;
        Some(StoreTotals {
            pages: c.pages,
            chunks: s.chunks,
            labeled_chunks: s.labeled_chunks,
            pages_with_labeled_chunks: s.pages_with_labeled_chunks,
            neighborhoods: c.neighborhoods,
            contains_sum_fixed: s.contains_sum_fixed,
        })
    }

    /// Bytes the store occupies on disk.
    pub fn size_on_disk(&self) -> Result<u64> {
        self.db.size_on_disk()
    }
}

/// A page record from its `p/` key (URL `\0` SHA-1) and value.
fn decode_page(key: &[u8], value: &[u8]) -> Result<PageRecord> {
    let rest = key.get(PAGE.len()..).unwrap_or_default();
    if rest.len() < 21 || rest[rest.len() - 21] != 0 {
        return Err(corrupt(&printable(key), "page key is not URL, 0, 20-byte digest"));
    }
    let (url, hash) = rest.split_at(rest.len() - 20);
    let url = std::str::from_utf8(&url[..url.len() - 1])
        .map_err(|_| corrupt(&printable(key), "page URL is not UTF-8"))?;
    let mut d = [0u8; 20];
    d.copy_from_slice(hash);
    record::decode_record(url, &d, value).map_err(|e| corrupt(url, e))
}

/// Stored bytes shown in a message: printable ASCII kept, the rest escaped, at most 80 chars.
fn printable(b: &[u8]) -> String {
    b.iter().take(80).flat_map(|&c| std::ascii::escape_default(c)).map(char::from).collect()
}

fn meta_key(name: &str) -> Vec<u8> {
    [META, name.as_bytes()].concat()
}

fn hood_key(prefix: &str) -> Vec<u8> {
    [HOOD, prefix.as_bytes()].concat()
}

fn corrupt(key: &str, why: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt { key: lifecycle::escape(key), why: lifecycle::escape(&why.to_string()) }
}

/// Hex of a digest (re-exported for callers building records).
pub fn digest_hex(d: &Sha1Digest) -> String {
    hex(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use detector::matching::PageVerdict;

    pub(crate) fn page(url: &str, body: &[u8], labeled: u32, chunks: u32) -> PageWrite {
        let v = PageVerdict {
            chunks,
            labeled_chunks: labeled,
            contains: detector::matching::contains(labeled as u64, chunks as u64),
            ..Default::default()
        };
        let file_hash = detector::fingerprint::sha1(body);
        PageWrite {
            record: PageRecord {
                url: url.into(),
                fetch_time: 0,
                status: 200,
                file_hash: hex(&file_hash),
                chunks,
                labeled_chunks: labeled,
                stop_chunks: 0,
                contains: v.contains,
                file_match: None,
                sources: vec![],
                evidence: vec![],
                origin: PageOrigin::Unknown,
                simhash: None,
                text_hash: None,
                shingles: 0,
                near_duplicate_of: None,
                passages: None,
                sketch: Default::default(),
            },
            file_hash,
            neighborhoods: detector::neighborhoods(url),
            accumulator: NeighborhoodAccumulator::of_page(&v),
            fetched: None,
            links: vec![],
            shingles: vec![],
            text: Some([format!("text of {url}"), "second block".into()].into_iter().collect()),
            keep_text: true,
            encoded: None,
        }
    }

    /// A frontier entry of host `h`.
    fn e(url: &str) -> FrontierEntry {
        FrontierEntry {
            url: url.into(),
            host_key: "h".into(),
            depth: 0,
            priority: 1,
            hops: 0,
            sitemap: false,
        }
    }

    /// A fetched page's batch removes its ticket, the queue entry the crawler took, with the
    /// record: after it, the URL is neither queued nor in flight, and a new pop passes on.
    #[test]
    fn a_fetched_page_batch_finishes_its_taken_queue_entry() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        store.frontier_add(&[e("http://h/a.html"), e("http://h/b.html")]).unwrap();
        let taken = store.frontier_pop("h").unwrap().unwrap();
        assert_eq!(taken.url, "http://h/a.html");
        assert_eq!(store.frontier_counts().unwrap(), (1, 1));
        let mut p = page("http://h/a.html", b"a", 1, 2);
        p.fetched = Some((taken.url.clone(), "h".into()));
        store.write_batch(&[p]).unwrap();
        assert_eq!(store.frontier_counts().unwrap(), (1, 0));
        assert_eq!(store.host_pages("h").unwrap(), 1);
        assert_eq!(store.frontier_pop("h").unwrap().unwrap().url, "http://h/b.html");
        assert!(store.frontier_pop("h").unwrap().is_none());
    }

    /// A full frontier recounts its open URLs when a page's links come, under the write
    /// lock and while URLs are taken: the batch completes (it once waited on itself for the
    /// lock on taken entries), drops the links that do not fit and finishes its ticket.
    #[test]
    fn a_page_batch_on_a_full_frontier_recounts_and_completes() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(Store::open(&dir.path().join("s.db")).unwrap());
        store.set_frontier_cap(2).unwrap();
        store.frontier_add(&[e("http://h/a.html"), e("http://h/b.html")]).unwrap();
        let taken = store.frontier_pop("h").unwrap().unwrap();
        // Past the recount interval (20 ms in tests), with the running count at the cap.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut p = page("http://h/a.html", b"a", 1, 2);
        p.fetched = Some((taken.url.clone(), "h".into()));
        p.links = (0..3).map(|i| e(&format!("http://h/new{i}.html"))).collect();
        let (tx, rx) = std::sync::mpsc::channel();
        let s2 = store.clone();
        std::thread::spawn(move || {
            let _ = tx.send(s2.write_batch(&[p]).map(|o| o.links_queued));
        });
        let queued = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("the batch never completed");
        // Open before the batch: b queued, a taken (2 = the cap): no room for new links.
        assert_eq!(queued.unwrap(), 0);
        assert_eq!(store.frontier_dropped_full(), 3);
        assert_eq!(store.frontier_counts().unwrap(), (1, 0));
    }

    #[test]
    fn page_side_trees_do_not_collide_with_the_frontier() {
        // Every per-page tree (text, shingles) must stay out of the frontier's prefixes:
        // loading the seen set reads every `s/` key as an 8-byte fingerprint.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let mut p = page("http://h/a.html", b"a", 1, 2);
        p.shingles = vec![1, 2, 3];
        store.write_batch(&[p]).unwrap();
        store
            .frontier_add(&[FrontierEntry {
                url: "http://h/b".into(),
                host_key: "h".into(),
                depth: 0,
                priority: 1,
                hops: 0,
                sitemap: false,
            }])
            .unwrap();
        assert_eq!(store.frontier_load_seen().unwrap(), 1);
        assert_eq!(
            store.shingles_of("http://h/a.html", &detector::fingerprint::sha1(b"a")).unwrap(),
            vec![1, 2, 3]
        );
    }

    #[test]
    fn batches_accumulate_and_rewrites_do_not_double_count() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = page("http://h/a/1.html", b"1", 2, 2);
        let b = page("http://h/a/2.html", b"2", 0, 4);
        let c = page("http://h/3.html", b"3", 1, 2);
        let o = store.write_batch(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(o, BatchOutcome { written: 2, already_stored: 0, links_queued: 0 });
        // a again (same URL + digest) and c: only c counts; a duplicate inside a batch too.
        let o = store.write_batch(&[a.clone(), c.clone(), c.clone()]).unwrap();
        assert_eq!(o, BatchOutcome { written: 1, already_stored: 2, links_queued: 0 });
        let root = store.neighborhood("http://h/").unwrap().unwrap();
        assert_eq!((root.pages, root.chunks, root.labeled_chunks), (3, 8, 3));
        // badness(h/) = (1 + 0 + 0.5) / 3 = 0.5; badness(h/a/) = (1 + 0) / 2.
        assert!((root.badness() - 0.5).abs() < 1e-12);
        assert!((store.neighborhood("http://h/a/").unwrap().unwrap().badness() - 0.5).abs() < 1e-12);
        // Same URL, different content: a second capture, counted.
        store.write_batch(&[page("http://h/a/1.html", b"changed", 0, 1)]).unwrap();
        let t = store.totals().unwrap();
        assert_eq!((t.pages, t.neighborhoods), (4, 2));
        assert_eq!(store.pages_under("http://h/a/").count(), 3);
        let texts: Vec<_> = store.texts().map(|t| t.unwrap()).collect();
        assert_eq!(texts.len(), 4);
        assert_eq!(texts[0].0, "http://h/3.html");
        assert_eq!(texts[0].2, vec!["text of http://h/3.html".to_string(), "second block".into()]);
        let h = detector::fingerprint::sha1(b"3");
        assert_eq!(store.page_text("http://h/3.html", &h).unwrap().unwrap().len(), 2);
        // Any capture of a URL: a stored URL, not a prefix of one, not a longer one.
        assert!(store.has_page("http://h/3.html", &h).unwrap());
        assert!(!store.has_page("http://h/3.html", &detector::fingerprint::sha1(b"other")).unwrap());
        assert!(store.has_url("http://h/3.html").unwrap());
        assert!(store.has_url("http://h/a/1.html").unwrap());
        assert!(!store.has_url("http://h/3.htm").unwrap());
        assert!(!store.has_url("http://h/3.html?x").unwrap());
        assert!(!store.has_url("http://h/").unwrap());
    }

    #[test]
    fn shingle_sets_round_trip_and_old_records_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let mut a = page("http://h/a", b"a", 0, 1);
        a.shingles = vec![1, 7, u32::MAX];
        a.record.simhash = Some(u64::MAX);
        a.record.shingles = 3;
        store.write_batch(&[a.clone(), page("http://h/b", b"b", 0, 1)]).unwrap();
        assert_eq!(store.shingles_of("http://h/a", &a.file_hash).unwrap(), vec![1, 7, u32::MAX]);
        let b_hash = detector::fingerprint::sha1(b"b");
        assert!(store.shingles_of("http://h/b", &b_hash).unwrap().is_empty());
        let recs: Vec<PageRecord> = store.pages().map(|r| r.unwrap()).collect();
        assert_eq!(recs[0].simhash, Some(u64::MAX));
        assert_eq!(recs[1].simhash, None);
        // A record written before these fields existed.
        let old = r#"{"url":"u","fetch_time":0,"status":200,"file_hash":"00","chunks":1,
            "labeled_chunks":0,"stop_chunks":0,"contains":0.0}"#;
        let r: PageRecord = serde_json::from_str(old).unwrap();
        assert_eq!((r.simhash, r.text_hash, r.shingles), (None, None, 0));
    }

    /// A format 5 store (JSON queue entries) is read as it is; the batch that first writes a
    /// compact queue entry into it raises its stamp to 6, which a ditto reading only 5
    /// refuses with a message.
    #[test]
    fn a_format_5_store_is_read_and_stamped_6_with_its_first_compact_queue_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let old = frontier::FrontierEntry {
            url: "http://a/old".into(),
            host_key: "a".into(),
            depth: 1,
            priority: 9,
            hops: 0,
            sitemap: false,
        };
        {
            let store = Store::open(&path).unwrap();
            store.tree.insert(meta_key("format_version"), b"5").unwrap();
            store.tree.insert(frontier::queue_key(&old, 1), serde_json::to_vec(&old).unwrap()).unwrap();
            store.flush().unwrap();
        }
        let stamp = |s: &Store| s.tree.get(meta_key("format_version")).unwrap().unwrap().to_vec();
        let store = Store::open(&path).unwrap();
        assert_eq!(stamp(&store), b"5", "opening does not raise the stamp");
        assert!(store.check().unwrap().problems.is_empty(), "{:?}", store.check().unwrap().problems);
        assert_eq!(store.frontier_pop("a").unwrap(), Some(old.clone()));
        let new = frontier::FrontierEntry { url: "http://a/new".into(), ..old.clone() };
        store.frontier_add(std::slice::from_ref(&new)).unwrap();
        assert_eq!(stamp(&store), b"6");
        assert!(store.check().unwrap().problems.is_empty(), "{:?}", store.check().unwrap().problems);
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.frontier_pop("a").unwrap(), Some(old));
        assert_eq!(store.frontier_pop("a").unwrap(), Some(new));
    }

    #[test]
    fn reopen_keeps_data_and_checks_version_and_label_set() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let id =
            LabelSetIdentity { name: "w".into(), normalization: "none".into(), entries: 3, min_chars: 100 };
        {
            let store = Store::open(&path).unwrap();
            store.bind_label_set(&id).unwrap();
            store.write_batch(&[page("http://h/x", b"x", 1, 1)]).unwrap();
            store.flush().unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.totals().unwrap().pages, 1);
        store.bind_label_set(&id).unwrap();
        let other = LabelSetIdentity { entries: 4, ..id };
        assert!(matches!(store.bind_label_set(&other), Err(StoreError::LabelSetMismatch(_))));
        // Older (JSON-record) and unknown versions are refused with a message to re-scan.
        for old in ["1", "2", "99"] {
            store.tree.insert(meta_key("format_version"), old.as_bytes()).unwrap();
            store.flush().unwrap();
            let err = match store.check_version() {
                Err(e) => e.to_string(),
                Ok(()) => panic!("version {old} accepted"),
            };
            assert!(err.contains(&format!("version {old}")) && err.contains("scan again"), "{err}");
        }
    }

    #[test]
    fn io_errors_read_in_words_with_what_to_do() {
        let full = std::io::Error::from_raw_os_error(28);
        // As sled hands it on: a new error whose text is the original's debug form.
        let from_sled = std::io::Error::new(full.kind(), format!("{full:?}"));
        assert!(from_sled.to_string().contains("Os {"), "{from_sled}");
        assert_eq!(io_words(&from_sled), full.to_string());
        assert_eq!(io_words(&full), "No space left on device (os error 28)");
        let custom = std::io::Error::other("cut short");
        let custom = std::io::Error::new(custom.kind(), format!("{custom:?}"));
        assert_eq!(io_words(&custom), "cut short");
        let err = StoreError::Disk { path: "/data/crawl.db".into(), cause: from_sled }.to_string();
        assert!(
            err.starts_with("store /data/crawl.db: No space left on device (os error 28); free space"),
            "{err}"
        );
        assert!(err.contains("run the same command again") && !err.contains("code:"), "{err}");
        let err = StoreError::Sled(sled::Error::Io(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{:?}", std::io::Error::from_raw_os_error(13)),
        )))
        .to_string();
        assert_eq!(
            err,
            "store error: Permission denied (os error 13); check that this user may read and write it"
        );
    }
}
