//! Words, word shingles and the visible-text hash of a cleaned page: the features behind
//! near-replica detection (Shivakumar & Garcia-Molina 1998 §2: "the document is chunked into
//! smaller units, such as words, sequences of words, ...; each chunk is hashed down to a
//! fingerprint").
//!
//! Definitions (chosen to match the measure of `shared/data/reuse`'s truth, so that a pair
//! ditto calls near is a pair the truth calls near):
//! - **Visible text**: the cleaned blocks ([`crate::clean`]: `<head>`, `script`, `style`,
//!   `noscript`, `template` dropped; anchor text kept; image tags give no text) joined with
//!   one space.
//! - **Words**: maximal runs of word characters (`\w` in Unicode regex terms: alphabetic,
//!   numeric, or `_`), lower-cased. No other normalization (no NFKC), as the truth.
//! - **Shingles**: contiguous word k-grams, k = [`SHINGLE_WORDS`] = 4, across block
//!   boundaries, as a set. Each shingle is kept as a 32-bit hash ([`shingle_hash`]); a page's
//!   shingle set is a sorted, deduplicated `Vec<u32>`. A page of fewer than k words has no
//!   shingles (it can only be an exact replica, by its text hash).
//! - **Resemblance**: Jaccard |A ∩ B| / |A ∪ B| of two shingle sets ([`jaccard`]); S&G's
//!   overlap F (number of shared fingerprints, §2) is [`intersection_size`].
//!
//! 32-bit shingle hashes: two distinct shingles of a pair collide with probability
//! |A|·|B| / 2^32 (0.02 expected collisions for two 10 000-shingle pages), which moves a
//! Jaccard by less than 10^-5; in exchange a stored set costs 4 bytes per distinct shingle.

use crate::blocks::BlockList;
use std::borrow::Cow;

use crate::bitcounts::BitCounts;
use crate::fingerprint::{sha1, Sha1Digest};
use crate::normalize::Normalization;

/// Words per shingle (the truth's and MinHashLSH peer's word 4-shingles).
pub const SHINGLE_WORDS: usize = 4;

/// True for a `\w` character: alphabetic, numeric or underscore.
///
/// Outside ASCII, `char::is_alphanumeric` searches Unicode tables (half the word pass's time
/// on Cyrillic or Greek text): characters of the Basic Multilingual Plane are answered from
/// a bit table built once from that same function, so the answers cannot differ (tested for
/// every BMP character).
#[inline]
pub fn is_word_char(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    if u < 0x1_0000 {
        let table = bmp_word_chars();
        return table.get((u >> 6) as usize).is_some_and(|bits| (bits >> (u & 63)) & 1 == 1);
    }
    c.is_alphanumeric()
}

/// Bit `u` set where BMP character `u` is alphanumeric or `_` (8 KiB).
fn bmp_word_chars() -> &'static [u64] {
    static TABLE: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut bits = vec![0u64; 0x1_0000 / 64];
        for u in 0..0x1_0000u32 {
            if char::from_u32(u).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                bits[(u >> 6) as usize] |= 1 << (u & 63);
            }
        }
        bits
    })
}

/// The lower-cased words of `text`, in order.
pub fn words(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.split(|c: char| !is_word_char(c)).filter(|w| !w.is_empty()).map(|w| {
        if w.chars().any(char::is_uppercase) {
            Cow::Owned(w.to_lowercase())
        } else {
            Cow::Borrowed(w)
        }
    })
}

/// 64-bit FNV-1a of bytes, finished with the MurmurHash3 `fmix64` avalanche so that every
/// output bit depends on every input bit (SimHash needs well-mixed feature bits).
pub fn hash64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    fmix64(h)
}

/// MurmurHash3's 64-bit finalizer.
#[inline]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// Hash of one shingle from the 64-bit hashes of its words, in order: the word hashes
/// (already avalanched) rotated by their position and combined, then mixed once. Order
/// matters (a b c d ≠ b a c d); one `fmix64` per shingle keeps the fingerprint stage fast.
#[inline]
pub fn shingle_hash(word_hashes: &[u64]) -> u32 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for (i, &w) in word_hashes.iter().enumerate() {
        h ^= w.rotate_left((i as u32 * 17) % 64);
    }
    (fmix64(h) >> 32) as u32
}

/// The visible text of a page: its blocks joined with one space.
pub fn visible_text<B: BlockList + ?Sized>(blocks: &B) -> String {
    let mut out = String::with_capacity(blocks.text_bytes() + blocks.block_count());
    for b in blocks.blocks() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(b);
    }
    out
}

/// SHA-1 of the normalized visible text (exact replicas by content: pages whose markup
/// differs but whose text is the same); `None` when the text is empty.
pub fn text_hash<B: BlockList + ?Sized>(blocks: &B, norm: &Normalization) -> Option<Sha1Digest> {
    let text = visible_text(blocks);
    // ASCII text is streamed into SHA-1 when `norm` trims (the streamed form trims only
    // then; this hash always trims after normalizing).
    if norm.trim {
        if let Some(h) = crate::fingerprint::normalized_sha1_ascii(norm, &text) {
            return h;
        }
    }
    let n = norm.apply(&text);
    let n = n.trim();
    (!n.is_empty()).then(|| sha1(n.as_bytes()))
}

/// The page's word-k-shingle set as sorted, distinct 32-bit hashes (empty when the text has
/// fewer than `k` words; `k` = 0 is read as 1).
pub fn shingle_set(text: &str, k: usize) -> Vec<u32> {
    let k = k.max(1);
    let word_hashes: Vec<u64> = words(text).map(|w| hash64(w.as_bytes())).collect();
    if word_hashes.len() < k {
        return Vec::new();
    }
    let mut out: Vec<u32> = word_hashes.windows(k).map(shingle_hash).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// What the fingerprint stage computes for near-replica detection, per page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicaFeatures {
    /// Khan & Ali SimHash of the visible text ([`crate::simhash::page_simhash`]).
    pub simhash: u64,
    /// SHA-1 of the normalized visible text ([`text_hash`]).
    pub text_hash: Option<Sha1Digest>,
    /// Word-[`SHINGLE_WORDS`]-shingle set ([`shingle_set`]); empty where the caller did not
    /// ask for it (the scan).
    pub shingles: Vec<u32>,
    /// Bottom-[`SKETCH_SIZE`] sketch of the page's long-word shingles
    /// ([`long_word_sketch_of_blocks`]): what the store keeps and `ditto replicas` compares.
    pub sketch: ShingleSketch,
}

/// SimHash, text hash and shingle set of a page's cleaned blocks.
///
/// One pass over the words of all blocks feeds both the SimHash (bit counts of the word
/// hashes of words longer than 3 chars) and the shingles; the text hash streams the
/// normalized text into SHA-1. The result equals composing [`crate::simhash::page_simhash`],
/// [`text_hash`] and [`shingle_set`] over [`visible_text`] (tested): block boundaries are
/// never inside a word because the join adds a space.
pub fn replica_features<B: BlockList + ?Sized>(blocks: &B, norm: &Normalization) -> ReplicaFeatures {
    let (simhash, shingles, sketch) = word_features(blocks);
    ReplicaFeatures { simhash, text_hash: text_hash(blocks, norm), shingles, sketch }
}

/// The page's word-[`SHINGLE_WORDS`]-shingle set from its cleaned blocks: equal to
/// [`shingle_set`] of [`visible_text`] (and to [`replica_features`]' set).
pub fn shingle_set_of_blocks<B: BlockList + ?Sized>(blocks: &B) -> Vec<u32> {
    word_features(blocks).1
}

/// SimHash, shingle set and sketch from one pass over the words of all blocks: each word's
/// hash feeds, with the three words before it, one shingle hash (no vector of word hashes in
/// between); a long word's also the SimHash bit counts and the sketch
/// ([`long_word_sketch_of_blocks`]).
pub(crate) fn word_features<B: BlockList + ?Sized>(blocks: &B) -> (u64, Vec<u32>, ShingleSketch) {
    const _: () = assert!(SHINGLE_WORDS == 4);
    // About one word per six bytes of text; reserving avoids regrowing the vector.
    let mut shingles: Vec<u32> = Vec::with_capacity(blocks.text_bytes() / 5);
    let mut ones = BitCounts::default();
    let mut roll = SketchRoll::new(SKETCH_SIZE);
    let mut last = [0u64; SHINGLE_WORDS];
    let mut seen = 0usize;
    for b in blocks.blocks() {
        for_each_word(b, |h, long| {
            if long {
                ones.add(h);
                roll.push(h);
            }
            last = [last[1], last[2], last[3], h];
            seen += 1;
            if seen >= SHINGLE_WORDS {
                shingles.push(shingle_hash(&last));
            }
        });
    }
    let simhash = ones.simhash();
    sort_dedup(&mut shingles);
    (simhash, shingles, roll.finish())
}

/// Shingle hashes a page keeps for near-replica detection ([`ShingleSketch`]): at most this
/// many, the smallest.
///
/// 160: on `../shared/data/reuse` near-replica pairs scored F1 0.992 with sketches of all
/// words' shingles (128: 0.987, 192: 0.993, 256: 0.9935, the whole sets 0.9985), and 0.9916
/// with the long-word sketches kept now ([`SKETCH_NEAR_THRESHOLD`]); the Debian docs store
/// stays at 1.5–1.7 KB a page on disk (192: 1.7–1.9 KB, 256: 2.1 KB with all words' sketches;
/// sled's files grow about 3 bytes for each byte of record).
pub const SKETCH_SIZE: usize = 160;

/// `ditto replicas`' and `ditto recrawl`'s default near-replica threshold on the Jaccard of
/// two pages' sketches ([`long_word_sketch_of_blocks`]: long-word 4-shingles).
///
/// Lower than the reuse truth's 0.8 because it is another measure: leaving the short words
/// out leaves about half the shingles, and a changed long word still breaks four of them, so
/// the same edits lower the Jaccard more (two pages at 0.80 over all words' shingles are at
/// about 0.72–0.78 over long words'). On `../shared/data/reuse` (BENCHMARKS.md, "Sketch in the
/// word pass"): F1 0.966 at 0.80, 0.982 at 0.78, 0.9916 at 0.74–0.75, 0.989 at 0.70–0.72.
pub const SKETCH_NEAR_THRESHOLD: f64 = 0.75;

/// Bits of a sketch hash ([`long_shingle_hash`]; [`sketch_hash`] takes as many of a
/// [`shingle_hash`] for [`ShingleSketch::of_set`]). Stored as gaps, a sketch of a page of n shingles costs about
/// log2(2^24 / n) bits a hash instead of log2(2^32 / n). Two sketches of pages of n
/// shingles hold about 160 · n / 2^24 pairs of distinct shingles that share a sketch hash
/// (0.02 for n = 2,000; 1 in 160 hashes at n = 65,536), far less than an estimated
/// Jaccard's sampling error (about 1/√160).
pub const SKETCH_HASH_BITS: u32 = 24;

/// A shingle's hash as sketches keep it (its top [`SKETCH_HASH_BITS`] bits).
#[inline]
pub fn sketch_hash(shingle: u32) -> u32 {
    shingle >> (32 - SKETCH_HASH_BITS)
}

/// A bounded sample of a page's shingle set, computed in the scan's fingerprint pool (the
/// long-word 4-shingles of [`long_word_sketch_of_blocks`], in the SimHash's word pass) and
/// stored with the page record, so `ditto replicas` needs no page text: the
/// [`SKETCH_SIZE`] smallest distinct shingle hashes (a bottom-k sketch, Broder 1997; Cohen &
/// Kaplan 2007), or the whole set when the page has no more than that.
///
/// The hashes are uniform, so the sketch holds *every* shingle of the page whose hash is at
/// most [`ShingleSketch::cutoff`]: for two pages, the shingles of both at or below the smaller
/// cutoff are a uniform sample of their union, and the Jaccard of those two restricted sets
/// estimates the pages' Jaccard (exact when both sketches are complete). Removing a host's
/// template shingles from a sketch leaves a sketch of the template-free set with the same
/// cutoff.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShingleSketch {
    /// Sorted, distinct shingle hashes.
    pub hashes: Vec<u32>,
    /// `hashes` is the page's whole shingle set.
    pub complete: bool,
}

impl ShingleSketch {
    /// The sketch of a sorted, distinct shingle set ([`shingle_set`]'s 32-bit hashes),
    /// keeping at most `k` hashes. Its hashes are not those of a stored sketch (those are of
    /// long-word shingles, [`long_word_sketch_of_blocks`]): for tests of the estimators on
    /// known sets, never to compare with a stored sketch.
    pub fn of_set(set: &[u32], k: usize) -> Self {
        let k = k.max(1);
        let mut hashes: Vec<u32> = set.iter().map(|&h| sketch_hash(h)).collect();
        hashes.dedup();
        let complete = hashes.len() <= k;
        hashes.truncate(k);
        ShingleSketch { hashes, complete }
    }

    /// Every shingle hash of the page at most this is in the sketch (`u64::MAX`: all of them).
    pub fn cutoff(&self) -> u64 {
        cutoff_of(&self.hashes, self.complete)
    }

    /// The page's number of distinct shingles: exact for a complete sketch (up to the rare
    /// shingles that share a sketch hash), else estimated from the cutoff
    /// ((k − 1) · 2^24 / (cutoff + 1), the bottom-k estimator).
    pub fn estimated_size(&self) -> usize {
        estimated_size(self.hashes.len(), self.cutoff())
    }
}

/// The cutoff of a sketch's hashes (see [`ShingleSketch::cutoff`]).
pub fn cutoff_of(hashes: &[u32], complete: bool) -> u64 {
    match hashes.last() {
        Some(&last) if !complete => u64::from(last),
        _ => u64::MAX,
    }
}

/// Estimated number of distinct shingles of a set of which the `n` sketch hashes
/// ([`sketch_hash`]) at most `cutoff` are known (exact, `n`, for the cutoff `u64::MAX`).
pub fn estimated_size(n: usize, cutoff: u64) -> usize {
    if cutoff == u64::MAX || n == 0 {
        return n;
    }
    let est = (n.saturating_sub(1)) as f64 * (1u64 << SKETCH_HASH_BITS) as f64 / (cutoff as f64 + 1.0);
    (est.round() as usize).max(n + 1)
}

/// Estimated Jaccard of two sets known by samples: `a` holds every element of its set at most
/// `cut_a`, `b` every element of its set at most `cut_b`. Both are restricted to the smaller
/// cutoff, where they are a uniform sample of the union; returns (Jaccard, shared, union) of
/// that sample (exact values for two complete sets).
pub fn sketch_jaccard(a: &[u32], cut_a: u64, b: &[u32], cut_b: u64) -> (f64, usize, usize) {
    let cut = cut_a.min(cut_b);
    let restrict = |s: &'_ [u32]| -> usize { s.partition_point(|&x| u64::from(x) <= cut) };
    let (a, b) = (&a[..restrict(a)], &b[..restrict(b)]);
    let shared = intersection_size(a, b);
    let union = a.len() + b.len() - shared;
    let j = if union == 0 { 0.0 } else { shared as f64 / union as f64 };
    (j, shared, union)
}

/// The page's [`ShingleSketch`] of at most `k` hashes from its cleaned blocks, word by word:
/// the reference for the scan's word pass, which computes the same sketch beside the SimHash
/// ([`crate::fingerprint::scan`]; tested equal on both of its paths).
///
/// A sketch's shingles are the 4-shingles of the page's *long* words (more than 3
/// characters, the SimHash's words; [`long_shingle_hash`]), across block boundaries: the
/// word pass hashes only those, so the sketch costs one combine and one compare a long
/// word there. Leaving the short words out is the usual stop-word-free shingling of
/// near-duplicate work; it is a different set from [`shingle_set`]'s, so sketches are only
/// ever compared with sketches computed this way.
pub fn long_word_sketch_of_blocks<B: BlockList + ?Sized>(blocks: &B, k: usize) -> ShingleSketch {
    let mut roll = SketchRoll::new(k);
    for b in blocks.blocks() {
        for_each_word(b, |h, long| {
            if long {
                roll.push(h);
            }
        });
    }
    roll.finish()
}

/// The sketch hash ([`SKETCH_HASH_BITS`] bits) of the shingle of four consecutive long words
/// from their 64-bit word hashes ([`hash64`], already avalanched), oldest first: each
/// rotated by its place (odd amounts, so no rotation of one shingle's combine is another's),
/// combined, then one multiply whose top bits are kept.
#[inline(always)]
pub fn long_shingle_hash(w: [u64; 4]) -> u32 {
    let x = w[3] ^ w[2].rotate_left(17) ^ w[1].rotate_left(34) ^ w[0].rotate_left(51);
    (x.wrapping_mul(LONG_SHINGLE_MIX) >> (64 - SKETCH_HASH_BITS)) as u32
}

/// The odd multiplier of [`long_shingle_hash`].
const LONG_SHINGLE_MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// The bottom-k sketch of a stream of long-word hashes: the three words before, and the
/// smallest shingle hashes so far ([`long_shingle_hash`]). What the word pass feeds.
#[derive(Debug, Clone)]
pub struct SketchRoll {
    /// The three long words before, oldest first, in 5..8 (the lanes where
    /// [`SketchRoll::push_lanes`] loads them; 0..5 unused).
    prev: [u64; 8],
    /// Long words pushed.
    seen: usize,
    keep: BottomK,
}

impl SketchRoll {
    /// A sketch of at most `k` hashes (at least 1).
    pub fn new(k: usize) -> Self {
        let k = k.max(1);
        SketchRoll { prev: [0; 8], seen: 0, keep: BottomK::new(k) }
    }

    /// The next long word's hash, in page order.
    #[inline(always)]
    pub fn push(&mut self, h: u64) {
        let [.., a, b, c] = self.prev;
        let x = long_shingle_hash([a, b, c, h]);
        self.prev[5..].copy_from_slice(&[b, c, h]);
        self.seen += 1;
        // Once k shingles are kept, almost always false: until then the limit is the largest
        // sketch hash.
        if x <= self.keep.limit {
            // The first three words make no shingle.
            if self.seen >= SHINGLE_WORDS {
                self.keep.push(x);
            }
        } else {
            // Above the k-th smallest distinct value: the set has more than k.
            self.keep.truncated = true;
        }
    }

    /// The first `n` (≤ 8) long-word hashes of the lanes of `h`, in lane order: the same as
    /// [`SketchRoll::push`] of each, eight shingles at once. The three words before come in
    /// lanes 5–7 of a vector, each lane's three words before by lane
    /// shifts, and the shingle hashes that pass the limit (rarely any, once k are kept) are
    /// compressed into the buffer, so no lane takes a branch.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and DQ.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    #[inline]
    pub unsafe fn push_lanes(&mut self, h: std::arch::x86_64::__m512i, n: usize) {
        use std::arch::x86_64::*;
        let n = n.min(8);
        if n == 0 {
            return;
        }
        // SAFETY: `prev` is 64 bytes.
        let p = unsafe { _mm512_loadu_si512(self.prev.as_ptr().cast()) };
        // Lane i: the word 1, 2 and 3 before word i.
        let w1 = _mm512_alignr_epi64::<7>(h, p);
        let w2 = _mm512_alignr_epi64::<6>(h, p);
        let w3 = _mm512_alignr_epi64::<5>(h, p);
        let x = _mm512_xor_si512(
            _mm512_xor_si512(h, _mm512_rol_epi64::<17>(w1)),
            _mm512_xor_si512(_mm512_rol_epi64::<34>(w2), _mm512_rol_epi64::<51>(w3)),
        );
        let mixed = _mm512_mullo_epi64(x, _mm512_set1_epi64(LONG_SHINGLE_MIX as i64));
        let sketch = _mm512_srli_epi64::<{ 64 - SKETCH_HASH_BITS }>(mixed);
        // Lanes holding a word, less those of the first three words of the page.
        let live = (((1u32 << n) - 1) & !((1u32 << (SHINGLE_WORDS - 1).saturating_sub(self.seen)) - 1)) as u8;
        let pass = _mm512_mask_cmple_epu64_mask(live, sketch, _mm512_set1_epi64(i64::from(self.keep.limit)));
        if live & !pass != 0 {
            // Above the k-th smallest distinct value: the set has more than k.
            self.keep.truncated = true;
        }
        if pass != 0 {
            let len = self.keep.buf.len();
            if self.keep.buf.capacity() - len < 16 {
                self.keep.buf.reserve(16);
            }
            let kept = pass.count_ones() as usize;
            // Compressed in a register, then stored whole: a compressing store to memory is
            // slow on some CPUs (microcoded on AMD Zen 4).
            let narrow = _mm512_castsi256_si512(_mm512_cvtepi64_epi32(sketch));
            let packed = _mm512_maskz_compress_epi32(u16::from(pass), narrow);
            // SAFETY: at least 16 `u32`s (64 bytes) of spare capacity from `len` (reserved
            // above); the first `kept` of them are the values, which `set_len` then covers.
            unsafe {
                _mm512_storeu_si512(self.keep.buf.as_mut_ptr().add(len).cast(), packed);
                self.keep.buf.set_len(len + kept);
            }
            if self.keep.buf.len() >= BottomK::full(self.keep.k) {
                self.keep.select(false);
            }
        }
        // The three words before the next: lanes n..n + 3 of (p, h), into `prev`.
        let idx = _mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 0, 0, 0, 0, 0), _mm512_set1_epi64(n as i64));
        let next = _mm512_permutex2var_epi64(p, idx, h);
        // SAFETY: `prev` is 64 bytes.
        unsafe { _mm512_storeu_si512(self.prev.as_mut_ptr().cast(), next) };
        self.seen += n;
    }

    /// The first `n` of `hashes`, in order.
    #[inline(always)]
    pub fn push_batch(&mut self, hashes: &[u64; 8], n: usize) {
        for &h in hashes.iter().take(n) {
            self.push(h);
        }
    }

    /// The sketch of the shingles pushed.
    pub fn finish(self) -> ShingleSketch {
        self.keep.finish()
    }
}

/// Sorts `v`, values below `bound` and spread about uniformly over `0..bound` (hashes), in
/// about linear time: counted into as many ranges of equal width as there are values, placed
/// range by range, then an insertion sort moves each value only within its range (a
/// comparison sort takes over past 16 moves a value, for values that are not spread). A
/// comparison sort of the 200 values a page's sketch selects took more time than the page's
/// whole word pass.
fn sort_uniform_below(v: &mut Vec<u32>, bound: u64) {
    let n = v.len();
    if n < 32 {
        v.sort_unstable();
        return;
    }
    let buckets_log = usize::BITS - (n - 1).leading_zeros(); // 2^buckets_log ≥ n
    let value_bits = u64::BITS - bound.saturating_sub(1).leading_zeros();
    let shift = value_bits.saturating_sub(buckets_log);
    let buckets = 1usize << buckets_log;
    let bucket = |x: u32| ((x >> shift) as usize).min(buckets - 1);
    let mut start = vec![0u32; buckets + 1];
    for &x in v.iter() {
        start[bucket(x) + 1] += 1;
    }
    for b in 0..buckets {
        start[b + 1] += start[b];
    }
    let mut out = vec![0u32; n];
    for &x in v.iter() {
        let b = bucket(x);
        out[start[b] as usize] = x;
        start[b] += 1;
    }
    // Values that are not spread out (crafted ones) could make this quadratic: past a
    // linear budget of moves, a comparison sort finishes.
    let mut budget = 16 * n;
    for i in 1..n {
        let x = out[i];
        let mut j = i;
        while j > 0 && out[j - 1] > x {
            out[j] = out[j - 1];
            j -= 1;
        }
        out[j] = x;
        budget = budget.saturating_sub(i - j);
        if budget == 0 {
            out.sort_unstable();
            break;
        }
    }
    *v = out;
}

/// Values a [`BottomK`] buffers before it selects among them (16 KiB: it stays in the near
/// cache). Most pages have fewer long words, so they select once, at the end.
const BOTTOM_K_BUFFER: usize = 4096;

/// The k smallest distinct values pushed.
///
/// Pushing is one compare (against `limit`, the largest sketch hash until a selection) and one store; the
/// selection ([`BottomK::select`]) runs when the buffer is full and at the end. It does not
/// sort the buffer: the values are uniform hashes, so a bound expected to keep about 1.25 k of
/// them is taken from their count, the values below it are kept (without a branch per value),
/// and only those are sorted; the bound is doubled in the rare case that leaves fewer than k
/// distinct. Sorting a page's whole buffer (640 values for k = 160) cost more than the word
/// pass itself on the Debian pages.
#[derive(Debug, Clone)]
struct BottomK {
    k: usize,
    buf: Vec<u32>,
    /// Values above this are not among the k smallest (at first, the largest sketch hash).
    limit: u32,
    truncated: bool,
}

impl BottomK {
    fn new(k: usize) -> Self {
        let k = k.max(1);
        // Every value is a sketch hash, below 2^SKETCH_HASH_BITS: the bound of the first
        // selection is taken from that range.
        let limit = (1u32 << SKETCH_HASH_BITS) - 1;
        // Most pages need far less than the whole buffer: it grows as values come.
        BottomK { k, buf: Vec::with_capacity(Self::capacity(k).min(1024)), limit, truncated: false }
    }

    /// The buffer's length at which it selects.
    #[inline(always)]
    fn full(k: usize) -> usize {
        BOTTOM_K_BUFFER.max(2 * k)
    }

    /// The buffer's capacity: room for a window's store of 16 values past [`Self::full`].
    fn capacity(k: usize) -> usize {
        Self::full(k) + 16
    }

    #[inline(always)]
    fn push(&mut self, h: u32) {
        self.buf.push(h);
        if self.buf.len() >= Self::full(self.k) {
            self.select(false);
        }
    }

    /// Keep the k smallest distinct values of the buffer, sorted, and lower `limit` to the
    /// k-th when there are k.
    #[inline(never)]
    fn select(&mut self, last: bool) {
        let (k, n) = (self.k, self.buf.len());
        let top = u64::from(self.limit) + 1;
        let mut bound = if n <= 2 * k { top } else { (top * (5 * k as u64 / 4) / n as u64).clamp(1, top) };
        let mut kept: Vec<u32> = vec![0; n];
        loop {
            let mut j = 0;
            for &x in &self.buf {
                // Written always, kept by moving on: no branch on the value.
                kept[j] = x;
                j += usize::from(u64::from(x) < bound);
            }
            let below = j;
            kept.truncate(below);
            sort_uniform_below(&mut kept, bound);
            kept.dedup();
            if kept.len() >= k || bound >= top {
                if below < n {
                    // Values at or above the bound were left: more than k distinct in all.
                    self.truncated = true;
                }
                break;
            }
            bound = bound.saturating_mul(2).min(top);
            kept.resize(n, 0);
        }
        if kept.len() > k {
            self.truncated = true;
            kept.truncate(k);
        }
        if kept.len() == k {
            self.limit = kept[k - 1];
        }
        if !last {
            kept.reserve(Self::capacity(k).saturating_sub(kept.len()));
        }
        self.buf = kept;
    }

    fn finish(mut self) -> ShingleSketch {
        self.select(true);
        ShingleSketch { hashes: self.buf, complete: !self.truncated }
    }
}

/// Sorts and deduplicates `v`: an LSD radix sort (three passes of 11 bits) for long sets,
/// the standard sort for short ones. A page's shingle set is sorted once per page, and a
/// comparison sort of a few thousand keys costs more than the rest of the stage.
pub fn sort_dedup(v: &mut Vec<u32>) {
    const BITS: u32 = 11;
    const BUCKETS: usize = 1 << BITS;
    if v.len() < 256 {
        v.sort_unstable();
        v.dedup();
        return;
    }
    let mut counts = [[0u32; BUCKETS]; 3];
    for &x in v.iter() {
        for (pass, c) in counts.iter_mut().enumerate() {
            c[((x >> (BITS * pass as u32)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    let mut scratch = vec![0u32; v.len()];
    for (pass, c) in counts.iter_mut().enumerate() {
        let shift = BITS * pass as u32;
        let mut sum = 0u32;
        for slot in c.iter_mut() {
            let n = *slot;
            *slot = sum;
            sum += n;
        }
        for &x in v.iter() {
            let slot = &mut c[((x >> shift) as usize) & (BUCKETS - 1)];
            scratch[*slot as usize] = x;
            *slot += 1;
        }
        std::mem::swap(v, &mut scratch);
    }
    v.dedup();
}

/// `WORD_BYTE[b]`: for an ASCII word character (`[A-Za-z0-9_]`) its lower-case form, for
/// any other ASCII byte 0, for a byte of a multi-byte UTF-8 sequence 0xFF.
pub(crate) const WORD_BYTE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c >= 0x80 {
            0xff
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            c.to_ascii_lowercase()
        } else {
            0
        };
        b += 1;
    }
    t
};

pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
pub(crate) const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Call `f(hash64(lower-cased word), word has more than 3 chars)` for every word of `text`
/// in order: the same words and hashes as [`words`] + [`hash64`], without allocating.
/// ASCII words (nearly all) are found and hashed byte by byte through one table; a word
/// that has a non-ASCII character takes the general path ([`general_word`]).
fn for_each_word(text: &str, mut f: impl FnMut(u64, bool)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        let t = WORD_BYTE[bytes[i] as usize];
        if t == 0 {
            i += 1;
            continue;
        }
        if t == 0xff {
            // A non-ASCII character: a word start only if it is a word character.
            let Some(c) = text.get(i..).and_then(|r| r.chars().next()) else { break };
            i = if is_word_char(c) { general_word(text, i, &mut f) } else { i + c.len_utf8() };
            continue;
        }
        let start = i;
        let mut h = FNV_OFFSET;
        while i < n {
            let t = WORD_BYTE[bytes[i] as usize];
            if t == 0 || t == 0xff {
                break;
            }
            h ^= t as u64;
            h = h.wrapping_mul(FNV_PRIME);
            i += 1;
        }
        if i < n && bytes[i] >= 0x80 {
            // The word may go on with non-ASCII word characters: redo it in full.
            let continues = text.get(i..).and_then(|r| r.chars().next()).is_some_and(is_word_char);
            if continues {
                i = general_word(text, start, &mut f);
                continue;
            }
        }
        f(fmix64(h), i - start > 3);
    }
}

/// The word of `text` starting at byte `start` (a word character), in full Unicode: calls
/// `f` as [`for_each_word`] does and returns the byte index after the word.
pub(crate) fn general_word(text: &str, start: usize, f: &mut impl FnMut(u64, bool)) -> usize {
    let rest = text.get(start..).unwrap_or("");
    let len = rest.find(|c: char| !is_word_char(c)).unwrap_or(rest.len());
    let w = &rest[..len];
    let lower: Cow<'_, str> =
        if w.chars().any(char::is_uppercase) { Cow::Owned(w.to_lowercase()) } else { Cow::Borrowed(w) };
    // Khan & Ali count characters of the lower-cased word (see page_simhash).
    f(hash64(lower.as_bytes()), lower.chars().nth(3).is_some());
    start + len
}

/// |A ∩ B| of two sorted, distinct sets (S&G's overlap F: shared fingerprints).
pub fn intersection_size(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Jaccard resemblance |A ∩ B| / |A ∪ B| of two sorted, distinct sets; 0 when both are
/// empty (no evidence of resemblance).
pub fn jaccard(a: &[u32], b: &[u32]) -> f64 {
    let inter = intersection_size(a, b);
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        inter as f64 / union as f64
    }
}

/// Pieces of random test text: word characters of every kind, separators, words
/// around the 8- and 16-byte key sizes.
#[cfg(test)]
pub(crate) const WORD_TEST_PIECES: [&str; 26] = [
    "ab",
    "C",
    "_",
    "9",
    " ",
    ".",
    "é",
    "É",
    "ΣΑ",
    "ß",
    "日本",
    "-",
    "\u{301}",
    "İ",
    "x\u{200b}",
    "ǅ",
    "word",
    "LONGER",
    "abcdefgh",
    "abcdefghijklmnop",
    "Q",
    "\n",
    "\0",
    "\u{7f}",
    "_under_",
    "Ab_Cd",
];

/// Test text: `len` pieces of `palette` picked by a `fmix64` sequence from `x`.
#[cfg(test)]
pub(crate) fn palette_text(palette: &[&str], x: &mut u64, len: usize) -> String {
    (0..len)
        .map(|_| {
            *x = fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            palette[(*x % palette.len() as u64) as usize]
        })
        .collect()
}

/// [`long_word_sketch_of_blocks`] the plain way (tests): the long words of the visible text,
/// every window of four, hashed, sorted, deduplicated, the `k` smallest.
#[cfg(test)]
pub(crate) fn long_sketch_reference<B: BlockList + ?Sized>(blocks: &B, k: usize) -> ShingleSketch {
    let text = visible_text(blocks);
    let long: Vec<u64> =
        words(&text).filter(|w| w.chars().nth(3).is_some()).map(|w| hash64(w.as_bytes())).collect();
    let mut all: Vec<u32> = long.windows(4).map(|w| long_shingle_hash([w[0], w[1], w[2], w[3]])).collect();
    all.sort_unstable();
    all.dedup();
    let complete = all.len() <= k.max(1);
    all.truncate(k.max(1));
    ShingleSketch { hashes: all, complete }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sketch_is_the_smallest_long_word_shingle_hashes() {
        let mut x = 7u64;
        for len in [0usize, 3, 5, 10, 200, 2000, 20000] {
            let text = palette_text(&WORD_TEST_PIECES, &mut x, len);
            let blocks = [text.as_str(), "and one more block of words", "ab", "Ünïcode día þriðja"];
            for k in [1usize, 5, 256] {
                let sk = long_word_sketch_of_blocks(&blocks[..], k);
                let want = long_sketch_reference(&blocks[..], k);
                assert_eq!(sk, want, "len {len} k {k}");
                assert!(sk.hashes.iter().all(|&h| h < 1 << SKETCH_HASH_BITS));
                if sk.complete {
                    assert!(sk.hashes.len() <= k);
                    assert_eq!(sk.estimated_size(), sk.hashes.len());
                }
            }
            // The features' sketch is the same one.
            assert_eq!(replica_features(&blocks[..], &Normalization::default()).sketch, {
                long_word_sketch_of_blocks(&blocks[..], SKETCH_SIZE)
            });
        }
        // Repeats (a buffer of 4,096 values holding few distinct ones: the selection's bound
        // must grow until k distinct are below it), a page with exactly k distinct shingles,
        // and one more.
        let cycle: String = (0..300).map(|i| format!("word{i} ")).collect();
        let few: String = (0..9).map(|i| format!("term{i} ")).collect();
        for text in [cycle.repeat(30), few.repeat(2000), cycle[..cycle.len() / 2].repeat(7)] {
            for k in [1usize, 6, 7, 160, 300, 5000] {
                let blocks = [text.as_str()];
                assert_eq!(
                    long_word_sketch_of_blocks(&blocks[..], k),
                    long_sketch_reference(&blocks[..], k),
                    "k {k}"
                );
            }
        }
        // Fewer than four long words: no shingle; short words neither break nor join them.
        assert_eq!(long_word_sketch_of_blocks(&["the cat sat on a mat with three"][..], 8).hashes.len(), 0);
        let one = long_word_sketch_of_blocks(&["alpha a bravo of charlie to delta"][..], 8);
        let same = long_word_sketch_of_blocks(&["Alpha", "bravo, charlie; DELTA"][..], 8);
        assert_eq!(one.hashes.len(), 1);
        assert_eq!(one, same);
        // Order matters.
        assert_ne!(one, long_word_sketch_of_blocks(&["bravo alpha charlie delta"][..], 8));
        // A big set: the size estimate is within a few standard errors (1/sqrt(k)).
        let text: String = (0..20_000).map(|i| format!("word{i} ")).collect();
        let sk = long_word_sketch_of_blocks(&[text.as_str()][..], 256);
        let n = 20_000.0 - 3.0;
        assert!(!sk.complete);
        assert!((sk.estimated_size() as f64 / n - 1.0).abs() < 0.25, "{} vs {n}", sk.estimated_size());
    }

    #[test]
    fn sort_uniform_below_sorts_anything() {
        let mut x = 99u64;
        for n in [0usize, 1, 31, 32, 33, 200, 1000, 5000] {
            for bound in [1u64, 2, 1000, 1 << 22, 1 << 24, 1 << 32] {
                // Uniform, and all in one corner (the worst case for the ranges), with repeats.
                let uniform: Vec<u32> = (0..n)
                    .map(|_| {
                        x = fmix64(x.wrapping_add(1));
                        (x % bound) as u32
                    })
                    .collect();
                let corner: Vec<u32> = uniform.iter().map(|&v| v % 7).collect();
                for mut v in [uniform, corner] {
                    let mut want = v.clone();
                    want.sort_unstable();
                    sort_uniform_below(&mut v, bound);
                    assert_eq!(v, want, "n {n} bound {bound}");
                }
            }
        }
    }

    #[test]
    fn sketch_jaccard_estimates_and_is_exact_on_complete_sets() {
        let a: Vec<u32> = (0..100).collect();
        let b: Vec<u32> = (20..120).collect();
        let (j, shared, union) = sketch_jaccard(&a, u64::MAX, &b, u64::MAX);
        assert_eq!((shared, union), (80, 120));
        assert!((j - 80.0 / 120.0).abs() < 1e-12);
        // Two sets of 40 000 random hashes sharing 32 000: the bottom-256 estimate is near 0.667.
        let mut x = 1u64;
        let mut next = || {
            x = fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            x as u32
        };
        let common: Vec<u32> = (0..32_000).map(|_| next()).collect();
        let mut sa: Vec<u32> = common.iter().copied().chain((0..8_000).map(|_| next())).collect();
        let mut sb: Vec<u32> = common.iter().copied().chain((0..8_000).map(|_| next())).collect();
        sort_dedup(&mut sa);
        sort_dedup(&mut sb);
        let truth = jaccard(&sa, &sb);
        let (ka, kb) = (ShingleSketch::of_set(&sa, 256), ShingleSketch::of_set(&sb, 256));
        let (j, _, union) = sketch_jaccard(&ka.hashes, ka.cutoff(), &kb.hashes, kb.cutoff());
        assert!(union >= 256);
        assert!((j - truth).abs() < 0.1, "{j} vs {truth}");
    }

    #[test]
    fn words_are_lowercased_word_character_runs() {
        let w: Vec<_> = words("Hello, World! snake_case x2 — Ünïcode día").collect();
        assert_eq!(w, ["hello", "world", "snake_case", "x2", "ünïcode", "día"]);
        assert_eq!(words("  ,.; ").count(), 0);
    }

    #[test]
    fn shingles_cross_blocks_and_are_a_set() {
        // 6 words → 3 four-shingles; the text repeated gives no new shingle... except the
        // ones spanning the join.
        let s = shingle_set("a b c d e f", 4);
        assert_eq!(s.len(), 3);
        let twice = shingle_set("a b c d a b c d", 4);
        // abcd, bcda, cdab, dabc, abcd → 4 distinct
        assert_eq!(twice.len(), 4);
        assert!(shingle_set("a b c", 4).is_empty());
        // Same words, other punctuation and case: same shingles.
        assert_eq!(shingle_set("A, b; C d!", 4), shingle_set("a b c d", 4));
        // Blocks joined with a space form shingles across the boundary.
        assert_eq!(shingle_set(&visible_text(&["a b", "c d"]), 4), shingle_set("a b c d", 4));
    }

    #[test]
    fn jaccard_hand_computed() {
        // A = {1,2,3,4}, B = {3,4,5}: |A∩B| = 2, |A∪B| = 5 → 0.4
        assert_eq!(intersection_size(&[1, 2, 3, 4], &[3, 4, 5]), 2);
        assert!((jaccard(&[1, 2, 3, 4], &[3, 4, 5]) - 0.4).abs() < 1e-12);
        assert_eq!(jaccard(&[7], &[7]), 1.0);
        assert_eq!(jaccard(&[], &[]), 0.0);
        assert_eq!(jaccard(&[1], &[]), 0.0);
        // Shingle level: "a b c d e" vs "a b c d f": {abcd, bcde} vs {abcd, bcdf} → 1/3.
        let a = shingle_set("a b c d e", 4);
        let b = shingle_set("a b c d f", 4);
        assert!((jaccard(&a, &b) - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn text_hash_ignores_markup_whitespace_and_case_but_not_words() {
        let n = Normalization::default();
        assert_eq!(text_hash(&["Hello  world"], &n), text_hash(&["hello", "world"], &n));
        assert_ne!(text_hash(&["hello world"], &n), text_hash(&["hello there"], &n));
        assert_eq!(text_hash(&["   "], &n), None);
        assert_eq!(text_hash::<[&str]>(&[], &n), None);
    }

    #[test]
    fn replica_features_agree_with_the_parts() {
        let blocks = ["Hello World, this is a page", "with two blocks"];
        let f = replica_features(&blocks, &Normalization::default());
        let text = visible_text(&blocks);
        assert_eq!(f.simhash, crate::simhash::page_simhash(&text));
        assert_eq!(f.text_hash, text_hash(&blocks, &Normalization::default()));
        assert_eq!(f.shingles, shingle_set(&text, 4));
        assert_eq!(f.shingles.len(), 6); // 9 words → 6 four-shingles
    }

    #[test]
    fn fused_features_equal_the_composed_definitions() {
        let composed = |blocks: &[&str], norm: &Normalization| {
            let text = visible_text(blocks);
            // The text hash by its definition (not `text_hash`, which streams ASCII text).
            let normalized = norm.apply(&text);
            let normalized = normalized.trim();
            ReplicaFeatures {
                simhash: crate::simhash::page_simhash(&text),
                text_hash: (!normalized.is_empty()).then(|| sha1(normalized.as_bytes())),
                shingles: shingle_set(&text, SHINGLE_WORDS),
                sketch: long_sketch_reference(blocks, SKETCH_SIZE),
            }
        };
        let cases: Vec<Vec<&str>> = vec![
            vec![],
            vec![""],
            vec!["  "],
            vec!["One two three four five six seven."],
            vec!["Hello World", "HELLO world again", "and_again x1 y22 z333 w4444"],
            vec!["Straße ΟΔΥΣΣΕΥΣ ÉCOLE naïve", "日本語のテキスト と English words mixed"],
            vec!["tabs\tand\nnewlines  here", "\u{a0}nbsp\u{a0}separated\u{a0}words"],
            vec!["İstanbul İSTANBUL", "ﬁne ligature ＡＢＣ fullwidth"],
        ];
        for norm in [Normalization::default(), Normalization::NONE] {
            for blocks in &cases {
                assert_eq!(replica_features(blocks, &norm), composed(blocks, &norm), "{blocks:?}");
            }
        }
        // Real pages.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/wikipedia/articles");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap().take(40) {
            let body = std::fs::read(e.unwrap().path()).unwrap();
            let doc = crate::clean(&body, Some("text/html"), None, &crate::CleanOptions::default());
            let blocks: Vec<&str> = doc.blocks.iter().collect();
            assert_eq!(
                replica_features(&blocks, &Normalization::default()),
                composed(&blocks, &Normalization::default())
            );
            n += 1;
        }
        assert_eq!(n, 40);
    }

    #[test]
    fn word_chars_equal_is_alphanumeric_or_underscore() {
        for u in (0..0x3_0000u32).chain([0x10_FFFF]) {
            if let Some(c) = char::from_u32(u) {
                assert_eq!(is_word_char(c), c.is_alphanumeric() || c == '_', "U+{u:04X}");
            }
        }
    }

    #[test]
    fn word_scan_equals_words_and_hash64() {
        let palette = super::WORD_TEST_PIECES;
        let mut x = 7u64;
        for _ in 0..5000 {
            let len = (fmix64(x) % 12) as usize;
            let text = palette_text(&palette, &mut x, len);
            let want: Vec<(u64, bool)> =
                words(&text).map(|w| (hash64(w.as_bytes()), w.chars().nth(3).is_some())).collect();
            let mut got = Vec::new();
            for_each_word(&text, |h, long| got.push((h, long)));
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn sort_dedup_equals_the_standard_sort() {
        let mut x = 1u64;
        for len in [0usize, 1, 2, 255, 256, 257, 1000, 5000, 70_000] {
            let mut v: Vec<u32> = (0..len)
                .map(|i| {
                    x = fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
                    // Some repeats, some extremes.
                    match i % 7 {
                        0 => u32::MAX,
                        1 => (x % 50) as u32,
                        _ => x as u32,
                    }
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            want.dedup();
            sort_dedup(&mut v);
            assert_eq!(v, want, "len {len}");
        }
    }

    #[test]
    fn shingle_hash_depends_on_word_order() {
        let w: Vec<u64> = ["a", "b", "c", "d"].iter().map(|x| hash64(x.as_bytes())).collect();
        let swapped = [w[1], w[0], w[2], w[3]];
        let repeated = [w[0], w[0], w[0], w[0]];
        assert_ne!(shingle_hash(&w), shingle_hash(&swapped));
        assert_ne!(shingle_hash(&repeated), shingle_hash(&[w[1], w[1], w[1], w[1]]));
    }

    #[test]
    fn fnv_and_fmix_known_values() {
        // FNV-1a 64 of "" is the offset basis; fmix64(0) = 0.
        assert_eq!(fmix64(0), 0);
        assert_eq!(hash64(b""), fmix64(0xcbf2_9ce4_8422_2325));
        // FNV-1a 64 of "a" = 0xaf63dc4c8601ec8c (published test vector).
        assert_eq!(hash64(b"a"), fmix64(0xaf63_dc4c_8601_ec8c));
    }
}
