//! Label-set lookup benchmark: `cargo bench -p labelsets --bench lookup`.
//!
//! Builds a label set of 10 M synthetic SHA-1-like digests (counter-based splitmix64, so any
//! present digest can be regenerated from its index), writes it to a temporary file, opens it
//! by mmap, then measures single-thread negative and positive lookups through
//! `ChunkLookup::lookup` (filter, then exact table) and the process's resident memory.

use std::hint::black_box;
use std::time::Instant;

use detector::{ChunkLookup, Normalization, Sha1Digest};
use labelsets::{filter, Kind, LabelSet, LabelSetBuilder};

const N: u64 = 10_000_000;
const QUERIES: u64 = 20_000_000;

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Digest number `i`: present for i < N, absent for i ≥ 2^40.
fn digest(i: u64) -> Sha1Digest {
    let a = splitmix64(i.wrapping_mul(3));
    let b = splitmix64(i.wrapping_mul(3) + 1);
    let c = splitmix64(i.wrapping_mul(3) + 2);
    let mut d = [0u8; 20];
    d[..8].copy_from_slice(&a.to_le_bytes());
    d[8..16].copy_from_slice(&b.to_le_bytes());
    d[16..].copy_from_slice(&c.to_le_bytes()[..4]);
    d
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bench.dls");

    let t = Instant::now();
    let mut b = LabelSetBuilder::new("bench", Kind::Chunks, Normalization::default(), 100, "synthetic");
    let src = b.add_source("synthetic", "");
    for i in 0..N {
        b.add_digest(src, digest(i)).expect("add");
    }
    let header = b.write(&path).expect("write");
    drop(b);
    let build = t.elapsed();
    let file_size = std::fs::metadata(&path).expect("stat").len();
    println!("build + write of {N} entries: {:.2} s", build.as_secs_f64());
    println!("file size: {file_size} bytes ({:.1} MiB)", mib(file_size));
    println!(
        "filter: {} bytes ({:.1} MiB), {} bits/key, k = {}, expected false positives {:.3} %",
        header.sections.filter.len,
        mib(header.sections.filter.len),
        header.filter.bits_per_key,
        header.filter.k,
        100.0 * header.filter.expected_fp_rate
    );
    println!("prefix index: 2^{} buckets, {} bytes", header.sections.index_bits, header.sections.index.len);
    let proj = filter::bytes_for(75_000_000, filter::BITS_PER_KEY);
    println!(
        "projected filter at 75 M chunks: {proj} bytes ({:.1} MB), expected false positives {:.3} %",
        proj as f64 / 1e6,
        100.0
            * filter::expected_fp_rate(
                75_000_000,
                filter::blocks_for(75_000_000, filter::BITS_PER_KEY),
                filter::K
            )
    );

    let rss_before = rss_kib();
    let t = Instant::now();
    let set = LabelSet::open(&path).expect("open");
    println!("open: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    println!("VmRSS before open: {} KiB, after open: {} KiB", rss_before, rss_kib());
    let lookup: &dyn ChunkLookup = &set;

    // Baseline: generating the query digests alone.
    let t = Instant::now();
    let mut x = 0u64;
    for i in 0..QUERIES {
        x ^= digest((1 << 40) + i)[0] as u64;
    }
    black_box(x);
    let gen = t.elapsed().as_secs_f64();

    for round in 0..2 {
        let t = Instant::now();
        let mut hits = 0u64;
        for i in 0..QUERIES {
            hits += lookup.lookup(&black_box(digest((1 << 40) + i))).is_some() as u64;
        }
        let s = t.elapsed().as_secs_f64();
        let fp = (0..2_000_000u64).filter(|i| set.may_contain(&digest((1 << 41) + i))).count();
        println!(
            "negative lookups (round {round}): {:.1} M/s ({:.1} ns each; {:.1} M/s net of {:.1} ns digest generation), \
             {hits} false hits, filter false-positive rate {:.3} %",
            QUERIES as f64 / s / 1e6,
            s / QUERIES as f64 * 1e9,
            QUERIES as f64 / (s - gen).max(1e-9) / 1e6,
            gen / QUERIES as f64 * 1e9,
            100.0 * fp as f64 / 2e6
        );
    }
    // The filter alone: from the mapping and from a heap copy, to separate page-mapping
    // effects (TLB, faults) from the filter code.
    let h = set.header().clone();
    let filt = std::fs::read(&path).expect("read")
        [h.sections.filter.offset as usize..(h.sections.filter.offset + h.sections.filter.len) as usize]
        .to_vec();
    for (name, heap) in [("mmap", false), ("heap copy", true)] {
        let t = Instant::now();
        let mut maybe = 0u64;
        for i in 0..QUERIES {
            let d = black_box(digest((1 << 40) + i));
            maybe += if heap {
                filter::may_contain(&filt, h.filter.blocks, h.filter.k, &d)
            } else {
                set.may_contain(&d)
            } as u64;
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "filter only ({name}): {:.1} M/s ({:.1} ns each), {maybe} maybe",
            QUERIES as f64 / s / 1e6,
            s / QUERIES as f64 * 1e9
        );
    }
    drop(filt);
    let positives = 5_000_000u64;
    let t = Instant::now();
    let mut found = 0u64;
    for i in 0..positives {
        let j = splitmix64(i ^ 0xabcdef) % N;
        found += lookup.lookup(&black_box(digest(j))).is_some() as u64;
    }
    let s = t.elapsed().as_secs_f64();
    assert_eq!(found, positives, "every present digest must be found");
    println!(
        "positive lookups (random): {:.2} M/s ({:.0} ns each)",
        positives as f64 / s / 1e6,
        s / positives as f64 * 1e9
    );
    println!("VmRSS after lookups: {} KiB", rss_kib());
}
