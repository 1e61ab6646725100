//! The cost of reading a page's directives (`crawler::directives`), which the crawl loop does
//! for every HTML page it hands on (issue 38): the HTML files under a folder, each read
//! `ROUNDS` times; prints microseconds per page and MB/s of the bytes scanned.
//!
//! `cargo run --release -p crawler --example directives_cost -- ../shared/data`

use std::path::{Path, PathBuf};
use std::time::Instant;

const ROUNDS: usize = 20;

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            html_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "html" || x == "htm") {
            out.push(p);
        }
    }
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "../shared/data".into());
    let mut files = Vec::new();
    html_files(Path::new(&dir), &mut files);
    let pages: Vec<Vec<u8>> = files.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    if pages.is_empty() {
        eprintln!("no HTML files under {dir}");
        std::process::exit(2);
    }
    let bytes: usize = pages.iter().map(|p| p.len().min(crawler::directives::HEAD_SCAN_BYTES)).sum();
    let mut found = 0usize;
    let start = Instant::now();
    for _ in 0..ROUNDS {
        for p in &pages {
            let d = crawler::directives::directives(["noarchive"], Some(p), "ditto");
            found += usize::from(!d.is_empty());
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let n = (pages.len() * ROUNDS) as f64;
    println!(
        "{} pages ({} KiB at most scanned each round): {:.2} µs/page, {:.0} MB/s of bytes up to the cap; {} with directives",
        pages.len(),
        bytes / 1024,
        secs * 1e6 / n,
        (bytes * ROUNDS) as f64 / secs / 1e6,
        found / ROUNDS
    );
}
