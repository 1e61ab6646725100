//! WARC output reproduces the crawl (issue: crawler, "WARC out"): crawl the demo web on
//! loopback with `--warc-dir`, `ditto scan` the WARC files into a new store with the same
//! label set, and compare the two stores' reports — neighborhoods and pages, flagged rows
//! field by field. The rule: the same bytes and URL go to detection in both paths.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use testweb::{demo_seeds, demo_web, TestWeb, DEMO_SUFFIX};

const UA: &str = "ditto-test/0.1 (+http://wiki.demo.test/contact)";

fn report(db: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["report", "--store", db.to_str().unwrap(), "--format", "jsonl"];
    args.extend_from_slice(extra);
    let out = run_ok(&args).stdout;
    String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn stats(db: &Path) -> serde_json::Value {
    let out = run_ok(&["stats", "--store", db.to_str().unwrap(), "--json"]).stdout;
    let mut v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    v.as_object_mut().unwrap().remove("size_on_disk_bytes");
    v
}

/// Rows equal, with a field-level message for the first difference.
fn assert_same_rows(what: &str, crawled: &[serde_json::Value], rescanned: &[serde_json::Value]) {
    let key = |r: &serde_json::Value| r["neighborhood"].as_str().unwrap().to_string();
    let a: Vec<String> = crawled.iter().map(key).collect();
    let b: Vec<String> = rescanned.iter().map(key).collect();
    assert_eq!(a, b, "{what}: flagged rows differ (crawl vs WARC rescan)");
    for (x, y) in crawled.iter().zip(rescanned) {
        for field in
            ["badness", "threshold", "pages", "chunks", "labeled_chunks", "sources", "evidence", "level"]
        {
            assert_eq!(x[field], y[field], "{what}: {} differs in {field}", key(x));
        }
        assert_eq!(x, y, "{what}: row {} differs", key(x));
    }
}

#[test]
fn scanning_the_crawl_warcs_reproduces_the_crawl_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = TestWeb::start_blocking(demo_web()).unwrap();
    let crawl_db = tmp.path().join("crawl.db");
    let warcs = tmp.path().join("warcs");
    let stderr_path = tmp.path().join("crawl.stderr");

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ditto"));
    cmd.args(["crawl", "--store", crawl_db.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()])
        .args(["--user-agent", UA, "--resolve", &web.resolve_arg(&format!("*.{DEMO_SUFFIX}"))])
        .args(["--warc-dir", warcs.to_str().unwrap(), "--min-delay-ms", "20", "--timeout", "10"])
        .args(["--max-pages", "400", "--per-host-max-pages", "100", "--max-depth", "8"])
        .args(["--threads", "2", "--progress", "none"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap());
    for seed in demo_seeds() {
        cmd.args(["--seed", &seed]);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(240) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the crawl ran past 240 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(status.success(), "crawl failed: {stderr}");
    eprintln!("crawl: {}", stderr.lines().next().unwrap_or(""));
    // Loopback only, demo hosts only.
    for r in web.log.all() {
        assert!(r.host.ends_with(".demo.test"), "{r:?}");
    }

    let mut files: Vec<String> = std::fs::read_dir(&warcs)
        .unwrap()
        .flatten()
        .map(|e| e.path().to_str().unwrap().to_string())
        .filter(|p| p.ends_with(".warc.gz"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no WARC files written");

    let scan_db = tmp.path().join("rescan.db");
    let mut args =
        vec!["scan", "--store", scan_db.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()];
    args.extend(["--progress", "none", "--threads", "2"]);
    args.extend(files.iter().map(String::as_str));
    let scan = run_ok(&args);
    eprintln!("rescan: {}", String::from_utf8_lossy(&scan.stderr).lines().next().unwrap_or(""));

    // Same totals (pages, chunks, labeled chunks, neighborhoods, thresholds).
    let (sc, ss) = (stats(&crawl_db), stats(&scan_db));
    eprintln!("crawl store: {sc}\nrescan store: {ss}");
    assert_eq!(sc, ss, "store totals differ (crawl vs WARC rescan)");

    // Flagged neighborhoods: identical, and the demo's copies are among them.
    let (a, b) = (report(&crawl_db, &[]), report(&scan_db, &[]));
    assert_same_rows("neighborhoods", &a, &b);
    let flagged: Vec<&str> = a.iter().map(|r| r["neighborhood"].as_str().unwrap()).collect();
    eprintln!("{} flagged neighborhoods: {flagged:?}", a.len());
    assert!(flagged.iter().any(|n| n.contains("farm.demo.test")), "the farm is not flagged: {flagged:?}");

    // Flagged pages, and every page with any labeled content (fixed threshold 0).
    let (a, b) = (report(&crawl_db, &["--level", "page"]), report(&scan_db, &["--level", "page"]));
    assert_same_rows("pages", &a, &b);
    assert!(!a.is_empty());
    let opts = ["--level", "page", "--threshold", "0", "--evidence", "10", "--sources", "20"];
    let (a, b) = (report(&crawl_db, &opts), report(&scan_db, &opts));
    eprintln!("{} pages with labeled chunks, identical in both stores", a.len());
    assert_same_rows("pages above 0", &a, &b);

    // And the pages themselves: same URLs, same body hashes, same chunk counts.
    let pages = |db: &Path| {
        let store = store::Store::open(db).unwrap();
        let mut v: Vec<(String, String, u32, u32, u32)> = store
            .pages()
            .map(|p| p.unwrap())
            .map(|p| (p.url, p.file_hash, p.chunks, p.labeled_chunks, p.stop_chunks))
            .collect();
        v.sort();
        v
    };
    let (pa, pb) = (pages(&crawl_db), pages(&scan_db));
    assert_eq!(pa.len(), pb.len(), "page counts differ");
    for (x, y) in pa.iter().zip(&pb) {
        assert_eq!(x, y, "a stored page differs (crawl vs WARC rescan)");
    }
    eprintln!("{} pages identical (URL, body SHA-1, chunks, labeled chunks, stop chunks)", pa.len());
}
