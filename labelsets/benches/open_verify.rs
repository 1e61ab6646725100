//! Cost of the checksums: `cargo bench -p labelsets --bench open_verify`.
//!
//! Builds a synthetic label set of `OPEN_N` entries (default 10 M) with one source per 30
//! entries (Wikipedia's ratio: 75 M chunks, 2.5 M articles) whose titles and URLs look like
//! Wikipedia's, then times, page cache warm, best of 5: `LabelSet::open` (header + every
//! section but the entries), `LabelSet::open_verified` (what a scan or crawl runs: every
//! section), each section's hash alone, and `LabelSet::verify` (the structural half of
//! `ditto labelset check`). Prints the extrapolation to 75 M entries from the measured hash
//! speed. A cold page cache adds the disk's read time for the bytes hashed.

use std::time::Instant;

use detector::{Normalization, Sha1Digest};
use labelsets::{filter, Kind, LabelSet, LabelSetBuilder, SectionId};

fn entries() -> u64 {
    std::env::var("OPEN_N").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000)
}
const PER_SOURCE: u64 = 30;
const ROUNDS: usize = 5;

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn digest(i: u64) -> Sha1Digest {
    let mut d = [0u8; 20];
    for (j, part) in d.chunks_mut(8).enumerate() {
        part.copy_from_slice(&splitmix64(i * 3 + j as u64).to_le_bytes()[..part.len()]);
    }
    d
}

fn best_of(mut f: impl FnMut()) -> f64 {
    (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let n = entries();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("open.dls");
    let t = Instant::now();
    let mut b = LabelSetBuilder::new("bench", Kind::Chunks, Normalization::default(), 100, "synthetic");
    let mut src = 0;
    for i in 0..n {
        if i % PER_SOURCE == 0 {
            let title = format!("Synthetic article number {i}");
            src = b.add_source(&title, &format!("https://en.wikipedia.org/wiki/{}", title.replace(' ', "_")));
        }
        b.add_digest(src, digest(i)).expect("add");
    }
    b.write(&path).expect("write");
    drop(b);
    let size = std::fs::metadata(&path).expect("stat").len();
    println!(
        "build + write of {n} entries, {} sources: {:.2} s",
        n.div_ceil(PER_SOURCE),
        t.elapsed().as_secs_f64()
    );
    println!("file size: {size} bytes ({:.1} MB)", size as f64 / 1e6);

    let set = LabelSet::open_verified(&path).expect("open");
    let h = set.header().clone();
    // Warm the page cache, as the second of two runs would find it.
    set.verify_checksums().expect("checksums");

    let open = best_of(|| drop(LabelSet::open(&path).expect("open")));
    let verified = best_of(|| drop(LabelSet::open_verified(&path).expect("open_verified")));
    let all = best_of(|| set.verify_checksums().expect("checksums"));
    println!("open (header + all but entries):     {:8.2} ms", open * 1e3);
    println!("open_verified (every section, scan): {:8.2} ms", verified * 1e3);
    println!("verify_checksums (every section):    {:8.2} ms", all * 1e3);

    let mut total = 0u64;
    let mut on_open_bytes = 0u64;
    for s in SectionId::ALL {
        let len = set.check_section(s).len;
        let secs = best_of(|| assert!(set.check_section(s).ok()));
        total += len;
        if SectionId::ON_OPEN.contains(&s) {
            on_open_bytes += len;
        }
        println!(
            "  {:<15} {:>12} bytes {:8.2} ms  {:6.2} GB/s",
            s.name(),
            len,
            secs * 1e3,
            len as f64 / secs / 1e9
        );
    }
    // Effective speeds, mapping and page-table faults included (what a command pays).
    let open_speed = on_open_bytes as f64 / open / 1e9;
    let verified_speed = total as f64 / verified / 1e9;
    println!("effective: open {open_speed:.2} GB/s over {on_open_bytes} bytes, open_verified {verified_speed:.2} GB/s over {total} bytes");

    let t = Instant::now();
    set.verify().expect("verify");
    let structure = t.elapsed().as_secs_f64();
    println!(
        "verify (structure, once):           {structure:8.2} s ({:.0} ns per entry)",
        structure / n as f64 * 1e9
    );

    // 75 M entries, 2.5 M sources: the sections' sizes, and the source blob scaled by the
    // measured bytes per source.
    let big_n = 75_000_000u64;
    let big_s = 2_500_000u64;
    let blob = h.sections.source_blob.len as f64 / h.counts.sources as f64 * big_s as f64;
    let filt = filter::bytes_for(big_n, filter::BITS_PER_KEY) as f64;
    let index = ((1u64 << labelsets::format::index_bits_for(big_n)) + 1) as f64 * 4.0;
    let ents = big_n as f64 * 24.0;
    let offs = (2 * big_s + 1) as f64 * 8.0;
    let on_open = filt + index + offs + blob;
    println!(
        "at 75 M entries, 2.5 M sources: open hashes {:.0} MB -> {:.0} ms; open_verified {:.0} MB -> {:.0} ms; \
         check's structural pass ~{:.0} s",
        on_open / 1e6,
        on_open / (open_speed * 1e9) * 1e3,
        (on_open + ents) / 1e6,
        (on_open + ents) / (verified_speed * 1e9) * 1e3,
        structure / n as f64 * big_n as f64
    );
}
