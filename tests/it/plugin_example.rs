//! The plug-in path: `examples/plugin_crawler.rs` (a crawler written with reqwest, using
//! `ditto::api`) over a loopback web with known copies gives the same report as `ditto crawl`
//! over the same web.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::*;
use testweb::{Resource, Site, TestWeb, WebSpec};

fn web() -> WebSpec {
    let mut site = Site::with_robots("User-agent: *\nDisallow:\n");
    let mut index = String::from("<html><body><h1>Copies and originals</h1><ul>");
    for (i, article) in ["Albedo", "Aardvark", "ASCII"].iter().enumerate() {
        let mut body = String::from(
            "<html><body><p>Buy now! Our best deals on everything you need today, shipped free.</p>",
        );
        body.extend(article_paragraphs(article, 100).into_iter().take(5));
        body.push_str("</body></html>");
        site = site.page(&format!("/copies/{i}.html"), Resource::html(body));
        index.push_str(&format!("<li><a href=\"/copies/{i}.html\">copy {i}</a></li>"));
    }
    for i in 0..4 {
        let body = format!(
            "<html><body><p>Original note {i}: the weather was mild and the river rose a little after rain, \
             so the ferry ran late on day {i} of the month.</p></body></html>"
        );
        site = site.page(&format!("/notes/{i}.html"), Resource::html(body));
        index.push_str(&format!("<li><a href=\"/notes/{i}.html\">note {i}</a></li>"));
    }
    index.push_str("</ul></body></html>");
    WebSpec::default().host("site.test", site.page("/", Resource::html(index)))
}

fn example_binary() -> PathBuf {
    // Tests run from target/<profile>/deps; cargo builds examples beside them.
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join("examples/plugin_crawler")
}

fn rows(db: &std::path::Path) -> Vec<serde_json::Value> {
    let out = run_ok(&["report", "--store", db.to_str().unwrap(), "--format", "jsonl", "--level", "page"]);
    let mut v: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut r: serde_json::Value = serde_json::from_str(l).unwrap();
            r.as_object_mut().unwrap().remove("evidence"); // fetch times differ; passages compared below
            r
        })
        .collect();
    v.sort_by_key(|r| r["neighborhood"].as_str().unwrap().to_string());
    v
}

#[test]
fn plugin_example_and_ditto_crawl_give_the_same_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let server = TestWeb::start_blocking(web()).unwrap();
    let resolve = format!("site.test={}", server.addr);

    let example = example_binary();
    let status = if example.exists() {
        Command::new(&example)
    } else {
        let mut c = Command::new(env!("CARGO"));
        c.args(["run", "--quiet", "--release", "--example", "plugin_crawler", "--"]);
        c
    }
    .args([
        labelset.to_str().unwrap(),
        tmp.path().join("plugin.db").to_str().unwrap(),
        "http://site.test/",
        "50",
    ])
    .arg(&resolve)
    .status()
    .unwrap();
    assert!(status.success());

    run_ok(&[
        "crawl",
        "--store",
        tmp.path().join("crawl.db").to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--seed",
        "http://site.test/",
        "--resolve",
        &resolve,
        "--min-delay-ms",
        "10",
        "--user-agent",
        "ditto-test/0.1 (+http://localhost/)",
        "--progress",
        "none",
    ]);
    let plugin = rows(&tmp.path().join("plugin.db"));
    let crawl = rows(&tmp.path().join("crawl.db"));
    assert_eq!(plugin, crawl);
    // Only copies are flagged (above mean + σ of contains over the 8 pages), with their
    // articles as sources.
    let flagged: Vec<&str> = plugin.iter().map(|r| r["neighborhood"].as_str().unwrap()).collect();
    assert!(flagged.len() >= 2 && flagged.iter().all(|u| u.contains("/copies/")), "{flagged:?}");
    let titles: Vec<&str> = plugin.iter().map(|r| r["sources"][0]["title"].as_str().unwrap()).collect();
    assert!(titles.iter().all(|t| ["Albedo", "Aardvark", "ASCII"].contains(t)), "{titles:?}");
}
