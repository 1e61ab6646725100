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

/// A source needs this many anchor hits on a page to count. Two, not three: a short article
/// spun hard (1 word in 8 replaced, 1 in 10 dropped) keeps about a third of its 5-word
/// sequences, so a 100-word copy shows 2–4 of its ~12 anchors; at 3, one in twelve such
/// copies showed nothing (`scripts/eval_edited_web.sh`, heavy row). Chance is not the guard
/// (two hits of one source among millions, in one span): [`MIN_SOURCE_WORDS`] and
/// [`MIN_SPAN_HITS`] are, against quoted sentences and scattered common phrases.
pub const MIN_HITS: usize = 2;
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
// An odd multiplier with bits spread over the whole word (a 64-bit FNV prime would
// leave the high bits of short words barely mixed before `rotate_left`).
const WORD_PRIME: u64 = 0xff51_afd7_ed55_8ccd;

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
    /// One hash per word, in reading order across blocks (0 for the words of counted
    /// blocks, which are not hashed).
    pub words: Vec<u64>,
    /// `block_starts[b]` = index of block `b`'s first word; one more entry at the end
    /// (empty for a stream of no blocks).
    pub block_starts: Vec<u32>,
    /// Blocks whose words were only counted ([`WordStream::push_counted_block`]), in block
    /// order, with the source they are labeled from, if any.
    pub counted: Vec<(u32, Option<SourceId>)>,
}

impl WordStream {
    /// The word stream of `blocks` (block boundaries are recorded, never used for hashing).
    pub fn of_blocks<'a>(blocks: impl IntoIterator<Item = &'a str>) -> WordStream {
        let mut ws = WordStream::default();
        for b in blocks {
            ws.push_block(b);
        }
        ws
    }

    /// Append one block's words.
    pub fn push_block(&mut self, text: &str) {
        if self.block_starts.is_empty() {
            self.block_starts.push(0);
        }
        push_words(text, &mut self.words);
        self.block_starts.push(self.words.len() as u32);
    }

    /// Append a block already decided without passages (an exact labeled chunk of `labeled`,
    /// or a stop chunk: `None`): its words are counted, not hashed, and no k-gram is taken
    /// across them. A labeled one covers its own words for its source in [`cover`].
    pub fn push_counted_block(&mut self, text: &str, labeled: Option<SourceId>) {
        if self.block_starts.is_empty() {
            self.block_starts.push(0);
        }
        self.counted.push((self.block_count() as u32, labeled));
        let n = self.words.len() + count_words(text) as usize;
        self.words.resize(n, 0);
        self.block_starts.push(n as u32);
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

    /// The word ranges of the runs of hashed blocks (between counted blocks).
    fn hashed_runs(&self) -> Vec<std::ops::Range<usize>> {
        let mut runs = Vec::new();
        let mut start = 0;
        for &(b, _) in &self.counted {
            let r = self.block_range(b as usize);
            if r.start > start {
                runs.push(start..r.start);
            }
            start = r.end;
        }
        if self.words.len() > start {
            runs.push(start..self.words.len());
        }
        runs
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

/// The word hash's version, recorded in a label set's passage header: a table built with
/// another version holds other hashes and must not be matched against this one.
pub const WORD_HASH_VERSION: u32 = 2;

/// Append the hashes of the words of `text` to `out`.
///
/// A word is hashed whole, eight bytes at a time ([`hash_word`]), so the per-byte work is
/// one table lookup to find where it ends: measured on the text-heavy pages, the word pass
/// took 13 % of a scan's CPU when each byte went through a multiplication.
pub fn push_words(text: &str, out: &mut Vec<u64>) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    let mut folded = Vec::new();
    while i < n {
        let b = bytes[i];
        if b < 0x80 && ASCII_WORD[b as usize] == 0 {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && bytes[i] < 0x80 && ASCII_WORD[bytes[i] as usize] != 0 {
            i += 1;
        }
        if i < n && bytes[i] >= 0x80 {
            // A non-ASCII character: the word (if it is one) continues through the
            // general path, lowercased and folded into `folded`.
            let (end, any) = fold_word(text, start, i, &mut folded);
            i = end;
            if any {
                out.push(hash_word(&folded));
            }
            continue;
        }
        out.push(hash_word(&bytes[start..i]));
    }
}

/// The byte ranges of the words of `text`, one per hash [`push_words`] appends: maximal runs
/// of letters and digits (for showing a passage's words, not on the scan's path).
pub fn word_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(s..text.len());
    }
    out
}

/// Count the words of `text` as [`push_words`] would find them, without hashing: sixteen
/// ASCII bytes at a time as a mask of word characters whose run starts are counted; pieces
/// with non-ASCII bytes a character at a time.
pub fn count_words(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let mut count = 0u32;
    let mut in_word = false;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(piece) = bytes.get(i..i + 16) {
            let (word, non_ascii) = alnum_masks16(piece);
            if non_ascii == 0 {
                let starts = word & !((word << 1) | u16::from(in_word));
                count += starts.count_ones();
                in_word = word & 0x8000 != 0;
                i += 16;
                continue;
            }
        }
        // A character at a time to the end of this piece (or of the text).
        let stop = (i + 16).min(bytes.len());
        while i < stop {
            let b = bytes[i];
            let word = if b < 0x80 {
                i += 1;
                ASCII_WORD[b as usize] != 0
            } else {
                let ch = text.get(i..).and_then(|t| t.chars().next()).unwrap_or(' ');
                i += ch.len_utf8();
                ch.is_alphanumeric()
            };
            count += u32::from(word && !in_word);
            in_word = word;
        }
    }
    count
}

/// Bit j set where byte j of `s` (16 bytes) is an ASCII letter or digit, and where it is
/// not ASCII (all 16 when `s` is shorter).
#[inline(always)]
fn alnum_masks16(s: &[u8]) -> (u16, u16) {
    let (alnum, _, non_ascii) = ascii_masks16(s);
    (alnum, non_ascii)
}

/// For the 16 bytes of `s`: bit j set where byte j is an ASCII letter or digit, where it is
/// `_`, and where it is not ASCII (`(0, 0, 0xffff)` when `s` is shorter). Shared with the
/// SimHash word pass (`fingerprint::long_words`), whose words also take `_`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn ascii_masks16(s: &[u8]) -> (u16, u16, u16) {
    use std::arch::x86_64::*;
    if s.len() < 16 {
        return (0, 0, 0xffff);
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
        (
            _mm_movemask_epi8(_mm_or_si128(letter, digit)) as u16,
            _mm_movemask_epi8(under) as u16,
            _mm_movemask_epi8(v) as u16,
        )
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn ascii_masks16(s: &[u8]) -> (u16, u16, u16) {
    if s.len() < 16 {
        return (0, 0, 0xffff);
    }
    let (mut alnum, mut under, mut non_ascii) = (0u16, 0u16, 0u16);
    for (j, &c) in s.iter().take(16).enumerate() {
        alnum |= u16::from(c.is_ascii_alphanumeric()) << j;
        under |= u16::from(c == b'_') << j;
        non_ascii |= u16::from(c >= 0x80) << j;
    }
    (alnum, under, non_ascii)
}

/// The word of `text` that starts at `start` and whose ASCII prefix ends at `ascii_end`,
/// lowercased and folded into `out`: returns where it ends and whether it has any word
/// character (a non-ASCII separator right at `start` makes none).
fn fold_word(text: &str, start: usize, ascii_end: usize, out: &mut Vec<u8>) -> (usize, bool) {
    out.clear();
    out.extend(text.as_bytes()[start..ascii_end].iter().map(|&b| ASCII_WORD[b as usize]));
    let mut end = ascii_end;
    for ch in text.get(ascii_end..).unwrap_or("").chars() {
        if ch.is_ascii() {
            if ASCII_WORD[ch as usize] == 0 {
                break;
            }
            out.push(ASCII_WORD[ch as usize]);
        } else if ch.is_alphanumeric() {
            let lower = fold_char(ch.to_lowercase().next().unwrap_or(ch));
            let mut buf = [0u8; 4];
            out.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
        } else {
            break;
        }
        end += ch.len_utf8();
    }
    if end == start {
        // A non-word character at the start: step over it.
        let skip = text.get(start..).and_then(|t| t.chars().next()).map_or(1, char::len_utf8);
        return (start + skip, false);
    }
    (end, !out.is_empty())
}

const LOWER_ASCII: u64 = 0x2020_2020_2020_2020;

/// The hash of one word, given as its letters and digits (ASCII in any case, or already
/// lowercased and folded UTF-8): eight bytes at a time, ORed with 0x20 each (which
/// lowercases ASCII letters and leaves digits as they are), length mixed in, then
/// [`mix`]ed.
#[inline]
pub fn hash_word(w: &[u8]) -> u64 {
    let mut h = WORD_SEED ^ (w.len() as u64).wrapping_mul(KGRAM_BASE);
    let mut chunks = w.chunks_exact(8);
    for c in &mut chunks {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        h = (h ^ (u64::from_le_bytes(b) | LOWER_ASCII)).wrapping_mul(WORD_PRIME).rotate_left(23);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut b = [0u8; 8];
        b[..tail.len()].copy_from_slice(tail);
        let mask = u64::MAX >> (8 * (8 - tail.len()));
        h = (h ^ ((u64::from_le_bytes(b) | LOWER_ASCII) & mask)).wrapping_mul(WORD_PRIME).rotate_left(23);
    }
    mix(h)
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
    /// The covered shares of the other blocks (those partly covered), summed: a heavily
    /// spun paragraph of which a third survives counts a third.
    pub partial_blocks: f64,
}

/// Find a page's labeled passages: anchors looked up, hits turned into covered words per
/// source, sources below [`MIN_HITS`] / [`MIN_SOURCE_WORDS`] dropped, blocks judged by the
/// share of their words covered. A counted block labeled from a source
/// ([`WordStream::push_counted_block`]) covers its words for that source, which then counts
/// without thresholds (the page is already shown to copy it) and bridges to its hits as a
/// hit would.
pub fn cover(ws: &WordStream, table: &dyn PassageLookup) -> PassageCover {
    let p = table.params();
    let n = ws.words.len();
    let mut out = PassageCover { words: n as u32, ..Default::default() };
    if !p.is_valid() {
        return out;
    }
    let mut anc = Vec::new();
    let mut run_anchors = Vec::new();
    for run in ws.hashed_runs() {
        anchors(&ws.words[run.clone()], p, &mut run_anchors);
        anc.extend(run_anchors.iter().map(|a| Anchor { hash: a.hash, word: a.word + run.start as u32 }));
    }
    // A k-gram repeated on the page is one piece of evidence: its first place.
    anc.sort_unstable_by_key(|a| (a.hash, a.word));
    anc.dedup_by_key(|a| a.hash);
    // (source, first word, last word + 1, from a hit): hits, then labeled counted blocks.
    let mut marks: Vec<(SourceId, usize, usize, bool)> = Vec::new();
    for a in &anc {
        if table.is_stop_passage(a.hash) {
            continue;
        }
        if let Some(s) = table.lookup_passage(a.hash) {
            marks.push((s, a.word as usize, a.word as usize + p.words as usize, true));
        }
    }
    for &(b, labeled) in &ws.counted {
        if let Some(s) = labeled {
            let r = ws.block_range(b as usize);
            marks.push((s, r.start, r.end, false));
        }
    }
    if marks.is_empty() {
        return out;
    }
    marks.sort_unstable();
    // Per word: the source covering it (the first accepted source, most words first).
    let mut owner: Vec<SourceId> = vec![NOBODY; n];
    let mut per_source: Vec<(SourceCover, Vec<(usize, usize)>)> = Vec::new();
    for group in marks.chunk_by(|a, b| a.0 == b.0) {
        let hits = group.iter().filter(|m| m.3).count();
        let proven = hits < group.len();
        if hits < MIN_HITS && !proven {
            continue;
        }
        // A lone hit far from the source's others is a common phrase, not a copy (on a long
        // page, three of them would otherwise reach the thresholds): only clusters count.
        let spans: Vec<Span> = spans_of(group.iter().map(|m| (m.1, m.2, m.3)), p, ws)
            .into_iter()
            .filter(|s| proven || s.hits >= MIN_SPAN_HITS)
            .collect();
        let hits: u32 = spans.iter().map(|s| s.hits).sum();
        let words: usize = spans.iter().map(|s| s.end - s.start).sum();
        if (hits < MIN_HITS as u32 || words < MIN_SOURCE_WORDS as usize) && !proven {
            continue;
        }
        let spans: Vec<(usize, usize)> = spans.iter().map(|s| (s.start, s.end)).collect();
        let sc = SourceCover { source: group[0].0, hits, words: words as u32 };
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
    let mut counted = ws.counted.iter().map(|c| c.0 as usize).peekable();
    for b in 0..ws.block_count() {
        if counted.next_if_eq(&b).is_some() {
            continue;
        }
        let r = ws.block_range(b);
        if r.is_empty() {
            continue;
        }
        let covered = owner[r.clone()].iter().filter(|&&o| o != NOBODY).count();
        if (covered as f64) < BLOCK_COVER_SHARE * r.len() as f64 {
            out.partial_blocks += covered as f64 / r.len() as f64;
            continue;
        }
        if let Some(src) = majority(&owner[r]) {
            out.blocks.push((b as u32, src));
        }
    }
    out
}

/// The word spans one source's marks cover (`(first, end, is_hit)`, sorted by first word):
/// a hit's k-gram widened by a modulus on each side, but not into another block (a
/// navigation line beside a copied paragraph is not copied because a hit is near it), a
/// labeled counted block as it is; marks at most [`BRIDGE_MODULI`] moduli apart joined,
/// across blocks (text between two hits of one source is the copy's); merged.
fn spans_of(
    marks: impl Iterator<Item = (usize, usize, bool)>,
    p: PassageParams,
    ws: &WordStream,
) -> Vec<Span> {
    let half = p.modulus as usize;
    let bridge = (BRIDGE_MODULI * p.modulus) as usize;
    let n = ws.words.len();
    let mut spans: Vec<Span> = Vec::new();
    for (pos, end, is_hit) in marks {
        let (s, e) = if is_hit {
            let first = ws.block_range(ws.block_of(pos));
            let last = ws.block_range(ws.block_of(end.saturating_sub(1).min(n.saturating_sub(1))));
            (pos.saturating_sub(half).max(first.start), (end + half).min(last.end.max(end)).min(n))
        } else {
            (pos, end)
        };
        let hits = u32::from(is_hit);
        match spans.last_mut() {
            Some(last) if s <= last.end || pos.saturating_sub(last.end) <= bridge => {
                last.end = last.end.max(e);
                last.hits += hits;
            }
            _ => spans.push(Span { start: s, end: e, hits }),
        }
    }
    spans
}

/// Words one source's marks cover together, with the hits among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    hits: u32,
}

/// A span counts only with this many hits (or beside exact chunks of its source).
pub const MIN_SPAN_HITS: u32 = 2;

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
    #[test]
    fn word_spans_find_the_words_push_words_hashes() {
        for t in ["Hello, wörld! ‘Quoted’ x_y 42nd; Ѕtop—go", "", "  …  ", "éa b", "a\u{300}b c"] {
            let mut hashes = Vec::new();
            push_words(t, &mut hashes);
            let spans = word_spans(t);
            assert_eq!(spans.len(), hashes.len(), "{t:?}");
            let mut again = Vec::new();
            for r in &spans {
                push_words(&t[r.clone()], &mut again);
            }
            assert_eq!(again, hashes, "{t:?}");
        }
    }

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
    fn counted_words_are_the_hashed_words() {
        let samples = [
            TEXT,
            "",
            "one",
            "  lead and trail  ",
            "Ünïcode wörds — with ‘quotes’ and naïve café 2026 ΑΒΓ δεζ Москва",
            "abcdefghijklmnopqrstuvwxyz0123456789 exactly-sixteen!x ab\u{a0}cd",
            "x\u{2014}y\u{00e9}z 12,34 a_b ...",
        ];
        for t in samples {
            let mut w = Vec::new();
            push_words(t, &mut w);
            assert_eq!(count_words(t) as usize, w.len(), "{t:?}");
            // Every cut of the text into two pieces at a char boundary counts the same
            // words when the cut falls between words.
            for (cut, _) in t.char_indices() {
                let (a, b) = t.split_at(cut);
                let (mut wa, mut wb) = (Vec::new(), Vec::new());
                push_words(a, &mut wa);
                push_words(b, &mut wb);
                assert_eq!(count_words(a) as usize, wa.len(), "{a:?}");
                assert_eq!(count_words(b) as usize, wb.len(), "{b:?}");
            }
        }
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

    /// Hits of 5-word k-grams at `at`, as `spans_of` takes them.
    fn hits(at: &[usize]) -> impl Iterator<Item = (usize, usize, bool)> + '_ {
        at.iter().map(|&w| (w, w + 5, true))
    }

    /// `spans_of`'s spans as (start, end).
    fn ranges(spans: Vec<Span>) -> Vec<(usize, usize)> {
        spans.into_iter().map(|s| (s.start, s.end)).collect()
    }

    #[test]
    fn spans_widen_and_bridge() {
        let p = PassageParams { words: 5, modulus: 8 };
        let one = stream(&[100]);
        // Hits at 10 and 30: [2, 23) and [22, 43), overlapping: one span.
        assert_eq!(ranges(spans_of(hits(&[10, 30]), p, &one)), vec![(2, 43)]);
        // Hits at 20 and 80: [12, 33), then 47 words to 80 (≤ 64): bridged.
        assert_eq!(ranges(spans_of(hits(&[20, 80]), p, &one)), vec![(12, 93)]);
        // Hits 95 apart (82 words between): two spans, the last clipped to the text.
        assert_eq!(ranges(spans_of(hits(&[0, 95]), p, &one)), vec![(0, 13), (87, 100)]);
        // Blocks of 5, 50, 45 words: a hit at 5 is not widened into the first block, nor one
        // at 50 into the third; a k-gram crossing a boundary covers its own words.
        let three = stream(&[5, 50, 45]);
        assert_eq!(three.block_of(4), 0);
        assert_eq!(three.block_of(5), 1);
        assert_eq!(ranges(spans_of(hits(&[5]), p, &three)), vec![(5, 18)]);
        assert_eq!(ranges(spans_of(hits(&[46]), p, &three)), vec![(38, 55)]);
        assert_eq!(ranges(spans_of(hits(&[53]), p, &three)), vec![(45, 66)]);
    }

    #[test]
    fn scattered_common_phrases_are_no_copy_clustered_ones_are() {
        let p = PassageParams::default();
        let t = table_of(TEXT, p, 7);
        // Three anchors of the source, as 5-word phrases.
        let words: Vec<&str> = TEXT.split_whitespace().collect();
        let mut hashes = Vec::new();
        push_words(TEXT, &mut hashes);
        assert_eq!(hashes.len(), words.len());
        let mut a = Vec::new();
        anchors(&hashes, p, &mut a);
        assert!(a.len() >= 3, "{a:?}");
        let phrases: Vec<String> =
            a.iter().take(3).map(|x| words[x.word as usize..][..5].join(" ")).collect();
        let filler = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        // 300 unrelated words apart (a long manual sharing three phrases with the source):
        // three lone hits, no cluster.
        let far = format!("{} {} {} {} {}", phrases[0], filler(300), phrases[1], filler(300), phrases[2]);
        let c = cover(&WordStream::of_blocks([far.as_str()]), &t);
        assert!(c.sources.is_empty(), "{c:?}");
        // 30 words apart: one cluster of three hits.
        let near = format!("{} {} {} {} {}", phrases[0], filler(30), phrases[1], filler(30), phrases[2]);
        let c = cover(&WordStream::of_blocks([near.as_str()]), &t);
        assert_eq!(c.sources.first().map(|s| (s.source, s.hits)), Some((7, 3)), "{c:?}");
    }

    #[test]
    fn params_are_checked() {
        assert!(PassageParams::default().is_valid());
        assert!(!PassageParams { words: 5, modulus: 12 }.is_valid());
        assert!(!PassageParams { words: 1, modulus: 8 }.is_valid());
    }
}
