//! Exact occurrence counting of fixed-size keys (20-byte SHA-1 digests, 64-bit k-gram
//! hashes) in bounded memory.
//!
//! Blind discovery (Ardi & Heidemann 2014, §3.2 step 3b) needs the number of duplicates of
//! every object over the whole corpus — "discovery is not distributive" (§3.2) — and the paper
//! computes it by sorting: "we sort and count all hashes (O(n log n)), and cull objects (O(n))
//! whose number of duplicates do not exceed the threshold". [`Counter`] does the same on one
//! machine, radix-partitioned: occurrences are appended to one buffer per first key byte (no
//! hashing: SHA-1 digests are uniform, so the 256 partitions are even); when the buffer
//! reaches half the memory budget every partition is sorted and summed in place, on up to 4
//! threads, giving one sorted run, kept in memory while it fits or else written to a run file
//! (a "spill") with its partition offsets. [`Counter::finish`] merges partition by partition
//! (each partition's share of all runs fits in cache), or by a k-way heap merge of whole runs
//! when a partition's share would not fit the budget. The result is exact (no sketch), sorted
//! by key.
//!
//! Each key can carry a *sample*: a `u32` id (e.g. of the first URL a chunk was seen at);
//! the smallest id given for a key is kept, in memory and in spilled runs alike, so the
//! sample does not depend on the memory budget.
//!
//! Run files live in a fresh directory under the `tmp_dir` given to [`Counter::new`]; it is
//! removed when the counter or the [`Counts`] iterator is dropped (also on errors and
//! panics that unwind).
//!
//! ```
//! use ditto::analysis::counting::Counter;
//! let mut c: Counter<u64> = Counter::new(1 << 20, std::env::temp_dir());
//! for k in [3u64, 1, 3, 2, 3] {
//!     c.add(k).unwrap();
//! }
//! let counts: Vec<(u64, u64)> = c.finish().unwrap().map(|r| r.unwrap()).collect();
//! assert_eq!(counts, vec![(1, 1), (2, 1), (3, 3)]);
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// "No sample" for [`Counter::add`] and [`Counter::add_n`].
pub const NO_SAMPLE: u32 = u32::MAX;

/// Most runs merged at once; more are first merged in groups (multi-pass merge).
const FAN_IN: usize = 64;

/// A fixed-size key: serialized as exactly `SIZE` bytes, ordered as those bytes.
pub trait Key: Copy + Ord + Eq + Send + 'static {
    const SIZE: usize;
    /// Write the key's `SIZE` bytes to `out` (`out.len() == SIZE`).
    fn write_to(&self, out: &mut [u8]);
    /// Read a key from `SIZE` bytes.
    fn read_from(b: &[u8]) -> Self;
    /// A well-mixed 64-bit hash (for hash tables over keys).
    fn mix(&self) -> u64;
    /// The first (up to) 8 serialized bytes as a big-endian integer, zero-padded: orders
    /// as the key does wherever two prefixes differ (a fast path for sorting).
    fn prefix(&self) -> u64;
    /// The key order, as `Ord` (override with a faster equivalent).
    #[inline]
    fn cmp_key(&self, other: &Self) -> std::cmp::Ordering {
        self.prefix().cmp(&other.prefix()).then_with(|| self.cmp(other))
    }
}

/// MurmurHash3's 64-bit finalizer.
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

impl<const N: usize> Key for [u8; N] {
    const SIZE: usize = N;
    fn write_to(&self, out: &mut [u8]) {
        out.copy_from_slice(self);
    }
    fn read_from(b: &[u8]) -> Self {
        let mut k = [0u8; N];
        k.copy_from_slice(&b[..N]);
        k
    }
    fn mix(&self) -> u64 {
        let mut h = N as u64;
        for w in self.chunks(8) {
            let mut word = [0u8; 8];
            word[..w.len()].copy_from_slice(w);
            h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        }
        fmix64(h)
    }
    fn prefix(&self) -> u64 {
        let mut word = [0u8; 8];
        let n = N.min(8);
        word[..n].copy_from_slice(&self[..n]);
        u64::from_be_bytes(word)
    }
    /// Byte order, compared as big-endian 8-byte words (no `memcmp` call per comparison).
    #[inline]
    fn cmp_key(&self, other: &Self) -> std::cmp::Ordering {
        let mut i = 0;
        while i < N {
            let n = (N - i).min(8);
            let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
            a[..n].copy_from_slice(&self[i..i + n]);
            b[..n].copy_from_slice(&other[i..i + n]);
            match u64::from_be_bytes(a).cmp(&u64::from_be_bytes(b)) {
                std::cmp::Ordering::Equal => i += 8,
                o => return o,
            }
        }
        std::cmp::Ordering::Equal
    }
}

/// 64-bit keys (e.g. word k-gram hashes) sort numerically: serialized big-endian.
impl Key for u64 {
    const SIZE: usize = 8;
    fn write_to(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_be_bytes());
    }
    fn read_from(b: &[u8]) -> Self {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        u64::from_be_bytes(w)
    }
    fn mix(&self) -> u64 {
        fmix64(*self)
    }
    fn prefix(&self) -> u64 {
        *self
    }
    #[inline]
    fn cmp_key(&self, other: &Self) -> std::cmp::Ordering {
        self.cmp(other)
    }
}

/// One counted key: an occurrence in the buffer, or a key with its total in a sorted run.
/// (Flat, so a 20-byte key takes 32 bytes, not the 40 of `(K, Val)`.)
#[derive(Clone, Copy, Debug)]
struct Rec<K> {
    key: K,
    count: u64,
    sample: u32,
}

impl<K: Key> Rec<K> {
    fn val(&self) -> Val {
        Val { count: self.count, sample: self.sample }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Val {
    count: u64,
    sample: u32,
}

impl Val {
    fn merge(&mut self, o: Val) {
        self.count += o.count;
        self.sample = self.sample.min(o.sample);
    }
}

/// Partitions by the key's first byte: concatenated in partition order, sorted partitions
/// are one sorted run. SHA-1 digests (and k-gram hashes) are uniform, so the partitions are
/// even and each one's sort stays in cache.
const PARTS: usize = 256;

/// Smallest capacity a partition buffer is given, in records.
const MIN_PART_CAP: usize = 16;

/// Below this many buffered records a flush sorts on one thread.
const PARALLEL_MIN: usize = 1 << 16;

#[inline]
fn part_of<K: Key>(k: &K) -> usize {
    (k.prefix() >> 56) as usize
}

#[inline]
fn cmp_key<K: Key>(a: &K, b: &K) -> std::cmp::Ordering {
    a.cmp_key(b)
}

/// Sum equal neighbours of a sorted vector in place (smallest sample kept).
fn aggregate_sorted<K: Key>(v: &mut Vec<Rec<K>>) {
    let mut w = 0usize;
    for r in 0..v.len() {
        let cur = v[r];
        if w > 0 && cmp_key(&v[w - 1].key, &cur.key).is_eq() {
            let last = &mut v[w - 1];
            last.count += cur.count;
            last.sample = last.sample.min(cur.sample);
        } else {
            v[w] = cur;
            w += 1;
        }
    }
    v.truncate(w);
}

/// Sort occurrences by key and sum equal keys.
fn sort_aggregate<K: Key>(v: &mut Vec<Rec<K>>) {
    v.sort_unstable_by(|a, b| cmp_key(&a.key, &b.key));
    aggregate_sorted(v);
}

/// Merge a concatenation of sorted, aggregated segments: the stable sort finds the
/// segments as natural runs and merges them (no full re-sort).
fn merge_segments<K: Key>(v: &mut Vec<Rec<K>>) {
    v.sort_by(|a, b| cmp_key(&a.key, &b.key));
    aggregate_sorted(v);
}

/// Apply `f` to every partition, on up to `threads` threads (contiguous ranges of about
/// equal records).
fn par_parts<T: Send>(parts: &mut [Vec<T>], threads: usize, f: impl Fn(&mut Vec<T>) + Sync) {
    let total: usize = parts.iter().map(Vec::len).sum();
    if threads <= 1 || total < PARALLEL_MIN {
        parts.iter_mut().for_each(&f);
        return;
    }
    let per = total.div_ceil(threads);
    std::thread::scope(|s| {
        let f = &f;
        let mut rest = parts;
        for _ in 1..threads {
            let (mut i, mut acc) = (0, 0);
            while i < rest.len() && acc < per {
                acc += rest[i].len();
                i += 1;
            }
            let (a, b) = rest.split_at_mut(i);
            s.spawn(move || a.iter_mut().for_each(f));
            rest = b;
        }
        rest.iter_mut().for_each(f);
    });
}

/// Threads for sorting: the cores, at most 4.
fn default_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4)
}

/// A fresh directory (`ditto-count-…` under a parent), removed with its contents on drop.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

static SPILL_SEQ: AtomicU64 = AtomicU64::new(0);

impl TempDir {
    /// Create a new, empty directory under `parent` (created if missing).
    pub fn create(parent: &Path) -> io::Result<TempDir> {
        std::fs::create_dir_all(parent)?;
        loop {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let name = format!(
                "ditto-count-{}-{}-{}",
                std::process::id(),
                SPILL_SEQ.fetch_add(1, Ordering::Relaxed),
                nanos
            );
            let path = parent.join(name);
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl TempDir {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// One sorted run on disk: records, and where each partition's records start.
#[derive(Debug)]
struct Run {
    path: PathBuf,
    records: u64,
    /// `PARTS + 1` record indices: partition p is records `offsets[p]..offsets[p + 1]`.
    offsets: Vec<u64>,
    /// 0 for a spill; one more than its inputs' for a merged run (see `Counter::compact`).
    level: u32,
}

/// What a counter did, for reports and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterStats {
    /// Occurrences added (sum of all `n`).
    pub occurrences: u64,
    /// Runs written to disk (spills plus intermediate merge runs).
    pub runs_written: u64,
    /// Sorted runs kept in memory instead.
    pub runs_in_memory: u64,
    /// Bytes written to run files.
    pub bytes_spilled: u64,
    /// Largest estimated in-memory footprint (buffer, sorted runs kept in memory, merge
    /// buffers), in bytes.
    pub peak_table_bytes: u64,
}

/// The counter's memory options, as the commands that count chunk occurrences take them
/// (`ditto discover`, `ditto stopchunks suggest`: `--memory`, `--tmp-dir`).
#[derive(Debug, Clone)]
pub struct CountingConfig {
    /// Memory budget of the [`Counter`], in bytes; past it, sorted runs spill to `tmp_dir`.
    pub memory: u64,
    /// Where spilled runs go (a fresh directory under it, removed afterwards).
    pub tmp_dir: PathBuf,
}

impl CountingConfig {
    /// An empty counter with these options.
    pub fn counter<K: Key>(&self) -> Counter<K> {
        Counter::new(self.memory, &self.tmp_dir)
    }
}

/// Exact counter of fixed-size keys within a memory budget (see the module docs).
///
/// Occurrences are appended, unhashed, to one buffer per first key byte. When the buffer
/// would outgrow its share of the budget (half), every partition is sorted and summed in
/// place (on up to 4 threads) — one sorted run, kept in memory while it fits, else written
/// to a run file with its partition offsets. [`Counter::finish`] merges partition by
/// partition (each partition's share of every run, merged in cache), or, when one
/// partition's share would not fit the budget, by a k-way heap merge of whole runs.
pub struct Counter<K: Key> {
    budget: u64,
    buf_limit: u64,
    tmp_parent: PathBuf,
    dir: Option<TempDir>,
    parts: Vec<Vec<Rec<K>>>,
    buf_len: usize,
    /// Bytes of the partition buffers' capacity.
    buf_bytes: u64,
    /// Sorted runs kept in memory (partitioned), and their bytes.
    mem_runs: Vec<Vec<Vec<Rec<K>>>>,
    mem_run_bytes: u64,
    /// Sorted runs on disk.
    runs: Vec<Run>,
    threads: usize,
    stats: CounterStats,
}

/// Bytes of `n` in-memory records.
fn rec_bytes<K: Key>(n: usize) -> u64 {
    n as u64 * std::mem::size_of::<Rec<K>>() as u64
}

/// Bytes of one record in a run file.
fn record_len<K: Key>() -> usize {
    K::SIZE + 12
}

fn empty_parts<K>() -> Vec<Vec<Rec<K>>> {
    (0..PARTS).map(|_| Vec::new()).collect()
}

impl<K: Key> Counter<K> {
    /// A counter that keeps its buffers within about `memory_budget_bytes` and spills
    /// sorted runs to a directory under `tmp_dir`.
    pub fn new(memory_budget_bytes: u64, tmp_dir: impl Into<PathBuf>) -> Self {
        Counter {
            budget: memory_budget_bytes,
            buf_limit: memory_budget_bytes / 2,
            tmp_parent: tmp_dir.into(),
            dir: None,
            parts: empty_parts(),
            buf_len: 0,
            buf_bytes: 0,
            mem_runs: Vec::new(),
            mem_run_bytes: 0,
            runs: Vec::new(),
            threads: default_threads(),
            stats: CounterStats::default(),
        }
    }

    /// Cap the occurrence buffer at about `keys` records even when the budget allows more;
    /// past it, sorted runs are kept in memory (or spilled, past the budget).
    pub fn with_table_cap(mut self, keys: usize) -> Self {
        self.buf_limit = self.buf_limit.min(rec_bytes::<K>(keys.max(MIN_PART_CAP)));
        self
    }

    /// Threads sorting and merging.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Sort on this many threads (default: the cores, at most 4).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    fn note_peak(&mut self, extra: u64) {
        let b = self.buf_bytes + self.mem_run_bytes + extra;
        self.stats.peak_table_bytes = self.stats.peak_table_bytes.max(b);
    }

    /// Count one occurrence of `key`.
    pub fn add(&mut self, key: K) -> io::Result<()> {
        self.add_sampled(key, 1, NO_SAMPLE)
    }

    /// Count `n` occurrences of `key`.
    pub fn add_n(&mut self, key: K, n: u64) -> io::Result<()> {
        self.add_sampled(key, n, NO_SAMPLE)
    }

    /// Count `n` occurrences of `key` seen at sample `sample` (the smallest sample of a key
    /// is kept).
    #[inline]
    pub fn add_sampled(&mut self, key: K, n: u64, sample: u32) -> io::Result<()> {
        self.stats.occurrences += n;
        let p = part_of(&key);
        if self.parts[p].len() == self.parts[p].capacity() {
            self.grow(p)?;
        }
        self.parts[p].push(Rec { key, count: n, sample });
        self.buf_len += 1;
        Ok(())
    }

    /// Make room in partition `p` (full): double it if the buffer stays within its limit,
    /// else flush everything first.
    #[cold]
    fn grow(&mut self, p: usize) -> io::Result<()> {
        let cap = self.parts[p].capacity();
        let add = cap.max(MIN_PART_CAP);
        if self.buf_len > 0 && self.buf_bytes + rec_bytes::<K>(add) > self.buf_limit {
            self.flush()?;
        }
        let v = &mut self.parts[p];
        let before = v.capacity();
        v.reserve_exact(before.max(MIN_PART_CAP));
        self.buf_bytes = self.buf_bytes - rec_bytes::<K>(before) + rec_bytes::<K>(v.capacity());
        self.note_peak(0);
        Ok(())
    }

    /// Occurrences added so far and spill figures.
    pub fn stats(&self) -> CounterStats {
        self.stats
    }

    /// Occurrences now buffered (not yet sorted into a run).
    pub fn in_memory(&self) -> usize {
        self.buf_len
    }

    fn spill_dir(&mut self) -> io::Result<PathBuf> {
        if self.dir.is_none() {
            self.dir = Some(TempDir::create(&self.tmp_parent)?);
        }
        match &self.dir {
            Some(d) => Ok(d.path.clone()),
            None => Err(io::Error::other("no spill directory")),
        }
    }

    fn new_run_path(&mut self) -> io::Result<PathBuf> {
        let dir = self.spill_dir()?;
        Ok(dir.join(format!("run-{:06}.bin", self.stats.runs_written)))
    }

    /// Sort and sum the buffer into a run; keep it in memory if it fits beside the buffer
    /// (`keep_free`: bytes that must stay free), else write it to a run file.
    fn flush_with(&mut self, keep_free: u64) -> io::Result<()> {
        if self.buf_len == 0 {
            return Ok(());
        }
        let mut parts = std::mem::replace(&mut self.parts, empty_parts());
        par_parts(&mut parts, self.threads, sort_aggregate);
        self.buf_len = 0;
        let bytes: u64 = parts.iter().map(|v| rec_bytes::<K>(v.capacity())).sum();
        self.buf_bytes = 0;
        if self.mem_run_bytes + bytes + keep_free <= self.budget {
            self.mem_run_bytes += bytes;
            self.mem_runs.push(parts);
            self.stats.runs_in_memory += 1;
            self.note_peak(0);
            return Ok(());
        }
        let path = self.new_run_path()?;
        let it = parts.into_iter().flatten().map(|r| Ok((r.key, r.val())));
        let (records, offsets) = write_run(&path, it)?;
        self.stats.runs_written += 1;
        self.stats.bytes_spilled += records * record_len::<K>() as u64;
        self.runs.push(Run { path, records, offsets, level: 0 });
        self.compact()
    }

    /// Merge file runs into one new run file (of `level`), removing them.
    fn merge_files(&mut self, group: Vec<Run>, level: u32) -> io::Result<Run> {
        let buf = self.read_buffer();
        let sources = group
            .iter()
            .map(|r| RunReader::<K>::open(r, buf).map(Source::File))
            .collect::<io::Result<Vec<Source<K>>>>()?;
        let path = self.new_run_path()?;
        let (records, offsets) = write_run(&path, Merge::new(sources)?)?;
        for r in &group {
            let _ = std::fs::remove_file(&r.path);
        }
        self.stats.runs_written += 1;
        self.stats.bytes_spilled += records * record_len::<K>() as u64;
        Ok(Run { path, records, offsets, level })
    }

    /// Tiered merging while counting: `FAN_IN` runs of one level are merged into one run of
    /// the next, so at most `FAN_IN − 1` runs per level stay on disk. Each run keeps its
    /// partition offsets in memory (2 KiB), so without this a tiny budget (many small runs)
    /// would hold more memory in run metadata than in records.
    fn compact(&mut self) -> io::Result<()> {
        while let Some(level) = self.runs.last().map(|r| r.level) {
            if self.runs.iter().filter(|r| r.level == level).count() < FAN_IN {
                break;
            }
            let (group, rest): (Vec<Run>, Vec<Run>) =
                std::mem::take(&mut self.runs).into_iter().partition(|r| r.level == level);
            self.runs = rest;
            let merged = self.merge_files(group, level + 1)?;
            self.runs.push(merged);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_with(self.buf_limit)
    }

    /// Read buffer per run during heap merges: a share of the budget, 4 KiB to 1 MiB.
    fn read_buffer(&self) -> usize {
        (self.budget / (2 * FAN_IN as u64)).clamp(4 << 10, 1 << 20) as usize
    }

    /// Stop counting: every key with its exact count, sorted by key.
    pub fn finish(self) -> io::Result<Counts<K>> {
        self.finish_sampled().map(|inner| Counts { inner })
    }

    /// As [`Counter::finish`], with each key's smallest sample ([`NO_SAMPLE`] when none).
    pub fn finish_sampled(mut self) -> io::Result<SampledCounts<K>> {
        // The last run, like the others, stays in memory only if half the budget stays free
        // (for the partition merge's buffers).
        self.flush()?;
        // The most records any one partition gathers over all runs.
        let mut per_part = vec![0u64; PARTS];
        for r in &self.mem_runs {
            for (p, v) in r.iter().enumerate() {
                per_part[p] += v.len() as u64;
            }
        }
        for r in &self.runs {
            for (p, n) in per_part.iter_mut().enumerate() {
                *n += r.offsets[p + 1] - r.offsets[p];
            }
        }
        let max_part = per_part.iter().copied().max().unwrap_or(0);
        let gather = rec_bytes::<K>(max_part as usize).saturating_mul(self.threads as u64);
        let sources_n = self.runs.len() + self.mem_runs.len();
        if self.runs.is_empty() || self.mem_run_bytes + gather <= self.budget {
            self.note_peak(gather);
            let mut files = Vec::with_capacity(self.runs.len());
            for r in &self.runs {
                files.push((File::open(&r.path)?, r.offsets.clone()));
            }
            let merge = PartMerge {
                mem: std::mem::take(&mut self.mem_runs),
                files,
                next: 0,
                ready: std::collections::VecDeque::new(),
                cur: Vec::new().into_iter(),
                threads: if sources_n > 1 { self.threads } else { 1 },
            };
            return Ok(SampledCounts {
                inner: Inner::Parts(merge),
                failed: false,
                _dir: self.dir.take(),
                stats: self.stats,
            });
        }
        let buf = self.read_buffer();
        // Multi-pass: merge groups of file runs until one merge can take them all with the
        // memory runs.
        while self.runs.len() + self.mem_runs.len() > FAN_IN {
            let n = self.runs.len().min(FAN_IN);
            let group: Vec<Run> = self.runs.drain(..n).collect();
            let level = group.iter().map(|r| r.level).max().unwrap_or(0) + 1;
            let merged = self.merge_files(group, level)?;
            self.runs.push(merged);
        }
        let mut sources: Vec<Source<K>> = Vec::with_capacity(self.runs.len() + self.mem_runs.len());
        for r in &self.runs {
            sources.push(Source::File(RunReader::open(r, buf)?));
        }
        for r in std::mem::take(&mut self.mem_runs) {
            sources.push(Source::Mem(r.into_iter().flatten()));
        }
        let merge = Merge::new(sources)?;
        Ok(SampledCounts {
            inner: Inner::Heap(merge),
            failed: false,
            _dir: self.dir.take(),
            stats: self.stats,
        })
    }
}

/// Write sorted records to a new run file; returns how many, and the partition offsets.
fn write_run<K: Key>(
    path: &Path,
    it: impl Iterator<Item = io::Result<(K, Val)>>,
) -> io::Result<(u64, Vec<u64>)> {
    let mut w = BufWriter::with_capacity(1 << 16, File::create(path)?);
    let mut rec = vec![0u8; record_len::<K>()];
    let mut n = 0u64;
    let mut offsets = vec![0u64; PARTS + 1];
    let mut part = 0usize;
    for item in it {
        let (k, v) = item?;
        let p = part_of(&k);
        while part < p {
            part += 1;
            offsets[part] = n;
        }
        k.write_to(&mut rec[..K::SIZE]);
        rec[K::SIZE..K::SIZE + 8].copy_from_slice(&v.count.to_le_bytes());
        rec[K::SIZE + 8..].copy_from_slice(&v.sample.to_le_bytes());
        w.write_all(&rec)?;
        n += 1;
    }
    while part < PARTS {
        part += 1;
        offsets[part] = n;
    }
    w.flush()?;
    Ok((n, offsets))
}

fn decode<K: Key>(b: &[u8]) -> Rec<K> {
    let mut c = [0u8; 8];
    c.copy_from_slice(&b[K::SIZE..K::SIZE + 8]);
    let mut s = [0u8; 4];
    s.copy_from_slice(&b[K::SIZE + 8..K::SIZE + 12]);
    Rec { key: K::read_from(&b[..K::SIZE]), count: u64::from_le_bytes(c), sample: u32::from_le_bytes(s) }
}

/// Partition-by-partition merge: partition p of every run (memory and file) gathered,
/// merged and summed; `threads` partitions at a time.
struct PartMerge<K: Key> {
    mem: Vec<Vec<Vec<Rec<K>>>>,
    files: Vec<(File, Vec<u64>)>,
    next: usize,
    ready: std::collections::VecDeque<Vec<Rec<K>>>,
    cur: std::vec::IntoIter<Rec<K>>,
    threads: usize,
}

/// Fill `buf` from `f` at `offset` without moving a shared cursor (threads read one run
/// file at once).
#[cfg(unix)]
fn read_exact_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(f: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(f, buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn read_exact_at(_: &File, _: &mut [u8], _: u64) -> io::Result<()> {
    Err(io::Error::other("positioned reads are not supported on this platform"))
}

/// Partition `p` of `files`' runs and the taken memory segments, merged.
fn gather_part<K: Key>(
    mut segs: Vec<Vec<Rec<K>>>,
    files: &[(File, Vec<u64>)],
    p: usize,
) -> io::Result<Vec<Rec<K>>> {
    segs.retain(|s| !s.is_empty());
    let file_recs: u64 = files.iter().map(|(_, off)| off[p + 1] - off[p]).sum();
    if file_recs == 0 && segs.len() <= 1 {
        // One sorted, summed segment (all in memory): nothing to merge.
        return Ok(segs.pop().unwrap_or_default());
    }
    let rl = record_len::<K>();
    let total = segs.iter().map(Vec::len).sum::<usize>() + file_recs as usize;
    let mut v = Vec::with_capacity(total);
    for s in segs {
        v.extend_from_slice(&s);
    }
    let mut buf = Vec::new();
    for (f, off) in files {
        let n = (off[p + 1] - off[p]) as usize;
        if n == 0 {
            continue;
        }
        buf.resize(n * rl, 0);
        read_exact_at(f, &mut buf, off[p] * rl as u64)?;
        v.extend(buf.chunks_exact(rl).map(decode));
    }
    merge_segments(&mut v);
    Ok(v)
}

impl<K: Key> PartMerge<K> {
    fn load(&mut self) -> io::Result<()> {
        let end = (self.next + self.threads).min(PARTS);
        let batch: Vec<(usize, Vec<Vec<Rec<K>>>)> = (self.next..end)
            .map(|p| (p, self.mem.iter_mut().map(|r| std::mem::take(&mut r[p])).collect()))
            .collect();
        self.next = end;
        let files = &self.files;
        let results: Vec<io::Result<Vec<Rec<K>>>> = if batch.len() == 1 {
            batch.into_iter().map(|(p, segs)| gather_part(segs, files, p)).collect()
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> =
                    batch.into_iter().map(|(p, segs)| s.spawn(move || gather_part(segs, files, p))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(io::Error::other("a merge thread panicked"))))
                    .collect()
            })
        };
        for r in results {
            self.ready.push_back(r?);
        }
        Ok(())
    }

    fn next_rec(&mut self) -> io::Result<Option<Rec<K>>> {
        loop {
            if let Some(r) = self.cur.next() {
                return Ok(Some(r));
            }
            match self.ready.pop_front() {
                Some(v) => self.cur = v.into_iter(),
                None if self.next < PARTS => self.load()?,
                None => return Ok(None),
            }
        }
    }
}

struct RunReader<K> {
    r: BufReader<File>,
    remaining: u64,
    rec: Vec<u8>,
    _k: std::marker::PhantomData<K>,
}

impl<K: Key> RunReader<K> {
    fn open(run: &Run, buf: usize) -> io::Result<Self> {
        Ok(RunReader {
            r: BufReader::with_capacity(buf, File::open(&run.path)?),
            remaining: run.records,
            rec: vec![0u8; record_len::<K>()],
            _k: std::marker::PhantomData,
        })
    }

    fn next_record(&mut self) -> io::Result<Option<(K, Val)>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.r.read_exact(&mut self.rec)?;
        self.remaining -= 1;
        let r = decode::<K>(&self.rec);
        Ok(Some((r.key, r.val())))
    }
}

enum Source<K> {
    Mem(std::iter::Flatten<std::vec::IntoIter<Vec<Rec<K>>>>),
    File(RunReader<K>),
}

impl<K: Key> Source<K> {
    fn next_record(&mut self) -> io::Result<Option<(K, Val)>> {
        match self {
            Source::Mem(it) => Ok(it.next().map(|r| (r.key, r.val()))),
            Source::File(r) => r.next_record(),
        }
    }
}

/// k-way merge of sorted sources, summing equal keys.
struct Merge<K: Key> {
    sources: Vec<Source<K>>,
    heads: Vec<Option<Val>>,
    heap: BinaryHeap<Reverse<(K, usize)>>,
    failed: bool,
}

impl<K: Key> Merge<K> {
    fn new(mut sources: Vec<Source<K>>) -> io::Result<Self> {
        let mut heap = BinaryHeap::with_capacity(sources.len());
        let mut heads = Vec::with_capacity(sources.len());
        for (i, s) in sources.iter_mut().enumerate() {
            match s.next_record()? {
                Some((k, v)) => {
                    heap.push(Reverse((k, i)));
                    heads.push(Some(v));
                }
                None => heads.push(None),
            }
        }
        Ok(Merge { sources, heads, heap, failed: false })
    }

    /// Take source `i`'s head and advance it.
    fn pop_source(&mut self, i: usize) -> io::Result<Val> {
        let v = self.heads[i].take().ok_or_else(|| io::Error::other("merge: empty head"))?;
        if let Some((k, nv)) = self.sources[i].next_record()? {
            self.heads[i] = Some(nv);
            self.heap.push(Reverse((k, i)));
        }
        Ok(v)
    }

    fn next_merged(&mut self) -> io::Result<Option<(K, Val)>> {
        let Some(Reverse((key, i))) = self.heap.pop() else { return Ok(None) };
        let mut acc = self.pop_source(i)?;
        while let Some(Reverse((k, _))) = self.heap.peek() {
            if *k != key {
                break;
            }
            let Some(Reverse((_, j))) = self.heap.pop() else { break };
            acc.merge(self.pop_source(j)?);
        }
        Ok(Some((key, acc)))
    }
}

impl<K: Key> Iterator for Merge<K> {
    type Item = io::Result<(K, Val)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.next_merged() {
            Ok(Some(kv)) => Some(Ok(kv)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Every key with its count, sorted by key. Yields `Err` once (then ends) if a run file
/// cannot be read. Run files are removed when this is dropped.
pub struct Counts<K: Key> {
    inner: SampledCounts<K>,
}

impl<K: Key> Counts<K> {
    pub fn stats(&self) -> CounterStats {
        self.inner.stats
    }
}

impl<K: Key> Iterator for Counts<K> {
    type Item = io::Result<(K, u64)>;
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|r| r.map(|(k, c, _)| (k, c)))
    }
}

enum Inner<K: Key> {
    Parts(PartMerge<K>),
    Heap(Merge<K>),
}

/// Every key with its count and smallest sample, sorted by key (see [`Counts`]).
pub struct SampledCounts<K: Key> {
    inner: Inner<K>,
    failed: bool,
    _dir: Option<TempDir>,
    stats: CounterStats,
}

impl<K: Key> SampledCounts<K> {
    pub fn stats(&self) -> CounterStats {
        self.stats
    }
}

impl<K: Key> Iterator for SampledCounts<K> {
    type Item = io::Result<(K, u64, u32)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let r = match &mut self.inner {
            Inner::Parts(m) => m.next_rec().map(|o| o.map(|r| (r.key, r.count, r.sample))),
            Inner::Heap(m) => m.next_merged().map(|o| o.map(|(k, v)| (k, v.count, v.sample))),
        };
        match r {
            Ok(o) => o.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// One bin of a [`Histogram`]: counts in `lo..=hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Bin {
    pub lo: u64,
    pub hi: u64,
    /// Distinct keys whose count falls in the bin.
    pub keys: u64,
    /// Their occurrences (sum of counts).
    pub occurrences: u64,
}

/// A knee candidate: where the log-log slope of the count distribution changes most.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Knee {
    /// The lower edge of the bin where the slope changes: `--min-count` candidates.
    pub count: u64,
    /// Slope (log10 keys-per-count over log10 count) before and after the bin.
    pub slope_before: f64,
    pub slope_after: f64,
}

impl Knee {
    /// `slope_after − slope_before`: negative where the curve steepens.
    pub fn change(&self) -> f64 {
        self.slope_after - self.slope_before
    }
}

/// Log-binned distribution of counts: bin `i` holds counts in `[2^i, 2^(i+1))`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Histogram {
    keys: Vec<u64>,
    occurrences: Vec<u64>,
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// Record one distinct key seen `count` times (0 is ignored).
    pub fn add(&mut self, count: u64) {
        if count == 0 {
            return;
        }
        let i = (63 - count.leading_zeros()) as usize;
        if self.keys.len() <= i {
            self.keys.resize(i + 1, 0);
            self.occurrences.resize(i + 1, 0);
        }
        self.keys[i] += 1;
        self.occurrences[i] = self.occurrences[i].saturating_add(count);
    }

    /// Distinct keys counted.
    pub fn distinct(&self) -> u64 {
        self.keys.iter().sum()
    }

    /// Occurrences counted.
    pub fn occurrences(&self) -> u64 {
        self.occurrences.iter().fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// The non-empty bins, smallest counts first.
    pub fn bins(&self) -> Vec<Bin> {
        (0..self.keys.len())
            .filter(|&i| self.keys[i] > 0)
            .map(|i| Bin {
                lo: 1u64 << i,
                hi: if i == 63 { u64::MAX } else { (1u64 << (i + 1)) - 1 },
                keys: self.keys[i],
                occurrences: self.occurrences[i],
            })
            .collect()
    }

    /// Knee candidates, sharpest steepening first: for each non-empty bin, the density
    /// `keys / bin width` is a point at the bin's geometric centre on log-log axes; a knee is
    /// an interior point where the slope to the next point is lower (steeper) than the slope
    /// from the previous one. At most `max` candidates.
    pub fn knees(&self, max: usize) -> Vec<Knee> {
        let pts: Vec<(u64, f64, f64)> = self
            .bins()
            .iter()
            .map(|b| {
                let width = (b.hi - b.lo + 1) as f64;
                let x = ((b.lo as f64) * (b.hi as f64)).sqrt().log10();
                (b.lo, x, (b.keys as f64 / width).log10())
            })
            .collect();
        let mut out: Vec<Knee> = pts
            .windows(3)
            .map(|w| Knee {
                count: w[1].0,
                slope_before: (w[1].2 - w[0].2) / (w[1].1 - w[0].1),
                slope_after: (w[2].2 - w[1].2) / (w[2].1 - w[1].1),
            })
            .filter(|k| k.change() < 0.0)
            .collect();
        out.sort_by(|a, b| a.change().total_cmp(&b.change()));
        out.truncate(max);
        out
    }

    /// A text table: bin, distinct keys, occurrences, distinct keys with a count ≥ the bin's
    /// lower edge, and a log-scaled bar; then the knee candidates.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let bins = self.bins();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:>23}  {:>12}  {:>14}  {:>12}  distinct keys (log scale)",
            "count", "distinct", "occurrences", "distinct ≥"
        );
        let mut at_least: u64 = self.distinct();
        for b in &bins {
            let range = if b.lo == b.hi { format!("{}", b.lo) } else { format!("{}–{}", b.lo, b.hi) };
            let bar = "#".repeat(((b.keys as f64).log10().floor() as usize) + 1);
            let _ = writeln!(s, "{range:>23}  {:>12}  {:>14}  {at_least:>12}  {bar}", b.keys, b.occurrences);
            at_least -= b.keys;
        }
        let knees = self.knees(3);
        if knees.is_empty() {
            let _ = writeln!(s, "knee candidates: none (the log-log curve never steepens)");
        } else {
            for k in knees {
                let _ = writeln!(
                    s,
                    "knee candidate: count {} (log-log slope {:.2} → {:.2}); try --min-count {}",
                    k.count,
                    k.slope_before,
                    k.slope_after,
                    k.count.saturating_sub(1).max(1)
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> PathBuf {
        std::env::temp_dir()
    }

    #[test]
    fn counts_small_sets_by_hand() {
        let mut c: Counter<[u8; 2]> = Counter::new(1 << 20, tmp());
        for k in [[0, 2], [0, 1], [0, 2], [1, 0], [0, 2]] {
            c.add(k).unwrap();
        }
        c.add_n([0, 1], 10).unwrap();
        let v: Vec<_> = c.finish().unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(v, vec![([0, 1], 11), ([0, 2], 3), ([1, 0], 1)]);
    }

    #[test]
    fn tiny_budget_spills_and_merges_exactly_with_smallest_samples() {
        // A budget too small for anything: the table keeps its 16-key minimum and spills
        // every 16 distinct keys; 1000 distinct keys → > 60 runs → a multi-pass merge.
        let mut c: Counter<u64> = Counter::new(0, tmp());
        let mut want = std::collections::BTreeMap::new();
        for i in 0..5000u64 {
            let k = (i * 7919) % 1000;
            let sample = (5000 - i) as u32;
            c.add_sampled(k, 1, sample).unwrap();
            let e = want.entry(k).or_insert((0u64, u32::MAX));
            e.0 += 1;
            e.1 = e.1.min(sample);
        }
        assert!(c.stats().runs_written > FAN_IN as u64, "{:?}", c.stats());
        let got: Vec<_> = c.finish_sampled().unwrap().map(|r| r.unwrap()).collect();
        let want: Vec<_> = want.into_iter().map(|(k, (n, s))| (k, n, s)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn tiny_budget_keeps_few_runs_on_disk() {
        // 16-record spills: 12,500 runs written in all, but merged by level as they come, so
        // few stay on disk (each keeps 2 KiB of partition offsets in memory).
        let mut c: Counter<u64> = Counter::new(0, tmp());
        for i in 0..200_000u64 {
            c.add(fmix64(i % 50_000)).unwrap();
        }
        assert!(c.stats().runs_written > 12_500, "{:?}", c.stats());
        assert!(c.runs.len() < 3 * FAN_IN, "{} runs on disk", c.runs.len());
        let got: Vec<(u64, u64)> = c.finish().unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(got.len(), 50_000);
        assert!(got.iter().all(|&(_, n)| n == 4));
        assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn memory_runs_merge_exactly() {
        // A 16-record buffer and a large budget: many sorted runs stay in memory and merge
        // partition by partition.
        let mut c: Counter<u64> = Counter::new(1 << 30, tmp()).with_table_cap(16);
        let mut want = std::collections::BTreeMap::new();
        for i in 0..20_000u64 {
            let k = (i * 104_729) % 3_000;
            c.add_sampled(k, 2, i as u32).unwrap();
            let e = want.entry(k).or_insert((0u64, u32::MAX));
            e.0 += 2;
            e.1 = e.1.min(i as u32);
        }
        let s = c.stats();
        assert_eq!(s.runs_written, 0, "{s:?}");
        assert!(s.runs_in_memory > FAN_IN as u64, "{s:?}");
        let got: Vec<_> = c.finish_sampled().unwrap().map(|r| r.unwrap()).collect();
        let want: Vec<_> = want.into_iter().map(|(k, (n, s))| (k, n, s)).collect();
        assert_eq!(got, want);
    }

    /// Uniform 20-byte keys (first byte spread over all partitions), with samples.
    fn uniform_keys(n: u64, distinct: u64) -> Vec<([u8; 20], u32)> {
        (0..n)
            .map(|i| {
                let v = fmix64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % distinct;
                let mut k = [0u8; 20];
                k[..8].copy_from_slice(&fmix64(v).to_be_bytes());
                k[12..].copy_from_slice(&v.to_le_bytes());
                (k, (n - i) as u32)
            })
            .collect()
    }

    fn expected(keys: &[([u8; 20], u32)]) -> Vec<([u8; 20], u64, u32)> {
        let mut want = std::collections::BTreeMap::new();
        for &(k, s) in keys {
            let e = want.entry(k).or_insert((0u64, u32::MAX));
            e.0 += 1;
            e.1 = e.1.min(s);
        }
        want.into_iter().map(|(k, (n, s))| (k, n, s)).collect()
    }

    #[test]
    fn partition_merge_over_spilled_and_memory_runs_is_exact() {
        let keys = uniform_keys(200_000, 50_000);
        // 1 MiB: runs spill, one stays in memory, and each partition's share fits the budget.
        let mut c: Counter<[u8; 20]> = Counter::new(1 << 20, tmp()).with_threads(2);
        for &(k, s) in &keys {
            c.add_sampled(k, 1, s).unwrap();
        }
        let out = c.finish_sampled().unwrap();
        let st = out.stats();
        assert!(st.runs_written > 2 && st.runs_in_memory >= 1, "{st:?}");
        assert!(matches!(out.inner, Inner::Parts(_)), "expected the partition merge");
        let got: Vec<_> = out.map(|r| r.unwrap()).collect();
        assert_eq!(got, expected(&keys));
    }

    #[test]
    fn heap_merge_when_a_partition_does_not_fit() {
        let keys = uniform_keys(50_000, 20_000);
        // 4 KiB: a partition's share of all runs is larger than the budget → k-way heap merge
        // (multi-pass: far more than FAN_IN runs).
        let mut c: Counter<[u8; 20]> = Counter::new(4 << 10, tmp());
        for &(k, s) in &keys {
            c.add_sampled(k, 1, s).unwrap();
        }
        let out = c.finish_sampled().unwrap();
        assert!(out.stats().runs_written > FAN_IN as u64, "{:?}", out.stats());
        assert!(matches!(out.inner, Inner::Heap(_)), "expected the heap merge");
        let got: Vec<_> = out.map(|r| r.unwrap()).collect();
        assert_eq!(got, expected(&keys));
    }

    #[test]
    fn run_files_are_removed() {
        let parent = tmp().join(format!("ditto-counting-test-{}", std::process::id()));
        let mut c: Counter<[u8; 20]> = Counter::new(0, &parent);
        for i in 0..100u32 {
            let mut k = [0u8; 20];
            k[..4].copy_from_slice(&i.to_le_bytes());
            c.add(k).unwrap();
        }
        let dir = c.dir.as_ref().unwrap().path.clone();
        assert!(dir.exists());
        let it = c.finish().unwrap();
        assert!(dir.exists());
        drop(it);
        assert!(!dir.exists());
        let _ = std::fs::remove_dir(&parent);
    }

    #[test]
    fn u64_keys_sort_numerically() {
        let mut c: Counter<u64> = Counter::new(0, tmp());
        for k in (0..100u64).rev().chain([256, 1, u64::MAX]) {
            c.add(k).unwrap();
        }
        let v: Vec<u64> = c.finish().unwrap().map(|r| r.unwrap().0).collect();
        let mut sorted = v.clone();
        sorted.sort();
        assert_eq!(v, sorted);
        assert_eq!(v.len(), 102);
    }

    #[test]
    fn histogram_bins_by_hand() {
        let mut h = Histogram::new();
        for c in [1, 1, 1, 2, 3, 4, 7, 8, 1000] {
            h.add(c);
        }
        let bins = h.bins();
        assert_eq!(
            bins,
            vec![
                Bin { lo: 1, hi: 1, keys: 3, occurrences: 3 },
                Bin { lo: 2, hi: 3, keys: 2, occurrences: 5 },
                Bin { lo: 4, hi: 7, keys: 2, occurrences: 11 },
                Bin { lo: 8, hi: 15, keys: 1, occurrences: 8 },
                Bin { lo: 512, hi: 1023, keys: 1, occurrences: 1000 },
            ]
        );
        assert_eq!(h.distinct(), 9);
        assert_eq!(h.occurrences(), 1027);
    }

    #[test]
    fn knee_is_where_the_slope_drops() {
        // Points (log10 geometric bin centre, log10 keys per count):
        // [1]: 1000 keys → (0, 3); [2,3]: 500 → (0.389, 2.398); [4,7]: 250 → (0.724, 1.796);
        // [8,15]: 1 → (1.040, −0.903); [16,31]: 1 → (1.348, −1.204).
        // Slopes: −1.55, −1.80, −8.54, −0.98; changes at 2: −0.25, at 4: −6.74, at 8: +7.56.
        let mut h = Histogram::new();
        for (count, keys) in [(1, 1000), (2, 500), (4, 250), (8, 1), (16, 1)] {
            for _ in 0..keys {
                h.add(count);
            }
        }
        let knees = h.knees(3);
        assert_eq!(knees.iter().map(|k| k.count).collect::<Vec<_>>(), vec![4, 2]);
        assert!((knees[0].slope_before - -1.80).abs() < 0.01, "{knees:?}");
        assert!((knees[0].slope_after - -8.54).abs() < 0.01, "{knees:?}");
        assert!((knees[1].change() - -0.25).abs() < 0.01, "{knees:?}");
    }

    #[test]
    fn budget_bounds_the_table() {
        let budget = 1 << 20;
        let mut c: Counter<[u8; 20]> = Counter::new(budget, tmp());
        for i in 0..200_000u32 {
            let mut k = [0u8; 20];
            k[..4].copy_from_slice(&i.to_le_bytes());
            c.add(k).unwrap();
        }
        let s = c.stats();
        assert!(s.runs_written > 0);
        assert!(s.peak_table_bytes <= budget, "{s:?}");
        assert_eq!(c.finish().unwrap().count(), 200_000);
    }
}
