//! `ditto stopchunks` (§3.4.2): a store's most frequent chunks suggested for review, and
//! the chunks reviewed on the review page written back as a stop list.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use detector::fingerprint::{fingerprint_with_file_hash, hex, Sha1Digest};
use detector::{Normalization, StopList};
use labelsets::StopChunks;
use store::Store;

use super::corpus::{for_each_page, Corpus};
use crate::analysis::counting::{Counter, CountingConfig};
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
    let (best, known) = most_frequent(counter, candidates, stops)?;
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

/// The `top` (count, chunk) pairs that are not stop chunks, most frequent first (ties by
/// hash), and how many stop chunks were passed over.
fn most_frequent(
    counter: Counter<Sha1Digest>,
    top: usize,
    stops: &StopChunks,
) -> Result<(Vec<(u64, Sha1Digest)>, u64)> {
    // Min-heap of the best `top` (count, then smaller hash first).
    let mut heap: BinaryHeap<std::cmp::Reverse<(u64, std::cmp::Reverse<Sha1Digest>)>> = BinaryHeap::new();
    let mut known = 0u64;
    for item in counter.finish().context("merging counts")? {
        let (key, count) = item.context("reading spilled counts")?;
        if stops.is_stop(&key) {
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
    let mut best: Vec<(u64, Sha1Digest)> = heap.into_iter().map(|e| (e.0 .0, e.0 .1 .0)).collect();
    best.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    Ok((best, known))
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
    match &c.output {
        Some(path) => {
            write_buffered_atomically(path, |w| Ok(write_suggestions(w, &c.store, norm, &list, known)?))?
        }
        None => {
            let stdout = io::stdout();
            let mut w = io::BufWriter::new(stdout.lock());
            write_suggestions(&mut w, &c.store, norm, &list, known)?;
            w.flush()?;
        }
    }
    eprintln!(
        "{} suggestions ({known} known stop chunks skipped; {short} with fewer than {} letters left out, \
         --min-letters 0 keeps them)",
        list.len(),
        c.min_letters
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
