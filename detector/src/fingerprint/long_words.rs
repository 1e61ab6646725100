//! The scan's SimHash word pass: the hashes of the words longer than 3 characters, the same
//! values as [`crate::shingles::words`] + [`crate::shingles::hash64`], counted into the
//! SimHash's bit counts and, in page order, rolled into the page's shingle sketch
//! ([`WithSketch`]: 4-shingles of these long words, the bottom-k kept; issue 22). Both
//! paths hand the words over in page order (tested), so the sketch is the same on every CPU.
//!
//! Khan & Ali's SimHash (§III.C) needs only words of more than 3 characters. Two paths give
//! the same counts (tested against `words` + `hash64`):
//! - **AVX-512** (F, BW, DQ, VBMI, VBMI2; [`count_long_words`] on such a CPU): a window of
//!   64 bytes at a time with no branch per word ([`avx512`]'s `count_piece`): word
//!   characters as a bit mask, word starts and ends compressed into position vectors and
//!   paired into lengths, the long words' first 16 bytes gathered into the lanes of two
//!   vectors, hashed eight at a time and counted with one byte-mask subtraction each.
//!   Non-ASCII characters that are not word characters (no-break spaces, quotes, dashes)
//!   separate words there as ASCII punctuation does; a window with a non-ASCII word
//!   character takes the portable path for the words that start in it.
//! - **Portable**: a word's extent is found with SSE2 masks over 64 bytes (any byte ≥ 0x80
//!   sends the word to the general Unicode path); short ASCII words are dropped without a
//!   branch; ASCII words of up to 16 bytes are hashed eight at a time ([`WordBatch`]).
//!
//! Measured on the normalized ASCII text of the debian-docs pages (9.8 MB, one string;
//! 2-core VM, 2026-11-24): 21 ns per long word with the word-at-a-time loop this replaced,
//! 11.6 ns with the batches, 10.3 ns with the AVX-512 windows. Over whole pages (the
//! fingerprint stage alone, body SHA-1 included) the word pass went from 0.73 to 0.36 ms per
//! MB of HTML.
//!
//! Until 2026-11-23 (session 7) a per-thread direct-mapped cache from word to hash stood in
//! front of the hashing. It was faster on its own, but in the scan the tokenizer runs
//! between pages and pushes its 176 KB out of the near caches: measured page by page beside
//! the bare tokenizer (debian-docs), the scan gained about 3 points without it.

use crate::bitcounts::BitCounts;
use crate::shingles::{fmix64, general_word, is_word_char, SketchRoll, FNV_OFFSET, FNV_PRIME, WORD_BYTE};

/// Where the word pass's long-word hashes go, in page order: the SimHash's bit counts
/// ([`BitCounts`]), or those and the page's shingle sketch ([`WithSketch`]).
pub(super) trait WordSink {
    /// The first `n` of `hashes`; `AVX512` as for [`BitCounts::add_batch`].
    fn add_batch<const AVX512: bool>(&mut self, hashes: &[u64; BATCH], n: usize);
    /// One hash.
    fn add(&mut self, h: u64);
    /// The first `n` of `hashes`, the others 0 (an AVX-512 window's), also in the lanes of
    /// `lanes`.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and DQ.
    #[cfg(target_arch = "x86_64")]
    unsafe fn add_window(&mut self, hashes: &[u64; BATCH], lanes: std::arch::x86_64::__m512i, n: usize);
}

impl WordSink for BitCounts {
    #[inline(always)]
    fn add_batch<const AVX512: bool>(&mut self, hashes: &[u64; BATCH], n: usize) {
        BitCounts::add_batch::<AVX512>(self, hashes, n);
    }

    #[inline(always)]
    fn add(&mut self, h: u64) {
        BitCounts::add(self, h);
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn add_window(&mut self, hashes: &[u64; BATCH], _lanes: std::arch::x86_64::__m512i, n: usize) {
        // SAFETY: the caller's CPU has the features.
        unsafe { self.add_zero_padded(hashes, n, BATCH) };
    }
}

/// The SimHash's bit counts and the page's long-word shingle sketch
/// ([`crate::shingles::long_word_sketch_of_blocks`]), fed by one word pass.
pub(super) struct WithSketch {
    pub(super) counts: BitCounts,
    pub(super) sketch: SketchRoll,
}

impl WordSink for WithSketch {
    #[inline(always)]
    fn add_batch<const AVX512: bool>(&mut self, hashes: &[u64; BATCH], n: usize) {
        self.counts.add_batch::<AVX512>(hashes, n);
        #[cfg(target_arch = "x86_64")]
        if AVX512 {
            // SAFETY: `AVX512` is true only below the word pass's AVX-512 `count_long_words`,
            // which runs only on a CPU with the features; `hashes` is 64 bytes.
            unsafe {
                let lanes = std::arch::x86_64::_mm512_loadu_si512(hashes.as_ptr().cast());
                self.sketch.push_lanes(lanes, n);
            }
            return;
        }
        self.sketch.push_batch(hashes, n);
    }

    #[inline(always)]
    fn add(&mut self, h: u64) {
        self.counts.add(h);
        self.sketch.push(h);
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn add_window(&mut self, hashes: &[u64; BATCH], lanes: std::arch::x86_64::__m512i, n: usize) {
        // SAFETY: the caller's CPU has the features.
        unsafe {
            self.counts.add_zero_padded(hashes, n, BATCH);
            self.sketch.push_lanes(lanes, n);
        }
    }
}

/// `| LOWER` lower-cases the ASCII letters of a word and keeps its digits; it maps `_`
/// (0x5F) to 0x7F, which [`underscores_back`] undoes.
const LOWER: u64 = 0x2020_2020_2020_2020;

/// `x` with its 0x7F bytes (`_` after `| LOWER`) back to `_` (0x5F).
#[inline(always)]
fn underscores_back(x: u64) -> u64 {
    // A high bit per 0x7F byte, moved to 0x20: 0x7F ^ 0x20 = 0x5F.
    x ^ (super::bytes_equal_to(x, 0x7f) >> 2)
}

/// How many words [`WordBatch`] hashes side by side.
const BATCH: usize = 8;

/// ASCII words of 4 to 16 bytes waiting to be hashed, held little-endian `| LOWER` in two
/// `u64`s each (bytes past a word's end included: the hash leaves them out).
///
/// Why a batch: a word's FNV-1a is a chain of up to 16 dependent multiplies. Hashed one word
/// at a time, each word's hash, with the bit counting after it, is too many instructions for
/// the CPU to get far into the next word's chain while it waits: measured at 13 ns per
/// 6-letter word and 21 ns per 9-letter word on the 2-core VM (synthetic text). Hashing
/// eight words step by step runs eight chains at once (12 and 14 ns).
struct WordBatch {
    lo: [u64; BATCH],
    hi: [u64; BATCH],
    len: [u64; BATCH],
    n: usize,
}

impl Default for WordBatch {
    fn default() -> Self {
        WordBatch { lo: [0; BATCH], hi: [0; BATCH], len: [4; BATCH], n: 0 }
    }
}

impl WordBatch {
    /// Add the word of `len` bytes (≤ 16) if it has more than 3; a shorter one is written
    /// into the next slot and left there to be overwritten.
    #[inline(always)]
    fn push<const AVX512: bool>(
        &mut self,
        lo: u64,
        hi: u64,
        len: usize,
        f: &mut (impl FnMut(&[u64; BATCH], usize) + ?Sized),
    ) {
        debug_assert!(len <= 16);
        let j = self.n % BATCH;
        self.lo[j] = lo;
        self.hi[j] = hi;
        self.len[j] = len as u64;
        self.n = j + (len > 3) as usize;
        if self.n == BATCH {
            self.flush::<AVX512>(f);
        }
    }

    /// Hash the words held and hand them to `f`.
    #[inline(always)]
    fn flush<const AVX512: bool>(&mut self, f: &mut (impl FnMut(&[u64; BATCH], usize) + ?Sized)) {
        if self.n == 0 {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        let hashes = if AVX512 {
            // SAFETY: `AVX512` is true only below `avx512::count_long_words`, which runs
            // only on a CPU with the features (`count_long_words` checks).
            unsafe { avx512::hash_batch(&self.lo, &self.hi, &self.len) }
        } else {
            hash_batch(&self.lo, &self.hi, &self.len)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let hashes = hash_batch(&self.lo, &self.hi, &self.len);
        f(&hashes, self.n);
        self.n = 0;
    }
}

/// `hash64` of each lower-cased ASCII word of `len[j]` bytes (4 ≤ `len[j]` ≤ 16) held
/// little-endian, `| LOWER`, in `lo[j]` then `hi[j]`: FNV-1a steps over the bytes, each
/// kept or dropped by a mask (no branch on a word's length), eight words per step.
#[inline(always)]
fn hash_batch(lo: &[u64; BATCH], hi: &[u64; BATCH], len: &[u64; BATCH]) -> [u64; BATCH] {
    let lo = lo.map(underscores_back);
    let hi = hi.map(underscores_back);
    let mut h = [FNV_OFFSET; BATCH];
    // Every word here has at least 4 bytes.
    for k in 0..4 {
        for j in 0..BATCH {
            h[j] = (h[j] ^ ((lo[j] >> (8 * k)) & 0xff)).wrapping_mul(FNV_PRIME);
        }
    }
    let longest = len.iter().copied().max().unwrap_or(0) as usize;
    for k in 4..longest.min(16) {
        for j in 0..BATCH {
            let x = if k < 8 { lo[j] >> (8 * k) } else { hi[j] >> (8 * (k - 8)) };
            let next = (h[j] ^ (x & 0xff)).wrapping_mul(FNV_PRIME);
            let keep = ((k as u64) < len[j]) as u64;
            let keep = keep.wrapping_neg();
            h[j] = (next & keep) | (h[j] & !keep);
        }
    }
    h.map(fmix64)
}

/// `hash64` of an ASCII word's bytes, lower-cased.
fn hash_ascii_lower(word: &[u8]) -> u64 {
    let mut h = FNV_OFFSET;
    for &b in word {
        h ^= b.to_ascii_lowercase() as u64;
        h = h.wrapping_mul(FNV_PRIME);
    }
    fmix64(h)
}

/// Eight bytes of `b` from `i`, little-endian, zero-padded past the end.
#[inline]
fn load8(b: &[u8], i: usize) -> u64 {
    match b.get(i..i + 8) {
        Some(s) => u64::from_le_bytes(s.try_into().unwrap_or([0; 8])),
        None => {
            let mut buf = [0u8; 8];
            let tail = b.get(i..).unwrap_or_default();
            buf[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(buf)
        }
    }
}

/// For the 64 bytes of `b` from `i` (zero-padded past the end): bit k set where byte i + k
/// is an ASCII word character (`[A-Za-z0-9_]`), and where it is not ASCII.
#[inline(always)]
fn masks64(b: &[u8], i: usize) -> (u64, u64) {
    let rest = b.get(i..).unwrap_or_default();
    let (mut word, mut non_ascii) = (0u64, 0u64);
    let mut k = 0;
    // Whole 16-byte pieces, then the last few bytes one at a time (no copy: most blocks
    // are shorter than a window).
    while k < 64 {
        let Some(piece) = rest.get(k..k + 16) else { break };
        let (w, a) = masks16(piece);
        word |= (w as u64) << k;
        non_ascii |= (a as u64) << k;
        k += 16;
    }
    if k < 64 {
        for (j, &c) in rest.iter().enumerate().skip(k).take(16) {
            let class = WORD_BYTE[c as usize];
            word |= ((class != 0 && class != 0xff) as u64) << j;
            non_ascii |= ((c >= 0x80) as u64) << j;
        }
    }
    (word, non_ascii)
}

/// Bit j set where byte j of `s` (16 bytes) is an ASCII word character, and where it is not
/// ASCII.
#[inline(always)]
fn masks16(s: &[u8]) -> (u16, u16) {
    debug_assert!(s.len() >= 16);
    if s.len() < 16 {
        return (0, 0);
    }
    let (alnum, under, non_ascii) = crate::passages::ascii_masks16(s);
    (alnum | under, non_ascii)
}

/// Whether the non-ASCII character at byte `i` of `text` is a word character.
#[inline]
fn non_ascii_word_char_at(text: &str, i: usize) -> bool {
    text.get(i..)
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c != '\u{a0}' && !crate::normalize::is_stable_symbol(c) && is_word_char(c))
}

/// Call `f(hash64(lower-cased word))` for every word of `text` with more than 3 characters,
/// in order: the long words of [`crate::shingles::words`] (the portable path, word by word; tests).
#[cfg(test)]
pub(super) fn for_each_long_word(text: &str, mut f: impl FnMut(u64)) {
    long_word_batches::<false>(text, &mut |hashes, n| hashes.iter().take(n).for_each(|&h| f(h)));
}

/// Add the hashes of the long words of `pieces` to `counts`, piece by piece and in order;
/// `after(n)` runs after each `n` words (the scan compresses a body SHA-1 block there).
/// With AVX-512 (F, BW, DQ, VBMI, VBMI2) a 64-byte window at a time ([`avx512`]); otherwise
/// eight words per batch ([`long_word_batches`]).
pub(super) fn count_long_words<S: WordSink>(pieces: &[&str], counts: &mut S, after: impl FnMut(usize)) {
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        // SAFETY: the CPU has the features `avx512::count_long_words` is compiled for.
        unsafe { avx512::count_long_words(pieces, counts, after) };
        return;
    }
    count_pieces::<false, S>(pieces, counts, after);
}

#[inline(always)]
fn count_pieces<const AVX512: bool, S: WordSink>(
    pieces: &[&str],
    counts: &mut S,
    mut after: impl FnMut(usize),
) {
    for piece in pieces {
        long_word_batches::<AVX512>(piece, &mut |hashes, n| {
            counts.add_batch::<AVX512>(hashes, n);
            after(n);
        });
    }
}

/// Hand the hashes of `text`'s long words to `f` in order, up to [`BATCH`] at a time:
/// `f(hashes, n)` gets them in `hashes[..n]`. `AVX512` must be true only in code that runs
/// after [`avx512::available`].
#[inline(always)]
pub(super) fn long_word_batches<const AVX512: bool>(text: &str, f: &mut impl FnMut(&[u64; BATCH], usize)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut batch = WordBatch::default();
    let general = |start: usize, batch: &mut WordBatch, f: &mut dyn FnMut(&[u64; BATCH], usize)| {
        // Words keep their order: the batch's go first.
        batch.flush::<AVX512>(&mut *f);
        general_word(text, start, &mut |h, long| {
            if long {
                f(&[h; BATCH], 1)
            }
        })
    };
    let mut i = 0; // window start; always at a character boundary
    'windows: while i < n {
        let (word, non_ascii) = masks64(bytes, i);
        let mut pos = 0u32; // bytes of the window already handled
        loop {
            let starts = ((word | non_ascii) >> pos) << pos;
            if starts == 0 {
                i += 64;
                continue 'windows;
            }
            let s = starts.trailing_zeros();
            let at = i + s as usize;
            if (non_ascii >> s) & 1 == 1 {
                // A non-ASCII character: a word start only if it is a word character.
                let Some(c) = text.get(at..).and_then(|r| r.chars().next()) else { break 'windows };
                // The common symbols and the no-break space are known non-word characters;
                // others ask the Unicode tables.
                i = if non_ascii_word_char_at(text, at) {
                    general(at, &mut batch, &mut *f)
                } else {
                    at + c.len_utf8()
                };
                continue 'windows;
            }
            // An ASCII word starts at `at`; `end` is the window offset after its last byte.
            let end = s + (!(word >> s)).trailing_zeros();
            if end >= 64 {
                if s == 0 {
                    // A word of 64 bytes or more: the general path (rare).
                    i = general(at, &mut batch, &mut *f);
                } else {
                    i = at; // the word may go on: look again from its start
                }
                continue 'windows;
            }
            let len = (end - s) as usize;
            if (non_ascii >> end) & 1 == 1 && non_ascii_word_char_at(text, i + end as usize) {
                // The word goes on with non-ASCII word characters.
                i = general(at, &mut batch, &mut *f);
                continue 'windows;
            }
            if len <= 16 {
                // Bytes past the word's end are loaded too; the hash leaves them out. Short
                // words are written and dropped by the batch, without a branch.
                batch.push::<AVX512>(load8(bytes, at) | LOWER, load8(bytes, at + 8) | LOWER, len, f);
            } else {
                batch.flush::<AVX512>(f);
                f(&[hash_ascii_lower(bytes.get(at..at + len).unwrap_or_default()); BATCH], 1);
            }
            pos = end;
        }
    }
    batch.flush::<AVX512>(f);
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{WordSink, BATCH, FNV_OFFSET, FNV_PRIME};

    /// An ASCII word character (`[A-Za-z0-9_]`), as the window masks have them.
    #[inline(always)]
    fn is_ascii_word_byte(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'_'
    }

    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
            && std::arch::is_x86_feature_detected!("avx512vbmi2")
    }

    /// [`super::count_long_words`] compiled for AVX-512: each piece by [`count_piece`].
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW, DQ, VBMI and VBMI2 ([`available`]).
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vbmi,avx512vbmi2")]
    pub(super) unsafe fn count_long_words<S: WordSink>(
        pieces: &[&str],
        counts: &mut S,
        mut after: impl FnMut(usize),
    ) {
        for piece in pieces {
            // SAFETY: same features as this function.
            unsafe { count_piece(piece, counts, &mut after) };
        }
    }

    /// Bytes of a window whose words it handles: the words that start in its first
    /// `STRIDE` bytes; the 16 after them let such a word of up to 16 bytes end inside the
    /// 64 bytes loaded.
    const STRIDE: usize = 48;

    /// Bytes the scalar path takes from a window with a non-ASCII word character (a
    /// stretch per window cost 15–20 % more than the portable path on Cyrillic, Greek and
    /// CJK text; per 1,024 bytes the handover is paid once per 20 windows).
    const SCALAR_SPAN: usize = 1024;

    /// Byte b: b (positions in a window, to be compressed by a mask).
    const IOTA: [u8; 64] = {
        let mut t = [0u8; 64];
        let mut b = 0;
        while b < 64 {
            t[b] = b as u8;
            b += 1;
        }
        t
    };

    /// Byte b: b / 8 (the lane of 8 bytes it is in), and b % 8 (its place in the lane).
    const LANE_OF_BYTE: [u8; 64] = {
        let mut t = [0u8; 64];
        let mut b = 0;
        while b < 64 {
            t[b] = (b / 8) as u8;
            b += 1;
        }
        t
    };
    const BYTE_IN_LANE: [u8; 64] = {
        let mut t = [0u8; 64];
        let mut b = 0;
        while b < 64 {
            t[b] = (b % 8) as u8;
            b += 1;
        }
        t
    };

    /// The long words of one piece of text, a window of 64 bytes at a time with no branch
    /// per word: word characters as a bit mask; word starts and ends compressed into
    /// position vectors (VBMI2), paired in order into lengths; the long ones' first 16
    /// bytes gathered into two vectors of eight lanes (VBMI); hashed eight at a time
    /// ([`hash_lanes`]) and counted; the word going on past the window is hashed on its own
    /// after them. A window with a non-ASCII word character, with more than eight long words
    /// starting in it, or with a word of more than 16 bytes ending in it hands its words to
    /// the scalar path ([`super::long_word_batches`]), so the words reach `counts` in page
    /// order (the shingle sketch needs it; tested against the portable path).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW, DQ, VBMI and VBMI2 ([`available`]).
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vbmi,avx512vbmi2")]
    unsafe fn count_piece<S: WordSink>(text: &str, counts: &mut S, after: &mut impl FnMut(usize)) {
        let bytes = text.as_bytes();
        let n = bytes.len();
        // SAFETY: the tables are 64 bytes each.
        let (iota, lane_of_byte, byte_in_lane) = unsafe {
            (
                _mm512_loadu_si512(IOTA.as_ptr().cast()),
                _mm512_loadu_si512(LANE_OF_BYTE.as_ptr().cast()),
                _mm512_loadu_si512(BYTE_IN_LANE.as_ptr().cast()),
            )
        };
        let splat = |b: u8| _mm512_set1_epi8(b as i8);
        // Invariant: every word that starts before `p` has been counted (a word going on at
        // `p` started in the window before), and `p` is a character boundary or inside a
        // non-word character whose lead byte a window before has checked.
        let mut p = 0;
        while p < n {
            let rem = n - p;
            let live = if rem >= 64 { u64::MAX } else { (1u64 << rem) - 1 };
            // SAFETY: bytes p..p + min(64, rem) are inside `text`; the masked-off bytes are
            // neither read nor able to fault (AVX-512 masked loads suppress faults).
            let v = unsafe { _mm512_maskz_loadu_epi8(live, bytes.as_ptr().add(p).cast()) };
            let non_ascii = _mm512_movepi8_mask(v);
            let lower = _mm512_or_si512(v, splat(0x20));
            let letter = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(lower, splat(b'a')), splat(26));
            let digit = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, splat(b'0')), splat(10));
            let word = letter | digit | _mm512_cmpeq_epi8_mask(v, splat(b'_'));
            let carry = p > 0 && bytes.get(p - 1).is_some_and(|&b| is_ascii_word_byte(b));
            let starts = word & !((word << 1) | carry as u64) & ((1u64 << STRIDE) - 1);
            // The last byte of each word that ends inside the window (at bit 63 it may go
            // on); the first is the carried word's when one goes on at `p` (it ends within
            // 16 bytes: longer ones go to the scalar path, which ends at a word's end).
            let mut ends = word & !(word >> 1) & !(1u64 << 63);
            if carry && word & 1 == 1 {
                ends &= ends.wrapping_sub(1);
            }
            // A word starting here that goes past the window (more than 16 bytes): the last
            // one, hashed on its own below.
            let count = starts.count_ones();
            let (starts, past) = if ends.count_ones() < count {
                let last = 63 - starts.leading_zeros();
                (starts & !(1u64 << last), Some(last as usize))
            } else {
                (starts, None)
            };
            let count = starts.count_ones();
            // Non-ASCII characters that are not word characters (no-break spaces, quotes,
            // dashes, arrows, ...: nearly all of them in text) separate words as ASCII
            // punctuation does; any other sends the window to the scalar path.
            let mut fallback = false;
            // How far the scalar path goes when it takes over: past a non-ASCII word
            // character more text like it usually follows (accented or non-Latin words), so
            // a longer stretch, rather than one window's worth at a time.
            let mut scalar_span = STRIDE;
            if non_ascii != 0 {
                let mut leads = non_ascii & _mm512_cmpge_epu8_mask(v, splat(0xc0));
                while leads != 0 {
                    let at = p + leads.trailing_zeros() as usize;
                    leads &= leads - 1;
                    if super::non_ascii_word_char_at(text, at) {
                        fallback = true;
                        scalar_span = SCALAR_SPAN;
                        break;
                    }
                }
            }
            if !fallback {
                let first = if count >= 64 { u64::MAX } else { (1u64 << count) - 1 };
                let start_at = _mm512_maskz_compress_epi8(starts, iota);
                let end_at = _mm512_maskz_compress_epi8(ends, iota);
                let lens = _mm512_add_epi8(_mm512_sub_epi8(end_at, start_at), splat(1));
                let too_long = _mm512_mask_cmpgt_epu8_mask(first, lens, splat(16));
                let long = _mm512_mask_cmpge_epu8_mask(first, lens, splat(4)) & !too_long;
                let words = long.count_ones() as usize;
                // More than eight long words, or one of more than 16 bytes that ends here:
                // hashed one by one after the window's others, it would be out of page
                // order, which the shingle sketch needs (rare: the scalar path then).
                if words > 8 || too_long != 0 {
                    fallback = true;
                } else {
                    let long_at = _mm512_maskz_compress_epi8(long, start_at);
                    let long_lens = _mm512_maskz_compress_epi8(long, lens);
                    // Letters lower-cased; digits and `_` as they are.
                    let keys = _mm512_mask_mov_epi8(v, letter, lower);
                    // Lane j of `lo` is bytes at..at + 8 of long word j, `hi` the 8 after.
                    let at = _mm512_add_epi8(_mm512_permutexvar_epi8(lane_of_byte, long_at), byte_in_lane);
                    let lo = _mm512_permutexvar_epi8(at, keys);
                    let hi = _mm512_permutexvar_epi8(_mm512_add_epi8(at, splat(8)), keys);
                    let lens64 = _mm512_cvtepu8_epi64(_mm512_castsi512_si128(long_lens));
                    let live_lanes = ((1u32 << words) - 1) as u8;
                    let hashes = _mm512_maskz_mov_epi64(live_lanes, hash_lanes(lo, hi, lens64));
                    let mut out = [0u64; BATCH];
                    // SAFETY: `out` is 64 bytes.
                    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), hashes) };
                    // SAFETY: same features as this function.
                    unsafe { counts.add_window(&out, hashes, words) };
                    after(words);
                    p += STRIDE;
                    if let Some(last) = past {
                        // Its bytes up to the first non-word byte; one that is not ASCII may
                        // go on with non-ASCII word characters: the general path then.
                        let from = p - STRIDE + last;
                        let len = bytes
                            .get(from..)
                            .unwrap_or_default()
                            .iter()
                            .position(|&b| !is_ascii_word_byte(b))
                            .unwrap_or(n - from);
                        p = if bytes.get(from + len).is_some_and(|b| *b >= 0x80) {
                            super::general_word(text, from, &mut |h, long| {
                                if long {
                                    counts.add(h);
                                    after(1);
                                }
                            })
                        } else {
                            counts.add(super::hash_ascii_lower(
                                bytes.get(from..from + len).unwrap_or_default(),
                            ));
                            after(1);
                            from + len
                        };
                    }
                }
            }
            if fallback {
                // The words starting in p..p + scalar_span, each whole, by the scalar path.
                let mut q = (p + scalar_span).min(n);
                while !text.is_char_boundary(q) {
                    q += 1;
                }
                while let Some(c) = text.get(q..).and_then(|r| r.chars().next()) {
                    if !super::is_word_char(c) {
                        break;
                    }
                    q += c.len_utf8();
                }
                // `p` may be inside a non-word character that a vector window went into
                // (its lead byte was checked there): the scalar path starts after it.
                let mut from = p;
                while from < q && !text.is_char_boundary(from) {
                    from += 1;
                }
                if carry {
                    while from < q && bytes.get(from).is_some_and(|&b| is_ascii_word_byte(b)) {
                        from += 1;
                    }
                }
                super::long_word_batches::<true>(text.get(from..q).unwrap_or_default(), &mut |hashes, k| {
                    counts.add_batch::<true>(hashes, k);
                    after(k);
                });
                p = q;
            }
        }
    }

    /// [`super::hash_batch`] with the eight words in the lanes of one vector.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and DQ ([`available`]).
    #[target_feature(enable = "avx512f,avx512bw,avx512dq")]
    #[inline]
    pub(super) unsafe fn hash_batch(
        lo: &[u64; BATCH],
        hi: &[u64; BATCH],
        len: &[u64; BATCH],
    ) -> [u64; BATCH] {
        // SAFETY: each array is 64 bytes, the size of an unaligned 512-bit load.
        let (lo, hi, lens) = unsafe {
            (
                _mm512_loadu_si512(lo.as_ptr().cast()),
                _mm512_loadu_si512(hi.as_ptr().cast()),
                _mm512_loadu_si512(len.as_ptr().cast()),
            )
        };
        // `_` was 0x7F after `| LOWER`: back to 0x5F.
        let under = _mm512_set1_epi8(0x7f);
        let lo = _mm512_mask_sub_epi8(lo, _mm512_cmpeq_epi8_mask(lo, under), lo, _mm512_set1_epi8(0x20));
        let hi = _mm512_mask_sub_epi8(hi, _mm512_cmpeq_epi8_mask(hi, under), hi, _mm512_set1_epi8(0x20));
        let h = hash_lanes(lo, hi, lens);
        let mut out = [0u64; BATCH];
        // SAFETY: `out` is 64 bytes.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), h) };
        out
    }

    /// `hash64` of eight words at once: lane j holds the first 8 bytes of word j
    /// (lower-cased) in `lo`, the next 8 in `hi`, and its length (4 ≤ len ≤ 16) in `lens`;
    /// FNV-1a steps past a word's length are masked off, then `fmix64`.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and DQ ([`available`]).
    #[target_feature(enable = "avx512f,avx512dq")]
    #[inline]
    unsafe fn hash_lanes(mut lo: __m512i, mut hi: __m512i, lens: __m512i) -> __m512i {
        let prime = _mm512_set1_epi64(FNV_PRIME as i64);
        let byte = _mm512_set1_epi64(0xff);
        let mut h = _mm512_set1_epi64(FNV_OFFSET as i64);
        // Every word here has at least 4 bytes.
        for _ in 0..4 {
            h = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_and_si512(lo, byte)), prime);
            lo = _mm512_srli_epi64::<8>(lo);
        }
        // All 16 steps, every time: a loop bound that varies from window to window costs a
        // mispredicted branch, more than the steps it saves.
        for k in 4..16 {
            let keep = _mm512_cmpgt_epu64_mask(lens, _mm512_set1_epi64(k as i64));
            let src = if k < 8 { &mut lo } else { &mut hi };
            let next = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_and_si512(*src, byte)), prime);
            h = _mm512_mask_mov_epi64(h, keep, next);
            *src = _mm512_srli_epi64::<8>(*src);
        }
        // fmix64
        h = _mm512_xor_si512(h, _mm512_srli_epi64::<33>(h));
        h = _mm512_mullo_epi64(h, _mm512_set1_epi64(0xff51_afd7_ed55_8ccd_u64 as i64));
        h = _mm512_xor_si512(h, _mm512_srli_epi64::<33>(h));
        h = _mm512_mullo_epi64(h, _mm512_set1_epi64(0xc4ce_b9fe_1a85_ec53_u64 as i64));
        _mm512_xor_si512(h, _mm512_srli_epi64::<33>(h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingles::{hash64, words};

    fn expected(text: &str) -> Vec<u64> {
        words(text).filter(|w| w.chars().nth(3).is_some()).map(|w| hash64(w.as_bytes())).collect()
    }

    fn got(text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        for_each_long_word(text, |h| out.push(h));
        out
    }

    #[test]
    fn masks_hand_checked() {
        // "aZ_9 -é!": a, Z, _, 9 are word chars; ' ', '-', '!' are not; é is two non-ASCII bytes.
        let (word, non_ascii) = masks64("aZ_9 -\u{e9}!".as_bytes(), 0);
        assert_eq!(word, 0b1111);
        assert_eq!(non_ascii, 0b1100_0000);
        // Every byte value against the definition, at every offset of a window.
        for b in 0u8..=255 {
            for k in [0usize, 15, 16, 47, 63] {
                let mut buf = [b'.'; 64];
                buf[k] = b;
                let (word, non_ascii) = masks64(&buf, 0);
                assert_eq!(word, ((b.is_ascii_alphanumeric() || b == b'_') as u64) << k, "{b:#x} at {k}");
                assert_eq!(non_ascii, ((b >= 0x80) as u64) << k, "{b:#x} at {k}");
            }
        }
    }

    #[test]
    fn equals_words_and_hash64_on_random_text() {
        let palette: Vec<&str> = crate::shingles::WORD_TEST_PIECES
            .iter()
            .copied()
            .chain(["x".repeat(30).leak() as &str, " ".repeat(40).leak()])
            .collect();
        let mut x = 11u64;
        for _ in 0..20_000 {
            let len = (fmix64(x) % 24) as usize;
            let text = crate::shingles::palette_text(&palette, &mut x, len);
            assert_eq!(got(&text), expected(&text), "{text:?}");
        }
    }

    #[test]
    fn word_lengths_around_the_window_edges() {
        for len in 1..=140 {
            for pad in [0, 1, 2, 7, 8, 9, 31, 55, 56, 60, 61, 62, 63, 64, 65, 100] {
                let word: String = (0..len).map(|k| (b'a' + (k % 26) as u8) as char).collect();
                for text in [
                    format!("{}{word}", " ".repeat(pad)),
                    format!("{}{} x", " ".repeat(pad), word.to_uppercase()),
                    format!("{}{word}é", "-".repeat(pad)),
                    format!("{}{word}—y", "-".repeat(pad)),
                ] {
                    assert_eq!(got(&text), expected(&text), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn underscores_digits_and_case_at_every_position() {
        // `_` becomes 0x7F in the key and must hash as `_`; the bytes after a word (here
        // DEL, `_`-like 0x7F, and `-`) must not enter its hash.
        for len in 4..=20 {
            for at in 0..len {
                for c in ['_', '7', 'Q'] {
                    let word: String =
                        (0..len).map(|k| if k == at { c } else { (b'a' + k as u8) as char }).collect();
                    for text in
                        [word.clone(), format!("{word}\u{7f}x"), format!("{word}-{word}"), "_".repeat(len)]
                    {
                        assert_eq!(got(&text), expected(&text), "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn many_distinct_words() {
        let text: String = (0..50_000u64).map(|k| format!("w{k:x}q ")).collect();
        assert_eq!(got(&text), expected(&text));
        assert_counts_equal(&[&text]);
    }

    /// The bit counts of [`count_long_words`] (AVX-512 windows on a CPU that has them)
    /// equal those of the words' `hash64`s added one by one, and `after` sees every word.
    fn assert_counts_equal(pieces: &[&str]) {
        let mut want = BitCounts::default();
        let mut words = 0;
        for piece in pieces {
            for h in expected(piece) {
                want.add(h);
                words += 1;
            }
        }
        let want = want.finish();
        let mut have = BitCounts::default();
        let mut seen = 0;
        count_long_words(pieces, &mut have, |n| seen += n);
        assert_eq!(have.finish(), want, "{pieces:?}");
        assert_eq!(seen, words, "{pieces:?}");
        // The portable path (CPUs without AVX-512) too.
        let mut have = BitCounts::default();
        let mut seen = 0;
        count_pieces::<false, _>(pieces, &mut have, |n| seen += n);
        assert_eq!(have.finish(), want, "{pieces:?}");
        assert_eq!(seen, words, "{pieces:?}");
        // Both paths hand the words over in page order (the shingle sketch needs it).
        let in_order: Vec<u64> = pieces.iter().flat_map(|p| expected(p)).collect();
        let mut seq = Sequence::default();
        count_long_words(pieces, &mut seq, |_| {});
        assert_eq!(seq.0, in_order, "{pieces:?}");
        let mut seq = Sequence::default();
        count_pieces::<false, _>(pieces, &mut seq, |_| {});
        assert_eq!(seq.0, in_order, "{pieces:?}");
    }

    /// The hashes a word pass hands over, in the order it hands them.
    #[derive(Default)]
    struct Sequence(Vec<u64>);

    impl WordSink for Sequence {
        fn add_batch<const AVX512: bool>(&mut self, hashes: &[u64; BATCH], n: usize) {
            self.0.extend_from_slice(&hashes[..n]);
        }

        fn add(&mut self, h: u64) {
            self.0.push(h);
        }

        #[cfg(target_arch = "x86_64")]
        unsafe fn add_window(&mut self, hashes: &[u64; BATCH], _lanes: std::arch::x86_64::__m512i, n: usize) {
            assert!(hashes[n..].iter().all(|&h| h == 0));
            self.0.extend_from_slice(&hashes[..n]);
        }
    }

    #[test]
    fn sketch_of_the_pass_equals_the_reference_on_both_paths() {
        // Long ASCII words (more than 16 bytes, past the windows' lanes), accented words,
        // separators: the words must reach the sketch in page order on either path.
        let palette: Vec<&str> = crate::shingles::WORD_TEST_PIECES
            .iter()
            .copied()
            .chain(["abcdefghijklmnopq", "internationalization", "Fédération", " ", " ", "\u{a0}", "’s"])
            .collect();
        let mut x = 3u64;
        for _ in 0..1_500 {
            let len = (fmix64(x) % 400) as usize;
            let text = crate::shingles::palette_text(&palette, &mut x, len);
            let cut = text.char_indices().map(|(i, _)| i).nth(len / 3).unwrap_or(0);
            let pieces = [&text[..cut], &text[cut..]];
            for k in [4usize, 160] {
                let want = crate::shingles::long_sketch_reference(&pieces[..], k);
                let mut sink = WithSketch { counts: BitCounts::default(), sketch: SketchRoll::new(k) };
                count_long_words(&pieces, &mut sink, |_| {});
                assert_eq!(sink.sketch.finish(), want, "{pieces:?}");
                let mut sink = WithSketch { counts: BitCounts::default(), sketch: SketchRoll::new(k) };
                count_pieces::<false, _>(&pieces, &mut sink, |_| {});
                assert_eq!(sink.sketch.finish(), want, "{pieces:?}");
            }
        }
    }

    #[test]
    fn counts_equal_the_word_hashes_on_random_text() {
        // The pieces of the word test, the separators and word characters a window must
        // tell apart (no-break space, quotes, dashes; superscripts and ordinals are word
        // characters), and a word one byte past the lanes' 16.
        let palette: Vec<&str> = crate::shingles::WORD_TEST_PIECES
            .iter()
            .copied()
            .chain(["\u{a0}", "’", "—", "¶", "→", "²", "ª", "abcdefghijklmnopq"])
            .collect();
        let mut x = 5u64;
        for _ in 0..4_000 {
            let len = (fmix64(x) % 80) as usize;
            let text = crate::shingles::palette_text(&palette, &mut x, len);
            let cut = text.char_indices().map(|(i, _)| i).nth(len / 2).unwrap_or(0);
            assert_counts_equal(&[&text]);
            assert_counts_equal(&[&text[..cut], &text[cut..], ""]);
        }
        // Long texts of mostly ASCII words and multi-byte separators, with a word character
        // now and then: windows that stop inside a separator and then hand over to the
        // scalar path.
        let sparse: Vec<&str> = ["word", " ", "abc", "Longer", "–", "’", "\u{a0}", "→", ". ", "x9_"]
            .into_iter()
            .cycle()
            .take(60)
            .chain(["é", "Fédération", "日本"])
            .collect();
        for _ in 0..600 {
            let len = 50 + (fmix64(x) % 700) as usize;
            let text = crate::shingles::palette_text(&sparse, &mut x, len);
            assert_counts_equal(&[&text]);
        }
    }

    #[test]
    fn counts_equal_on_a_long_block_with_an_accented_word() {
        // From the Wikipedia sample ("Anarchism"): the scalar stretch after "Fédération".
        let text = "At first, the collectivists worked with the Marxists to push the First International in a more revolutionary socialist direction. Subsequently, the International became polarised into two camps, with Marx and Bakunin as their respective figureheads. Bakunin characterised Marx's ideas as centralist and predicted that, if a Marxist party came to power, its leaders would simply take the place of the ruling class they had fought against. Anarchist historian George Woodcock reports that \"The annual Congress of the International had not taken place in 1870 owing to the outbreak of the Paris Commune, and in 1871 the General Council called only a special conference in London. One delegate was able to attend from Spain and none from Italy, while a technical excuse – that they had split away from the Fédération Romande – was used to avoid inviting Bakunin's Swiss supporters. Thus only a tiny minority of anarchists was present, and the General Council's resolutions passed almost unanimously. Most of them were clearly directed against Bakunin and his followers.\" In 1872, the conflict climaxed with a final split between the two groups at the Hague Congress, where Bakunin and James Guillaume were expelled from the International and its headquarters were transferred to New York. In response, the federalist sections formed their own International at the St. Imier Congress, adopting a revolutionary anarchist program.";
        assert_counts_equal(&[text]);
    }

    #[test]
    fn counts_equal_around_window_and_stride_edges() {
        for len in 1..=80 {
            for pad in [0, 1, 3, 30, 44, 45, 46, 47, 48, 49, 50, 60, 62, 63, 64, 65, 95, 96, 97, 111] {
                let word: String = (0..len).map(|k| (b'a' + (k % 26) as u8) as char).collect();
                for text in [
                    format!("{}{word}", " ".repeat(pad)),
                    format!("{}{word} {word}", "x".repeat(pad)),
                    format!("{}{} x", "ab ".repeat(pad / 3), word.to_uppercase()),
                    format!("{}{word}é tail", "-".repeat(pad)),
                    format!("{}{word}’s and {word}\u{a0}more", "¶ ".repeat(pad / 3)),
                    format!("{}{word}", "abcd ".repeat(pad / 5 + 1)),
                ] {
                    assert_counts_equal(&[&text]);
                }
            }
        }
    }
}
