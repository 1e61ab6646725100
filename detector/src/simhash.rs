//! Charikar's SimHash as Khan & Ali 2015 use it for crawlers.
//!
//! Khan & Ali §III.F: the key is computed from the page body with `script` and `style`
//! removed, URLs removed but anchor text kept, image tags removed; ditto's cleaner
//! ([`crate::clean`]) produces exactly that text (and also drops `<head>`, `noscript`,
//! `template`). §III.C (Galopin's library, as the paper runs it):
//! 1. a 64-bit key; V = 64 counters at 0;
//! 2. the text is split into words and only words of **more than 3 characters** are kept
//!    (ditto: lower-cased `\w+` runs, [`crate::shingles::words`], longer than 3 chars);
//! 3. every kept word (every occurrence, so a word's weight is its count) is hashed to 64
//!    bits ([`crate::shingles::hash64`]) and adds +1 to V_i where bit i of its hash is 1 and
//!    −1 where it is 0 (§II.A, figure 5);
//! 4. bit i of the SimHash is 1 iff V_i > 0.
//!
//! Similarity is the Hamming distance of two keys ([`hamming`]; §II.A), and Khan & Ali's
//! "duplication percentage" is 1 − d/64 ([`similarity`]). For unweighted feature sets the
//! expected distance is 64·θ/π with cos θ = |A∩B|/√(|A||B|) (Charikar 2002), so a Hamming
//! threshold k = 3 only admits pairs of Jaccard ≳ 0.97 (`shared/research/peer-dedup.md`):
//! ditto uses SimHash to *propose* candidates and confirms each by exact shingle overlap
//! ([`crate::overlap`]).

use crate::shingles::{fmix64, hash64, words};

/// Bits in a SimHash key (Khan & Ali §III.C: "a 64-bit binary hash key").
pub const BITS: u32 = 64;

/// Khan & Ali §III.C: only words with more than this many characters are features.
pub const MIN_WORD_CHARS_EXCLUSIVE: usize = 3;

/// SimHash of weighted 64-bit feature hashes: V_i = Σ ±w (+ where bit i is 1), bit i = 1
/// iff V_i > 0.
pub fn simhash_weighted<I: IntoIterator<Item = (u64, i64)>>(features: I) -> u64 {
    let mut v = [0i64; BITS as usize];
    for (h, w) in features {
        for (i, vi) in v.iter_mut().enumerate() {
            if (h >> i) & 1 == 1 {
                *vi += w;
            } else {
                *vi -= w;
            }
        }
    }
    v.iter().enumerate().fold(0u64, |acc, (i, &vi)| if vi > 0 { acc | (1 << i) } else { acc })
}

/// SimHash of unit-weight features.
pub fn simhash<I: IntoIterator<Item = u64>>(features: I) -> u64 {
    simhash_weighted(features.into_iter().map(|h| (h, 1)))
}

/// Khan & Ali's page SimHash of a visible text: every occurrence of every word longer than
/// 3 characters is a unit-weight feature.
pub fn page_simhash(text: &str) -> u64 {
    simhash(
        words(text)
            .filter(|w| w.chars().nth(MIN_WORD_CHARS_EXCLUSIVE).is_some())
            .map(|w| hash64(w.as_bytes())),
    )
}

/// SimHash of a shingle set (32-bit shingle hashes widened with `fmix64`), unit weights:
/// the template-free key `ditto replicas` computes from a page's content shingles.
pub fn set_simhash(shingles: &[u32]) -> u64 {
    simhash(shingles.iter().map(|&s| fmix64(s as u64 | (1 << 63))))
}

/// Hamming distance of two keys.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Khan & Ali's similarity in [0, 1]: 1 − d/64.
pub fn similarity(a: u64, b: u64) -> f64 {
    1.0 - hamming(a, b) as f64 / BITS as f64
}

/// Per-bit counts of 1s over many 64-bit values, 8 additions per value instead of 64: each
/// byte of a value selects, from a table, a word whose 8 bytes are that byte's bits; the 8
/// byte-lane counters are flushed to wide counters before any lane can reach 256.
pub(crate) struct BitCounts {
    lanes: [u64; 8],
    pending: u32,
    wide: [u32; 64],
    total: u32,
}

/// `SPREAD[b]` has byte j equal to bit j of `b`.
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            if (b >> j) & 1 == 1 {
                t[b] |= 1u64 << (8 * j);
            }
            j += 1;
        }
        b += 1;
    }
    t
};

impl Default for BitCounts {
    fn default() -> Self {
        BitCounts { lanes: [0; 8], pending: 0, wide: [0; 64], total: 0 }
    }
}

impl BitCounts {
    #[inline]
    pub(crate) fn add(&mut self, h: u64) {
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            *lane += SPREAD[((h >> (8 * k)) & 0xff) as usize];
        }
        self.pending += 1;
        self.total += 1;
        if self.pending == 255 {
            self.flush();
        }
    }

    /// `add` of `hashes[..n]`; with `AVX512`, by byte masks
    /// ([`avx512::add_bits`]).
    #[inline(always)]
    pub(crate) fn add_batch<const AVX512: bool>(&mut self, hashes: &[u64; 8], n: usize) {
        #[cfg(target_arch = "x86_64")]
        if AVX512 {
            // SAFETY: `AVX512` is true only below the word pass's AVX-512 `count_long_words`,
            // which runs only on a CPU with the features.
            unsafe { self.add_zero_padded(hashes, n, n) };
            return;
        }
        for &h in hashes.iter().take(n) {
            self.add(h);
        }
    }

    /// `add` of the first `n` of `hashes`, by byte masks over the first `lanes` (≥ `n`;
    /// hashes `n..lanes` must be 0: they add nothing).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    pub(crate) unsafe fn add_zero_padded(&mut self, hashes: &[u64; 8], n: usize, lanes: usize) {
        // No byte counter may pass 255.
        if self.pending as usize + n > 255 {
            self.flush();
        }
        // SAFETY: the caller's CPU has the features.
        unsafe { avx512::add_bits(&mut self.lanes, hashes, lanes) };
        self.pending += n as u32;
        self.total += n as u32;
    }

    fn flush(&mut self) {
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            for j in 0..8 {
                self.wide[8 * k + j] += ((*lane >> (8 * j)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.pending = 0;
    }

    /// Count of 1s per bit position (bit i of the values), and how many values.
    pub(crate) fn finish(mut self) -> ([u32; 64], u32) {
        self.flush();
        (self.wide, self.total)
    }

    /// Charikar's bit rule with unit weights over the values added: bit i is set when
    /// V_i = ones_i − (n − ones_i) > 0, i.e. 2·ones_i > n.
    pub(crate) fn simhash(self) -> u64 {
        let (ones, n) = self.finish();
        ones.iter().enumerate().fold(0u64, |acc, (i, &o)| if 2 * o > n { acc | (1 << i) } else { acc })
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// Count the bits of `hashes[..n]` into the byte counters `lanes` (byte i of the 64
    /// counts bit i): a byte mask of each hash's bits, subtracted (−1 per set bit).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    pub(super) unsafe fn add_bits(lanes: &mut [u64; 8], hashes: &[u64; 8], n: usize) {
        // SAFETY: `lanes` is 64 bytes.
        let mut acc = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) };
        for &h in hashes.iter().take(n) {
            acc = _mm512_sub_epi8(acc, _mm512_movm_epi8(h));
        }
        // SAFETY: as above.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), acc) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charikar_bits_hand_computed() {
        // Features 0b1011, 0b0011, 0b0100 (weight 1):
        // V0 = +1 +1 −1 = 1 → 1; V1 = +1 +1 −1 = 1 → 1; V2 = −1 −1 +1 = −1 → 0;
        // V3 = +1 −1 −1 = −1 → 0; bits 4..63: −3 → 0. Key = 0b0011.
        assert_eq!(simhash([0b1011, 0b0011, 0b0100]), 0b0011);
        // Weights: 0b01 ×3 vs 0b10 ×2 → V0 = 3−2 = 1, V1 = −3+2 = −1 → 0b01.
        assert_eq!(simhash_weighted([(0b01, 3), (0b10, 2)]), 0b01);
        // A tie (V_i = 0) gives 0 ("1 iff V_i > 0").
        assert_eq!(simhash([0b1, 0b0]), 0);
        assert_eq!(simhash(std::iter::empty()), 0);
        // One feature: the key is the feature's hash.
        assert_eq!(simhash([0xdead_beef_0123_4567]), 0xdead_beef_0123_4567);
    }

    #[test]
    fn hamming_and_similarity() {
        assert_eq!(hamming(0b1011, 0b0110), 3);
        assert_eq!(hamming(0, u64::MAX), 64);
        assert_eq!(similarity(5, 5), 1.0);
        assert!((similarity(0, 0b1111) - 60.0 / 64.0).abs() < 1e-12);
    }

    #[test]
    fn page_simhash_keeps_only_words_longer_than_three_chars() {
        // "the", "and", "a" are ignored: both texts have the same features.
        assert_eq!(page_simhash("the cat and a house"), page_simhash("HOUSE"));
        // Each occurrence counts: "house house zebra" ≠ "house zebra zebra" in general, and a
        // single feature gives its own hash.
        assert_eq!(page_simhash("house"), hash64(b"house"));
        // Near texts are close, unrelated texts are far (a property check, not a formula).
        let base = "content reuse detection finds pages copying other pages with small edits \
                    such as changed footers advertisements counters and timestamps"
            .repeat(3);
        let edited = format!("{base} extra footer date 2023");
        let other = "completely unrelated material about gardening vegetables tomatoes \
                     compost watering schedules seasons harvest"
            .repeat(3);
        assert!(hamming(page_simhash(&base), page_simhash(&edited)) <= 10);
        assert!(hamming(page_simhash(&base), page_simhash(&other)) > 15);
    }

    #[test]
    fn bit_counts_match_a_plain_count() {
        let mut c = BitCounts::default();
        let mut plain = [0u32; 64];
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..1000 {
            x = fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            c.add(x);
            for (i, p) in plain.iter_mut().enumerate() {
                *p += ((x >> i) & 1) as u32;
            }
        }
        c.add(u64::MAX);
        plain.iter_mut().for_each(|p| *p += 1);
        assert_eq!(c.finish(), (plain, 1001));
    }
}
