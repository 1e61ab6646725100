//! The merged view of several stores that `ditto report --store A --store B …` reads
//! (issue 10: beyond one machine).
//!
//! Detection is distributive given a label set (Ardi & Heidemann 2014 §3.3): every page's
//! `contains` and every neighborhood's accumulator (pages, chunks, labeled chunks, Σ contains
//! in fixed point) are sums of integers, so stores written by separate processes add up
//! exactly. A merged report walks the stores' neighborhoods (and pages) in one sorted order,
//! adding the accumulators of a neighborhood found in several stores (a scan partitioned by
//! input can split a host; a crawl partitioned by host never does) and dropping a page
//! capture (URL + body SHA-1) stored twice. The sequence it sees is then exactly the one a
//! single store holding everything would give, in the same order, so the mean and standard
//! deviation — floating-point sums, order dependent — come out bit for bit the same, and so
//! do thresholds, badness and verdicts.
//!
//! Partitioned crawls: `crate::crawl::partition` (wiring), `crawler::partition` (ownership,
//! the link exchange, termination).

use anyhow::{bail, Result};
use detector::NeighborhoodAccumulator;
use store::labels::LabelIndex;
use store::{PageRecord, Store};

/// Stores merged for a report must have been scanned with the same label set, or their
/// `contains` values are not comparable.
pub fn check_same_label_set(stores: &[&Store]) -> Result<()> {
    let mut first = None;
    for (i, s) in stores.iter().enumerate() {
        let id = s.label_set()?;
        match (&first, id) {
            (None, id) => first = Some(id),
            (Some(a), b) if *a == b => {}
            (Some(a), b) => bail!(
                "store {} was scanned with label set {:?}, store 1 with {:?}: they cannot be merged",
                i + 1,
                b.map(|x| x.name),
                a.as_ref().map(|x| x.name.clone())
            ),
        }
    }
    Ok(())
}

/// Every neighborhood of the stores with its accumulators added, in prefix order.
pub fn neighborhoods<'a>(
    stores: &'a [&'a Store],
) -> impl Iterator<Item = store::Result<(String, NeighborhoodAccumulator)>> + 'a {
    MergeSorted::new(
        stores.iter().map(|s| s.neighborhoods()).collect(),
        |(name, _): &(String, NeighborhoodAccumulator)| name.clone(),
        |a: &mut (String, NeighborhoodAccumulator), b| a.1.add(&b.1),
    )
}

/// Pages of the stores whose URL starts with `prefix`, in URL order; a capture (URL + body
/// SHA-1) found in several stores comes once.
pub fn pages_under<'a>(
    stores: &'a [&'a Store],
    prefix: &'a str,
) -> impl Iterator<Item = store::Result<PageRecord>> + 'a {
    MergeSorted::new(
        stores.iter().map(|s| s.pages_under(prefix)).collect(),
        |p: &PageRecord| (p.url.clone(), p.file_hash.clone()),
        |_: &mut PageRecord, _| {},
    )
}

/// Review labels of all the stores (on a clash, the newer label wins, as on import).
pub fn label_index(stores: &[&Store]) -> store::Result<LabelIndex> {
    let mut merged = LabelIndex::default();
    for s in stores {
        for (k, l) in s.label_index()?.0 {
            match merged.0.get(&k) {
                Some(old) if old.time >= l.time => {}
                _ => {
                    merged.0.insert(k, l);
                }
            }
        }
    }
    Ok(merged)
}

/// A k-way merge of sorted iterators: items with equal keys are combined into the first.
/// Errors are passed on as they come.
struct MergeSorted<I, T, K, FK, FC>
where
    I: Iterator<Item = store::Result<T>>,
{
    iters: Vec<I>,
    heads: Vec<Option<store::Result<T>>>,
    key: FK,
    combine: FC,
    _k: std::marker::PhantomData<K>,
}

impl<I, T, K, FK, FC> MergeSorted<I, T, K, FK, FC>
where
    I: Iterator<Item = store::Result<T>>,
    K: Ord,
    FK: Fn(&T) -> K,
    FC: Fn(&mut T, T),
{
    fn new(mut iters: Vec<I>, key: FK, combine: FC) -> Self {
        let heads = iters.iter_mut().map(Iterator::next).collect();
        MergeSorted { iters, heads, key, combine, _k: std::marker::PhantomData }
    }
}

impl<I, T, K, FK, FC> Iterator for MergeSorted<I, T, K, FK, FC>
where
    I: Iterator<Item = store::Result<T>>,
    K: Ord,
    FK: Fn(&T) -> K,
    FC: Fn(&mut T, T),
{
    type Item = store::Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(i) = self.heads.iter().position(|h| matches!(h, Some(Err(_)))) {
            let e = self.heads[i].take();
            self.heads[i] = self.iters[i].next();
            return e;
        }
        let mut min: Option<(usize, K)> = None;
        for (i, h) in self.heads.iter().enumerate() {
            if let Some(Ok(t)) = h {
                let k = (self.key)(t);
                if min.as_ref().is_none_or(|(_, m)| k < *m) {
                    min = Some((i, k));
                }
            }
        }
        let (first, k) = min?;
        let mut out = match self.heads[first].take() {
            Some(Ok(t)) => t,
            other => return other,
        };
        self.heads[first] = self.iters[first].next();
        for i in first + 1..self.heads.len() {
            let equal = matches!(&self.heads[i], Some(Ok(t)) if (self.key)(t) == k);
            if equal {
                if let Some(Ok(t)) = self.heads[i].take() {
                    (self.combine)(&mut out, t);
                }
                self.heads[i] = self.iters[i].next();
            }
        }
        Some(Ok(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(v: Vec<(u32, u32)>) -> std::vec::IntoIter<store::Result<(u32, u32)>> {
        v.into_iter().map(Ok).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn merge_is_sorted_and_combines_equal_keys() {
        let m = MergeSorted::new(
            vec![ok(vec![(1, 1), (4, 1), (9, 1)]), ok(vec![]), ok(vec![(2, 10), (4, 10)])],
            |t: &(u32, u32)| t.0,
            |a: &mut (u32, u32), b| a.1 += b.1,
        );
        let got: Vec<(u32, u32)> = m.map(|r| r.unwrap()).collect();
        assert_eq!(got, vec![(1, 1), (2, 10), (4, 11), (9, 1)]);
    }
}
