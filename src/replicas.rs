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
//! the others (S&G §3).

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use detector::fingerprint::parse_hex;
use detector::overlap::{find_replicas, DocInput, OverlapConfig, ReplicaKind, Replicas};
use serde::Serialize;
use store::Store;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplicaFormat {
    Jsonl,
    Table,
}

/// `ditto replicas` options.
#[derive(Debug, clap::Args)]
pub struct ReplicasArgs {
    /// Store written by `ditto scan` or `ditto crawl`.
    #[arg(long)]
    pub store: PathBuf,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: ReplicaFormat,
    /// Jaccard of template-free word 4-shingle sets at or above which pages are near replicas.
    #[arg(long, default_value_t = 0.8)]
    pub threshold: f64,
    /// Also propose candidates by SimHash at Hamming distance ≤ K (Manku's permuted tables);
    /// `--simhash-k none` turns it off. Candidates are confirmed by overlap either way.
    #[arg(long, default_value = "3")]
    pub simhash_k: KChoice,
    /// Keep template shingles (on many pages of one host) in the comparison.
    #[arg(long)]
    pub keep_templates: bool,
    /// A shingle on at least this share of a host's pages (and at least 4 pages) is template.
    #[arg(long, default_value_t = 0.5)]
    pub template_fraction: f64,
    /// Pages with fewer template-free shingles are compared on all their shingles.
    #[arg(long, default_value_t = 20)]
    pub min_content_shingles: usize,
    /// Write the analysis counters (candidates per source, templates, ...) as JSON here.
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
}

/// A SimHash distance or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KChoice(pub Option<u32>);

impl std::str::FromStr for KChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "none" | "off" => Ok(KChoice(None)),
            x => x
                .parse::<u32>()
                .ok()
                .filter(|k| *k < 32)
                .map(|k| KChoice(Some(k)))
                .ok_or_else(|| format!("--simhash-k must be a number below 32 or `none`, not {x:?}")),
        }
    }
}

/// One page of the analysis.
pub struct PageInfo {
    pub url: String,
    pub simhash: Option<u64>,
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
    size: usize,
    representative: &'a str,
    members: Vec<MemberOut<'a>>,
    pairs: Vec<PairOut<'a>>,
}

fn host_of(url: &str) -> String {
    url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default()
}

/// Read every page of the store with its replica features.
pub fn load(store: &Store) -> Result<(Vec<PageInfo>, Vec<DocInput>)> {
    let mut pages = Vec::new();
    let mut docs = Vec::new();
    for rec in store.pages() {
        let rec = rec?;
        let Some(file_hash) = parse_hex(&rec.file_hash) else {
            eprintln!("warning: {}: bad file hash {:?}, skipped", rec.url, rec.file_hash);
            continue;
        };
        let shingles = store.shingles_of(&rec.url, &file_hash)?;
        pages.push(PageInfo { url: rec.url.clone(), simhash: rec.simhash, shingles: shingles.len() });
        docs.push(DocInput {
            host: host_of(&rec.url),
            file_hash,
            text_hash: rec.text_hash.as_deref().and_then(parse_hex),
            shingles,
            simhash: rec.simhash,
        });
    }
    Ok((pages, docs))
}

/// The analysis settings from the options.
pub fn config(a: &ReplicasArgs) -> OverlapConfig {
    OverlapConfig {
        threshold: a.threshold,
        drop_templates: !a.keep_templates,
        template_fraction: a.template_fraction,
        min_content_shingles: a.min_content_shingles,
        simhash_k: a.simhash_k.0,
        ..OverlapConfig::default()
    }
}

/// Write the clusters.
pub fn write(out: &mut dyn Write, format: ReplicaFormat, pages: &[PageInfo], r: &Replicas) -> Result<()> {
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
            })
            .collect();
        match format {
            ReplicaFormat::Jsonl => {
                let row = ClusterOut {
                    cluster: ci + 1,
                    size: c.members.len(),
                    representative: rep,
                    members,
                    pairs,
                };
                serde_json::to_writer(&mut *out, &row)?;
                writeln!(out)?;
            }
            ReplicaFormat::Table => {
                writeln!(out, "cluster {} ({} pages, {} pairs)", ci + 1, c.members.len(), pairs.len())?;
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
                }
            }
        }
    }
    Ok(())
}

/// `ditto replicas`.
pub fn run(a: ReplicasArgs) -> Result<()> {
    let started = std::time::Instant::now();
    let store = Store::open(&a.store)?;
    let (pages, docs) = load(&store)?;
    let loaded = started.elapsed().as_secs_f64();
    let r = find_replicas(&docs, &config(&a));
    let analysed = started.elapsed().as_secs_f64() - loaded;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    write(&mut out, a.format, &pages, &r)?;
    out.flush()?;
    let s = &r.stats;
    let in_clusters: usize = r.clusters.iter().map(|c| c.members.len()).sum();
    eprintln!(
        "{} clusters holding {} of {} pages; {} exact pairs, {} near pairs among {} central pages \
         ({} candidates: {} from the shingle index, {} only from SimHash); {} template shingles; \
         {:.2}s (store read {:.2}s, analysis {:.2}s)",
        r.clusters.len(),
        in_clusters,
        s.docs,
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
    if let Some(path) = &a.stats_json {
        let f = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        serde_json::to_writer_pretty(f, s)?;
    }
    Ok(())
}
