//! Open a built label set and measure it: time to open (and to open with every checksum
//! verified), then single-thread negative and positive lookups per second, per key
//! (`LabelSet::lookup`) and batched (`LabelSet::lookup_many`, 256 a batch).
//!
//! ```text
//! cargo run --release -p labelsets --example lookup_file -- FILE.dls [QUERIES]
//! ```
//! Positive queries are entries of the file (every `len / QUERIES`-th, visited in a shuffled
//! order); negative ones are splitmix64 digests (absent but for a 2^-100 chance).

use std::hint::black_box;
use std::time::Instant;

use labelsets::{LabelSet, Sha1Digest};

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn random_digest(i: u64) -> Sha1Digest {
    let mut d = [0u8; 20];
    d[..8].copy_from_slice(&splitmix64(3 * i).to_le_bytes());
    d[8..16].copy_from_slice(&splitmix64(3 * i + 1).to_le_bytes());
    d[16..].copy_from_slice(&splitmix64(3 * i + 2).to_le_bytes()[..4]);
    d
}

fn rate(what: &str, queries: &[Sha1Digest], batched: bool, ls: &LabelSet) -> usize {
    let t = Instant::now();
    let mut hits = 0usize;
    if batched {
        let mut out = Vec::with_capacity(256);
        for chunk in queries.chunks(256) {
            ls.lookup_many(chunk, &mut out);
            hits += out.iter().filter(|o| o.is_some()).count();
        }
    } else {
        for q in queries {
            hits += black_box(ls.lookup(q)).is_some() as usize;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{what:<28} {:>8.2} M lookups/s ({} queries, {hits} found, {secs:.2} s)",
        queries.len() as f64 / secs / 1e6,
        queries.len()
    );
    hits
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: lookup_file FILE.dls [QUERIES]")?;
    let n: usize = args.next().map(|q| q.parse()).transpose()?.unwrap_or(10_000_000);
    let size = std::fs::metadata(&path)?.len();
    let t = Instant::now();
    let ls = LabelSet::open(&path)?;
    let open = t.elapsed();
    let t = Instant::now();
    let verified = LabelSet::open_verified(&path)?;
    let open_verified = t.elapsed();
    drop(verified);
    let h = ls.header();
    println!(
        "{path}: {size} bytes, {} entries, {} sources, filter {} bytes ({} bits/key, expected fp {:.4})",
        ls.len(),
        ls.source_count(),
        h.sections.filter.len,
        h.filter.bits_per_key,
        h.filter.expected_fp_rate
    );
    println!(
        "open: {:.1} ms; open_verified (every checksum): {:.1} ms",
        open.as_secs_f64() * 1e3,
        open_verified.as_secs_f64() * 1e3
    );
    let step = (ls.len() / n.max(1)).max(1);
    let mut positives: Vec<Sha1Digest> = ls.iter().step_by(step).map(|(d, _)| d).take(n).collect();
    // Shuffle (Fisher–Yates with splitmix64) so positives are not visited in table order.
    for i in (1..positives.len()).rev() {
        let j = (splitmix64(i as u64) % (i as u64 + 1)) as usize;
        positives.swap(i, j);
    }
    let negatives: Vec<Sha1Digest> =
        (0..positives.len() as u64).map(|i| random_digest(i + (1 << 40))).collect();
    for round in 0..2 {
        println!("round {}", round + 1);
        rate("negative, per key", &negatives, false, &ls);
        rate("negative, batched 256", &negatives, true, &ls);
        let found = rate("positive, per key", &positives, false, &ls);
        assert_eq!(found, positives.len(), "every entry is found");
        rate("positive, batched 256", &positives, true, &ls);
    }
    Ok(())
}
