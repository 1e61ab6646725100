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
}
