//! Host-partitioned crawls (beyond one machine): N crawlers, each owning the hosts whose
//! registrable domain hashes to it ([`crate::urls::partition_of`]), exchange the links they
//! find for hosts they do not own.
//!
//! Detection is distributive given a label set (Ardi & Heidemann 2014 §3.3): a neighborhood
//! is a URL prefix, so it lives inside one host, and the partition owning a host sees every
//! page of it. Per-host politeness holds globally for the same reason. Only the frontier
//! needs coordination, through a [`LinkExchange`]:
//!
//! - **Routing.** [`PartitionRouter::route`] splits admitted links: those this partition owns
//!   go to its own frontier (with the page, in one store batch); the others are sent to their
//!   owner's inbox *before* the page's batch is committed. A crash between the two re-fetches
//!   the page on resume and sends the links again; the owner's seen set drops the duplicates.
//!   So the exchange is at-least-once and no link is lost.
//! - **Receiving.** [`PartitionRouter::poll`] reads the inbox, queues the owned links in the
//!   store (deduplicated against the seen set, atomically) and only then acknowledges the
//!   messages. A crash before the acknowledgement re-reads them; the seen set drops them.
//! - **Termination.** Each partition publishes a [`PartitionState`]: `busy`, `idle` (frontier
//!   empty, nothing in flight or in detection, so every link it found has been sent) or
//!   `stopped` (left early: `--max-pages` or a signal; its inbox keeps what arrives). A
//!   partition turns `busy` (and bumps its generation) *before* acknowledging any message.
//!   The crawl is over for a partition when, read in this order, (1) every partition's state
//!   is idle or stopped, (2) no idle partition has an unacknowledged message, (3) the states
//!   read again are unchanged (same generations) — and this has held for a grace period.
//!   Since a partition only leaves `idle` by acknowledging a message, and turns busy before
//!   that, (1)–(3) mean that no message was pending and nobody was working at (2).
//!
//! [`FileExchange`] keeps it all in a shared directory (for clusters without Redis), as
//! Heritrix's diverted URLs do:
//!
//! ```text
//! DIR/partitions          N, written by the first partition; the others check it
//! DIR/tmp/                messages being written (same file system: rename is atomic)
//! DIR/inbox/<i>/<from>-<ns>-<pid>-<seq>.links   JSON lines of FrontierEntry, for partition i
//! DIR/state/<i>.json      PartitionState of partition i
//! DIR/bad/                unreadable messages, moved aside and counted
//! ```
//!
//! Messages and states appear by rename, so readers never see half a file. Durability is
//! that of the file system against a process kill (kill -9 loses nothing written); for
//! power loss, a shared directory should be on a file system with ordered metadata.

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use store::{url_fingerprint, FrontierEntry, Store};

use crate::urls::partition_of;

#[cfg(feature = "net")]
pub mod redis_exchange;
#[cfg(feature = "net")]
pub use redis_exchange::RedisExchange;

/// Which partition this process is, of how many: `i/N` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    pub index: u32,
    pub count: u32,
}

impl FromStr for Partition {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (i, n) =
            s.split_once('/').ok_or_else(|| format!("partition must be i/N (e.g. 0/3), not {s:?}"))?;
        let index: u32 = i.trim().parse().map_err(|_| format!("partition index {i:?} is not a number"))?;
        let count: u32 = n.trim().parse().map_err(|_| format!("partition count {n:?} is not a number"))?;
        if count == 0 || index >= count {
            return Err(format!("partition {s:?}: need 0 <= i < N"));
        }
        Ok(Partition { index, count })
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Partition {
    /// The whole crawl in one process.
    pub const SINGLE: Partition = Partition { index: 0, count: 1 };

    /// The partition owning `host` (by registrable domain, [`partition_of`]).
    pub fn owner_of_host(&self, host: &str) -> u32 {
        partition_of(host, self.count)
    }

    /// The partition owning a URL's host; None for a URL without a host.
    pub fn owner_of_url(&self, url: &str) -> Option<u32> {
        let u = url::Url::parse(url).ok()?;
        Some(self.owner_of_host(u.host_str()?))
    }

    pub fn owns_url(&self, url: &str) -> bool {
        self.count <= 1 || self.owner_of_url(url) == Some(self.index)
    }

    /// Offline scans: input number `i` (counted in a fixed order) belongs to this partition
    /// when `i mod N = index`.
    pub fn owns_input(&self, i: u64) -> bool {
        self.count <= 1 || i % u64::from(self.count) == u64::from(self.index)
    }
}

/// What went wrong in the exchange.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// A file of the exchange directory could not be read or written. The I/O error is the
    /// `source()`, so it is not repeated in the message.
    #[error("link exchange: {what}")]
    Io { what: String, source: std::io::Error },
    /// The exchange does not fit this crawl (partition count, partition number).
    #[error("link exchange: {0}")]
    Config(String),
    #[cfg(feature = "net")]
    /// The Redis coordinator answered with an error, or could not be reached for a reason
    /// that waiting does not cure. The Redis error is kept but not made the `source()`:
    /// its message already repeats its own cause, so a cause chain would print it twice.
    #[error("link exchange: redis coordinator: {what}: {error}")]
    Redis { what: String, error: redis::RedisError },
    #[error(transparent)]
    Store(#[from] store::StoreError),
}

/// An error and its causes on one line, `a: b: c` (as `anyhow` prints `{:#}`).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line = format!("{line}: {c}");
        cause = c.source();
    }
    line
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ExchangeError {
    let what = what.into();
    move |source| ExchangeError::Io { what, source }
}

/// One received, not yet acknowledged message.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Identifies the message for [`LinkExchange::ack`].
    pub id: String,
    pub entries: Vec<FrontierEntry>,
}

/// Where a partition stands, for termination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Busy,
    Idle,
    Stopped,
}

/// A partition's published state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionState {
    pub phase: Phase,
    /// Bumped at every turn to busy.
    pub generation: u64,
    /// Messages sent and acknowledged by this process so far (for logs and metrics).
    pub sent: u64,
    pub acked: u64,
}

/// How partitions pass links and publish their state. Implementations: [`FileExchange`]
/// (a shared directory) and [`RedisExchange`] (Redis Streams, `--coordinator`).
pub trait LinkExchange: Send + Sync {
    /// Partitions in the crawl.
    fn partitions(&self) -> u32;
    /// Send entries to partition `to`; the message is visible to its owner when this returns.
    fn send(&self, to: u32, entries: &[FrontierEntry]) -> Result<(), ExchangeError>;
    /// Up to `max` pending messages for this partition, oldest first; they stay pending
    /// until acknowledged.
    fn receive(&self, max: usize) -> Result<Vec<Delivery>, ExchangeError>;
    /// The message's links are safely queued: forget it.
    fn ack(&self, d: &Delivery) -> Result<(), ExchangeError>;
    fn publish(&self, state: &PartitionState) -> Result<(), ExchangeError>;
    /// Every partition's last published state (None: never published).
    fn states(&self) -> Result<Vec<Option<PartitionState>>, ExchangeError>;
    /// Unacknowledged messages waiting for partition `p`.
    fn pending(&self, p: u32) -> Result<u64, ExchangeError>;
    /// Implementation counters (e.g. Redis commands sent), for summaries and benchmarks.
    fn stats(&self) -> std::collections::BTreeMap<&'static str, u64> {
        std::collections::BTreeMap::new()
    }
}

/// The file-directory exchange (see the module docs for the layout).
pub struct FileExchange {
    dir: PathBuf,
    me: Partition,
    seq: AtomicU64,
    /// Messages moved to `bad/`.
    pub bad_messages: AtomicU64,
}

impl FileExchange {
    /// Open (creating) the exchange directory for partition `me`. The partition count is
    /// recorded on first use; a partition started with another count is refused.
    pub fn open(dir: &Path, me: Partition) -> Result<FileExchange, ExchangeError> {
        for sub in ["tmp", "state", "bad"] {
            fs::create_dir_all(dir.join(sub))
                .map_err(io_err(format!("creating {}", dir.join(sub).display())))?;
        }
        for i in 0..me.count {
            let d = dir.join("inbox").join(i.to_string());
            fs::create_dir_all(&d).map_err(io_err(format!("creating {}", d.display())))?;
        }
        let ex = FileExchange {
            dir: dir.to_path_buf(),
            me,
            seq: AtomicU64::new(0),
            bad_messages: AtomicU64::new(0),
        };
        let count_file = dir.join("partitions");
        match fs::read_to_string(&count_file) {
            Ok(s) => {
                let n: u32 = s.trim().parse().map_err(|_| {
                    ExchangeError::Config(format!("{} does not hold a partition count", count_file.display()))
                })?;
                if n != me.count {
                    return Err(ExchangeError::Config(format!(
                        "{} is an exchange for {n} partitions, not {}",
                        dir.display(),
                        me.count
                    )));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ex.write_atomic(&count_file, me.count.to_string().as_bytes())?;
            }
            Err(e) => return Err(io_err(format!("reading {}", count_file.display()))(e)),
        }
        Ok(ex)
    }

    fn inbox(&self, p: u32) -> PathBuf {
        self.dir.join("inbox").join(p.to_string())
    }

    fn unique_name(&self) -> String {
        let ns = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        format!("{}-{ns:020}-{}-{}", self.me.index, std::process::id(), self.seq.fetch_add(1, Relaxed))
    }

    /// Write `bytes` to `dest` by way of a temporary file and a rename.
    fn write_atomic(&self, dest: &Path, bytes: &[u8]) -> Result<(), ExchangeError> {
        let tmp = self.dir.join("tmp").join(self.unique_name());
        let mut f = fs::File::create(&tmp).map_err(io_err(format!("creating {}", tmp.display())))?;
        f.write_all(bytes).map_err(io_err(format!("writing {}", tmp.display())))?;
        drop(f);
        fs::rename(&tmp, dest).map_err(io_err(format!("renaming {} to {}", tmp.display(), dest.display())))
    }

    fn message_files(&self, p: u32) -> Result<Vec<PathBuf>, ExchangeError> {
        let inbox = self.inbox(p);
        let mut v = Vec::new();
        for e in fs::read_dir(&inbox).map_err(io_err(format!("listing {}", inbox.display())))? {
            let e = e.map_err(io_err(format!("listing {}", inbox.display())))?;
            if e.file_name().to_string_lossy().ends_with(".links") {
                v.push(e.path());
            }
        }
        v.sort();
        Ok(v)
    }
}

/// One message of links for partition `to`: JSON Lines of frontier entries (both exchanges
/// send this body).
pub(crate) fn encode_links(
    me: Partition,
    to: u32,
    entries: &[FrontierEntry],
) -> Result<Vec<u8>, ExchangeError> {
    if to >= me.count {
        return Err(ExchangeError::Config(format!("no partition {to} of {}", me.count)));
    }
    let mut body = Vec::new();
    for e in entries {
        serde_json::to_writer(&mut body, e)
            .map_err(|x| ExchangeError::Io { what: "encoding a link".into(), source: x.into() })?;
        body.push(b'\n');
    }
    Ok(body)
}

impl LinkExchange for FileExchange {
    fn partitions(&self) -> u32 {
        self.me.count
    }

    fn send(&self, to: u32, entries: &[FrontierEntry]) -> Result<(), ExchangeError> {
        let body = encode_links(self.me, to, entries)?;
        let dest = self.inbox(to).join(format!("{}.links", self.unique_name()));
        self.write_atomic(&dest, &body)
    }

    fn receive(&self, max: usize) -> Result<Vec<Delivery>, ExchangeError> {
        let mut out = Vec::new();
        for path in self.message_files(self.me.index)?.into_iter().take(max) {
            let text = match fs::read_to_string(&path) {
                Ok(t) => t,
                // Acknowledged meanwhile (a second process on the same partition).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err(format!("reading {}", path.display()))(e)),
            };
            let parsed: Result<Vec<FrontierEntry>, _> =
                text.lines().filter(|l| !l.trim().is_empty()).map(serde_json::from_str).collect();
            match parsed {
                Ok(entries) => out.push(Delivery { id: path.display().to_string(), entries }),
                Err(_) => {
                    // Not ours to guess at: keep it aside for a person, go on.
                    self.bad_messages.fetch_add(1, Relaxed);
                    let name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
                    let _ = fs::rename(&path, self.dir.join("bad").join(name));
                }
            }
        }
        Ok(out)
    }

    fn ack(&self, d: &Delivery) -> Result<(), ExchangeError> {
        match fs::remove_file(&d.id) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(format!("removing {}", d.id))(e)),
        }
    }

    fn publish(&self, state: &PartitionState) -> Result<(), ExchangeError> {
        let json = serde_json::to_vec(state)
            .map_err(|x| ExchangeError::Io { what: "encoding the state".into(), source: x.into() })?;
        self.write_atomic(&self.dir.join("state").join(format!("{}.json", self.me.index)), &json)
    }

    fn states(&self) -> Result<Vec<Option<PartitionState>>, ExchangeError> {
        (0..self.me.count)
            .map(|i| {
                let p = self.dir.join("state").join(format!("{i}.json"));
                match fs::read(&p) {
                    Ok(b) => Ok(serde_json::from_slice(&b).ok()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(io_err(format!("reading {}", p.display()))(e)),
                }
            })
            .collect()
    }

    fn pending(&self, p: u32) -> Result<u64, ExchangeError> {
        Ok(self.message_files(p)?.len() as u64)
    }
}

/// Counters of a partition's exchange traffic.
#[derive(Debug, Default)]
pub struct ExchangeCounters {
    pub links_sent: AtomicU64,
    pub messages_sent: AtomicU64,
    /// Links not sent again because this process sent them before.
    pub links_not_resent: AtomicU64,
    pub links_received: AtomicU64,
    pub messages_received: AtomicU64,
    /// Received links new to this partition's frontier.
    pub links_queued: AtomicU64,
    /// Failed send attempts (each is retried until it succeeds; no link is dropped).
    pub send_errors: AtomicU64,
}

impl ExchangeCounters {
    /// The counters by name, for summaries.
    pub fn snapshot(&self) -> std::collections::BTreeMap<&'static str, u64> {
        snapshot_counters([
            ("links_sent", &self.links_sent),
            ("messages_sent", &self.messages_sent),
            ("links_not_resent", &self.links_not_resent),
            ("links_received", &self.links_received),
            ("messages_received", &self.messages_received),
            ("links_queued", &self.links_queued),
            ("send_errors", &self.send_errors),
        ])
    }
}

/// Named counters read into a map, for summaries.
pub(crate) fn snapshot_counters<'a>(
    named: impl IntoIterator<Item = (&'static str, &'a AtomicU64)>,
) -> std::collections::BTreeMap<&'static str, u64> {
    named.into_iter().map(|(k, v)| (k, v.load(Relaxed))).collect()
}

struct LocalState {
    phase: Phase,
    generation: u64,
    /// When the global termination condition was first seen to hold (reset when it fails).
    done_since: Option<Instant>,
}

/// Most link fingerprints remembered as sent (≈ 16 MB); past it the memory starts over.
/// Resending is harmless (the owner deduplicates), so this only saves messages.
const SENT_CACHE_MAX: usize = 1 << 20;

/// A partition's side of the exchange: routes links, polls the inbox, decides termination.
pub struct PartitionRouter {
    pub partition: Partition,
    exchange: Arc<dyn LinkExchange>,
    /// How long the termination condition must hold before a partition stops.
    pub grace: Duration,
    sent_cache: Mutex<HashSet<u64>>,
    state: Mutex<LocalState>,
    pub counters: ExchangeCounters,
}

/// First wait after a failed send ([`PartitionRouter::route`]).
const SEND_BACKOFF_START: Duration = Duration::from_millis(50);
/// Longest wait between two attempts of one send.
const SEND_BACKOFF_MAX: Duration = Duration::from_secs(5);

impl PartitionRouter {
    pub fn new(partition: Partition, exchange: Arc<dyn LinkExchange>, grace: Duration) -> PartitionRouter {
        PartitionRouter {
            partition,
            exchange,
            grace,
            sent_cache: Mutex::new(HashSet::new()),
            state: Mutex::new(LocalState { phase: Phase::Busy, generation: 0, done_since: None }),
            counters: ExchangeCounters::default(),
        }
    }

    /// Announce this partition as busy (at start: it may have work others wait for).
    pub fn start(&self) -> Result<(), ExchangeError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let generation = self
            .exchange
            .states()?
            .get(self.partition.index as usize)
            .cloned()
            .flatten()
            .map_or(0, |s| s.generation);
        st.generation = generation + 1;
        st.phase = Phase::Busy;
        self.publish_locked(&st)
    }

    fn publish_locked(&self, st: &LocalState) -> Result<(), ExchangeError> {
        self.exchange.publish(&PartitionState {
            phase: st.phase,
            generation: st.generation,
            sent: self.counters.messages_sent.load(Relaxed),
            acked: self.counters.messages_received.load(Relaxed),
        })
    }

    /// The exchange counters and the implementation's own (e.g. Redis commands sent).
    pub fn stats(&self) -> std::collections::BTreeMap<&'static str, u64> {
        let mut m = self.counters.snapshot();
        m.extend(self.exchange.stats());
        m
    }

    pub fn owns(&self, e: &FrontierEntry) -> bool {
        self.partition.owns_url(&e.url)
    }

    /// Keep the entries this partition owns; send the others to their owners now. A send
    /// that fails is retried until it succeeds ([`Self::send_until_sent`]); each failed
    /// attempt is counted (`send_errors`).
    pub fn route(&self, entries: Vec<FrontierEntry>) -> Vec<FrontierEntry> {
        if self.partition.count <= 1 {
            return entries;
        }
        let mut own = Vec::with_capacity(entries.len());
        let mut out: Vec<Vec<FrontierEntry>> = vec![Vec::new(); self.partition.count as usize];
        {
            let mut cache = self.sent_cache.lock().unwrap_or_else(|e| e.into_inner());
            for e in entries {
                match self.partition.owner_of_url(&e.url) {
                    Some(p) if p == self.partition.index => own.push(e),
                    Some(p) => {
                        if cache.len() >= SENT_CACHE_MAX {
                            cache.clear();
                        }
                        if cache.insert(url_fingerprint(&e.url)) {
                            out[p as usize].push(e);
                        } else {
                            self.counters.links_not_resent.fetch_add(1, Relaxed);
                        }
                    }
                    // No host: admitted links always have one; keep it local.
                    None => own.push(e),
                }
            }
        }
        for (p, batch) in out.into_iter().enumerate() {
            if batch.is_empty() {
                continue;
            }
            self.send_until_sent(p as u32, &batch);
            self.counters.messages_sent.fetch_add(1, Relaxed);
            self.counters.links_sent.fetch_add(batch.len() as u64, Relaxed);
        }
        own
    }

    /// Send one message, retrying a failed send with backoff (`SEND_BACKOFF_START` doubling
    /// to `SEND_BACKOFF_MAX`) until it goes through: the page whose links these are is
    /// committed only after `route` returns, so giving up would lose them. Waiting holds the
    /// match worker, which holds the crawl (back-pressure) — as the Redis exchange waits
    /// out an outage. One line is logged when sending starts failing and one when it
    /// recovers; a second Ctrl-C exits during the wait (the page is then refetched on
    /// resume and its links sent again).
    fn send_until_sent(&self, to: u32, batch: &[FrontierEntry]) {
        let mut backoff = SEND_BACKOFF_START;
        let mut failures = 0u64;
        loop {
            match self.exchange.send(to, batch) {
                Ok(()) => {
                    if failures > 0 {
                        eprintln!(
                            "partition exchange: {} links for partition {to} sent after {failures} failed attempts",
                            batch.len()
                        );
                    }
                    return;
                }
                Err(e) => {
                    self.counters.send_errors.fetch_add(1, Relaxed);
                    if failures == 0 {
                        eprintln!(
                            "partition exchange: sending {} links to partition {to} failed ({}); retrying until it succeeds",
                            batch.len(),
                            with_causes(&e)
                        );
                    }
                    failures += 1;
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(SEND_BACKOFF_MAX);
                }
            }
        }
    }

    /// Read the inbox, queue the links in `store` (those already seen are dropped), then
    /// acknowledge. Turns this partition busy first when anything arrived. Returns the
    /// links newly queued.
    pub fn poll(&self, store: &Store) -> Result<u64, ExchangeError> {
        let deliveries = self.exchange.receive(256)?;
        if deliveries.is_empty() {
            return Ok(0);
        }
        self.set_busy()?;
        let mut queued = 0;
        for d in &deliveries {
            // A link for another partition (misrouted) goes on to its owner.
            let own = self.route(d.entries.clone());
            queued += store.frontier_add(&own)?.queued;
            self.counters.links_received.fetch_add(d.entries.len() as u64, Relaxed);
        }
        // Durable before acknowledged: sled keeps recent batches in memory for up to its
        // flush interval, and a kill -9 in that window would lose acknowledged links.
        store.flush()?;
        for d in &deliveries {
            self.exchange.ack(d)?;
            self.counters.messages_received.fetch_add(1, Relaxed);
        }
        self.counters.links_queued.fetch_add(queued, Relaxed);
        Ok(queued)
    }

    /// This partition has work: publish busy (bumping the generation) unless it already is.
    pub fn set_busy(&self) -> Result<(), ExchangeError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.done_since = None;
        if st.phase != Phase::Busy {
            st.phase = Phase::Busy;
            st.generation += 1;
            self.publish_locked(&st)?;
        }
        Ok(())
    }

    /// This partition stops early (max pages, signal): others need not wait for it.
    pub fn set_stopped(&self) -> Result<(), ExchangeError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.phase = Phase::Stopped;
        self.publish_locked(&st)
    }

    /// Called while this partition is locally idle: publish idle, then true once the whole
    /// crawl has been over (module docs) for the grace period.
    pub fn idle_and_done(&self) -> Result<bool, ExchangeError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.phase != Phase::Idle {
            st.phase = Phase::Idle;
            self.publish_locked(&st)?;
        }
        if !self.globally_done()? {
            st.done_since = None;
            return Ok(false);
        }
        let since = *st.done_since.get_or_insert_with(Instant::now);
        Ok(since.elapsed() >= self.grace)
    }

    fn globally_done(&self) -> Result<bool, ExchangeError> {
        let first = self.exchange.states()?;
        let settled = |s: &Option<PartitionState>| matches!(s, Some(s) if s.phase != Phase::Busy);
        if !first.iter().all(settled) {
            return Ok(false);
        }
        for (p, s) in first.iter().enumerate() {
            if matches!(s, Some(s) if s.phase == Phase::Idle) && self.exchange.pending(p as u32)? > 0 {
                return Ok(false);
            }
        }
        let second = self.exchange.states()?;
        Ok(first.iter().zip(&second).all(|(a, b)| match (a, b) {
            (Some(a), Some(b)) => a.phase == b.phase && a.generation == b.generation,
            _ => false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str) -> FrontierEntry {
        FrontierEntry {
            url: url.into(),
            host_key: String::new(),
            depth: 1,
            priority: 5,
            hops: 0,
            sitemap: false,
        }
    }

    #[test]
    fn partition_specs_parse() {
        assert_eq!("1/3".parse::<Partition>(), Ok(Partition { index: 1, count: 3 }));
        assert!("3/3".parse::<Partition>().is_err());
        assert!("0/0".parse::<Partition>().is_err());
        assert!("x/2".parse::<Partition>().is_err());
        assert!("2".parse::<Partition>().is_err());
        let p = Partition { index: 2, count: 3 };
        assert!(p.owns_input(5) && !p.owns_input(4));
        assert_eq!(p.owner_of_url("http://www.example.com/a"), Some(partition_of("example.com", 3)));
        assert!(Partition::SINGLE.owns_url("not a url"));
    }

    /// Find a host name owned by partition `p` of `n`.
    fn host_of(p: u32, n: u32) -> String {
        (0..1000).map(|i| format!("w{i}.test")).find(|h| partition_of(h, n) == p).unwrap_or_default()
    }

    #[test]
    fn links_travel_to_their_owner_and_are_acknowledged_after_queueing() {
        let tmp = tempfile::tempdir().unwrap();
        let ex = |i| Arc::new(FileExchange::open(tmp.path(), Partition { index: i, count: 2 }).unwrap());
        let r0 = PartitionRouter::new(Partition { index: 0, count: 2 }, ex(0), Duration::ZERO);
        let r1 = PartitionRouter::new(Partition { index: 1, count: 2 }, ex(1), Duration::ZERO);
        assert!(FileExchange::open(tmp.path(), Partition { index: 0, count: 3 }).is_err());
        let (h0, h1) = (host_of(0, 2), host_of(1, 2));
        let own = r0.route(vec![
            entry(&format!("http://{h0}/a")),
            entry(&format!("http://{h1}/b")),
            entry(&format!("http://{h1}/c")),
        ]);
        assert_eq!(own.len(), 1);
        // Sent once: the second time the cache knows it.
        assert!(r0.route(vec![entry(&format!("http://{h1}/b"))]).is_empty());
        assert_eq!(r0.counters.links_not_resent.load(Relaxed), 1);
        let store_dir = tempfile::tempdir().unwrap();
        let store = Store::open(&store_dir.path().join("s.db")).unwrap();
        store.frontier_load_seen().unwrap();
        store.frontier_add(&[entry(&format!("http://{h1}/c"))]).unwrap();
        r1.start().unwrap();
        // A crash after queueing but before the acknowledgement: read again, deduplicated.
        let d = r1.exchange.receive(10).unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(store.frontier_add(&d[0].entries).unwrap().queued, 1);
        assert_eq!(r1.poll(&store).unwrap(), 0);
        assert_eq!(r1.exchange.pending(1).unwrap(), 0);
        assert_eq!(store.frontier_counts().unwrap(), (2, 0));
    }

    /// An exchange whose first `fail` sends fail (fault injection), then a file exchange.
    struct FlakyExchange {
        inner: FileExchange,
        fail: AtomicU64,
    }

    impl LinkExchange for FlakyExchange {
        fn partitions(&self) -> u32 {
            self.inner.partitions()
        }
        fn send(&self, to: u32, entries: &[FrontierEntry]) -> Result<(), ExchangeError> {
            if self.fail.load(Relaxed) > 0 {
                self.fail.fetch_sub(1, Relaxed);
                return Err(ExchangeError::Io {
                    what: "injected".into(),
                    source: std::io::Error::other("disk full"),
                });
            }
            self.inner.send(to, entries)
        }
        fn receive(&self, max: usize) -> Result<Vec<Delivery>, ExchangeError> {
            self.inner.receive(max)
        }
        fn ack(&self, d: &Delivery) -> Result<(), ExchangeError> {
            self.inner.ack(d)
        }
        fn publish(&self, state: &PartitionState) -> Result<(), ExchangeError> {
            self.inner.publish(state)
        }
        fn states(&self) -> Result<Vec<Option<PartitionState>>, ExchangeError> {
            self.inner.states()
        }
        fn pending(&self, p: u32) -> Result<u64, ExchangeError> {
            self.inner.pending(p)
        }
    }

    #[test]
    fn a_failing_send_is_retried_until_the_links_are_sent() {
        let tmp = tempfile::tempdir().unwrap();
        let (p0, p1) = (Partition { index: 0, count: 2 }, Partition { index: 1, count: 2 });
        let flaky =
            FlakyExchange { inner: FileExchange::open(tmp.path(), p0).unwrap(), fail: AtomicU64::new(4) };
        let r0 = PartitionRouter::new(p0, Arc::new(flaky), Duration::from_millis(10));
        let urls: Vec<String> = (0..40).map(|i| format!("http://host{i}.example/")).collect();
        let theirs: Vec<&String> = urls.iter().filter(|u| p1.owns_url(u)).collect();
        assert!(!theirs.is_empty());
        let own = r0.route(urls.iter().map(|u| entry(u)).collect());
        assert_eq!(own.len() + theirs.len(), urls.len());
        assert_eq!(r0.counters.send_errors.load(Relaxed), 4);
        assert_eq!(r0.counters.links_sent.load(Relaxed), theirs.len() as u64);
        // Everything arrived at partition 1, once.
        let x1 = FileExchange::open(tmp.path(), p1).unwrap();
        let got: Vec<String> =
            x1.receive(100).unwrap().into_iter().flat_map(|d| d.entries.into_iter().map(|e| e.url)).collect();
        assert_eq!(got.len(), theirs.len());
        assert!(theirs.iter().all(|u| got.contains(u)));
    }

    #[test]
    fn termination_waits_for_every_partition_and_every_message() {
        let tmp = tempfile::tempdir().unwrap();
        let mk = |i| {
            let p = Partition { index: i, count: 2 };
            PartitionRouter::new(p, Arc::new(FileExchange::open(tmp.path(), p).unwrap()), Duration::ZERO)
        };
        let (r0, r1) = (mk(0), mk(1));
        r0.start().unwrap();
        // Partition 1 has not started: not done.
        assert!(!r0.idle_and_done().unwrap());
        r1.start().unwrap();
        assert!(!r0.idle_and_done().unwrap());
        // 1 sends to 0, then goes idle: 0 has a pending message, so nobody is done.
        r1.route(vec![entry(&format!("http://{}/x", host_of(0, 2)))]);
        assert!(!r1.idle_and_done().unwrap());
        assert!(!r0.idle_and_done().unwrap());
        let store_dir = tempfile::tempdir().unwrap();
        let store = Store::open(&store_dir.path().join("s.db")).unwrap();
        store.frontier_load_seen().unwrap();
        assert_eq!(r0.poll(&store).unwrap(), 1);
        // r0 is busy again until its frontier empties.
        assert!(!r1.idle_and_done().unwrap());
        assert!(r0.idle_and_done().unwrap());
        assert!(r1.idle_and_done().unwrap());
        // A stopped partition does not hold the others.
        r1.set_busy().unwrap();
        r1.set_stopped().unwrap();
        assert!(r0.idle_and_done().unwrap());
    }
}
