//! The scan's fingerprint kernel: per page, in one pass over its cleaned blocks, the chunk
//! SHA-1s and the file SHA-1 ([`super`]) and the near-replica features (SimHash,
//! visible-text SHA-1 and the bounded shingle sketch; [`crate::shingles::ReplicaFeatures`]),
//! each block normalized once.
//!
//! - [`fingerprint_for_scan_of_body`] / [`fingerprint_for_scan`]: what `ditto scan` runs
//!   (the body's SHA-1 computed beside the others, or known already); a chunk's SHA-1 only
//!   where the match stage can use it; the sketch from the SimHash's word pass; no shingle
//!   set.
//! - [`fingerprint_with_features`]: every chunk SHA-1 and the shingle set too.
//!
//! Each equals the separate functions it fuses ([`super::fingerprint_with_file_hash`],
//! [`crate::shingles::replica_features`]; tested below). The SimHash word pass is
//! [`long_words`].

use crate::blocks::BlockList;

use super::long_words;
use super::{sha1, ChunkFingerprint, Fingerprints, Sha1Digest};
use crate::bitcounts::BitCounts;
use crate::normalize::Normalization;
use crate::sha1_pair::{digest_beside, BodySha1};
use crate::shingles::{text_hash, word_features, ReplicaFeatures, ShingleSketch, SketchRoll, SKETCH_SIZE};

/// The fingerprint stage's whole per-page work: the chunk fingerprints
/// ([`super::fingerprint_with_file_hash`]) and the [`crate::shingles::replica_features`],
/// with each block normalized once for both its chunk hash and the text hash.
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
/// - the shingle set is left empty: `ditto replicas` compares the stored sketches, which the
///   SimHash's word pass computes here (Khan & Ali's SimHash: computed for every page, used
///   live; the sketch: [`crate::shingles::long_word_sketch_of_blocks`], the same hashes).
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

/// The kernel behind the three public functions: with whitespace collapsed and trimmed, one
/// pass over the blocks builds the normalized text and takes the chunk and text SHA-1s from
/// it, beside the body's SHA-1 when `file_hash` is [`FileHash::OfBody`]; then the SimHash
/// (and the shingle set when `with_shingles`). Other normalizations: [`separate_passes`].
fn fused_fingerprint<B: BlockList + ?Sized>(
    file_hash: FileHash,
    blocks: &B,
    norm: &Normalization,
    needs_digest: impl Fn(&[u8]) -> bool,
    with_shingles: bool,
) -> (Fingerprints, ReplicaFeatures) {
    if !(norm.collapse_whitespace && norm.trim) {
        return separate_passes(file_hash, blocks, norm, with_shingles);
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
    let (simhash, shingles, sketch) = if with_shingles {
        word_features(blocks)
    } else {
        word_pieces.push(WordPiece::Text(words_from, text.len()));
        let (simhash, sketch) = simhash_beside_body(&text, &word_pieces, &mut body);
        (simhash, Vec::new(), sketch)
    };
    fp.file_hash = known.unwrap_or_else(|| body.finish());
    (fp, ReplicaFeatures { simhash, text_hash, shingles, sketch })
}

/// [`fused_fingerprint`] for a normalization that does not both collapse and trim
/// whitespace: the chunk fingerprints and the features by their own functions (the fused
/// pass relies on the join's space being a normalization boundary, true only then).
fn separate_passes<B: BlockList + ?Sized>(
    file_hash: FileHash,
    blocks: &B,
    norm: &Normalization,
    with_shingles: bool,
) -> (Fingerprints, ReplicaFeatures) {
    // SimHash and sketch always; the shingle set only when asked for (not computed and dropped).
    let (simhash, shingles, sketch) = if with_shingles {
        word_features(blocks)
    } else {
        let (simhash, sketch) = simhash_and_sketch_of_blocks(blocks);
        (simhash, Vec::new(), sketch)
    };
    let features = ReplicaFeatures { simhash, text_hash: text_hash(blocks, norm), shingles, sketch };
    let file_hash = match file_hash {
        FileHash::Known(h) => h,
        FileHash::OfBody(body) => sha1(body),
    };
    (crate::fingerprint::fingerprint_with_file_hash(file_hash, blocks, norm), features)
}

/// The SimHash and the shingle sketch ([`crate::shingles::long_word_sketch_of_blocks`]) of
/// the long words of `word_pieces` (runs of `text`, the page's normalized text, and raw
/// non-ASCII blocks, in page order), with the body SHA-1's remaining blocks compressed
/// between the words. `#[inline]`: it was the tail of [`fused_fingerprint`], and stays
/// instantiated beside it in the caller's crate.
#[inline]
fn simhash_beside_body(text: &[u8], word_pieces: &[WordPiece], body: &mut BodySha1) -> (u64, ShingleSketch) {
    // The body blocks left now have no other message to pair with: one is compressed
    // every `every` long words (about one long word per 11 bytes of text), so their
    // rounds run while the word hashes wait on their multiplies.
    let lone = body.blocks_left();
    let every = (text.len() / 11 / (lone + 1)).clamp(1, 64);
    let mut sink =
        long_words::WithSketch { counts: BitCounts::default(), sketch: SketchRoll::new(SKETCH_SIZE) };
    let mut since = 0;
    let pieces: Vec<&str> = word_pieces
        .iter()
        .map(|piece| match *piece {
            WordPiece::Text(from, to) => ascii_run(text, from, to),
            WordPiece::Raw(block) => block,
        })
        .collect();
    long_words::count_long_words(&pieces, &mut sink, |n| {
        since += n;
        while since >= every {
            since -= every;
            body.compress_one();
        }
    });
    (sink.counts.simhash(), sink.sketch.finish())
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

/// Khan & Ali SimHash of the page's cleaned blocks: equal to
/// [`crate::simhash::page_simhash`] of [`crate::shingles::visible_text`], without the
/// shingles. Only the words longer than 3 characters are hashed ([`long_words`]).
pub fn simhash_of_blocks<B: BlockList + ?Sized>(blocks: &B) -> u64 {
    let mut ones = BitCounts::default();
    let pieces: Vec<&str> = blocks.blocks().collect();
    long_words::count_long_words(&pieces, &mut ones, |_| {});
    ones.simhash()
}

/// [`simhash_of_blocks`] and the page's shingle sketch
/// ([`crate::shingles::long_word_sketch_of_blocks`]) from the same word pass.
pub fn simhash_and_sketch_of_blocks<B: BlockList + ?Sized>(blocks: &B) -> (u64, ShingleSketch) {
    let mut sink =
        long_words::WithSketch { counts: BitCounts::default(), sketch: SketchRoll::new(SKETCH_SIZE) };
    let pieces: Vec<&str> = blocks.blocks().collect();
    long_words::count_long_words(&pieces, &mut sink, |_| {});
    (sink.counts.simhash(), sink.sketch.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingles::{fmix64, long_sketch_reference, replica_features, shingle_set_of_blocks};

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
                assert_eq!(scan.1.sketch, fused.1.sketch, "{norm} {blocks:?}");
                assert_eq!(scan.1.sketch, long_sketch_reference(&blocks, SKETCH_SIZE), "{norm} {blocks:?}");
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
            // The scan's sketch, from its word pass (AVX-512 windows on a CPU that has them),
            // on both the fused path and the separate passes of another normalization.
            let want = long_sketch_reference(&doc.blocks, SKETCH_SIZE);
            assert!(want.hashes.len() > 20);
            assert_eq!(fused.1.sketch, want);
            for norm in [norm, Normalization { trim: false, ..Normalization::default() }] {
                let scan = fingerprint_for_scan_of_body(&body, &doc.blocks, &norm, |_| true);
                assert_eq!(scan.1.sketch, want, "{norm}");
            }
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
                    assert_eq!(of_body.1.sketch, known.1.sketch);
                    assert_eq!(of_body.1.sketch, long_sketch_reference(&blocks, SKETCH_SIZE));
                }
            }
        }
    }
}
