//! Fingerprint stage: SHA-1 of the whole body (the file hash `H(f)`, §3.1 step 1) and of
//! every normalized chunk (the chunk hash vector `H(c_f)`, §3.1 step 2; SHA-1 per §3.5).
//!
//! The scan runs these fused with the near-replica features in one pass over a page's
//! blocks: [`scan`] (its SimHash word pass: `long_words`).

mod long_words;
pub mod scan;

use crate::blocks::BlockList;
use sha1::{Digest, Sha1};

use crate::normalize::Normalization;

/// A 20-byte SHA-1 digest.
pub type Sha1Digest = [u8; 20];

/// One chunk of a page: its hash and the index of the text block it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkFingerprint {
    pub hash: Sha1Digest,
    /// Index into the cleaned document's blocks (for evidence).
    pub block: u32,
}

/// The chunk hash vector and file hash of one page.
///
/// Order and duplicates are kept: "the same hash value can appear multiple times if there
/// are duplicate paragraphs in the same file" (§3.1 step 2), and `contains` counts them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprints {
    /// SHA-1 of the whole body bytes as received (the paper's file hash).
    pub file_hash: Sha1Digest,
    pub chunks: Vec<ChunkFingerprint>,
    /// Blocks whose normalized text was empty. The paper's most common stop chunk is the
    /// empty paragraph (§3.4.2); we drop those before hashing and count them here, which is
    /// the same as removing them as stop chunks.
    pub empty_blocks: u32,
    /// Non-empty chunks left without a SHA-1 because no lookup of the run could contain
    /// them (too short for the label set, certainly not a stop chunk; see
    /// [`crate::matching::ChunkLookup::min_member_bytes`]). They count in `|H(c_f)|` as
    /// unlabeled chunks, exactly as their hashes would have.
    pub unhashed: u32,
}

/// SHA-1 of arbitrary bytes.
pub fn sha1(bytes: &[u8]) -> Sha1Digest {
    Sha1::digest(bytes).into()
}

/// SHA-1 of one already-normalized chunk's UTF-8 bytes.
pub fn chunk_hash(normalized: &str) -> Sha1Digest {
    sha1(normalized.as_bytes())
}

/// Normalize and hash every block; hash the body.
pub fn fingerprint<B: BlockList + ?Sized>(body: &[u8], blocks: &B, norm: &Normalization) -> Fingerprints {
    fingerprint_with_file_hash(sha1(body), blocks, norm)
}

/// As [`fingerprint`], with the file hash already computed (the pipeline hashes the body
/// early to skip pages a store already has).
pub fn fingerprint_with_file_hash<B: BlockList + ?Sized>(
    file_hash: Sha1Digest,
    blocks: &B,
    norm: &Normalization,
) -> Fingerprints {
    let mut fp = Fingerprints {
        file_hash,
        chunks: Vec::with_capacity(blocks.block_count()),
        empty_blocks: 0,
        unhashed: 0,
    };
    // The default normalization (whitespace collapsed and trimmed) takes the folded fast
    // path for ASCII chunks; others stream the ASCII bytes; non-ASCII chunks normalize in full.
    let folded = norm.collapse_whitespace && norm.trim;
    let mut scratch = Vec::new();
    for (i, block) in blocks.blocks().enumerate() {
        let ascii = if folded {
            normalized_ascii_folded(norm, block, &mut scratch).map(|b| (!b.is_empty()).then(|| sha1(b)))
        } else {
            normalized_sha1_ascii(norm, block)
        };
        let hash = ascii.unwrap_or_else(|| {
            let text = norm.apply(block);
            (!text.is_empty()).then(|| chunk_hash(&text))
        });
        match hash {
            Some(hash) => fp.chunks.push(ChunkFingerprint { hash, block: i as u32 }),
            None => fp.empty_blocks += 1,
        }
    }
    fp
}

/// SHA-1 of `norm.apply(text)` for ASCII text, streamed into the hasher without building
/// the normalized string (the hot path of the fingerprint stage). `None` when the text is
/// not ASCII (the caller normalizes in full); `Some(None)` when the result is empty. For
/// ASCII, NFKC changes nothing and `char::is_whitespace` is exactly TAB, LF, VT, FF, CR and
/// space, so this gives the same bytes as [`Normalization::apply`] (tested below).
pub(crate) fn normalized_sha1_ascii(norm: &Normalization, text: &str) -> Option<Option<Sha1Digest>> {
    if !text.is_ascii() {
        return None;
    }
    let is_ws = |b: u8| matches!(b, b'\t'..=b'\r' | b' ');
    let src = if norm.trim { text.trim_matches(|c: char| c.is_ascii() && is_ws(c as u8)) } else { text };
    let bytes = src.as_bytes();
    if bytes.is_empty() {
        return Some(None);
    }
    let needs_lower = norm.lowercase && bytes.iter().any(u8::is_ascii_uppercase);
    let needs_collapse = norm.collapse_whitespace
        && (bytes.windows(2).any(|w| is_ws(w[0]) && (w[0] != b' ' || is_ws(w[1])))
            || bytes.last().is_some_and(|&b| is_ws(b) && b != b' '));
    if !needs_lower && !needs_collapse {
        return Some(Some(sha1(bytes)));
    }
    let mut hasher = Sha1::new();
    // A small stack buffer: it is cleared once per chunk, so it must stay cheap to clear.
    let mut buf = [0u8; 256];
    let mut n = 0;
    let mut in_ws = false;
    for &b in bytes {
        let out = if norm.collapse_whitespace && is_ws(b) {
            if in_ws {
                continue;
            }
            in_ws = true;
            b' '
        } else {
            in_ws = false;
            if norm.lowercase {
                b.to_ascii_lowercase()
            } else {
                b
            }
        };
        buf[n] = out;
        n += 1;
        if n == buf.len() {
            hasher.update(&buf[..]);
            n = 0;
        }
    }
    hasher.update(&buf[..n]);
    Some(Some(hasher.finalize().into()))
}

/// Whether [`append_folded_ascii`] may take its AVX-512 path on this CPU (checked once per
/// page by the caller).
pub(crate) fn fold_avx512_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Append the bytes of `norm.apply(text)` to `out` for ASCII `text` under a normalization
/// that collapses and trims whitespace; `false`, with `out` as it was, when `text` is not
/// ASCII. With `avx512` (from [`fold_avx512_available`]) 64 bytes at a time: whitespace as
/// a bit mask, every whitespace byte after another dropped and the rest made spaces,
/// upper-case letters lowered, the kept bytes compressed into place; otherwise
/// [`normalized_ascii_folded`] through `scratch`. Equal to [`Normalization::apply`]
/// (tested, both paths).
#[inline]
pub(crate) fn append_folded_ascii(
    norm: &Normalization,
    text: &str,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    avx512: bool,
) -> bool {
    debug_assert!(norm.collapse_whitespace && norm.trim);
    #[cfg(target_arch = "x86_64")]
    if avx512 {
        // SAFETY: `avx512` comes from `fold_avx512_available`: the CPU has the features.
        return unsafe { fold_avx512::append(text.as_bytes(), norm.lowercase, out) };
    }
    let _ = avx512;
    match normalized_ascii_folded(norm, text, scratch) {
        Some(bytes) => {
            out.extend_from_slice(bytes);
            true
        }
        None => false,
    }
}

#[cfg(target_arch = "x86_64")]
mod fold_avx512 {
    use std::arch::x86_64::*;

    /// [`super::append_folded_ascii`]'s AVX-512 path.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VBMI2.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
    pub(super) unsafe fn append(src: &[u8], lowercase: bool, out: &mut Vec<u8>) -> bool {
        let splat = |b: u8| _mm512_set1_epi8(b as i8);
        let at = out.len();
        // Every 64-byte store below starts at most `src.len()` bytes past `at`.
        out.reserve(src.len() + 64);
        let mut written = 0usize;
        // Whitespace before the text counts as a run already folded: leading whitespace
        // is dropped (the trim).
        let mut after_space = true;
        let mut i = 0;
        while i < src.len() {
            let rest = src.len() - i;
            let live = if rest >= 64 { u64::MAX } else { (1u64 << rest) - 1 };
            // SAFETY: bytes i..i + min(64, rest) are inside `src`; masked-off bytes are not
            // read and cannot fault.
            let v = unsafe { _mm512_maskz_loadu_epi8(live, src.as_ptr().add(i).cast()) };
            if _mm512_movepi8_mask(v) != 0 {
                return false; // not ASCII: `out` is left at `at` (its length never moved)
            }
            // TAB, LF, VT, FF, CR and space: the ASCII characters that are whitespace.
            let ws = (_mm512_cmpeq_epi8_mask(v, splat(b' '))
                | _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, splat(b'\t')), splat(5)))
                & live;
            let keep = live & !(ws & ((ws << 1) | after_space as u64));
            after_space = (ws >> 63) & 1 == 1;
            let mut bytes = _mm512_mask_mov_epi8(v, ws, splat(b' '));
            if lowercase {
                let upper = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, splat(b'A')), splat(26));
                bytes = _mm512_mask_add_epi8(bytes, upper, bytes, splat(0x20));
            }
            let packed = _mm512_maskz_compress_epi8(keep, bytes);
            // SAFETY: `at + written + 64 <= at + i + 64 <= at + src.len() + 64`, inside
            // the capacity reserved above; the bytes past the kept ones are overwritten by
            // the next store or left beyond the length set below.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(at + written).cast(), packed) };
            written += keep.count_ones() as usize;
            i += 64;
        }
        // SAFETY: bytes at..at + written were written above; the capacity covers them.
        unsafe { out.set_len(at + written) };
        // A whitespace run at the end was folded to one space: the trim drops it.
        if out.len() > at && out.last() == Some(&b' ') {
            out.pop();
        }
        true
    }
}

/// The bytes of `norm.apply(text)` for ASCII `text` under a normalization that collapses
/// and trims whitespace (the default), built in `scratch` (or borrowed from `text` when
/// nothing changes); `None` when the text is not ASCII. The fingerprint stage's hot path:
/// whitespace that needs folding is found eight bytes at a time, the stretches between are
/// copied whole and lower-cased in bulk. Equal to [`Normalization::apply`] (tested).
pub(crate) fn normalized_ascii_folded<'a>(
    norm: &Normalization,
    text: &'a str,
    scratch: &'a mut Vec<u8>,
) -> Option<&'a [u8]> {
    debug_assert!(norm.collapse_whitespace && norm.trim);
    if !text.is_ascii() {
        return None;
    }
    let is_ws = |b: u8| matches!(b, b'\t'..=b'\r' | b' ');
    let all = text.as_bytes();
    let Some(first) = all.iter().position(|&b| !is_ws(b)) else { return Some(&[]) };
    let last = all.iter().rposition(|&b| !is_ws(b)).unwrap_or(first);
    let src = &all[first..=last];
    // After trimming, a whitespace run needs folding unless it is one space: find each
    // control character (TAB..CR are below 0x20) or space followed by a space.
    let mut seg = 0; // src[..seg] is already in `scratch`
    let mut folded = false;
    let mut i = 0;
    let n = src.len();
    while i < n {
        let hit = if i + 9 <= n {
            let x = u64::from_le_bytes(src[i..i + 8].try_into().unwrap_or([b'a'; 8]));
            let y = u64::from_le_bytes(src[i + 1..i + 9].try_into().unwrap_or([b'a'; 8]));
            let bad = ascii_bad_ws_mask(x, y);
            if bad == 0 {
                i += 8;
                continue;
            }
            i + (bad.trailing_zeros() / 8) as usize
        } else {
            let b = src[i];
            if b < b' ' || (b == b' ' && src.get(i + 1).is_some_and(|&c| is_ws(c))) {
                i
            } else {
                i += 1;
                continue;
            }
        };
        if !is_ws(src[hit]) {
            // A control character that is not whitespace stays as it is.
            i = hit + 1;
            continue;
        }
        // The run may have begun with spaces before `hit`.
        let mut start = hit;
        while start > seg && src[start - 1] == b' ' {
            start -= 1;
        }
        let mut end = hit + 1;
        while end < n && is_ws(src[end]) {
            end += 1;
        }
        if !folded {
            scratch.clear();
            folded = true;
        }
        scratch.extend_from_slice(&src[seg..start]);
        scratch.push(b' ');
        seg = end;
        i = end;
    }
    let lower = norm.lowercase && src.iter().fold(false, |acc, b| acc | b.is_ascii_uppercase());
    if !folded {
        if !lower {
            return Some(src);
        }
        scratch.clear();
    }
    scratch.extend_from_slice(&src[seg..]);
    if lower {
        scratch.make_ascii_lowercase();
    }
    Some(&scratch[..])
}

/// The bytes of `norm.apply(text)` (whitespace collapsed and trimmed) for text whose
/// characters NFKC leaves alone one by one, built in `scratch`; `None` when a character
/// needs the general path (the caller normalizes in full). About a fifth of the blocks of
/// real HTML pages are not ASCII, mostly because of `&nbsp;`, curly quotes, dashes, arrows,
/// `¶` or a few accented letters; this keeps them off the general path.
///
/// Why it equals `apply`:
/// - the common symbols ([`crate::normalize::is_stable_symbol`]) are NFKC-stable, have no
///   lower-case mapping, are not whitespace and compose with nothing;
/// - every Unicode whitespace character folds into the surrounding run: NFKC maps it to
///   whitespace (U+00A0 and the fixed-width spaces to a space), and the fold makes any
///   whitespace one space;
/// - any other character must be a starter with NFKC quick check "yes"
///   ([`crate::normalize::simple_char_lowercase`]): then no neighbour composes with it and
///   NFKC leaves the text alone (UAX #15 §9), and lower-casing maps it on its own.
///
/// (Tested against `apply` on random text and on 460 real pages.)
pub(crate) fn normalized_common_folded<'a>(
    norm: &Normalization,
    text: &str,
    scratch: &'a mut Vec<u8>,
) -> Option<&'a [u8]> {
    debug_assert!(norm.collapse_whitespace && norm.trim);
    scratch.clear();
    let bytes = text.as_bytes();
    // A whitespace run since the last kept character: one space if more text follows.
    let mut gap = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            // For ASCII, `char::is_whitespace` is TAB, LF, VT, FF, CR and space.
            if matches!(b, b'\t'..=b'\r' | b' ') {
                gap = true;
                i += 1;
                continue;
            }
            if gap && !scratch.is_empty() {
                scratch.push(b' ');
            }
            gap = false;
            // ASCII text up to the next whitespace that needs folding or non-ASCII byte is
            // copied whole (single spaces between words included); ASCII is lower-cased at
            // the end, in one pass.
            let end = ascii_run_end(bytes, i + 1);
            scratch.extend_from_slice(bytes.get(i..end)?);
            i = end;
            continue;
        }
        let c = text.get(i..).and_then(|r| r.chars().next())?;
        i += c.len_utf8();
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if gap && !scratch.is_empty() {
            scratch.push(b' ');
        }
        gap = false;
        // The common symbols skip the table lookups; any other character must be one NFKC
        // leaves alone, lower-cased as `apply` would.
        let lower = if crate::normalize::is_stable_symbol(c) {
            None
        } else {
            Some(crate::normalize::simple_char_lowercase(c)?)
        };
        let mut buf = [0u8; 4];
        match lower {
            Some(lower) if norm.lowercase => {
                for l in lower {
                    scratch.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
                }
            }
            _ => scratch.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
    if norm.lowercase {
        // Only ASCII bytes change; those of multi-byte characters are all >= 0x80.
        scratch.make_ascii_lowercase();
    }
    Some(&scratch[..])
}

/// The end of the ASCII run from `from`: the first position at or after it holding a
/// non-ASCII byte, a control character, or a space that is followed by whitespace, a
/// non-ASCII byte or the end of the text (a space the fold may change). Found eight bytes at
/// a time.
#[inline]
fn ascii_run_end(bytes: &[u8], from: usize) -> usize {
    let high = |v: u64| v & HIGH_BITS;
    let n = bytes.len();
    let mut i = from;
    while i + 9 <= n {
        let x = u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0x80; 8]));
        let y = u64::from_le_bytes(bytes[i + 1..i + 9].try_into().unwrap_or([0x80; 8]));
        let stop =
            high(x) | control_bytes(x) | (space_bytes(x) & (high(y) | control_bytes(y) | space_bytes(y)));
        if stop != 0 {
            return i + (stop.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n {
        let b = bytes[i];
        let special = |c: u8| c >= 0x80 || c <= b' ';
        if !(b' '..0x80).contains(&b) || (b == b' ' && bytes.get(i + 1).is_none_or(|&c| special(c))) {
            return i;
        }
        i += 1;
    }
    n
}

/// For eight ASCII bytes `x` (byte k = src[i + k]) and the same shifted by one (`y`: byte
/// k = src[i + k + 1]): a mask with the high bit of byte k set where src[i + k] is below
/// 0x20 (a control character: TAB, LF, VT, FF and CR are whitespace) or is a space followed
/// by a space.
#[inline]
fn ascii_bad_ws_mask(x: u64, y: u64) -> u64 {
    control_bytes(x) | (space_bytes(x) & space_bytes(y))
}

const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
const LOW_7_BITS: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The high bit of each byte of `v` that is below 0x20 (a control character). Exact for any
/// byte values: `(b & 0x7f) + 0x60` reaches 0x80 exactly when `b & 0x7f` >= 0x20, and no
/// carry crosses a byte.
#[inline]
fn control_bytes(v: u64) -> u64 {
    !(((v & LOW_7_BITS).wrapping_add(0x6060_6060_6060_6060)) | v) & HIGH_BITS
}

/// The high bit of each byte of `v` that is a space.
#[inline]
fn space_bytes(v: u64) -> u64 {
    bytes_equal_to(v, b' ')
}

/// The high bit of each byte of `v` equal to `byte`: the exact zero-byte test of
/// `v ^ byte…` (no carry crosses a byte).
#[inline(always)]
pub(crate) fn bytes_equal_to(v: u64, byte: u8) -> u64 {
    let t = v ^ (u64::from(byte) * 0x0101_0101_0101_0101);
    !(((t & LOW_7_BITS).wrapping_add(LOW_7_BITS)) | t | LOW_7_BITS)
}

/// Lower-case hex of a digest.
pub fn hex(d: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(d.len() * 2);
    for b in d {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// Parse 40 hex digits into a digest.
pub fn parse_hex(s: &str) -> Option<Sha1Digest> {
    let s = s.trim().as_bytes();
    if s.len() != 40 {
        return None;
    }
    let mut out = [0u8; 20];
    for (i, pair) in s.chunks(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out[i] = (hi * 16 + lo) as u8;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_known_vectors() {
        // FIPS 180 test vector.
        assert_eq!(hex(&sha1(b"abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(hex(&chunk_hash("")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    }

    #[test]
    fn chunks_are_normalized_before_hashing_and_duplicates_kept() {
        let blocks = ["Hello  World", "", "hello world", "   ", "Other"];
        let fp = fingerprint(b"<p>x</p>", &blocks, &Normalization::default());
        assert_eq!(fp.chunks.len(), 3);
        assert_eq!(fp.empty_blocks, 2);
        assert_eq!(fp.chunks[0].hash, fp.chunks[1].hash);
        assert_eq!(fp.chunks[0].hash, chunk_hash("hello world"));
        assert_eq!(fp.chunks[2].block, 4);
        assert_eq!(fp.file_hash, sha1(b"<p>x</p>"));
    }

    #[test]
    fn streamed_ascii_hash_equals_hash_of_applied_normalization() {
        let samples = [
            "",
            " ",
            "\t\n",
            "Hello  World",
            "  Leading and trailing \t ",
            "a\tb\nc\r\nd\x0be\x0cf",
            "ALL CAPS\n\nNEXT",
            "single spaces only",
            "x ",
            " x",
            "ends with tab\t",
            "ünïcode falls back",
        ];
        let long = "Word ".repeat(2000) + "\n\nEND  ";
        for bits in 0..16u8 {
            let norm = Normalization {
                nfkc: bits & 1 != 0,
                lowercase: bits & 2 != 0,
                collapse_whitespace: bits & 4 != 0,
                trim: bits & 8 != 0,
            };
            for text in samples.iter().copied().chain([long.as_str()]) {
                let applied = norm.apply(text);
                let want = (!applied.is_empty()).then(|| chunk_hash(&applied));
                match normalized_sha1_ascii(&norm, text) {
                    Some(got) => assert_eq!(got, want, "{norm} on {text:?}"),
                    None => assert!(!text.is_ascii()),
                }
            }
        }
    }

    #[test]
    fn folded_ascii_equals_applied_normalization() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let alphabet = b"aB c\t\n\r\x0b\x0c  xY\x01\x1b_9.";
        let mut scratch = Vec::new();
        for len in 0..200usize {
            for _ in 0..40 {
                let text: String = (0..len)
                    .map(|_| alphabet[(xorshift(&mut x) % alphabet.len() as u64) as usize] as char)
                    .collect();
                for norm in [
                    Normalization::default(),
                    Normalization { lowercase: false, ..Normalization::default() },
                    Normalization { nfkc: false, ..Normalization::default() },
                ] {
                    let want = norm.apply(&text);
                    let got = normalized_ascii_folded(&norm, &text, &mut scratch).unwrap();
                    assert_eq!(got, want.as_bytes(), "{norm} {text:?}");
                    for avx512 in [false, fold_avx512_available()] {
                        let mut out = b"before".to_vec();
                        assert!(append_folded_ascii(&norm, &text, &mut out, &mut scratch, avx512));
                        assert_eq!(&out[6..], want.as_bytes(), "{norm} {text:?} avx512 {avx512}");
                        assert_eq!(&out[..6], b"before");
                    }
                }
            }
        }
        assert_eq!(normalized_ascii_folded(&Normalization::default(), "é", &mut scratch), None);
        // Not ASCII anywhere in a long text: `false`, and `out` as it was.
        for at in [0, 1, 63, 64, 65, 130] {
            let mut text = "Ab  c\t".repeat(30);
            text.insert(at, 'é');
            for avx512 in [false, fold_avx512_available()] {
                let mut out = b"kept".to_vec();
                assert!(!append_folded_ascii(
                    &Normalization::default(),
                    &text,
                    &mut out,
                    &mut scratch,
                    avx512
                ));
                assert_eq!(out, b"kept");
            }
        }
    }

    /// One xorshift64 step: the tests' random text.
    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn common_folded_equals_applied_normalization() {
        let palette = [
            "a",
            "B",
            " ",
            "\t",
            "\n",
            "\u{a0}",
            "\u{a0}\u{a0}",
            "¶",
            "’",
            "”",
            "“",
            "→",
            "—",
            "§",
            "»",
            "–",
            "‘",
            "©",
            "«",
            "•",
            "\u{200b}",
            "\x01",
            "x_9",
            ".",
            "Word",
            "ab cd",
            " AB",
            "Ab Cd Ef Gh ",
            "  ",
            " \x01",
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut scratch = Vec::new();
        let mut taken = 0;
        for _ in 0..60_000 {
            let len = (xorshift(&mut x) % 14) as usize;
            let text: String =
                (0..len).map(|_| palette[(xorshift(&mut x) % palette.len() as u64) as usize]).collect();
            for norm in [
                Normalization::default(),
                Normalization { lowercase: false, ..Normalization::default() },
                Normalization { nfkc: false, ..Normalization::default() },
            ] {
                let want = norm.apply(&text);
                if let Some(got) = normalized_common_folded(&norm, &text, &mut scratch) {
                    assert_eq!(got, want.as_bytes(), "{norm} {text:?}");
                    taken += 1;
                }
            }
        }
        assert!(taken > 20_000, "{taken}");
        // Text without the fallback characters always takes the fast path.
        for text in ["a\u{a0}b  “é” — ā İ ß ا", "\u{3000}x\u{2003}y\u{85}", "Ω Å °"] {
            let got =
                normalized_common_folded(&Normalization::default(), text, &mut scratch).map(<[u8]>::to_vec);
            assert_eq!(got.as_deref(), Some(Normalization::default().apply(text).as_bytes()), "{text:?}");
        }
        // Characters NFKC changes, combining marks, titlecase letters and Σ fall back.
        for text in ["a\u{301}", "…", "ﬁ", "Σ", "ǅ", "\u{2126}", "\u{212b}", "Ⅸ", "ⓐ", "\u{1161}"] {
            assert_eq!(
                normalized_common_folded(&Normalization::default(), text, &mut scratch),
                None,
                "{text:?}"
            );
        }
    }

    #[test]
    fn hex_round_trip() {
        let d = sha1(b"abc");
        assert_eq!(parse_hex(&hex(&d)), Some(d));
        assert_eq!(parse_hex("zz"), None);
    }
}
