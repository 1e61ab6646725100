//! `ditto recrawl` (issue 12, item 4) on a loopback test web served in two versions: a crawl
//! of version 1 into an old store, then a recrawl against version 2 that fetches one page per
//! replica cluster (exact mirrors on another host, near replicas with another footer) and the
//! members only where the representative changed. Measures fetches saved and missed changes
//! (a skipped URL whose body differs between the versions).

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use testweb::{Resource, Site, TestWeb, WebSpec};

const UA: &str = "ditto-test/0.1 (+http://a.rc.test/contact)";

/// Deterministic prose of `n` words drawn from a vocabulary of 400 made-up words.
fn prose(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut words = Vec::with_capacity(n);
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        words.push(format!("w{}{}", x % 400, if i % 12 == 11 { "." } else { "" }));
    }
    words.join(" ")
}

fn page(title: &str, body: &str, footer: &str) -> String {
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>\
         <p>{body}</p><footer><p>{footer}</p></footer></body></html>"
    )
}

/// URL → body of one version of the web.
type Pages = BTreeMap<String, String>;

/// Version 1 or 2 of the web. Hosts: `a` (10 pages), `m` (exact mirror of a's p0..p5), `n`
/// (near replicas of a's p6..p8: same text, another footer), `s` (4 singletons).
/// Version 2: clusters p0 and p6 change on every member (the premise: replicas change
/// together); singleton s0 changes; adversarial: only the mirror's copy of p5 changes.
fn web(version: u32) -> Pages {
    let mut pages = Pages::new();
    let text = |k: u64| {
        let mut t = prose(k, 300);
        if version == 2 && (k == 0 || k == 6) {
            t.push_str(&format!(" Updated: {}", prose(1000 + k, 60)));
        }
        t
    };
    for k in 0..10u64 {
        pages.insert(
            format!("http://a.rc.test/p{k}"),
            page(&format!("Page {k}"), &text(k), "Site a, all rights"),
        );
    }
    for k in 0..6u64 {
        let mut t = text(k);
        if version == 2 && k == 5 {
            t.push_str(&format!(" Mirror-only edit: {}", prose(2005, 60)));
        }
        pages.insert(format!("http://m.rc.test/p{k}"), page(&format!("Page {k}"), &t, "Site a, all rights"));
    }
    for k in 6..9u64 {
        pages.insert(
            format!("http://n.rc.test/copy/p{k}"),
            page(&format!("Page {k}"), &text(k), "Republished by the n network with permission"),
        );
    }
    for k in 0..4u64 {
        let mut t = prose(500 + k, 250);
        if version == 2 && k == 0 {
            t = prose(600, 250);
        }
        pages.insert(format!("http://s.rc.test/s{k}"), page(&format!("Single {k}"), &t, "Site s"));
    }
    pages
}

fn spec(pages: &Pages) -> WebSpec {
    let mut sites: BTreeMap<String, Site> = BTreeMap::new();
    for (url, body) in pages {
        let rest = url.strip_prefix("http://").unwrap();
        let (host, path) = rest.split_at(rest.find('/').unwrap());
        let site = sites.remove(host).unwrap_or_default();
        sites.insert(host.to_string(), site.page(path, Resource::html(body.clone())));
    }
    sites.into_iter().fold(WebSpec::default(), |w, (h, s)| w.host(&h, s))
}

fn run_bounded(cmd: &mut Command, what: &str) -> String {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running after 180 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{what} failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn crawl_flags(web: &TestWeb) -> Vec<String> {
    [
        "--user-agent",
        UA,
        "--resolve",
        &web.resolve_arg("*.rc.test"),
        "--min-delay-ms",
        "10",
        "--timeout",
        "10",
        "--threads",
        "1",
        "--progress",
        "none",
        "--scope",
        "any",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn stored(db: &Path) -> BTreeMap<String, String> {
    let store = store::Store::open(db).unwrap();
    store.pages().map(|p| p.unwrap()).map(|p| (p.url, p.file_hash)).collect()
}

#[test]
fn recrawl_skips_unchanged_replicas() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let labelset = wikipedia_labelset(dir);
    let v1 = web(1);
    let v2 = web(2);

    // The earlier crawl: every URL of version 1.
    let old_db = dir.join("old.db");
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, v1.keys().cloned().collect::<Vec<_>>().join("\n")).unwrap();
    {
        let web1 = TestWeb::start_blocking(spec(&v1)).unwrap();
        run_bounded(
            ditto()
                .args([
                    "crawl",
                    "--store",
                    old_db.to_str().unwrap(),
                    "--labelset",
                    labelset.to_str().unwrap(),
                ])
                .args(["--seeds", seeds.to_str().unwrap(), "--max-depth", "0"])
                .args(crawl_flags(&web1)),
            "the first crawl",
        );
    }
    assert_eq!(stored(&old_db).len(), v1.len(), "the first crawl stored every page");

    // The recrawl against version 2.
    let web2 = TestWeb::start_blocking(spec(&v2)).unwrap();
    let new_db = dir.join("new.db");
    let skipped_out = dir.join("skipped.tsv");
    let stats = dir.join("recrawl.json");
    let stdout = run_bounded(
        ditto()
            .args(["recrawl", "--store", old_db.to_str().unwrap(), "--new-store", new_db.to_str().unwrap()])
            .args([
                "--labelset",
                labelset.to_str().unwrap(),
                "--warc-dir",
                dir.join("warcs").to_str().unwrap(),
            ])
            .args(["--skipped-out", skipped_out.to_str().unwrap(), "--stats-json", stats.to_str().unwrap()])
            .args(crawl_flags(&web2)),
        "the recrawl",
    );
    eprintln!("{stdout}");
    assert!(stdout.contains("22–33 %"), "{stdout}");
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    eprintln!("{summary}");

    let skipped: Vec<(String, String)> = std::fs::read_to_string(&skipped_out)
        .unwrap()
        .lines()
        .map(|l| {
            let (u, r) = l.split_once('\t').unwrap();
            (u.to_string(), r.to_string())
        })
        .collect();
    let skipped_urls: HashSet<&str> = skipped.iter().map(|(u, _)| u.as_str()).collect();

    // Fetches: every URL of the web exactly once, except the skipped ones (never requested).
    let requested: Vec<String> = web2
        .log
        .all()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .map(|r| format!("http://{}{}", r.host, r.path))
        .collect();
    let requested_set: HashSet<&str> = requested.iter().map(String::as_str).collect();
    assert_eq!(requested.len(), requested_set.len(), "no URL fetched twice: {requested:?}");
    for u in v2.keys() {
        assert!(
            requested_set.contains(u.as_str()) != skipped_urls.contains(u.as_str()),
            "{u}: either fetched or skipped"
        );
    }
    let saved = skipped.len();
    assert!(saved > 0, "the recrawl saved no fetch");
    assert_eq!(summary["skipped"].as_u64(), Some(saved as u64));
    assert_eq!(summary["urls"].as_u64(), Some(v1.len() as u64));

    // Changes: every changed page whose cluster changed together was fetched (and stored).
    let new_pages = stored(&new_db);
    let changed: Vec<&String> = v1.keys().filter(|u| v1[*u] != v2[*u]).collect();
    let adversarial = "http://m.rc.test/p5";
    let missed: Vec<&&String> = changed.iter().filter(|u| skipped_urls.contains(u.as_str())).collect();
    let missed_premise: Vec<&&&String> = missed.iter().filter(|u| u.as_str() != adversarial).collect();
    eprintln!(
        "recrawl: {} URLs, {} fetched, {} skipped ({:.1} % saved); {} changed pages, missed {} \
         (adversarial mirror-only edit missed: {})",
        v1.len(),
        requested.len(),
        saved,
        100.0 * saved as f64 / v1.len() as f64,
        changed.len(),
        missed.len(),
        missed.iter().any(|u| u.as_str() == adversarial)
    );
    assert!(missed_premise.is_empty(), "missed changes: {missed_premise:?}");
    assert!(missed.len() <= 1, "only the adversarial mirror-only edit can be missed: {missed:?}");
    for u in &changed {
        if !skipped_urls.contains(u.as_str()) {
            assert!(new_pages.contains_key(*u), "{u} refetched and stored");
        }
    }
    // The clusters that changed together had their members fetched in the second pass.
    for u in ["http://a.rc.test/p0", "http://m.rc.test/p0", "http://a.rc.test/p6", "http://n.rc.test/copy/p6"]
    {
        assert!(new_pages.contains_key(u), "{u} fetched");
    }
    // The adversarial case: the mirror alone changed. It is caught only when the mirror's
    // copy happens to be the representative; either way the report above says which.
    let rep_of_p5 = skipped.iter().find(|(u, _)| u == adversarial || u == "http://a.rc.test/p5");
    eprintln!("adversarial cluster p5: skipped member and representative {rep_of_p5:?}");
}
