//! Review labels: a person's verdict on a neighborhood, kept in the store so that later
//! reports can honor it (`ditto review`, `ditto labels export|import`).
//!
//! | prefix | key | value |
//! |---|---|---|
//! | `l/` | neighborhood URL prefix | [`ReviewLabel`] as JSON |
//! | `x/` | chunk SHA-1 (20 bytes) | [`ReviewedStopChunk`] as JSON: a reviewed stop chunk |
//!
//! Reviewed stop chunks come from `false-positive` evidence (`ditto review`): the copied
//! chunks of a dismissed neighborhood, added with one action and removable one by one.
//! Scans and crawls into the store leave them out of matching as they do the built-in
//! stop-chunk list (`ditto stopchunks export` writes them as a stop list).
//!
//! A label on a prefix covers the neighborhoods under it unless one of them has its own
//! label (the longest labeled prefix wins, see [`LabelIndex::effective`]): dismissing a host as
//! a legitimate mirror dismisses its directories too.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};

use detector::fingerprint::Sha1Digest;

use crate::{corrupt, Result, Store, StoreError};

const LABEL: &[u8] = b"l/";
const STOP_CHUNK: &[u8] = b"x/";

/// A reviewer's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    CopiedForProfit,
    LegitimateMirror,
    FalsePositive,
    Unsure,
}

impl Verdict {
    pub const ALL: [Verdict; 4] =
        [Verdict::CopiedForProfit, Verdict::LegitimateMirror, Verdict::FalsePositive, Verdict::Unsure];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::CopiedForProfit => "copied-for-profit",
            Verdict::LegitimateMirror => "legitimate-mirror",
            Verdict::FalsePositive => "false-positive",
            Verdict::Unsure => "unsure",
        }
    }

    /// Verdicts that take a neighborhood out of later reports (unless `--all`).
    pub fn dismisses(self) -> bool {
        matches!(self, Verdict::LegitimateMirror | Verdict::FalsePositive)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Verdict {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Verdict::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| {
            format!(
                "unknown label {s:?} (one of copied-for-profit, legitimate-mirror, false-positive, unsure)"
            )
        })
    }
}

/// One stored label (also one line of the JSONL export).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewLabel {
    pub neighborhood: String,
    pub label: Verdict,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub reviewer: String,
    /// Seconds since the Unix epoch.
    pub time: i64,
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOutcome {
    pub imported: u64,
    /// Lines skipped because the store holds a label for that neighborhood at least as new.
    pub older: u64,
}

fn label_key(neighborhood: &str) -> Vec<u8> {
    [LABEL, neighborhood.as_bytes()].concat()
}

impl Store {
    /// Store (or replace) the label of a neighborhood, durably.
    pub fn set_label(&self, label: &ReviewLabel) -> Result<()> {
        let json = serde_json::to_vec(label).map_err(|e| corrupt(&label.neighborhood, e))?;
        self.tree.insert(label_key(&label.neighborhood), json)?;
        // A reviewer's click must survive a crash right after it.
        self.tree.flush()?;
        Ok(())
    }

    /// Remove a neighborhood's label; true when there was one.
    pub fn remove_label(&self, neighborhood: &str) -> Result<bool> {
        let old = self.tree.remove(label_key(neighborhood))?;
        self.tree.flush()?;
        Ok(old.is_some())
    }

    pub fn label(&self, neighborhood: &str) -> Result<Option<ReviewLabel>> {
        match self.tree.get(label_key(neighborhood))? {
            None => Ok(None),
            Some(v) => Ok(Some(serde_json::from_slice(&v).map_err(|e| corrupt(neighborhood, e))?)),
        }
    }

    /// All labels, in neighborhood order.
    pub fn labels(&self) -> impl Iterator<Item = Result<ReviewLabel>> + '_ {
        self.tree.scan_prefix(LABEL).map(|kv| {
            let (k, v) = kv?;
            serde_json::from_slice(&v).map_err(|e| corrupt(&String::from_utf8_lossy(&k), e))
        })
    }

    /// All labels, indexed for lookups by neighborhood.
    pub fn label_index(&self) -> Result<LabelIndex> {
        let mut m = BTreeMap::new();
        for l in self.labels() {
            let l = l?;
            m.insert(l.neighborhood.clone(), l);
        }
        Ok(LabelIndex(m))
    }

    /// Write every label as one JSON object per line.
    pub fn export_labels(&self, out: &mut dyn Write) -> Result<u64> {
        let mut n = 0;
        for l in self.labels() {
            let l = l?;
            let line = serde_json::to_string(&l).map_err(|e| corrupt(&l.neighborhood, e))?;
            writeln!(out, "{line}")
                .map_err(|e| StoreError::Corrupt { key: "export".into(), why: e.to_string() })?;
            n += 1;
        }
        Ok(n)
    }

    /// Read labels written by [`Store::export_labels`]. A label replaces the stored one
    /// only when it is newer (so importing an old export never undoes later reviews). Bad
    /// lines are an error naming the line; nothing after them is imported.
    pub fn import_labels(&self, input: &mut dyn BufRead) -> Result<ImportOutcome> {
        let mut out = ImportOutcome::default();
        for (i, line) in input.lines().enumerate() {
            let bad = |why: String| StoreError::BadInput {
                what: format!("labels to import, line {}", i + 1),
                why: format!("{why} (expected one JSON label per line, as `ditto labels export` writes)"),
            };
            let line = line.map_err(|e| bad(e.to_string()))?;
            if line.trim().is_empty() {
                continue;
            }
            let l: ReviewLabel = serde_json::from_str(&line).map_err(|e| bad(e.to_string()))?;
            match self.label(&l.neighborhood)? {
                Some(old) if old.time >= l.time => out.older += 1,
                _ => {
                    let json = serde_json::to_vec(&l).map_err(|e| corrupt(&l.neighborhood, e))?;
                    self.tree.insert(label_key(&l.neighborhood), json)?;
                    out.imported += 1;
                }
            }
        }
        self.tree.flush()?;
        Ok(out)
    }
}

/// Labels in memory, for filtering many neighborhoods.
#[derive(Debug, Clone, Default)]
pub struct LabelIndex(pub BTreeMap<String, ReviewLabel>);

impl LabelIndex {
    /// The label that applies to a neighborhood: its own, else that of its longest labeled
    /// prefix (a parent neighborhood).
    pub fn effective(&self, neighborhood: &str) -> Option<&ReviewLabel> {
        if let Some(l) = self.0.get(neighborhood) {
            return Some(l);
        }
        // Parents are the prefixes ending in '/' (neighborhoods are URL prefixes `…/`).
        let bytes = neighborhood.as_bytes();
        let mut end = neighborhood.len().saturating_sub(1);
        while end > 0 {
            match bytes[..end].iter().rposition(|&b| b == b'/') {
                Some(i) => {
                    if let Some(l) = self.0.get(&neighborhood[..=i]) {
                        return Some(l);
                    }
                    end = i;
                }
                None => break,
            }
        }
        None
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn set(&mut self, l: ReviewLabel) {
        self.0.insert(l.neighborhood.clone(), l);
    }

    pub fn remove(&mut self, neighborhood: &str) {
        self.0.remove(neighborhood);
    }
}

/// A chunk a reviewer marked benign (a stop chunk), with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewedStopChunk {
    /// SHA-1 of the normalized text (the store's normalization), hex.
    pub chunk_sha1: String,
    /// The chunk as cleaned from the page (normalizes to the hashed text).
    pub text: String,
    /// The `false-positive` neighborhood it was taken from.
    pub neighborhood: String,
    #[serde(default)]
    pub reviewer: String,
    /// Seconds since the Unix epoch.
    pub time: i64,
}

fn stop_chunk_key(hash: &Sha1Digest) -> Vec<u8> {
    [STOP_CHUNK, &hash[..]].concat()
}

impl Store {
    /// Add reviewed stop chunks (`hash`, record) in one batch, durably. A chunk already on
    /// the list keeps its first record. Returns how many were new.
    pub fn add_stop_chunks(&self, chunks: &[(Sha1Digest, ReviewedStopChunk)]) -> Result<u64> {
        let mut batch = sled::Batch::default();
        let mut added = std::collections::HashSet::new();
        for (h, c) in chunks {
            let key = stop_chunk_key(h);
            if self.tree.contains_key(&key)? || !added.insert(*h) {
                continue;
            }
            batch.insert(key, serde_json::to_vec(c).map_err(|e| corrupt(&c.chunk_sha1, e))?);
        }
        self.tree.apply_batch(batch)?;
        self.tree.flush()?;
        Ok(added.len() as u64)
    }

    /// Take a chunk off the reviewed stop list; true when it was there.
    pub fn remove_stop_chunk(&self, hash: &Sha1Digest) -> Result<bool> {
        let old = self.tree.remove(stop_chunk_key(hash))?;
        self.tree.flush()?;
        Ok(old.is_some())
    }

    /// The reviewed stop chunks, in hash order.
    pub fn reviewed_stop_chunks(&self) -> impl Iterator<Item = Result<(Sha1Digest, ReviewedStopChunk)>> + '_ {
        self.tree.scan_prefix(STOP_CHUNK).map(|kv| {
            let (k, v) = kv?;
            let name = String::from_utf8_lossy(&k).into_owned();
            let hash: Sha1Digest =
                k[STOP_CHUNK.len()..].try_into().map_err(|_| corrupt(&name, "key is not a SHA-1"))?;
            let c = serde_json::from_slice(&v).map_err(|e| corrupt(&name, e))?;
            Ok((hash, c))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab(n: &str, v: Verdict, time: i64) -> ReviewLabel {
        ReviewLabel { neighborhood: n.into(), label: v, note: "n".into(), reviewer: "r".into(), time }
    }

    #[test]
    fn set_export_import_and_effective() {
        let dir = tempfile::tempdir().unwrap();
        let a = Store::open(&dir.path().join("a.db")).unwrap();
        a.set_label(&lab("http://h/", Verdict::LegitimateMirror, 10)).unwrap();
        a.set_label(&lab("http://h/x/", Verdict::CopiedForProfit, 11)).unwrap();
        assert_eq!(a.label("http://h/").unwrap().unwrap().label, Verdict::LegitimateMirror);
        let idx = a.label_index().unwrap();
        assert_eq!(idx.effective("http://h/y/z/").unwrap().neighborhood, "http://h/");
        assert_eq!(idx.effective("http://h/x/q/").unwrap().label, Verdict::CopiedForProfit);
        assert!(idx.effective("http://other/").is_none());

        let mut buf = Vec::new();
        assert_eq!(a.export_labels(&mut buf).unwrap(), 2);
        let b = Store::open(&dir.path().join("b.db")).unwrap();
        b.set_label(&lab("http://h/x/", Verdict::Unsure, 99)).unwrap();
        let o = b.import_labels(&mut &buf[..]).unwrap();
        assert_eq!(o, ImportOutcome { imported: 1, older: 1 });
        // The newer local label stays.
        assert_eq!(b.label("http://h/x/").unwrap().unwrap().label, Verdict::Unsure);
        assert!(b.import_labels(&mut &b"{not json\n"[..]).is_err());
        assert!(b.remove_label("http://h/").unwrap());
        assert_eq!(b.labels().count(), 1);
    }

    #[test]
    fn verdicts_round_trip() {
        for v in Verdict::ALL {
            assert_eq!(v.as_str().parse::<Verdict>(), Ok(v));
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{v}\""));
        }
        assert!("spam".parse::<Verdict>().is_err());
    }

    #[test]
    fn reviewed_stop_chunks_add_list_remove() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("s.db")).unwrap();
        let rec = |h: u8, t: &str| {
            let c = ReviewedStopChunk {
                chunk_sha1: format!("{h:02x}"),
                text: t.into(),
                neighborhood: "http://h/".into(),
                reviewer: "r".into(),
                time: 1,
            };
            ([h; 20], c)
        };
        assert_eq!(s.add_stop_chunks(&[rec(2, "b"), rec(1, "a"), rec(1, "a again")]).unwrap(), 2);
        assert_eq!(s.add_stop_chunks(&[rec(1, "a later")]).unwrap(), 0);
        let all: Vec<_> = s.reviewed_stop_chunks().map(|r| r.unwrap()).collect();
        assert_eq!(
            all.iter().map(|(h, c)| (h[0], c.text.as_str())).collect::<Vec<_>>(),
            [(1, "a"), (2, "b")]
        );
        assert!(s.remove_stop_chunk(&[1; 20]).unwrap());
        assert!(!s.remove_stop_chunk(&[1; 20]).unwrap());
        assert_eq!(s.reviewed_stop_chunks().count(), 1);
        // Labels and stop chunks do not see each other's keys.
        assert_eq!(s.labels().count(), 0);
    }
}
