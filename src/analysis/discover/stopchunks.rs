//! `ditto stopchunks` (§3.4.2): a store's most frequent chunks suggested for review, and
//! the chunks reviewed on the review page written back as a stop list.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use detector::fingerprint::{fingerprint_with_file_hash, hex, Sha1Digest};
use detector::{Normalization, StopList};
use labelsets::StopChunks;
use store::Store;

use super::blind::CountingArgs;
use super::corpus::{for_each_page, Corpus};
use super::write_atomically;
use crate::analysis::counting::Counter;
use crate::labelset::{load_stops, store_normalization};

/// `ditto stopchunks …`.
#[derive(Subcommand, Debug, Clone)]
pub enum StopchunksCommand {
    /// List a store's most frequent chunks (count, a sample URL, the text) as a stop-chunk
    /// list for a person to review: delete the lines that are NOT benign, then pass the file
    /// to `--stop-chunks`.
    Suggest(SuggestArgs),
    /// Write the store's reviewed stop chunks (added on the review page from `false-positive`
    /// evidence) in the stop-list text format, for `--stop-chunks` elsewhere.
    Export(StopchunksExportArgs),
}

/// `ditto stopchunks export`.
#[derive(Args, Debug, Clone)]
pub struct StopchunksExportArgs {
    /// The store whose reviewed stop chunks to write.
    #[arg(long)]
    pub store: PathBuf,
}

/// `ditto stopchunks suggest`.
#[derive(Args, Debug, Clone)]
pub struct SuggestArgs {
    /// The store to count (a finished scan or crawl).
    #[arg(long)]
    pub store: PathBuf,
    /// How many chunks to list (the paper reviewed the top 500, §6.1).
    #[arg(long, default_value_t = 500)]
    pub top: usize,
    /// Write here instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub counting: CountingArgs,
    /// Stop-chunk lists already reviewed; their chunks are not suggested again.
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Also suggest chunks of the built-in list (left out by default).
    #[arg(long)]
    pub no_default_stop_chunks: bool,
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

/// The `top` most frequent chunks of a store that are not already stop chunks, most
/// frequent first (ties by hash), with a sample URL (the first page in URL order) and text.
/// Also returns how many known stop chunks ranked among them were skipped.
pub fn suggest(
    store_path: &Path,
    top: usize,
    memory: u64,
    tmp_dir: &Path,
    stops: &StopChunks,
) -> Result<(Vec<Suggestion>, u64)> {
    let corpus = Corpus::Store(store_path.to_path_buf());
    let mut counter: Counter<Sha1Digest> = Counter::new(memory, tmp_dir);
    for_each_page(&corpus, false, |p| {
        for h in p.chunks {
            counter.add(h)?;
        }
        Ok(())
    })?;
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
    // Second pass: the first page (URL order) holding each chunk, and its text there.
    let mut found: HashMap<Sha1Digest, (String, String)> = HashMap::with_capacity(best.len());
    let wanted: HashSet<Sha1Digest> = best.iter().map(|b| b.1).collect();
    let store = Store::open(store_path)?;
    let norm = store_normalization(&store)?;
    for item in store.texts() {
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
    let out = best
        .into_iter()
        .map(|(count, hash)| {
            let (url, text) = match found.remove(&hash) {
                Some((u, t)) => (u, Some(t)),
                None => (String::new(), None),
            };
            Suggestion { hash, count, url, text }
        })
        .collect();
    Ok((out, known))
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
pub fn stopchunks(c: StopchunksCommand) -> Result<()> {
    let a = match c {
        StopchunksCommand::Suggest(a) => a,
        StopchunksCommand::Export(a) => {
            let store =
                Store::open(&a.store).with_context(|| format!("opening store {}", a.store.display()))?;
            let stdout = io::stdout();
            let mut w = io::BufWriter::new(stdout.lock());
            let n = write_reviewed_stops(&mut w, &store)?;
            w.flush()?;
            eprintln!("{n} reviewed stop chunks");
            return Ok(());
        }
    };
    let store = Store::open(&a.store).with_context(|| format!("opening store {}", a.store.display()))?;
    let norm = store_normalization(&store)?;
    drop(store);
    let stops = load_stops(norm, &a.stop_chunks, a.no_default_stop_chunks)?;
    let (list, known) = suggest(&a.store, a.top, a.counting.memory, &a.counting.tmp_dir(), &stops)?;
    match &a.output {
        Some(path) => write_atomically(path, |w| Ok(write_suggestions(w, &a.store, norm, &list, known)?))?,
        None => {
            let stdout = io::stdout();
            let mut w = io::BufWriter::new(stdout.lock());
            write_suggestions(&mut w, &a.store, norm, &list, known)?;
            w.flush()?;
        }
    }
    eprintln!("{} suggestions ({known} known stop chunks skipped)", list.len());
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
