//! `ditto recrawl` (issue 12, item 4) on real pages: the ../shared/data/reuse trees (1229
//! Debian and LLVM/Clang documentation pages on 28 hosts, with their real exact and near
//! replicas and the two constructed mirrors) served on loopback in two versions. Version 2
//! edits a quarter of the truth's replica clusters (`clusters.tsv`), every member alike (the
//! premise of Shivakumar & Garcia-Molina 1998 §3: replicas change together), and every
//! seventh page in no cluster. The old store is a crawl of version 1 (every URL a seed,
//! `--max-depth 0`); `ditto recrawl` against version 2 must miss no change, and the fetches
//! it saves are printed beside S&G's 22–33 %.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use testweb::{Resource, Site, TestWeb, WebSpec};

const UA: &str = "ditto-test/0.1 (+http://a.docs.test/contact)";

/// URL → body bytes.
type Pages = BTreeMap<String, Vec<u8>>;

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Version 1: the reuse site as shipped, `site/HOST/PATH` at `http://HOST/PATH`.
fn version1(site: &Path) -> Pages {
    let mut files = Vec::new();
    walk(site, &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(site).unwrap().to_str().unwrap().replace('\\', "/");
            (format!("http://{rel}"), std::fs::read(&p).unwrap())
        })
        .collect()
}

/// Adds a paragraph (HTML: before `</body>`; text: at the end).
fn edit(url: &str, body: &[u8], note: &str) -> Vec<u8> {
    let para = format!(
        "Revised: {note}. This section was reviewed for the new release and its examples were \
         checked against the current tools; see the change log for details."
    );
    if url.ends_with(".html") {
        let at = body.windows(7).rposition(|w| w.eq_ignore_ascii_case(b"</body>")).unwrap_or(body.len());
        let mut b = body[..at].to_vec();
        b.extend_from_slice(format!("<p>{para}</p>").as_bytes());
        b.extend_from_slice(&body[at..]);
        b
    } else {
        let mut b = body.to_vec();
        b.extend_from_slice(format!("\n\n{para}\n").as_bytes());
        b
    }
}

/// Version 2: truth clusters whose id is a multiple of 4 change on every member; every
/// seventh page in no truth cluster changes.
fn version2(v1: &Pages, clusters_tsv: &str) -> Pages {
    let mut v2 = v1.clone();
    let mut clustered = HashSet::new();
    for line in clusters_tsv.lines().skip(1) {
        let Some((id, url)) = line.split_once('\t') else { continue };
        clustered.insert(url.to_string());
        let id: u64 = id.trim_start_matches(|c: char| !c.is_ascii_digit()).parse().unwrap_or(1);
        if id.is_multiple_of(4) {
            if let Some(b) = v1.get(url) {
                v2.insert(url.to_string(), edit(url, b, &format!("cluster {id}")));
            }
        }
    }
    for (i, url) in v1.keys().filter(|u| !clustered.contains(*u)).enumerate() {
        if i.is_multiple_of(7) {
            v2.insert(url.clone(), edit(url, &v1[url], &format!("page {i}")));
        }
    }
    v2
}

fn spec(pages: &Pages) -> WebSpec {
    let mut sites: BTreeMap<String, Site> = BTreeMap::new();
    for (url, body) in pages {
        let rest = url.strip_prefix("http://").unwrap();
        let (host, path) = rest.split_at(rest.find('/').unwrap());
        let ctype =
            if path.ends_with(".html") { "text/html; charset=utf-8" } else { "text/plain; charset=utf-8" };
        let site = sites.remove(host).unwrap_or_default();
        sites.insert(host.to_string(), site.page(path, Resource::bytes(ctype, body.clone())));
    }
    sites.into_iter().fold(WebSpec::default(), |w, (h, s)| w.host(&h, s))
}

fn run_bounded(cmd: &mut Command, what: &str) -> String {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    let out = loop {
        if child.try_wait().unwrap().is_some() {
            break child.wait_with_output().unwrap();
        }
        if start.elapsed() > Duration::from_secs(600) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running after 600 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{what} failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn crawl_flags(web: &TestWeb) -> Vec<String> {
    let resolve = web.resolve_arg("*.docs.test");
    [
        "--user-agent",
        UA,
        "--resolve",
        &resolve,
        "--min-delay-ms",
        "5",
        "--timeout",
        "20",
        "--progress",
        "none",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(["--scope".to_string(), "any".to_string()])
    .collect()
}

#[test]
fn recrawl_of_the_reuse_trees_misses_no_change() {
    let data = shared_data().join("reuse");
    let v1 = version1(&data.join("site"));
    let v2 = version2(&v1, &std::fs::read_to_string(data.join("clusters.tsv")).unwrap());
    let changed: BTreeSet<&String> = v1.keys().filter(|u| v1[*u] != v2[*u]).collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let labelset = wikipedia_labelset(dir);
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, v1.keys().cloned().collect::<Vec<_>>().join("\n") + "\n").unwrap();

    // The first crawl, of version 1.
    let old_db = dir.join("old.db");
    let web1 = TestWeb::start_blocking(spec(&v1)).unwrap();
    let t = Instant::now();
    run_bounded(
        ditto()
            .args(["crawl", "--store", old_db.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()])
            .args(["--warc-dir", dir.join("warcs1").to_str().unwrap(), "--seeds", seeds.to_str().unwrap()])
            .args(["--max-depth", "0"])
            .args(crawl_flags(&web1)),
        "the first crawl",
    );
    let crawl1_s = t.elapsed().as_secs_f64();
    web1.shutdown();
    let old_urls: BTreeSet<String> = {
        let store = store::Store::open(&old_db).unwrap();
        store.pages().map(|p| p.unwrap().url).collect()
    };
    assert_eq!(old_urls.len(), v1.len(), "the first crawl stored every page");

    // The recrawl, against version 2.
    let web2 = TestWeb::start_blocking(spec(&v2)).unwrap();
    let new_db = dir.join("new.db");
    let skipped_out = dir.join("skipped.tsv");
    let stats = dir.join("recrawl.json");
    let t = Instant::now();
    let stdout = run_bounded(
        ditto()
            .args(["recrawl", "--store", old_db.to_str().unwrap(), "--new-store", new_db.to_str().unwrap()])
            .args([
                "--labelset",
                labelset.to_str().unwrap(),
                "--warc-dir",
                dir.join("warcs2").to_str().unwrap(),
            ])
            .args(["--skipped-out", skipped_out.to_str().unwrap(), "--stats-json", stats.to_str().unwrap()])
            .args(crawl_flags(&web2)),
        "the recrawl",
    );
    let recrawl_s = t.elapsed().as_secs_f64();
    eprintln!("{stdout}");
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    eprintln!("{summary}");
    let skipped: BTreeSet<String> = std::fs::read_to_string(&skipped_out)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('\t').map(|(u, _)| u.to_string()))
        .collect();
    let requested: Vec<String> = web2
        .log
        .all()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .map(|r| format!("http://{}{}", r.host, r.path))
        .collect();
    let requested_set: HashSet<&str> = requested.iter().map(String::as_str).collect();
    let missed: Vec<&&String> = changed.iter().filter(|u| skipped.contains(u.as_str())).collect();
    let changed_fetched = changed.iter().filter(|u| requested_set.contains(u.as_str())).count();
    eprintln!(
        "reuse recrawl: {} URLs, {} changed in version 2; {} fetched ({} requests), {} skipped \
         ({:.1} % saved; S&G 1998: 22–33 %); changed pages fetched {}, missed {}: {:?}; \
         {} clusters, {} changed; first crawl {crawl1_s:.1}s, recrawl {recrawl_s:.1}s",
        v1.len(),
        changed.len(),
        requested_set.len(),
        requested.len(),
        skipped.len(),
        100.0 * skipped.len() as f64 / v1.len() as f64,
        changed_fetched,
        missed.len(),
        missed,
        summary["clusters"],
        summary["changed_clusters"],
    );
    for u in v2.keys() {
        assert!(requested_set.contains(u.as_str()) != skipped.contains(u), "{u}: either fetched or skipped");
    }
    assert_eq!(requested.len(), requested_set.len(), "no URL fetched twice");
    assert!(skipped.len() * 5 >= v1.len(), "under 20 % saved: {}", skipped.len());
    assert!(missed.is_empty(), "changes missed by skips: {missed:?}");
}
