//! Every input in ../shared/data goes through `ditto scan` without a panic: broken WARC
//! files are reported and skipped, the rest is scanned and counted.

use crate::common;

use common::*;

#[test]
fn scanning_all_shared_data_never_panics_and_reports_broken_files() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let data = shared_data();
    let mut warcs: Vec<String> = Vec::new();
    for dir in ["warc/valid", "warc/broken", "warc/big"] {
        for e in walkdir::WalkDir::new(data.join(dir)).sort_by_file_name() {
            let e = e.unwrap();
            if e.file_type().is_file() && e.path().extension().is_none_or(|x| x != "md") {
                warcs.push(e.path().to_str().unwrap().to_string());
            }
        }
    }
    assert!(warcs.len() >= 40, "found {} WARC files", warcs.len());
    let db = tmp.path().join("all.db");
    let stats = tmp.path().join("stats.json");
    let mut args = vec![
        "scan",
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        "--stats-json",
        stats.to_str().unwrap(),
    ];
    args.extend(warcs.iter().map(|s| s.as_str()));
    let reuse = data.join("reuse/site");
    let wiki_pages = data.join("wikipedia/pages");
    args.push(reuse.to_str().unwrap());
    args.push(wiki_pages.to_str().unwrap());
    let out = common::ditto().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Broken files are reported, not fatal: the scan finishes with the partial-failure code.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("finished with failures"), "{stderr}");
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert!(stats["errors"].as_u64().unwrap() > 0, "{stderr}");
    assert!(stats["skipped"]["read_error"].as_u64().unwrap() > 0);
    // The big WARC alone has 1,388 HTML responses; the reuse tree 1,229 pages.
    assert!(stats["pages_written"].as_u64().unwrap() > 1388 + 1229, "{stats}");
    // The four saved Wikipedia pages copy the label set's articles.
    let rep = run_ok(&["report", "--store", db.to_str().unwrap(), "--level", "page", "--format", "jsonl"]);
    let text = String::from_utf8(rep.stdout).unwrap();
    assert!(text.contains("readability-wikipedia"), "saved Wikipedia pages are flagged");
}
