//! `ditto stopchunks` (§3.4.2): a store's most frequent chunks suggested for review, and
//! the chunks reviewed on the review page written back as a stop list.
//!
//! Passages (issue 36) get the same treatment: a template line whose words vary from site to
//! site ("Posted on February 13, 2021 by editor") is no frequent chunk, but its passages are
//! frequent. The most frequent passages not inside a stop chunk or a suggested chunk follow the
//! chunks, as lines of words: a stop list's texts give stop passages (every word k-gram of
//! them), so a reviewed line keeps that boilerplate out of passage evidence too.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use detector::fingerprint::{fingerprint_with_file_hash, hex, Sha1Digest};
use detector::passages::{anchors, word_spans, Anchor, PassageHash, PassageParams, WordStream};
use detector::{Normalization, StopList};
use labelsets::StopChunks;
use store::Store;

use super::corpus::{for_each_page, Corpus};
use crate::analysis::counting::{Counter, CountingConfig, Key};
use crate::labelset::{load_stops, store_normalization};
use crate::report::output::write_buffered_atomically;

/// What `ditto stopchunks` does.
#[derive(Debug, Clone)]
pub enum StopchunksConfig {
    /// List a store's most frequent chunks for review.
    Suggest(SuggestConfig),
    /// Write this store's reviewed stop chunks as a stop list, on standard output.
    ExportReviewed(PathBuf),
}

/// Settings of `ditto stopchunks suggest`.
#[derive(Debug, Clone)]
pub struct SuggestConfig {
    /// The store to count.
    pub store: PathBuf,
    /// How many chunks to list.
    pub top: usize,
    /// Where to write the list; `None`: standard output.
    pub output: Option<PathBuf>,
    pub counting: CountingConfig,
    /// Stop-chunk lists already reviewed (their chunks are not suggested again).
    pub stop_paths: Vec<PathBuf>,
    /// Suggest chunks of the built-in list too.
    pub no_default_stops: bool,
    /// Leave out chunks with fewer letters than this (numbers, symbols).
    pub min_letters: usize,
    /// How many passages to list after the chunks (0: none).
    pub passages: usize,
}

/// One suggested stop chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub hash: Sha1Digest,
    pub count: u64,
    pub url: String,
    /// The raw text block (as cleaned), when found.
    pub text: Option<String>,
}

/// One suggested stop passage: a word k-gram that label sets keep as an anchor, found on
/// `count` pages, with the first page holding it (URL order) and its words there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassageSuggestion {
    pub hash: PassageHash,
    pub count: u64,
    pub url: String,
    /// The line to review: the passage's block, or the passage with words around it.
    pub text: Option<String>,
    /// Frequent passages this line holds (the first is `hash`).
    pub passages: u32,
}

/// Candidates counted per suggestion asked for, so that letterless chunks left out (see
/// [`suggest`]) still leave `top` to list.
const CANDIDATES_PER_SUGGESTION: usize = 4;

/// The `top` most frequent chunks of a store that are not already stop chunks, most
/// frequent first (ties by hash), with a sample URL (the first page in URL order) and text.
/// Chunks with fewer than `min_letters` letters (`1`, `0`, `100%`: numbers and symbols, no
/// idiom a person reviews) are left out. Also returns how many known stop chunks ranked among
/// them were skipped, and how many letterless ones.
pub fn suggest(
    store_path: &Path,
    top: usize,
    counting: &CountingConfig,
    stops: &StopChunks,
    min_letters: usize,
) -> Result<(Vec<Suggestion>, u64, u64)> {
    let corpus = Corpus::Store(store_path.to_path_buf());
    let mut counter: Counter<Sha1Digest> = counting.counter();
    for_each_page(&corpus, false, |p| {
        for h in p.chunks {
            counter.add(h)?;
        }
        Ok(())
    })?;
    let candidates = top.saturating_mul(CANDIDATES_PER_SUGGESTION).saturating_add(100);
    let (best, known) = most_frequent(counter, candidates, |h| stops.is_stop(h))?;
    let mut found = first_texts(store_path, &best)?;
    let mut short = 0u64;
    let mut out = Vec::with_capacity(top);
    for (count, hash) in best {
        if out.len() == top {
            break;
        }
        let (url, text) = match found.remove(&hash) {
            Some((u, t)) => (u, Some(t)),
            None => (String::new(), None),
        };
        if text.as_deref().is_some_and(|t| t.chars().filter(|c| c.is_alphabetic()).count() < min_letters) {
            short += 1;
            continue;
        }
        out.push(Suggestion { hash, count, url, text });
    }
    Ok((out, known, short))
}

/// The `top` (count, key) pairs that are not stops, most frequent first (ties by key), and
/// how many stops were passed over.
fn most_frequent<K: Key>(
    counter: Counter<K>,
    top: usize,
    is_stop: impl Fn(&K) -> bool,
) -> Result<(Vec<(u64, K)>, u64)> {
    // Min-heap of the best `top` (count, then smaller key first).
    let mut heap: BinaryHeap<std::cmp::Reverse<(u64, std::cmp::Reverse<K>)>> = BinaryHeap::new();
    let mut known = 0u64;
    for item in counter.finish().context("merging counts")? {
        let (key, count) = item.context("reading spilled counts")?;
        if is_stop(&key) {
            known += 1;
            continue;
        }
        let e = std::cmp::Reverse((count, std::cmp::Reverse(key)));
        if heap.len() < top {
            heap.push(e);
        } else if heap.peek().is_some_and(|m| e < *m) {
            heap.pop();
            heap.push(e);
        }
    }
    let mut best: Vec<(u64, K)> = heap.into_iter().map(|e| (e.0 .0, e.0 .1 .0)).collect();
    best.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    Ok((best, known))
}

/// The `top` most frequent passages of a store's pages (anchors of
/// [`PassageParams::default`], the label sets' default, counted once per page) that are not
/// stop passages of `stops` and lie inside none of the `chunks` suggested, most frequent
/// first, with fewer than `min_letters` letters left out; and how many stop passages ranked
/// among them were passed over.
pub fn suggest_passages(
    store_path: &Path,
    top: usize,
    counting: &CountingConfig,
    stops: &StopChunks,
    chunks: &[Suggestion],
    min_letters: usize,
) -> Result<(Vec<PassageSuggestion>, u64)> {
    let p = PassageParams::default();
    let mut covered: HashSet<PassageHash> = stops.stop_passages(p).into_iter().collect();
    let every_kgram = PassageParams { modulus: 1, ..p };
    for c in chunks.iter().filter_map(|c| c.text.as_deref()) {
        covered.extend(detector::passages::document_anchors([c], every_kgram));
    }
    let store = crate::analysis::open_store_for_reading(store_path)?;
    let mut counter: Counter<u64> = counting.counter();
    let mut anc = Vec::new();
    for item in crate::source::text::TextSource::new(&store)?.texts() {
        let (_, _, blocks) = item?;
        page_anchors(&blocks, p, &mut anc);
        for a in &anc {
            counter.add(a.hash)?;
        }
    }
    let candidates = top.saturating_mul(CANDIDATES_PER_SUGGESTION).saturating_add(100);
    let (best, known) = most_frequent(counter, candidates, |h| covered.contains(h))?;
    let mut found = first_passages(&store, &best, p)?;
    let mut out: Vec<PassageSuggestion> = Vec::with_capacity(top);
    let mut lines: HashMap<String, usize> = HashMap::new();
    for (count, hash) in best {
        if out.len() == top {
            break;
        }
        let (url, text) = found.remove(&hash).map_or((String::new(), None), |(u, t)| (u, Some(t)));
        if text.as_deref().is_some_and(|t| t.chars().filter(|c| c.is_alphabetic()).count() < min_letters) {
            continue;
        }
        // Passages of one template line are one suggestion.
        if let Some(&i) = text.as_ref().and_then(|t| lines.get(t)) {
            out[i].passages += 1;
            continue;
        }
        if let Some(t) = &text {
            lines.insert(t.clone(), out.len());
        }
        out.push(PassageSuggestion { hash, count, url, text, passages: 1 });
    }
    Ok((out, known))
}

/// A page's anchors, each hash once (its first place).
fn page_anchors(blocks: &[String], p: PassageParams, out: &mut Vec<Anchor>) {
    let ws = WordStream::of_blocks(blocks.iter().map(String::as_str));
    anchors(&ws.words, p, out);
    out.sort_unstable_by_key(|a| (a.hash, a.word));
    out.dedup_by_key(|a| a.hash);
}

/// A second pass over the store: the first page (URL order) holding each of the `best`
/// passages, and its words there joined by spaces.
fn first_passages(
    store: &Store,
    best: &[(u64, PassageHash)],
    p: PassageParams,
) -> Result<HashMap<PassageHash, (String, String)>> {
    let wanted: HashSet<PassageHash> = best.iter().map(|b| b.1).collect();
    let mut found: HashMap<PassageHash, (String, String)> = HashMap::with_capacity(best.len());
    let mut anc = Vec::new();
    for item in crate::source::text::TextSource::new(store)?.texts() {
        if found.len() == wanted.len() {
            break;
        }
        let (url, _, blocks) = item?;
        page_anchors(&blocks, p, &mut anc);
        anc.retain(|a| wanted.contains(&a.hash) && !found.contains_key(&a.hash));
        if anc.is_empty() {
            continue;
        }
        // (block, byte range) of every word, in stream order.
        let words: Vec<(usize, std::ops::Range<usize>)> = blocks
            .iter()
            .enumerate()
            .flat_map(|(b, t)| word_spans(t).into_iter().map(move |r| (b, r)))
            .collect();
        for a in &anc {
            let first = a.word as usize;
            if let Some(w) = words.get(first..first + p.words as usize) {
                found.insert(a.hash, (url.clone(), passage_line(&blocks, &words, w)));
            }
        }
    }
    Ok(found)
}

/// Longest line shown whole: a passage in a longer block is shown with a few words around it.
const MAX_PASSAGE_LINE: usize = 300;

/// What a reviewer sees of a passage (`kgram`, a slice of `words`): its block when the
/// passage lies in one block of at most [`MAX_PASSAGE_LINE`] bytes (one line then covers
/// every passage of that template line), else the passage with five words on each side.
fn passage_line(
    blocks: &[String],
    words: &[(usize, std::ops::Range<usize>)],
    kgram: &[(usize, std::ops::Range<usize>)],
) -> String {
    let one_line = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let (Some(first), Some(last)) = (kgram.first(), kgram.last()) else { return String::new() };
    if first.0 == last.0 {
        if let Some(b) = blocks.get(first.0).filter(|b| b.len() <= MAX_PASSAGE_LINE) {
            return one_line(b);
        }
    }
    let at = words.iter().position(|w| w == first).unwrap_or(0);
    let from = at.saturating_sub(5);
    let to = (at + kgram.len() + 5).min(words.len());
    words[from..to]
        .iter()
        .filter_map(|(b, r)| blocks.get(*b).and_then(|t| t.get(r.clone())))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A second pass over the store: the first page (URL order) holding each of the `best`
/// chunks, and the chunk's text there.
fn first_texts(
    store_path: &Path,
    best: &[(u64, Sha1Digest)],
) -> Result<HashMap<Sha1Digest, (String, String)>> {
    let mut found: HashMap<Sha1Digest, (String, String)> = HashMap::with_capacity(best.len());
    let wanted: HashSet<Sha1Digest> = best.iter().map(|b| b.1).collect();
    let store = crate::analysis::open_store_for_reading(store_path)?;
    let norm = store_normalization(&store)?;
    let texts = crate::source::text::TextSource::new(&store)?;
    for item in texts.texts() {
        if found.len() == wanted.len() {
            break;
        }
        let (url, file_hash, blocks) = item?;
        let fp = fingerprint_with_file_hash(file_hash, &blocks, &norm);
        for c in &fp.chunks {
            if wanted.contains(&c.hash) && !found.contains_key(&c.hash) {
                let text = blocks.get(c.block as usize).cloned().unwrap_or_default();
                found.insert(c.hash, (url.clone(), text));
            }
        }
    }
    Ok(found)
}

/// A line of the stop-list text format that loads back as exactly `hash` under `norm`, or
/// `None` when the chunk cannot be written as one line.
pub fn stop_list_line(raw: &str, norm: Normalization, hash: &Sha1Digest) -> Option<String> {
    let normalized = norm.apply(raw).into_owned();
    let mut candidates = vec![raw.to_string(), raw.trim().to_string(), normalized];
    for c in candidates.clone() {
        if c.starts_with('#') {
            candidates.push(format!("\\{c}"));
        }
    }
    candidates.into_iter().find(|line| {
        !line.contains(['\n', '\r']) && !line.trim().is_empty() && {
            let s = StopChunks::from_text(line, norm);
            s.len() == 1 && s.is_stop(hash)
        }
    })
}

/// Write suggestions in the stop-list text format (`labelsets/data/default-stopchunks.txt`).
pub fn write_suggestions(
    w: &mut impl Write,
    store: &Path,
    norm: Normalization,
    list: &[Suggestion],
    known: u64,
    passages: &[PassageSuggestion],
) -> io::Result<()> {
    writeln!(w, "# ditto stop-chunk suggestions (Ardi & Heidemann 2014, §3.4.2) from {}", store.display())?;
    writeln!(
        w,
        "# The {} most frequent chunks that are not stop chunks yet ({known} known ones skipped).",
        list.len()
    )?;
    writeln!(w, "# Review: keep the lines of benign idioms (navigation, boilerplate, licence notices,")?;
    writeln!(w, "# template text), DELETE the lines of content a copier would take, then pass this file")?;
    writeln!(w, "# to `ditto scan|discover --stop-chunks FILE`. Lines starting with # are comments.")?;
    writeln!(w, "# Normalization: {norm}")?;
    for s in list {
        writeln!(w)?;
        writeln!(w, "# count {}, e.g. {}", s.count, s.url)?;
        match s.text.as_deref().and_then(|t| stop_list_line(t, norm, &s.hash)) {
            Some(line) => writeln!(w, "{line}")?,
            None => writeln!(
                w,
                "# sha1 {} cannot be written as one line here; list it in a .dls stop list instead",
                hex(&s.hash)
            )?,
        }
    }
    write_passage_suggestions(w, passages)
}

fn write_passage_suggestions(w: &mut impl Write, passages: &[PassageSuggestion]) -> io::Result<()> {
    if passages.is_empty() {
        return Ok(());
    }
    let k = PassageParams::default().words;
    writeln!(w)?;
    writeln!(
        w,
        "# Passages: the most frequent {k}-word passages (the word sequences label sets keep as passage"
    )?;
    writeln!(
        w,
        "# anchors, counted once per page) not inside a stop chunk or a chunk above, {} lines: template",
        passages.len()
    )?;
    writeln!(
        w,
        "# text whose words vary, so that no whole chunk repeats; each line is the block a passage was"
    )?;
    writeln!(w, "# first seen in (or the passage with words around it). Each line is a stop text like the")?;
    writeln!(w, "# others: kept, its word sequences are stop passages, not evidence of copying.")?;
    for s in passages {
        writeln!(w)?;
        writeln!(w, "# count {}, {} frequent passage(s), e.g. {}", s.count, s.passages, s.url)?;
        match &s.text {
            Some(t) => writeln!(w, "{t}")?,
            None => writeln!(w, "# passage {:016x}: its words were not found again", s.hash)?,
        }
    }
    Ok(())
}

/// Write a store's reviewed stop chunks in the stop-list text format; returns how many.
pub fn write_reviewed_stops(w: &mut impl Write, store: &Store) -> Result<u64> {
    let norm = store_normalization(store)?;
    writeln!(w, "# ditto reviewed stop chunks (false-positive evidence marked on the review page)")?;
    writeln!(w, "# Normalization: {norm}")?;
    let mut n = 0;
    for r in store.reviewed_stop_chunks() {
        let (h, c) = r?;
        writeln!(w)?;
        writeln!(
            w,
            "# from {} by {} at {}",
            c.neighborhood.replace(['\n', '\r'], " "),
            c.reviewer.replace(['\n', '\r'], " "),
            c.time
        )?;
        match stop_list_line(&c.text, norm, &h) {
            Some(line) => writeln!(w, "{line}")?,
            None => writeln!(w, "# sha1 {} cannot be written as one line here", hex(&h))?,
        }
        n += 1;
    }
    Ok(n)
}

/// `ditto stopchunks`.
pub fn stopchunks(cfg: &StopchunksConfig) -> Result<()> {
    match cfg {
        StopchunksConfig::Suggest(c) => suggest_to_output(c),
        StopchunksConfig::ExportReviewed(store) => export_reviewed(store),
    }
}

/// `ditto stopchunks export`: the reviewed stop chunks on standard output.
fn export_reviewed(store_path: &Path) -> Result<()> {
    let store = crate::analysis::open_store_for_reading(store_path)?;
    let stdout = io::stdout();
    let mut w = io::BufWriter::new(stdout.lock());
    let n = write_reviewed_stops(&mut w, &store)?;
    w.flush()?;
    eprintln!("{n} reviewed stop chunks");
    Ok(())
}

/// `ditto stopchunks suggest`: the suggestions to `--output` or standard output.
fn suggest_to_output(c: &SuggestConfig) -> Result<()> {
    let store = crate::analysis::open_store_for_reading(&c.store)?;
    let norm = store_normalization(&store)?;
    drop(store);
    let stops = load_stops(norm, &c.stop_paths, c.no_default_stops)?;
    let (list, known, short) = suggest(&c.store, c.top, &c.counting, &stops, c.min_letters)?;
    let (passages, known_passages) = match c.passages {
        0 => (Vec::new(), 0),
        n => suggest_passages(&c.store, n, &c.counting, &stops, &list, c.min_letters)?,
    };
    let write = |w: &mut dyn Write| write_suggestions(&mut &mut *w, &c.store, norm, &list, known, &passages);
    match &c.output {
        Some(path) => write_buffered_atomically(path, |w| Ok(write(w)?))?,
        None => {
            let stdout = io::stdout();
            let mut w = io::BufWriter::new(stdout.lock());
            write(&mut w)?;
            w.flush()?;
        }
    }
    eprintln!(
        "{} suggestions ({known} known stop chunks skipped; {short} with fewer than {} letters left out, \
         --min-letters 0 keeps them); {} passages ({known_passages} stop passages or passages of the \
         chunks listed skipped)",
        list.len(),
        c.min_letters,
        passages.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_list_lines_load_back_to_the_same_hash() {
        let n = Normalization::default();
        let h = |t: &str| detector::fingerprint::chunk_hash(&n.apply(t));
        assert_eq!(stop_list_line("  Back to Top ", n, &h("back to top")).as_deref(), Some("  Back to Top "));
        assert_eq!(stop_list_line("#1 Home", n, &h("#1 home")).as_deref(), Some("\\#1 Home"));
        assert_eq!(stop_list_line("two\nlines", n, &h("two lines")).as_deref(), Some("two lines"));
        assert_eq!(stop_list_line("x", n, &h("y")), None);
        // Without whitespace folding a two-line chunk has no one-line form.
        let raw = Normalization::NONE;
        let h2 = detector::fingerprint::chunk_hash("a\nb");
        assert_eq!(stop_list_line("a\nb", raw, &h2), None);
    }
}
