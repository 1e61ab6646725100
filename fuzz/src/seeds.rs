//! Seed corpora from `../shared/data` (the checkout's sibling), one set per target.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Target;

/// `../shared/data` from the repository root.
pub fn shared_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

/// At most `max` files under `dir` ending in one of `exts`, each cut to `cap` bytes.
fn read_some(dir: &Path, exts: &[&str], max: usize, cap: usize) -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    files_under(dir, &mut paths);
    paths
        .into_iter()
        .filter(|p| exts.iter().any(|e| p.to_string_lossy().ends_with(e)))
        .take(max)
        .filter_map(|p| {
            let mut b = std::fs::read(p).ok()?;
            b.truncate(cap);
            Some(b)
        })
        .collect()
}

/// The robots.txt cases' JSON lines (`robots_txt`, `url` fields).
fn robots_cases(data: &Path) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for name in ["google-robotstxt-cases.jsonl", "google-robotstxt-other.jsonl"] {
        let Ok(text) = std::fs::read_to_string(data.join("robots").join(name)) else { continue };
        out.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
    }
    out
}

/// Seeds for `target`; `scratch` holds what has to be built first (the label set).
pub fn seeds(target: Target, scratch: &Path) -> Vec<Vec<u8>> {
    let data = shared_data();
    match target {
        Target::Warc => {
            let mut s = read_some(&data.join("warc/valid"), &[".warc", ".warc.gz", ".gz"], 64, 128 << 10);
            s.extend(read_some(&data.join("warc/broken"), &[""], 64, 128 << 10));
            // The big files' first records.
            s.extend(read_some(&data.join("warc/big"), &[".warc.gz"], 4, 256 << 10));
            s
        }
        Target::Html => {
            let mut s = read_some(&data.join("wikipedia/articles"), &[".html"], 60, 64 << 10);
            s.extend(read_some(&data.join("reuse/site"), &[".html"], 60, 64 << 10));
            // The hostile shapes, small: many attributes, deep nesting.
            let attrs: String = (0..300).map(|k| format!(" a{k}")).collect();
            s.push(format!("<p>x</p><div{attrs}><a href=/y{attrs}>y</a>").into_bytes());
            s.push(format!("{}<p>deep</p>", "<div><li>".repeat(400)).into_bytes());
            s
        }
        Target::Robots => {
            let mut s: Vec<Vec<u8>> = robots_cases(&data)
                .iter()
                .filter_map(|c| c["robots_txt"].as_str().map(|t| t.as_bytes().to_vec()))
                .collect();
            s.sort();
            s.dedup();
            s
        }
        Target::Url => {
            let mut s: Vec<Vec<u8>> = robots_cases(&data)
                .iter()
                .filter_map(|c| c["url"].as_str().filter(|u| !u.is_empty()).map(|u| u.as_bytes().to_vec()))
                .collect();
            // hrefs of a few articles, each with the article as base.
            for page in read_some(&data.join("wikipedia/articles"), &[".html"], 10, 1 << 20) {
                let text = String::from_utf8_lossy(&page);
                for href in text.split("href=\"").skip(1).take(40) {
                    let h = href.split('"').next().unwrap_or("");
                    s.push(format!("{h}\nhttps://en.wikipedia.org/wiki/Article").into_bytes());
                }
            }
            s.sort();
            s.dedup();
            s
        }
        Target::Labelset => labelset_seed(&data, scratch).into_iter().collect(),
        Target::Store => store_seeds(&data),
    }
}

/// A small label set built from ten shared articles (the format's every section present).
fn labelset_seed(data: &Path, scratch: &Path) -> Option<Vec<u8>> {
    let dir = scratch.join("labelset-seed");
    std::fs::create_dir_all(&dir).ok()?;
    let mut articles = Vec::new();
    files_under(&data.join("wikipedia/articles"), &mut articles);
    for a in articles.iter().filter(|p| p.extension().is_some_and(|e| e == "html")).take(10) {
        std::fs::copy(a, dir.join(a.file_name()?)).ok()?;
    }
    let mut b = labelsets::LabelSetBuilder::new(
        "fuzz",
        labelsets::Kind::Chunks,
        labelsets::Normalization::default(),
        100,
        "articles",
    );
    labelsets::readers::read_directory(&dir, Some("https://en.wikipedia.org/wiki/"), &mut b).ok()?;
    let out = scratch.join("seed.dls");
    b.write(&out).ok()?;
    std::fs::read(out).ok()
}

/// Page records, frontier entries and stored texts as the store writes them.
fn store_seeds(data: &Path) -> Vec<Vec<u8>> {
    let mut s = Vec::new();
    let record = serde_json::json!({
        "url": "http://a.test/p.html", "fetch_time": 1390842758, "status": 200,
        "file_hash": "da39a3ee5e6b4b0d3255bfef95601890afd80709", "chunks": 36, "labeled_chunks": 18,
        "stop_chunks": 1, "contains": 0.5, "file_match": 3,
        "sources": [{"source": 1, "chunks": 12}],
        "evidence": [], "simhash": 12345, "text_hash": "00", "shingles": 7,
        "near_duplicate_of": "http://a.test/q.html"
    });
    let mut v = vec![0u8];
    v.extend(serde_json::to_vec(&record).unwrap_or_default());
    s.push(v);
    let entry = serde_json::json!({"url": "http://a.test/", "host_key": "test,a,", "depth": 2, "priority": 5, "hops": 1});
    let mut v = vec![1u8];
    v.extend(serde_json::to_vec(&entry).unwrap_or_default());
    s.push(v);
    for page in read_some(&data.join("wikipedia/articles"), &[".html"], 4, 64 << 10) {
        let d = detector::clean(&page, Some("text/html"), None, &detector::CleanOptions::default());
        let json = serde_json::to_vec(&d.blocks.to_vec()).unwrap_or_default();
        let mut enc = flate2::write::DeflateEncoder::new(vec![2u8], flate2::Compression::fast());
        if enc.write_all(&json).is_ok() {
            if let Ok(v) = enc.finish() {
                s.push(v);
            }
        }
    }
    s
}
