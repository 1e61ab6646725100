//! Helpers shared by the integration tests: paths to the shared data and running the
//! `ditto` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `../shared/data` relative to the project root.
pub fn shared_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data")
}

pub fn ditto() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ditto"))
}

/// Run ditto with `args`; panic with its stderr when it fails.
pub fn run_ok(args: &[&str]) -> Output {
    let out = ditto().args(args).output().expect("running ditto");
    assert!(
        out.status.success(),
        "ditto {:?} failed: {}\n{}",
        args,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

/// Build the Wikipedia label set from the shared articles into `dir`.
pub fn wikipedia_labelset(dir: &Path) -> PathBuf {
    let out = dir.join("wikipedia.dls");
    let articles = shared_data().join("wikipedia/articles");
    run_ok(&[
        "labelset",
        "build",
        "--name",
        "wikipedia",
        "--min-chars",
        "100",
        "--url-prefix",
        "https://en.wikipedia.org/wiki/",
        "-o",
        out.to_str().unwrap(),
        articles.to_str().unwrap(),
    ]);
    out
}

/// The `<p>` paragraphs of a shared Wikipedia article longer than `min` bytes, as HTML.
pub fn article_paragraphs(name: &str, min: usize) -> Vec<String> {
    let html = std::fs::read_to_string(shared_data().join("wikipedia/articles").join(format!("{name}.html")))
        .expect("reading an article");
    html.split("<p>")
        .skip(1)
        .filter_map(|s| s.split("</p>").next())
        .filter(|p| p.len() > min)
        .map(|p| format!("<p>{p}</p>"))
        .collect()
}

/// `ditto scan --progress none` of `input` into `db` with `labelset`, no other flag (as the
/// README writes it).
pub fn scan_plain(db: &Path, labelset: &Path, input: &Path) -> Output {
    run_ok(&[
        "scan",
        "--progress",
        "none",
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        input.to_str().unwrap(),
    ])
}

/// `ditto scan` of a directory whose subfolders are host names (`--url-prefix http://`).
pub fn scan_site(db: &Path, labelset: &Path, site: &Path) -> Output {
    run_ok(&[
        "scan",
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        site.to_str().unwrap(),
    ])
}

/// `ditto scan --progress none --stats-json STATS` of `args` (inputs and flags) into `store`;
/// asserts the exit `code` (0, or 3 when some input could not be read) and returns stderr.
pub fn scan_with_stats(store: &Path, labelset: &Path, stats: &Path, args: &[&str], code: i32) -> String {
    let out = ditto()
        .args(["scan", "--store", store.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()])
        .args(["--progress", "none", "--stats-json", stats.to_str().unwrap()])
        .args(args)
        .output()
        .expect("running ditto");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "ditto scan {args:?}: {stderr}");
    stderr
}

/// A scan's `--stats-json` file.
pub fn read_stats(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("stats JSON")).expect("stats JSON parses")
}

/// The `neighborhood` of every row of a JSONL report (`ditto report --format jsonl`).
pub fn neighborhoods(jsonl: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(jsonl)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("report row is JSON");
            v["neighborhood"].as_str().expect("neighborhood field").to_string()
        })
        .collect()
}
