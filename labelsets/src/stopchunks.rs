//! Stop chunks (Ardi & Heidemann 2014, §3.4.2): "common, benign idioms" removed before
//! detection, such as the empty paragraph. A short reviewable text list (the default is
//! `data/default-stopchunks.txt`, embedded) and/or a `.dls` label set used as a stop list.
//! Small lists live in a `HashSet`; a `.dls` list brings its own Bloom filter (the paper:
//! "if it goes too large we can apply Bloom filters").

use std::collections::HashSet;
use std::path::Path;

use detector::fingerprint::chunk_hash;
use detector::{Normalization, Sha1Digest, StopList};

use crate::format::LabelSet;
use crate::{io_err, Result};

/// The default list's text.
pub const DEFAULT_LIST: &str = include_str!("../data/default-stopchunks.txt");

/// A set of stop-chunk digests.
#[derive(Debug)]
pub struct StopChunks {
    norm: Normalization,
    set: HashSet<Sha1Digest>,
    sets: Vec<LabelSet>,
}

impl StopChunks {
    /// An empty list for chunks normalized with `norm`.
    pub fn new(norm: Normalization) -> Self {
        StopChunks { norm, set: HashSet::new(), sets: Vec::new() }
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
            let set = LabelSet::open(path)?;
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
        self.set.insert(chunk_hash(&self.norm.apply(raw)));
    }

    /// Add a digest.
    pub fn add_digest(&mut self, d: Sha1Digest) {
        self.set.insert(d);
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
        self.set.contains(hash) || self.sets.iter().any(|s| s.lookup(hash).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn text_format_comments_and_escapes() {
        let s = StopChunks::from_text("# c\n\n\\#hashtag\r\nFoo  Bar\n", Normalization::default());
        assert_eq!(s.len(), 2);
        assert!(s.is_stop_text("#HashTag"));
        assert!(s.is_stop_text("foo bar"));
    }
}
