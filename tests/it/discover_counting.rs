//! `ditto::analysis::counting::Counter` is exact whatever its memory budget: tiny budgets that force
//! many spills (and multi-pass merges) give the same counts and samples as a `HashMap`.

use std::collections::HashMap;

use ditto::analysis::counting::{Counter, Key, NO_SAMPLE};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Count `keys` (with samples) in a counter of `budget` bytes and in a HashMap; compare.
fn check<K: Key + std::hash::Hash + std::fmt::Debug>(budget: u64, keys: &[(K, u32)]) -> u64 {
    let tmp = tempfile::tempdir().unwrap();
    let mut c: Counter<K> = Counter::new(budget, tmp.path());
    let mut want: HashMap<K, (u64, u32)> = HashMap::new();
    for &(k, s) in keys {
        c.add_sampled(k, 1, s).unwrap();
        let e = want.entry(k).or_insert((0, NO_SAMPLE));
        e.0 += 1;
        e.1 = e.1.min(s);
    }
    let runs = c.stats().runs_written;
    assert_eq!(c.stats().occurrences, keys.len() as u64);
    let got: Vec<(K, u64, u32)> = c.finish_sampled().unwrap().map(|r| r.unwrap()).collect();
    let mut want: Vec<(K, u64, u32)> = want.into_iter().map(|(k, (n, s))| (k, n, s)).collect();
    want.sort_by_key(|a| a.0);
    assert_eq!(got.len(), want.len(), "budget {budget}");
    assert_eq!(got, want, "budget {budget}");
    // Every run file is gone once the result is dropped.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    runs
}

/// Skewed keys: a few very common, many rare, and a share of uniques.
fn skewed(rng: &mut StdRng, n: usize, distinct: u64) -> Vec<u64> {
    (0..n)
        .map(|_| {
            let r: f64 = rng.gen();
            if r < 0.3 {
                rng.gen_range(0..10)
            } else if r < 0.7 {
                rng.gen_range(0..distinct)
            } else {
                rng.gen::<u64>()
            }
        })
        .collect()
}

fn digest(v: u64) -> [u8; 20] {
    let mut d = [0u8; 20];
    d[..8].copy_from_slice(&v.to_le_bytes());
    d[12..].copy_from_slice(&v.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
    d
}

#[test]
fn sha1_keys_any_budget_equals_hashmap() {
    let mut rng = StdRng::seed_from_u64(6);
    let keys: Vec<([u8; 20], u32)> =
        skewed(&mut rng, 60_000, 5_000).into_iter().enumerate().map(|(i, v)| (digest(v), i as u32)).collect();
    let mut spilled = Vec::new();
    for budget in [0, 1 << 10, 16 << 10, 256 << 10, 1 << 30] {
        spilled.push(check(budget, &keys));
    }
    assert!(spilled[0] > 64, "a zero budget spills every 16 keys: {spilled:?}");
    assert!(spilled[2] > 0, "{spilled:?}");
    assert_eq!(*spilled.last().unwrap(), 0, "a large budget never spills");
}

#[test]
fn u64_keys_any_budget_equals_hashmap() {
    let mut rng = StdRng::seed_from_u64(7);
    let keys: Vec<(u64, u32)> =
        skewed(&mut rng, 50_000, 3_000).into_iter().map(|v| (v, rng.gen_range(0..1000))).collect();
    for budget in [0, 4 << 10, 64 << 10, 1 << 30] {
        check(budget, &keys);
    }
}

#[test]
fn keys_at_the_spill_boundary() {
    // Find how many distinct keys the table takes under this budget before it spills.
    let budget = 32 << 10;
    let tmp = tempfile::tempdir().unwrap();
    let mut probe: Counter<u64> = Counter::new(budget, tmp.path());
    let mut fill = 0u64;
    while probe.stats().runs_written == 0 {
        probe.add(fill).unwrap();
        fill += 1;
    }
    // `fill - 1` distinct keys fit; the fill-th one spilled them.
    let cap = fill - 1;
    assert!(cap > 16);
    // Exactly the capacity, one more, one less; the last key before the spill, the first
    // after, and keys repeated on both sides of every spill.
    for n in [cap - 1, cap, cap + 1, 2 * cap, 2 * cap + 1, 3 * cap] {
        let mut keys: Vec<(u64, u32)> = (0..n).map(|k| (k, k as u32)).collect();
        keys.push((cap - 1, 7));
        keys.push((cap, 3));
        keys.extend((0..n).rev().map(|k| (k, 1_000_000 + k as u32)));
        keys.push((0, 0));
        let runs = check(budget, &keys);
        assert!(runs >= 1 || n < cap, "n {n} cap {cap} runs {runs}");
    }
}

#[test]
fn plain_counts_and_histogram() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c: Counter<u64> = Counter::new(0, tmp.path());
    for k in 0..100u64 {
        c.add_n(k, k + 1).unwrap();
    }
    let mut h = ditto::analysis::counting::Histogram::new();
    let mut total = 0;
    for (i, r) in c.finish().unwrap().enumerate() {
        let (k, n) = r.unwrap();
        assert_eq!((k, n), (i as u64, i as u64 + 1));
        h.add(n);
        total += n;
    }
    assert_eq!(h.occurrences(), total);
    assert_eq!(h.distinct(), 100);
    // Counts 1..=100: bins [1], [2,3], [4,7], [8,15], [16,31], [32,63], [64,127] hold 1, 2,
    // 4, 8, 16, 32 and 37 keys.
    let keys: Vec<u64> = h.bins().iter().map(|b| b.keys).collect();
    assert_eq!(keys, vec![1, 2, 4, 8, 16, 32, 37]);
}
