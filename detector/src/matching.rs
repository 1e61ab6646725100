//! Match stage: stop-chunk removal (§3.4.2), simple object matching of the file hash
//! against `L_f` (§3.1 step 4) and partial matching `contains(L_c, f)` (§3.1 step 5).

use std::collections::HashSet;

use crate::fingerprint::{Fingerprints, Sha1Digest};

/// Index of a source (e.g. a Wikipedia article) in a label set's source table.
pub type SourceId = u32;

/// Membership in a label set (`L_c` or `L_f`). Implemented by `labelsets::LabelSet`; the
/// detector only needs this lookup.
pub trait ChunkLookup: Sync {
    /// The source the hash was labeled from, or `None` when it is not in the set.
    fn lookup(&self, hash: &Sha1Digest) -> Option<SourceId>;
}

/// Stop chunks: common benign idioms removed before detection (§3.4.2).
pub trait StopList: Sync {
    fn is_stop(&self, hash: &Sha1Digest) -> bool;
}

/// No stop chunks.
pub struct NoStops;
impl StopList for NoStops {
    fn is_stop(&self, _: &Sha1Digest) -> bool {
        false
    }
}

impl StopList for HashSet<Sha1Digest> {
    fn is_stop(&self, hash: &Sha1Digest) -> bool {
        self.contains(hash)
    }
}

impl ChunkLookup for std::collections::HashMap<Sha1Digest, SourceId> {
    fn lookup(&self, hash: &Sha1Digest) -> Option<SourceId> {
        self.get(hash).copied()
    }
}

/// One labeled chunk found on a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkMatch {
    pub hash: Sha1Digest,
    /// Index of the page's text block (for showing the passage).
    pub block: u32,
    pub source: SourceId,
}

/// The verdict for one page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageVerdict {
    /// |H(c_f)| after stop-chunk removal: chunk occurrences, duplicates counted.
    pub chunks: u32,
    /// |L_c ∩ H(c_f)|: chunk occurrences found in the label set, duplicates counted.
    pub labeled_chunks: u32,
    /// Chunk occurrences removed as stop chunks (empty blocks included).
    pub stop_chunks: u32,
    /// `contains(L_c, f)`.
    pub contains: f64,
    /// Whole-file match against `L_f` (§3.1 step 4), with its source.
    pub file_match: Option<SourceId>,
    pub matches: Vec<ChunkMatch>,
}

/// `contains(L_c, f) = |L_c ∩ H(c_f)| / |H(c_f)|` (§3.1 step 5). A page with no chunks
/// contains nothing: 0.
pub fn contains(labeled: u64, chunks: u64) -> f64 {
    if chunks == 0 {
        0.0
    } else {
        labeled as f64 / chunks as f64
    }
}

/// Remove stop chunks, then match every remaining chunk occurrence against `labels` and
/// the file hash against `files`.
///
/// `H(c_f)` is a vector, not a set (§3.1 step 2): a paragraph that appears twice on a page
/// counts twice in both the numerator and the denominator.
pub fn match_page(
    fp: &Fingerprints,
    labels: &dyn ChunkLookup,
    files: Option<&dyn ChunkLookup>,
    stops: &dyn StopList,
) -> PageVerdict {
    let mut v = PageVerdict { stop_chunks: fp.empty_blocks, ..Default::default() };
    for c in &fp.chunks {
        if stops.is_stop(&c.hash) {
            v.stop_chunks += 1;
            continue;
        }
        v.chunks += 1;
        if let Some(source) = labels.lookup(&c.hash) {
            v.labeled_chunks += 1;
            v.matches.push(ChunkMatch { hash: c.hash, block: c.block, source });
        }
    }
    v.contains = contains(v.labeled_chunks as u64, v.chunks as u64);
    v.file_match = files.and_then(|f| f.lookup(&fp.file_hash));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::{chunk_hash, fingerprint};
    use crate::normalize::Normalization;
    use std::collections::HashMap;

    #[test]
    fn contains_by_hand() {
        assert_eq!(contains(0, 0), 0.0);
        assert_eq!(contains(1, 4), 0.25);
        assert_eq!(contains(3, 3), 1.0);
    }

    #[test]
    fn duplicates_count_and_stops_leave_the_denominator() {
        // Page: A, A, B, C, "" (empty), S (stop). Label set: {A, C}.
        let blocks = ["A", "A", "B", "C", "", "S"];
        let fp = fingerprint(b"body", &blocks, &Normalization::default());
        let mut labels = HashMap::new();
        labels.insert(chunk_hash("a"), 7u32);
        labels.insert(chunk_hash("c"), 9u32);
        let stops: HashSet<_> = [chunk_hash("s")].into_iter().collect();
        let v = match_page(&fp, &labels, None, &stops);
        // H(c_f) after stop removal = [A, A, B, C]: 4 occurrences, 3 labeled.
        assert_eq!(v.chunks, 4);
        assert_eq!(v.labeled_chunks, 3);
        assert_eq!(v.stop_chunks, 2);
        assert_eq!(v.contains, 0.75);
        assert_eq!(v.matches.iter().map(|m| m.source).collect::<Vec<_>>(), vec![7, 7, 9]);
        assert_eq!(v.matches[2].block, 3);
    }

    #[test]
    fn file_hash_matches_l_f() {
        let fp = fingerprint(b"exact file", &["x"], &Normalization::default());
        let mut files = HashMap::new();
        files.insert(fp.file_hash, 3u32);
        let v = match_page(&fp, &HashMap::new(), Some(&files), &NoStops);
        assert_eq!(v.file_match, Some(3));
        assert_eq!(v.contains, 0.0);
    }
}
