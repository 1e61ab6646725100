//! Novel text of changed pages (issue 9, item 3): when a recrawl fetches a page whose text
//! changed, which segments of the new text are new relative to what was stored before.
//!
//! "Before" is the old store's captures of the same URL. The new text's novel segments are
//! found with the origin detector of Abdel-Hamid et al. 2009 (`detector::origins`) in its
//! exact mode (every k = 8 word shingle kept, §3.1's reference): the old captures are fed
//! first, then the new text is a query; a token is *fresh* when none of the shingles covering
//! it was seen before (§3.2), and the novel segments are the maximal runs of fresh tokens —
//! the same definition `ditto origins` reports, applied to one URL's history. Text moved
//! around the page is not novel, except up to k − 1 tokens at the end of the text, whose only
//! covering shingles straddle the new boundary; a replaced word is novel by itself (its
//! neighbours are still covered by old shingles).
//!
//! A page counts as changed when the new store holds a capture of a URL the old store holds
//! whose visible-text hash is none of the old captures' (a body that changed only in markup
//! has no novel text).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result};
use detector::fingerprint::parse_hex;
use detector::origins::{OriginDetector, K};
use detector::shingles::{visible_text, words};
use serde::{Deserialize, Serialize};
use store::Store;

use crate::source::text::TextSource;

/// A novel segment of a changed page: token range `[start, end)` and its words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NovelSegment {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// One changed page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangedPage {
    pub url: String,
    /// Fetch times of the old capture(s) and of the new one.
    pub old_fetch_time: i64,
    pub new_fetch_time: i64,
    /// Tokens of the new text, and how many of them are novel.
    pub tokens: usize,
    pub novel_tokens: usize,
    pub novel_segments: Vec<NovelSegment>,
}

/// The novel segments of `new` (text blocks) relative to `old` (earlier versions' blocks):
/// token ranges of `words(new)` and their text (long segments shortened in the middle).
pub fn novel_segments(old: &[Vec<String>], new: &[String]) -> (usize, Vec<NovelSegment>) {
    let mut det = OriginDetector::exact(K);
    for (i, o) in old.iter().enumerate() {
        det.process(i.min(u32::MAX as usize - 1) as u32, &visible_text(o));
    }
    let text = visible_text(new);
    let r = det.process(old.len().min(u32::MAX as usize - 1) as u32, &text);
    let toks: Vec<String> = words(&text).map(|w| w.into_owned()).collect();
    let segs = r
        .novel_segments()
        .into_iter()
        .map(|(s, e)| {
            let w = toks.get(s..e.min(toks.len())).unwrap_or(&[]);
            let text = if w.len() <= 60 {
                w.join(" ")
            } else {
                format!("{} … {}", w[..30].join(" "), w[w.len() - 30..].join(" "))
            };
            NovelSegment { start: s, end: e, text }
        })
        .collect();
    (r.tokens, segs)
}

struct Capture {
    fetch_time: i64,
    file_hash: String,
    text_hash: Option<String>,
}

fn captures(store: &Store) -> Result<BTreeMap<String, Vec<Capture>>> {
    let mut m: BTreeMap<String, Vec<Capture>> = BTreeMap::new();
    for rec in store.pages() {
        let rec = rec?;
        m.entry(rec.url).or_default().push(Capture {
            fetch_time: rec.fetch_time,
            file_hash: rec.file_hash,
            text_hash: rec.text_hash,
        });
    }
    for v in m.values_mut() {
        v.sort_by_key(|c| c.fetch_time);
    }
    Ok(m)
}

/// A capture's text, kept or read back from its source; `None` when that is gone or changed.
fn text_of(t: &TextSource, url: &str, c: &Capture) -> Result<Option<Vec<String>>> {
    Ok(match parse_hex(&c.file_hash) {
        Some(h) => t.text_of_key(url, &h)?.blocks(),
        None => None,
    })
}

/// The changed pages between an old and a new store (URL order), with their novel segments.
pub fn changed_pages(old: &Store, new: &Store) -> Result<Vec<ChangedPage>> {
    let old_caps = captures(old)?;
    let new_caps = captures(new)?;
    let (old_t, new_t) = (TextSource::new(old)?, TextSource::new(new)?);
    let mut out = Vec::new();
    for (url, news) in &new_caps {
        let Some(olds) = old_caps.get(url) else { continue };
        let old_text_hashes: HashSet<&Option<String>> = olds.iter().map(|c| &c.text_hash).collect();
        let Some(latest) = news.iter().rev().find(|c| !old_text_hashes.contains(&c.text_hash)) else {
            continue;
        };
        let old_texts: Vec<Vec<String>> = olds
            .iter()
            .map(|c| text_of(&old_t, url, c))
            .collect::<Result<Vec<_>>>()
            .context("old texts")?
            .into_iter()
            .flatten()
            .collect();
        // A page whose texts cannot be read back is not compared (and counted below).
        let Some(new_text) = text_of(&new_t, url, latest).context("new text")? else { continue };
        if old_texts.is_empty() {
            continue;
        }
        let (tokens, segs) = novel_segments(&old_texts, &new_text);
        out.push(ChangedPage {
            url: url.clone(),
            old_fetch_time: olds.last().map_or(0, |c| c.fetch_time),
            new_fetch_time: latest.fetch_time,
            tokens,
            novel_tokens: segs.iter().map(|s| s.end - s.start).sum(),
            novel_segments: segs,
        });
    }
    for t in [&old_t, &new_t] {
        if let Some(note) = t.summary() {
            eprintln!("{note}");
        }
    }
    Ok(out)
}

/// For `ditto recrawl`: the changed pages between the stores, printed (one line each, with
/// the first novel segment) and written as JSON Lines to `out`. Returns how many.
pub fn report_changes(old: &Path, new: &Path, out: &Path) -> Result<usize> {
    let changed = {
        let old = crate::analysis::open_store_for_reading(old)?;
        let new = crate::analysis::open_store_for_reading(new)?;
        changed_pages(&old, &new)?
    };
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?,
    );
    use std::io::Write;
    for c in &changed {
        serde_json::to_writer(&mut f, c)?;
        writeln!(f)?;
    }
    f.flush()?;
    println!("changed pages: {} (novel segments in {})", changed.len(), out.display());
    for c in &changed {
        let first = c.novel_segments.first().map(|s| s.text.as_str()).unwrap_or("(none: only removals)");
        let first: String = first.chars().take(120).collect();
        println!(
            "  {}: {} of {} tokens novel in {} segments: “{}”",
            c.url,
            c.novel_tokens,
            c.tokens,
            c.novel_segments.len(),
            first
        );
    }
    Ok(changed.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(seed: usize, n: usize) -> String {
        (0..n).map(|i| format!("w{seed}x{i}")).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn an_inserted_paragraph_is_the_novel_segment() {
        let a = words_of(1, 100);
        let b = words_of(2, 100);
        let added = words_of(3, 20);
        let old = vec![vec![a.clone(), b.clone()]];
        let new = vec![a.clone(), added, b.clone()];
        let (tokens, segs) = novel_segments(&old, &new);
        assert_eq!(tokens, 220);
        assert_eq!(segs.len(), 1);
        // The 20 new words, and the shingles straddling them are new too but also cover the
        // old tokens at either end only together with old shingles: exactly [100, 120).
        assert_eq!((segs[0].start, segs[0].end), (100, 120));
        assert!(segs[0].text.starts_with("w3x0 "));
        // Moving text is not novel.
        let (_, segs) = novel_segments(&old, &[b, a]);
        assert!(segs.is_empty(), "{segs:?}");
    }
}
