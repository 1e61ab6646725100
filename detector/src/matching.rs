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

    /// Look up every hash in `hashes`, appending one answer per hash to `out` (in order;
    /// `out` is cleared first). Must answer exactly as [`ChunkLookup::lookup`] would; an
    /// implementation may overlap the memory accesses of many keys (`labelsets::LabelSet`
    /// prefetches its filter blocks). The default loops over `lookup`.
    fn lookup_many(&self, hashes: &[Sha1Digest], out: &mut Vec<Option<SourceId>>) {
        out.clear();
        out.extend(hashes.iter().map(|h| self.lookup(h)));
    }

    /// A lower bound on the length in bytes of the normalized text of every chunk in the
    /// set: a shorter chunk is certainly not a member, so its SHA-1 need not be computed
    /// ([`digest_needed`]). The default, 0, claims nothing.
    fn min_member_bytes(&self) -> usize {
        0
    }
}

/// Stop chunks: common benign idioms removed before detection (§3.4.2).
pub trait StopList: Sync {
    fn is_stop(&self, hash: &Sha1Digest) -> bool;

    /// `false` only when a chunk whose normalized text is `normalized` is certainly not a
    /// stop chunk, so its SHA-1 need not be computed ([`digest_needed`]). The default,
    /// `true`, claims nothing.
    fn may_contain_text(&self, _normalized: &[u8]) -> bool {
        true
    }

    /// The passages of the list's texts, taken with `p`: common text is no passage evidence
    /// either (issue 36). The default: none.
    fn stop_passages(&self, _p: crate::passages::PassageParams) -> Vec<crate::passages::PassageHash> {
        Vec::new()
    }
}

/// Whether the match stage can use the SHA-1 of a chunk whose normalized text is
/// `normalized`: it can be in the label set (`labels_min_bytes`, from
/// [`ChunkLookup::min_member_bytes`]) or a stop chunk. Most chunks of markup-heavy pages
/// (table cells, list items, navigation: ~17 bytes on average on the Debian docs) are
/// shorter than any labeled chunk (Ardi & Heidemann keep chunks of > 100 characters, §3.1
/// step 3), so skipping their SHA-1 changes no verdict and saves its fixed cost per chunk.
#[inline]
pub fn digest_needed(labels_min_bytes: usize, stops: &dyn StopList, normalized: &[u8]) -> bool {
    normalized.len() >= labels_min_bytes || stops.may_contain_text(normalized)
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
    /// Found by passages (`crate::passages`), not as an exact chunk: `hash` is all zeros.
    pub passage: bool,
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
    /// Exact matches in chunk order, then blocks found by passages.
    pub matches: Vec<ChunkMatch>,
    /// Passage matching ran on the page ([`add_passages`]); the fields below are its.
    pub passages_checked: bool,
    /// Words on the page (the passages' word stream).
    pub words: u32,
    /// Words covered by labeled passages of the sources that count.
    pub passage_words: u32,
    /// Blocks counted as labeled because passages cover them (included in `labeled_chunks`).
    pub passage_chunks: u32,
    /// The sources whose passages count on the page, most words first.
    pub passage_sources: Vec<crate::passages::SourceCover>,
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
    // Stop chunks out first, then one batched lookup over the rest (so a label set can
    // overlap the memory accesses of the whole page); matches keep the page's chunk order.
    let mut kept: Vec<usize> = Vec::with_capacity(fp.chunks.len());
    let mut hashes: Vec<Sha1Digest> = Vec::with_capacity(fp.chunks.len());
    for (i, c) in fp.chunks.iter().enumerate() {
        if stops.is_stop(&c.hash) {
            v.stop_chunks += 1;
        } else {
            kept.push(i);
            hashes.push(c.hash);
        }
    }
    // Unhashed chunks are in H(c_f) too: neither stop chunks nor labeled (see
    // `Fingerprints::unhashed`).
    v.chunks = kept.len() as u32 + fp.unhashed;
    let mut found = Vec::with_capacity(hashes.len());
    labels.lookup_many(&hashes, &mut found);
    for (&i, source) in kept.iter().zip(found) {
        if let (Some(source), Some(c)) = (source, fp.chunks.get(i)) {
            v.labeled_chunks += 1;
            v.matches.push(ChunkMatch { hash: c.hash, block: c.block, source, passage: false });
        }
    }
    v.contains = contains(v.labeled_chunks as u64, v.chunks as u64);
    v.file_match = files.and_then(|f| f.lookup(&fp.file_hash));
    v
}

/// Passage evidence (issue 36) added to an exact verdict: the page's labeled passages
/// (`crate::passages::cover`), and every block they cover at least half of that is neither
/// an exact labeled chunk nor a stop chunk counted as labeled. `contains` keeps its unit,
/// chunk occurrences, and counts the words passages cover in the blocks they cover less:
/// `contains = (exact labeled + passage-covered chunks + Σ covered share of the partly
/// covered blocks) / |H(c_f)|`, where Ardi & Heidemann count exact chunks only (§3.1 step 5);
/// badness follows unchanged (§3.1 step 6).
///
/// Blocks already decided (exact labeled chunks, stop chunks) are counted into the word
/// stream, not hashed (`WordStream::push_counted_block`): passages could add nothing to
/// them, and on a page copied mostly verbatim they hold most of its words. An exact chunk
/// still covers its words for its source, which bridges to the passages around it as its
/// own hits would.
pub fn add_passages<'a>(
    v: &mut PageVerdict,
    fp: &Fingerprints,
    blocks: impl IntoIterator<Item = &'a str>,
    table: &dyn crate::passages::PassageLookup,
    stops: &dyn StopList,
) {
    // The first exact match of each block gives its source (matches are in chunk order).
    let mut exact: Vec<(u32, SourceId)> = v.matches.iter().map(|m| (m.block, m.source)).collect();
    exact.sort_by_key(|e| e.0);
    exact.dedup_by_key(|e| e.0);
    let mut stopped: Vec<u32> =
        fp.chunks.iter().filter(|ch| stops.is_stop(&ch.hash)).map(|ch| ch.block).collect();
    stopped.sort_unstable();
    let mut ws = crate::passages::WordStream::default();
    for (b, text) in blocks.into_iter().enumerate() {
        let b = b as u32;
        if let Ok(i) = exact.binary_search_by_key(&b, |e| e.0) {
            ws.push_counted_block(text, Some(exact[i].1));
        } else if stopped.binary_search(&b).is_ok() {
            ws.push_counted_block(text, None);
        } else {
            ws.push_block(text);
        }
    }
    let c = crate::passages::cover(&ws, table);
    v.passages_checked = true;
    v.words = c.words;
    v.passage_words = c.covered_words;
    v.passage_sources = c.sources;
    for &(block, source) in &c.blocks {
        v.matches.push(ChunkMatch { hash: [0; 20], block, source, passage: true });
        v.passage_chunks += 1;
    }
    v.labeled_chunks = (v.labeled_chunks + v.passage_chunks).min(v.chunks);
    v.contains = if v.chunks == 0 {
        0.0
    } else {
        ((v.labeled_chunks as f64 + c.partial_blocks) / v.chunks as f64).min(1.0)
    };
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

    /// A lookup that answers through `lookup` only, so `lookup_many` takes the default.
    struct PerKey<'a>(&'a HashMap<Sha1Digest, SourceId>);
    impl ChunkLookup for PerKey<'_> {
        fn lookup(&self, hash: &Sha1Digest) -> Option<SourceId> {
            self.0.get(hash).copied()
        }
    }

    /// A lookup whose `lookup_many` answers in reverse-then-reversed order, to check that
    /// `match_page` relies only on the per-position contract.
    struct Reversing<'a>(&'a HashMap<Sha1Digest, SourceId>);
    impl ChunkLookup for Reversing<'_> {
        fn lookup(&self, hash: &Sha1Digest) -> Option<SourceId> {
            self.0.get(hash).copied()
        }
        fn lookup_many(&self, hashes: &[Sha1Digest], out: &mut Vec<Option<SourceId>>) {
            out.clear();
            out.extend(hashes.iter().rev().map(|h| self.lookup(h)));
            out.reverse();
        }
    }

    #[test]
    fn batched_lookup_matches_per_key_on_random_digests() {
        // splitmix64-driven pseudo-random digests; about a third labeled, a few stops.
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut digest = || {
            let mut d = [0u8; 20];
            for part in d.chunks_mut(8) {
                let r = next().to_le_bytes();
                part.copy_from_slice(&r[..part.len()]);
            }
            d
        };
        let all: Vec<Sha1Digest> = (0..3000).map(|_| digest()).collect();
        let labels: HashMap<Sha1Digest, SourceId> =
            all.iter().step_by(3).enumerate().map(|(i, d)| (*d, i as SourceId)).collect();
        let stops: HashSet<Sha1Digest> = all.iter().skip(1).step_by(17).copied().collect();
        // The default lookup_many against per-key lookups.
        let mut batched = Vec::new();
        PerKey(&labels).lookup_many(&all, &mut batched);
        let per_key: Vec<_> = all.iter().map(|d| labels.get(d).copied()).collect();
        assert_eq!(batched, per_key);
        // match_page (batched) against a hand-written per-key loop, pages with repeats.
        let mut stops_seen = 0;
        for page in 0..20usize {
            let chunks: Vec<crate::fingerprint::ChunkFingerprint> = (0..150)
                .map(|j| crate::fingerprint::ChunkFingerprint {
                    // Chunks 120..150 repeat chunks 0..30.
                    hash: all[((((page * 150 + j % 120) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40)
                        % all.len() as u64) as usize],
                    block: j as u32,
                })
                .collect();
            let fp = Fingerprints { file_hash: [0; 20], chunks, empty_blocks: page as u32, unhashed: 0 };
            let mut want = PageVerdict { stop_chunks: fp.empty_blocks, ..Default::default() };
            for c in &fp.chunks {
                if stops.contains(&c.hash) {
                    want.stop_chunks += 1;
                    continue;
                }
                want.chunks += 1;
                if let Some(source) = labels.get(&c.hash).copied() {
                    want.labeled_chunks += 1;
                    want.matches.push(ChunkMatch { hash: c.hash, block: c.block, source, passage: false });
                }
            }
            want.contains = contains(want.labeled_chunks as u64, want.chunks as u64);
            assert!(want.labeled_chunks > 0);
            stops_seen += want.stop_chunks - fp.empty_blocks;
            for lookup in [&PerKey(&labels) as &dyn ChunkLookup, &Reversing(&labels), &labels] {
                assert_eq!(match_page(&fp, lookup, None, &stops), want);
            }
        }
        assert!(stops_seen > 20, "{stops_seen}");
    }

    const PARA_A: &str = "The river rises in the northern hills and flows south through a wide valley \
        where farmers have grown wheat and barley since the twelfth century, and in 1820 a canal \
        was dug beside it to carry coal from the mines at Aldbury to the port.";
    const PARA_B: &str = "The canal closed in 1931 after the railway took its trade, and most of it \
        was filled in during the following decades; today a footpath follows the old towpath for \
        eleven miles between the stone bridges of every village on the way to the sea.";
    const PARA_C: &str = "Local histories record floods in 1795, 1852 and 1968, each of which \
        destroyed mills and bridges along the lower valley, and after the last of them the county \
        raised the banks and planted willows along both sides of the river near the town.";

    /// Source 7 = A, "History", B, C: its chunks (all three paragraphs) and passages.
    fn source_seven() -> (HashMap<Sha1Digest, SourceId>, (PassageParams, HashMap<u64, SourceId>)) {
        use crate::passages::{document_anchors, PassageParams};
        let blocks = [PARA_A, "History", PARA_B, PARA_C];
        let fp = fingerprint(b"source", &blocks, &Normalization::default());
        let chunks = fp.chunks.iter().filter(|c| c.block != 1).map(|c| (c.hash, 7)).collect();
        let p = PassageParams::default();
        let passages = document_anchors(blocks, p).into_iter().map(|h| (h, 7)).collect();
        (chunks, (p, passages))
    }

    fn verdict(
        page: &[&str],
        chunks: &HashMap<Sha1Digest, SourceId>,
        t: &dyn crate::passages::PassageLookup,
    ) -> PageVerdict {
        let fp = fingerprint(b"page", page, &Normalization::default());
        let mut v = match_page(&fp, chunks, None, &NoStops);
        add_passages(&mut v, &fp, page.iter().copied(), t, &NoStops);
        v
    }

    use crate::passages::PassageParams;

    #[test]
    fn passages_bridge_exact_chunks_and_find_an_edit_beside_them() {
        let (chunks, table) = source_seven();
        // Verbatim copy: the heading between two exact chunks is covered too.
        let v = verdict(&[PARA_A, "History", PARA_B, PARA_C], &chunks, &table);
        assert_eq!((v.chunks, v.labeled_chunks, v.passage_chunks), (4, 4, 1), "{v:?}");
        assert!(v.matches.iter().any(|m| m.passage && m.block == 1));
        assert_eq!(v.words, v.passage_words);
        // One word in C changed: C is no exact chunk, its passages find it beside A and B.
        let c_edited = PARA_C.replace("destroyed", "wrecked");
        let v = verdict(&[PARA_A, PARA_B, &c_edited], &chunks, &table);
        assert_eq!((v.labeled_chunks, v.passage_chunks), (3, 1), "{v:?}");
        assert!(v.matches.iter().any(|m| m.passage && m.block == 2 && m.source == 7));
        // Beside unrelated text, the same 41 words are under the thresholds (MIN_SOURCE_WORDS):
        // the exact chunks around it are what made source 7 count without them.
        let other = "An unrelated paragraph about the weather in spring, which was wet and \
            cold, and about the harvest, which was late and small, as everybody had feared.";
        let v = verdict(&[other, &c_edited], &chunks, &table);
        assert_eq!((v.passage_chunks, v.contains), (0, 0.0), "{v:?}");
        // Nor is one sentence of it.
        let quote = format!("{other} As the histories say, floods came in 1795, 1852 and 1968.");
        let v = verdict(&[&quote], &chunks, &table);
        assert_eq!((v.labeled_chunks, v.contains), (0, 0.0), "{v:?}");
        // Exact matching only (no passages) finds two of the three.
        let fp = fingerprint(b"page", &[PARA_A, PARA_B, c_edited.as_str()], &Normalization::default());
        assert_eq!(match_page(&fp, &chunks, None, &NoStops).labeled_chunks, 2);
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
