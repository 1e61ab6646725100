//! `ditto replicas`: clusters of exact and near replicas among a store's pages
//! (`detector::overlap`: Shivakumar & Garcia-Molina 1998 exact groups, template-free word
//! 4-shingle overlap confirmed exactly, union-find clusters; SimHash of Khan & Ali 2015 with
//! Manku's tables as a second candidate source).
//!
//! JSON Lines, one cluster a line, largest first:
//! `{"cluster", "size", "representative", "members": [{"url", "kind", "via", "jaccard",
//! "hamming", "simhash", "shingles"}], "pairs": [{"a", "b", "kind", "jaccard", "shared",
//! "hamming"}]}`. `kind` is `representative`, `exact-bytes`, `exact-text` or `near`; `via` is
//! the member whose pair brought this one in (`jaccard`/`hamming` are to it); `pairs` lists
//! every confirmed pair inside the cluster. A recrawl fetches `representative` and may skip
//! the others (S&G §3). Each cluster row also says `"kind": "exact"` (all members exact
//! copies) or `"near"`, and near members carry `differs`: a bounded sample of the text blocks
//! present in the member and not in the representative, and the reverse ([`Differs`]).
//!
//! After the page clusters come the replicated collections, one `"kind": "mirror"` row each
//! ([`find_mirrors`]): the same directory tree under two URL prefixes, across hosts or paths.
//! The full schema is in docs/report-schema.md.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use detector::fingerprint::{parse_hex, Sha1Digest};
use detector::overlap::{find_replicas, DocInput, OverlapConfig, ReplicaKind, Replicas};
use serde::Serialize;
use store::Store;

use crate::source::text::TextSource;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ReplicaFormat {
    Jsonl,
    Table,
}

/// `ditto replicas` settings.
#[derive(Debug, Clone)]
pub struct ReplicasConfig {
    /// Store written by `ditto scan` or `ditto crawl`.
    pub store: PathBuf,
    pub format: ReplicaFormat,
    /// Jaccard at or above which pages are near replicas.
    pub threshold: f64,
    /// SimHash candidate distance; `None`: no SimHash candidates.
    pub simhash_k: Option<u32>,
    /// Keep template shingles in the comparison.
    pub keep_templates: bool,
    /// Share of a host's pages that makes a shingle template.
    pub template_fraction: f64,
    /// Pages with fewer template-free shingles are compared on all of them.
    pub min_content_shingles: usize,
    /// Where the analysis counters go as JSON, if anywhere.
    pub stats_json: Option<PathBuf>,
    /// Differing blocks shown per near member, each way (0: none).
    pub diff_samples: usize,
    /// Characters each differing block is shortened to.
    pub diff_chars: usize,
    /// Share of each tree's pages a near mirror matches.
    pub mirror_coverage: f64,
    /// Fewest matched pages of a mirror.
    pub mirror_min_files: usize,
    /// Leave the mirror rows out.
    pub no_mirrors: bool,
}

/// One page of the analysis.
pub struct PageInfo {
    pub url: String,
    /// Body SHA-1: with the URL, the key of the stored cleaned text.
    pub file_hash: Sha1Digest,
    pub simhash: Option<u64>,
    /// Distinct shingles of the page (estimated from its sketch when that is not complete).
    pub shingles: usize,
}

#[derive(Serialize)]
struct MemberOut<'a> {
    url: &'a str,
    kind: ReplicaKind,
    via: &'a str,
    jaccard: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    hamming: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    simhash: Option<String>,
    shingles: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    differs: Option<&'a Differs>,
}

#[derive(Serialize)]
struct PairOut<'a> {
    a: &'a str,
    b: &'a str,
    kind: ReplicaKind,
    jaccard: f64,
    shared: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    hamming: Option<u32>,
}

#[derive(Serialize)]
struct ClusterOut<'a> {
    cluster: usize,
    /// `exact` when every member is an exact copy, else `near`.
    kind: &'static str,
    size: usize,
    representative: &'a str,
    members: Vec<MemberOut<'a>>,
    pairs: Vec<PairOut<'a>>,
}

/// A sample of the passages that differ between a near member and its cluster's
/// representative: text blocks (as the cleaner cut them, whitespace collapsed) present in one
/// and not in the other, the first `--diff-samples` in page order (blocks of four words or
/// more before shorter ones), each shortened to `--diff-chars` characters. `only_in_member`/`only_in_representative` count all of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Differs {
    pub only_in_member: usize,
    pub only_in_representative: usize,
    pub member_sample: Vec<String>,
    pub representative_sample: Vec<String>,
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn shorten(s: &str, chars: usize) -> String {
    match s.char_indices().nth(chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The differing blocks of `member` against `rep` (see [`Differs`]).
pub fn differs(member: &[String], rep: &[String], samples: usize, chars: usize) -> Differs {
    let norm =
        |v: &[String]| -> Vec<String> { v.iter().map(|b| collapse(b)).filter(|b| !b.is_empty()).collect() };
    let (m, r) = (norm(member), norm(rep));
    let (ms, rs): (HashSet<&str>, HashSet<&str>) =
        (m.iter().map(String::as_str).collect(), r.iter().map(String::as_str).collect());
    let mut seen = HashSet::new();
    let only_m: Vec<&String> =
        m.iter().filter(|b| !rs.contains(b.as_str()) && seen.insert(b.as_str())).collect();
    let mut seen = HashSet::new();
    let only_r: Vec<&String> =
        r.iter().filter(|b| !ms.contains(b.as_str()) && seen.insert(b.as_str())).collect();
    // Blocks of four words or more first (a changed sentence says more than "next |"), each
    // group in page order.
    let sample = |v: &[&String]| -> Vec<String> {
        let (long, short): (Vec<&&String>, Vec<&&String>) = v.iter().partition(|b| b.split(' ').count() >= 4);
        long.into_iter().chain(short).take(samples).map(|b| shorten(b, chars)).collect()
    };
    Differs {
        only_in_member: only_m.len(),
        only_in_representative: only_r.len(),
        member_sample: sample(&only_m),
        representative_sample: sample(&only_r),
    }
}

/// [`Differs`] for every near member of every cluster, by page index, from the pages' text
/// (kept in the store, or read back from their sources: `crate::source::text`). Pages whose
/// text cannot be had get none (and are counted in `texts`).
pub fn cluster_differs(
    texts: &TextSource,
    pages: &[PageInfo],
    r: &Replicas,
    samples: usize,
    chars: usize,
) -> Result<HashMap<usize, Differs>> {
    let mut out = HashMap::new();
    if samples == 0 {
        return Ok(out);
    }
    let text = |i: usize| -> Result<Option<Vec<String>>> {
        Ok(texts.text_of_key(&pages[i].url, &pages[i].file_hash)?.blocks())
    };
    for c in &r.clusters {
        let Some(rep) = c.members.first() else { continue };
        let mut rep_text: Option<Option<Vec<String>>> = None;
        for m in c.members.iter().filter(|m| m.kind == ReplicaKind::Near) {
            let rt = match &rep_text {
                Some(t) => t,
                None => rep_text.insert(text(rep.doc)?),
            };
            let Some(rt) = rt else { break };
            if let Some(mt) = text(m.doc)? {
                out.insert(m.doc, differs(&mt, rt, samples, chars));
            }
        }
    }
    Ok(out)
}

/// A replicated collection (S&G 1998 §1: "replication also occurs at a higher level than
/// documents", whole servers or manual trees mirrored; §3: "replication of popular
/// documents", manuals replicated on 10–100 sites): the directory trees under `prefix_a` and
/// `prefix_b` hold pages at the same relative paths that are replicas of each other.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mirror {
    /// `exact`: every page of both trees has a byte-identical counterpart at the same
    /// relative path and neither tree has anything else; `near`: at least `--mirror-coverage`
    /// of each tree's pages are matched by a replica of any kind.
    pub mirror: &'static str,
    pub prefixes: [String; 2],
    /// Relative paths matched by a replica pair.
    pub matched: usize,
    pub exact_bytes: usize,
    pub exact_text: usize,
    pub near: usize,
    /// Distinct URLs stored under each prefix.
    pub pages: [usize; 2],
    /// matched / pages, per tree.
    pub coverage: [f64; 2],
    /// The matched relative paths with how their pages matched, sorted by path.
    pub members: Vec<MirrorMember>,
}

/// One matched relative path of a mirror.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MirrorMember {
    pub path: String,
    pub kind: ReplicaKind,
}

/// Mirror settings (`--mirror-coverage`, `--mirror-min-files`).
#[derive(Debug, Clone, Copy)]
pub struct MirrorConfig {
    pub min_coverage: f64,
    pub min_files: usize,
}

/// Byte offsets of the `/` that end each directory of a URL's path (the root's first), or
/// None for a URL without `scheme://host/`.
fn dir_slashes(url: &str) -> Option<Vec<usize>> {
    let start = url.find("://")? + 3;
    let end = url[start..].find(['?', '#']).map_or(url.len(), |i| start + i);
    let root = start + url[start..end].find('/')?;
    Some((root..end).filter(|&i| url.as_bytes()[i] == b'/').collect())
}

fn kind_rank(k: ReplicaKind) -> u8 {
    match k {
        ReplicaKind::Representative | ReplicaKind::ExactBytes => 0,
        ReplicaKind::ExactText => 1,
        ReplicaKind::Near => 2,
    }
}

/// Two directory prefixes, the smaller first.
type PrefixPair<'a> = (&'a str, &'a str);
/// Matched relative paths with their best replica kind.
type Paths<'a> = BTreeMap<&'a str, ReplicaKind>;

/// Replicated collections among `urls`, from the confirmed replica pairs (`a`, `b` index
/// `urls`), without comparing trees pairwise: every replica pair whose URLs end in the same
/// relative path `d1/…/dk/file` votes for the prefix pairs it would sit under, one per shared
/// trailing segment (`…/dk/` ↔ `…/dk/` with path `file`, `…/d(k-1)/` ↔ … with `dk/file`,
/// …): S&G's overlap counting (§2, the Overlap table ⟨d_i, d_j, F⟩) one level up, with
/// directory prefixes for documents and matched relative paths for shared fingerprints
/// (their §1: "the pair-wise server overlap problem if we consider the server to be the
/// union of all documents in the site"). A prefix pair is a mirror when its matched paths
/// cover enough of both trees (each tree's distinct stored URLs counted once); only maximal
/// ones are kept (a pair whose parent directories, same name on both sides, are a mirror of
/// the same kind is left out), exact and near mirrors each maximal on their own, so an exact
/// subtree inside a near-mirrored tree is still listed.
pub fn find_mirrors(urls: &[&str], pairs: &[(usize, usize, ReplicaKind)], cfg: MirrorConfig) -> Vec<Mirror> {
    let slashes: Vec<Option<Vec<usize>>> = urls.iter().map(|u| dir_slashes(u)).collect();
    // Distinct URLs under every directory prefix.
    let mut under: HashMap<&str, usize> = HashMap::new();
    let distinct: HashSet<usize> = {
        let mut seen = HashSet::new();
        (0..urls.len()).filter(|&i| seen.insert(urls[i])).collect()
    };
    for &i in &distinct {
        for &s in slashes[i].iter().flatten() {
            *under.entry(&urls[i][..=s]).or_default() += 1;
        }
    }
    // Prefix pair -> relative path -> best kind.
    type Votes<'a> = HashMap<PrefixPair<'a>, Paths<'a>>;
    let mut votes: Votes = HashMap::new();
    for &(a, b, kind) in pairs {
        let (ua, ub) = (urls[a], urls[b]);
        if ua == ub {
            continue;
        }
        let (Some(sa), Some(sb)) = (&slashes[a], &slashes[b]) else { continue };
        for (&pa, &pb) in sa.iter().rev().zip(sb.iter().rev()) {
            let (ra, rb) = (&ua[pa + 1..], &ub[pb + 1..]);
            if ra != rb {
                break;
            }
            let (xa, xb) = (&ua[..=pa], &ub[..=pb]);
            let key = if xa < xb { (xa, xb) } else { (xb, xa) };
            let e = votes.entry(key).or_default().entry(ra).or_insert(kind);
            if kind_rank(kind) < kind_rank(*e) {
                *e = kind;
            }
        }
    }
    let pages = |p: &str| under.get(p).copied().unwrap_or(0);
    let exact = |k: &(&str, &str), v: &BTreeMap<&str, ReplicaKind>| {
        v.len() >= cfg.min_files.max(2)
            && v.values().all(|k| kind_rank(*k) == 0)
            && pages(k.0) == v.len()
            && pages(k.1) == v.len()
    };
    let near = |k: &(&str, &str), v: &BTreeMap<&str, ReplicaKind>| {
        let n = v.len() as f64;
        v.len() >= cfg.min_files.max(2)
            && n >= cfg.min_coverage * pages(k.0) as f64 - 1e-9
            && n >= cfg.min_coverage * pages(k.1) as f64 - 1e-9
    };
    // The length of the parent directory prefix of a directory prefix (None at the root).
    let parent = |p: &str| -> Option<usize> {
        let start = p.find("://")? + 3;
        let root = start + p[start..].find('/')?;
        let inner = &p[..p.len().checked_sub(1)?];
        (inner.len() > root).then(|| inner.rfind('/').map(|c| c + 1)).flatten()
    };
    let has_qualifying_ancestor = |k: &(&str, &str), test: &dyn Fn(&PrefixPair, &Paths) -> bool| {
        let (mut a, mut b) = (k.0, k.1);
        loop {
            let (Some(ca), Some(cb)) = (parent(a), parent(b)) else { return false };
            // The same directory name on both sides, or the paths would not line up.
            if a[ca..] != b[cb..] {
                return false;
            }
            let (pa, pb) = (&a[..ca], &b[..cb]);
            if pa == pb {
                return false;
            }
            let key = if pa < pb { (pa, pb) } else { (pb, pa) };
            if votes.get(&key).is_some_and(|v| test(&key, v)) {
                return true;
            }
            (a, b) = (pa, pb);
        }
    };
    let mut out = Vec::new();
    for (k, v) in &votes {
        let is_exact = exact(k, v) && !has_qualifying_ancestor(k, &exact);
        let is_near = !exact(k, v) && near(k, v) && !has_qualifying_ancestor(k, &near);
        if !(is_exact || is_near) {
            continue;
        }
        let count = |want: ReplicaKind| v.values().filter(|k| kind_rank(**k) == kind_rank(want)).count();
        let (pa, pb) = (pages(k.0), pages(k.1));
        let cov = |p: usize| if p > 0 { (v.len() as f64 / p as f64 * 1e4).round() / 1e4 } else { 0.0 };
        out.push(Mirror {
            mirror: if is_exact { "exact" } else { "near" },
            prefixes: [k.0.to_string(), k.1.to_string()],
            matched: v.len(),
            exact_bytes: count(ReplicaKind::ExactBytes),
            exact_text: count(ReplicaKind::ExactText),
            near: count(ReplicaKind::Near),
            pages: [pa, pb],
            coverage: [cov(pa), cov(pb)],
            members: v.iter().map(|(p, k)| MirrorMember { path: p.to_string(), kind: *k }).collect(),
        });
    }
    out.sort_by(|x, y| y.matched.cmp(&x.matched).then_with(|| x.prefixes.cmp(&y.prefixes)));
    out
}

fn host_of(url: &str) -> String {
    url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default()
}

/// Read every page of the store with its replica features, from the records alone: a
/// page's shingles are its stored sketch (`PageRecord::sketch`, the smallest
/// `detector::shingles::SKETCH_SIZE` hashes of its word-4-shingle set, computed in the scan's
/// fingerprint pool). No page text is read (only [`cluster_differs`] reads text, for the
/// differing passages it shows). Whole sets under `w/` (format 1 and 2 stores, refused
/// now) are not read: their hashes are not the sketches'.
pub fn load(store: &Store) -> Result<(Vec<PageInfo>, Vec<DocInput>)> {
    let mut pages = Vec::new();
    let mut docs = Vec::new();
    for rec in store.pages() {
        let rec = rec?;
        let Some(file_hash) = parse_hex(&rec.file_hash) else {
            eprintln!("warning: {}: bad file hash {:?}, skipped", rec.url, rec.file_hash);
            continue;
        };
        let size = rec.sketch.estimated_size();
        let (shingles, partial) = (rec.sketch.hashes, !rec.sketch.complete);
        pages.push(PageInfo { url: rec.url.clone(), file_hash, simhash: rec.simhash, shingles: size });
        docs.push(DocInput {
            host: host_of(&rec.url),
            file_hash,
            text_hash: rec.text_hash.as_deref().and_then(parse_hex),
            shingles,
            shingles_partial: partial,
            simhash: rec.simhash,
        });
    }
    Ok((pages, docs))
}

/// The overlap analysis' settings from the command's.
pub fn config(c: &ReplicasConfig) -> OverlapConfig {
    OverlapConfig {
        threshold: c.threshold,
        drop_templates: !c.keep_templates,
        template_fraction: c.template_fraction,
        min_content_shingles: c.min_content_shingles,
        simhash_k: c.simhash_k,
        ..OverlapConfig::default()
    }
}

/// Write the clusters, then the mirrors.
pub fn write(
    out: &mut dyn Write,
    format: ReplicaFormat,
    pages: &[PageInfo],
    r: &Replicas,
    diffs: &HashMap<usize, Differs>,
    mirrors: &[Mirror],
) -> Result<()> {
    write_clusters(out, format, pages, r, diffs)?;
    // Mirror rows are numbered on from the page clusters.
    write_mirrors(out, format, r.clusters.len() + 1, mirrors)
}

/// One row per page cluster, with its members and confirmed pairs.
fn write_clusters(
    out: &mut dyn Write,
    format: ReplicaFormat,
    pages: &[PageInfo],
    r: &Replicas,
    diffs: &HashMap<usize, Differs>,
) -> Result<()> {
    // Pairs by cluster: a pair belongs to the cluster of its first page.
    let mut cluster_of: HashMap<usize, usize> = HashMap::new();
    for (ci, c) in r.clusters.iter().enumerate() {
        for m in &c.members {
            cluster_of.insert(m.doc, ci);
        }
    }
    let mut pairs_of: Vec<Vec<PairOut>> = (0..r.clusters.len()).map(|_| Vec::new()).collect();
    for p in &r.pairs {
        if let Some(&ci) = cluster_of.get(&p.a) {
            pairs_of[ci].push(PairOut {
                a: &pages[p.a].url,
                b: &pages[p.b].url,
                kind: p.kind,
                jaccard: p.jaccard,
                shared: p.shared,
                hamming: p.hamming,
            });
        }
    }
    for (ci, (c, pairs)) in r.clusters.iter().zip(pairs_of).enumerate() {
        let rep = c.members.first().map(|m| pages[m.doc].url.as_str()).unwrap_or("");
        let members: Vec<MemberOut> = c
            .members
            .iter()
            .map(|m| MemberOut {
                url: &pages[m.doc].url,
                kind: m.kind,
                via: &pages[m.via].url,
                jaccard: (m.jaccard * 1e4).round() / 1e4,
                hamming: m.hamming,
                simhash: pages[m.doc].simhash.map(|s| format!("{s:016x}")),
                shingles: pages[m.doc].shingles,
                differs: diffs.get(&m.doc),
            })
            .collect();
        let kind = if c.members.iter().any(|m| m.kind == ReplicaKind::Near) { "near" } else { "exact" };
        match format {
            ReplicaFormat::Jsonl => {
                let row = ClusterOut {
                    cluster: ci + 1,
                    kind,
                    size: c.members.len(),
                    representative: rep,
                    members,
                    pairs,
                };
                serde_json::to_writer(&mut *out, &row)?;
                writeln!(out)?;
            }
            ReplicaFormat::Table => {
                writeln!(
                    out,
                    "cluster {} ({kind}, {} pages, {} pairs)",
                    ci + 1,
                    c.members.len(),
                    pairs.len()
                )?;
                for m in &members {
                    let kind = serde_json::to_value(m.kind)?;
                    let d = m.hamming.map(|d| d.to_string()).unwrap_or_else(|| "-".into());
                    writeln!(
                        out,
                        "  {:<14} J {:.3}  d {:>2}  {:>6} sh  {}",
                        kind.as_str().unwrap_or(""),
                        m.jaccard,
                        d,
                        m.shingles,
                        m.url
                    )?;
                    if let Some(d) = m.differs {
                        writeln!(
                            out,
                            "      differs: {} block(s) only here, {} only in the representative",
                            d.only_in_member, d.only_in_representative
                        )?;
                        for b in &d.member_sample {
                            writeln!(out, "        + {b}")?;
                        }
                        for b in &d.representative_sample {
                            writeln!(out, "        - {b}")?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// One `"kind": "mirror"` row per replicated collection, numbered from `first`.
fn write_mirrors(out: &mut dyn Write, format: ReplicaFormat, first: usize, mirrors: &[Mirror]) -> Result<()> {
    for (i, m) in mirrors.iter().enumerate() {
        match format {
            ReplicaFormat::Jsonl => {
                #[derive(Serialize)]
                struct MirrorRow<'a> {
                    cluster: usize,
                    kind: &'static str,
                    #[serde(flatten)]
                    mirror: &'a Mirror,
                }
                serde_json::to_writer(
                    &mut *out,
                    &MirrorRow { cluster: first + i, kind: "mirror", mirror: m },
                )?;
                writeln!(out)?;
            }
            ReplicaFormat::Table => {
                writeln!(
                    out,
                    "cluster {} (mirror, {}): {} <-> {}: {} paths matched ({} same bytes, {} same \
                     text, {} near) of {} / {} pages, coverage {:.3} / {:.3}",
                    first + i,
                    m.mirror,
                    m.prefixes[0],
                    m.prefixes[1],
                    m.matched,
                    m.exact_bytes,
                    m.exact_text,
                    m.near,
                    m.pages[0],
                    m.pages[1],
                    m.coverage[0],
                    m.coverage[1]
                )?;
            }
        }
    }
    Ok(())
}

/// The mirrors among a store's pages, from the analysis' pairs.
pub fn mirrors_of(pages: &[PageInfo], r: &Replicas, cfg: MirrorConfig) -> Vec<Mirror> {
    let urls: Vec<&str> = pages.iter().map(|p| p.url.as_str()).collect();
    let pairs: Vec<(usize, usize, ReplicaKind)> = r.pairs.iter().map(|p| (p.a, p.b, p.kind)).collect();
    find_mirrors(&urls, &pairs, cfg)
}

/// `ditto replicas`.
pub fn run(cfg: ReplicasConfig) -> Result<()> {
    let started = std::time::Instant::now();
    let store = crate::analysis::open_store_for_reading(&cfg.store)?;
    let (pages, docs) = load(&store)?;
    let loaded = started.elapsed().as_secs_f64();
    let r = find_replicas(&docs, &config(&cfg));
    let mirrors = if cfg.no_mirrors {
        Vec::new()
    } else {
        mirrors_of(
            &pages,
            &r,
            MirrorConfig { min_coverage: cfg.mirror_coverage, min_files: cfg.mirror_min_files },
        )
    };
    let analysed = started.elapsed().as_secs_f64() - loaded;
    let texts = TextSource::new(&store)?;
    let diffs = cluster_differs(&texts, &pages, &r, cfg.diff_samples, cfg.diff_chars)?;
    if let Some(note) = texts.summary() {
        eprintln!("{note}");
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    write(&mut out, cfg.format, &pages, &r, &diffs, &mirrors)?;
    out.flush()?;
    let s = &r.stats;
    let in_clusters: usize = r.clusters.iter().map(|c| c.members.len()).sum();
    eprintln!(
        "{} clusters holding {} of {} pages; {} mirrors ({} exact); {} exact pairs, {} near pairs among {} central pages \
         ({} candidates: {} from the shingle index, {} only from SimHash); {} template shingles; \
         {:.2}s (store read {:.2}s, analysis {:.2}s)",
        r.clusters.len(),
        in_clusters,
        s.docs,
        mirrors.len(),
        mirrors.iter().filter(|m| m.mirror == "exact").count(),
        s.exact_pairs,
        r.pairs.len() - s.exact_pairs,
        s.central_docs,
        s.candidates,
        s.candidates_index,
        s.candidates_simhash_only,
        s.template_shingles,
        started.elapsed().as_secs_f64(),
        loaded,
        analysed
    );
    if let Some(path) = &cfg.stats_json {
        super::write_json_file(path, s)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: &[&str]) -> Vec<String> {
        x.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn differing_blocks_sampled_and_bounded() {
        let rep = v(&["Title", "The same  first paragraph here.", "Last updated on 2023-01-01 by the team."]);
        let mem = v(&[
            "Title",
            "The same first paragraph here.",
            "next |",
            "Last updated on 2023-10-16 by the team.",
        ]);
        let d = differs(&mem, &rep, 3, 200);
        assert_eq!(d.only_in_member, 2);
        assert_eq!(d.only_in_representative, 1);
        assert_eq!(d.member_sample, v(&["Last updated on 2023-10-16 by the team.", "next |"]));
        assert_eq!(d.representative_sample, v(&["Last updated on 2023-01-01 by the team."]));
        let d = differs(&mem, &rep, 1, 10);
        assert_eq!(d.member_sample, v(&["Last updat…"]));
        assert_eq!(d.only_in_member, 2, "counts are not bounded by the sample");
        assert_eq!(differs(&rep, &rep, 3, 200), Differs::default());
    }

    #[test]
    fn mirrors_maximal_exact_and_near() {
        use ReplicaKind::*;
        let urls = [
            "http://a/doc/x.html",        // 0
            "http://a/doc/sub/y.html",    // 1
            "http://b/x.html",            // 2
            "http://b/sub/y.html",        // 3
            "http://c/v1/p.html",         // 4
            "http://c/v1/q.html",         // 5
            "http://c/v1/r.html",         // 6
            "http://c/v2/p.html",         // 7
            "http://c/v2/q.html",         // 8
            "http://c/v2/r.html",         // 9
            "http://c/v2/extra.html",     // 10
            "http://c/v1/s/t.html?a=b/c", // 11
            "http://c/v2/s/t.html?a=b/c", // 12
        ];
        let pairs = [
            (0, 2, ExactBytes),
            (1, 3, ExactBytes),
            (4, 7, Near),
            (5, 8, ExactText),
            (6, 9, ExactBytes),
            (11, 12, ExactBytes),
            (0, 4, Near), // another path: votes for nothing that qualifies
        ];
        let m = find_mirrors(&urls, &pairs, MirrorConfig { min_coverage: 0.8, min_files: 2 });
        let got: Vec<(&str, &str, &str, usize, [usize; 2])> = m
            .iter()
            .map(|m| (m.mirror, m.prefixes[0].as_str(), m.prefixes[1].as_str(), m.matched, m.pages))
            .collect();
        assert_eq!(
            got,
            vec![
                ("near", "http://c/v1/", "http://c/v2/", 4, [4, 5]),
                ("exact", "http://a/doc/", "http://b/", 2, [2, 2]),
            ],
            "a/doc/sub <-> b/sub is inside the maximal exact mirror; c/v1/s <-> c/v2/s is one file"
        );
        assert_eq!((m[0].exact_bytes, m[0].exact_text, m[0].near), (2, 1, 1));
        assert_eq!(m[0].members[2].path, "r.html");
        // Coverage 0.8 of v2's 5 pages needs 4 matches: without the query page it is 3.
        let m = find_mirrors(&urls, &pairs[..5], MirrorConfig { min_coverage: 0.8, min_files: 2 });
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].prefixes[0], "http://a/doc/");
    }
}
