//! What the shingle sketch costs the scan's SimHash word pass (issue 22): over the same
//! cleaned pages, one thread, passes interleaved so the machine's speed swings hit every
//! variant alike:
//! - (A) the word pass without the sketch (`detector::fingerprint::scan::simhash_of_blocks`);
//! - (B) the same pass with it (`simhash_and_sketch_of_blocks`, what the scan runs);
//! - (C) the whole fingerprint stage as the scan runs it (`fingerprint_for_scan`: chunk and
//!   text SHA-1s, SimHash, sketch; every chunk SHA-1 computed).
//!
//! Prints ns per long word (the words the pass hashes) for A and B, B − A per pass (min and
//! median), and B − A as a share of C and per MB of HTML.
//!
//! `cargo build --release --example sketch_word_pass`, then
//! `nice -n -15 taskset -c 1 target/release/examples/sketch_word_pass [--passes N] INPUT…`
//! (INPUT: a WARC file, or a directory of `*.html` files).

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

#[path = "common/html_bodies.rs"]
mod html_bodies;
use detector::fingerprint::scan::{fingerprint_for_scan, simhash_and_sketch_of_blocks, simhash_of_blocks};
use detector::{CleanOptions, CleanedDoc, Normalization};
use html_bodies::html_bodies;

fn main() {
    let mut passes = 15usize;
    let mut inputs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--passes" {
            passes = args.next().and_then(|v| v.parse().ok()).expect("--passes N");
        } else {
            inputs.push(a);
        }
    }
    assert!(!inputs.is_empty(), "usage: sketch_word_pass [--passes N] INPUT…");
    for input in inputs {
        let bodies = html_bodies(Path::new(&input));
        let html: usize = bodies.iter().map(Vec::len).sum();
        let opts = CleanOptions { extract_links: false };
        let docs: Vec<CleanedDoc> =
            bodies.iter().map(|b| detector::clean(b, Some("text/html"), None, &opts)).collect();
        let long_words: usize = docs
            .iter()
            .flat_map(|d| d.blocks.iter())
            .map(|b| detector::shingles::words(b).filter(|w| w.chars().nth(3).is_some()).count())
            .sum();
        let norm = Normalization::default();
        let time = |f: &dyn Fn(&CleanedDoc)| {
            let t = Instant::now();
            docs.iter().for_each(f);
            t.elapsed().as_secs_f64()
        };
        let (mut a, mut b, mut c, mut diff) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for pass in 0..passes {
            // Alternate which of A and B goes first.
            let (ta, tb) = if pass % 2 == 0 {
                let ta = time(&|d| {
                    black_box(simhash_of_blocks(&d.blocks));
                });
                (
                    ta,
                    time(&|d| {
                        black_box(simhash_and_sketch_of_blocks(&d.blocks));
                    }),
                )
            } else {
                let tb = time(&|d| {
                    black_box(simhash_and_sketch_of_blocks(&d.blocks));
                });
                (
                    time(&|d| {
                        black_box(simhash_of_blocks(&d.blocks));
                    }),
                    tb,
                )
            };
            let tc = time(&|d| {
                black_box(fingerprint_for_scan([0; 20], &d.blocks, &norm, |_| true));
            });
            a.push(ta);
            b.push(tb);
            c.push(tc);
            diff.push(tb - ta);
        }
        let sorted = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            v
        };
        let (a, b, c, diff) = (sorted(&a), sorted(&b), sorted(&c), sorted(&diff));
        let med = |v: &[f64]| v[v.len() / 2];
        let ns = |s: f64| s * 1e9 / long_words.max(1) as f64;
        println!(
            "{input}: {} pages, {:.2} MB HTML, {long_words} long words; {passes} passes",
            docs.len(),
            html as f64 / 1e6
        );
        println!(
            "  (A) word pass, SimHash only:     min {:.2} ns/long word, median {:.2}",
            ns(a[0]),
            ns(med(&a))
        );
        println!(
            "  (B) word pass, SimHash + sketch: min {:.2} ns/long word, median {:.2}",
            ns(b[0]),
            ns(med(&b))
        );
        println!(
            "  (C) fingerprint stage as the scan: min {:.3} s ({:.2} ms per MB HTML), median {:.3} s",
            c[0],
            c[0] * 1e3 / (html as f64 / 1e6),
            med(&c)
        );
        println!(
            "  B − A per pass: min {:+.2} ns/long word, median {:+.2} ({:+.3} ms per MB HTML; {:+.1} % of A, {:+.1} % of C, medians)",
            ns(diff[0]),
            ns(med(&diff)),
            med(&diff) * 1e3 / (html as f64 / 1e6),
            100.0 * med(&diff) / med(&a),
            100.0 * med(&diff) / med(&c)
        );
    }
}
