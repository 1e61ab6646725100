//! Memory and speed of the frontier's in-memory seen set (`CompactSeenSet`):
//! `cargo bench -p store --bench seen_set` (env N = URLs, default 10 000 000).

use std::time::Instant;

use store::{url_fingerprint, CompactSeenSet};

fn main() {
    let n: u64 = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let mut set = CompactSeenSet::default();
    let start = Instant::now();
    for i in 0..n {
        set.insert(url_fingerprint(&format!("http://h{}.example/p/{i}", i % 1000)));
    }
    let insert_s = start.elapsed().as_secs_f64();
    let bytes = set.heap_bytes();
    let start = Instant::now();
    let mut hits = 0u64;
    for i in 0..n {
        // Half present, half absent.
        let url =
            if i % 2 == 0 { format!("http://h{}.example/p/{i}", i % 1000) } else { format!("http://x/{i}") };
        hits += set.contains(url_fingerprint(&url)) as u64;
    }
    let lookup_s = start.elapsed().as_secs_f64();
    println!("seen_set: {n} URLs");
    println!("  heap bytes          {bytes} ({:.2} B/URL)", bytes as f64 / n as f64);
    println!("  inserts             {:.2} M/s (incl. URL hashing)", n as f64 / insert_s / 1e6);
    println!("  lookups             {:.2} M/s (incl. URL hashing), {hits} hits", n as f64 / lookup_s / 1e6);
}
