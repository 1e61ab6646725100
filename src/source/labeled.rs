//! The text of a label set's sources, for showing a copied passage beside the source
//! paragraph it came from (issue 36, evidence a reviewer can check). A label set keeps hashes,
//! not text: the reviewer points `--source-pages` at the pages it was built from (the directory
//! given to `ditto labelset build`), and a source is read back by its URL in the label set,
//! which for such a build is its path under that directory.
//!
//! Which of the source's paragraphs a page block came from is found by the word pairs they
//! share (words as the passages take them, `detector::passages::push_words`): the best
//! paragraph, widened to its neighbours while they add shared pairs (a page block that joined
//! two paragraphs), so the side-by-side shows what the copier started from.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Sources read and cleaned at most (the oldest are dropped beyond).
const CACHED: usize = 64;
/// A neighbouring paragraph joins the source passage when it shares at least this many word
/// pairs with the page block.
const MIN_PAIRS_TO_WIDEN: usize = 3;
/// Source files read at most this large.
const MAX_SOURCE_BYTES: u64 = 32 << 20;

/// Where the sources' pages are.
pub struct SourceTexts {
    roots: Vec<PathBuf>,
    cache: Mutex<Vec<(String, Arc<Vec<String>>)>>,
}

impl SourceTexts {
    /// `roots`: directories (or single files) holding the pages the label set was built from.
    pub fn new(roots: Vec<PathBuf>) -> anyhow::Result<SourceTexts> {
        for r in &roots {
            if !r.exists() {
                anyhow::bail!("--source-pages {}: no such file or directory", r.display());
            }
        }
        Ok(SourceTexts { roots, cache: Mutex::new(Vec::new()) })
    }

    /// The cleaned blocks of the source whose label-set URL is `url`, or why they cannot be
    /// had (a plain sentence).
    pub fn blocks(&self, url: &str) -> Result<Arc<Vec<String>>, String> {
        if let Ok(cache) = self.cache.lock() {
            if let Some((_, b)) = cache.iter().find(|(u, _)| u == url) {
                return Ok(b.clone());
            }
        }
        let path = self.path_of(url).ok_or_else(|| "not found under --source-pages".to_string())?;
        let len = std::fs::metadata(&path).map(|m| m.len()).map_err(|e| format!("cannot read it: {e}"))?;
        if len > MAX_SOURCE_BYTES {
            return Err(format!("it is larger than {} MiB", MAX_SOURCE_BYTES >> 20));
        }
        let body = std::fs::read(&path).map_err(|e| format!("cannot read it: {e}"))?;
        let doc = detector::clean(&body, Some("text/html"), None, &detector::CleanOptions::default());
        let blocks = Arc::new(doc.blocks.to_vec());
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHED {
                cache.remove(0);
            }
            cache.push((url.to_string(), blocks.clone()));
        }
        Ok(blocks)
    }

    /// The file for a source URL: a relative path with no `..` under one of the roots (a
    /// root that is a file matches its own name). Absolute URLs and parent steps never
    /// leave the roots.
    fn path_of(&self, url: &str) -> Option<PathBuf> {
        let rel = Path::new(url);
        if url.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return None;
        }
        self.roots.iter().find_map(|root| {
            if root.is_file() {
                return (root.file_name() == rel.file_name() && rel.components().count() == 1)
                    .then(|| root.clone());
            }
            let p = root.join(rel);
            p.is_file().then_some(p)
        })
    }
}

/// The source passage a page block was taken from: the paragraph of `source` sharing most
/// word pairs with `block`, widened to neighbours that share some too; `None` when no
/// paragraph shares any.
pub fn source_passage(block: &str, source: &[String]) -> Option<String> {
    let page_pairs = pairs(block);
    if page_pairs.is_empty() {
        return None;
    }
    let shared: Vec<usize> = source.iter().map(|s| pairs(s).intersection(&page_pairs).count()).collect();
    let (best, &most) = shared.iter().enumerate().max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))?;
    if most == 0 {
        return None;
    }
    let (mut first, mut last) = (best, best);
    while first > 0 && shared[first - 1] >= MIN_PAIRS_TO_WIDEN {
        first -= 1;
    }
    while last + 1 < shared.len() && shared[last + 1] >= MIN_PAIRS_TO_WIDEN {
        last += 1;
    }
    Some(source[first..=last].join(" "))
}

/// Words compared at most per side (beyond, no word-level difference is computed).
const MAX_COMPARED_WORDS: usize = 1000;
/// Differing words listed at most per side.
const MAX_LISTED: usize = 20;

/// The words a copy changed: those of the page and of the source passage outside their
/// longest common subsequence of words (compared lowercased), in order, at most
/// [`MAX_LISTED`] each. When the page's passage was shortened (`page_cut`), the source's
/// words after the last one the page shares are not counted as dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct WordChanges {
    pub page_only: Vec<String>,
    pub source_only: Vec<String>,
}

pub fn word_changes(source: &str, page: &str, page_cut: bool) -> Option<WordChanges> {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
    };
    let (a, b) = (words(source), words(page));
    if a.len() > MAX_COMPARED_WORDS || b.len() > MAX_COMPARED_WORDS {
        return None;
    }
    let (keep_a, keep_b) = lcs_keep(&a, &b);
    let last_shared = keep_a.iter().rposition(|&k| k).map_or(0, |i| i + 1);
    let a_end = if page_cut { last_shared } else { a.len() };
    let only = |w: &[String], keep: &[bool]| -> Vec<String> {
        w.iter().zip(keep).filter(|(_, &k)| !k).map(|(w, _)| w.clone()).take(MAX_LISTED).collect()
    };
    Some(WordChanges { source_only: only(&a[..a_end], &keep_a[..a_end]), page_only: only(&b, &keep_b) })
}

/// Which items of `a` and of `b` are in a longest common subsequence of the two.
pub fn lcs_keep<T: PartialEq>(a: &[T], b: &[T]) -> (Vec<bool>, Vec<bool>) {
    let (n, m) = (a.len(), b.len());
    let w = m + 1;
    let mut t = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * w + j] = if a[i] == b[j] {
                t[(i + 1) * w + j + 1] + 1
            } else {
                t[(i + 1) * w + j].max(t[i * w + j + 1])
            };
        }
    }
    let (mut keep_a, mut keep_b) = (vec![false; n], vec![false; m]);
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] {
            keep_a[i] = true;
            keep_b[j] = true;
            i += 1;
            j += 1;
        } else if t[(i + 1) * w + j] >= t[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    (keep_a, keep_b)
}

/// The word pairs of a text (word hashes as the passages take them).
fn pairs(text: &str) -> HashSet<(u64, u64)> {
    let mut words = Vec::new();
    detector::passages::push_words(text, &mut words);
    words.windows(2).map(|w| (w[0], w[1])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_paragraph_a_block_came_from_widened_for_joined_ones() {
        let source = s(&[
            "The river rises in the northern hills and flows south through a wide valley.",
            "In 1820 a canal was dug beside it to carry coal from the mines to the port.",
            "The canal closed in 1931 after the railway took its trade away from it.",
            "Unrelated closing words about something else entirely here.",
        ]);
        // One word changed: the second paragraph.
        let edited = "In 1820 a channel was dug beside it to carry coal from the mines to the port.";
        assert_eq!(source_passage(edited, &source).as_deref(), Some(source[1].as_str()));
        // Two paragraphs joined: both.
        let joined = format!("{} {}", source[1], source[2].replace("trade", "business"));
        assert_eq!(source_passage(&joined, &source), Some(format!("{} {}", source[1], source[2])));
        // Nothing shared.
        assert_eq!(source_passage("completely different text", &source), None);
        assert_eq!(source_passage("", &source), None);
    }

    #[test]
    fn changed_words_on_each_side() {
        let src = "In 1820 a canal was dug beside it to carry coal from the mines to the port.";
        let page = "In 1820 a Channel was dug next to it to carry coal from the mines…";
        let c = word_changes(src, page, true).unwrap();
        assert_eq!(c.page_only, ["channel", "next", "to"]);
        // "to the port" is past the shortened page passage: not counted as dropped.
        assert_eq!(c.source_only, ["canal", "beside"]);
        let c = word_changes(src, page, false).unwrap();
        assert_eq!(c.source_only, ["canal", "beside", "to", "the", "port"]);
        assert_eq!(word_changes(src, src, false).unwrap(), WordChanges::default());
    }

    #[test]
    fn source_urls_stay_under_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/A.html"), "<p>Alpha text.</p>").unwrap();
        std::fs::write(dir.path().join("secret.html"), "<p>no</p>").unwrap();
        let t = SourceTexts::new(vec![dir.path().join("sub")]).unwrap();
        assert_eq!(t.blocks("A.html").unwrap().as_slice(), ["Alpha text."]);
        for bad in ["../secret.html", "/etc/passwd", "", "./A.html", "sub/../../secret.html"] {
            assert!(t.blocks(bad).is_err(), "{bad}");
        }
        assert!(SourceTexts::new(vec![dir.path().join("missing")]).is_err());
    }
}
