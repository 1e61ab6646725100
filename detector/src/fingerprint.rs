//! Fingerprint stage: SHA-1 of the whole body (the file hash `H(f)`, §3.1 step 1) and of
//! every normalized chunk (the chunk hash vector `H(c_f)`, §3.1 step 2; SHA-1 per §3.5).

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
pub fn fingerprint<S: AsRef<str>>(body: &[u8], blocks: &[S], norm: &Normalization) -> Fingerprints {
    fingerprint_with_file_hash(sha1(body), blocks, norm)
}

/// As [`fingerprint`], with the file hash already computed (the pipeline hashes the body
/// early to skip pages a store already has).
pub fn fingerprint_with_file_hash<S: AsRef<str>>(
    file_hash: Sha1Digest,
    blocks: &[S],
    norm: &Normalization,
) -> Fingerprints {
    let mut fp = Fingerprints { file_hash, chunks: Vec::with_capacity(blocks.len()), empty_blocks: 0 };
    for (i, block) in blocks.iter().enumerate() {
        let hash = match normalized_sha1_ascii(norm, block.as_ref()) {
            Some(h) => h,
            None => {
                let text = norm.apply(block.as_ref());
                (!text.is_empty()).then(|| chunk_hash(&text))
            }
        };
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
    let mut buf = [0u8; 4096];
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
    fn hex_round_trip() {
        let d = sha1(b"abc");
        assert_eq!(parse_hex(&hex(&d)), Some(d));
        assert_eq!(parse_hex("zz"), None);
    }
}
