//! Novel text on recrawl (issue 9, item 3): a loopback web served in two versions; `ditto
//! recrawl` of the first crawl's store against version 2 reports the pages whose text changed
//! with their novel segments relative to what was stored before (`src/novel.rs`), printed and
//! written to `<new store>.recrawl/novel.jsonl`.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use testweb::{Resource, Site, TestWeb, WebSpec};

const UA: &str = "ditto-test/0.1 (+http://a.nv.test/contact)";

fn words(tag: &str, n: usize) -> String {
    (0..n).map(|i| format!("{tag}{i}")).collect::<Vec<_>>().join(" ")
}

fn page(paras: &[String]) -> String {
    let ps: Vec<String> = paras.iter().map(|p| format!("<p>{p}</p>")).collect();
    format!("<!doctype html><html><body>{}<footer><p>Site footer</p></footer></body></html>", ps.join(""))
}

/// Version 1 or 2: p0 gains a paragraph in the middle, p1 has one word replaced, p2 has its
/// paragraphs swapped (no novel text), p3 changes only in markup, p4 is unchanged.
fn web(version: u32) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let (a, b) = (words("alpha", 80), words("beta", 80));
    let v2 = version == 2;
    m.insert(
        "/p0".to_string(),
        page(&if v2 {
            vec![a.clone(), words("inserted", 25), b.clone()]
        } else {
            vec![a.clone(), b.clone()]
        }),
    );
    let c = words("gamma", 80);
    m.insert("/p1".to_string(), page(&[if v2 { c.replace("gamma40 ", "changed ") } else { c }]));
    let (d, e) = (words("delta", 60), words("eps", 60));
    m.insert(
        "/p2".to_string(),
        page(&if v2 { vec![e.clone(), d.clone()] } else { vec![d.clone(), e.clone()] }),
    );
    let f = words("phi", 60);
    m.insert(
        "/p3".to_string(),
        if v2 { page(std::slice::from_ref(&f)).replace("<body>", "<body class=new>") } else { page(&[f]) },
    );
    m.insert("/p4".to_string(), page(&[words("omega", 60)]));
    m
}

fn spec(pages: &BTreeMap<String, String>) -> WebSpec {
    let site = pages.iter().fold(Site::default(), |s, (p, b)| s.page(p, Resource::html(b.clone())));
    WebSpec::default().host("a.nv.test", site)
}

fn flags(web: &TestWeb) -> Vec<String> {
    let resolve = web.resolve_arg("a.nv.test");
    ["--user-agent", UA, "--resolve", &resolve, "--min-delay-ms", "5", "--threads", "1", "--progress", "none"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn recrawl_reports_the_novel_text_of_changed_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let labelset = wikipedia_labelset(dir);
    let (v1, v2) = (web(1), web(2));
    let urls: Vec<String> = v1.keys().map(|p| format!("http://a.nv.test{p}")).collect();
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, urls.join("\n")).unwrap();
    let old_db = dir.join("old.db");
    {
        let w1 = TestWeb::start_blocking(spec(&v1)).unwrap();
        let mut args: Vec<String> = ["crawl", "--store", old_db.to_str().unwrap(), "--labelset"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend([
            labelset.to_str().unwrap().to_string(),
            "--seeds".into(),
            seeds.to_str().unwrap().into(),
        ]);
        args.extend(["--max-depth".into(), "0".into()]);
        args.extend(flags(&w1));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        run_ok(&a);
    }
    let w2 = TestWeb::start_blocking(spec(&v2)).unwrap();
    let new_db = dir.join("new.db");
    let mut args: Vec<String> = vec![
        "recrawl".into(),
        "--store".into(),
        old_db.to_str().unwrap().into(),
        "--new-store".into(),
        new_db.to_str().unwrap().into(),
        "--labelset".into(),
        labelset.to_str().unwrap().into(),
        "--warc-dir".into(),
        dir.join("warcs").to_str().unwrap().into(),
    ];
    args.extend(flags(&w2));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_ok(&a);
    let stdout = String::from_utf8(out.stdout).unwrap();
    println!("{stdout}");
    assert!(stdout.contains("changed pages: 3"), "{stdout}");
    let rows: Vec<serde_json::Value> =
        std::fs::read_to_string(new_db.with_extension("recrawl").join("novel.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let by_url: BTreeMap<&str, &serde_json::Value> =
        rows.iter().map(|r| (r["url"].as_str().unwrap(), r)).collect();
    // p3 changed only in markup, p4 not at all: not listed.
    assert_eq!(
        by_url.keys().copied().collect::<Vec<_>>(),
        ["http://a.nv.test/p0", "http://a.nv.test/p1", "http://a.nv.test/p2"]
    );
    // p0: exactly the inserted paragraph (tokens 80..105 after the 80 alpha words).
    let p0 = &by_url["http://a.nv.test/p0"]["novel_segments"];
    assert_eq!(p0.as_array().unwrap().len(), 1, "{p0}");
    assert_eq!((p0[0]["start"].as_u64(), p0[0]["end"].as_u64()), (Some(80), Some(105)), "{p0}");
    assert!(p0[0]["text"].as_str().unwrap().starts_with("inserted0 inserted1"));
    // p1: one replaced word: only it (its neighbours are still covered by old shingles).
    let p1 = &by_url["http://a.nv.test/p1"];
    assert_eq!(p1["novel_segments"].as_array().unwrap().len(), 1, "{p1}");
    assert!(p1["novel_segments"][0]["text"].as_str().unwrap().contains("changed"));
    assert_eq!(p1["novel_tokens"], 1, "{p1}");
    // p2: paragraphs swapped: none of their text is novel; only tokens at the end of the text
    // (at most k − 1 = 7), whose every shingle straddles the new boundary ("site footer").
    let p2 = &by_url["http://a.nv.test/p2"];
    assert!(p2["novel_tokens"].as_u64().unwrap() <= 7, "{p2}");
    for s in p2["novel_segments"].as_array().unwrap() {
        let t = s["text"].as_str().unwrap();
        assert!(!t.contains("delta") && !t.contains("eps"), "{p2}");
    }
}
