//! Live near-duplicate marking (issue 12, item 1): a scan of ../shared/data/reuse marks pages
//! whose SimHash is within k = 3 of an earlier page's (`PageRecord::near_duplicate_of`),
//! scored against truth.tsv, and `ditto report --level page` shows the field.

use crate::common;

use std::collections::HashMap;

use common::{article_paragraphs, run_ok, scan_site, shared_data, wikipedia_labelset};

#[test]
fn scanning_the_reuse_tree_marks_known_near_pairs() {
    let data = shared_data().join("reuse");
    let tmp = tempfile::tempdir().unwrap();
    let labels = wikipedia_labelset(tmp.path());
    let db = tmp.path().join("reuse.db");
    let (db_s, labels_s) = (db.to_str().unwrap(), labels.to_str().unwrap());
    let _ = run_ok(&[
        "scan",
        "--store",
        db_s,
        "--labelset",
        labels_s,
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        data.join("site").to_str().unwrap(),
    ]);

    let mut truth: HashMap<(String, String), String> = HashMap::new();
    for line in std::fs::read_to_string(data.join("truth.tsv")).unwrap().lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        truth.insert((f[0].to_string(), f[1].to_string()), f[2].to_string());
    }
    let kind_of = |a: &str, b: &str| {
        let k = if a < b { (a.to_string(), b.to_string()) } else { (b.to_string(), a.to_string()) };
        truth.get(&k).cloned()
    };

    let store = store::Store::open(&db).unwrap();
    let mut by_kind: HashMap<String, usize> = HashMap::new();
    let mut marked = 0;
    let mut pages = 0;
    let mut stored: HashMap<String, Option<String>> = HashMap::new();
    let mut marked_with_contains = 0;
    for rec in store.pages() {
        let rec = rec.unwrap();
        pages += 1;
        if rec.near_duplicate_of.is_some() && rec.contains > 0.0 {
            marked_with_contains += 1;
        }
        stored.insert(rec.url.clone(), rec.near_duplicate_of.clone());
        if let Some(other) = &rec.near_duplicate_of {
            marked += 1;
            assert_ne!(other, &rec.url);
            let k = kind_of(&rec.url, other).unwrap_or_else(|| "none".into());
            *by_kind.entry(k).or_default() += 1;
        }
    }
    drop(store);
    let tp = by_kind.get("exact").copied().unwrap_or(0) + by_kind.get("near").copied().unwrap_or(0);
    let wrong = by_kind.get("none").copied().unwrap_or(0);
    println!(
        "reuse: {pages} pages, {marked} marked near duplicates of an earlier page; by truth kind {by_kind:?}"
    );
    assert!(by_kind.get("near").copied().unwrap_or(0) > 0, "no known near pair marked: {by_kind:?}");
    assert!(tp > 0);
    // Marks are SimHash-only (no overlap confirmation): precision against exact + near +
    // partial pairs, a floor, not a tuned number.
    let precision = (marked - wrong) as f64 / marked.max(1) as f64;
    println!("precision (exact, near or partial in truth) {precision:.3}");
    assert!(precision >= 0.9, "too many marks outside the truth: {by_kind:?}");

    // The page report (every page with contains > 0) shows the field as stored.
    let out = run_ok(&[
        "report",
        "--store",
        db_s,
        "--level",
        "page",
        "--threshold",
        "0",
        "--format",
        "jsonl",
        "--near-dups",
    ]);
    let mut shown = 0;
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let url = v["neighborhood"].as_str().unwrap();
        let field = v.get("near_duplicate_of").and_then(|x| x.as_str()).map(String::from);
        assert_eq!(stored.get(url), Some(&field), "{url}");
        shown += usize::from(field.is_some());
    }
    println!("{shown} marked pages in the page report");
    assert_eq!(shown, marked_with_contains);

    // Two copies of a Wikipedia article with different footers (contains > 0, so both are
    // in the page report): the one matched second names the first.
    let site = tmp.path().join("site");
    let host = site.join("copies.test");
    std::fs::create_dir_all(&host).unwrap();
    let body = article_paragraphs("Albedo", 150).into_iter().take(8).collect::<Vec<_>>().join("\n");
    for (name, footer) in [("a.html", "Copied by a"), ("b.html", "Republished by b")] {
        let html =
            format!("<html><head><title>Albedo</title></head><body>{body}<p>{footer}</p></body></html>");
        std::fs::write(host.join(name), html).unwrap();
    }
    let db2 = tmp.path().join("copies.db");
    scan_site(&db2, &labels, &site);
    let out = run_ok(&[
        "report",
        "--store",
        db2.to_str().unwrap(),
        "--level",
        "page",
        "--threshold",
        "0",
        "--near-dups",
    ]);
    let rows: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let marks: Vec<(&str, Option<&str>)> = rows
        .iter()
        .map(|r| (r["neighborhood"].as_str().unwrap(), r.get("near_duplicate_of").and_then(|x| x.as_str())))
        .collect();
    let marked: Vec<_> = marks.iter().filter(|(_, m)| m.is_some()).collect();
    assert_eq!(marked.len(), 1, "{marks:?}");
    let (url, other) = marked[0];
    assert_ne!(Some(*url), *other);
    assert!(other.is_some_and(|o| o.starts_with("http://copies.test/")), "{marks:?}");
    // Without --near-dups the report leaves the (order-dependent) field out.
    let out = run_ok(&["report", "--store", db2.to_str().unwrap(), "--level", "page", "--threshold", "0"]);
    assert!(!String::from_utf8(out.stdout).unwrap().contains("near_duplicate_of"));

    // A later scan into the same store counts the stored pages as earlier.
    let site2 = tmp.path().join("site2");
    std::fs::create_dir_all(site2.join("copies.test")).unwrap();
    let html = format!("<html><head><title>Albedo</title></head><body>{body}<p>Third copy</p></body></html>");
    std::fs::write(site2.join("copies.test/c.html"), html).unwrap();
    scan_site(&db2, &labels, &site2);
    let store = store::Store::open(&db2).unwrap();
    let c = store.pages().map(|p| p.unwrap()).find(|p| p.url == "http://copies.test/c.html").unwrap();
    assert!(
        c.near_duplicate_of
            .as_deref()
            .is_some_and(|o| o == "http://copies.test/a.html" || o == "http://copies.test/b.html"),
        "{:?}",
        c.near_duplicate_of
    );
}
