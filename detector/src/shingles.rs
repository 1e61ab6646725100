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

mod long_words;

use crate::blocks::BlockList;
use std::borrow::Cow;

use crate::fingerprint::{sha1, ChunkFingerprint, Fingerprints, Sha1Digest};
use crate::normalize::Normalization;
use crate::sha1_pair::{digest_beside, BodySha1};

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
    /// Word-[`SHINGLE_WORDS`]-shingle set ([`shingle_set`]).
    pub shingles: Vec<u32>,
}

/// SimHash, text hash and shingle set of a page's cleaned blocks.
///
/// One pass over the words of all blocks feeds both the SimHash (bit counts of the word
/// hashes of words longer than 3 chars) and the shingles; the text hash streams the
/// normalized text into SHA-1. The result equals composing [`crate::simhash::page_simhash`],
/// [`text_hash`] and [`shingle_set`] over [`visible_text`] (tested): block boundaries are
/// never inside a word because the join adds a space.
pub fn replica_features<B: BlockList + ?Sized>(blocks: &B, norm: &Normalization) -> ReplicaFeatures {
    let (simhash, shingles) = word_features(blocks);
    ReplicaFeatures { simhash, text_hash: text_hash(blocks, norm), shingles }
}

/// The fingerprint stage's whole per-page work: the chunk fingerprints
/// ([`crate::fingerprint::fingerprint_with_file_hash`]) and the [`replica_features`], with
/// each block normalized once for both its chunk hash and the text hash.
///
/// Why one pass is the same: with whitespace collapsed and trimmed, `norm.apply` of the
/// visible text (blocks joined by one space) is the non-empty normalized blocks joined by
/// one space. A space is a normalization boundary for NFKC (a starter that composes with
/// nothing, UAX #15), is not case-ignorable (so it ends the final-sigma context of
/// lower-casing), and whitespace folding and trimming only act on whitespace runs, which the
/// join merges. Other normalizations take the two separate functions (tested equal).
pub fn fingerprint_with_features<B: BlockList + ?Sized>(
    file_hash: Sha1Digest,
    blocks: &B,
    norm: &Normalization,
) -> (Fingerprints, ReplicaFeatures) {
    fused_fingerprint(FileHash::Known(file_hash), blocks, norm, |_| true, true)
}

/// The scan's fingerprint stage: as [`fingerprint_with_features`], but
/// - a chunk's SHA-1 is computed only when `needs_digest(normalized bytes)` says the match
///   stage can use it ([`crate::matching::digest_needed`]); the other non-empty chunks are
///   counted in [`Fingerprints::unhashed`] (only the fused path, whitespace collapsed and
///   trimmed, skips; other normalizations hash every chunk);
/// - the shingle set is left empty. It is needed only by `ditto replicas`, which derives it
///   from the page's stored text ([`shingle_set_of_blocks`], the same words, so the same
///   set); the SimHash (Khan & Ali: computed for every page, used live) and the text hash
///   are computed here.
pub fn fingerprint_for_scan<B: BlockList + ?Sized>(
    file_hash: Sha1Digest,
    blocks: &B,
    norm: &Normalization,
    needs_digest: impl Fn(&[u8]) -> bool,
) -> (Fingerprints, ReplicaFeatures) {
    fused_fingerprint(FileHash::Known(file_hash), blocks, norm, needs_digest, false)
}

/// [`fingerprint_for_scan`] with the file hash computed here: the SHA-1 of `body`, whose
/// blocks are compressed beside those of the text and chunk hashes
/// ([`crate::sha1_pair`]). The same digest as [`sha1`]`(body)`, for less than the cost of
/// computing it apart.
pub fn fingerprint_for_scan_of_body<B: BlockList + ?Sized>(
    body: &[u8],
    blocks: &B,
    norm: &Normalization,
    needs_digest: impl Fn(&[u8]) -> bool,
) -> (Fingerprints, ReplicaFeatures) {
    fused_fingerprint(FileHash::OfBody(body), blocks, norm, needs_digest, false)
}

/// The file hash a fingerprint gets: known already, or to be computed from the body.
enum FileHash<'a> {
    Known(Sha1Digest),
    OfBody(&'a [u8]),
}

fn fused_fingerprint<B: BlockList + ?Sized>(
    file_hash: FileHash,
    blocks: &B,
    norm: &Normalization,
    needs_digest: impl Fn(&[u8]) -> bool,
    with_shingles: bool,
) -> (Fingerprints, ReplicaFeatures) {
    if !(norm.collapse_whitespace && norm.trim) {
        // SimHash always; the shingle set only when asked for (not computed and dropped).
        let (simhash, shingles) =
            if with_shingles { word_features(blocks) } else { (simhash_of_blocks(blocks), Vec::new()) };
        let features = ReplicaFeatures { simhash, text_hash: text_hash(blocks, norm), shingles };
        let file_hash = match file_hash {
            FileHash::Known(h) => h,
            FileHash::OfBody(body) => sha1(body),
        };
        return (crate::fingerprint::fingerprint_with_file_hash(file_hash, blocks, norm), features);
    }
    // Every SHA-1 below runs beside the body's (an empty body when its hash is known).
    let (known, mut body) = match file_hash {
        FileHash::Known(h) => (Some(h), BodySha1::new(&[])),
        FileHash::OfBody(b) => (None, BodySha1::new(b)),
    };
    let mut fp = Fingerprints {
        file_hash: [0; 20],
        chunks: Vec::with_capacity(blocks.block_count()),
        empty_blocks: 0,
        unhashed: 0,
    };
    let mut scratch: Vec<u8> = Vec::new();
    // The normalized visible text: the non-empty normalized blocks joined by one space. Its
    // SHA-1 is the text hash; each chunk's SHA-1 is taken from its slice. Built whole, so a
    // page's many short blocks (table cells, list items) cost one SHA-1 stream and one word
    // scan instead of a call of each per block.
    let mut text: Vec<u8> = Vec::with_capacity(blocks.text_bytes() + blocks.block_count());
    // SimHash words (when the shingle set is not asked for; it takes its own pass below): an
    // ASCII block's normalized text has the same words as the block (lower-casing keeps
    // word boundaries, folded whitespace is no word character, and the word hash is of the
    // lower-cased word), so runs of ASCII blocks are scanned in `text`; any other block is
    // scanned in its raw form, as `simhash_of_blocks` does. The scan runs after the SHA-1s
    // (below), over these pieces in page order.
    let mut word_pieces: Vec<WordPiece> = Vec::new();
    let mut words_from = 0;
    let avx512 = crate::fingerprint::fold_avx512_available();
    for (i, block) in blocks.blocks().enumerate() {
        // Each block's normalized text goes onto `text` after the space that joins it to the
        // block before; an ASCII block (most of them) is normalized straight there.
        let mark = text.len();
        if mark > 0 {
            text.push(b' ');
        }
        let start = text.len();
        let ascii = crate::fingerprint::append_folded_ascii(norm, block, &mut text, &mut scratch, avx512);
        if !ascii {
            text.truncate(start);
            if !with_shingles {
                word_pieces.push(WordPiece::Text(words_from, mark));
                word_pieces.push(WordPiece::Raw(block));
            }
            match crate::fingerprint::normalized_common_folded(norm, block, &mut scratch) {
                Some(bytes) => text.extend_from_slice(bytes),
                None => text.extend_from_slice(norm.apply(block).as_bytes()),
            }
        }
        if text.len() == start {
            text.truncate(mark);
            fp.empty_blocks += 1;
        } else if needs_digest(text.get(start..).unwrap_or_default()) {
            let chunk = text.get(start..).unwrap_or_default();
            fp.chunks.push(ChunkFingerprint { hash: digest_beside(chunk, &mut body), block: i as u32 });
        } else {
            fp.unhashed += 1;
        }
        if !ascii {
            words_from = text.len();
        }
    }
    let text_hash = (!text.is_empty()).then(|| digest_beside(&text, &mut body));
    let (simhash, shingles) = if with_shingles {
        word_features(blocks)
    } else {
        word_pieces.push(WordPiece::Text(words_from, text.len()));
        // The body blocks left now have no other message to pair with: one is compressed
        // every `every` long words (about one long word per 11 bytes of text), so their
        // rounds run while the word hashes wait on their multiplies.
        let lone = body.blocks_left();
        let every = (text.len() / 11 / (lone + 1)).clamp(1, 64);
        let mut ones = BitCounts::default();
        let mut since = 0;
        let pieces: Vec<&str> = word_pieces
            .iter()
            .map(|piece| match *piece {
                WordPiece::Text(from, to) => ascii_run(&text, from, to),
                WordPiece::Raw(block) => block,
            })
            .collect();
        long_words::count_long_words(&pieces, &mut ones, |n| {
            since += n;
            while since >= every {
                since -= every;
                body.compress_one();
            }
        });
        (ones.simhash(), Vec::new())
    };
    fp.file_hash = known.unwrap_or_else(|| body.finish());
    (fp, ReplicaFeatures { simhash, text_hash, shingles })
}

/// A piece of a page's text for the SimHash word scan: bytes `from..to` of the normalized
/// text (a run of ASCII blocks), or a non-ASCII block as cleaned.
enum WordPiece<'a> {
    Text(usize, usize),
    Raw(&'a str),
}

/// `text[from..to]` as a `str`: bytes of ASCII blocks' normalized text and the spaces
/// between them, so always UTF-8 (an empty run otherwise, never a panic).
fn ascii_run(text: &[u8], from: usize, to: usize) -> &str {
    std::str::from_utf8(text.get(from..to).unwrap_or_default()).unwrap_or_default()
}

/// The page's word-[`SHINGLE_WORDS`]-shingle set from its cleaned blocks: equal to
/// [`shingle_set`] of [`visible_text`] (and to [`replica_features`]' set).
pub fn shingle_set_of_blocks<B: BlockList + ?Sized>(blocks: &B) -> Vec<u32> {
    word_features(blocks).1
}

/// Khan & Ali SimHash of the page's cleaned blocks: equal to
/// [`crate::simhash::page_simhash`] of [`visible_text`], without the shingles.
/// Only the words longer than 3 characters are hashed ([`long_words`]).
pub fn simhash_of_blocks<B: BlockList + ?Sized>(blocks: &B) -> u64 {
    let mut ones = BitCounts::default();
    let pieces: Vec<&str> = blocks.blocks().collect();
    long_words::count_long_words(&pieces, &mut ones, |_| {});
    ones.simhash()
}

/// SimHash and shingle set from one pass over the words of all blocks: each word's hash
/// feeds the SimHash bit counts and, with the three words before it, one shingle hash (no
/// vector of word hashes in between).
fn word_features<B: BlockList + ?Sized>(blocks: &B) -> (u64, Vec<u32>) {
    const _: () = assert!(SHINGLE_WORDS == 4);
    // About one word per six bytes of text; reserving avoids regrowing the vector.
    let mut shingles: Vec<u32> = Vec::with_capacity(blocks.text_bytes() / 5);
    let mut ones = BitCounts::default();
    let mut last = [0u64; SHINGLE_WORDS];
    let mut seen = 0usize;
    for b in blocks.blocks() {
        for_each_word(b, |h, long| {
            if long {
                ones.add(h);
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
    (simhash, shingles)
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

/// Per-bit counts of 1s over many 64-bit values, 8 additions per value instead of 64: each
/// byte of a value selects, from a table, a word whose 8 bytes are that byte's bits; the 8
/// byte-lane counters are flushed to wide counters before any lane can reach 256.
struct BitCounts {
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
    fn add(&mut self, h: u64) {
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
    /// ([`long_words::avx512::add_bits`]).
    #[inline(always)]
    fn add_batch<const AVX512: bool>(&mut self, hashes: &[u64; 8], n: usize) {
        #[cfg(target_arch = "x86_64")]
        if AVX512 {
            // SAFETY: `AVX512` is true only below `long_words::avx512::count_long_words`,
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
    unsafe fn add_zero_padded(&mut self, hashes: &[u64; 8], n: usize, lanes: usize) {
        // No byte counter may pass 255.
        if self.pending as usize + n > 255 {
            self.flush();
        }
        // SAFETY: the caller's CPU has the features.
        unsafe { long_words::avx512::add_bits(&mut self.lanes, hashes, lanes) };
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
    fn finish(mut self) -> ([u32; 64], u32) {
        self.flush();
        (self.wide, self.total)
    }

    /// Charikar's bit rule with unit weights over the values added: bit i is set when
    /// V_i = ones_i − (n − ones_i) > 0, i.e. 2·ones_i > n.
    fn simhash(self) -> u64 {
        let (ones, n) = self.finish();
        ones.iter().enumerate().fold(0u64, |acc, (i, &o)| if 2 * o > n { acc | (1 << i) } else { acc })
    }
}

/// `WORD_BYTE[b]`: for an ASCII word character (`[A-Za-z0-9_]`) its lower-case form, for
/// any other ASCII byte 0, for a byte of a multi-byte UTF-8 sequence 0xFF.
const WORD_BYTE: [u8; 256] = {
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

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

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
fn general_word(text: &str, start: usize, f: &mut impl FnMut(u64, bool)) -> usize {
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
const WORD_TEST_PIECES: [&str; 26] = [
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
fn palette_text(palette: &[&str], x: &mut u64, len: usize) -> String {
    (0..len)
        .map(|_| {
            *x = fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            palette[(*x % palette.len() as u64) as usize]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn fused_fingerprint_equals_the_separate_functions() {
        // Tricky joins: final sigma at block ends, NFKC expansions to leading spaces (´ ¨),
        // combining marks at block starts, ligatures, dotted İ, no-break and other spaces,
        // zero-width space (not whitespace), empty and whitespace-only blocks.
        let palette = [
            "Σ",
            "ΟΔΥΣΣΕΥΣ",
            "´",
            "¨x",
            "\u{301}",
            "e\u{301}",
            "ﬁ",
            "İ",
            "\u{a0}",
            "\u{2003}",
            "\u{200b}",
            " ",
            "\t",
            "\n",
            "",
            "A",
            "b c",
            "Hello World",
            "ＡＢＣ",
            "x\u{3a3} y",
            "   ",
            "Å",
            "A\u{30a}",
        ];
        let mut x = 0x9e37_79b9u64;
        let mut next = || {
            x = fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            x
        };
        let norms = [
            Normalization::default(),
            Normalization::NONE,
            Normalization { nfkc: false, ..Normalization::default() },
            Normalization { lowercase: false, ..Normalization::default() },
            Normalization { trim: false, ..Normalization::default() },
        ];
        for _ in 0..3000 {
            let nblocks = (next() % 5) as usize;
            let blocks: Vec<String> = (0..nblocks)
                .map(|_| {
                    let parts = 1 + next() % 4;
                    (0..parts).map(|_| palette[(next() % palette.len() as u64) as usize]).collect()
                })
                .collect();
            for norm in &norms {
                let fused = fingerprint_with_features([7; 20], &blocks, norm);
                let separate = (
                    crate::fingerprint::fingerprint_with_file_hash([7; 20], &blocks, norm),
                    replica_features(&blocks, norm),
                );
                assert_eq!(fused, separate, "{norm} {blocks:?}");
                let scan = fingerprint_for_scan([7; 20], &blocks, norm, |_| true);
                assert_eq!(scan.0, fused.0, "{norm} {blocks:?}");
                assert_eq!((scan.1.simhash, scan.1.text_hash), (fused.1.simhash, fused.1.text_hash));
                assert!(scan.1.shingles.is_empty());
                assert_eq!(shingle_set_of_blocks(&blocks), fused.1.shingles, "{blocks:?}");
                assert_eq!(simhash_of_blocks(&blocks), fused.1.simhash, "{blocks:?}");
            }
        }
        // Real pages.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/wikipedia/articles");
        for e in std::fs::read_dir(dir).unwrap().take(40) {
            let body = std::fs::read(e.unwrap().path()).unwrap();
            let doc = crate::clean(&body, Some("text/html"), None, &crate::CleanOptions::default());
            let norm = Normalization::default();
            let fused = fingerprint_with_features([1; 20], &doc.blocks, &norm);
            assert_eq!(fused.0, crate::fingerprint::fingerprint_with_file_hash([1; 20], &doc.blocks, &norm));
            assert_eq!(fused.1, replica_features(&doc.blocks, &norm));
        }
    }

    #[test]
    fn fingerprint_skips_only_the_digests_it_is_told_to() {
        let blocks = [
            "  Short  cell ",
            "",
            "A paragraph long enough to be hashed, well past ten bytes.",
            "tiny",
            "Mid  sized!",
        ];
        let norm = Normalization::default();
        let all = fingerprint_with_features([3; 20], &blocks, &norm);
        let some = fingerprint_for_scan([3; 20], &blocks, &norm, |b| b.len() > 10);
        // Normalized: "short cell" (10 bytes), "" (empty), the paragraph, "tiny", "mid sized!" (10).
        assert_eq!(all.0.chunks.len(), 4);
        assert_eq!(all.0.unhashed, 0);
        assert_eq!(some.0.empty_blocks, 1);
        assert_eq!(some.0.unhashed, 3);
        assert_eq!(some.0.chunks, vec![all.0.chunks[1]]);
        // The scan leaves the shingle set to `ditto replicas`; SimHash and text hash are the same.
        assert_eq!((some.1.simhash, some.1.text_hash), (all.1.simhash, all.1.text_hash));
        assert!(some.1.shingles.is_empty());
        assert_eq!(shingle_set_of_blocks(&blocks), all.1.shingles);
        assert_eq!(simhash_of_blocks(&blocks), all.1.simhash);
    }

    #[test]
    fn fingerprint_of_body_equals_fingerprint_with_its_sha1() {
        let blocks: Vec<String> =
            (0..40).map(|k| format!("Block {k}: {}", "some words of text, ".repeat(k % 9))).collect();
        for body_len in [0usize, 1, 63, 64, 65, 700, 5_000, 50_000] {
            let body: Vec<u8> = (0..body_len).map(|i| (i * 31 + body_len) as u8).collect();
            for norm in [Normalization::default(), Normalization { trim: false, ..Normalization::default() }]
            {
                for needs in [|_: &[u8]| true, |b: &[u8]| b.len() > 60] {
                    let of_body = fingerprint_for_scan_of_body(&body, &blocks, &norm, needs);
                    let known = fingerprint_for_scan(sha1(&body), &blocks, &norm, needs);
                    assert_eq!(of_body.0.file_hash, sha1(&body), "{body_len}");
                    assert_eq!(of_body.0.chunks, known.0.chunks, "{body_len} {norm}");
                    assert_eq!(
                        (of_body.1.simhash, of_body.1.text_hash),
                        (known.1.simhash, known.1.text_hash)
                    );
                }
            }
        }
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

    #[test]
    fn fnv_and_fmix_known_values() {
        // FNV-1a 64 of "" is the offset basis; fmix64(0) = 0.
        assert_eq!(fmix64(0), 0);
        assert_eq!(hash64(b""), fmix64(0xcbf2_9ce4_8422_2325));
        // FNV-1a 64 of "a" = 0xaf63dc4c8601ec8c (published test vector).
        assert_eq!(hash64(b"a"), fmix64(0xaf63_dc4c_8601_ec8c));
    }
}
