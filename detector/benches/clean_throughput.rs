//! Cleaning throughput vs. html5ever's bare tokenizer (one thread, best of 5 passes).
//!
//! `cargo bench -p detector --bench clean_throughput`. Corpora (read into memory first):
//! - wikipedia: `/work/shared/data/wikipedia/articles/*.html` (text-heavy, simple markup);
//! - debian-docs: every `*.html` under `/work/shared/data/reuse/site` (markup-heavy Sphinx
//!   and DocBook pages).
//!
//! Rows: (a) bare tokenizer with a do-nothing sink (switching to raw text for script/style
//! like ours, so both tokenize the same way); (b) `clean` without links; (c) `clean` with
//! links; (d) `clean` without links + `fingerprint` with the default normalization.
//!
//! For profiling one row, set `CLEAN_BENCH_ONLY=CORPUS:ROW` (e.g. `wikipedia:d`): only that
//! row runs, 50 passes.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use detector::{clean, fingerprint, CleanOptions, Normalization};

const PASSES: usize = 5;
const PROFILE_PASSES: usize = 50;

/// The bare-tokenizer baseline (shared with the other throughput bench).
fn tokenize(body: &[u8]) -> usize {
    detector::clean::baseline::tokenize_only(body)
}

struct Page {
    url: String,
    body: Vec<u8>,
}

fn load(root: &Path, only_top: bool, url_prefix: &str) -> Vec<Page> {
    fn walk(dir: &Path, recurse: bool, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if recurse {
                    walk(&p, recurse, out);
                }
            } else if p.extension().is_some_and(|e| e == "html") {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(root, !only_top, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let body = std::fs::read(&p).ok()?;
            let rel = p.strip_prefix(root).ok()?.to_string_lossy().into_owned();
            Some(Page { url: format!("{url_prefix}{rel}"), body })
        })
        .collect()
}

/// Best-of-`PASSES` throughput of `f` over the corpus, in MB/s (10^6 bytes).
fn mbps(pages: &[Page], passes: usize, mut f: impl FnMut(&Page) -> usize) -> f64 {
    let bytes: usize = pages.iter().map(|p| p.body.len()).sum();
    let mut best = f64::INFINITY;
    for _ in 0..passes {
        let t = Instant::now();
        let mut sink = 0usize;
        for p in pages {
            sink = sink.wrapping_add(f(black_box(p)));
        }
        black_box(sink);
        best = best.min(t.elapsed().as_secs_f64());
    }
    bytes as f64 / 1e6 / best
}

fn main() {
    let data = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data"));
    let corpora = [
        ("wikipedia", load(&data.join("wikipedia/articles"), true, "https://en.wikipedia.org/wiki/")),
        ("debian-docs", load(&data.join("reuse/site"), false, "http://")),
    ];
    let no_links = CleanOptions { extract_links: false };
    let links = CleanOptions { extract_links: true };
    let norm = Normalization::default();
    let only = std::env::var("CLEAN_BENCH_ONLY").ok();
    for (name, pages) in &corpora {
        if pages.is_empty() {
            println!("{name}: no data under {}", data.display());
            continue;
        }
        let bytes: usize = pages.iter().map(|p| p.body.len()).sum();
        println!("{name}: {} pages, {:.1} MB", pages.len(), bytes as f64 / 1e6);
        let a_row = |p: &Page| tokenize(&p.body);
        let b_row = |p: &Page| clean(&p.body, Some("text/html"), Some(&p.url), &no_links).blocks.len();
        let c_row = |p: &Page| clean(&p.body, Some("text/html"), Some(&p.url), &links).links.len();
        let d_row = |p: &Page| {
            let doc = clean(&p.body, Some("text/html"), Some(&p.url), &no_links);
            fingerprint(&p.body, &doc.blocks, &norm).chunks.len()
        };
        if let Some(row) = only.as_deref().and_then(|o| o.strip_prefix(&format!("{name}:"))) {
            let r = match row {
                "a" => mbps(pages, PROFILE_PASSES, a_row),
                "b" => mbps(pages, PROFILE_PASSES, b_row),
                "c" => mbps(pages, PROFILE_PASSES, c_row),
                _ => mbps(pages, PROFILE_PASSES, d_row),
            };
            println!("  ({row}) {r:.1} MB/s");
            continue;
        } else if only.is_some() {
            continue;
        }
        let a = mbps(pages, PASSES, a_row);
        let b = mbps(pages, PASSES, b_row);
        let c = mbps(pages, PASSES, c_row);
        let d = mbps(pages, PASSES, d_row);
        println!("  (a) bare tokenizer          {a:8.1} MB/s");
        println!("  (b) clean, links off        {b:8.1} MB/s  {:5.1}% of (a)", 100.0 * b / a);
        println!("  (c) clean, links on         {c:8.1} MB/s  {:5.1}% of (a)", 100.0 * c / a);
        println!("  (d) clean + fingerprint     {d:8.1} MB/s  {:5.1}% of (a)", 100.0 * d / a);
        // For reading (d): the file hash alone (SHA-1 of every body) already costs this much,
        // so (d) can be at most 1 / (1/(b) + 1/(s)) even with free normalization.
        let s = mbps(pages, PASSES, |p| detector::fingerprint::sha1(&p.body)[0] as usize);
        println!(
            "  (s) SHA-1 of body only      {s:8.1} MB/s  (ceiling for (d): {:.1} MB/s)",
            1.0 / (1.0 / b + 1.0 / s)
        );
    }
}
