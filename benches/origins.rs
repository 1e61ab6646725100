//! Origin detection throughput (pages/s on one core) over the shared Wikipedia articles
//! followed by pages copying segments of them, for the exact reference and the fixed-memory
//! modes at 5 % of the exact table. `cargo bench --bench origins`.

use std::time::Instant;

use detector::origins::{Estimation, Eviction, OriginConfig, OriginDetector, Selection, K};

fn texts() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/wikipedia/articles");
    let mut paths: Vec<_> =
        std::fs::read_dir(&dir).expect("shared articles").map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut out: Vec<String> = paths
        .iter()
        .map(|p| {
            let doc =
                detector::clean(&std::fs::read(p).unwrap(), Some("text/html"), None, &Default::default());
            doc.blocks.join(" ")
        })
        .collect();
    // Copying pages: halves of two earlier articles each, with text of their own.
    let n = out.len();
    for i in 0..n {
        let a: Vec<&str> = out[i].split(' ').collect();
        let b: Vec<&str> = out[(i * 7 + 3) % n].split(' ').collect();
        let own: Vec<String> = (0..50).map(|j| format!("own{i}x{j}")).collect();
        out.push(format!("{} {} {}", a[..a.len() / 2].join(" "), own.join(" "), b[b.len() / 2..].join(" ")));
    }
    out
}

fn main() {
    let texts = texts();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut exact = OriginDetector::exact(K);
    let t = Instant::now();
    for (i, x) in texts.iter().enumerate() {
        exact.process(i as u32, x);
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "exact (All, NB, unbounded): {} pages, {:.1} MB text in {:.3} s: {:.0} pages/s, {:.1} MB/s; table {} bytes",
        texts.len(),
        bytes as f64 / 1e6,
        secs,
        texts.len() as f64 / secs,
        bytes as f64 / 1e6 / secs,
        exact.memory_bytes()
    );
    let mem = exact.memory_bytes() / 20;
    for (name, selection, eviction, estimation) in [
        ("NHs+Lucky+BE", Selection::Nhs, Eviction::Lucky, Estimation::Be),
        ("All+LRU+NB", Selection::All, Eviction::Lru, Estimation::Nb),
    ] {
        let cfg = OriginConfig { selection, eviction, estimation, ..Default::default() };
        let mut det = OriginDetector::new(cfg, mem);
        let t = Instant::now();
        for (i, x) in texts.iter().enumerate() {
            det.process(i as u32, x);
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{name} at 5 % ({} bytes): {:.0} pages/s, {:.1} MB/s; {} of {} shingles selected, {} evictions",
            det.memory_bytes(),
            texts.len() as f64 / secs,
            bytes as f64 / 1e6 / secs,
            det.selected_total,
            det.shingles_total,
            det.evictions()
        );
    }
}
