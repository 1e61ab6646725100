//! The scan's SimHash word pass: the hashes of the words longer than 3 characters, the same
//! values as [`super::words`] + [`super::hash64`], found eight bytes at a time.
//!
//! Why: Khan & Ali's SimHash (§III.C) needs only words of more than 3 characters, and the
//! plain word loop (FNV-1a byte by byte, exiting at the word's end) mispredicts a branch
//! once per word. Here
//! - a word's extent is found with SIMD masks over 64 bytes (word characters
//!   `[A-Za-z0-9_]`; any byte ≥ 0x80 sends the word to the general Unicode path),
//! - short words (≤ 3 bytes, ASCII) are skipped without hashing,
//! - an ASCII word of up to 16 bytes is loaded as two `u64`s of lower-cased bytes and hashed
//!   from them in a fixed number of steps, each kept or dropped by a mask rather than a
//!   branch ([`hash_key`]), so consecutive words' hashes overlap in the CPU;
//! - longer words and words with non-ASCII characters are hashed as before.
//!
//! Until 2026-11-23 (session 7) a per-thread direct-mapped cache from word to hash stood in
//! front of the hashing. It was faster on its own, but in the scan the tokenizer runs
//! between pages and pushes its 176 KB out of the near caches: measured page by page beside
//! the bare tokenizer (debian-docs), the scan gained about 3 points without it.

use super::{fmix64, general_word, is_word_char, FNV_OFFSET, FNV_PRIME, WORD_BYTE};

/// `| LOWER` lower-cases the ASCII letters of a word and keeps its digits; it maps `_`
/// (0x5F) to 0x7F, which [`underscores_back`] undoes.
const LOWER: u64 = 0x2020_2020_2020_2020;

/// `x` with its 0x7F bytes (`_` after `| LOWER`) back to `_` (0x5F).
#[inline(always)]
fn underscores_back(x: u64) -> u64 {
    // A high bit per 0x7F byte, moved to 0x20: 0x7F ^ 0x20 = 0x5F.
    x ^ (crate::fingerprint::bytes_equal_to(x, 0x7f) >> 2)
}

/// FNV-1a steps over bytes `from..8` of `x`, each kept only where its index is below `len`:
/// a fixed count of steps, so no branch on the word's length.
#[inline(always)]
fn fnv_masked(mut h: u64, x: u64, from: usize, len: usize) -> u64 {
    for k in from..8 {
        let next = (h ^ ((x >> (8 * k)) & 0xff)).wrapping_mul(FNV_PRIME);
        let keep = ((k < len) as u64).wrapping_neg();
        h = (next & keep) | (h & !keep);
    }
    h
}

/// `hash64` of the lower-cased ASCII word of `len` bytes (4 ≤ `len` ≤ 16) held
/// little-endian, `| LOWER`, in `lo` then `hi`.
#[inline(always)]
fn hash_key(lo: u64, hi: u64, len: usize) -> u64 {
    debug_assert!((4..=16).contains(&len));
    let lo = underscores_back(lo);
    let mut h = FNV_OFFSET;
    // Every word here has at least 4 bytes.
    for k in 0..4 {
        h = (h ^ ((lo >> (8 * k)) & 0xff)).wrapping_mul(FNV_PRIME);
    }
    h = fnv_masked(h, lo, 4, len);
    if len > 8 {
        h = fnv_masked(h, underscores_back(hi), 0, len - 8);
    }
    fmix64(h)
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
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn masks16(s: &[u8]) -> (u16, u16) {
    use std::arch::x86_64::*;
    debug_assert!(s.len() >= 16);
    if s.len() < 16 {
        return (0, 0);
    }
    // SAFETY: SSE2 is part of x86_64, and the unaligned load reads `s[0..16]`, checked above.
    unsafe {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        let v = _mm_loadu_si128(s.as_ptr() as *const __m128i);
        // Unsigned range checks as signed compares after a bias: x + (0x80 − lo) < 0x80 + width.
        let lowered = _mm_or_si128(v, splat(0x20));
        let letter = _mm_cmplt_epi8(_mm_add_epi8(lowered, splat(0x80 - b'a')), splat(0x80 + 26));
        let digit = _mm_cmplt_epi8(_mm_add_epi8(v, splat(0x80 - b'0')), splat(0x80 + 10));
        let under = _mm_cmpeq_epi8(v, splat(b'_'));
        let w = _mm_or_si128(_mm_or_si128(letter, digit), under);
        (_mm_movemask_epi8(w) as u16, _mm_movemask_epi8(v) as u16)
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn masks16(s: &[u8]) -> (u16, u16) {
    let (mut word, mut non_ascii) = (0u16, 0u16);
    for (j, &c) in s.iter().take(16).enumerate() {
        let class = WORD_BYTE[c as usize];
        word |= ((class != 0 && class != 0xff) as u16) << j;
        non_ascii |= ((c >= 0x80) as u16) << j;
    }
    (word, non_ascii)
}

/// Whether the non-ASCII character at byte `i` of `text` is a word character.
#[inline]
fn non_ascii_word_char_at(text: &str, i: usize) -> bool {
    text.get(i..)
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c != '\u{a0}' && !crate::normalize::is_stable_symbol(c) && is_word_char(c))
}

/// Call `f(hash64(lower-cased word))` for every word of `text` with more than 3 characters,
/// in order: the long words of [`super::words`].
pub(super) fn for_each_long_word(text: &str, mut f: impl FnMut(u64)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let general = |start: usize, f: &mut dyn FnMut(u64)| {
        general_word(text, start, &mut |h, long| {
            if long {
                f(h)
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
                i = if non_ascii_word_char_at(text, at) { general(at, &mut f) } else { at + c.len_utf8() };
                continue 'windows;
            }
            // An ASCII word starts at `at`; `end` is the window offset after its last byte.
            let end = s + (!(word >> s)).trailing_zeros();
            if end >= 64 {
                if s == 0 {
                    // A word of 64 bytes or more: the general path (rare).
                    i = general(at, &mut f);
                } else {
                    i = at; // the word may go on: look again from its start
                }
                continue 'windows;
            }
            let len = (end - s) as usize;
            if (non_ascii >> end) & 1 == 1 && non_ascii_word_char_at(text, i + end as usize) {
                // The word goes on with non-ASCII word characters.
                i = general(at, &mut f);
                continue 'windows;
            }
            if len > 3 {
                let h = if len <= 16 {
                    // Bytes past the word's end are loaded too; `hash_key` leaves them out.
                    let lo = load8(bytes, at) | LOWER;
                    let hi = if len > 8 { load8(bytes, at + 8) | LOWER } else { 0 };
                    hash_key(lo, hi, len)
                } else {
                    hash_ascii_lower(bytes.get(at..at + len).unwrap_or_default())
                };
                f(h);
            }
            pos = end;
        }
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
        let palette = [
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
            "x".repeat(30).leak(),
            " ".repeat(40).leak(),
        ];
        let mut x = 11u64;
        for _ in 0..20_000 {
            let len = (fmix64(x) % 24) as usize;
            let text: String = (0..len)
                .map(|_| {
                    x = fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
                    palette[(x % palette.len() as u64) as usize]
                })
                .collect();
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
    }
}
