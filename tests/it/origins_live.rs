//! Live origins (issue 9): `ditto scan --origins SIZE` and `ditto crawl --origins SIZE` run
//! the origin detector (Abdel-Hamid et al. 2009, NHs + Lucky + BE) in the store writer, in
//! arrival order, and store each page's row; `ditto origins --live` prints them. They must
//! equal the offline `ditto origins` over the same store in the same order.

use crate::common;

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::*;
use testweb::{demo_seeds, demo_web, TestWeb};

fn rows(args: &[&str]) -> Vec<serde_json::Value> {
    let out = run_ok(args);
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A site of articles and pages copying paragraphs of them, every file with the same
/// modification time (fetch time), so fetch-time-then-URL order is URL order, which is the
/// directory walk's order.
fn build(site: &Path) {
    let names = ["Aardvark", "Abacus", "Achilles", "Acid", "Agriculture", "Albedo"];
    let ps: Vec<Vec<String>> = names.iter().map(|n| article_paragraphs(n, 150)).collect();
    let w = |rel: &str, body: String| {
        let p = site.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, body).unwrap();
        let f = fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)).unwrap();
    };
    for (i, n) in names.iter().enumerate() {
        if !ps[i].is_empty() {
            w(&format!("a.test/{n}.html"), format!("<html><body>{}</body></html>", ps[i].join("\n")));
        }
    }
    for c in 0..6 {
        let mut blocks = vec![format!("<p>Our own words for copy {c}, written here and nowhere else.</p>")];
        for (i, p) in ps.iter().enumerate() {
            if (i + c) % 3 == 0 {
                blocks.extend(p.iter().take(2 + c % 2).cloned());
            }
        }
        w(&format!("c.test/copy{c}.html"), format!("<html><body>{}</body></html>", blocks.join("\n")));
    }
}

#[test]
fn live_origins_of_a_scan_equal_the_offline_run() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let site = tmp.path().join("site");
    build(&site);
    let (ls, st) = (labelset.to_str().unwrap(), site.to_str().unwrap());
    // One worker per stage: pages reach the store writer in the walk's order.
    let db = tmp.path().join("one.db");
    let d = db.to_str().unwrap();
    let scan = [
        "scan",
        "--store",
        d,
        "--labelset",
        ls,
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        "--threads",
        "1",
        "--origins",
        "64MB",
        st,
    ];
    run_ok(&scan);
    let live = rows(&["origins", "--store", d, "--live"]);
    let offline = rows(&["origins", "--store", d, "--memory", "64MB"]);
    assert_eq!(live.len(), 12);
    assert_eq!(live, offline);
    let copies: Vec<&serde_json::Value> =
        live.iter().filter(|r| r["url"].as_str().unwrap().starts_with("http://c.test/")).collect();
    for r in &copies {
        println!("{} → {} (copied {:.2})", r["url"], r["dominant_origin"], r["copied_share"]);
    }
    assert!(copies.iter().any(|r| r["dominant_origin"].as_str().unwrap_or("").starts_with("http://a.test/")));
    assert!(copies.iter().all(|r| r["copied_share"].as_f64().unwrap() > 0.3), "{copies:#?}");
    assert!(copies.iter().all(|r| r["novel_segments"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["text"].as_str().unwrap().contains("our own words"))));
    // Several workers: arrival order is whatever the pool made it; the offline run in that
    // recorded order gives the same rows.
    let db2 = tmp.path().join("two.db");
    let d2 = db2.to_str().unwrap();
    let mut scan2 = scan;
    scan2[2] = d2;
    scan2[10] = "2";
    run_ok(&scan2);
    let live2 = rows(&["origins", "--store", d2, "--live"]);
    assert_eq!(live2, rows(&["origins", "--store", d2, "--memory", "64MB", "--order", "arrival"]));
    // Off by default: no rows.
    let db3 = tmp.path().join("off.db");
    run_ok(&[
        "scan",
        "--store",
        db3.to_str().unwrap(),
        "--labelset",
        ls,
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        st,
    ]);
    assert!(rows(&["origins", "--store", db3.to_str().unwrap(), "--live"]).is_empty());
}

#[test]
fn live_origins_of_a_loopback_crawl_equal_the_offline_run() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = TestWeb::start_blocking(demo_web()).unwrap();
    let db = tmp.path().join("crawl.db");
    let d = db.to_str().unwrap();
    let resolve = web.resolve_arg("*.demo.test");
    let mut args = vec![
        "crawl",
        "--store",
        d,
        "--labelset",
        labelset.to_str().unwrap(),
        "--resolve",
        &resolve,
        "--min-delay-ms",
        "5",
        "--progress",
        "none",
        "--scope",
        "any",
        "--max-pages",
        "60",
        "--user-agent",
        "ditto-test/0.1 (+http://demo.test/contact)",
        "--origins",
        "64MB",
    ];
    let seeds = demo_seeds();
    for s in &seeds {
        args.push("--seed");
        args.push(s);
    }
    run_ok(&args);
    let live = rows(&["origins", "--store", d, "--live"]);
    let stored = store::Store::open(&db).unwrap().pages().count();
    assert_eq!(live.len(), stored);
    assert!(live.len() >= 20, "{} pages", live.len());
    assert_eq!(live, rows(&["origins", "--store", d, "--memory", "64MB", "--order", "arrival"]));
    assert!(live.iter().any(|r| r["copied_share"].as_f64().unwrap() > 0.0), "the demo web copies articles");
}
