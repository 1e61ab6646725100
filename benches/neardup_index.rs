//! Manku permuted-table index (`detector::neardup`): build time, memory and lookups/s at 1M
//! and 10M random 64-bit keys, for k = 3 with 4 blocks (4 tables) and 5 blocks (10 tables).
//!
//! `cargo bench --bench neardup_index` (optionally `-- 1000000` for the sizes to run).
//! Queries: half are indexed keys with 0–3 bits flipped (hits), half random (misses).
//! Brute force over the same keys is timed on a sample of queries for comparison.
//!
//! Then live use, as `ditto scan` and `ditto crawl` mark near duplicates
//! (`LiveNearDups::check_insert`): from an empty index (k = 3, 4 blocks), every key is looked
//! up, then inserted; the figure is the mean time per page over all of them, and per page over
//! the last 100,000.

use std::time::Instant;

use detector::neardup::{IndexConfig, NearDupIndex};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Live use: query then insert each key, from an empty index.
fn live(n: usize) {
    let mut r = Rng(0x11fe ^ n as u64);
    let mut idx = NearDupIndex::build(IndexConfig::new(3), Vec::new()).expect("valid config");
    let last = n.saturating_sub(100_000);
    let (start, mut tail) = (Instant::now(), None);
    let mut found = 0usize;
    for i in 0..n {
        if i == last {
            tail = Some(Instant::now());
        }
        let key = r.next();
        found += idx.query(key).len();
        idx.insert(key, i as u32);
    }
    let all = start.elapsed().as_secs_f64();
    let tail = tail.map_or(all, |t| t.elapsed().as_secs_f64());
    std::hint::black_box(found);
    println!(
        "live, {n} keys: {:.2} s, {:.2} µs per query + insert ({:.2} µs over the last {}), {} levels",
        all,
        all * 1e6 / n as f64,
        tail * 1e6 / (n - last) as f64,
        n - last,
        idx.levels()
    );
}

fn main() {
    let sizes: Vec<usize> = {
        let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if args.is_empty() {
            vec![1_000_000, 10_000_000]
        } else {
            args
        }
    };
    println!(
        "{:>10} {:>2} {:>6} {:>6} {:>9} {:>10} {:>12} {:>12} {:>10}",
        "keys", "k", "blocks", "tables", "build s", "heap MiB", "lookups/s", "hits/query", "brute/s"
    );
    for &n in &sizes {
        let mut r = Rng(0x5eed ^ n as u64);
        let items: Vec<(u64, u32)> = (0..n as u32).map(|i| (r.next(), i)).collect();
        let queries: Vec<u64> = (0..200_000)
            .map(|i| {
                if i % 2 == 0 {
                    let mut q = items[(r.next() % n as u64) as usize].0;
                    for _ in 0..(r.next() % 4) {
                        q ^= 1 << (r.next() % 64);
                    }
                    q
                } else {
                    r.next()
                }
            })
            .collect();
        // Brute force on a few queries (the cost a lookup without the index pays).
        let keys: Vec<u64> = items.iter().map(|x| x.0).collect();
        let t = Instant::now();
        let mut hits = 0usize;
        for &q in queries.iter().take(20) {
            hits += keys.iter().filter(|&&x| (x ^ q).count_ones() <= 3).count();
        }
        let brute = 20.0 / t.elapsed().as_secs_f64();
        std::hint::black_box(hits);
        drop(keys);
        for blocks in [4u32, 5] {
            let cfg = IndexConfig { k: 3, blocks };
            let t = Instant::now();
            let idx = match NearDupIndex::build(cfg, items.clone()) {
                Ok(i) => i,
                Err(e) => {
                    eprintln!("{e}");
                    continue;
                }
            };
            let build = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let mut found = 0usize;
            for &q in &queries {
                found += idx.query(q).len();
            }
            let secs = t.elapsed().as_secs_f64();
            println!(
                "{:>10} {:>2} {:>6} {:>6} {:>9.2} {:>10.0} {:>12.0} {:>12.3} {:>10.1}",
                n,
                cfg.k,
                blocks,
                idx.tables(),
                build,
                idx.heap_bytes() as f64 / (1 << 20) as f64,
                queries.len() as f64 / secs,
                found as f64 / queries.len() as f64,
                brute
            );
        }
    }
    for &n in &sizes {
        live(n);
    }
}
