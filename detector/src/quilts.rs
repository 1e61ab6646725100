//! Quilted pages: Najork 2012, "Detecting Quilted Web Pages at Scale" (SIGIR'12).
//!
//! A page is *quilted* when it is stitched together from patches of other pages. Definitions
//! (Najork §2, implemented exactly):
//! - `grams_k(d)`: the **set** of word k-grams of document d (n − k + 1 overlapping k-grams of
//!   an n-word document, §2 "More formally").
//! - `docs_k(g) = {d ∈ D : g ∈ grams_k(d)}`.
//! - `pgrams_{k,m}(d) = {g ∈ grams_k(d) : 1 < |docs_k(g)| ≤ m}` (patch grams).
//! - `patchfrac_{k,m}(d) = |pgrams_{k,m}(d)| / |grams_k(d)|` ("the fraction of patch grams in
//!   the document's gram set": both are sets; Figure 5's code divides by the gram *sequence*
//!   length instead, we follow the formal definition).
//! - `sources_{k,m}(d)`: the greedy set cover of §2 ([`greedy_cover`]).
//! - d is (k, m, c, θ)-quilted iff `patchfrac ≥ θ` and `|sources| ≥ c` ([`is_quilted`]).
//! - Foreign-sourced variant (§3, "each source document should reside on a different web
//!   server"): the initialization of C only takes d' with `server(d) ≠ server(d')`; the
//!   caller says which pairs are allowed (ditto: registrable domains, as the paper's "paid
//!   domain names"). patchfrac is unchanged by the variant (only C is).
//!
//! **Tokenization** (the paper word-breaks with the Bing HTML parser, §3): the words of
//! [`crate::shingles::words`] — maximal runs of Unicode word characters (`\w`: alphabetic,
//! numeric, `_`), lower-cased — over the page's cleaned text blocks in order, k-grams running
//! across block boundaries. Each k-gram is hashed to 64 bits by [`gram_hash`] from the
//! words' 64-bit hashes (FNV-1a + fmix64), so k-grams are compared by hash: two distinct
//! k-grams collide with probability ~2^-64 per pair.
//!
//! Counting `docs_k(g)` needs the whole corpus; this module takes the counts from the caller
//! ([`PatchGrams::from_counts`], any sorted or unsorted `(gram, |docs_k(g)|)` stream), so a
//! crawler can back it with an exact spilling counter (ditto: `ditto::counting::Counter`) or
//! with anything else. [`find_quilts`] is the whole algorithm in memory, for small corpora
//! and tests. No I/O here.

use crate::blocks::BlockList;
use std::collections::HashMap;

use crate::shingles::{fmix64, hash64, words};

/// The paper's parameters (k, m, c, θ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuiltParams {
    /// Words per gram.
    pub k: usize,
    /// Most documents a patch gram may be in.
    pub m: u64,
    /// Fewest sources of a quilted page.
    pub c: usize,
    /// Smallest patch fraction of a quilted page.
    pub theta: f64,
}

/// The paper's pivot point (k, m, c, θ) = (5, 50, 4, 0.5) (§3, Table 1).
pub const PIVOT: QuiltParams = QuiltParams { k: 5, m: 50, c: 4, theta: 0.5 };

impl Default for QuiltParams {
    fn default() -> Self {
        PIVOT
    }
}

/// 64-bit hashes of the words of `blocks` (see the module docs for the tokenization).
pub fn word_hashes<B: BlockList + ?Sized>(blocks: &B) -> Vec<u64> {
    let mut out = Vec::new();
    for b in blocks.blocks() {
        out.extend(words(b).map(|w| hash64(w.as_bytes())));
    }
    out
}

/// The 64-bit hash of one k-gram from its words' hashes, in order.
pub fn gram_hash(word_hashes: &[u64]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ word_hashes.len() as u64;
    for &w in word_hashes {
        h = fmix64(h.rotate_left(23) ^ w);
    }
    h
}

/// The n − k + 1 k-gram hashes of a word sequence, in document order (empty when n < k;
/// k = 0 is read as 1).
pub fn grams_in_order(word_hashes: &[u64], k: usize) -> Vec<u64> {
    let k = k.max(1);
    if word_hashes.len() < k {
        return Vec::new();
    }
    word_hashes.windows(k).map(gram_hash).collect()
}

/// `grams_k(d)`: the distinct k-gram hashes of a document, sorted.
pub fn gram_set(word_hashes: &[u64], k: usize) -> Vec<u64> {
    let mut g = grams_in_order(word_hashes, k);
    g.sort_unstable();
    g.dedup();
    g
}

/// The patch grams of the corpus: the grams g with `1 < |docs_k(g)| ≤ m`, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchGrams {
    grams: Vec<u64>,
}

impl PatchGrams {
    /// Keep the grams whose document count is in (1, m]. `counts` yields each gram once with
    /// `|docs_k(g)|` (a document counted once per gram, however often the gram repeats in it).
    pub fn from_counts<E>(
        counts: impl IntoIterator<Item = Result<(u64, u64), E>>,
        m: u64,
    ) -> Result<Self, E> {
        let mut grams = Vec::new();
        for r in counts {
            let (g, n) = r?;
            if n > 1 && n <= m {
                grams.push(g);
            }
        }
        grams.sort_unstable();
        grams.dedup();
        Ok(PatchGrams { grams })
    }

    pub fn contains(&self, g: u64) -> bool {
        self.grams.binary_search(&g).is_ok()
    }

    pub fn len(&self) -> usize {
        self.grams.len()
    }

    pub fn is_empty(&self) -> bool {
        self.grams.is_empty()
    }
}

/// `pgrams_{k,m}(d)`: the patch grams among a document's gram set (order kept).
pub fn pgrams(grams: &[u64], patch: &PatchGrams) -> Vec<u64> {
    grams.iter().copied().filter(|g| patch.contains(*g)).collect()
}

/// `patchfrac = |pgrams| / |grams|` (0 for a document without grams).
pub fn patchfrac(patch_grams: usize, grams: usize) -> f64 {
    if grams == 0 {
        0.0
    } else {
        patch_grams as f64 / grams as f64
    }
}

/// The §2 definition: (k, m, c, θ)-quilted iff `patchfrac ≥ θ` and `|sources| ≥ c`.
pub fn is_quilted(patchfrac: f64, sources: usize, p: &QuiltParams) -> bool {
    patchfrac >= p.theta && sources >= p.c
}

/// One source of a cover, in cover order: the document and the patch grams of d it was the
/// first to cover (disjoint across sources; together they cover every coverable patch gram).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub doc: u32,
    pub grams: Vec<u64>,
}

/// Najork §2's greedy approximation of `sources_{k,m}(d)`:
///
/// ```text
/// C ← {(d', g) : d' ∈ D \ {d} ∧ g ∈ grams_k(d) ∩ grams_k(d') ∧ 1 < |docs_k(g)| ≤ m}
/// while C ≠ ∅: pick d' maximizing |{g : (d', g) ∈ C}|; add it; remove from C every pair
///              whose gram d' covers
/// ```
///
/// `pgrams_d` are d's patch grams, `docs_of(g)` the documents containing g (d itself may be
/// among them and is skipped), `allowed(d')` restricts C (the §3 foreign-sourced variant;
/// `|_| true` otherwise). Ties go to the smallest document id, as Figure 5's
/// `OrderBy(doc).GroupBy(...).OrderByDescending(count).First()` (a stable sort) does.
pub fn greedy_cover<'a>(
    d: u32,
    pgrams_d: &[u64],
    docs_of: impl Fn(u64) -> &'a [u32],
    allowed: impl Fn(u32) -> bool,
) -> Vec<Source> {
    // C as doc → indices of d's patch grams it holds.
    let mut by_doc: HashMap<u32, Vec<u32>> = HashMap::new();
    for (i, &g) in pgrams_d.iter().enumerate() {
        for &o in docs_of(g) {
            if o != d && allowed(o) {
                let v = by_doc.entry(o).or_default();
                if v.last() != Some(&(i as u32)) {
                    v.push(i as u32);
                }
            }
        }
    }
    let mut covered = vec![false; pgrams_d.len()];
    let mut out = Vec::new();
    loop {
        let mut best: Option<(usize, u32)> = None;
        for (&o, gs) in &by_doc {
            let n = gs.iter().filter(|&&i| !covered[i as usize]).count();
            if n == 0 {
                continue;
            }
            best = match best {
                Some((bn, bo)) if bn > n || (bn == n && bo < o) => Some((bn, bo)),
                _ => Some((n, o)),
            };
        }
        let Some((_, o)) = best else { break };
        let gs = by_doc.remove(&o).unwrap_or_default();
        let mut grams = Vec::new();
        for i in gs {
            if !covered[i as usize] {
                covered[i as usize] = true;
                grams.push(pgrams_d[i as usize]);
            }
        }
        out.push(Source { doc: o, grams });
    }
    out
}

/// The verdict on one document.
#[derive(Debug, Clone, PartialEq)]
pub struct QuiltVerdict {
    pub doc: u32,
    /// `|grams_k(d)|`.
    pub grams: usize,
    /// `|pgrams_{k,m}(d)|`.
    pub patch_grams: usize,
    pub patchfrac: f64,
    /// `sources_{k,m}(d)` in cover order (empty when patchfrac < θ: not computed).
    pub sources: Vec<Source>,
    pub quilted: bool,
}

/// Postings `g → docs_k(g)` for the grams a caller asks for (the patch grams of the
/// documents whose patchfrac reaches θ: only they need a cover, as Figure 5's `patchyDocs`).
#[derive(Debug, Default)]
pub struct Postings {
    map: HashMap<u64, Vec<u32>>,
}

impl Postings {
    /// Postings for `wanted` grams, empty until documents are added.
    pub fn wanted(wanted: impl IntoIterator<Item = u64>) -> Self {
        Postings { map: wanted.into_iter().map(|g| (g, Vec::new())).collect() }
    }

    /// Record that document `doc` (ids added in increasing order, each once) has `grams`.
    pub fn add_doc(&mut self, doc: u32, grams: &[u64]) {
        for g in grams {
            if let Some(v) = self.map.get_mut(g) {
                if v.last() != Some(&doc) {
                    v.push(doc);
                }
            }
        }
    }

    pub fn docs(&self, g: u64) -> &[u32] {
        self.map.get(&g).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// The verdict on document `doc` with gram set `grams`: patchfrac, and when it reaches θ the
/// greedy cover over `postings` restricted by `allowed`.
pub fn judge(
    doc: u32,
    grams: &[u64],
    patch: &PatchGrams,
    postings: &Postings,
    allowed: impl Fn(u32) -> bool,
    p: &QuiltParams,
) -> QuiltVerdict {
    let pg = pgrams(grams, patch);
    let frac = patchfrac(pg.len(), grams.len());
    let sources =
        if frac >= p.theta { greedy_cover(doc, &pg, |g| postings.docs(g), allowed) } else { Vec::new() };
    QuiltVerdict {
        doc,
        grams: grams.len(),
        patch_grams: pg.len(),
        patchfrac: frac,
        quilted: is_quilted(frac, sources.len(), p),
        sources,
    }
}

/// One gram's documents, grouped: the step of Najork's Figure 5 that joins `grams_k` with
/// `docs_k` (`GroupBy(gram)`), done one gram at a time over a stream sorted by gram, so that
/// no postings are held for the whole corpus. `docs` are the documents holding the gram, each
/// once, with the servers it is on (sorted; `&[]` when the foreign variant is off).
///
/// Returns `None` when the gram is not a patch gram (`|docs_k(g)| ≤ 1` or `> m`); otherwise
/// calls `emit(d, others)` for every document d of the group with the other documents of the
/// group that may be d's sources (`d` itself left out; with `foreign`, only documents whose
/// servers are disjoint from d's, Najork §3), and returns `Some(|docs_k(g)|)`. `others` never
/// has more than m − 1 documents.
pub fn patch_group<S: AsRef<[u64]>>(
    docs: &[(u32, S)],
    m: u64,
    foreign: bool,
    mut emit: impl FnMut(u32, &[u32]),
) -> Option<usize> {
    let n = docs.len();
    if n <= 1 || n as u64 > m {
        return None;
    }
    let disjoint = |a: &[u64], b: &[u64]| {
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => return false,
            }
        }
        true
    };
    let mut others = Vec::with_capacity(n - 1);
    for (d, ds) in docs {
        others.clear();
        others.extend(
            docs.iter()
                .filter(|(o, os)| o != d && (!foreign || disjoint(ds.as_ref(), os.as_ref())))
                .map(|(o, _)| *o),
        );
        emit(*d, &others);
    }
    Some(n)
}

/// One document's patch grams, each with the other documents that may be its source: the
/// document's share of the postings (Najork Figure 5's join of `pgrams_{k,m}(d)` with
/// `docs_k`), gathered from a stream sorted by document, so that only one document's
/// postings are in memory at a time. Grams are pushed in increasing order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DocPatches {
    grams: Vec<u64>,
    /// `others[starts[i]..starts[i + 1]]` (the last one to `others.len()`) hold gram i.
    starts: Vec<u32>,
    others: Vec<u32>,
}

impl DocPatches {
    pub fn new() -> Self {
        Self::default()
    }

    /// Forget the previous document.
    pub fn clear(&mut self) {
        self.grams.clear();
        self.starts.clear();
        self.others.clear();
    }

    /// Start patch gram `g` (greater than the previous one).
    pub fn push_gram(&mut self, g: u64) {
        debug_assert!(self.grams.last().is_none_or(|&l| l < g));
        self.grams.push(g);
        self.starts.push(self.others.len() as u32);
    }

    /// Another document holding the last pushed gram.
    pub fn push_other(&mut self, o: u32) {
        self.others.push(o);
    }

    /// `pgrams_{k,m}(d)`, sorted.
    pub fn grams(&self) -> &[u64] {
        &self.grams
    }

    /// The documents besides d that hold patch gram `g` (empty when g is not one of d's).
    pub fn others(&self, g: u64) -> &[u32] {
        match self.grams.binary_search(&g) {
            Ok(i) => {
                let s = self.starts[i] as usize;
                let e = self.starts.get(i + 1).map_or(self.others.len(), |&e| e as usize);
                &self.others[s..e]
            }
            Err(_) => &[],
        }
    }

    /// Bytes held (for reports).
    pub fn bytes(&self) -> usize {
        self.grams.capacity() * 8 + self.starts.capacity() * 4 + self.others.capacity() * 4
    }
}

/// The verdict on document `doc` with `grams` = `|grams_k(d)|` from its own patch grams and
/// their postings (sources already restricted, e.g. by [`patch_group`]'s foreign rule): the
/// same as [`judge`] over the whole corpus' postings.
pub fn judge_patches(doc: u32, grams: usize, patches: &DocPatches, p: &QuiltParams) -> QuiltVerdict {
    let pg = patches.grams();
    let frac = patchfrac(pg.len(), grams);
    let sources =
        if frac >= p.theta { greedy_cover(doc, pg, |g| patches.others(g), |_| true) } else { Vec::new() };
    QuiltVerdict {
        doc,
        grams,
        patch_grams: pg.len(),
        patchfrac: frac,
        quilted: is_quilted(frac, sources.len(), p),
        sources,
    }
}

/// The whole algorithm in memory over documents' gram sets (index = document id):
/// `docs_k(g)` counted with a hash map, then [`judge`] for every document. `allowed(d, d')`
/// restricts sources (foreign variant). Returns every document's verdict.
pub fn find_quilts(
    docs: &[Vec<u64>],
    p: &QuiltParams,
    allowed: impl Fn(u32, u32) -> bool,
) -> Vec<QuiltVerdict> {
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for d in docs {
        for &g in d {
            *counts.entry(g).or_default() += 1;
        }
    }
    let patch = PatchGrams::from_counts::<()>(counts.into_iter().map(Ok), p.m).unwrap_or_default();
    let mut postings = Postings::wanted(patch.grams.iter().copied());
    for (i, d) in docs.iter().enumerate() {
        postings.add_doc(i as u32, d);
    }
    docs.iter()
        .enumerate()
        .map(|(i, d)| judge(i as u32, d, &patch, &postings, |o| allowed(i as u32, o), p))
        .collect()
}

/// Word ranges `[start, end)` of d's maximal runs of consecutive k-grams (document order,
/// `grams_in_order`) that are in `covered`: the patches a source contributed, as word spans.
pub fn patch_spans(grams_in_order: &[u64], k: usize, covered: &dyn Fn(u64) -> bool) -> Vec<(usize, usize)> {
    let k = k.max(1);
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    for (i, &g) in grams_in_order.iter().enumerate() {
        if covered(g) {
            run = Some(match run {
                Some((s, _)) => (s, i + k),
                None => (i, i + k),
            });
        } else if let Some(r) = run.take() {
            out.push(r);
        }
    }
    out.extend(run);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wh(text: &str) -> Vec<u64> {
        word_hashes(&[text])
    }

    #[test]
    fn grams_are_overlapping_k_word_windows_across_blocks() {
        let a = word_hashes(&["One two", "THREE, four"]);
        let b = wh("one two three four");
        assert_eq!(a, b);
        assert_eq!(grams_in_order(&a, 2).len(), 3); // n − k + 1
        assert_eq!(grams_in_order(&a, 5).len(), 0);
        assert_eq!(gram_set(&wh("a b a b a b"), 2).len(), 2); // {ab, ba}
        assert_ne!(gram_hash(&a[..2]), gram_hash(&a[1..3]));
    }

    #[test]
    fn patchfrac_counts_grams_in_more_than_one_and_at_most_m_documents() {
        // Grams as small integers: docs_k(1) = {0}, docs_k(2) = {0,1}, docs_k(3) = {0,1,2},
        // docs_k(4) = {0,1,2,3}. With m = 3: pgrams(0) = {2, 3}, patchfrac = 2/4.
        let counts = [(1u64, 1u64), (2, 2), (3, 3), (4, 4)];
        let patch = PatchGrams::from_counts::<()>(counts.iter().copied().map(Ok), 3).unwrap();
        assert_eq!(pgrams(&[1, 2, 3, 4], &patch), vec![2, 3]);
        assert_eq!(patchfrac(2, 4), 0.5);
        assert_eq!(patchfrac(0, 0), 0.0);
        // m = 4 takes gram 4 too (Theorem 3: pgrams grow with m).
        let patch4 = PatchGrams::from_counts::<()>(counts.iter().copied().map(Ok), 4).unwrap();
        assert_eq!(pgrams(&[1, 2, 3, 4], &patch4), vec![2, 3, 4]);
    }

    #[test]
    fn greedy_cover_takes_the_largest_first_and_breaks_ties_by_smallest_id() {
        // d = 0 with patch grams 10..=15.
        // doc 5: {10, 11, 12}; doc 3: {12, 13}; doc 4: {13, 14}; doc 7: {15}; doc 2: {15}.
        let post: HashMap<u64, Vec<u32>> = [
            (10, vec![0, 5]),
            (11, vec![0, 5]),
            (12, vec![0, 3, 5]),
            (13, vec![0, 3, 4]),
            (14, vec![0, 4]),
            (15, vec![0, 2, 7]),
        ]
        .into_iter()
        .collect();
        let cover = greedy_cover(
            0,
            &[10, 11, 12, 13, 14, 15],
            |g| post.get(&g).map(Vec::as_slice).unwrap(),
            |_| true,
        );
        // Round 1: doc 5 (3 grams). Round 2: doc 3 {13} vs doc 4 {13, 14} → 4 (2).
        // Round 3: docs 2 and 7 tie with {15} → 2 (smallest id). Doc 3 has nothing left.
        let got: Vec<(u32, Vec<u64>)> = cover.into_iter().map(|s| (s.doc, s.grams)).collect();
        assert_eq!(got, vec![(5, vec![10, 11, 12]), (4, vec![13, 14]), (2, vec![15])]);
        // Foreign variant: doc 5 not allowed → 3 takes {12, 13}, then 4 {14}, 10 and 11
        // stay uncovered; 2 takes {15}.
        let cover = greedy_cover(
            0,
            &[10, 11, 12, 13, 14, 15],
            |g| post.get(&g).map(Vec::as_slice).unwrap(),
            |o| o != 5,
        );
        let got: Vec<(u32, usize)> = cover.into_iter().map(|s| (s.doc, s.grams.len())).collect();
        assert_eq!(got, vec![(3, 2), (2, 1), (4, 1)]);
    }

    #[test]
    fn quilted_needs_both_theta_and_c() {
        let p = PIVOT;
        assert!(is_quilted(0.5, 4, &p));
        assert!(!is_quilted(0.4999, 9, &p));
        assert!(!is_quilted(1.0, 3, &p));
        // Theorems 1 and 2: quilted at (θ, c) stays quilted at smaller θ' and c'.
        let q = QuiltParams { theta: 0.3, c: 2, ..p };
        assert!(is_quilted(0.5, 4, &q));
    }

    #[test]
    fn find_quilts_in_memory_finds_a_page_stitched_from_four_others() {
        // Four sources of 20 distinct words each; the quilt takes 8 words of each, plus 4 of
        // its own. k = 3: the quilt's grams = 36 − 2 = 34, patch grams = 4 × (8 − 2) = 24.
        let src = |s: usize| -> Vec<String> { (0..20).map(|i| format!("w{s}x{i}")).collect() };
        let srcs: Vec<Vec<String>> = (0..4).map(src).collect();
        let mut quilt: Vec<String> = Vec::new();
        for s in &srcs {
            quilt.extend(s[4..12].iter().cloned());
        }
        quilt.extend((0..4).map(|i| format!("own{i}")));
        let mut docs: Vec<Vec<u64>> = srcs.iter().map(|s| gram_set(&wh(&s.join(" ")), 3)).collect();
        docs.push(gram_set(&wh(&quilt.join(" ")), 3));
        let p = QuiltParams { k: 3, m: 50, c: 4, theta: 0.5 };
        let v = find_quilts(&docs, &p, |_, _| true);
        let q = &v[4];
        assert_eq!((q.grams, q.patch_grams), (34, 24));
        assert_eq!(q.sources.len(), 4);
        assert!(q.quilted);
        assert!(v[..4].iter().all(|x| !x.quilted), "sources have patchfrac 6/18");
        // Foreign variant where docs 0 and 1 share the quilt's server: 2 sources left.
        let v = find_quilts(&docs, &p, |d, o| !(d == 4 && o < 2));
        assert_eq!(v[4].sources.len(), 2);
        assert!(!v[4].quilted);
    }

    /// The streamed form (groups by gram, then each document's patches) against the in-memory
    /// [`find_quilts`], with and without the foreign rule.
    #[test]
    fn patch_groups_and_doc_patches_judge_as_find_quilts() {
        let src = |s: usize| -> Vec<String> { (0..20).map(|i| format!("w{s}x{i}")).collect() };
        let srcs: Vec<Vec<String>> = (0..5).map(src).collect();
        let mut texts: Vec<String> = srcs.iter().map(|s| s.join(" ")).collect();
        for q in 0..3 {
            let mut quilt: Vec<String> = Vec::new();
            for s in &srcs[q..] {
                quilt.extend(s[q..q + 8].iter().cloned());
            }
            texts.push(quilt.join(" "));
        }
        texts.push(texts[0].clone()); // a copy: a gram in 4 documents
        let docs: Vec<Vec<u64>> = texts.iter().map(|t| gram_set(&wh(t), 3)).collect();
        // Servers: documents 0, 1 and 5 on server 7, the rest each on its own.
        let servers: Vec<Vec<u64>> = (0..docs.len() as u64)
            .map(|i| if [0, 1, 5].contains(&i) { vec![7] } else { vec![100 + i] })
            .collect();
        for m in [2, 3, 50] {
            for foreign in [false, true] {
                let p = QuiltParams { k: 3, m, c: 2, theta: 0.3 };
                let want = find_quilts(&docs, &p, |d, o| {
                    !foreign || servers[d as usize].iter().all(|s| !servers[o as usize].contains(s))
                });
                // Pass 1: (gram, doc) sorted by gram; each group → (d, g, others).
                let mut pairs: Vec<(u64, u32)> = docs
                    .iter()
                    .enumerate()
                    .flat_map(|(d, gs)| gs.iter().map(move |&g| (g, d as u32)))
                    .collect();
                pairs.sort_unstable();
                let mut recs: Vec<(u32, u64, Vec<u32>)> = Vec::new();
                for group in pairs.chunk_by(|a, b| a.0 == b.0) {
                    let g = group[0].0;
                    let members: Vec<(u32, &[u64])> =
                        group.iter().map(|&(_, d)| (d, servers[d as usize].as_slice())).collect();
                    let n = patch_group(&members, m, foreign, |d, others| recs.push((d, g, others.to_vec())));
                    assert_eq!(n.is_some(), group.len() > 1 && group.len() as u64 <= m);
                }
                // Then by document: each document's patches alone.
                recs.sort_unstable();
                for (d, gs) in docs.iter().enumerate() {
                    let mut dp = DocPatches::new();
                    for (_, g, others) in recs.iter().filter(|r| r.0 == d as u32) {
                        dp.push_gram(*g);
                        others.iter().for_each(|&o| dp.push_other(o));
                    }
                    let got = judge_patches(d as u32, gs.len(), &dp, &p);
                    assert_eq!(got, want[d], "m {m} foreign {foreign} doc {d}");
                }
            }
        }
    }

    #[test]
    fn patch_spans_are_maximal_runs_of_covered_grams() {
        let g = [1u64, 2, 3, 4, 5, 6];
        let cov = |x: u64| x == 2 || x == 3 || x == 6;
        assert_eq!(patch_spans(&g, 3, &cov), vec![(1, 5), (5, 8)]);
    }
}
