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
//! Each pass sends conditional requests where the earlier crawl's WARC records hold an
//! `ETag` or `Last-Modified` (`ditto crawl --validators`): a 304 is an unchanged page,
//! fetched without a body (counted as `not_modified`, never as changed). The summary counts
//! what the passes fetched, from their own statistics. A pass stopped by its page budget
//! (`--max-pages`) leaves URLs unfetched: the recrawl says how many, counts them neither
//! changed nor unchanged, runs no second pass, and exits non-zero.
//!
//! The members of the other clusters are skipped; `--skipped-out` lists them as
//! `url<TAB>representative` lines. A skipped member that changed although its representative
//! did not is a missed change: the recrawl cannot see it (it did not fetch it), so tests
//! measure it on a test web whose two versions they know.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{Seek, SeekFrom, Write};
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
    /// URLs each pass was given.
    pub pass1_fetches: usize,
    pub pass2_fetches: usize,
    /// Page requests the passes sent (robots.txt not counted), from their statistics.
    pub fetched: u64,
    /// Of those, answered 304 to a conditional request: unchanged, no body.
    pub not_modified: usize,
    /// URLs sent with conditional requests (the earlier WARC records gave an ETag or
    /// Last-Modified).
    pub conditional: usize,
    /// URLs a pass was given but did not fetch: its page budget (`--max-pages`) ran out.
    pub unfetched: usize,
    /// A pass stopped at its page budget: the recrawl is incomplete (and exits non-zero).
    pub stopped_by_budget: bool,
    pub skipped: usize,
    /// skipped / urls, in percent.
    pub saved_percent: f64,
}

/// What one crawl pass did, from its statistics and failure log.
#[derive(Debug, Default)]
struct PassOutcome {
    /// Page requests (robots.txt not counted).
    fetched: u64,
    /// URLs answered 304.
    not_modified: HashSet<String>,
    stopped_by_budget: bool,
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

const RESERVED: &[&str] = &[
    "--store",
    "--labelset",
    "--warc-dir",
    "--seeds",
    "--seed",
    "--max-depth",
    "--validators",
    "--failure-log",
    "--stats-json",
];

/// What the earlier crawl's WARC records say of each URL's version, for conditional
/// requests: the latest capture's `ETag` and `Last-Modified`. Captures without a WARC
/// record (a crawl without `--warc-dir`, a scan of files) give none.
fn validators(store: &Store) -> Result<HashMap<String, crawler::validators::Validators>> {
    let warc_dir = store.meta(crate::source::text::WARC_DIR_META)?.map(PathBuf::from);
    let mut latest: HashMap<String, (i64, detector::PageOrigin)> = HashMap::new();
    for rec in store.pages() {
        let rec = rec?;
        if !matches!(rec.origin, detector::PageOrigin::Warc { .. }) {
            continue;
        }
        match latest.get(&rec.url) {
            Some((t, _)) if *t >= rec.fetch_time => {}
            _ => {
                latest.insert(rec.url, (rec.fetch_time, rec.origin));
            }
        }
    }
    let mut out = HashMap::new();
    for (url, (_, origin)) in latest {
        let detector::PageOrigin::Warc { file, offset } = origin else { continue };
        let path = match &warc_dir {
            Some(dir) if Path::new(&file).is_relative() => dir.join(&file),
            _ => PathBuf::from(&file),
        };
        if let Some(v) = record_validators(&path, offset, &url) {
            out.insert(url, v);
        }
    }
    Ok(out)
}

/// The `ETag` and `Last-Modified` of `url`'s response record at `offset` of `path` (None
/// when the file, the record or both headers are missing).
fn record_validators(path: &Path, offset: u64, url: &str) -> Option<crawler::validators::Validators> {
    let mut f = std::fs::File::open(path).ok()?;
    f.seek(SeekFrom::Start(offset)).ok()?;
    for rec in crawler::warc::WarcReader::new(std::io::BufReader::new(f)) {
        let rec = rec.ok()?;
        if rec.offset != 0 {
            return None;
        }
        if rec.target_uri.as_deref() != Some(url) || !rec.warc_type.eq_ignore_ascii_case("response") {
            continue;
        }
        let head = crawler::warc::http::parse_response_head(&rec.block)?;
        let v = crawler::validators::Validators {
            etag: head.header("etag").map(str::to_string),
            last_modified: head.header("last-modified").map(str::to_string),
        };
        return (v.etag.is_some() || v.last_modified.is_some()).then_some(v);
    }
    None
}

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

fn run_pass(
    cfg: &RecrawlConfig,
    dir: &Path,
    name: &str,
    seeds: &[String],
    validators: &HashMap<String, crawler::validators::Validators>,
) -> Result<PassOutcome> {
    if seeds.is_empty() {
        return Ok(PassOutcome::default());
    }
    let seeds_path = dir.join(format!("recrawl-{name}.seeds"));
    std::fs::write(&seeds_path, seeds.join("\n") + "\n")
        .with_context(|| format!("writing {}", seeds_path.display()))?;
    let validators_path = dir.join(format!("recrawl-{name}.validators"));
    let mut list = String::new();
    for u in seeds {
        if let Some(v) = validators.get(u) {
            list.push_str(&v.list_line(u));
        }
    }
    std::fs::write(&validators_path, list)
        .with_context(|| format!("writing {}", validators_path.display()))?;
    let failures = dir.join(format!("recrawl-{name}.failures.jsonl"));
    let stats = dir.join(format!("recrawl-{name}.stats.json"));
    for f in [&failures, &stats] {
        match std::fs::remove_file(f) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", f.display()))
            }
            _ => {}
        }
    }
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
        .arg("--validators")
        .arg(&validators_path)
        .arg("--failure-log")
        .arg(&failures)
        .arg("--stats-json")
        .arg(&stats)
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
    pass_outcome(&stats, &failures).with_context(|| format!("reading what recrawl {name} did"))
}

/// A pass's page requests and budget stop (its `--stats-json`) and its 304s (its failure
/// log's `not_modified` lines).
fn pass_outcome(stats: &Path, failures: &Path) -> Result<PassOutcome> {
    let text = std::fs::read(stats).with_context(|| format!("reading {}", stats.display()))?;
    let v: serde_json::Value =
        serde_json::from_slice(&text).with_context(|| format!("{}", stats.display()))?;
    let c = &v["crawl"];
    let count = |k: &str| c[k].as_u64().unwrap_or(0);
    let mut out = PassOutcome {
        fetched: count("requests").saturating_sub(count("robots_fetches")),
        not_modified: HashSet::new(),
        stopped_by_budget: c["stopped_by"] == "max_pages",
    };
    if let Ok(log) = std::fs::read_to_string(failures) {
        for line in log.lines() {
            let Ok(l) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            if l["event"] == "not_modified" {
                if let Some(u) = l["url"].as_str() {
                    out.not_modified.insert(u.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// `ditto recrawl`.
pub fn run(cfg: RecrawlConfig) -> Result<()> {
    for f in &cfg.crawl_args {
        let flag = f.split('=').next().unwrap_or("");
        if RESERVED.contains(&flag) {
            bail!("{flag} is set by the recrawl; leave it out of the crawl flags");
        }
    }
    let (plan, old, validators) = {
        let old_store = crate::analysis::open_store_for_reading(&cfg.store)?;
        (plan(&old_store, cfg.threshold, cfg.simhash_k)?, hashes(&old_store)?, validators(&old_store)?)
    };
    let dir = cfg.new_store.with_extension("recrawl");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let pass1 = run_pass(&cfg, &dir, "pass1", &plan.pass1, &validators)?;
    let new = {
        let new_store = crate::analysis::open_store_for_reading(&cfg.new_store)?;
        hashes(&new_store)?
    };
    // Fetched: stored again, or answered 304 (unchanged); anything else of pass 1's was not
    // reached when its budget ran out.
    let reached = |u: &str| new.contains_key(u) || pass1.not_modified.contains(u);
    let mut unfetched = plan.pass1.iter().filter(|u| !reached(u)).count();
    let mut pass2 = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    let mut changed_clusters = 0;
    for (rep, others) in &plan.clusters {
        if others.is_empty() {
            continue;
        }
        if pass1.stopped_by_budget && !reached(rep) {
            // Neither changed nor unchanged: its members are not fetched either.
            unfetched += others.len();
        } else if !pass1.not_modified.contains(rep) && changed(rep, &old, &new) {
            changed_clusters += 1;
            pass2.extend(others.iter().cloned());
        } else {
            skipped.extend(others.iter().map(|o| (o.clone(), rep.clone())));
        }
    }
    let pass2_out = if pass1.stopped_by_budget {
        // The budget is spent: the members of changed clusters are not fetched.
        unfetched += pass2.len();
        pass2.clear();
        PassOutcome::default()
    } else {
        run_pass(&cfg, &dir, "pass2", &pass2, &validators)?
    };
    if pass2_out.stopped_by_budget {
        let stored = {
            let new_store = crate::analysis::open_store_for_reading(&cfg.new_store)?;
            hashes(&new_store)?
        };
        unfetched +=
            pass2.iter().filter(|u| !stored.contains_key(*u) && !pass2_out.not_modified.contains(*u)).count();
    }
    // A budget that ran out exactly at the last planned URL left nothing unfetched.
    let stopped_by_budget = (pass1.stopped_by_budget || pass2_out.stopped_by_budget) && unfetched > 0;
    let urls = plan.urls.len();
    let summary = RecrawlSummary {
        urls,
        clusters: plan.clusters.len(),
        changed_clusters,
        pass1_fetches: plan.pass1.len(),
        pass2_fetches: pass2.len(),
        fetched: pass1.fetched + pass2_out.fetched,
        not_modified: pass1.not_modified.len() + pass2_out.not_modified.len(),
        conditional: plan.pass1.iter().chain(&pass2).filter(|u| validators.contains_key(*u)).count(),
        unfetched,
        stopped_by_budget,
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
        "recrawl: {} of {} URLs fetched ({} planned: {} representatives and singletons, {} members \
         of {} changed clusters; {} answered 304 unchanged of {} sent conditionally); {} skipped: \
         {:.1} % of fetches saved (Shivakumar & Garcia-Molina 1998: 22–33 %)",
        summary.fetched,
        urls,
        summary.pass1_fetches + summary.pass2_fetches,
        summary.pass1_fetches,
        summary.pass2_fetches,
        summary.changed_clusters,
        summary.not_modified,
        summary.conditional,
        summary.skipped,
        summary.saved_percent
    );
    // Novel text of the pages that changed, relative to their old captures (issue 9).
    crate::analysis::novel::report_changes(&cfg.store, &cfg.new_store, &dir.join("novel.jsonl"))?;
    if let Some(path) = &cfg.stats_json {
        super::write_json_file(path, &summary)?;
    }
    if summary.stopped_by_budget {
        bail!(
            "recrawl incomplete: its page budget (--max-pages) ran out with {} planned URLs not \
             fetched (counted neither changed nor unchanged); raise --max-pages and run it again",
            summary.unfetched
        );
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
