//! Cleaning time on hostile markup (issue 26): one tag of N distinct attributes, bare
//! html5ever against `clean` (whose guard passes at most `MAX_ATTRIBUTES_PER_TAG` attributes
//! per tag to the tokenizer), the guard's worst case (a page made only of tags at the cap),
//! deep nesting, and the guard's share of cleaning on ordinary pages.
//!
//! `cargo bench -p detector --bench hostile_markup`. One thread, best of 3 runs per row
//! (the bare tokenizer's quadratic rows run once).

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use detector::clean::baseline::{guard_only, tokenize_only};
use detector::{clean, CleanOptions, MAX_ATTRIBUTES_PER_TAG};

/// `<div a00000000 a00000001 …>` with `n` attributes between two paragraphs (about
/// 10 bytes per attribute, as in the issue: 500,000 make 4.9 MB).
fn one_tag(n: usize) -> String {
    let mut s = String::from("<html><body><p>before</p><div");
    for k in 0..n {
        s.push_str(&format!(" a{k:08}"));
    }
    s.push_str("><p>after</p></body></html>");
    s
}

/// About `bytes` of tags with exactly the cap's attributes each: the most tokenizer work
/// the guard lets through per byte.
fn tags_at_the_cap(bytes: usize) -> String {
    let mut tag = String::from("<i");
    for k in 0..MAX_ATTRIBUTES_PER_TAG {
        tag.push_str(&format!(" b{k}"));
    }
    tag.push_str(">x</i>");
    tag.repeat(bytes / tag.len() + 1)
}

fn secs(runs: usize, mut f: impl FnMut() -> usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn clean_secs(page: &str) -> f64 {
    let opts = CleanOptions::default();
    secs(3, || clean(page.as_bytes(), Some("text/html"), Some("http://h.test/"), &opts).blocks.len())
}

fn main() {
    println!("one tag of N distinct attributes (cap {MAX_ATTRIBUTES_PER_TAG} per tag):");
    println!("  {:>8} {:>9} {:>14} {:>14}", "N", "MB", "bare html5ever", "clean");
    for n in [25_000, 50_000, 100_000, 200_000, 500_000] {
        let page = one_tag(n);
        // Bare: N²/2 comparisons; beyond 50k it takes minutes (the issue: 162 s at 500k).
        let bare = if n <= 50_000 {
            format!("{:.3} s", secs(1, || tokenize_only(page.as_bytes())))
        } else {
            "(skipped)".to_string()
        };
        println!("  {n:>8} {:>9.2} {bare:>14} {:>12.4} s", page.len() as f64 / 1e6, clean_secs(&page));
    }
    for mb in [2usize, 5] {
        let page = tags_at_the_cap(mb << 20);
        println!(
            "tags of {MAX_ATTRIBUTES_PER_TAG} attributes only, {:.1} MB: clean {:.3} s",
            page.len() as f64 / 1e6,
            clean_secs(&page)
        );
    }
    let depth = 500_000;
    let nested = format!("{}<p>deep</p>{}", "<div><ul><li>".repeat(depth), "</li></ul></div>".repeat(depth));
    println!(
        "{depth} nested div/ul/li, {:.1} MB: clean {:.3} s",
        nested.len() as f64 / 1e6,
        clean_secs(&nested)
    );

    // The guard's share of cleaning on ordinary pages.
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/wikipedia/articles"));
    let pages: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "html"))
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    if pages.is_empty() {
        println!("wikipedia: no data under {}", dir.display());
        return;
    }
    let bytes: usize = pages.iter().map(String::len).sum();
    let opts = CleanOptions { extract_links: false };
    let guard = secs(5, || pages.iter().map(|p| guard_only(p) as usize).sum());
    let cleaning = secs(5, || {
        pages.iter().map(|p| clean(p.as_bytes(), Some("text/html"), None, &opts).blocks.len()).sum()
    });
    println!(
        "wikipedia, {} pages, {:.1} MB: guard alone {:.0} MB/s, clean (guard included) {:.0} MB/s: guard = {:.1}% of clean time",
        pages.len(),
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / guard,
        bytes as f64 / 1e6 / cleaning,
        100.0 * guard / cleaning
    );
}
