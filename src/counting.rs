//! Exact occurrence counting of fixed-size keys (20-byte SHA-1 digests, 64-bit k-gram
//! hashes) in bounded memory.
//!
//! Blind discovery (Ardi & Heidemann 2014, §3.2 step 3b) needs the number of duplicates of
//! every object over the whole corpus — "discovery is not distributive" (§3.2) — and the paper
//! computes it by sorting: "we sort and count all hashes (O(n log n)), and cull objects (O(n))
//! whose number of duplicates do not exceed the threshold". [`Counter`] does the same on one
//! machine: keys are counted in an in-memory hash table while it fits the memory budget;
//! when the table would outgrow it, its entries are sorted by key and written to a run file
//! (a "spill"), and [`Counter::finish`] k-way merges the runs with what is still in memory.
//! The result is exact (no sketch), sorted by key.
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
//! use ditto::counting::Counter;
//! let mut c: Counter<u64> = Counter::new(1 << 20, std::env::temp_dir());
//! for k in [3u64, 1, 3, 2, 3] {
//!     c.add(k).unwrap();
//! }
//! let counts: Vec<(u64, u64)> = c.finish().unwrap().map(|r| r.unwrap()).collect();
//! assert_eq!(counts, vec![(1, 1), (2, 1), (3, 3)]);
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// "No sample" for [`Counter::add`] and [`Counter::add_n`].
pub const NO_SAMPLE: u32 = u32::MAX;

/// Most runs merged at once; more are first merged in groups (multi-pass merge).
const FAN_IN: usize = 64;

/// Largest table, in keys, whatever the budget: past this, lookups miss the CPU caches and
/// counting in sorted runs kept in memory (merged at the end) is faster than one huge table.
const MAX_TABLE_KEYS: usize = 1 << 18;

/// A fixed-size key: serialized as exactly `SIZE` bytes, ordered as those bytes.
pub trait Key: Copy + Ord + Eq + Send + 'static {
    const SIZE: usize;
    /// Write the key's `SIZE` bytes to `out` (`out.len() == SIZE`).
    fn write_to(&self, out: &mut [u8]);
    /// Read a key from `SIZE` bytes.
    fn read_from(b: &[u8]) -> Self;
    /// A well-mixed 64-bit hash for the in-memory table.
    fn mix(&self) -> u64;
    /// The first (up to) 8 serialized bytes as a big-endian integer, zero-padded: orders
    /// as the key does wherever two prefixes differ (a fast path for sorting).
    fn prefix(&self) -> u64;
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
}

/// Table key: hashes as [`Key::mix`] through the identity hasher below.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Slot<K>(K);

impl<K: Key> Hash for Slot<K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.mix());
    }
}

#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).rotate_left(5);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
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

type Table<K> = HashMap<Slot<K>, Val, BuildHasherDefault<IdHasher>>;

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

/// One sorted run on disk.
#[derive(Debug)]
struct Run {
    path: PathBuf,
    records: u64,
}

/// What a counter did, for reports and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterStats {
    /// Occurrences added (sum of all `n`).
    pub occurrences: u64,
    /// Runs written to disk (spills plus intermediate merge runs).
    pub runs_written: u64,
    /// Sorted runs kept in memory instead (the table is capped at a cache-friendly size).
    pub runs_in_memory: u64,
    /// Bytes written to run files.
    pub bytes_spilled: u64,
    /// Largest estimated in-memory footprint of the table plus its sort buffer, in bytes.
    pub peak_table_bytes: u64,
}

/// Exact counter of fixed-size keys within a memory budget (see the module docs).
pub struct Counter<K: Key> {
    budget: u64,
    tmp_parent: PathBuf,
    dir: Option<TempDir>,
    table: Table<K>,
    /// Sorted runs kept in memory while the budget allows, and their bytes.
    mem_runs: Vec<Vec<(K, Val)>>,
    mem_run_bytes: u64,
    max_table_keys: usize,
    /// Sorted runs on disk.
    runs: Vec<Run>,
    stats: CounterStats,
}

/// Bytes of a hash table holding `cap` entries (hashbrown: buckets = next power of two of
/// cap·8/7, one control byte per bucket).
fn table_bytes<K: Key>(cap: usize) -> u64 {
    buckets(cap) as u64 * (std::mem::size_of::<(Slot<K>, Val)>() as u64 + 1)
}

fn buckets(cap: usize) -> usize {
    (cap.max(1) * 8).div_ceil(7).next_power_of_two().max(4)
}

/// The capacity a table asked for `cap` keys really has (7/8 of its buckets).
fn real_capacity(cap: usize) -> usize {
    let b = buckets(cap);
    if b < 8 {
        b - 1
    } else {
        b / 8 * 7
    }
}

/// Bytes of the sort buffer for `n` entries.
fn buffer_bytes<K: Key>(n: usize) -> u64 {
    n as u64 * std::mem::size_of::<(K, Val)>() as u64
}

/// Bytes of one record in a run file.
fn record_len<K: Key>() -> usize {
    K::SIZE + 12
}

impl<K: Key> Counter<K> {
    /// A counter that keeps its table and sort buffer within about `memory_budget_bytes`
    /// (at least room for 16 keys) and spills sorted runs to a directory under `tmp_dir`.
    pub fn new(memory_budget_bytes: u64, tmp_dir: impl Into<PathBuf>) -> Self {
        let mut c = Counter {
            budget: memory_budget_bytes,
            tmp_parent: tmp_dir.into(),
            dir: None,
            table: Table::default(),
            mem_runs: Vec::new(),
            mem_run_bytes: 0,
            max_table_keys: MAX_TABLE_KEYS,
            runs: Vec::new(),
            stats: CounterStats::default(),
        };
        let mut cap = 1024;
        while cap > 16 && !c.fits(cap) {
            cap /= 2;
        }
        c.table = Table::with_capacity_and_hasher(cap, Default::default());
        c.note_peak();
        c
    }

    /// Whether a table with room for `cap` keys plus the buffer to sort it fit the budget.
    fn fits(&self, cap: usize) -> bool {
        table_bytes::<K>(cap) + buffer_bytes::<K>(real_capacity(cap)) <= self.budget
    }

    fn note_peak(&mut self) {
        let cap = self.table.capacity();
        let b = table_bytes::<K>(cap) + buffer_bytes::<K>(self.table.len()) + self.mem_run_bytes;
        self.stats.peak_table_bytes = self.stats.peak_table_bytes.max(b);
    }

    /// Cap the table at about `keys` keys (default 2^18) even when the budget allows more;
    /// past it, sorted runs are kept in memory (or spilled, past the budget).
    pub fn with_table_cap(mut self, keys: usize) -> Self {
        self.max_table_keys = keys.max(16);
        if self.table.capacity() > self.max_table_keys && self.table.is_empty() {
            self.table = Table::with_capacity_and_hasher(self.max_table_keys, Default::default());
        }
        self
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
    pub fn add_sampled(&mut self, key: K, n: u64, sample: u32) -> io::Result<()> {
        self.stats.occurrences += n;
        if let Some(v) = self.table.get_mut(&Slot(key)) {
            v.merge(Val { count: n, sample });
            return Ok(());
        }
        if self.table.len() == self.table.capacity() {
            // The next insert grows the table to about twice its capacity.
            let next = self.table.capacity().saturating_mul(2).max(16);
            if next <= self.max_table_keys && self.fits(next) {
                self.table.reserve(next - self.table.len());
                self.note_peak();
            } else {
                self.spill()?;
            }
        }
        self.table.insert(Slot(key), Val { count: n, sample });
        Ok(())
    }

    /// Occurrences added so far and spill figures.
    pub fn stats(&self) -> CounterStats {
        self.stats
    }

    /// Distinct keys now in memory.
    pub fn in_memory(&self) -> usize {
        self.table.len()
    }

    fn drain_sorted(&mut self) -> Vec<(K, Val)> {
        let mut v: Vec<(K, Val)> = Vec::with_capacity(self.table.len());
        v.extend(self.table.drain().map(|(k, val)| (k.0, val)));
        v.sort_unstable_by(|a, b| a.0.prefix().cmp(&b.0.prefix()).then_with(|| a.0.cmp(&b.0)));
        v
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

    /// Sort the table's entries and write them as a run; the table keeps its allocation.
    fn spill(&mut self) -> io::Result<()> {
        if self.table.is_empty() {
            return Ok(());
        }
        self.note_peak();
        let sorted = self.drain_sorted();
        // Keep the run in memory if it, the table, its sort buffer, and room to merge the
        // memory runs into one (twice their size) fit the budget.
        let bytes = buffer_bytes::<K>(sorted.len());
        let cap = self.table.capacity();
        let table = table_bytes::<K>(cap) + buffer_bytes::<K>(cap);
        if table + 2 * (self.mem_run_bytes + bytes) <= self.budget {
            self.mem_run_bytes += bytes;
            self.mem_runs.push(sorted);
            self.stats.runs_in_memory += 1;
            self.note_peak();
            if self.mem_runs.len() >= FAN_IN / 2 {
                let runs = std::mem::take(&mut self.mem_runs);
                let merged: Vec<(K, Val)> =
                    Merge::new(runs.into_iter().map(|r| Source::Mem(r.into_iter())).collect())?
                        .collect::<io::Result<_>>()?;
                self.mem_run_bytes = buffer_bytes::<K>(merged.len());
                self.mem_runs.push(merged);
            }
            return Ok(());
        }
        let path = self.new_run_path()?;
        let records = write_run(&path, sorted.into_iter().map(Ok))?;
        self.stats.runs_written += 1;
        self.stats.bytes_spilled += records * record_len::<K>() as u64;
        self.runs.push(Run { path, records });
        Ok(())
    }

    /// Read buffer per run during merges: a share of the budget, 4 KiB to 1 MiB.
    fn read_buffer(&self) -> usize {
        (self.budget / (2 * FAN_IN as u64)).clamp(4 << 10, 1 << 20) as usize
    }

    /// Stop counting: every key with its exact count, sorted by key.
    pub fn finish(self) -> io::Result<Counts<K>> {
        self.finish_sampled().map(|inner| Counts { inner })
    }

    /// As [`Counter::finish`], with each key's smallest sample ([`NO_SAMPLE`] when none).
    pub fn finish_sampled(mut self) -> io::Result<SampledCounts<K>> {
        let mem = self.drain_sorted();
        self.table = Table::default();
        let buf = self.read_buffer();
        // Multi-pass: merge groups of file runs until one merge can take them all with the
        // memory runs and the table's remainder (at most FAN_IN / 2 memory runs).
        while self.runs.len() + self.mem_runs.len() + 1 > FAN_IN {
            let n = self.runs.len().min(FAN_IN);
            let group: Vec<Run> = self.runs.drain(..n).collect();
            let sources = group
                .iter()
                .map(|r| RunReader::<K>::open(r, buf).map(Source::File))
                .collect::<io::Result<Vec<Source<K>>>>()?;
            let path = self.new_run_path()?;
            let records = write_run(&path, Merge::new(sources)?)?;
            for r in &group {
                let _ = std::fs::remove_file(&r.path);
            }
            self.stats.runs_written += 1;
            self.stats.bytes_spilled += records * record_len::<K>() as u64;
            self.runs.push(Run { path, records });
        }
        let mut sources: Vec<Source<K>> = Vec::with_capacity(self.runs.len() + 1);
        for r in &self.runs {
            sources.push(Source::File(RunReader::open(r, buf)?));
        }
        for r in std::mem::take(&mut self.mem_runs) {
            sources.push(Source::Mem(r.into_iter()));
        }
        sources.push(Source::Mem(mem.into_iter()));
        let merge = Merge::new(sources)?;
        Ok(SampledCounts { merge, _dir: self.dir.take(), stats: self.stats })
    }
}

/// Write sorted records to a new run file; returns how many.
fn write_run<K: Key>(path: &Path, it: impl Iterator<Item = io::Result<(K, Val)>>) -> io::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 16, File::create(path)?);
    let mut rec = vec![0u8; record_len::<K>()];
    let mut n = 0u64;
    for item in it {
        let (k, v) = item?;
        k.write_to(&mut rec[..K::SIZE]);
        rec[K::SIZE..K::SIZE + 8].copy_from_slice(&v.count.to_le_bytes());
        rec[K::SIZE + 8..].copy_from_slice(&v.sample.to_le_bytes());
        w.write_all(&rec)?;
        n += 1;
    }
    w.flush()?;
    Ok(n)
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
        let k = K::read_from(&self.rec[..K::SIZE]);
        let mut c = [0u8; 8];
        c.copy_from_slice(&self.rec[K::SIZE..K::SIZE + 8]);
        let mut s = [0u8; 4];
        s.copy_from_slice(&self.rec[K::SIZE + 8..]);
        Ok(Some((k, Val { count: u64::from_le_bytes(c), sample: u32::from_le_bytes(s) })))
    }
}

enum Source<K> {
    Mem(std::vec::IntoIter<(K, Val)>),
    File(RunReader<K>),
}

impl<K: Key> Source<K> {
    fn next_record(&mut self) -> io::Result<Option<(K, Val)>> {
        match self {
            Source::Mem(it) => Ok(it.next()),
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

/// Every key with its count and smallest sample, sorted by key (see [`Counts`]).
pub struct SampledCounts<K: Key> {
    merge: Merge<K>,
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
        self.merge.next().map(|r| r.map(|(k, v)| (k, v.count, v.sample)))
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
    fn memory_runs_compact_and_merge_exactly() {
        // A 16-key table and a large budget: sorted runs stay in memory, are compacted every
        // FAN_IN / 2 runs, and merge with the table's remainder.
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
        assert!(c.mem_runs.len() < FAN_IN / 2);
        let got: Vec<_> = c.finish_sampled().unwrap().map(|r| r.unwrap()).collect();
        let want: Vec<_> = want.into_iter().map(|(k, (n, s))| (k, n, s)).collect();
        assert_eq!(got, want);
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
