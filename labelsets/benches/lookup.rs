//! Label-set lookup benchmark: `cargo bench -p labelsets --bench lookup`.
//!
//! Builds a label set of 10 M synthetic SHA-1-like digests (counter-based splitmix64, so any
//! present digest can be regenerated from its index), writes it to a temporary file, opens it
//! by mmap, then measures single-thread negative and positive lookups through
//! `ChunkLookup::lookup` (filter, then exact table), per key and batched through
//! `ChunkLookup::lookup_many` (prefetching filter blocks, `LabelSet::lookup_many`) in batches
//! of 64 and 256, and the process's resident memory.

use std::hint::black_box;
use std::time::Instant;

use detector::{ChunkLookup, Normalization, Sha1Digest};
use labelsets::{filter, Kind, LabelSet, LabelSetBuilder};

/// Entries in the synthetic label set: `LOOKUP_N` (default 10 M; 75 M is the paper's
/// Wikipedia scale).
fn entries() -> u64 {
    std::env::var("LOOKUP_N").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000)
}
const QUERIES: u64 = 20_000_000;

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Digest number `i`: present for i < entries(), absent for i ≥ 2^40.
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

/// Queries are generated this many at a time (the largest batch measured).
const BATCH_BUF: usize = 256;
const ROUNDS: usize = 5;

/// `buf[k]` = absent digest number `first + k`.
fn fill(buf: &mut [Sha1Digest], first: u64) {
    for (k, d) in buf.iter_mut().enumerate() {
        *d = digest(first + k as u64);
    }
}

#[derive(Clone, Copy)]
enum Mode {
    PerKey,
    Batched(usize),
}

impl Mode {
    fn name(self) -> String {
        match self {
            Mode::PerKey => "per key:".into(),
            Mode::Batched(n) => format!("batch {n}:"),
        }
    }
}

/// `QUERIES` absent digests through `lookup` (per key) or `lookup_many` (batches of n).
/// Returns the false hits (filter false positives are resolved by the exact table, so 0).
fn negatives(lookup: &dyn ChunkLookup, mode: Mode) -> u64 {
    let mut buf = vec![[0u8; 20]; BATCH_BUF];
    let mut out = Vec::with_capacity(BATCH_BUF);
    let mut hits = 0u64;
    for start in (0..QUERIES).step_by(BATCH_BUF) {
        fill(&mut buf, (1 << 40) + start);
        let buf = black_box(&buf);
        match mode {
            Mode::PerKey => {
                for d in buf {
                    hits += lookup.lookup(d).is_some() as u64;
                }
            }
            Mode::Batched(n) => {
                for group in buf.chunks(n) {
                    lookup.lookup_many(group, &mut out);
                    hits += out.iter().filter(|o| o.is_some()).count() as u64;
                }
            }
        }
    }
    hits
}

/// Best (shortest) time of `rounds` runs of `f`, with the last run's result.
fn best_of<T>(rounds: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..rounds {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    (best, last.expect("at least one round"))
}

/// `VmRSS` of this process in KiB.
fn rss_kib() -> u64 {
    status_kib("VmRSS:")
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// "VmRSS N KiB (anonymous A KiB, file-backed F KiB)": mapped label-set pages count as
/// file-backed (page cache, shared and reclaimable).
fn rss_line() -> String {
    format!(
        "{} KiB (anonymous {} KiB, file-backed {} KiB)",
        rss_kib(),
        status_kib("RssAnon:"),
        status_kib("RssFile:")
    )
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
    for i in 0..entries() {
        b.add_digest(src, digest(i)).expect("add");
    }
    let header = b.write(&path).expect("write");
    drop(b);
    let build = t.elapsed();
    let file_size = std::fs::metadata(&path).expect("stat").len();
    println!("build + write of {} entries: {:.2} s", entries(), build.as_secs_f64());
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
    println!("VmRSS before open: {} KiB, after open: {}", rss_before, rss_line());
    let lookup: &dyn ChunkLookup = &set;

    // Negative lookups, per key and batched. Queries are generated BATCH_BUF at a time into
    // a reused buffer for every mode, so all modes pay the same generation cost; the
    // baseline row measures that cost alone, and "net" subtracts it.
    let gen = best_of(3, || {
        let mut buf = vec![[0u8; 20]; BATCH_BUF];
        let mut x = 0u64;
        for start in (0..QUERIES).step_by(BATCH_BUF) {
            fill(&mut buf, (1 << 40) + start);
            x ^= black_box(&buf)[0][0] as u64;
        }
        black_box(x);
    });
    println!("query generation alone: {:.1} ns/key", gen.0 / QUERIES as f64 * 1e9);
    for mode in [Mode::PerKey, Mode::Batched(64), Mode::Batched(256)] {
        let (s, hits) = best_of(ROUNDS, || negatives(lookup, mode));
        println!(
            "negative lookups, {:<14} {:6.1} M/s ({:5.1} ns each; net of generation {:6.1} M/s, {:5.1} ns), \
             {} false hits, best of {ROUNDS}",
            mode.name(),
            QUERIES as f64 / s / 1e6,
            s / QUERIES as f64 * 1e9,
            QUERIES as f64 / (s - gen.0).max(1e-9) / 1e6,
            (s - gen.0) / QUERIES as f64 * 1e9,
            hits
        );
    }
    // The previous version of this bench: each digest generated inline in the timed loop
    // (the generation's dependency chains then limit how many lookups overlap).
    let (s, hits) = best_of(ROUNDS, || {
        let mut hits = 0u64;
        for i in 0..QUERIES {
            hits += lookup.lookup(&black_box(digest((1 << 40) + i))).is_some() as u64;
        }
        hits
    });
    println!(
        "negative lookups, per key, digest generated inline: {:.1} M/s ({:.1} ns each), {hits} false hits",
        QUERIES as f64 / s / 1e6,
        s / QUERIES as f64 * 1e9
    );
    println!("VmRSS after negative lookups: {}", rss_line());
    let fp = (0..2_000_000u64).filter(|i| set.may_contain(&digest((1 << 41) + i))).count();
    println!("filter false-positive rate (2 M absent keys): {:.3} %", 100.0 * fp as f64 / 2e6);
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
        let j = splitmix64(i ^ 0xabcdef) % entries();
        found += lookup.lookup(&black_box(digest(j))).is_some() as u64;
    }
    let s = t.elapsed().as_secs_f64();
    assert_eq!(found, positives, "every present digest must be found");
    println!(
        "positive lookups (random), per key:   {:.2} M/s ({:.0} ns each)",
        positives as f64 / s / 1e6,
        s / positives as f64 * 1e9
    );
    let t = Instant::now();
    let mut found = 0u64;
    let mut buf = vec![[0u8; 20]; 256];
    let mut out = Vec::with_capacity(256);
    for start in (0..positives).step_by(256) {
        for (k, d) in buf.iter_mut().enumerate() {
            *d = digest(splitmix64((start + k as u64) ^ 0xabcdef) % entries());
        }
        lookup.lookup_many(black_box(&buf), &mut out);
        found += out.iter().filter(|o| o.is_some()).count() as u64;
    }
    let s = t.elapsed().as_secs_f64();
    assert!(found >= positives, "every present digest must be found");
    println!(
        "positive lookups (random), batch 256: {:.2} M/s ({:.0} ns each)",
        found as f64 / s / 1e6,
        s / found as f64 * 1e9
    );
    println!("VmRSS after all lookups (positives touch the whole exact table): {}", rss_line());
}
