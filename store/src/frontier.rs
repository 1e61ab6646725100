//! The crawl frontier, kept in the store's tree so that a fetched page and the removal of its
//! in-flight ticket are written in one atomic batch, its links in that batch or just before
//! it (see "Memory per batch" below).
//!
//! | prefix | key | value |
//! |---|---|---|
//! | `ql/`, `qd/` | record number BE | the queues: a log of queued entries, and marks of those finished (see `queues.rs`) |
//! | `q/` | host key `\0` (u32::MAX − priority) BE, sequence BE | queued, one key per URL, by versions before format 6 ([`encode_queued`] or JSON): moved into the log when a crawl first uses the frontier |
//! | `i/` | URL fingerprint (8 bytes) | [`FrontierEntry`] JSON: in flight when a run before 2026-11-25 stopped (no longer written; requeued at the next start) |
//! | `s/` | URL fingerprint (8 bytes) | empty: seen (queued, in flight or done), one key per URL |
//! | `sb/` | sequence BE | URL fingerprints, 8 bytes BE each: seen, one key per link batch |
//! | `hc/` | host key | u64 LE: pages fetched from the host |
//! | `rf/` | URL fingerprint (8 bytes) | [`FrontierEntry`] JSON: finished unfetched, its address refused |
//!
//! Per-host queues are ordered by priority, then arrival, and kept in memory: their durable
//! copy is a log with one record per link batch (`queues.rs`, module notes), so queueing a
//! link is no sled insert of its own. The seen set is also kept in
//! memory as a [`CompactSeenSet`] (≈ 6.3 bytes per URL) for its first
//! [`SEEN_IN_MEMORY`] URLs; past that, a fingerprint not in memory is looked up in `s/` on
//! disk, so memory stays bounded whatever the crawl's size. While the memory set holds every
//! fingerprint, a link batch's new fingerprints are written as one `sb/` record: one sled
//! insert at the tree's end instead of one per URL at a random place (each sled insert copies
//! the node it lands in; at 100,000 hosts the per-URL keys were 8 % of a crawl's CPU). Once
//! the memory set is full, new fingerprints get `s/` keys, which a lookup can find; a load
//! whose limit leaves fingerprints of `sb/` records out of memory rewrites those records as
//! `s/` keys first. Host keys are chosen by the caller
//! (the crawler uses SURT host keys); the store does not interpret URLs.
//!
//! Memory per batch: sled keeps every node version a batch makes until the batch ends (about
//! 8 KB per inserted key in a crawl's queue, measured in issue 26), so links enter the queue
//! in batches of at most [`LINK_BATCH`]; a page's links may therefore be queued just before
//! the batch that stores the page and clears its in-flight ticket. A crash between the
//! two leaves the links queued and the pages in flight: the next run fetches the pages again
//! and finds their links already seen — nothing is lost.
//!
//! Taking a URL writes nothing: its entry stays in the log until the URL is finished, and the
//! store holds in memory the entries it handed out (its tickets). The batch that stores the
//! page finishes the ticket (a done mark, or the removal of a log record left with nothing
//! live; with the record and counts, atomically), and finishing a URL without a page does so
//! after the URL's links are queued. A crash or kill leaves every unfinished URL queued: the
//! next run fetches it again (a page already stored is then skipped) — nothing is lost.
//! Why no write: sled 0.34 seals and writes its log buffer twice for every `apply_batch`, and
//! a crawl that moved each URL from `q/` to an in-flight `i/` entry as it took it wrote one
//! batch per request (a third of a crawl's CPU, on sled's threads), then two single-key writes
//! per request (the scheduler's thread: each sled insert copies the node it changes). Links
//! are still queued in batches (see "Memory per batch").
//!
//! Resume: entries in `i/` (written by runs before 2026-11-25, which moved a URL there as they
//! took it) go back to their queues when a crawl starts.
//! Entries in `rf/` were refused for their address (private, loopback, …) without a request:
//! they go back to their queues too, so that a run with `--allow-private` (or a `--resolve`
//! mapping) fetches them, and a run without refuses them again.

use std::collections::{HashMap, HashSet};

pub use crate::queue_entry::FrontierEntry;
pub(crate) use crate::queue_entry::{
    be_u64s, decode_entry, encode_queued, fp_key, queue_key, queue_key_priority, queue_prefix, QUEUE,
};
use crate::{corrupt, Result, Store};

pub(crate) const INFLIGHT: &[u8] = b"i/";
pub(crate) const SEEN: &[u8] = b"s/";
pub(crate) const SEEN_BATCH: &[u8] = b"sb/";
pub(crate) const HOST_COUNT: &[u8] = b"hc/";
pub(crate) const REFUSED: &[u8] = b"rf/";

/// Most frontier entries written in one sled batch (see the module notes).
pub const LINK_BATCH: usize = 128;

/// URLs whose fingerprints the seen set keeps in memory: 2^29, ≈ 537 million (≈ 6.3 bytes each,
/// ≈ 3.2 GiB, up to ≈ 20 bytes each while a merge rebuilds it), above the 312 million per
/// partition of the capacity plan (`docs/capacity.md`); the rest are looked up on disk.
pub const SEEN_IN_MEMORY: usize = 1 << 29;

/// How often a full frontier counts its open URLs again (pops and finishes make room, and
/// are not counted one by one).
const RECOUNT_EVERY: std::time::Duration =
    std::time::Duration::from_millis(if cfg!(test) { 20 } else { 5_000 });

/// A cap on the frontier's open URLs (queued + in flight), so that a crawl's memory does not
/// grow with the links it meets: the queues are in memory (about 0.2–0.3 KB per queued URL
/// with the seen set, measured by `examples/bench_hostile_crawl`). Links found while the
/// frontier is full are dropped (not marked seen, so a later page or run may queue them) and
/// counted.
#[derive(Debug)]
pub(crate) struct FrontierCap {
    max: std::sync::atomic::AtomicU64,
    /// Open URLs: exact after a recount, plus the URLs queued since.
    open: std::sync::atomic::AtomicU64,
    dropped: std::sync::atomic::AtomicU64,
    last_recount: std::sync::Mutex<Option<std::time::Instant>>,
}

impl Default for FrontierCap {
    fn default() -> Self {
        FrontierCap {
            max: std::sync::atomic::AtomicU64::new(u64::MAX),
            open: Default::default(),
            dropped: Default::default(),
            last_recount: std::sync::Mutex::new(None),
        }
    }
}

/// Hosts that had URLs queued since the crawler last asked ([`Store::frontier_take_queued_hosts`]):
/// the scheduler keeps its queue of hosts in memory and reads only these from the store,
/// rather than every host's queue head after each fetch.
#[derive(Default)]
pub(crate) struct QueuedHosts {
    /// Each host told of, with the best priority queued for it since it was last taken.
    hosts: std::sync::Mutex<HashMap<String, u32>>,
    /// Called when a host is told of into an empty set, and when tickets are completed
    /// ([`Store::frontier_set_waker`]).
    waker: std::sync::RwLock<Option<Waker>>,
}

type Waker = std::sync::Arc<dyn Fn() + Send + Sync>;

impl std::fmt::Debug for QueuedHosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueuedHosts").field("hosts", &self.hosts).finish_non_exhaustive()
    }
}

impl QueuedHosts {
    /// `(host, priority)`: an entry of that priority was queued for the host.
    fn note<'a>(&self, hosts: impl IntoIterator<Item = (&'a str, u32)>) {
        let mut set = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let was_empty = set.is_empty();
        for (h, p) in hosts {
            match set.get_mut(h) {
                Some(best) => *best = (*best).max(p),
                None => {
                    set.insert(h.to_string(), p);
                }
            }
        }
        let wake = was_empty && !set.is_empty();
        drop(set);
        if wake {
            self.wake();
        }
    }

    pub(crate) fn wake(&self) {
        if let Some(w) = &*self.waker.read().unwrap_or_else(|e| e.into_inner()) {
            w();
        }
    }
}

/// 64-bit fingerprint of a canonical URL: the first 8 bytes of its SHA-1 (stable across
/// versions and machines; collisions are negligible below billions of URLs).
pub fn url_fingerprint(url: &str) -> u64 {
    let d = detector::fingerprint::sha1(url.as_bytes());
    u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

/// A set of 64-bit fingerprints in ≈ 6.3 bytes each: the fingerprints sorted and split into
/// 2^16 buckets by their top 16 bits, each stored as its low 48 bits (6 bytes), plus a small
/// hash set of recent inserts merged in when it passes 1/32 of the sorted part.
#[derive(Debug, Clone)]
pub struct CompactSeenSet {
    /// Low 48 bits of each fingerprint, big-endian, 6 bytes each, sorted within buckets.
    lows: Vec<u8>,
    /// `starts[b]..starts[b + 1]` are bucket b's entries (indices into `lows` / 6).
    starts: Vec<u32>,
    recent: HashSet<u64>,
    /// Most fingerprints held; inserts past it are refused and [`CompactSeenSet::spilled`]
    /// turns true (the caller then looks misses up on disk).
    limit: usize,
    spilled: bool,
}

const BUCKET_BITS: u32 = 16;
const LOW_BYTES: usize = 6;

impl Default for CompactSeenSet {
    fn default() -> Self {
        CompactSeenSet {
            lows: Vec::new(),
            starts: vec![0; (1 << BUCKET_BITS) + 1],
            recent: HashSet::new(),
            limit: usize::MAX,
            spilled: false,
        }
    }
}

fn split(fp: u64) -> (usize, u64) {
    ((fp >> (64 - BUCKET_BITS)) as usize, fp & ((1u64 << 48) - 1))
}

fn low_at(lows: &[u8], i: usize) -> u64 {
    let b = &lows[i * LOW_BYTES..(i + 1) * LOW_BYTES];
    b.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64)
}

impl CompactSeenSet {
    fn sorted_len(&self) -> usize {
        self.lows.len() / LOW_BYTES
    }

    fn sorted_contains(&self, fp: u64) -> bool {
        let (bucket, low) = split(fp);
        let (mut lo, mut hi) = (self.starts[bucket] as usize, self.starts[bucket + 1] as usize);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match low_at(&self.lows, mid).cmp(&low) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    pub fn contains(&self, fp: u64) -> bool {
        self.recent.contains(&fp) || self.sorted_contains(fp)
    }

    /// Insert; true when it was not there. Past the limit nothing is inserted (true is still
    /// returned for a fingerprint not held) and the set is marked spilled.
    pub fn insert(&mut self, fp: u64) -> bool {
        if self.contains(fp) {
            return false;
        }
        if self.len() >= self.limit {
            self.spilled = true;
            return true;
        }
        self.recent.insert(fp);
        if self.recent.len() > (self.sorted_len() / 32).max(4096) {
            self.merge();
        }
        true
    }

    /// Every fingerprint, sorted.
    fn to_sorted_vec(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.sorted_len());
        for b in 0..(1usize << BUCKET_BITS) {
            for i in self.starts[b] as usize..self.starts[b + 1] as usize {
                out.push(((b as u64) << 48) | low_at(&self.lows, i));
            }
        }
        out
    }

    fn merge(&mut self) {
        let mut all = self.to_sorted_vec();
        all.extend(self.recent.drain());
        self.rebuild(all);
        self.recent.shrink_to(4096);
    }

    fn rebuild(&mut self, mut all: Vec<u64>) {
        all.sort_unstable();
        all.dedup();
        let mut lows = Vec::with_capacity(all.len() * LOW_BYTES);
        let mut starts = vec![0u32; (1 << BUCKET_BITS) + 1];
        for &fp in &all {
            let (b, low) = split(fp);
            starts[b + 1] += 1;
            lows.extend_from_slice(&low.to_be_bytes()[2..]);
        }
        for b in 0..(1usize << BUCKET_BITS) {
            starts[b + 1] += starts[b];
        }
        self.lows = lows;
        self.starts = starts;
    }

    pub fn len(&self) -> usize {
        self.sorted_len() + self.recent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hold at most `limit` fingerprints (the ones held stay).
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self.spilled |= self.len() > limit;
        self
    }

    /// True when `n` more fingerprints fit under the limit (and none was refused yet).
    pub fn has_room_for(&self, n: usize) -> bool {
        !self.spilled && self.len().saturating_add(n) <= self.limit
    }

    /// True once a fingerprint was refused for the limit: a miss is then not proof of absence.
    pub fn spilled(&self) -> bool {
        self.spilled
    }

    /// Heap bytes held (for the bytes-per-URL benchmark).
    pub fn heap_bytes(&self) -> usize {
        self.lows.capacity() + self.starts.capacity() * 4 + self.recent.capacity() * 9
    }

    /// Build from fingerprints in any order.
    pub fn from_unsorted(v: Vec<u64>) -> Self {
        let mut s = CompactSeenSet::default();
        s.rebuild(v);
        s
    }
}

/// The fingerprint of an `s/` key.
pub(crate) fn seen_key_fingerprint(k: &[u8]) -> Result<u64> {
    let b: [u8; 8] = k[SEEN.len()..].try_into().map_err(|_| corrupt("s/", "seen key is not 8 bytes"))?;
    Ok(u64::from_be_bytes(b))
}

/// The fingerprints of an `sb/` record.
pub(crate) fn seen_batch_fingerprints(k: &[u8], v: &[u8]) -> Result<Vec<u64>> {
    be_u64s(v)
        .filter(|_| k.len() == SEEN_BATCH.len() + 8)
        .ok_or_else(|| corrupt(&String::from_utf8_lossy(k), "seen batch record of a wrong length"))
}

/// An entry staged by [`Store::stage_links`]: its URL's fingerprint, its id, its value and
/// its log record, for [`Store::commit_seen`] once the batch is applied.
pub(crate) struct Fresh<'a> {
    pub(crate) fp: u64,
    pub(crate) entry: &'a FrontierEntry,
    pub(crate) id: u64,
    pub(crate) value: Vec<u8>,
    pub(crate) record: u64,
}

/// What [`Store::frontier_add`] did with each entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddOutcome {
    pub queued: u64,
    pub already_seen: u64,
    /// Not queued: the frontier was full ([`Store::set_frontier_cap`]).
    pub dropped_full: u64,
}

impl Store {
    /// Load the seen set into memory (once, at the start of a crawl): the first
    /// [`SEEN_IN_MEMORY`] fingerprints (see [`Store::frontier_load_seen_limited`]). Returns
    /// the URLs seen (on disk).
    pub fn frontier_load_seen(&self) -> Result<usize> {
        self.frontier_load_seen_limited(SEEN_IN_MEMORY)
    }

    /// [`Store::frontier_load_seen`] keeping at most `limit` fingerprints in memory; past it,
    /// lookups that miss in memory read `s/` on disk.
    pub fn frontier_load_seen_limited(&self, limit: usize) -> Result<usize> {
        let mut v = Vec::new();
        let mut total = 0usize;
        for kv in self.tree.scan_prefix(SEEN) {
            let fp = seen_key_fingerprint(&kv?.0)?;
            total += 1;
            if v.len() < limit {
                v.push(fp);
            }
        }
        for kv in self.tree.scan_prefix(SEEN_BATCH) {
            let (k, batch) = kv?;
            let fps = seen_batch_fingerprints(&k, &batch)?;
            total += fps.len();
            if v.len() + fps.len() <= limit {
                v.extend(fps);
            } else {
                // Past the memory limit, lookups read `s/`: this record's URLs go there.
                v.extend(fps.iter().take(limit.saturating_sub(v.len())));
                self.rewrite_as_seen_keys(&k, &fps)?;
            }
        }
        let mut set = CompactSeenSet::from_unsorted(v).with_limit(limit);
        set.spilled |= total > limit;
        *self.seen.lock().unwrap_or_else(|e| e.into_inner()) = set;
        Ok(total)
    }

    /// Replace an `sb/` record by one `s/` key per fingerprint, atomically.
    fn rewrite_as_seen_keys(&self, batch_key: &[u8], fps: &[u64]) -> Result<()> {
        let mut batch = sled::Batch::default();
        for &fp in fps {
            batch.insert(fp_key(SEEN, fp), Vec::new());
        }
        batch.remove(batch_key);
        self.tree.apply_batch(batch)
    }

    /// True when the URL was ever queued.
    pub fn frontier_seen(&self, url: &str) -> bool {
        let fp = url_fingerprint(url);
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        self.seen_in(&seen, fp).unwrap_or(false)
    }

    /// In memory, or (once the memory set has spilled) on disk.
    fn seen_in(&self, seen: &CompactSeenSet, fp: u64) -> Result<bool> {
        Ok(seen.contains(fp) || (seen.spilled() && self.tree.contains_key(fp_key(SEEN, fp))?))
    }

    /// Cap the frontier's open URLs (queued + in flight) at `max`: past it, new links are
    /// dropped and counted ([`Store::frontier_dropped_full`]). Unlimited until called.
    pub fn set_frontier_cap(&self, max: u64) -> Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        let (q, i) = self.frontier_counts()?;
        self.cap.open.store(q + i, Relaxed);
        self.cap.max.store(max, Relaxed);
        *self.cap.last_recount.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
        Ok(())
    }

    /// Links dropped because the frontier was full (this process).
    pub fn frontier_dropped_full(&self) -> u64 {
        self.cap.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether one more URL fits under the cap; counts the open URLs again when the running
    /// count says full and the last count is older than [`RECOUNT_EVERY`].
    fn frontier_has_room(&self) -> Result<bool> {
        use std::sync::atomic::Ordering::Relaxed;
        let max = self.cap.max.load(Relaxed);
        if max == u64::MAX || self.cap.open.load(Relaxed) < max {
            return Ok(true);
        }
        let mut last = self.cap.last_recount.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|t| t.elapsed() < RECOUNT_EVERY) {
            return Ok(false);
        }
        let (q, i) = self.frontier_counts()?;
        self.cap.open.store(q + i, Relaxed);
        *last = Some(std::time::Instant::now());
        Ok(q + i < max)
    }

    /// Add entries not seen before (seeds, or links found outside the page pipeline such as
    /// redirect targets), in batches of at most [`LINK_BATCH`].
    pub fn frontier_add(&self, entries: &[FrontierEntry]) -> Result<AddOutcome> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        self.queue_in_batches(entries)
    }

    /// Queue `entries` in batches of at most [`LINK_BATCH`] (the caller holds the write lock).
    /// Batches, not single writes, for links: a page can bring 100,000, and sled's memory per
    /// URL seen was 25–30 % higher with them written one by one (`bench_hostile_crawl`: 845
    /// against 645 MiB for 1,000,000 URLs).
    pub(crate) fn queue_in_batches(&self, entries: &[FrontierEntry]) -> Result<AddOutcome> {
        let mut out = AddOutcome::default();
        for chunk in entries.chunks(LINK_BATCH) {
            let (mut writes, mut fresh) = (Vec::new(), Vec::new());
            let o = self.stage_links(chunk, &mut writes, &mut fresh)?;
            if !writes.is_empty() {
                let mut batch = sled::Batch::default();
                for (k, v) in writes {
                    batch.insert(k, v);
                }
                self.tree.apply_batch(batch)?;
            }
            self.commit_seen(fresh)?;
            out.queued += o.queued;
            out.already_seen += o.already_seen;
            out.dropped_full += o.dropped_full;
        }
        Ok(out)
    }

    /// Put unseen entries' writes into `writes` (while the frontier has room: see
    /// [`Store::set_frontier_cap`]), each URL's queue entry before its seen mark, and their
    /// fingerprints into `fresh`, for [`Store::commit_seen`] once the writes are applied.
    pub(crate) fn stage_links<'a>(
        &self,
        entries: &'a [FrontierEntry],
        writes: &mut Vec<(Vec<u8>, Vec<u8>)>,
        fresh: &mut Vec<Fresh<'a>>,
    ) -> Result<AddOutcome> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let per_url_keys = !seen.has_room_for(entries.len());
        let first_fresh = fresh.len();
        let mut out = AddOutcome::default();
        let mut in_batch = HashSet::new();
        for e in entries {
            let fp = url_fingerprint(&e.url);
            if !in_batch.insert(fp) || self.seen_in(&seen, fp)? {
                out.already_seen += 1;
                continue;
            }
            if !self.frontier_has_room()? {
                self.cap.dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                out.dropped_full += 1;
                continue;
            }
            self.cap.open.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            fresh.push(Fresh {
                fp,
                entry: e,
                id: self.db.generate_id()?,
                value: encode_queued(e),
                record: 0,
            });
            if per_url_keys {
                writes.push((fp_key(SEEN, fp), Vec::new()));
            }
            out.queued += 1;
        }
        if fresh.len() > first_fresh {
            // The batch's new entries, one record of the log (see `queues`).
            let record = self.db.generate_id()?;
            let entries = fresh[first_fresh..].iter().map(|f| (f.id, f.entry, f.value.as_slice()));
            writes.push((fp_key(crate::queues::LOG, record), crate::queues::encode_record(entries)));
            for f in &mut fresh[first_fresh..] {
                f.record = record;
            }
            writes.extend(self.stamp_to_raise());
        }
        if !per_url_keys && fresh.len() > first_fresh {
            let fps: Vec<u8> = fresh[first_fresh..].iter().flat_map(|f| f.fp.to_be_bytes()).collect();
            writes.push((fp_key(SEEN_BATCH, self.db.generate_id()?), fps));
        }
        Ok(out)
    }

    /// Once a batch of [`Store::stage_links`] is applied: its URLs are seen, and their hosts
    /// have URLs queued.
    pub(crate) fn commit_seen(&self, fresh: Vec<Fresh<'_>>) -> Result<()> {
        {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            for f in &fresh {
                seen.insert(f.fp);
            }
        }
        let entries: Vec<&FrontierEntry> = fresh.iter().map(|f| f.entry).collect();
        {
            let mut q = self.queues()?;
            for f in fresh {
                q.add(queue_key(f.entry, f.id), crate::queues::Queued { record: f.record, value: f.value });
            }
        }
        self.queued_hosts.note(entries.iter().map(|e| (e.host_key.as_str(), e.priority)));
        Ok(())
    }

    /// The hosts that had URLs queued (links, seeds, requeues) since the last call, each
    /// once, in no particular order. A crawler that keeps its list of hosts with queued URLs
    /// in memory reads these hosts' queue heads ([`Store::frontier_peek`]) instead of every
    /// host's ([`Store::frontier_hosts`]); a host whose queue it finds empty it drops.
    pub fn frontier_take_queued_hosts(&self) -> Vec<String> {
        self.frontier_take_queued_hosts_best().into_iter().map(|(h, _)| h).collect()
    }

    /// [`Store::frontier_take_queued_hosts`] with the best priority queued for each host
    /// since it was last taken. A crawler whose view of a host's best untaken priority is
    /// up to date (it learns of every pop from [`Store::frontier_pop_and_peek`], and of every
    /// entry queued from here) takes the greater of the two as the host's best without
    /// reading the host's queue: entries are only added by queueing (told here) and taken
    /// by the crawler. (A host told of whose new entry the crawler took before this call
    /// may look queued when it is not: its next pop finds out.)
    pub fn frontier_take_queued_hosts_best(&self) -> Vec<(String, u32)> {
        let mut set = self.queued_hosts.hosts.lock().unwrap_or_else(|e| e.into_inner());
        set.drain().collect()
    }

    /// Have `waker` called when URLs are queued for a host while none was waiting to be
    /// taken by [`Store::frontier_take_queued_hosts`], and when in-flight tickets are
    /// completed: a crawler waiting for links or for its last pages wakes at once. It is
    /// called from whichever thread wrote, possibly under the store's write lock: it must
    /// be quick and must not call the store (e.g. a notification).
    pub fn frontier_set_waker(&self, waker: impl Fn() + Send + Sync + 'static) {
        *self.queued_hosts.waker.write().unwrap_or_else(|e| e.into_inner()) =
            Some(std::sync::Arc::new(waker));
    }

    /// Hosts with queued entries (not taken) and the priority of each one's best entry.
    /// A walk over every host's queue head, for the start of a crawl and before it stops
    /// (in between, [`Store::frontier_take_queued_hosts`] says which hosts changed). It reads
    /// the queues in memory, one key per host, under their lock: pops and finishes wait for
    /// the walk.
    pub fn frontier_hosts(&self) -> Result<Vec<(String, u32)>> {
        let q = self.queues()?;
        let mut out = Vec::new();
        let mut from = QUEUE.to_vec();
        while let Some(k) = q.queued.range(from.clone()..).next().map(|(k, _)| k) {
            let rest = &k[QUEUE.len()..];
            let Some(nul) = rest.iter().position(|&b| b == 0) else {
                return Err(corrupt(&String::from_utf8_lossy(k), "queue key without host separator"));
            };
            out.push((
                String::from_utf8_lossy(&rest[..nul]).into_owned(),
                queue_key_priority(k, QUEUE.len() + nul + 1)?,
            ));
            // Skip to the first key after this host's queue.
            from = QUEUE.to_vec();
            from.extend_from_slice(&rest[..nul]);
            from.push(1);
        }
        Ok(out)
    }

    /// A host's queue, best entry first (taken entries are not in it).
    fn host_queue<'a>(
        q: &'a crate::queues::Queues,
        prefix: &'a [u8],
    ) -> impl Iterator<Item = (&'a Vec<u8>, &'a crate::queues::Queued)> + 'a {
        q.queued.range(prefix.to_vec()..).take_while(move |(k, _)| k.starts_with(prefix))
    }

    /// The priority of a host's best queued entry (not taken).
    pub fn frontier_peek(&self, host_key: &str) -> Result<Option<u32>> {
        let prefix = queue_prefix(host_key);
        let q = self.queues()?;
        let head = Self::host_queue(&q, &prefix).next();
        head.map(|(k, _)| queue_key_priority(k, prefix.len())).transpose()
    }

    /// The URL of a host's best entry (not taken), without taking it.
    pub fn frontier_pop_peek_url(&self, host_key: &str) -> Result<Option<String>> {
        let prefix = queue_prefix(host_key);
        let q = self.queues()?;
        let head = Self::host_queue(&q, &prefix).next();
        head.map(|(k, e)| decode_entry(k, &e.value).map(|e| e.url)).transpose()
    }

    /// Take a host's best entry (see the module notes: it stays in the log until its URL is
    /// finished, and in memory it is taken).
    pub fn frontier_pop(&self, host_key: &str) -> Result<Option<FrontierEntry>> {
        Ok(self.frontier_pop_and_peek(host_key)?.map(|(e, _)| e))
    }

    /// [`Store::frontier_pop`], also returning the priority of the host's entry that is best
    /// after it (None: the host's queue is now empty), read in the same pass.
    pub fn frontier_pop_and_peek(&self, host_key: &str) -> Result<Option<(FrontierEntry, Option<u32>)>> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let prefix = queue_prefix(host_key);
        let mut q = self.queues()?;
        let (k, next) = {
            let mut it = Self::host_queue(&q, &prefix);
            let Some(k) = it.next().map(|(k, _)| k.clone()) else {
                return Ok(None);
            };
            (k, it.next().map(|(k, _)| queue_key_priority(k, prefix.len())).transpose()?)
        };
        let Some(entry) = q.queued.remove(&k) else {
            return Ok(None);
        };
        let e = decode_entry(&k, &entry.value)?;
        q.taken.insert(url_fingerprint(&e.url), crate::queues::Ticket { key: k, entry });
        drop(q);
        // `next` covers every entry queued so far (queueing holds the write lock too): a
        // note of the host not taken yet would only repeat it, or name the entry just taken.
        self.queued_hosts.hosts.lock().unwrap_or_else(|e| e.into_inner()).remove(host_key);
        Ok(Some((e, next)))
    }

    /// Finish an in-flight URL that produced no page (error, robots, not text, redirect),
    /// adding any links it yields (e.g. a redirect target) before.
    pub fn frontier_finish(&self, url: &str, links: &[FrontierEntry]) -> Result<AddOutcome> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        // The links first, then the ticket (see the module notes).
        let out = self.queue_in_batches(links)?;
        let fp = url_fingerprint(url);
        let mut batch = sled::Batch::default();
        self.write_ticket_finish(&[fp], &mut batch)?;
        self.tree.apply_batch(batch)?;
        self.queues()?.finished(&[fp]);
        self.queued_hosts.wake();
        Ok(out)
    }

    /// Finish an in-flight URL whose address was refused without a request, keeping it for
    /// [`Store::frontier_requeue_refused`] at the next crawl's start.
    pub fn frontier_finish_refused(&self, e: &FrontierEntry) -> Result<()> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let fp = url_fingerprint(&e.url);
        let mut batch = sled::Batch::default();
        self.write_ticket_finish(&[fp], &mut batch)?;
        let v = serde_json::to_vec(e).map_err(|x| corrupt(&e.url, x))?;
        batch.insert(fp_key(REFUSED, fp), v);
        self.tree.apply_batch(batch)?;
        self.queues()?.finished(&[fp]);
        Ok(())
    }

    /// At the start of a crawl: every URL an earlier run finished as refused for its address
    /// goes back to its queue (the settings may allow it now). Returns how many.
    pub fn frontier_requeue_refused(&self) -> Result<u64> {
        let entries: Vec<(sled::IVec, sled::IVec)> =
            self.tree.scan_prefix(REFUSED).collect::<std::result::Result<_, _>>()?;
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut n = 0;
        for (k, v) in entries {
            let e = decode_entry(&k, &v)?;
            let mut batch = sled::Batch::default();
            batch.remove(k);
            let added = self.write_single_entry(&e, &mut batch)?;
            self.tree.apply_batch(batch)?;
            self.queues()?.add(added.0, added.1);
            self.queued_hosts.note([(e.host_key.as_str(), e.priority)]);
            n += 1;
        }
        Ok(n)
    }

    /// Put an in-flight URL back in its queue, behind the entries of its priority (e.g. to
    /// retry it later).
    pub fn frontier_requeue(&self, e: &FrontierEntry) -> Result<()> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let fp = url_fingerprint(&e.url);
        let mut batch = sled::Batch::default();
        self.write_ticket_finish(&[fp], &mut batch)?;
        let added = self.write_single_entry(e, &mut batch)?;
        self.tree.apply_batch(batch)?;
        {
            let mut q = self.queues()?;
            q.finished(&[fp]);
            q.add(added.0, added.1);
        }
        self.queued_hosts.note([(e.host_key.as_str(), e.priority)]);
        Ok(())
    }

    /// At the start of a crawl: every `i/` entry (left in flight by a run before 2026-11-25
    /// that stopped or was killed) goes back to its queue. Returns how many.
    pub fn frontier_requeue_inflight(&self) -> Result<u64> {
        let mut n = 0;
        let entries: Vec<(sled::IVec, sled::IVec)> =
            self.tree.scan_prefix(INFLIGHT).collect::<std::result::Result<_, _>>()?;
        for (k, v) in entries {
            let e = decode_entry(&k, &v)?;
            self.frontier_requeue(&e)?;
            n += 1;
        }
        Ok(n)
    }

    /// Write the finish of the tickets of `fps` into `batch`: a done mark or its record's
    /// removal for an entry this process took, else the `i/` entry a run before 2026-11-25
    /// left. Memory changes once the batch is applied ([`crate::queues::Queues::finished`]).
    pub(crate) fn write_ticket_finish(&self, fps: &[u64], batch: &mut sled::Batch) -> Result<()> {
        let q = self.queues()?;
        let taken: Vec<&crate::queues::Ticket> = fps.iter().filter_map(|fp| q.taken.get(fp)).collect();
        q.write_finish(self, &taken, batch)?;
        for fp in fps.iter().filter(|fp| !q.taken.contains_key(fp)) {
            batch.remove(fp_key(INFLIGHT, *fp));
        }
        Ok(())
    }

    /// Write `e` as a log record of its own into `batch`; returns what to add to the queues
    /// once the batch is applied.
    fn write_single_entry(
        &self,
        e: &FrontierEntry,
        batch: &mut sled::Batch,
    ) -> Result<(Vec<u8>, crate::queues::Queued)> {
        let (id, record) = (self.db.generate_id()?, self.db.generate_id()?);
        let value = encode_queued(e);
        batch.insert(
            fp_key(crate::queues::LOG, record),
            crate::queues::encode_record([(id, e, value.as_slice())]),
        );
        if let Some((k, v)) = self.stamp_to_raise() {
            batch.insert(k, v);
        }
        Ok((queue_key(e, id), crate::queues::Queued { record, value }))
    }

    /// Entries queued and in flight (taken by this process and not finished, or left in
    /// `i/` by an older run).
    pub fn frontier_counts(&self) -> Result<(u64, u64)> {
        // Not under the write lock: the cap's recount runs under it. A write in between
        // moves a count by the few URLs it changes.
        let i = self.tree.scan_prefix(INFLIGHT).count() as u64;
        let q = self.queues()?;
        Ok((q.queued.len() as u64, i + q.taken_len() as u64))
    }

    /// Pages fetched from a host so far (for the per-host page budget).
    pub fn host_pages(&self, host_key: &str) -> Result<u64> {
        Ok(self
            .tree
            .get([HOST_COUNT, host_key.as_bytes()].concat())?
            .and_then(|v| <[u8; 8]>::try_from(v.as_ref()).ok())
            .map(u64::from_le_bytes)
            .unwrap_or(0))
    }

    /// Whether the in-memory seen set has spilled to disk lookups.
    pub fn seen_spilled(&self) -> bool {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).spilled()
    }

    /// Heap bytes of the in-memory seen set and its size.
    pub fn seen_memory(&self) -> (usize, usize) {
        let s = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        (s.heap_bytes(), s.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str, host: &str, priority: u32) -> FrontierEntry {
        FrontierEntry { url: url.into(), host_key: host.into(), depth: 0, priority, hops: 0, sitemap: false }
    }

    #[test]
    fn queued_hosts_are_told_once_pops_peek_the_next_head_and_the_waker_hears_both() {
        let dir = tempfile::tempdir().unwrap();
        let st = Store::open(&dir.path().join("f.db")).unwrap();
        let wakes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let w = wakes.clone();
        st.frontier_set_waker(move || {
            w.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        });
        let links = [
            entry("http://a.test/1", "a.test", 5),
            entry("http://a.test/2", "a.test", 9),
            entry("http://b.test/1", "b.test", 1),
        ];
        st.frontier_add(&links).unwrap();
        assert_eq!(wakes.load(std::sync::atomic::Ordering::Relaxed), 1, "one wake for an empty set filling");
        let mut told = st.frontier_take_queued_hosts();
        told.sort();
        assert_eq!(told, ["a.test", "b.test"]);
        assert!(st.frontier_take_queued_hosts().is_empty(), "each host is told once");
        // Seen URLs are not queued again: nobody is told.
        st.frontier_add(&links[..1]).unwrap();
        assert!(st.frontier_take_queued_hosts().is_empty());
        assert_eq!(st.frontier_peek("a.test").unwrap(), Some(9));
        // A pop takes the best entry and tells the priority of the next one.
        let (e, next) = st.frontier_pop_and_peek("a.test").unwrap().unwrap();
        assert_eq!((e.url.as_str(), next), ("http://a.test/2", Some(5)));
        let (e, next) = st.frontier_pop_and_peek("a.test").unwrap().unwrap();
        assert_eq!((e.url.as_str(), next), ("http://a.test/1", None));
        assert!(st.frontier_pop_and_peek("a.test").unwrap().is_none());
        // A requeue tells its host again; completing a ticket wakes.
        st.frontier_requeue(&e).unwrap();
        assert_eq!(st.frontier_take_queued_hosts(), ["a.test"]);
        let before = wakes.load(std::sync::atomic::Ordering::Relaxed);
        st.frontier_finish("http://a.test/2", &[]).unwrap();
        assert!(wakes.load(std::sync::atomic::Ordering::Relaxed) > before);
    }

    #[test]
    fn queued_hosts_come_with_their_best_new_priority_and_a_pop_covers_the_note() {
        let dir = tempfile::tempdir().unwrap();
        let st = Store::open(&dir.path().join("f.db")).unwrap();
        st.frontier_add(&[entry("http://a.test/1", "a.test", 5), entry("http://b.test/1", "b.test", 1)])
            .unwrap();
        st.frontier_add(&[entry("http://a.test/2", "a.test", 9), entry("http://a.test/3", "a.test", 2)])
            .unwrap();
        let mut told = st.frontier_take_queued_hosts_best();
        told.sort();
        assert_eq!(told, [("a.test".to_string(), 9), ("b.test".to_string(), 1)]);
        // Queued, then popped before the crawler took the note: the pop's next best covers
        // it, and the note (which named the entry just taken) is gone.
        st.frontier_add(&[entry("http://b.test/2", "b.test", 7)]).unwrap();
        let (e, next) = st.frontier_pop_and_peek("b.test").unwrap().unwrap();
        assert_eq!((e.url.as_str(), next), ("http://b.test/2", Some(1)));
        assert!(st.frontier_take_queued_hosts_best().is_empty());
        // A requeue tells its entry's priority.
        st.frontier_requeue(&e).unwrap();
        assert_eq!(st.frontier_take_queued_hosts_best(), [("b.test".to_string(), 7)]);
    }

    #[test]
    fn a_full_frontier_drops_links_counts_them_and_takes_more_once_it_drains() {
        let dir = tempfile::tempdir().unwrap();
        let st = Store::open(&dir.path().join("f.db")).unwrap();
        st.set_frontier_cap(3).unwrap();
        let links: Vec<_> = (0..5).map(|i| entry(&format!("http://a.test/{i}"), "a.test", 1)).collect();
        let o = st.frontier_add(&links).unwrap();
        assert_eq!((o.queued, o.dropped_full), (3, 2));
        assert_eq!(st.frontier_dropped_full(), 2);
        assert_eq!(st.frontier_counts().unwrap(), (3, 0));
        // Dropped links are not marked seen: a later page may queue them.
        assert!(!st.frontier_seen("http://a.test/4"));
        // Taking one and finishing it makes room; a recount (here forced by setting the cap
        // again) sees it.
        let e = st.frontier_pop("a.test").unwrap().unwrap();
        st.frontier_finish(&e.url, &[]).unwrap();
        st.set_frontier_cap(3).unwrap();
        let o = st.frontier_add(&links[3..]).unwrap();
        assert_eq!((o.queued, o.dropped_full), (1, 1));
        assert_eq!(st.frontier_counts().unwrap(), (3, 0));
    }

    #[test]
    fn compact_seen_set_is_exact() {
        let mut s = CompactSeenSet::default();
        for i in 0..20_000u64 {
            assert!(s.insert(i * 7919));
        }
        for i in 0..20_000u64 {
            assert!(!s.insert(i * 7919));
            assert!(s.contains(i * 7919));
            assert!(!s.contains(i * 7919 + 1));
        }
        assert_eq!(s.len(), 20_000);
        // Fingerprints sharing a bucket, and the extremes.
        for fp in [0u64, u64::MAX, 1 << 48, (1 << 48) - 1] {
            assert!(!s.contains(fp) || fp == 0);
            s.insert(fp);
            assert!(s.contains(fp));
        }
        let rebuilt = CompactSeenSet::from_unsorted(vec![5, 3, u64::MAX, 3]);
        assert_eq!(rebuilt.len(), 3);
        assert!(rebuilt.contains(3) && rebuilt.contains(u64::MAX) && !rebuilt.contains(4));
    }

    #[test]
    fn seen_marks_written_per_batch_reload_and_spill_to_per_url_keys() {
        let dir = tempfile::tempdir().unwrap();
        let st = Store::open(&dir.path().join("f.db")).unwrap();
        st.frontier_load_seen().unwrap();
        let all: Vec<FrontierEntry> =
            (0..1000).map(|i| entry(&format!("http://h{}/p{i}", i % 7), &format!("h{}", i % 7), 1)).collect();
        assert_eq!(st.frontier_add(&all).unwrap().queued, 1000);
        let per_url = st.tree.scan_prefix(SEEN).count();
        let batches = st.tree.scan_prefix(SEEN_BATCH).count();
        assert_eq!((per_url, batches), (0, 1000usize.div_ceil(LINK_BATCH)), "one record per link batch");
        assert_eq!(st.check().unwrap().records.get("s/ seen URLs"), Some(&1000));
        // Reloaded with room for all: every URL seen, the records untouched.
        assert_eq!(st.frontier_load_seen().unwrap(), 1000);
        assert_eq!(st.frontier_add(&all).unwrap().already_seen, 1000);
        // Reloaded with room for 300: the records past it become per-URL keys, found on disk.
        assert_eq!(st.frontier_load_seen_limited(300).unwrap(), 1000);
        assert!(st.seen_spilled());
        assert!(st.tree.scan_prefix(SEEN).count() >= 700);
        assert!(all.iter().all(|e| st.frontier_seen(&e.url)));
        assert!(!st.frontier_seen("http://h1/never"));
        assert_eq!(st.frontier_add(&all).unwrap().already_seen, 1000);
        // New URLs past the limit get per-URL keys; the count stays exact.
        let more: Vec<FrontierEntry> = (0..200).map(|i| entry(&format!("http://h1/q{i}"), "h1", 1)).collect();
        assert_eq!(st.frontier_add(&more).unwrap().queued, 200);
        assert_eq!(st.frontier_load_seen_limited(300).unwrap(), 1200);
        assert!(more.iter().all(|e| st.frontier_seen(&e.url)));
        assert_eq!(st.check().unwrap().records.get("s/ seen URLs"), Some(&1200));
        // A damaged record is an error, not a panic or a silent loss.
        st.tree.insert(fp_key(SEEN_BATCH, u64::MAX), vec![1, 2, 3]).unwrap();
        assert!(st.frontier_load_seen().is_err());
    }

    #[test]
    fn a_seen_set_over_its_memory_limit_looks_misses_up_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let st = Store::open(&dir.path().join("f.db")).unwrap();
        st.frontier_load_seen_limited(100).unwrap();
        let host = |i: usize| format!("h{}", i % 7);
        let all: Vec<FrontierEntry> =
            (0..2500).map(|i| entry(&format!("http://h{}/p{i}", i % 7), &host(i), 1)).collect();
        // More than one link batch, and more than the memory holds.
        assert_eq!(
            st.frontier_add(&all).unwrap(),
            AddOutcome { queued: 2500, already_seen: 0, dropped_full: 0 }
        );
        let (bytes, held) = st.seen_memory();
        assert!(held <= 100 && st.seen_spilled(), "{held} held in {bytes} bytes");
        // Every URL is still known: held ones from memory, the rest from disk.
        assert!((0..2500).all(|i| st.frontier_seen(&all[i].url)));
        assert!(!st.frontier_seen("http://h1/never"));
        assert_eq!(
            st.frontier_add(&all[..1500]).unwrap(),
            AddOutcome { queued: 0, already_seen: 1500, dropped_full: 0 }
        );
        assert_eq!(st.frontier_counts().unwrap(), (2500, 0));
        // Reloaded with the same limit: the same answers.
        st.frontier_load_seen_limited(100).unwrap();
        assert_eq!(
            st.frontier_add(&all[2000..]).unwrap(),
            AddOutcome { queued: 0, already_seen: 500, dropped_full: 0 }
        );
        let mut set = CompactSeenSet::default().with_limit(2);
        assert!(set.insert(1) && set.insert(2) && !set.spilled());
        assert!(set.insert(3) && set.spilled() && !set.contains(3) && set.len() == 2);
    }

    #[test]
    fn queues_order_by_priority_then_arrival_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.db");
        {
            let st = Store::open(&path).unwrap();
            st.frontier_load_seen().unwrap();
            let out = st
                .frontier_add(&[
                    entry("http://a/1", "a", 1),
                    entry("http://a/2", "a", 5),
                    entry("http://a/3", "a", 5),
                    entry("http://b/1", "b", 2),
                    entry("http://a/1", "a", 9),
                ])
                .unwrap();
            assert_eq!(out, AddOutcome { queued: 4, already_seen: 1, dropped_full: 0 });
            assert_eq!(st.frontier_hosts().unwrap(), vec![("a".to_string(), 5), ("b".to_string(), 2)]);
            assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/2");
            assert_eq!(st.frontier_counts().unwrap(), (3, 1));
            // Taken entries are passed over by pops, peeks and the host list.
            assert_eq!(st.frontier_peek("a").unwrap(), Some(5));
            assert_eq!(st.frontier_pop_peek_url("a").unwrap().as_deref(), Some("http://a/3"));
            assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/3");
            assert_eq!(st.frontier_hosts().unwrap(), vec![("a".to_string(), 1), ("b".to_string(), 2)]);
            assert_eq!(st.frontier_counts().unwrap(), (2, 2));
            st.flush().unwrap();
        }
        // Reopened (as after a kill): what was taken and not finished is queued where it was.
        let st = Store::open(&path).unwrap();
        assert_eq!(st.frontier_load_seen().unwrap(), 4);
        assert!(st.frontier_seen("http://b/1"));
        assert_eq!(st.frontier_counts().unwrap(), (4, 0));
        assert_eq!(st.frontier_requeue_inflight().unwrap(), 0);
        assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/2");
        st.frontier_finish("http://a/2", &[entry("http://c/x", "c", 3), entry("http://a/3", "a", 3)])
            .unwrap();
        // a/2 finished (gone), a/3 already seen, c/x queued.
        assert_eq!(st.frontier_counts().unwrap(), (4, 0));
        assert_eq!(st.frontier_peek("c").unwrap(), Some(3));
        assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/3");
        // Requeued: behind the entries of its priority; taken no more.
        st.frontier_add(&[entry("http://a/4", "a", 5)]).unwrap();
        st.frontier_requeue(&entry("http://a/3", "a", 5)).unwrap();
        assert_eq!(st.frontier_counts().unwrap(), (5, 0));
        assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/4");
        assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/3");
        assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/1");
        assert!(st.frontier_pop("a").unwrap().is_none());
        assert_eq!(st.frontier_counts().unwrap(), (2, 3));
    }

    /// Queue values are compact (host and priority from the key); JSON values written by
    /// earlier versions are still read; a damaged compact value is an error, not a panic.
    #[test]
    fn queue_values_are_compact_and_older_json_values_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let st = Store::open(&dir.path().join("f.db")).unwrap();
        let e = FrontierEntry {
            url: "http://a.example/p?q=1".into(),
            host_key: "example,a".into(),
            depth: 300,
            priority: 77,
            hops: 2,
            sitemap: true,
        };
        let k = queue_key(&e, 9);
        let v = encode_queued(&e);
        assert!(v.len() < serde_json::to_vec(&e).unwrap().len() / 2, "{} bytes", v.len());
        assert_eq!(decode_entry(&k, &v).unwrap(), e);
        // Written by an older version: JSON under the same key.
        let old = entry("http://a.example/old", "example,a", 80);
        st.tree.insert(queue_key(&old, 1), serde_json::to_vec(&old).unwrap()).unwrap();
        st.frontier_add(std::slice::from_ref(&e)).unwrap();
        assert_eq!(st.frontier_pop("example,a").unwrap(), Some(old));
        assert_eq!(st.frontier_pop("example,a").unwrap(), Some(e.clone()));
        // Damaged: cut short, or under a key that is not a queue key.
        assert!(decode_entry(&k, &v[..2]).is_err());
        assert!(decode_entry(b"q/x", &v).is_err());
        assert!(decode_entry(&fp_key(REFUSED, 1), &v).is_err());
        let mut bad_utf8 = v.clone();
        bad_utf8.push(0xff);
        assert!(decode_entry(&k, &bad_utf8).is_err());
    }

    /// A store written before 2026-11-25 may hold `i/` entries (URLs in flight when its run
    /// stopped): the next crawl's start puts them back in their queues, and finishing one
    /// removes its entry wherever it is.
    #[test]
    fn in_flight_entries_of_older_runs_are_requeued() {
        let dir = tempfile::tempdir().unwrap();
        let st = Store::open(&dir.path().join("f.db")).unwrap();
        let old = entry("http://a/old", "a", 4);
        let v = serde_json::to_vec(&old).unwrap();
        st.tree.insert(fp_key(INFLIGHT, url_fingerprint(&old.url)), v).unwrap();
        let gone = entry("http://a/gone", "a", 4);
        let v = serde_json::to_vec(&gone).unwrap();
        st.tree.insert(fp_key(INFLIGHT, url_fingerprint(&gone.url)), v).unwrap();
        assert_eq!(st.frontier_counts().unwrap(), (0, 2));
        // Finished without having been taken by this process: its `i/` entry goes.
        st.frontier_finish(&gone.url, &[]).unwrap();
        assert_eq!(st.frontier_counts().unwrap(), (0, 1));
        assert_eq!(st.frontier_requeue_inflight().unwrap(), 1);
        assert_eq!(st.frontier_counts().unwrap(), (1, 0));
        assert_eq!(st.frontier_pop("a").unwrap(), Some(old));
    }
}
