//! Sorting a build's tables on several threads, in place (no second copy of the table):
//! the entries (`(digest, source)`) and the passage pairs before a label set is written, and
//! each spilled run.
//!
//! The keys are hashes (SHA-1 digests, passage anchors), so their top byte spreads them
//! evenly: one pass counts each bucket's elements (on the threads, a slice each), one pass
//! moves each element into its bucket (in place, as American flag sort does; the one serial
//! step, linear), then the 256 buckets are sorted, and deduplicated where asked, on the
//! threads, a bucket at a time. The result is exactly `sort_unstable` (then `dedup_by`)'s:
//! buckets follow the key's order and the sort within a bucket is total (`Ord`).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::parallel_threads::named_scoped;

/// Below this many elements one thread sorts the whole table.
const PARALLEL_MIN: usize = 1 << 15;

/// Sort `v` (as `v.sort_unstable()`) on `threads` threads. `bucket(x)` must not decrease as
/// `x` grows (`a <= b` ⇒ `bucket(a) <= bucket(b)`), e.g. the top byte of a hash key.
pub fn sort_unstable<T: Ord + Copy + Send + Sync>(
    v: &mut [T],
    threads: usize,
    bucket: impl Fn(&T) -> u8 + Sync,
) {
    let Some(bounds) = partition(v, threads, &bucket) else {
        v.sort_unstable();
        return;
    };
    for_each_bucket(v, &bounds, threads, |_, b| {
        b.sort_unstable();
        b.len()
    });
}

/// Sort `v` and drop the elements `same` as the one before them (as `v.sort_unstable();
/// v.dedup_by(|b, a| same(a, b))`), on `threads` threads. Elements that are `same` must fall
/// in one bucket (they compare equal on the part of the key `bucket` reads).
pub fn sort_dedup<T: Ord + Copy + Send + Sync>(
    v: &mut Vec<T>,
    threads: usize,
    bucket: impl Fn(&T) -> u8 + Sync,
    same: impl Fn(&T, &T) -> bool + Sync,
) {
    let Some(bounds) = partition(v, threads, &bucket) else {
        v.sort_unstable();
        v.dedup_by(|b, a| same(a, b));
        return;
    };
    let kept = for_each_bucket(v, &bounds, threads, |_, b| {
        b.sort_unstable();
        dedup_front(b, &same)
    });
    // Close the gaps: each bucket's distinct elements to just after the previous bucket's.
    let mut to = 0;
    for (i, &n) in kept.iter().enumerate() {
        let from = bounds[i];
        if from != to {
            for k in 0..n {
                v.swap(to + k, from + k);
            }
        }
        to += n;
    }
    v.truncate(to);
}

/// Move the distinct elements of sorted `b` (the first of each run of `same` ones) to its
/// front, in order; their number.
fn dedup_front<T>(b: &mut [T], same: &impl Fn(&T, &T) -> bool) -> usize {
    if b.is_empty() {
        return 0;
    }
    let mut w = 1;
    for r in 1..b.len() {
        if !same(&b[w - 1], &b[r]) {
            b.swap(w, r);
            w += 1;
        }
    }
    w
}

/// Place every element in its bucket; the 257 bucket bounds, or `None` when the table is
/// too small (or the threads too few) to gain from it.
///
/// In parallel as PARADIS does it (Cho et al., VLDB 2015): each thread takes a share of
/// every bucket's place and moves the elements of its shares to their buckets' shares of
/// its own, as far as those have room; each bucket's elements are then gathered at its
/// front, and the few left out of place (a share's room and its elements differ by chance)
/// are placed by one thread.
fn partition<T: Copy + Send + Sync>(
    v: &mut [T],
    threads: usize,
    bucket: &(impl Fn(&T) -> u8 + Sync),
) -> Option<Vec<usize>> {
    if threads < 2 || v.len() < PARALLEL_MIN {
        return None;
    }
    // Count, a slice per thread.
    let per = v.len().div_ceil(threads);
    let counts: Vec<[usize; 256]> = std::thread::scope(|s| {
        let handles: Vec<_> = v
            .chunks(per)
            .map(|c| {
                named_scoped(s, "ls-sort", move || {
                    let mut n = [0usize; 256];
                    for x in c {
                        n[bucket(x) as usize] += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mut bounds = vec![0usize; 257];
    for b in 0..256 {
        bounds[b + 1] = bounds[b] + counts.iter().map(|c| c[b]).sum::<usize>();
    }
    place_in_shares(v, &bounds, threads, bucket);
    // Each bucket's own elements to its front: `next[b]` is then its first place not yet
    // holding one of its own.
    let placed = for_each_bucket(v, &bounds, threads, |b, s| {
        let mut w = 0;
        for r in 0..s.len() {
            if bucket(&s[r]) as usize == b {
                s.swap(w, r);
                w += 1;
            }
        }
        w
    });
    let mut next: Vec<usize> = (0..256).map(|b| bounds[b] + placed[b]).collect();
    // The rest, on this thread (American flag sort).
    for b in 0..256 {
        while next[b] < bounds[b + 1] {
            let i = next[b];
            let to = bucket(&v[i]) as usize;
            if to == b {
                next[b] += 1;
            } else {
                v.swap(i, next[to]);
                next[to] += 1;
            }
        }
    }
    Some(bounds)
}

/// The parallel step of [`partition`]: every bucket's place (`bounds`) cut in `threads`
/// shares; each thread moves the elements of its shares into its shares of their buckets
/// while those have room. Elements left over stay at the end of their share.
fn place_in_shares<T: Copy + Send + Sync>(
    v: &mut [T],
    bounds: &[usize],
    threads: usize,
    bucket: &(impl Fn(&T) -> u8 + Sync),
) {
    let mut shares: Vec<Vec<&mut [T]>> = (0..threads).map(|_| Vec::with_capacity(256)).collect();
    let mut rest = v;
    for w in bounds.windows(2) {
        let len = w[1] - w[0];
        for (t, own) in shares.iter_mut().enumerate() {
            let n = len * (t + 1) / threads - len * t / threads;
            let (share, r) = std::mem::take(&mut rest).split_at_mut(n);
            own.push(share);
            rest = r;
        }
    }
    std::thread::scope(|s| {
        for mut own in shares {
            named_scoped(s, "ls-sort", move || {
                // `[0, next[k])` of share k holds bucket k's elements; `[end[k], len)` ones
                // that found no room.
                let mut next = [0usize; 256];
                let mut end: Vec<usize> = own.iter().map(|x| x.len()).collect();
                for i in 0..own.len() {
                    while next[i] < end[i] {
                        let mut x = own[i][next[i]];
                        let mut k = bucket(&x) as usize;
                        while k != i && next[k] < end[k] {
                            std::mem::swap(&mut x, &mut own[k][next[k]]);
                            next[k] += 1;
                            k = bucket(&x) as usize;
                        }
                        own[i][next[i]] = x;
                        if k == i {
                            next[i] += 1;
                        } else {
                            end[i] -= 1;
                            own[i].swap(next[i], end[i]);
                        }
                    }
                }
            });
        }
    });
}

/// Run `f` on every bucket `v[bounds[b]..bounds[b + 1]]`, on `threads` threads taking the
/// next bucket as they finish one; `f`'s results in bucket order.
fn for_each_bucket<T: Send>(
    v: &mut [T],
    bounds: &[usize],
    threads: usize,
    f: impl Fn(usize, &mut [T]) -> usize + Sync,
) -> Vec<usize> {
    let mut buckets: Vec<&mut [T]> = Vec::with_capacity(256);
    let mut rest = v;
    for w in bounds.windows(2) {
        let (b, r) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
        buckets.push(b);
        rest = r;
    }
    let slots: Vec<std::sync::Mutex<Option<&mut [T]>>> =
        buckets.into_iter().map(|b| std::sync::Mutex::new(Some(b))).collect();
    let results: Vec<AtomicUsize> = (0..slots.len()).map(|_| AtomicUsize::new(0)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            named_scoped(s, "ls-sort", || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(slot) = slots.get(i) else { return };
                let taken = slot.lock().map(|mut g| g.take()).unwrap_or(None);
                if let Some(b) = taken {
                    results[i].store(f(i, b), Ordering::Relaxed);
                }
            });
        }
    });
    results.into_iter().map(AtomicUsize::into_inner).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(n: usize, seed: u64, distinct: u64) -> Vec<([u8; 20], u32)> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let k = (x >> 11) % distinct;
                let h = k.wrapping_mul(0x9e3779b97f4a7c15);
                let mut d = [0u8; 20];
                d[..8].copy_from_slice(&h.to_be_bytes());
                d[8..16].copy_from_slice(&k.to_le_bytes());
                (d, (i % 1000) as u32)
            })
            .collect()
    }

    #[test]
    fn same_as_the_serial_sort_and_dedup() {
        for (n, distinct) in [(0, 1), (10, 5), (PARALLEL_MIN + 7, 1 << 40), (200_000, 50_000), (100_000, 3)] {
            let v = table(n, n as u64 + 1, distinct);
            let mut want = v.clone();
            want.sort_unstable();
            for threads in [1, 2, 3, 8] {
                let mut got = v.clone();
                sort_unstable(&mut got, threads, |e| e.0[0]);
                assert_eq!(got, want, "sort, n {n}, {threads} threads");
                let mut got = v.clone();
                sort_dedup(&mut got, threads, |e| e.0[0], |a, b| a.0 == b.0);
                let mut w = want.clone();
                w.dedup_by(|b, a| a.0 == b.0);
                assert_eq!(got, w, "sort + dedup, n {n}, {threads} threads");
            }
        }
    }

    /// Keys that all fall in one bucket still sort (one thread does the work).
    #[test]
    fn skewed_keys_sort() {
        let mut v: Vec<(u64, u32)> =
            (0..100_000u64).map(|i| ((i * 7919) % 100_003, i as u32)).rev().collect();
        let mut want = v.clone();
        want.sort_unstable();
        sort_unstable(&mut v, 4, |e| (e.0 >> 56) as u8);
        assert_eq!(v, want);
    }
}
