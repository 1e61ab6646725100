//! `ditto labelset import`: a hash list from the cluster path written as the label set
//! `ditto discover` writes for the same data and threshold.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use detector::fingerprint::{hex, parse_hex, Sha1Digest};
use detector::Normalization;
use labelsets::{Kind, LabelSetBuilder};

/// Settings of `ditto labelset import`; what is `None` comes from the list's `# key=value`
/// lines, else from the defaults.
#[derive(Debug, Clone)]
pub struct ImportConfig {
    /// The hash list to read.
    pub input: PathBuf,
    /// The label set to write.
    pub output: PathBuf,
    /// Name recorded in the label set.
    pub name: String,
    /// Default: the list's `# kind=`, else chunks.
    pub kind: Option<Kind>,
    /// Default: the list's `# normalization=`, else [`Normalization::default`].
    pub normalization: Option<Normalization>,
    /// Every count must be more than this. Default: the list's `# min_count=`, if any.
    pub min_count: Option<u64>,
}

/// One line of a hash list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashListEntry {
    pub hash: Sha1Digest,
    pub count: u64,
    /// The sample URL ("" when none).
    pub url: String,
}

/// A parsed hash list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HashList {
    /// `# key=value` settings from the comment lines (`kind`, `normalization`, `min_count`).
    pub settings: std::collections::BTreeMap<String, String>,
    pub entries: Vec<HashListEntry>,
}

/// Parse a hash list, the cluster path's output (Ardi & Heidemann 2014, §3.2 step 3b: the
/// objects seen more than a threshold, with where each was seen):
///
/// ```text
/// # ditto hash list
/// # kind=chunks
/// # min_count=5
/// # normalization=nfkc,lower,collapse-ws,trim
/// 3f786850e387550fdab836ed7e6dc881de23001b<TAB>17<TAB>http://a.test/x.html
/// ```
///
/// UTF-8, one object per line: 40 hex digits of the SHA-1, a TAB, the count (decimal), a
/// TAB, the sample URL (the rest of the line; may be empty). Lines starting with `#` are
/// comments; `# key=value` comments carry settings. Blank lines are ignored; a trailing `\r`
/// is dropped. A hash listed twice, a bad hash, a bad count or a missing field is an error
/// naming the line.
pub fn parse_hash_list(text: &str) -> Result<HashList> {
    let mut out = HashList::default();
    let mut seen: HashSet<Sha1Digest> = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            if let Some((k, v)) = c.trim().split_once('=') {
                if !k.trim().is_empty() && !k.contains(' ') {
                    out.settings.insert(k.trim().to_string(), v.trim().to_string());
                }
            }
            continue;
        }
        let mut f = line.splitn(3, '\t');
        let (Some(h), Some(c)) = (f.next(), f.next()) else {
            bail!("line {n}: expected HASH<TAB>COUNT<TAB>URL, found {:?}", truncate(line, 80));
        };
        let url = f.next().unwrap_or("");
        let hash = parse_hex(h)
            .filter(|_| h.len() == 40)
            .ok_or_else(|| anyhow!("line {n}: {:?} is not a SHA-1 (40 hex digits)", truncate(h, 60)))?;
        let count: u64 = c
            .parse()
            .map_err(|_| anyhow!("line {n}: count {:?} is not a non-negative integer", truncate(c, 40)))?;
        if !seen.insert(hash) {
            bail!("line {n}: hash {} is listed twice", hex(&hash));
        }
        out.entries.push(HashListEntry { hash, count, url: url.to_string() });
    }
    Ok(out)
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Write a hash list as a label set: sources are the sample URLs, added in byte order of the
/// URL, as `ditto discover` adds them (its sample is the smallest page number, and a store
/// numbers pages in URL order), so the two files have the same entries and sources.
pub fn import_hash_list(
    list: &HashList,
    kind: Kind,
    norm: Normalization,
    name: &str,
    desc: &str,
    path: &Path,
) -> Result<labelsets::Header> {
    let mut urls: Vec<&str> = list.entries.iter().map(|e| e.url.as_str()).filter(|u| !u.is_empty()).collect();
    urls.sort_unstable();
    urls.dedup();
    // Hashes only, no text: no passages to take.
    let mut b = LabelSetBuilder::new(name, kind, norm, 0, desc).passages(None);
    let mut source_of: HashMap<&str, u32> = HashMap::with_capacity(urls.len());
    for u in urls {
        source_of.insert(u, b.add_source(u, u));
    }
    let mut unknown = None;
    for e in &list.entries {
        let src = match source_of.get(e.url.as_str()) {
            Some(&s) => s,
            None => *unknown.get_or_insert_with(|| b.add_source("(no sample URL)", "")),
        };
        b.add_digest(src, e.hash)?;
    }
    b.write(path).with_context(|| format!("writing {}", path.display()))
}

/// `ditto labelset import`.
pub fn import(a: &ImportConfig) -> Result<()> {
    let text = std::fs::read(&a.input).with_context(|| format!("reading {}", a.input.display()))?;
    let text = String::from_utf8(text).map_err(|e| anyhow!("{}: not UTF-8 ({e})", a.input.display()))?;
    let list = parse_hash_list(&text).with_context(|| format!("{}", a.input.display()))?;
    let kind: Kind = match (a.kind, list.settings.get("kind")) {
        (Some(k), _) => k,
        (None, Some(k)) => k.parse().map_err(|e| anyhow!("kind {k:?}: {e}"))?,
        (None, None) => Kind::Chunks,
    };
    let norm: Normalization = match (a.normalization, list.settings.get("normalization")) {
        (Some(n), _) => n,
        (None, Some(n)) => n.parse().map_err(|e| anyhow!("normalization {n:?}: {e}"))?,
        (None, None) => Normalization::default(),
    };
    let min = match (a.min_count, list.settings.get("min_count")) {
        (Some(t), _) => Some(t),
        (None, Some(t)) => Some(
            t.parse::<u64>()
                .map_err(|_| anyhow!("{}: min_count={t:?} is not a number", a.input.display()))?,
        ),
        (None, None) => None,
    };
    if let Some(t) = min {
        if let Some(e) = list.entries.iter().find(|e| e.count <= t) {
            bail!(
                "{}: {} has count {}, not more than the threshold {t} (§3.2: duplicates(o) > threshold)",
                a.input.display(),
                hex(&e.hash),
                e.count
            );
        }
    }
    let desc = format!(
        "blind discovery (Ardi & Heidemann 2014, §3.2 step 3b) imported from the hash list {}{}; sources are sample URLs where each was seen",
        a.input.display(),
        min.map(|t| format!(" ({kind} seen more than {t} times)")).unwrap_or_default()
    );
    let header = import_hash_list(&list, kind, norm, &a.name, &desc, &a.output)?;
    eprintln!(
        "wrote {} entries with {} sample URLs to {}",
        header.counts.entries,
        header.counts.sources,
        a.output.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_lists_parse_with_settings_and_line_numbered_errors() {
        let h = "3f786850e387550fdab836ed7e6dc881de23001b";
        let text = format!("# ditto hash list\n# min_count=3\n\n{h}\t4\thttp://a/x\r\n");
        let l = parse_hash_list(&text).unwrap();
        assert_eq!(l.settings.get("min_count").map(String::as_str), Some("3"));
        assert_eq!(l.entries.len(), 1);
        assert_eq!(
            (hex(&l.entries[0].hash), l.entries[0].count, l.entries[0].url.as_str()),
            (h.into(), 4, "http://a/x")
        );
        // An empty sample URL is allowed.
        assert_eq!(parse_hash_list(&format!("{h}\t9\t\n")).unwrap().entries[0].url, "");
        let err = |t: &str| format!("{:#}", parse_hash_list(t).unwrap_err());
        assert!(err(&format!("#\n{h}x\t1\tu\n")).starts_with("line 2: "));
        assert!(err(&format!("{h}\t-1\tu\n")).contains("line 1: count \"-1\""));
        assert!(err(&format!("{h} 1 u\n")).contains("line 1: expected"));
        assert!(err(&format!("{h}\t1\tu\n{h}\t2\tv\n")).contains("line 2: hash"));
    }
}
