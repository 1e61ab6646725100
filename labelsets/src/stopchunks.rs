//! Stop chunks (Ardi & Heidemann 2014, §3.4.2): "common, benign idioms" removed before
//! detection, such as the empty paragraph. A short reviewable text list (the default is
//! `data/default-stopchunks.txt`, embedded) and/or a `.dls` label set used as a stop list.
//! The paper: "if it goes too large we can apply Bloom filters". Every lookup first asks a
//! cache-blocked Bloom filter ([`crate::filter`], one cache line per key, ~1 % false positives
//! at 10 bits per key) over the text-list digests; only a "maybe" goes on to the exact
//! `HashSet`, which decides — so the filter can only save work, never add or lose a stop
//! chunk. A `.dls` list brings its own filter in front of its sorted table. The pipeline's match
//! stage and blind discovery (`ditto discover`, where stop chunks never enter a blind label
//! set, §3.2 step 3b) both look stop chunks up here.

use std::collections::HashSet;
use std::path::Path;

use detector::fingerprint::chunk_hash;
use detector::{Normalization, Sha1Digest, StopList};

use crate::filter::{BlockedBloom, BITS_PER_KEY, K};
use crate::format::LabelSet;
use crate::{io_err, Result};

/// The default list's text.
pub const DEFAULT_LIST: &str = include_str!("../data/default-stopchunks.txt");

/// A set of stop-chunk digests.
#[derive(Debug)]
pub struct StopChunks {
    norm: Normalization,
    set: HashSet<Sha1Digest>,
    /// Holds every digest of `set`; sized for `filter_keys` keys, rebuilt twice as large
    /// when `set` outgrows it.
    filter: BlockedBloom,
    filter_keys: u64,
    sets: Vec<LabelSet>,
    /// [`text_key`]s of the normalized text of every text-list entry, so that a chunk can
    /// be ruled out before its SHA-1 is computed ([`StopList::may_contain_text`]).
    text_keys: TextKeys,
    /// Some digest came without its text ([`Self::add_digest`]): the text keys no longer
    /// cover the list, and every chunk may be a stop chunk.
    opaque_digests: bool,
    /// The raw texts long enough to hold a word k-gram: their passages are stop passages
    /// ([`StopList::stop_passages`]), so a stop text inside a longer block is no evidence.
    passage_texts: Vec<String>,
}

/// Texts with fewer words hold no word k-gram (k is at least 2).
const MIN_PASSAGE_TEXT_WORDS: u32 = 2;

/// A set of 64-bit text keys: a 4096-bit filter on the top bits in front of a sorted
/// vector (the lists hold ~100 to a few thousand entries).
#[derive(Debug, Default)]
struct TextKeys {
    bits: Vec<u64>,
    sorted: Vec<u64>,
}

impl TextKeys {
    const BITS: u32 = 12;

    fn insert(&mut self, key: u64) {
        if self.bits.is_empty() {
            self.bits = vec![0; 1 << (Self::BITS - 6)];
        }
        let top = (key >> (64 - Self::BITS)) as usize;
        self.bits[top / 64] |= 1 << (top % 64);
        if let Err(at) = self.sorted.binary_search(&key) {
            self.sorted.insert(at, key);
        }
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        let top = (key >> (64 - Self::BITS)) as usize;
        self.bits.get(top / 64).is_some_and(|w| w & (1 << (top % 64)) != 0)
            && self.sorted.binary_search(&key).is_ok()
    }
}

/// A fast 64-bit key of normalized chunk text, eight bytes at a time (not a fingerprint:
/// only used to rule chunks out; the SHA-1 decides).
#[inline]
fn text_key(text: &[u8]) -> u64 {
    const M: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (text.len() as u64).wrapping_mul(M);
    let mut words = text.chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(b)).wrapping_mul(M).rotate_left(31);
    }
    let rest = words.remainder();
    let mut b = [0u8; 8];
    b[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(b)).wrapping_mul(M);
    h ^ (h >> 29)
}

/// Smallest filter, in keys (the default list is ~100 chunks).
const MIN_FILTER_KEYS: u64 = 256;

impl StopChunks {
    /// An empty list for chunks normalized with `norm`.
    pub fn new(norm: Normalization) -> Self {
        StopChunks {
            norm,
            set: HashSet::new(),
            filter: BlockedBloom::with_capacity(MIN_FILTER_KEYS, BITS_PER_KEY, K),
            filter_keys: MIN_FILTER_KEYS,
            sets: Vec::new(),
            text_keys: TextKeys::default(),
            opaque_digests: false,
            passage_texts: Vec::new(),
        }
    }

    /// The built-in default list.
    pub fn default_list(norm: Normalization) -> Self {
        let mut s = Self::new(norm);
        s.add_list_text(DEFAULT_LIST);
        s
    }

    /// Parse a list in the text format (see `data/default-stopchunks.txt`).
    pub fn from_text(text: &str, norm: Normalization) -> Self {
        let mut s = Self::new(norm);
        s.add_list_text(text);
        s
    }

    /// Load a list file: a `.dls` label set (by magic bytes; its normalization must equal
    /// `norm`) or the text format.
    pub fn load(path: impl AsRef<Path>, norm: Normalization) -> Result<Self> {
        let mut s = Self::new(norm);
        s.add_file(path)?;
        Ok(s)
    }

    /// Add a list file (see [`Self::load`]).
    pub fn add_file(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(io_err(path))?;
        if bytes.starts_with(crate::format::MAGIC) {
            drop(bytes);
            // Every section checked: a damaged stop list would silently change verdicts.
            let set = LabelSet::open_verified(path)?;
            set.check_normalization(&self.norm)?;
            self.sets.push(set);
        } else {
            self.add_list_text(&String::from_utf8_lossy(&bytes));
        }
        Ok(())
    }

    /// Add every chunk of a text list.
    pub fn add_list_text(&mut self, text: &str) {
        for line in text.lines() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let raw = match line.trim() {
                "<empty>" => "",
                "<space>" => " ",
                _ => line.strip_prefix('\\').filter(|l| l.starts_with('#')).unwrap_or(line),
            };
            self.add_text(raw);
        }
    }

    /// Add one raw chunk (normalized here).
    pub fn add_text(&mut self, raw: &str) {
        let normalized = self.norm.apply(raw);
        self.add_known_text(&normalized, chunk_hash(&normalized));
        self.add_passage_text(raw);
    }

    fn add_passage_text(&mut self, raw: &str) {
        if detector::passages::count_words(raw) >= MIN_PASSAGE_TEXT_WORDS {
            self.passage_texts.push(raw.to_string());
        }
    }

    /// A chunk whose normalized text (and so its [`text_key`]) is known.
    fn add_known_text(&mut self, normalized: &str, d: Sha1Digest) {
        self.text_keys.insert(text_key(normalized.as_bytes()));
        self.insert_digest(d);
    }

    /// Add a chunk known by its digest and the raw text it was taken from (reviewed stop
    /// chunks): as [`Self::add_text`] when the text normalizes to that digest, otherwise
    /// as [`Self::add_digest`].
    pub fn add_text_with_digest(&mut self, raw: &str, d: Sha1Digest) {
        let normalized = self.norm.apply(raw);
        if chunk_hash(&normalized) == d {
            self.add_known_text(&normalized, d);
            self.add_passage_text(raw);
        } else {
            self.add_digest(d);
        }
    }

    /// Add a digest whose text is unknown (e.g. reviewed stop chunks). From then on
    /// [`StopList::may_contain_text`] rules out no chunk: every chunk gets its SHA-1.
    pub fn add_digest(&mut self, d: Sha1Digest) {
        self.opaque_digests = true;
        self.insert_digest(d);
    }

    fn insert_digest(&mut self, d: Sha1Digest) {
        if !self.set.insert(d) {
            return;
        }
        if self.set.len() as u64 > self.filter_keys {
            // Keep ~10 bits per key: rebuild at twice the size (amortized O(1) per insert).
            self.filter_keys = (self.set.len() as u64).saturating_mul(2);
            self.filter = BlockedBloom::with_capacity(self.filter_keys, BITS_PER_KEY, K);
            for k in &self.set {
                self.filter.insert(k);
            }
        } else {
            self.filter.insert(&d);
        }
    }

    /// Whether the filter in front of the text-list digests lets `hash` through to the exact
    /// set ("maybe"); `false` means certainly not in the text list.
    pub fn filter_may_contain(&self, hash: &Sha1Digest) -> bool {
        self.filter.may_contain(hash)
    }

    /// Is this raw text a stop chunk (after normalization)?
    pub fn is_stop_text(&self, raw: &str) -> bool {
        self.is_stop(&chunk_hash(&self.norm.apply(raw)))
    }

    pub fn normalization(&self) -> Normalization {
        self.norm
    }

    /// Digests in the text part plus entries of attached `.dls` lists.
    pub fn len(&self) -> usize {
        self.set.len() + self.sets.iter().map(LabelSet::len).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl StopList for StopChunks {
    fn is_stop(&self, hash: &Sha1Digest) -> bool {
        // Filter first; the exact set decides (no false positives, and the filter has no
        // false negatives).
        (self.filter.may_contain(hash) && self.set.contains(hash))
            || self.sets.iter().any(|s| s.lookup(hash).is_some())
    }

    fn may_contain_text(&self, normalized: &[u8]) -> bool {
        self.opaque_digests
            || self.text_keys.contains(text_key(normalized))
            || self.sets.iter().any(|s| normalized.len() >= s.min_member_bytes())
    }

    /// Every word k-gram of the list's texts (all of them, not only anchors: whichever the
    /// label set's modulus keeps is then covered).
    fn stop_passages(&self, p: detector::passages::PassageParams) -> Vec<detector::passages::PassageHash> {
        let all = detector::passages::PassageParams { modulus: 1, ..p };
        let mut out: Vec<_> = self
            .passage_texts
            .iter()
            .flat_map(|t| detector::passages::document_anchors([t.as_str()], all))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_texts_give_stop_passages() {
        let p = detector::passages::PassageParams::default();
        let text = "Content is provided for informational purposes only and is not advice.";
        let s = StopChunks::from_text(&format!("home\n{text}\n"), Normalization::default());
        let got = s.stop_passages(p);
        // 11 words: 7 five-word k-grams; "home" holds none.
        assert_eq!(got.len(), 7);
        let anchors = detector::passages::document_anchors(
            [text],
            detector::passages::PassageParams { modulus: 1, ..p },
        );
        assert_eq!(got, anchors);
        // Reviewed stop chunks (text with its digest) count too.
        let mut r = StopChunks::new(Normalization::default());
        r.add_text_with_digest(text, chunk_hash(&Normalization::default().apply(text)));
        assert_eq!(r.stop_passages(p), got);
    }

    #[test]
    fn default_list_has_the_papers_examples_and_navigation() {
        let n = Normalization::default();
        let s = StopChunks::default_list(n);
        assert!(s.is_stop(&chunk_hash("")));
        assert!(s.is_stop_text("  Back to TOP "));
        assert!(s.is_stop_text("All Rights Reserved"));
        assert!(s.is_stop_text("Loading..."));
        assert!(!s.is_stop_text("The aardvark is a medium-sized, burrowing, nocturnal mammal."));
        assert!(!s.is_stop_text("# Navigation"));
        // With no normalization the single-space paragraph is its own chunk.
        let raw = StopChunks::default_list(Normalization::NONE);
        assert!(raw.is_stop(&chunk_hash(" ")));
        assert!(raw.is_stop(&chunk_hash("")));
    }

    #[test]
    fn text_precheck_never_rules_out_a_stop_chunk() {
        let n = Normalization::default();
        let s = StopChunks::default_list(n);
        let mut listed = 0;
        for line in DEFAULT_LIST.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let raw = match line.trim() {
                "<empty>" => "",
                "<space>" => " ",
                _ => line,
            };
            let normalized = n.apply(raw);
            assert!(s.may_contain_text(normalized.as_bytes()), "{raw:?} ruled out");
            listed += 1;
        }
        assert!(listed >= 40, "{listed}");
        // Most other short texts are ruled out; all long ones are (no .dls attached).
        let ruled_out = (0..1000).filter(|i| !s.may_contain_text(format!("cell {i}").as_bytes())).count();
        assert!(ruled_out > 900, "{ruled_out}");
        assert!(!s.may_contain_text("a paragraph that is not in the list at all".as_bytes()));
        // A digest without text turns the pre-check off.
        let mut opaque = StopChunks::default_list(n);
        opaque.add_digest(detector::fingerprint::sha1(b"x"));
        assert!(opaque.may_contain_text(b"cell 1"));
    }

    #[test]
    fn filter_has_no_false_negatives_and_the_exact_list_decides() {
        use detector::fingerprint::sha1;
        let mut s = StopChunks::new(Normalization::default());
        let n = 5_000u32;
        // Grows past the first filter several times (256 → … keys), rebuilt each time.
        for i in 0..n {
            s.add_digest(sha1(&i.to_le_bytes()));
        }
        assert_eq!(s.len(), n as usize);
        for i in 0..n {
            let d = sha1(&i.to_le_bytes());
            assert!(s.filter_may_contain(&d), "false negative in the filter for {i}");
            assert!(s.is_stop(&d));
        }
        // The filter lets some non-members through (~1 %); the exact set rejects them all.
        let mut passed = 0;
        for i in n..n + 100_000 {
            let d = sha1(&i.to_le_bytes());
            if s.filter_may_contain(&d) {
                passed += 1;
            }
            assert!(!s.is_stop(&d), "{i} is not a stop chunk");
        }
        assert!(passed > 0 && passed < 5_000, "{passed} false positives of the filter in 100000");
        // Text chunks go through the same filter.
        s.add_text("Back to top");
        assert!(s.is_stop_text("  BACK TO TOP "));
    }

    #[test]
    fn text_format_comments_and_escapes() {
        let s = StopChunks::from_text("# c\n\n\\#hashtag\r\nFoo  Bar\n", Normalization::default());
        assert_eq!(s.len(), 2);
        assert!(s.is_stop_text("#HashTag"));
        assert!(s.is_stop_text("foo bar"));
    }
}
