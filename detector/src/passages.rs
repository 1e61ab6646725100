//! Passage fingerprints: labeled text found where it was edited (issue 36).
//!
//! Ardi & Heidemann's chunks (§3.1 steps 2–5) match a paragraph only when it survives byte
//! for byte after normalization: one word changed, or two paragraphs joined into one block,
//! and the chunk is gone. Passages are taken from the **word stream** of a document instead,
//! regardless of where its blocks begin and end:
//!
//! 1. Words: maximal runs of letters and digits, lowercased, with common look-alike letters
//!    (Cyrillic and Greek letters shaped like Latin ones) folded to Latin ([`fold_char`]), so
//!    punctuation, markup and look-alike substitutions change nothing.
//! 2. Every run of [`PassageParams::words`] consecutive words (a word k-gram, Najork 2012's and
//!    Schleimer et al. 2003's unit) gets a 64-bit hash.
//! 3. **Anchors chosen by hash** (Abdel-Hamid et al. 2009, §3: segments selected by the value
//!    of their own hash, so both sides select the same ones without coordination): a k-gram
//!    is kept when its hash is 0 modulo [`PassageParams::modulus`]. Unlike winnowing's window
//!    minimum, this choice depends on the k-gram alone, so a word changed next to a k-gram
//!    cannot unselect it: a copy with edits keeps every anchor whose k words survived.
//!
//! A label set stores its sources' anchors (hash → source); a page's anchors are looked up,
//! and the hits of one source are turned into the words they cover ([`cover`]): each hit
//! stands for the `modulus` words on each side of it (anchors fall every `modulus` words
//! on average), and hits of one source at most [`BRIDGE_MODULI`] × `modulus` words apart
//! cover the words between them. A source counts on a page only with at least
//! [`MIN_HITS`] hits covering at least [`MIN_SOURCE_WORDS`] words: one quoted sentence or a
//! shared name and date is not a copy.

use crate::SourceId;

/// A passage fingerprint: the 64-bit hash of a word k-gram.
pub type PassageHash = u64;

/// How passages are taken: the k-gram length and the anchor modulus. A label set records
/// them; a scan takes them from the label set, so both sides always agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassageParams {
    /// Words per k-gram.
    pub words: u32,
    /// A k-gram is an anchor when its hash is 0 modulo this (a power of two).
    pub modulus: u32,
}

impl Default for PassageParams {
    fn default() -> Self {
        PassageParams { words: 5, modulus: 8 }
    }
}

impl PassageParams {
    /// Whether the parameters can be used: 2..=16 words, a power-of-two modulus 1..=1024.
    pub fn is_valid(&self) -> bool {
        (2..=16).contains(&self.words) && self.modulus.is_power_of_two() && self.modulus <= 1024
    }

    fn is_anchor(&self, h: PassageHash) -> bool {
        h & u64::from(self.modulus - 1) == 0
    }
}

/// A source needs this many anchor hits on a page to count.
pub const MIN_HITS: usize = 3;
/// ... and its hits must cover at least this many words.
pub const MIN_SOURCE_WORDS: u32 = 50;
/// Hits of one source at most this many moduli apart cover the words between them.
pub const BRIDGE_MODULI: u32 = 8;
/// A block counts as copied when at least this share of its words is covered.
pub const BLOCK_COVER_SHARE: f64 = 0.5;

/// Look-alike letters folded to the Latin letter they imitate (after lowercasing).
#[inline]
pub fn fold_char(c: char) -> char {
    match c {
        // Cyrillic
        'а' => 'a',
        'в' => 'b',
        'е' | 'ё' => 'e',
        'к' => 'k',
        'м' => 'm',
        'н' => 'h',
        'о' => 'o',
        'р' => 'p',
        'с' => 'c',
        'т' => 't',
        'у' => 'y',
        'х' => 'x',
        'ѕ' => 's',
        'і' => 'i',
        'ј' => 'j',
        'ԁ' => 'd',
        'ԛ' => 'q',
        'ԝ' => 'w',
        // Greek
        'α' => 'a',
        'β' => 'b',
        'ε' => 'e',
        'η' => 'n',
        'ι' => 'i',
        'κ' => 'k',
        'ν' => 'v',
        'ο' => 'o',
        'ρ' => 'p',
        'τ' => 't',
        'υ' => 'u',
        'χ' => 'x',
        // Latin look-alikes
        'ı' => 'i',
        'ɡ' => 'g',
        _ => c,
    }
}

const WORD_SEED: u64 = 0xcbf2_9ce4_8422_2325;
const WORD_PRIME: u64 = 0x0000_0100_0000_01b3;

#[inline]
fn mix(mut z: u64) -> u64 {
    // splitmix64's finalizer: every input bit reaches every output bit.
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A document's words as hashes, with the block each word is in.
#[derive(Debug, Default, Clone)]
pub struct WordStream {
    /// One hash per word, in reading order across blocks.
    pub words: Vec<u64>,
    /// `block_starts[b]` = index of block `b`'s first word; one more entry at the end.
    pub block_starts: Vec<u32>,
}

impl WordStream {
    /// The word stream of `blocks` (block boundaries are recorded, never used for hashing).
    pub fn of_blocks<'a>(blocks: impl IntoIterator<Item = &'a str>) -> WordStream {
        let mut ws = WordStream::default();
        for b in blocks {
            ws.block_starts.push(ws.words.len() as u32);
            push_words(b, &mut ws.words);
        }
        ws.block_starts.push(ws.words.len() as u32);
        ws
    }

    /// Words in block `b`.
    pub fn block_range(&self, b: usize) -> std::ops::Range<usize> {
        let s = self.block_starts.get(b).copied().unwrap_or(0) as usize;
        let e = self.block_starts.get(b + 1).copied().unwrap_or(s as u32) as usize;
        s..e.max(s)
    }

    /// The block holding word `w` (the last block starting at or before it).
    pub fn block_of(&self, w: usize) -> usize {
        self.block_starts
            .partition_point(|&s| s as usize <= w)
            .saturating_sub(1)
            .min(self.block_count().saturating_sub(1))
    }

    pub fn block_count(&self) -> usize {
        self.block_starts.len().saturating_sub(1)
    }
}

/// ASCII bytes as word characters: the lowercase letter or digit, 0 for a separator.
const ASCII_WORD: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        let b = i as u8;
        if b.is_ascii_alphanumeric() {
            t[i] = b.to_ascii_lowercase();
        }
        i += 1;
    }
    t
};

/// Append the hashes of the words of `text` to `out`.
pub fn push_words(text: &str, out: &mut Vec<u64>) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    let mut h = WORD_SEED;
    let mut in_word = false;
    while i < n {
        // ASCII runs in tight loops (the text is mostly ASCII): separators skipped, a word's
        // letters and digits hashed one table lookup a byte.
        let b = bytes[i];
        if b < 0x80 {
            let c = ASCII_WORD[b as usize];
            if c == 0 {
                if in_word {
                    out.push(mix(h));
                    h = WORD_SEED;
                    in_word = false;
                }
                i += 1;
                continue;
            }
            h = (h ^ u64::from(c)).wrapping_mul(WORD_PRIME);
            in_word = true;
            i += 1;
            while i < n && bytes[i] < 0x80 {
                let c = ASCII_WORD[bytes[i] as usize];
                if c == 0 {
                    break;
                }
                h = (h ^ u64::from(c)).wrapping_mul(WORD_PRIME);
                i += 1;
            }
            continue;
        }
        let ch = text.get(i..).and_then(|t| t.chars().next()).unwrap_or(' ');
        i += ch.len_utf8();
        if ch.is_alphanumeric() {
            let lower = ch.to_lowercase().next().unwrap_or(ch);
            h = (h ^ u64::from(fold_char(lower) as u32)).wrapping_mul(WORD_PRIME);
            in_word = true;
        } else if in_word {
            out.push(mix(h));
            h = WORD_SEED;
            in_word = false;
        }
    }
    if in_word {
        out.push(mix(h));
    }
}

/// The polynomial base of k-gram hashes (odd).
const KGRAM_BASE: u64 = 0x9e37_79b9_7f4a_7c15;

/// The hash of the k-gram `words` (k = `words.len()`): `mix(Σ w_j · B^(k-1-j))`, the value
/// [`anchors`] rolls along the stream.
#[inline]
pub fn kgram_hash(words: &[u64]) -> PassageHash {
    mix(words.iter().fold(0u64, |acc, &w| acc.wrapping_mul(KGRAM_BASE).wrapping_add(w)))
}

/// One selected k-gram: its hash and the index of its first word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    pub hash: PassageHash,
    pub word: u32,
}

/// The anchors of a word stream, in order.
pub fn anchors(words: &[u64], p: PassageParams, out: &mut Vec<Anchor>) {
    out.clear();
    let k = p.words as usize;
    if k == 0 || words.len() < k {
        return;
    }
    // Rolling: the sum for the window at i+1 from the one at i, two multiplications a word.
    let top = (1..k).fold(1u64, |acc, _| acc.wrapping_mul(KGRAM_BASE)); // B^(k-1)
    let mut sum = words[..k].iter().fold(0u64, |acc, &w| acc.wrapping_mul(KGRAM_BASE).wrapping_add(w));
    for i in 0..=words.len() - k {
        if i > 0 {
            sum = sum
                .wrapping_sub(words[i - 1].wrapping_mul(top))
                .wrapping_mul(KGRAM_BASE)
                .wrapping_add(words[i + k - 1]);
        }
        let h = mix(sum);
        if p.is_anchor(h) {
            out.push(Anchor { hash: h, word: i as u32 });
        }
    }
}

/// Membership in a label set's passage table. Implemented by `labelsets::LabelSet`.
pub trait PassageLookup: Sync {
    /// The passage parameters the table was built with.
    fn params(&self) -> PassageParams;
    /// The source of the passage `h`, or `None`.
    fn lookup_passage(&self, h: PassageHash) -> Option<SourceId>;
    /// Whether a passage is a stop passage (common text: navigation, legal, templates).
    fn is_stop_passage(&self, _h: PassageHash) -> bool {
        false
    }
}

impl PassageLookup for (PassageParams, std::collections::HashMap<PassageHash, SourceId>) {
    fn params(&self) -> PassageParams {
        self.0
    }
    fn lookup_passage(&self, h: PassageHash) -> Option<SourceId> {
        self.1.get(&h).copied()
    }
}

/// One source's share of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceCover {
    pub source: SourceId,
    /// Anchors of the page found in this source.
    pub hits: u32,
    /// Words of the page its passages cover.
    pub words: u32,
}

/// What the passages of one page show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassageCover {
    /// Words on the page.
    pub words: u32,
    /// Words covered by the passages of the sources that count (union).
    pub covered_words: u32,
    /// The sources that count, most words first.
    pub sources: Vec<SourceCover>,
    /// Blocks at least [`BLOCK_COVER_SHARE`] covered, with the source covering most of each.
    pub blocks: Vec<(u32, SourceId)>,
}

/// Find a page's labeled passages: anchors looked up, hits turned into covered words per
/// source, sources below [`MIN_HITS`] / [`MIN_SOURCE_WORDS`] dropped, blocks judged by the
/// share of their words covered.
pub fn cover(ws: &WordStream, table: &dyn PassageLookup) -> PassageCover {
    let p = table.params();
    let n = ws.words.len();
    let mut out = PassageCover { words: n as u32, ..Default::default() };
    if !p.is_valid() {
        return out;
    }
    let mut anc = Vec::new();
    anchors(&ws.words, p, &mut anc);
    // A k-gram repeated on the page is one piece of evidence: its first place.
    anc.sort_unstable_by_key(|a| (a.hash, a.word));
    anc.dedup_by_key(|a| a.hash);
    let mut hits: Vec<(SourceId, u32)> = Vec::new();
    for a in &anc {
        if table.is_stop_passage(a.hash) {
            continue;
        }
        if let Some(s) = table.lookup_passage(a.hash) {
            hits.push((s, a.word));
        }
    }
    if hits.len() < MIN_HITS {
        return out;
    }
    hits.sort_unstable();
    // Per word: the source covering it (the first accepted source, most words first).
    let mut owner: Vec<SourceId> = vec![NOBODY; n];
    let mut per_source: Vec<(SourceCover, Vec<(usize, usize)>)> = Vec::new();
    for group in hits.chunk_by(|a, b| a.0 == b.0) {
        if group.len() < MIN_HITS {
            continue;
        }
        let spans = spans_of(group.iter().map(|h| h.1 as usize), p, ws);
        let words: usize = spans.iter().map(|(s, e)| e - s).sum();
        if words < MIN_SOURCE_WORDS as usize {
            continue;
        }
        let sc = SourceCover { source: group[0].0, hits: group.len() as u32, words: words as u32 };
        per_source.push((sc, spans));
    }
    per_source.sort_by(|a, b| b.0.words.cmp(&a.0.words).then(a.0.source.cmp(&b.0.source)));
    for (i, (sc, spans)) in per_source.iter().enumerate() {
        for &(s, e) in spans {
            match owner.get_mut(s..e) {
                // The first source takes its spans whole; later ones only what is left.
                Some(words) if i == 0 => words.fill(sc.source),
                Some(words) => words.iter_mut().filter(|o| **o == NOBODY).for_each(|o| *o = sc.source),
                None => {}
            }
        }
    }
    out.sources = per_source.into_iter().map(|(sc, _)| sc).collect();
    out.covered_words = owner.iter().filter(|&&o| o != NOBODY).count() as u32;
    for b in 0..ws.block_count() {
        let r = ws.block_range(b);
        if r.is_empty() {
            continue;
        }
        let covered = owner[r.clone()].iter().filter(|&&o| o != NOBODY).count();
        if (covered as f64) < BLOCK_COVER_SHARE * r.len() as f64 {
            continue;
        }
        if let Some(src) = majority(&owner[r]) {
            out.blocks.push((b as u32, src));
        }
    }
    out
}

/// The word spans hits at `positions` (sorted) cover: each hit's k-gram widened by a
/// modulus on each side, but not into another block (a navigation line beside a copied
/// paragraph is not copied because a hit is near it); hits at most [`BRIDGE_MODULI`] moduli
/// apart joined, across blocks (text between two hits of one source is the copy's); merged.
fn spans_of(
    positions: impl Iterator<Item = usize>,
    p: PassageParams,
    ws: &WordStream,
) -> Vec<(usize, usize)> {
    let half = p.modulus as usize;
    let k = p.words as usize;
    let bridge = (BRIDGE_MODULI * p.modulus) as usize;
    let n = ws.words.len();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for pos in positions {
        let first = ws.block_range(ws.block_of(pos));
        let last = ws.block_range(ws.block_of((pos + k).saturating_sub(1).min(n.saturating_sub(1))));
        let s = pos.saturating_sub(half).max(first.start);
        let e = (pos + k + half).min(last.end.max(pos + k)).min(n);
        match spans.last_mut() {
            Some(last) if s <= last.1 || pos.saturating_sub(last.1) <= bridge => last.1 = last.1.max(e),
            _ => spans.push((s, e)),
        }
    }
    spans
}

/// No source covers the word.
const NOBODY: SourceId = SourceId::MAX;

/// The source owning most of `owner`'s covered words (lowest id on ties).
fn majority(owner: &[SourceId]) -> Option<SourceId> {
    let mut counts: Vec<(SourceId, u32)> = Vec::new();
    for s in owner.iter().filter(|&&o| o != NOBODY) {
        match counts.iter_mut().find(|c| c.0 == *s) {
            Some(c) => c.1 += 1,
            None => counts.push((*s, 1)),
        }
    }
    counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|c| c.0)
}

/// A document's distinct anchors, as a label-set builder takes them.
pub fn document_anchors<'a>(blocks: impl IntoIterator<Item = &'a str>, p: PassageParams) -> Vec<PassageHash> {
    let ws = WordStream::of_blocks(blocks);
    let mut anc = Vec::new();
    anchors(&ws.words, p, &mut anc);
    let mut hs: Vec<PassageHash> = anc.into_iter().map(|a| a.hash).collect();
    hs.sort_unstable();
    hs.dedup();
    hs
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const TEXT: &str = "The river rises in the northern hills and flows south through a wide valley \
        where farmers have grown wheat and barley since the twelfth century. In 1820 a canal was \
        dug beside it to carry coal from the mines at Aldbury to the port, and the towns along its \
        banks grew quickly. The canal closed in 1931 after the railway took its trade, and most of \
        it was filled in during the following decades. Today a footpath follows the old towpath \
        for eleven miles, and the river is known for its trout and for the stone bridges that \
        cross it at every village between the hills and the sea. Local histories record floods in \
        1795, 1852 and 1968, each of which destroyed mills and bridges along the lower valley.";

    fn table_of(
        text: &str,
        p: PassageParams,
        source: SourceId,
    ) -> (PassageParams, HashMap<PassageHash, SourceId>) {
        let map = document_anchors([text], p).into_iter().map(|h| (h, source)).collect();
        (p, map)
    }

    #[test]
    fn words_ignore_case_punctuation_markup_and_look_alikes() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        push_words("The river, rises: in 1820!", &mut a);
        // Cyrillic е and о in place of Latin e and o.
        push_words("the RIVЕR rises in — 1820", &mut b);
        assert_eq!(a, b);
        // The rolling hash of `anchors` is the k-gram hash of each window.
        let mut words = Vec::new();
        push_words(TEXT, &mut words);
        let p = PassageParams { words: 5, modulus: 1 };
        let mut all = Vec::new();
        anchors(&words, p, &mut all);
        assert_eq!(all.len(), words.len() - 4);
        for a in &all {
            assert_eq!(a.hash, kgram_hash(&words[a.word as usize..a.word as usize + 5]));
        }
        let mut c = Vec::new();
        push_words("the rivers rises in 1820", &mut c);
        assert_ne!(a, c);
    }

    #[test]
    fn fingerprints_are_independent_of_block_boundaries() {
        let p = PassageParams::default();
        let words: Vec<&str> = TEXT.split(' ').filter(|w| !w.is_empty()).collect();
        let whole = document_anchors([TEXT], p);
        assert!(whole.len() >= 5, "{} anchors", whole.len());
        // Cut into blocks at many different places: the same anchors every time.
        for cut in [1usize, 3, 7, 13, 40] {
            let blocks: Vec<String> = words.chunks(cut).map(|c| c.join(" ")).collect();
            let split = document_anchors(blocks.iter().map(String::as_str), p);
            assert_eq!(split, whole, "blocks of {cut} words");
        }
        // Sentences as blocks, and two paragraphs joined into one.
        let sentences: Vec<&str> = TEXT.split_inclusive(". ").collect();
        assert_eq!(document_anchors(sentences.iter().copied(), p), whole);
    }

    #[test]
    fn an_edited_copy_is_covered_and_a_quote_is_not() {
        let p = PassageParams::default();
        let t = table_of(TEXT, p, 7);
        // One word in ten replaced.
        let edited: Vec<String> = TEXT
            .split(' ')
            .enumerate()
            .map(|(i, w)| if i % 10 == 5 { "zzz".to_string() } else { w.to_string() })
            .collect();
        let edited = edited.join(" ");
        let ws = WordStream::of_blocks([edited.as_str()]);
        let c = cover(&ws, &t);
        assert_eq!(c.sources.first().map(|s| s.source), Some(7), "{c:?}");
        assert!(c.covered_words as f64 > 0.6 * c.words as f64, "{c:?}");
        assert_eq!(c.blocks, vec![(0, 7)]);
        // One sentence quoted inside other text.
        let quote = "I once read that the canal closed in 1931 after the railway took its trade, \
            which surprised me, because my grandmother always said it was busy until the war.";
        let ws = WordStream::of_blocks([quote]);
        let c = cover(&ws, &t);
        assert!(c.sources.is_empty() && c.blocks.is_empty(), "{c:?}");
    }

    fn stream(block_lens: &[u32]) -> WordStream {
        let mut ws = WordStream::default();
        for &l in block_lens {
            ws.block_starts.push(ws.words.len() as u32);
            ws.words.extend((0..l).map(u64::from));
        }
        ws.block_starts.push(ws.words.len() as u32);
        ws
    }

    #[test]
    fn spans_widen_and_bridge() {
        let p = PassageParams { words: 5, modulus: 8 };
        let one = stream(&[100]);
        // Hits at 10 and 30: [2, 23) and [22, 43), overlapping: one span.
        assert_eq!(spans_of([10usize, 30].into_iter(), p, &one), vec![(2, 43)]);
        // Hits at 20 and 80: [12, 33), then 47 words to 80 (≤ 64): bridged.
        assert_eq!(spans_of([20usize, 80].into_iter(), p, &one), vec![(12, 93)]);
        // Hits 95 apart (82 words between): two spans, the last clipped to the text.
        assert_eq!(spans_of([0usize, 95].into_iter(), p, &one), vec![(0, 13), (87, 100)]);
        // Blocks of 5, 50, 45 words: a hit at 5 is not widened into the first block, nor one
        // at 50 into the third; a k-gram crossing a boundary covers its own words.
        let three = stream(&[5, 50, 45]);
        assert_eq!(three.block_of(4), 0);
        assert_eq!(three.block_of(5), 1);
        assert_eq!(spans_of([5usize].into_iter(), p, &three), vec![(5, 18)]);
        assert_eq!(spans_of([46usize].into_iter(), p, &three), vec![(38, 55)]);
        assert_eq!(spans_of([53usize].into_iter(), p, &three), vec![(45, 66)]);
    }

    #[test]
    fn params_are_checked() {
        assert!(PassageParams::default().is_valid());
        assert!(!PassageParams { words: 5, modulus: 12 }.is_valid());
        assert!(!PassageParams { words: 1, modulus: 8 }.is_valid());
    }
}
