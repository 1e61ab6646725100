//! The origin of text segments, in arrival order and in fixed memory: Abdel-Hamid, Behzadi,
//! Christoph & Henzinger 2009, "Detecting the Origin of Text Segments Efficiently" (WWW'09).
//!
//! Documents arrive in a total order (crawl order; fetch time then URL for a store). For every
//! k-shingle of a document D the *origin* is the earliest document containing it; a shingle
//! whose origin is not D is *copied*, otherwise *new* (§2). Per document this module gives the
//! origin of every selected shingle, the share of copied shingles, the dominant origin (§3.1's
//! 10 % rule) and the novel segments: maximal runs of tokens covered only by new shingles
//! (§2, "Determine all terms in the document that do not belong to a copied shingle"; a token
//! is *fresh* iff none of the selected shingles covering it has another origin, §3.2).
//!
//! The three phases of §2, as the paper:
//! - **Selection** (§2.1): tokens are the words of [`crate::shingles::words`] (maximal runs
//!   of Unicode word characters, lower-cased: the paper's "alphanumeric terms"); k = 8
//!   ([`K`], §3.1). Every token and every shingle is fingerprinted (the paper uses 62-bit
//!   Rabin fingerprints; we use 64-bit FNV-1a + fmix64 hashes masked to 62 bits).
//!   [`Selection::All`] keeps every shingle; [`Selection::Hs`] is Hailstorm (a shingle is
//!   selected iff the minimum token fingerprint of its k tokens is at its first or last
//!   position); [`Selection::Nhs`] is Hailstorm with no complete overlap (a second pass
//!   discards selected shingles all of whose tokens are covered by selected, not-discarded
//!   shingles; see [`no_complete_overlap`]).
//! - **Hashing** (§2.2): a fixed-size table of buckets of 64 shingles ([`BUCKET`]). Per shingle:
//!   its fingerprint, its origin, its offset in the origin (selected shingles before it,
//!   mod 2^8), the first byte of the fingerprints of its preceding and succeeding selected
//!   shingles in the origin, and one byte for eviction. Eviction: [`Eviction::Lru`] (a bucket
//!   is a queue; a hit moves the shingle to its end; the front is evicted) or
//!   [`Eviction::Lucky`] (rules a–e, y = 7, halving at an average of 11; see
//!   [`OriginDetector::process`]). [`Eviction::LuckyAging`] is *ditto's own* policy, not the
//!   paper's: Lucky's scores and rules a–e, plus a halving of a bucket's scores every
//!   [`AGING_PERIOD`] insertions into it, so that scores age even when rule (e) never fires.
//! - **Estimation** (§2.3): [`Estimation::Nb`] (origins of found shingles only), `E`
//!   (expansion), `B` (bridging, T = 30) and [`Estimation::Be`] (bridging with expansion).
//!
//! [`OriginDetector::exact`] keeps every shingle in an unbounded map with All selection and
//! NB estimation: the reference answer of §3.1 ("we first ran our system without shingle
//! selection and with enough memory to hold all shingles").
//!
//! "First byte" of a fingerprint: its lowest-order byte (the bucket index uses the highest
//! bits). Documents are numbered by the caller in arrival order (`u32`); the paper keeps an
//! 8-byte origin fingerprint, we keep the 4-byte arrival number. No I/O here.

use std::collections::HashMap;

use crate::shingles::{fmix64, hash64, words};

/// Tokens per shingle (§3.1: "we only report results for k = 8").
pub const K: usize = 8;
/// Shingles per bucket (§2.2).
pub const BUCKET: usize = 64;
/// Lucky rule (d): every y-th selected shingle, y = 7 (§2.2).
pub const LUCKY_Y: usize = 7;
/// Lucky rule (e): halve a bucket's scores when their average reaches 11 (§2.2).
pub const LUCKY_HALVE_AVG: u32 = 11;
/// Lucky rule (c): bonus of a document's first and last selected shingle (§2.2).
pub const LUCKY_DOC_EDGE: u8 = 3;
/// [`Eviction::LuckyAging`] (ditto's own, not the paper's): halve a bucket's scores every
/// this many insertions into it.
pub const AGING_PERIOD: u16 = 128;
/// Bridging limit T = 30 (§2.3, §3.6).
pub const BRIDGE_T: usize = 30;

const FP_MASK: u64 = (1 << 62) - 1;

/// Shingle selection (§2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    All,
    Hs,
    Nhs,
}

/// Eviction from a full bucket (§2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eviction {
    /// The paper's Lucky eviction (§2.2, rules a–e).
    Lucky,
    /// The paper's baseline: least recently used.
    Lru,
    /// **ditto's own policy, not the paper's**: Lucky (rules a–e, the same scores, the same
    /// victim: the smallest score, ties the oldest) plus aging — every
    /// [`BucketTable::aging_period`] insertions into a bucket ([`AGING_PERIOD`] = 128 by
    /// default, two buckets' worth) its scores are halved, besides rule (e). In the paper's
    /// regime at ≤ 1 % of the exact table rule (e) almost never fires (bucket averages stay
    /// near 5), so Lucky's table fills with old score ≥ 4 entries and a new document's
    /// shingles are the next victims; with aging, an entry left alone loses its protection
    /// after a few periods, while the protected ones (found shingles, copied-block ends,
    /// document edges, every 7th selected shingle) outlive the unprotected ones of the same
    /// age. Measured in BENCHMARKS.md (issue 9, Origins): a little ahead of Lucky and LRU at
    /// ≤ 1 % on the blog-like stream, behind Lucky at 5 % when popular documents are copied
    /// again; not the default.
    LuckyAging,
}

impl Eviction {
    /// Lucky's scores and victim choice (Lucky and LuckyAging).
    pub fn scored(self) -> bool {
        matches!(self, Eviction::Lucky | Eviction::LuckyAging)
    }
}

/// Estimation of the origins of selected shingles not found in the table (§2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimation {
    Nb,
    E,
    B,
    Be,
}

impl Estimation {
    fn expansion(self) -> bool {
        matches!(self, Estimation::E | Estimation::Be)
    }
    fn bridging(self) -> bool {
        matches!(self, Estimation::B | Estimation::Be)
    }
}

/// A configuration of the three phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OriginConfig {
    pub k: usize,
    pub selection: Selection,
    pub eviction: Eviction,
    pub estimation: Estimation,
    /// Longest bridge, in selected shingles (T).
    pub bridge_limit: usize,
}

impl Default for OriginConfig {
    /// The paper's best combination: NHs + Lucky + BE, k = 8, T = 30 (§3.7).
    fn default() -> Self {
        OriginConfig {
            k: K,
            selection: Selection::Nhs,
            eviction: Eviction::Lucky,
            estimation: Estimation::Be,
            bridge_limit: BRIDGE_T,
        }
    }
}

/// Token fingerprints of a text (see the module docs).
pub fn token_fps(text: &str) -> Vec<u64> {
    words(text).map(|w| hash64(w.as_bytes()) & FP_MASK).collect()
}

/// 62-bit fingerprints of the n − k + 1 shingles of a token sequence.
pub fn shingle_fps(tokens: &[u64], k: usize) -> Vec<u64> {
    let k = k.max(1);
    if tokens.len() < k {
        return Vec::new();
    }
    tokens
        .windows(k)
        .map(|w| {
            let mut h: u64 = 0x2545_f491_4f6c_dd1d;
            for &t in w {
                h = fmix64(h.rotate_left(29) ^ t);
            }
            h & FP_MASK
        })
        .collect()
}

/// Hailstorm (§2.1): the start positions of the shingles whose minimum token fingerprint is
/// at their first or last position ("and potentially also in-between").
pub fn hailstorm(tokens: &[u64], k: usize) -> Vec<usize> {
    let k = k.max(1);
    if tokens.len() < k {
        return Vec::new();
    }
    (0..=tokens.len() - k)
        .filter(|&i| {
            let w = &tokens[i..i + k];
            let min = w.iter().copied().min().unwrap_or(0);
            w[0] == min || w[k - 1] == min
        })
        .collect()
}

/// The "no complete overlap" pass (§2.1): over the selected shingles (start positions,
/// increasing) in order, discard a shingle when all its k tokens are covered by other
/// selected shingles that are not discarded — the ones kept before it and the ones after
/// it not yet examined. Every token covered by the selection stays covered.
pub fn no_complete_overlap(selected: &[usize], k: usize, n_tokens: usize) -> Vec<usize> {
    let k = k.max(1);
    let mut cover = vec![0u32; n_tokens];
    for &s in selected {
        for c in cover.iter_mut().skip(s).take(k) {
            *c += 1;
        }
    }
    let mut kept = Vec::with_capacity(selected.len());
    for &s in selected {
        let end = (s + k).min(n_tokens);
        if cover[s..end].iter().all(|&c| c >= 2) {
            for c in &mut cover[s..end] {
                *c -= 1;
            }
        } else {
            kept.push(s);
        }
    }
    kept
}

/// The selected shingles' start positions for `sel`.
pub fn select(sel: Selection, tokens: &[u64], k: usize) -> Vec<usize> {
    let n_sh = if tokens.len() >= k.max(1) { tokens.len() - k.max(1) + 1 } else { 0 };
    match sel {
        Selection::All => (0..n_sh).collect(),
        Selection::Hs => hailstorm(tokens, k),
        Selection::Nhs => no_complete_overlap(&hailstorm(tokens, k), k, tokens.len()),
    }
}

/// What the table keeps per shingle (§2.2 items 1–5): 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Entry {
    pub fp: u64,
    pub origin: u32,
    /// Offset in the origin (selected shingles before it), mod 2^8.
    pub offset: u8,
    /// First byte of the preceding selected shingle in the origin.
    pub prev: u8,
    /// First byte of the succeeding selected shingle in the origin.
    pub next: u8,
    /// Lucky score (unused by LRU, whose order is the bucket's).
    pub score: u8,
}

/// Bytes of one table entry.
pub const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

fn first_byte(fp: u64) -> u8 {
    (fp & 0xff) as u8
}

/// The fixed-size bucketed table (§2.2): `n_buckets` buckets of [`BUCKET`] entries, flat.
#[derive(Debug, Clone)]
pub struct BucketTable {
    entries: Vec<Entry>,
    lens: Vec<u8>,
    eviction: Eviction,
    /// LuckyAging: insertions into each bucket since its last aging halving.
    inserts: Vec<u16>,
    /// LuckyAging: halve a bucket's scores every this many insertions into it (≥ 1).
    aging_period: u16,
    pub evictions: u64,
    /// Times Lucky rule (e) halved a bucket's scores.
    pub halvings: u64,
    /// Times LuckyAging's period halved a bucket's scores.
    pub aging_halvings: u64,
}

impl BucketTable {
    /// A table of `n_buckets` (at least 1) buckets.
    pub fn new(n_buckets: usize, eviction: Eviction) -> Self {
        let n = n_buckets.max(1);
        BucketTable {
            entries: vec![Entry::default(); n * BUCKET],
            lens: vec![0; n],
            eviction,
            inserts: if eviction == Eviction::LuckyAging { vec![0; n] } else { Vec::new() },
            aging_period: AGING_PERIOD,
            evictions: 0,
            halvings: 0,
            aging_halvings: 0,
        }
    }

    /// LuckyAging: halve a bucket's scores every `period` (at least 1) insertions into it.
    pub fn with_aging_period(mut self, period: u16) -> Self {
        self.aging_period = period.max(1);
        self
    }

    /// LuckyAging's period (insertions into a bucket per halving).
    pub fn aging_period(&self) -> u16 {
        self.aging_period
    }

    /// The table that fits `bytes` of entries (at least one bucket).
    pub fn with_memory(bytes: u64, eviction: Eviction) -> Self {
        Self::new((bytes / (BUCKET * ENTRY_BYTES) as u64) as usize, eviction)
    }

    pub fn buckets(&self) -> usize {
        self.lens.len()
    }

    /// Entries the table can hold.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Bytes of entries.
    pub fn memory_bytes(&self) -> u64 {
        (self.entries.len() * ENTRY_BYTES) as u64
    }

    pub fn len(&self) -> usize {
        self.lens.iter().map(|&l| l as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn bucket_of(&self, fp: u64) -> usize {
        // The highest bits of the 62-bit fingerprint, scaled to the bucket count.
        ((fp as u128 * self.lens.len() as u128) >> 62) as usize
    }

    /// The entries of `fp`'s bucket, in bucket order (LRU: front = least recently used).
    pub fn bucket(&self, fp: u64) -> &[Entry] {
        let b = self.bucket_of(fp);
        &self.entries[b * BUCKET..b * BUCKET + self.lens[b] as usize]
    }

    /// Find `fp`; LRU moves a found entry to the back of its queue.
    pub fn lookup(&mut self, fp: u64) -> Option<Entry> {
        let b = self.bucket_of(fp);
        let len = self.lens[b] as usize;
        let slice = &mut self.entries[b * BUCKET..b * BUCKET + len];
        let i = slice.iter().position(|e| e.fp == fp)?;
        let e = slice[i];
        if self.eviction == Eviction::Lru {
            slice.copy_within(i + 1.., i);
            slice[len - 1] = e;
        }
        Some(e)
    }

    /// Insert an entry not in the table, evicting one when the bucket is full: LRU the
    /// front, Lucky and LuckyAging the smallest score (ties: the earliest in the bucket).
    /// LuckyAging then counts the insertion and halves the bucket's scores every
    /// `aging_period` insertions.
    pub fn insert(&mut self, e: Entry) {
        let b = self.bucket_of(e.fp);
        let len = self.lens[b] as usize;
        let slice = &mut self.entries[b * BUCKET..(b + 1) * BUCKET];
        if len == BUCKET {
            let victim = match self.eviction {
                Eviction::Lru => 0,
                Eviction::Lucky | Eviction::LuckyAging => {
                    let mut v = 0;
                    for (i, x) in slice.iter().enumerate() {
                        if x.score < slice[v].score {
                            v = i;
                        }
                    }
                    v
                }
            };
            slice.copy_within(victim + 1.., victim);
            slice[BUCKET - 1] = e;
            self.evictions += 1;
        } else {
            slice[len] = e;
            self.lens[b] += 1;
        }
        if self.eviction == Eviction::LuckyAging {
            self.inserts[b] += 1;
            if self.inserts[b] >= self.aging_period {
                self.inserts[b] = 0;
                let len = self.lens[b] as usize;
                for x in &mut self.entries[b * BUCKET..b * BUCKET + len] {
                    x.score /= 2;
                }
                self.aging_halvings += 1;
            }
        }
        if self.eviction.scored() {
            self.maybe_halve(b);
        }
    }

    /// Add `by` to the lucky score of `fp` if it is in the table (saturating at 255), then
    /// rule (e).
    pub fn bump(&mut self, fp: u64, by: u8) {
        let b = self.bucket_of(fp);
        let len = self.lens[b] as usize;
        if let Some(e) = self.entries[b * BUCKET..b * BUCKET + len].iter_mut().find(|e| e.fp == fp) {
            e.score = e.score.saturating_add(by);
            self.maybe_halve(b);
        }
    }

    /// Lucky rule (e): "Whenever the average lucky score of all shingles in a bucket reaches
    /// some fixed limit, we divide all the lucky score fields by 2" (limit 11).
    fn maybe_halve(&mut self, b: usize) {
        let len = self.lens[b] as usize;
        let slice = &mut self.entries[b * BUCKET..b * BUCKET + len];
        let sum: u32 = slice.iter().map(|e| e.score as u32).sum();
        if len > 0 && sum >= LUCKY_HALVE_AVG * len as u32 {
            for e in slice {
                e.score /= 2;
            }
            self.halvings += 1;
        }
    }
}

/// The table behind a detector: fixed-size, or exact (every shingle, unbounded).
#[derive(Debug, Clone)]
enum Table {
    Fixed(BucketTable),
    Exact(HashMap<u64, Entry>),
}

/// The result for one document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PageOrigins {
    /// Arrival number of the document.
    pub doc: u32,
    pub tokens: usize,
    /// All shingles (n − k + 1).
    pub shingles: usize,
    /// Selected shingles: start positions and estimated origins.
    pub selected: Vec<usize>,
    pub origins: Vec<u32>,
    /// Selected shingles found in the table with another origin.
    pub found: usize,
    /// Selected shingles whose (estimated) origin is another document.
    pub copied: usize,
    /// §3.1: the origin of more than ... (see [`dominant_origin`]); `doc` itself when the
    /// document is mostly its own.
    pub dominant: Option<u32>,
    /// Per token: fresh (covered by no selected shingle of another origin).
    pub fresh: Vec<bool>,
}

impl PageOrigins {
    /// Share of selected shingles with another origin (0 without shingles).
    pub fn copied_share(&self) -> f64 {
        if self.origins.is_empty() {
            0.0
        } else {
            self.copied as f64 / self.origins.len() as f64
        }
    }

    /// Novel segments: maximal runs `[start, end)` of fresh tokens.
    pub fn novel_segments(&self) -> Vec<(usize, usize)> {
        runs(&self.fresh)
    }
}

/// Maximal runs `[start, end)` of `true`.
pub fn runs(flags: &[bool]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &f) in flags.iter().enumerate() {
        match (f, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, flags.len()));
    }
    out
}

/// §3.1: "the most copied origin is a document D' that is the origin for the largest number of
/// shingles in D. If the number of shingles in D with most copied origin D' is 10% larger
/// than the number of shingles for any other individual origin, then we call D' the dominant
/// origin." Origins include D itself (its new shingles). "10 % larger" is read as
/// `count ≥ 1.1 × second` (integers: 10·count ≥ 11·second), with count > 0.
pub fn dominant_origin(origins: &[u32]) -> Option<u32> {
    let mut counts: HashMap<u32, u64> = HashMap::new();
    for &o in origins {
        *counts.entry(o).or_default() += 1;
    }
    let mut best: Option<(u64, u32)> = None;
    let mut second = 0u64;
    for (&o, &n) in &counts {
        match best {
            Some((bn, _)) if n <= bn => second = second.max(n),
            Some((bn, _)) => {
                second = second.max(bn);
                best = Some((n, o));
            }
            None => best = Some((n, o)),
        }
    }
    let (n, o) = best?;
    (n > 0 && 10 * n >= 11 * second).then_some(o)
}

/// What the table answered for one selected shingle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    pub origin: u32,
    pub offset: u8,
    pub prev: u8,
    pub next: u8,
}

/// §2.3: the origin of every selected shingle of document `doc`, from the table's answers
/// `hits` (index = offset in D) and the first bytes of D's selected fingerprints `bytes`.
///
/// Only shingles *not found* in the table are guessed ("The other three estimation
/// algorithms use additional information retrieved from the hash table to guess the origin
/// of selected shingles that were not found in the hash table"); a shingle found with
/// origin D (repeated inside D) counts as found.
/// - Expansion (E): for a shingle s found with another origin, its immediate predecessor
///   (successor) in D takes s's origin when not found itself and its first byte equals the
///   stored preceding (succeeding) byte of s.
/// - Bridging (B): s before s' (a), same stored origin (b), equal offset differences in D
///   and in the origin (mod 2^8), below T (c), and no shingle between them meets (a)–(c)
///   with s (d): every shingle between takes the origin. Found in linear time by keying
///   found shingles on (origin, stored offset − offset in D mod 2^8): for s' the bridge
///   start is the most recent found shingle with its key (any later one with the same key
///   would violate (d)).
/// - BE: bridging only when also (e) the byte of the shingle after s in D matches s's
///   stored succeeding byte and (f) the byte of the shingle before s' matches s''s stored
///   preceding byte; plus expansion.
pub fn estimate(doc: u32, hits: &[Option<Hit>], bytes: &[u8], est: Estimation, t: usize) -> Vec<u32> {
    let n = hits.len();
    let copied_hit = |i: usize| hits[i].filter(|h| h.origin != doc);
    let mut origin: Vec<u32> = (0..n).map(|i| copied_hit(i).map_or(doc, |h| h.origin)).collect();
    if est.bridging() {
        let mut last: HashMap<(u32, u8), usize> = HashMap::new();
        for j in 0..n {
            let Some(hj) = copied_hit(j) else { continue };
            let key = (hj.origin, hj.offset.wrapping_sub(j as u8));
            if let Some(&i) = last.get(&key) {
                let ok = j - i < t
                    && (est != Estimation::Be || {
                        let hi = hits[i].map_or(0, |h| h.next);
                        bytes[i + 1] == hi && bytes[j - 1] == hj.prev
                    });
                if ok {
                    for (x, o) in origin.iter_mut().enumerate().take(j).skip(i + 1) {
                        if hits[x].is_none() {
                            *o = hj.origin;
                        }
                    }
                }
            }
            last.insert(key, j);
        }
    }
    if est.expansion() {
        for i in 0..n {
            let Some(h) = copied_hit(i) else { continue };
            if i > 0 && hits[i - 1].is_none() && bytes[i - 1] == h.prev && origin[i - 1] == doc {
                origin[i - 1] = h.origin;
            }
            if i + 1 < n && hits[i + 1].is_none() && bytes[i + 1] == h.next && origin[i + 1] == doc {
                origin[i + 1] = h.origin;
            }
        }
    }
    origin
}

/// Lucky rules (b)–(d) (§2.2) for the selected shingles of a document: `origins` are their
/// estimated origins, `selected` their start positions among the document's `n_shingles`
/// shingles. The extra score of each (rule (a) is applied by the caller).
/// - (b) "the first and the last shingle of a copied block" (a maximal sub-sequence of
///   selected shingles copied from the same origin ≠ D) of b shingles: +⌊√(b − 2)⌋ (0 when
///   b < 3);
/// - (c) "If a shingle is the first or the last shingle of its document": +3, for the
///   document's first shingle (start 0) and its last (start n − k) when they are selected —
///   the paper says "shingle", not "selected shingle" as in (d); under Hailstorm the first
///   shingle is selected only when its minimum token is at one of its ends (≈ 2/k);
/// - (d) "every y-th selected shingle in D" (offsets 0, y, 2y, …, as "Every l-th" in §2.1): +1.
pub fn lucky_bonus(doc: u32, origins: &[u32], selected: &[usize], n_shingles: usize) -> Vec<u8> {
    let n = origins.len();
    let mut bonus = vec![0u8; n];
    let mut i = 0;
    while i < n {
        let o = origins[i];
        let mut j = i;
        while j + 1 < n && origins[j + 1] == o {
            j += 1;
        }
        if o != doc {
            let b = j - i + 1;
            if b >= 3 {
                let add = (b - 2).isqrt().min(255) as u8;
                bonus[i] = bonus[i].saturating_add(add);
                bonus[j] = bonus[j].saturating_add(add);
            }
        }
        i = j + 1;
    }
    let edge = |x: usize| selected.get(x).is_some_and(|&s| s == 0 || s + 1 == n_shingles);
    for (x, b) in bonus.iter_mut().enumerate() {
        if edge(x) {
            *b = b.saturating_add(LUCKY_DOC_EDGE);
        }
        if x % LUCKY_Y == 0 {
            *b = b.saturating_add(1);
        }
    }
    bonus
}

/// Origin detection over a stream of documents (see the module docs).
#[derive(Debug, Clone)]
pub struct OriginDetector {
    cfg: OriginConfig,
    table: Table,
    /// Documents processed, shingles selected and found (for reports).
    pub docs: u64,
    pub selected_total: u64,
    pub shingles_total: u64,
}

impl OriginDetector {
    /// A fixed-memory detector whose table holds `memory_bytes` of entries.
    pub fn new(cfg: OriginConfig, memory_bytes: u64) -> Self {
        Self::with_table(cfg, BucketTable::with_memory(memory_bytes, cfg.eviction))
    }

    /// A detector over a given table.
    pub fn with_table(cfg: OriginConfig, table: BucketTable) -> Self {
        OriginDetector { cfg, table: Table::Fixed(table), docs: 0, selected_total: 0, shingles_total: 0 }
    }

    /// The §3.1 reference: All selection, every shingle kept, NB estimation.
    pub fn exact(k: usize) -> Self {
        let cfg = OriginConfig {
            k,
            selection: Selection::All,
            eviction: Eviction::Lru,
            estimation: Estimation::Nb,
            bridge_limit: BRIDGE_T,
        };
        OriginDetector {
            cfg,
            table: Table::Exact(HashMap::new()),
            docs: 0,
            selected_total: 0,
            shingles_total: 0,
        }
    }

    pub fn config(&self) -> &OriginConfig {
        &self.cfg
    }

    /// Shingles in the table.
    pub fn stored(&self) -> usize {
        match &self.table {
            Table::Fixed(t) => t.len(),
            Table::Exact(m) => m.len(),
        }
    }

    /// Bytes of the table's entries (exact: what a bucketed table holding every stored
    /// shingle would take, `stored × ENTRY_BYTES`).
    pub fn memory_bytes(&self) -> u64 {
        match &self.table {
            Table::Fixed(t) => t.memory_bytes(),
            Table::Exact(m) => (m.len() * ENTRY_BYTES) as u64,
        }
    }

    /// Evictions so far (0 for the exact table).
    pub fn evictions(&self) -> u64 {
        match &self.table {
            Table::Fixed(t) => t.evictions,
            Table::Exact(_) => 0,
        }
    }

    /// The entries in the table (bucket by bucket; any order for the exact table).
    pub fn entries(&self) -> impl Iterator<Item = &Entry> + '_ {
        let (fixed, exact) = match &self.table {
            Table::Fixed(t) => (Some(t), None),
            Table::Exact(m) => (None, Some(m)),
        };
        let fixed = fixed.into_iter().flat_map(|t| {
            t.lens
                .iter()
                .enumerate()
                .flat_map(move |(b, &len)| t.entries[b * BUCKET..b * BUCKET + len as usize].iter())
        });
        fixed.chain(exact.into_iter().flat_map(|m| m.values()))
    }

    /// LuckyAging's periodic halvings so far (0 for the other policies).
    pub fn aging_halvings(&self) -> u64 {
        match &self.table {
            Table::Fixed(t) => t.aging_halvings,
            Table::Exact(_) => 0,
        }
    }

    /// Lucky rule (e) halvings so far, and the table's score histogram (score → entries).
    pub fn lucky_stats(&self) -> (u64, [u64; 256]) {
        let mut hist = [0u64; 256];
        match &self.table {
            Table::Fixed(t) => {
                for (b, &len) in t.lens.iter().enumerate() {
                    for e in &t.entries[b * BUCKET..b * BUCKET + len as usize] {
                        hist[e.score as usize] += 1;
                    }
                }
                (t.halvings, hist)
            }
            Table::Exact(_) => (0, hist),
        }
    }

    /// Process the next document (arrival number `doc`, increasing) given its text: query
    /// the table (origins of its selected shingles, estimated), then leave its shingles in
    /// the table for later documents.
    ///
    /// Lucky eviction (§2.2), "We first hash all selected shingles of a document D to the
    /// hash table ... determine all maximal sub-sequences of selected shingles of D that have
    /// been copied from the same origin ... We then update the lucky score of the selected
    /// shingles of D that are in the hash table or are inserted into it": (a) a new shingle
    /// starts at 1, a found one gets +1; (b)–(d) see [`lucky_bonus`]; (e) see
    /// [`BucketTable::bump`].
    pub fn process(&mut self, doc: u32, text: &str) -> PageOrigins {
        let tokens = token_fps(text);
        self.process_tokens(doc, &tokens)
    }

    /// [`Self::process`] on token fingerprints ([`token_fps`]).
    pub fn process_tokens(&mut self, doc: u32, tokens: &[u64]) -> PageOrigins {
        let k = self.cfg.k.max(1);
        let sfp = shingle_fps(tokens, k);
        let sel = select(self.cfg.selection, tokens, k);
        let fps: Vec<u64> = sel.iter().map(|&s| sfp[s]).collect();
        let bytes: Vec<u8> = fps.iter().map(|&f| first_byte(f)).collect();
        let n = fps.len();
        let mut hits: Vec<Option<Hit>> = Vec::with_capacity(n);
        for (i, &fp) in fps.iter().enumerate() {
            let entry = Entry {
                fp,
                origin: doc,
                offset: i as u8,
                prev: if i > 0 { bytes[i - 1] } else { 0 },
                next: if i + 1 < n { bytes[i + 1] } else { 0 },
                score: 1,
            };
            let found = match &mut self.table {
                Table::Fixed(t) => {
                    let f = t.lookup(fp);
                    if f.is_none() {
                        t.insert(entry);
                    }
                    f
                }
                Table::Exact(m) => match m.get(&fp) {
                    Some(e) => Some(*e),
                    None => {
                        m.insert(fp, entry);
                        None
                    }
                },
            };
            hits.push(found.map(|e| Hit { origin: e.origin, offset: e.offset, prev: e.prev, next: e.next }));
        }
        let origins = estimate(doc, &hits, &bytes, self.cfg.estimation, self.cfg.bridge_limit);
        if let Table::Fixed(t) = &mut self.table {
            if self.cfg.eviction.scored() {
                let bonus = lucky_bonus(doc, &origins, &sel, sfp.len());
                for i in 0..n {
                    let a = u8::from(hits[i].is_some()); // rule (a): +1 for a found shingle
                    let by = a.saturating_add(bonus[i]);
                    if by > 0 {
                        t.bump(fps[i], by);
                    }
                }
            }
        }
        let mut fresh = vec![true; tokens.len()];
        for (i, &o) in origins.iter().enumerate() {
            if o != doc {
                for f in fresh.iter_mut().skip(sel[i]).take(k) {
                    *f = false;
                }
            }
        }
        self.docs += 1;
        self.selected_total += n as u64;
        self.shingles_total += sfp.len() as u64;
        PageOrigins {
            doc,
            tokens: tokens.len(),
            shingles: sfp.len(),
            found: hits.iter().filter(|h| h.is_some_and(|h| h.origin != doc)).count(),
            copied: origins.iter().filter(|&&o| o != doc).count(),
            dominant: dominant_origin(&origins),
            selected: sel,
            origins,
            fresh,
        }
    }
}

/// The evaluation metrics of Abdel-Hamid et al. §3.2 for a run scored against the exact
/// run (every shingle kept, unbounded table) over the same documents in the same order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OriginScores {
    /// DO: of the documents with a dominant origin in the exact run, the share whose
    /// dominant origin the scored run names too.
    pub dominant_accuracy: f64,
    /// Of the tokens the scored run calls fresh, the share the exact run calls fresh.
    pub novel_precision: f64,
    /// Of the tokens the exact run calls fresh, the share the scored run calls fresh.
    pub novel_recall: f64,
    /// TF: the share of all tokens labeled fresh or old as the exact run labels them.
    pub token_freshness: f64,
    /// Selected shingles that the exact run says were copied (origin another document),
    /// given the exact origin / the document itself (missed) / another document (e.g. an
    /// intermediate copy that re-inserted them).
    pub copied_right: u64,
    pub copied_missed: u64,
    pub copied_other: u64,
}

/// Score `got` against `exact` (pairs by index; documents must be the same). The exact run
/// selects every shingle, so its origins are indexed by shingle position; a position
/// outside it is skipped.
pub fn score_against_exact(exact: &[PageOrigins], got: &[PageOrigins]) -> OriginScores {
    let (mut dom, mut dom_ok) = (0u64, 0u64);
    let (mut tp, mut pred, mut truth, mut agree, mut tokens) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut s = OriginScores::default();
    for (e, g) in exact.iter().zip(got) {
        if let Some(d) = e.dominant {
            dom += 1;
            dom_ok += u64::from(g.dominant == Some(d));
        }
        for (a, b) in e.fresh.iter().zip(&g.fresh) {
            tp += u64::from(*a && *b);
            pred += u64::from(*b);
            truth += u64::from(*a);
            agree += u64::from(a == b);
            tokens += 1;
        }
        for (&pos, &o) in g.selected.iter().zip(&g.origins) {
            match e.origins.get(pos) {
                Some(&eo) if eo != e.doc => match o {
                    o if o == eo => s.copied_right += 1,
                    o if o == g.doc => s.copied_missed += 1,
                    _ => s.copied_other += 1,
                },
                _ => {}
            }
        }
    }
    let ratio = |a: u64, b: u64| a as f64 / b.max(1) as f64;
    s.dominant_accuracy = ratio(dom_ok, dom);
    s.novel_precision = ratio(tp, pred);
    s.novel_recall = ratio(tp, truth);
    s.token_freshness = ratio(agree, tokens);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_against_exact_by_hand() {
        let page = |doc: u32, dominant: Option<u32>, fresh: &[bool], selected: &[usize], origins: &[u32]| {
            PageOrigins {
                doc,
                dominant,
                fresh: fresh.to_vec(),
                selected: selected.to_vec(),
                origins: origins.to_vec(),
                ..Default::default()
            }
        };
        // Exact: doc 1 copies shingles 0 and 1 from doc 0; doc 2 is its own.
        let exact = [
            page(1, Some(0), &[false, false, true, true], &[0, 1, 2], &[0, 0, 1]),
            page(2, Some(2), &[true, true], &[0], &[2]),
        ];
        // Scored: shingle 0 right, shingle 1 missed (own), doc 2 given another origin.
        let got = [
            page(1, Some(1), &[false, true, true, true], &[0, 1], &[0, 1]),
            page(2, Some(7), &[true, false], &[0], &[7]),
        ];
        let s = score_against_exact(&exact, &got);
        assert_eq!(s.dominant_accuracy, 0.0);
        // Fresh: exact [F F T T | T T], got [F T T T | T F]: tp 3, pred 4, truth 4, agree 4 of 6.
        assert_eq!((s.novel_precision, s.novel_recall), (0.75, 0.75));
        assert!((s.token_freshness - 4.0 / 6.0).abs() < 1e-12);
        assert_eq!((s.copied_right, s.copied_missed, s.copied_other), (1, 1, 0));
        let same = score_against_exact(&exact, &exact);
        assert_eq!((same.dominant_accuracy, same.novel_precision, same.token_freshness), (1.0, 1.0, 1.0));
    }

    #[test]
    fn hailstorm_selects_shingles_with_the_minimum_at_an_end() {
        // k = 3 over token fingerprints 5 1 4 2 6 3 7:
        // [5 1 4] min 1 middle → no; [1 4 2] min 1 first → yes; [4 2 6] min 2 middle → no;
        // [2 6 3] min 2 first → yes; [6 3 7] min 3 middle → no.
        let t = [5u64, 1, 4, 2, 6, 3, 7];
        assert_eq!(hailstorm(&t, 3), vec![1, 3]);
        // Lemma 1: every token except the first/last k − 1 is covered.
        let t2 = [9u64, 8, 7, 6, 5, 4, 3, 2, 1];
        let s = hailstorm(&t2, 3); // decreasing: the min is always last
        assert_eq!(s, vec![0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn no_complete_overlap_drops_shingles_covered_by_kept_and_later_ones() {
        // Decreasing tokens, k = 3: Hs selects 0..=6 (all shingles of 9 tokens).
        // Pass: 0 covers t0 alone → kept. 1: t1 (0,1,2?) t1 ← {0,1}, t2 ← {0,1,2}, t3 ← {1,2,3}
        // all ≥ 2 → dropped. 2: t2 {0,2} t3 {2,3} t4 {2,3,4} → dropped. 3: t3 {3} (1 and 2
        // gone, 0 ends at t2) → kept. 4, 5 dropped the same way; 6: t8 only 6 → kept.
        let t = [9u64, 8, 7, 6, 5, 4, 3, 2, 1];
        let all = hailstorm(&t, 3);
        assert_eq!(no_complete_overlap(&all, 3, 9), vec![0, 3, 6]);
        assert_eq!(select(Selection::Nhs, &t, 3), vec![0, 3, 6]);
        assert_eq!(select(Selection::All, &t, 3).len(), 7);
        // Overlap that leaves a gap keeps both: 0 and 2 with k = 3 over 5 tokens.
        assert_eq!(no_complete_overlap(&[0, 2], 3, 5), vec![0, 2]);
    }

    #[test]
    fn dominant_origin_needs_ten_percent_more_than_any_other() {
        assert_eq!(
            dominant_origin(&[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]),
            Some(1)
        ); // 11 vs 10
        assert_eq!(dominant_origin(&[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]), None); // tie
        assert_eq!(dominant_origin(&[7, 7, 3]), Some(7));
        assert_eq!(dominant_origin(&[]), None);
    }

    fn e(fp: u64, score: u8) -> Entry {
        Entry { fp, score, ..Entry::default() }
    }

    #[test]
    fn lucky_eviction_takes_the_smallest_score_and_halves_at_average_11() {
        let mut t = BucketTable::new(1, Eviction::Lucky);
        for i in 0..BUCKET as u64 {
            t.insert(e(i + 1, 5));
        }
        // Rule (e) has not fired: average 5.
        assert!(t.bucket(1).iter().all(|x| x.score == 5));
        t.bump(10, 255); // saturates at 255 (average ≈ 8.9 < 11)
        t.bump(20, 0);
        t.insert(e(100, 1)); // evicts entry 1 (first of the smallest score 5)
        assert!(t.lookup(1).is_none());
        assert_eq!(t.evictions, 1);
        // The newest (score 1) is now the smallest: it goes next.
        t.insert(e(101, 1));
        assert!(t.lookup(100).is_none() && t.lookup(101).is_some());
        // Push the average to 11: sum now 62·5 + 255 + 1 = 566 over 64 (8.8); +138 → 704 = 11·64.
        t.bump(30, 138);
        let scores: Vec<u8> = t.bucket(1).iter().map(|x| x.score).collect();
        assert!(scores.iter().all(|&s| s <= 127), "halved: {scores:?}");
        assert!(scores.contains(&2) && scores.contains(&0), "5 → 2, 1 → 0: {scores:?}");
    }

    #[test]
    fn lucky_aging_halves_every_period_insertions_so_old_protected_entries_go() {
        // ditto's own policy: Lucky's victim (smallest score, ties the oldest) plus a halving
        // of the bucket's scores every `aging_period` insertions into it.
        let mut t = BucketTable::new(1, Eviction::LuckyAging).with_aging_period(BUCKET as u16);
        // 64 old entries of score 4 (found shingles, block ends, document edges under Lucky).
        for i in 0..BUCKET as u64 {
            t.insert(e(i + 1, 4));
        }
        // The 64th insertion completed a period: 4 → 2 (rule (e) would not fire: average 4).
        assert!(t.bucket(1).iter().all(|x| x.score == 2));
        assert_eq!((t.aging_halvings, t.halvings), (1, 0));
        // As under Lucky: a newcomer evicts the oldest of the smallest score (entry 1), the
        // next newcomer evicts it (score 1 < 2).
        t.insert(e(100, 1));
        assert!(t.lookup(1).is_none());
        t.insert(e(101, 1));
        assert!(t.lookup(100).is_none() && t.lookup(101).is_some() && t.lookup(2).is_some());
        // Entry 5 is found again (+1: 3). 62 more newcomers, each evicting the previous one;
        // the 64th insertion of the period halves: 2 → 1, 3 → 1, the newest 1 → 0.
        t.bump(5, 1);
        for i in 0..62u64 {
            t.insert(e(200 + i, 1));
        }
        assert_eq!(t.aging_halvings, 2);
        let score = |t: &BucketTable, fp: u64| t.bucket(1).iter().find(|x| x.fp == fp).map(|x| x.score);
        assert_eq!((score(&t, 261), score(&t, 5), score(&t, 2)), (Some(0), Some(1), Some(1)));
        // The newest (0) goes first; then every score is 1 and the oldest goes: entry 2,
        // then 3, …: aging ended the old entries' protection, found ones included.
        t.insert(e(300, 1));
        assert!(t.lookup(261).is_none());
        t.insert(e(301, 1));
        assert!(t.lookup(2).is_none() && t.lookup(3).is_some() && t.lookup(300).is_some());
        for i in 0..3u64 {
            t.insert(e(400 + i, 1));
        }
        assert!(t.lookup(5).is_none() && t.lookup(6).is_some());

        // The same kind of sequence under the paper's Lucky and under LuckyAging with its
        // default period (128): 64 score-4 entries, then 400 newcomers of score 1. Lucky keeps
        // 63 of the old entries (rule (e) never fires at an average of 4) and cycles the
        // newcomers through one slot; LuckyAging halves at insertions 128, 256, 384 (4 → 2 →
        // 1: from the second halving on, every newcomer evicts the oldest old entry) and has
        // evicted every old entry by then.
        assert_eq!(AGING_PERIOD, 128);
        for (ev, old_left) in [(Eviction::Lucky, 63), (Eviction::LuckyAging, 0)] {
            let mut t = BucketTable::new(1, ev);
            for i in 0..BUCKET as u64 {
                t.insert(e(i + 1, 4));
            }
            for i in 0..400u64 {
                t.insert(e(1000 + i, 1));
            }
            let old = t.bucket(1).iter().filter(|x| x.fp <= BUCKET as u64).count();
            assert_eq!(old, old_left, "{ev:?}");
        }
    }

    #[test]
    fn lru_eviction_takes_the_least_recently_found() {
        let mut t = BucketTable::new(1, Eviction::Lru);
        for i in 0..BUCKET as u64 {
            t.insert(e(i + 1, 0));
        }
        assert!(t.lookup(1).is_some()); // 1 moves to the back; 2 is now the front
        t.insert(e(500, 0));
        assert!(t.lookup(2).is_none());
        assert!(t.lookup(1).is_some());
    }

    #[test]
    fn lucky_bonus_rules_b_c_d() {
        // doc 9, 10 selected shingles at starts 0..=9 of 10 shingles; a copied block from 4
        // at 2..=7 (b = 6 → +⌊√4⌋ = 2).
        let o = [9, 9, 4, 4, 4, 4, 4, 4, 9, 9];
        let all: Vec<usize> = (0..10).collect();
        let b = lucky_bonus(9, &o, &all, 10);
        // (c) 0 and 9: +3; (d) 0 and 7: +1; (b) 2 and 7: +2.
        assert_eq!(b, vec![4, 0, 2, 0, 0, 0, 0, 3, 0, 3]);
        // A block of 3 gets +⌊√1⌋ = 1 at both ends; of 2: nothing.
        let s8: Vec<usize> = (0..8).collect();
        assert_eq!(lucky_bonus(9, &[9, 4, 4, 4, 5, 5, 9, 9], &s8, 8), vec![4, 1, 0, 1, 0, 0, 0, 4]);
        // (c) is for the document's first and last shingle: when the selection skipped them
        // (first selected starts at 2, last at 40 of 50 shingles), no +3.
        assert_eq!(lucky_bonus(9, &[9, 9, 9], &[2, 20, 40], 50), vec![1, 0, 0]);
        assert_eq!(lucky_bonus(9, &[9, 9, 9], &[0, 20, 49], 50), vec![4, 0, 3]);
    }

    fn hit(origin: u32, offset: u8, prev: u8, next: u8) -> Option<Hit> {
        Some(Hit { origin, offset, prev, next })
    }

    #[test]
    fn bridging_labels_the_shingles_between_two_aligned_hits() {
        // Paper Figure 1: D = doc 9 copies from A = doc 1; found: D[1] as A[5], D[5] as A[9].
        let bytes = [10u8, 11, 12, 13, 14, 15, 16, 17];
        let mut hits = vec![None; 8];
        hits[1] = hit(1, 5, 10, 12);
        hits[5] = hit(1, 9, 14, 16);
        let nb = estimate(9, &hits, &bytes, Estimation::Nb, 30);
        assert_eq!(nb, vec![9, 1, 9, 9, 9, 1, 9, 9]);
        let b = estimate(9, &hits, &bytes, Estimation::B, 30);
        assert_eq!(b, vec![9, 1, 1, 1, 1, 1, 9, 9]);
        // Expansion: neighbors whose bytes match the stored ones (all do here).
        let ex = estimate(9, &hits, &bytes, Estimation::E, 30);
        assert_eq!(ex, vec![1, 1, 1, 9, 1, 1, 1, 9]);
        let be = estimate(9, &hits, &bytes, Estimation::Be, 30);
        assert_eq!(be, vec![1, 1, 1, 1, 1, 1, 1, 9]);
        // T: offsets 4 apart do not bridge when T = 4 (difference must be < T).
        assert_eq!(estimate(9, &hits, &bytes, Estimation::B, 4), nb);
        // Misaligned offsets (A[5], A[10] at distance 4 in D): no bridge.
        let mut mis = hits.clone();
        mis[5] = hit(1, 10, 14, 16);
        assert_eq!(estimate(9, &mis, &bytes, Estimation::B, 30), nb);
        // BE (f): the byte before s' differs from s''s stored preceding byte: no bridge, but
        // expansion still labels the matching neighbors.
        let mut f = hits.clone();
        f[5] = hit(1, 9, 99, 16);
        assert_eq!(estimate(9, &f, &bytes, Estimation::Be, 30), vec![1, 1, 1, 9, 9, 1, 1, 9]);
        // (d): a bridge ends at the first aligned hit; a later one bridges from there.
        let mut d = hits.clone();
        d[3] = hit(1, 7, 12, 14);
        assert_eq!(estimate(9, &d, &bytes, Estimation::B, 30), vec![9, 1, 1, 1, 1, 1, 9, 9]);
    }

    #[test]
    fn a_stream_with_one_copy_finds_the_origin_and_the_novel_segment() {
        let a: Vec<String> = (0..200).map(|i| format!("alpha{i}")).collect();
        let b: Vec<String> = (0..200).map(|i| format!("beta{i}")).collect();
        // Doc 2: 30 own words, 150 words of a, 30 own words.
        let mut c: Vec<String> = (0..30).map(|i| format!("own{i}")).collect();
        c.extend(a[20..170].iter().cloned());
        c.extend((30..60).map(|i| format!("own{i}")));
        for mut det in [
            OriginDetector::exact(K),
            OriginDetector::new(OriginConfig::default(), 1 << 20),
            OriginDetector::new(
                OriginConfig {
                    selection: Selection::All,
                    eviction: Eviction::Lru,
                    estimation: Estimation::Nb,
                    ..Default::default()
                },
                1 << 20,
            ),
        ] {
            let ra = det.process(0, &a.join(" "));
            assert_eq!(ra.dominant, Some(0));
            assert_eq!(ra.copied, 0);
            det.process(1, &b.join(" "));
            let rc = det.process(2, &c.join(" "));
            assert_eq!(rc.dominant, Some(0), "{:?}", det.config());
            // Novel: the own words at both ends (the shingles straddling the boundaries
            // are new too, and cover the copied edge tokens only together with copied ones).
            let segs = rc.novel_segments();
            if det.config().selection == Selection::All {
                assert_eq!(segs, vec![(0, 30), (180, 210)], "{:?}", det.config());
            } else {
                // With selection, copied tokens next to a boundary may be covered only by
                // selected shingles straddling it (new): at most k − 1 tokens each side.
                assert_eq!(segs.len(), 2, "{segs:?}");
                assert!(segs[0].0 == 0 && (30..30 + K).contains(&segs[0].1), "{segs:?}");
                assert!((180 - K + 1..=180).contains(&segs[1].0) && segs[1].1 == 210, "{segs:?}");
            }
        }
    }
}
