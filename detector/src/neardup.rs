//! Near-duplicate index over 64-bit SimHash keys: Manku, Jain & Das Sarma 2007 ("Detecting
//! near-duplicates for web crawling", §3), the fast lookup Khan & Ali 2015 cite (§II, [10]).
//!
//! Problem (Manku §3): given a collection of f-bit fingerprints and a query F, find every
//! fingerprint that differs from F in at most k bit positions, without scanning them all.
//!
//! Permuted tables (Manku §3.1): split the f = 64 bits into `b` > k blocks. Two keys within
//! distance k differ in at most k blocks, so at least b − k blocks are identical
//! (pigeonhole). For every choice of b − k blocks there is one table: a permutation π that
//! moves the chosen blocks to the top bits, and the collection's permuted keys, sorted. A
//! query permutes F with each π, finds the keys sharing its top bits (here through a
//! directory on the top `p` bits instead of binary search, Manku's §3.1.1 refinement) and
//! checks the Hamming distance of each (a permutation keeps Hamming distances). Tables:
//! C(b, k); bits matched exactly per table: about 64·(b − k)/b; expected keys examined per
//! table N / 2^(64(b−k)/b). Manku's example f = 64, k = 3 with b = 4 gives 4 tables of
//! 16-bit prefixes; more blocks trade memory (C(b, k) tables of 8 bytes per key) for fewer
//! keys examined.
//!
//! The index is built once from a batch ([`NearDupIndex::build`]); keys added later
//! ([`NearDupIndex::insert`]) go to a pending list of at most [`PENDING_KEYS`] that lookups
//! scan directly. A full pending list becomes a level of its own (its own permuted tables),
//! and the two newest levels are merged while the newer is at least as large as the older (a
//! binary counter), so a live index of n keys has at most about log2(n / PENDING_KEYS) + 1
//! levels, a lookup costs one probe per table per level plus the pending scan, and each key
//! is re-sorted O(log n) times. (Until 2026-11-23 the pending list grew to an eighth of the
//! index before one rebuild of everything: a scan of millions of pages spent a linear scan
//! of up to n/8 keys on every page.)

/// Index settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexConfig {
    /// Largest Hamming distance a lookup reports.
    pub k: u32,
    /// Blocks the 64 bits are split into (> k, ≤ 64); `C(blocks, k)` tables are built.
    pub blocks: u32,
}

impl IndexConfig {
    /// k + 1 blocks: the fewest tables (k + 1) and the least memory.
    pub fn new(k: u32) -> IndexConfig {
        IndexConfig { k, blocks: k + 1 }
    }
}

/// Why a configuration cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    #[error("near-dup index: need k < blocks ≤ 64 (got k = {k}, blocks = {blocks})")]
    Blocks { k: u32, blocks: u32 },
    #[error("near-dup index: C({blocks}, {k}) = {tables} tables is too many (limit 256)")]
    TooManyTables { k: u32, blocks: u32, tables: u64 },
    #[error("near-dup index: more than 2^32 - 1 keys")]
    TooManyKeys,
}

/// A block of bits: `width` bits starting at bit `shift` (bit 0 = least significant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Move {
    src: u32,
    dst: u32,
    mask: u64,
}

/// A block permutation of 64-bit keys.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Permutation {
    moves: Vec<Move>,
    /// Bits the chosen (leading) blocks span.
    key_bits: u32,
}

impl Permutation {
    #[inline]
    fn apply(&self, x: u64) -> u64 {
        self.moves.iter().fold(0, |y, m| y | (((x >> m.src) & m.mask) << m.dst))
    }

    #[inline]
    fn invert(&self, y: u64) -> u64 {
        self.moves.iter().fold(0, |x, m| x | (((y >> m.dst) & m.mask) << m.src))
    }

    /// Chosen blocks first (from the most significant bit down), then the others.
    fn new(blocks: &[(u32, u32)], chosen: &[usize]) -> Permutation {
        let mut order: Vec<usize> = chosen.to_vec();
        order.extend((0..blocks.len()).filter(|i| !chosen.contains(i)));
        let mut top = 64u32;
        let mut moves = Vec::with_capacity(blocks.len());
        for &i in &order {
            let (shift, width) = blocks[i];
            top -= width;
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            moves.push(Move { src: shift, dst: top, mask });
        }
        let key_bits = chosen.iter().map(|&i| blocks[i].1).sum();
        Permutation { moves, key_bits }
    }
}

/// One permuted table: sorted permuted keys and a directory on their top `p` bits.
#[derive(Debug, Clone)]
struct Table {
    perm: Permutation,
    p: u32,
    /// `dir[b]..dir[b + 1]` is the range of `keys` whose top `p` bits are `b`.
    dir: Vec<u32>,
    keys: Vec<u64>,
}

impl Table {
    fn build(perm: Permutation, sorted_fps: &[u64]) -> Table {
        let n = sorted_fps.len().max(1);
        // Directory of about n/4 slots (4 keys a slot on average), never finer than the
        // exactly matched bits.
        let p = (usize::BITS - n.leading_zeros()).saturating_sub(2).clamp(1, 28).min(perm.key_bits.max(1));
        let mut keys: Vec<u64> = sorted_fps.iter().map(|&x| perm.apply(x)).collect();
        keys.sort_unstable();
        let slots = 1usize << p;
        let mut dir = vec![0u32; slots + 1];
        for &key in &keys {
            dir[(key >> (64 - p)) as usize + 1] += 1;
        }
        for i in 0..slots {
            dir[i + 1] += dir[i];
        }
        Table { perm, p, dir, keys }
    }

    #[inline]
    fn probe(&self, q: u64, k: u32, out: &mut Vec<u64>) {
        let pq = self.perm.apply(q);
        let b = (pq >> (64 - self.p)) as usize;
        let (lo, hi) = (self.dir[b] as usize, self.dir[b + 1] as usize);
        for &key in &self.keys[lo..hi] {
            if (key ^ pq).count_ones() <= k {
                out.push(self.perm.invert(key));
            }
        }
    }

    fn bytes(&self) -> usize {
        self.keys.capacity() * 8 + self.dir.capacity() * 4
    }
}

/// Most keys a lookup scans directly before they are given tables of their own.
pub const PENDING_KEYS: usize = 4096;

/// Manku et al.'s permuted-table index of (SimHash, id) pairs.
#[derive(Debug, Clone)]
pub struct NearDupIndex {
    cfg: IndexConfig,
    /// Oldest and largest first; see the module docs.
    levels: Vec<Level>,
    /// Added since the newest level was built; scanned directly by lookups.
    pending: Vec<(u64, u32)>,
}

/// A set of keys with its permuted tables.
#[derive(Debug, Clone)]
struct Level {
    tables: Vec<Table>,
    /// The keys, sorted, with their ids (parallel): maps a found key back to its ids.
    fps: Vec<u64>,
    ids: Vec<u32>,
}

impl Level {
    fn build(cfg: IndexConfig, mut items: Vec<(u64, u32)>) -> Level {
        items.sort_unstable();
        let fps: Vec<u64> = items.iter().map(|x| x.0).collect();
        let ids: Vec<u32> = items.iter().map(|x| x.1).collect();
        let mut distinct = fps.clone();
        distinct.dedup();
        let b = cfg.blocks as usize;
        // Block j: bits [shift, shift + width); widths differ by at most one.
        let mut blocks = Vec::with_capacity(b);
        let mut shift = 0u32;
        for j in 0..b as u32 {
            let width = 64 / b as u32 + u32::from(j < 64 % b as u32);
            blocks.push((shift, width));
            shift += width;
        }
        let keep = b - cfg.k as usize;
        let tables = combinations(b, keep)
            .iter()
            .map(|chosen| Table::build(Permutation::new(&blocks, chosen), &distinct))
            .collect();
        Level { tables, fps, ids }
    }

    /// Adds the (distance, id) of every key within `k` of `q` to `out`; `found` is scratch.
    fn query(&self, q: u64, k: u32, found: &mut Vec<u64>, out: &mut Vec<NearMatch>) {
        found.clear();
        for t in &self.tables {
            t.probe(q, k, found);
        }
        found.sort_unstable();
        found.dedup();
        for &fp in found.iter() {
            let start = self.fps.partition_point(|&x| x < fp);
            let distance = (fp ^ q).count_ones();
            for i in start..self.fps.len() {
                if self.fps[i] != fp {
                    break;
                }
                out.push(NearMatch { distance, id: self.ids[i] });
            }
        }
    }

    fn into_items(self) -> impl Iterator<Item = (u64, u32)> {
        self.fps.into_iter().zip(self.ids)
    }

    fn bytes(&self) -> usize {
        self.tables.iter().map(Table::bytes).sum::<usize>()
            + self.fps.capacity() * 8
            + self.ids.capacity() * 4
    }
}

/// A lookup result: an id whose key is within k of the query, and the distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct NearMatch {
    pub distance: u32,
    pub id: u32,
}

/// All subsets of `0..n` of size `r`, in lexicographic order.
fn combinations(n: usize, r: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur: Vec<usize> = (0..r).collect();
    if r > n {
        return out;
    }
    loop {
        out.push(cur.clone());
        let Some(i) = (0..r).rev().find(|&i| cur[i] != i + n - r) else { break };
        cur[i] += 1;
        for j in i + 1..r {
            cur[j] = cur[j - 1] + 1;
        }
    }
    out
}

fn binomial(n: u64, r: u64) -> u64 {
    let r = r.min(n - r.min(n));
    (0..r).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

impl NearDupIndex {
    /// Build the index from (key, id) pairs.
    pub fn build(cfg: IndexConfig, items: Vec<(u64, u32)>) -> Result<NearDupIndex, IndexError> {
        if cfg.blocks <= cfg.k || cfg.blocks > 64 {
            return Err(IndexError::Blocks { k: cfg.k, blocks: cfg.blocks });
        }
        let tables = binomial(cfg.blocks as u64, cfg.k as u64);
        if tables > 256 {
            return Err(IndexError::TooManyTables { k: cfg.k, blocks: cfg.blocks, tables });
        }
        if items.len() >= u32::MAX as usize {
            return Err(IndexError::TooManyKeys);
        }
        let levels = if items.is_empty() { Vec::new() } else { vec![Level::build(cfg, items)] };
        Ok(NearDupIndex { cfg, levels, pending: Vec::new() })
    }

    /// Add one key after the build (live use); lookups see it at once.
    pub fn insert(&mut self, key: u64, id: u32) {
        self.pending.push((key, id));
        if self.pending.len() < PENDING_KEYS {
            return;
        }
        let level = Level::build(self.cfg, std::mem::take(&mut self.pending));
        self.levels.push(level);
        while let [.., older, newer] = self.levels.as_slice() {
            if newer.fps.len() < older.fps.len() {
                break;
            }
            let (Some(newer), Some(older)) = (self.levels.pop(), self.levels.pop()) else { break };
            let items: Vec<(u64, u32)> = older.into_items().chain(newer.into_items()).collect();
            self.levels.push(Level::build(self.cfg, items));
        }
    }

    /// Every id whose key is within k of `q`, nearest first (then by id).
    pub fn query(&self, q: u64) -> Vec<NearMatch> {
        let mut found: Vec<u64> = Vec::new();
        let mut out = Vec::new();
        for level in &self.levels {
            level.query(q, self.cfg.k, &mut found, &mut out);
        }
        for &(key, id) in &self.pending {
            let distance = (key ^ q).count_ones();
            if distance <= self.cfg.k {
                out.push(NearMatch { distance, id });
            }
        }
        out.sort_unstable();
        out
    }

    /// Keys indexed (including pending ones).
    pub fn len(&self) -> usize {
        self.levels.iter().map(|l| l.fps.len()).sum::<usize>() + self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of permuted tables (per level): C(blocks, k).
    pub fn tables(&self) -> usize {
        binomial(self.cfg.blocks as u64, self.cfg.k as u64) as usize
    }

    /// Levels with tables (see the module docs).
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    pub fn config(&self) -> IndexConfig {
        self.cfg
    }

    /// Heap bytes held (tables, directories, key → id map, pending list).
    pub fn heap_bytes(&self) -> usize {
        self.levels.iter().map(Level::bytes).sum::<usize>() + self.pending.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64* — deterministic test keys without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn flip(&mut self, x: u64, bits: u32) -> u64 {
            let mut y = x;
            while (y ^ x).count_ones() < bits {
                y ^= 1 << (self.next() % 64);
            }
            y
        }
    }

    fn brute(items: &[(u64, u32)], q: u64, k: u32) -> Vec<NearMatch> {
        let mut v: Vec<NearMatch> = items
            .iter()
            .filter(|(x, _)| (x ^ q).count_ones() <= k)
            .map(|&(x, id)| NearMatch { distance: (x ^ q).count_ones(), id })
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn combinations_and_binomials() {
        assert_eq!(combinations(4, 1), vec![vec![0], vec![1], vec![2], vec![3]]);
        assert_eq!(combinations(4, 2).len(), 6);
        assert_eq!(combinations(5, 2)[9], vec![3, 4]);
        assert_eq!(binomial(4, 3), 4);
        assert_eq!(binomial(6, 3), 20);
        assert_eq!(binomial(10, 0), 1);
    }

    #[test]
    fn permutations_are_bijections_keeping_hamming_distance() {
        let blocks = [(0, 16), (16, 16), (32, 16), (48, 16)];
        let p = Permutation::new(&blocks, &[1]);
        assert_eq!(p.key_bits, 16);
        // Block 1 (bits 16..32) moves to the top 16 bits.
        assert_eq!(p.apply(0x0000_0000_abcd_0000) >> 48, 0xabcd);
        let mut r = Rng(7);
        for _ in 0..1000 {
            let (a, b) = (r.next(), r.next());
            assert_eq!(p.invert(p.apply(a)), a);
            assert_eq!((p.apply(a) ^ p.apply(b)).count_ones(), (a ^ b).count_ones());
        }
        // Uneven blocks (64 = 13 + 13 + 13 + 13 + 12).
        let blocks = [(0, 13), (13, 13), (26, 13), (39, 13), (52, 12)];
        let p = Permutation::new(&blocks, &[4, 2]);
        assert_eq!(p.key_bits, 25);
        for _ in 0..1000 {
            let a = r.next();
            assert_eq!(p.invert(p.apply(a)), a);
        }
    }

    #[test]
    fn matches_brute_force_on_random_and_planted_keys() {
        for (k, blocks) in [(0, 1), (1, 2), (3, 4), (3, 5), (3, 6), (6, 7), (6, 8), (8, 10)] {
            let mut r = Rng(0x1234_5678 + k as u64 * 31 + blocks as u64);
            let mut items: Vec<(u64, u32)> = Vec::new();
            let mut base = Vec::new();
            for i in 0..3000u32 {
                let x = r.next();
                base.push(x);
                items.push((x, i));
            }
            // Planted neighbours at every distance 0..=k+2, and exact duplicates.
            let mut id = 3000;
            for &x in base.iter().take(200) {
                let d = (r.next() % (k as u64 + 3)) as u32;
                items.push((r.flip(x, d), id));
                id += 1;
            }
            items.push((base[0], id));
            let idx = NearDupIndex::build(IndexConfig { k, blocks }, items.clone()).expect("valid config");
            assert_eq!(idx.tables() as u64, binomial(blocks as u64, k as u64));
            for (i, &x) in base.iter().enumerate().take(400) {
                // Queries: indexed keys and perturbed copies of them.
                let q = if i % 2 == 0 { x } else { r.flip(x, (i as u32 / 2) % (k + 2)) };
                assert_eq!(idx.query(q), brute(&items, q, k), "k={k} blocks={blocks} q={q:#x}");
            }
            for _ in 0..200 {
                let q = r.next();
                assert_eq!(idx.query(q), brute(&items, q, k));
            }
        }
    }

    #[test]
    fn inserted_keys_are_found_before_and_after_a_rebuild() {
        let mut r = Rng(99);
        let items: Vec<(u64, u32)> = (0..100).map(|i| (r.next(), i)).collect();
        let mut idx = NearDupIndex::build(IndexConfig::new(3), items.clone()).expect("valid");
        let mut all = items;
        for i in 100..6000u32 {
            let x = if i % 3 == 0 { r.flip(all[(i % 100) as usize].0, 2) } else { r.next() };
            idx.insert(x, i);
            all.push((x, i));
            if i % 500 == 0 {
                assert_eq!(idx.query(x), brute(&all, x, 3));
            }
        }
        assert_eq!(idx.len(), 6000);
        for &(x, _) in all.iter().take(300) {
            assert_eq!(idx.query(x), brute(&all, x, 3));
        }
    }

    #[test]
    fn live_inserts_form_few_levels_and_are_all_found() {
        // From empty, as a scan uses it: 12.5 pending lists' worth of keys.
        let mut r = Rng(4242);
        let mut idx = NearDupIndex::build(IndexConfig::new(3), Vec::new()).expect("valid");
        let mut all: Vec<(u64, u32)> = Vec::new();
        let n = PENDING_KEYS as u32 * 25 / 2;
        for i in 0..n {
            let x = if i % 4 == 0 && i > 0 { r.flip(all[(i / 2) as usize].0, i % 5) } else { r.next() };
            idx.insert(x, i);
            all.push((x, i));
            if i % 1999 == 0 {
                assert_eq!(idx.query(x), brute(&all, x, 3), "after {i} inserts");
            }
            // A binary counter of full pending lists: one level per set bit.
            let full = (i as usize + 1) / PENDING_KEYS;
            assert_eq!(idx.levels(), full.count_ones() as usize, "after {} inserts", i + 1);
        }
        assert_eq!(idx.len(), n as usize);
        assert_eq!(idx.pending.len(), n as usize % PENDING_KEYS);
        for &(x, _) in all.iter().step_by(97) {
            assert_eq!(idx.query(x), brute(&all, x, 3));
        }
        for _ in 0..200 {
            let pick = (r.next() % n as u64) as usize;
            let q = r.flip(all[pick].0, 2);
            assert_eq!(idx.query(q), brute(&all, q, 3));
        }
    }

    #[test]
    fn bad_configs_are_errors() {
        assert!(NearDupIndex::build(IndexConfig { k: 3, blocks: 3 }, vec![]).is_err());
        assert!(NearDupIndex::build(IndexConfig { k: 3, blocks: 65 }, vec![]).is_err());
        assert!(NearDupIndex::build(IndexConfig { k: 10, blocks: 30 }, vec![]).is_err());
        let empty = NearDupIndex::build(IndexConfig::new(3), vec![]).expect("valid");
        assert!(empty.query(42).is_empty());
        assert!(empty.is_empty());
    }
}
