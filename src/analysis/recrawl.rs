//! `ditto recrawl`: refresh a crawl while skipping replicas (Shivakumar & Garcia-Molina 1998,
//! §3: fetch one replica per cluster; their study saved 22–33 % of fetches).
//!
//! The old store's pages are clustered exactly as `ditto replicas` does
//! ([`crate::analysis::replicas`]). The recrawl then runs the ordinary crawler (`ditto crawl`, as a
//! child process of this executable, so every crawl flag and all politeness apply) into the
//! new store in at most two passes, with `--max-depth 0`: only the URLs given as seeds are
//! fetched, no link is followed.
//!
//! 1. Pass 1: every cluster's representative and every URL in no cluster.
//! 2. Sample check: a representative whose body hash or visible-text hash in the new store
//!    differs from the old store's (or which was not stored at all) counts as changed.
//! 3. Pass 2: the other members of every cluster whose representative changed.
//!
//! The members of the other clusters are skipped; `--skipped-out` lists them as
//! `url<TAB>representative` lines. A skipped member that changed although its representative
//! did not is a missed change: the recrawl cannot see it (it did not fetch it), so tests
//! measure it on a test web whose two versions they know.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use detector::overlap::find_replicas;
use serde::Serialize;
use store::Store;

use crate::analysis::replicas;

/// `ditto recrawl` settings.
#[derive(Debug, Clone)]
pub struct RecrawlConfig {
    /// Store of the earlier crawl (or scan) whose URLs are refreshed.
    pub store: PathBuf,
    /// Store the recrawl writes.
    pub new_store: PathBuf,
    /// Chunk label set (.dls) the crawl passes detect with.
    pub labelset: PathBuf,
    /// Where the crawl passes write their WARC files.
    pub warc_dir: PathBuf,
    /// Where the skipped URLs are listed, if anywhere.
    pub skipped_out: Option<PathBuf>,
    /// Jaccard at or above which pages are near replicas.
    pub threshold: f64,
    /// SimHash candidate distance; `None`: no SimHash candidates.
    pub simhash_k: Option<u32>,
    /// Where the recrawl's counts go as JSON, if anywhere.
    pub stats_json: Option<PathBuf>,
    /// `ditto crawl` flags passed on to the crawl passes.
    pub crawl_args: Vec<String>,
}

/// What the recrawl did.
#[derive(Debug, Default, Serialize, PartialEq)]
pub struct RecrawlSummary {
    /// Distinct URLs in the old store: what a full recrawl fetches.
    pub urls: usize,
    pub clusters: usize,
    /// Clusters whose representative changed (their members were fetched too).
    pub changed_clusters: usize,
    pub pass1_fetches: usize,
    pub pass2_fetches: usize,
    pub skipped: usize,
    /// skipped / urls, in percent.
    pub saved_percent: f64,
}

/// The plan: which URLs pass 1 fetches and, per cluster, the representative and the others.
#[derive(Debug, Default)]
pub struct Plan {
    pub urls: Vec<String>,
    pub pass1: Vec<String>,
    pub clusters: Vec<(String, Vec<String>)>,
}

/// Body hash and text hash of each stored record, by URL.
type Hashes = HashMap<String, Vec<(String, Option<String>)>>;

const RESERVED: &[&str] = &["--store", "--labelset", "--warc-dir", "--seeds", "--seed", "--max-depth"];

/// Body and text hashes of every stored page, by URL (a URL stored twice keeps both).
fn hashes(store: &Store) -> Result<Hashes> {
    let mut m: Hashes = HashMap::new();
    for rec in store.pages() {
        let rec = rec?;
        m.entry(rec.url).or_default().push((rec.file_hash, rec.text_hash));
    }
    Ok(m)
}

/// Clusters the old store's pages and splits its URLs into pass 1 and the clusters' others.
pub fn plan(store: &Store, threshold: f64, simhash_k: Option<u32>) -> Result<Plan> {
    let (pages, docs) = replicas::load(store)?;
    let cfg = detector::overlap::OverlapConfig {
        threshold,
        simhash_k,
        ..detector::overlap::OverlapConfig::default()
    };
    let r = find_replicas(&docs, &cfg);
    let mut clustered: HashSet<&str> = HashSet::new();
    let mut clusters = Vec::new();
    let mut reps: HashSet<&str> = HashSet::new();
    for c in &r.clusters {
        let Some(first) = c.members.first() else { continue };
        let rep = pages[first.doc].url.as_str();
        // A URL stored twice (two bodies) may sit in a cluster with itself: fetch it once.
        let mut others: BTreeSet<&str> = BTreeSet::new();
        for m in &c.members[1..] {
            let u = pages[m.doc].url.as_str();
            if u != rep && !clustered.contains(u) && !reps.contains(u) {
                others.insert(u);
            }
        }
        clustered.insert(rep);
        reps.insert(rep);
        clustered.extend(others.iter().copied());
        clusters.push((rep.to_string(), others.into_iter().map(String::from).collect::<Vec<_>>()));
    }
    let urls: BTreeSet<&str> = pages.iter().map(|p| p.url.as_str()).collect();
    let skippable: HashSet<&str> = clusters.iter().flat_map(|(_, o)| o.iter().map(String::as_str)).collect();
    let pass1 = urls.iter().filter(|u| !skippable.contains(*u)).map(|u| u.to_string()).collect();
    Ok(Plan { urls: urls.into_iter().map(String::from).collect(), pass1, clusters })
}

/// One cluster of the skip plan, for other crawlers (the Scrapy downloader middleware of
/// `bindings/python`): the same clusters and the same rule as `ditto recrawl`: fetch the
/// representative, skip `others` unless the representative changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkipCluster {
    pub representative: String,
    /// The body SHA-1s (hex) the old store holds for the representative: a refetched body
    /// with none of them means the representative changed.
    pub representative_hashes: Vec<String>,
    /// The URLs a recrawl skips while the representative is unchanged.
    pub others: Vec<String>,
}

/// The clusters with something to skip, as [`plan`] makes them for `ditto recrawl`.
pub fn skip_plan(store: &Store, threshold: f64, simhash_k: Option<u32>) -> Result<Vec<SkipCluster>> {
    let p = plan(store, threshold, simhash_k)?;
    let h = hashes(store)?;
    Ok(p.clusters
        .into_iter()
        .filter(|(_, others)| !others.is_empty())
        .map(|(rep, others)| SkipCluster {
            representative_hashes: h
                .get(&rep)
                .map(|v| v.iter().map(|(f, _)| f.clone()).collect())
                .unwrap_or_default(),
            representative: rep,
            others,
        })
        .collect())
}

/// Whether `url` changed: not stored in the new store, or its body or text hash is none of
/// the old store's for it.
fn changed(url: &str, old: &Hashes, new: &Hashes) -> bool {
    let (Some(o), Some(n)) = (old.get(url), new.get(url)) else { return true };
    n.iter().any(|(fh, th)| !o.iter().any(|(ofh, oth)| ofh == fh && oth == th))
}

fn run_pass(cfg: &RecrawlConfig, dir: &Path, name: &str, seeds: &[String]) -> Result<()> {
    if seeds.is_empty() {
        return Ok(());
    }
    let seeds_path = dir.join(format!("recrawl-{name}.seeds"));
    std::fs::write(&seeds_path, seeds.join("\n") + "\n")
        .with_context(|| format!("writing {}", seeds_path.display()))?;
    let exe = std::env::current_exe().context("finding the ditto executable")?;
    let status = Command::new(exe)
        .arg("crawl")
        .arg("--store")
        .arg(&cfg.new_store)
        .arg("--labelset")
        .arg(&cfg.labelset)
        .arg("--warc-dir")
        .arg(&cfg.warc_dir)
        .arg("--seeds")
        .arg(&seeds_path)
        .args(["--max-depth", "0"])
        // A recrawl refreshes the old store's URLs: their domains, each host's pages uncut
        // (a focused crawl's default scope, `any`, caps hosts at 1000 pages).
        .args(if cfg.crawl_args.iter().any(|a| a == "--scope" || a.starts_with("--scope=")) {
            &[][..]
        } else {
            &["--scope", "domain"][..]
        })
        .args(&cfg.crawl_args)
        .status()
        .context("starting the crawl pass")?;
    if !status.success() {
        bail!("recrawl {name}: the crawl failed ({status})");
    }
    Ok(())
}

/// `ditto recrawl`.
pub fn run(cfg: RecrawlConfig) -> Result<()> {
    for f in &cfg.crawl_args {
        let flag = f.split('=').next().unwrap_or("");
        if RESERVED.contains(&flag) {
            bail!("{flag} is set by the recrawl; leave it out of the crawl flags");
        }
    }
    let (plan, old) = {
        let old_store = crate::analysis::open_store_for_reading(&cfg.store)?;
        (plan(&old_store, cfg.threshold, cfg.simhash_k)?, hashes(&old_store)?)
    };
    let dir = cfg.new_store.with_extension("recrawl");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    run_pass(&cfg, &dir, "pass1", &plan.pass1)?;
    let new = {
        let new_store = crate::analysis::open_store_for_reading(&cfg.new_store)?;
        hashes(&new_store)?
    };
    let mut pass2 = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    let mut changed_clusters = 0;
    for (rep, others) in &plan.clusters {
        if others.is_empty() {
            continue;
        }
        if changed(rep, &old, &new) {
            changed_clusters += 1;
            pass2.extend(others.iter().cloned());
        } else {
            skipped.extend(others.iter().map(|o| (o.clone(), rep.clone())));
        }
    }
    run_pass(&cfg, &dir, "pass2", &pass2)?;
    let urls = plan.urls.len();
    let summary = RecrawlSummary {
        urls,
        clusters: plan.clusters.len(),
        changed_clusters,
        pass1_fetches: plan.pass1.len(),
        pass2_fetches: pass2.len(),
        skipped: skipped.len(),
        saved_percent: if urls > 0 { 100.0 * skipped.len() as f64 / urls as f64 } else { 0.0 },
    };
    if let Some(path) = &cfg.skipped_out {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        );
        for (u, rep) in &skipped {
            writeln!(f, "{u}\t{rep}")?;
        }
        f.flush()?;
    }
    println!(
        "recrawl: {} of {} URLs fetched ({} representatives and singletons, {} members of {} \
         changed clusters); {} skipped: {:.1} % of fetches saved (Shivakumar & Garcia-Molina \
         1998: 22–33 %)",
        summary.pass1_fetches + summary.pass2_fetches,
        urls,
        summary.pass1_fetches,
        summary.pass2_fetches,
        summary.changed_clusters,
        summary.skipped,
        summary.saved_percent
    );
    // Novel text of the pages that changed, relative to their old captures (issue 9).
    crate::analysis::novel::report_changes(&cfg.store, &cfg.new_store, &dir.join("novel.jsonl"))?;
    if let Some(path) = &cfg.stats_json {
        super::write_json_file(path, &summary)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(v: &[(&str, &str, Option<&str>)]) -> Hashes {
        let mut m: Hashes = HashMap::new();
        for (u, f, t) in v {
            m.entry(u.to_string()).or_default().push((f.to_string(), t.map(String::from)));
        }
        m
    }

    #[test]
    fn change_check() {
        let old = m(&[("a", "1", Some("t1")), ("b", "2", None)]);
        assert!(!changed("a", &old, &m(&[("a", "1", Some("t1"))])));
        assert!(changed("a", &old, &m(&[("a", "9", Some("t1"))])));
        assert!(changed("a", &old, &m(&[("a", "1", Some("t9"))])));
        assert!(changed("a", &old, &m(&[])), "not refetched counts as changed");
        assert!(changed("c", &old, &m(&[("c", "1", None)])), "unknown before");
        assert!(!changed("b", &old, &m(&[("b", "2", None)])));
    }
}
