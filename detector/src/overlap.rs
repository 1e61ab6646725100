//! Exact and near replicas of a collection of pages, and their clusters: Shivakumar &
//! Garcia-Molina 1998 ("Finding near-replicas of documents on the web"), with SimHash
//! candidates (Khan & Ali 2015, Manku et al. 2007) beside the inverted index.
//!
//! Steps, as S&G §2.2 ("probabilistic-counting based approach"):
//! 1. **Exact copies first** (S&G §2.2 steps 1–2: one fingerprint per entire document, the
//!    document with the smallest docID is the "central" document of a set of identical
//!    ones, and the others leave all later steps). ditto's whole-document fingerprint is the
//!    SHA-1 of the normalized visible text, so pages whose markup differs but whose text is
//!    the same are exact replicas too; pages without text fall back to the body SHA-1. A
//!    member is `ExactBytes` when its body SHA-1 equals the central page's, else `ExactText`.
//! 2. **Chunk fingerprints**: word 4-shingles ([`crate::shingles`]; S&G §2: "sequences of
//!    words"), minus **template shingles**: a shingle found on at least
//!    `max(template_min_pages, ⌈template_fraction · n⌉)` of the n central pages of one host
//!    is that host's template (navigation, footers, "last updated on" dates) and is left out
//!    of that host's pages. **Short pages on purpose**: a page left with fewer than
//!    `min_content_shingles` shingles after that (a search stub, a redirect notice, a page
//!    that is all template) is compared on its full shingle set instead — its template is all
//!    there is to compare, and dropping it would make every such page empty and unmatched.
//! 3. **Candidate pairs without all-pairs comparison**: S&G's inverted index (FPrint → docID,
//!    §2.1) with prefix filtering (Chaudhuri, Ganti & Kaushik 2006; Bayardo et al. 2007) as
//!    the iceberg filter: fingerprints are ordered rarest first (global document frequency)
//!    and each page indexes only its first |F| − ⌈t·|F|⌉ + 1; two pages of Jaccard ≥ t must
//!    share one of those, so no qualifying pair is missed, and common fingerprints are
//!    rarely indexed at all. Heavy fingerprints (posting lists longer than `max_postings`)
//!    are capped as S&G cap stop chunks. Pairs whose sizes alone rule out Jaccard ≥ t are
//!    dropped (|F_small| < t·|F_large|). Optionally a SimHash of each page's fingerprint set
//!    ([`crate::simhash::set_simhash`]) is looked up in Manku's permuted tables
//!    ([`crate::neardup`]) at distance ≤ k, and its hits join the candidates.
//! 4. **Confirmation by exact overlap** (S&G §2: the Overlap table ⟨d_i, d_j, F⟩ with F the
//!    number of shared fingerprints): ditto normalizes F by the union, Jaccard
//!    F / |A ∪ B| ≥ `threshold` (default 0.8, the reuse truth's "near" measure and the
//!    MinHashLSH peer's threshold). Every candidate is counted exactly; none is accepted on
//!    a sketch.
//! 5. **Clusters**: union-find over exact groups and confirmed near pairs (S&G §3: replica
//!    clusters, one page of each visited on a recrawl). Near is not transitive, so a cluster
//!    can hold two pages that are not themselves a near pair; each member records the pair
//!    that joined it.

use std::collections::HashMap;

use crate::fingerprint::Sha1Digest;
use crate::neardup::{IndexConfig, NearDupIndex};
use crate::shingles::{estimated_size, sketch_jaccard};
use crate::simhash::{hamming, set_simhash};

/// Multiplicative hasher for keys that are already hashes (shingles, indices): SipHash
/// would dominate the analysis time.
#[derive(Default, Clone, Copy)]
struct MulHasher(u64);

impl std::hash::Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<MulHasher>>;
type FastSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<MulHasher>>;

/// Settings of the replica analysis (defaults documented on each field).
#[derive(Debug, Clone, PartialEq)]
pub struct OverlapConfig {
    /// Jaccard of the (template-free) shingle sets at or above which two pages are near
    /// replicas. Default 0.8.
    pub threshold: f64,
    /// Leave template shingles out (step 2). Default true.
    pub drop_templates: bool,
    /// A template shingle is on at least this many central pages of its host... Default 4.
    pub template_min_pages: usize,
    /// ...and on at least this share of them. Default 0.5.
    pub template_fraction: f64,
    /// Pages with fewer template-free shingles are compared on all their shingles. Default 20.
    pub min_content_shingles: usize,
    /// Posting lists longer than this are not used for candidates (heavy fingerprints).
    /// Default 10 000.
    pub max_postings: usize,
    /// Also propose candidates by SimHash of the fingerprint set at Hamming distance ≤ k
    /// (Manku's permuted tables). Default Some(3).
    pub simhash_k: Option<u32>,
}

impl Default for OverlapConfig {
    fn default() -> Self {
        OverlapConfig {
            threshold: 0.8,
            drop_templates: true,
            template_min_pages: 4,
            template_fraction: 0.5,
            min_content_shingles: 20,
            max_postings: 10_000,
            simhash_k: Some(3),
        }
    }
}

/// One page as the analysis needs it.
#[derive(Debug, Clone, Default)]
pub struct DocInput {
    /// Pages of one host share templates (any string; ditto uses the URL's host).
    pub host: String,
    pub file_hash: Sha1Digest,
    pub text_hash: Option<Sha1Digest>,
    /// Sorted, distinct shingle hashes ([`crate::shingles::shingle_set`]), or a bottom-k
    /// sketch of them ([`crate::shingles::ShingleSketch`]) when `shingles_partial`.
    pub shingles: Vec<u32>,
    /// `shingles` is a sketch: every shingle of the page whose hash is at most its largest,
    /// and no other.
    pub shingles_partial: bool,
    /// The page's own SimHash (Khan & Ali), reported with each pair when known.
    pub simhash: Option<u64>,
}

/// How a page is a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplicaKind {
    /// The cluster's representative (an exact group's central page).
    Representative,
    /// Same body bytes as its exact group's central page.
    ExactBytes,
    /// Same visible text as its exact group's central page, other bytes.
    ExactText,
    /// Joined the cluster by a confirmed near pair.
    Near,
}

/// A confirmed pair (documents by input index, `a < b`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplicaPair {
    pub a: usize,
    pub b: usize,
    pub kind: ReplicaKind,
    /// Jaccard of the compared fingerprint sets (1 for exact pairs).
    pub jaccard: f64,
    /// S&G's F: fingerprints in common.
    pub shared: usize,
    /// Hamming distance of the pages' own SimHashes, when both are known.
    pub hamming: Option<u32>,
}

/// A member of a cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Member {
    pub doc: usize,
    pub kind: ReplicaKind,
    /// The member it joined through (itself for the representative).
    pub via: usize,
    /// Jaccard and SimHash distance to `via`.
    pub jaccard: f64,
    pub hamming: Option<u32>,
}

/// A cluster of replicas: its representative first.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    pub members: Vec<Member>,
}

/// Counters of what each step did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct OverlapStats {
    pub docs: usize,
    pub central_docs: usize,
    pub exact_pairs: usize,
    pub template_shingles: usize,
    pub short_docs_full_set: usize,
    pub heavy_fingerprints_capped: usize,
    pub candidates_index: usize,
    pub candidates_simhash: usize,
    pub candidates_simhash_only: usize,
    pub candidates: usize,
    pub near_pairs: usize,
}

/// Everything the analysis found.
#[derive(Debug, Clone, Default)]
pub struct Replicas {
    /// Exact pairs (every pair within an exact group) and near pairs (every pair across two
    /// exact groups whose central pages are a confirmed near pair).
    pub pairs: Vec<ReplicaPair>,
    /// Clusters of two or more pages, largest first.
    pub clusters: Vec<Cluster>,
    pub stats: OverlapStats,
}

/// Union-find with path halving; the root is the smallest index of a set.
struct UnionFind(Vec<usize>);

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind((0..n).collect())
    }
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.0[hi] = lo;
        }
    }
}

/// ⌈x⌉ robust to float error just above an integer (0.8 · 10 = 8.000000000000002).
fn ceil_eps(x: f64) -> usize {
    (x - 1e-9).ceil().max(0.0) as usize
}

/// Prefix length for Jaccard ≥ t over a set of n fingerprints: n − ⌈t·n⌉ + 1 (at most n).
pub fn prefix_len(n: usize, t: f64) -> usize {
    if n == 0 {
        0
    } else {
        (n - ceil_eps(t * n as f64).min(n) + 1).min(n)
    }
}

/// Template shingles of one host's central pages: on at least
/// max(min_pages, ⌈fraction · n⌉) of its n pages (none when n < min_pages).
pub fn host_templates(sets: &[&[u32]], min_pages: usize, fraction: f64) -> Vec<u32> {
    let sets: Vec<(&[u32], u64)> = sets.iter().map(|s| (*s, u64::MAX)).collect();
    host_templates_of_sketches(&sets, min_pages, fraction)
}

/// [`host_templates`] of pages known by sketches `(hashes, cutoff)` (each holds every shingle
/// of its page at most its cutoff; `u64::MAX` for a whole set): a shingle is counted among the
/// pages whose cutoff reaches it, and is a template when it is on at least the same share of
/// those as [`host_templates`] asks of all n (the same rule when every set is whole).
pub fn host_templates_of_sketches(sets: &[(&[u32], u64)], min_pages: usize, fraction: f64) -> Vec<u32> {
    let n = sets.len();
    if n < min_pages.max(2) {
        return Vec::new();
    }
    let need = min_pages.max(ceil_eps(fraction * n as f64)).max(2);
    let mut df: FastMap<u32, usize> = FastMap::default();
    for (s, _) in sets {
        for &x in *s {
            *df.entry(x).or_default() += 1;
        }
    }
    let mut cutoffs: Vec<u64> = sets.iter().map(|&(_, c)| c).collect();
    cutoffs.sort_unstable();
    // Pages whose sketch would show shingle x: cutoff >= x.
    let eligible = |x: u32| n - cutoffs.partition_point(|&c| c < u64::from(x));
    let mut t: Vec<u32> = df
        .into_iter()
        .filter(|&(x, c)| c >= 2 && c * n >= need * eligible(x).max(1))
        .map(|(x, _)| x)
        .collect();
    t.sort_unstable();
    t
}

/// Sorted difference a \ b of sorted sets.
fn minus(a: &[u32], b: &[u32]) -> Vec<u32> {
    if b.is_empty() {
        return a.to_vec();
    }
    a.iter().copied().filter(|x| b.binary_search(x).is_err()).collect()
}

/// Find exact and near replicas among `docs` and cluster them.
pub fn find_replicas(docs: &[DocInput], cfg: &OverlapConfig) -> Replicas {
    let mut stats = OverlapStats { docs: docs.len(), ..Default::default() };
    let groups = ExactGroups::of(docs);
    stats.central_docs = groups.centers.len();
    let mut pairs = exact_pairs(docs, &groups);
    stats.exact_pairs = pairs.len();
    let features = template_free_features(docs, &groups.centers, cfg, &mut stats);
    let t = cfg.threshold.clamp(0.0, 1.0);
    let candidates = candidate_pairs(&groups.centers, &features, t, cfg, &mut stats);
    let near = confirmed_near_pairs(&candidates, &features, t);
    stats.near_pairs = near.len();
    pairs.extend(near_pairs_of_members(docs, &groups, &near));
    let clusters = clusters(docs, &groups, &near);
    Replicas { pairs, clusters, stats }
}

/// Step 1: the exact groups (pages of one visible-text hash, or of one body hash for pages
/// without text), each keyed by its central page (its smallest index).
struct ExactGroups {
    /// Members of each group by central page, in index order (the central page first).
    members: HashMap<usize, Vec<usize>>,
    /// The central pages, sorted.
    centers: Vec<usize>,
}

impl ExactGroups {
    fn of(docs: &[DocInput]) -> Self {
        let n = docs.len();
        let mut uf = UnionFind::new(n);
        let mut first: HashMap<(bool, Sha1Digest), usize> = HashMap::new();
        for (i, d) in docs.iter().enumerate() {
            let key = match d.text_hash {
                Some(h) => (true, h),
                None => (false, d.file_hash),
            };
            let c = *first.entry(key).or_insert(i);
            uf.union(c, i);
        }
        let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
        for i in 0..n {
            members.entry(uf.find(i)).or_default().push(i);
        }
        let mut centers: Vec<usize> = members.keys().copied().collect();
        centers.sort_unstable();
        ExactGroups { members, centers }
    }

    /// The members of the group whose central page is `center`.
    fn of_center(&self, center: usize) -> &[usize] {
        self.members.get(&center).map(Vec::as_slice).unwrap_or_default()
    }
}

/// Hamming distance of two pages' own SimHashes, when both are known.
fn simhash_distance(docs: &[DocInput], a: usize, b: usize) -> Option<u32> {
    match (docs[a].simhash, docs[b].simhash) {
        (Some(x), Some(y)) => Some(hamming(x, y)),
        _ => None,
    }
}

/// How member `m` of an exact group replicates its central page `c`.
fn exact_kind(docs: &[DocInput], c: usize, m: usize) -> ReplicaKind {
    if docs[c].file_hash == docs[m].file_hash {
        ReplicaKind::ExactBytes
    } else {
        ReplicaKind::ExactText
    }
}

/// Step 1's pairs: every pair within each exact group, groups in central-page order.
fn exact_pairs(docs: &[DocInput], groups: &ExactGroups) -> Vec<ReplicaPair> {
    let mut pairs = Vec::new();
    for &c in &groups.centers {
        let g = groups.of_center(c);
        for (x, &a) in g.iter().enumerate() {
            for &b in &g[x + 1..] {
                let kind = exact_kind(docs, a, b);
                let s = estimated_size(docs[a].shingles.len(), doc_cutoff(&docs[a]));
                pairs.push(ReplicaPair {
                    a,
                    b,
                    kind,
                    jaccard: 1.0,
                    shared: s,
                    hamming: simhash_distance(docs, a, b),
                });
            }
        }
    }
    pairs
}

/// The fingerprints a central page is compared on: all of them at most `cutoff`
/// (`u64::MAX`: all of them).
#[derive(Debug, Clone, Default)]
struct Feature {
    set: Vec<u32>,
    cutoff: u64,
}

type Features = HashMap<usize, Feature>;

/// The sketch cutoff of a page's shingles (see [`DocInput::shingles_partial`]).
fn doc_cutoff(d: &DocInput) -> u64 {
    crate::shingles::cutoff_of(&d.shingles, !d.shingles_partial)
}

/// Step 2: the fingerprint set each central page is compared on: its shingles less its
/// host's template shingles, or all its shingles when too few would be left (for a sketch,
/// too few estimated over the whole page).
fn template_free_features(
    docs: &[DocInput],
    centers: &[usize],
    cfg: &OverlapConfig,
    stats: &mut OverlapStats,
) -> Features {
    let mut by_host: HashMap<&str, Vec<usize>> = HashMap::new();
    for &c in centers {
        by_host.entry(docs[c].host.as_str()).or_default().push(c);
    }
    let mut features: Features = HashMap::with_capacity(centers.len());
    for pages in by_host.values() {
        let templates = if cfg.drop_templates {
            let sets: Vec<(&[u32], u64)> =
                pages.iter().map(|&c| (docs[c].shingles.as_slice(), doc_cutoff(&docs[c]))).collect();
            host_templates_of_sketches(&sets, cfg.template_min_pages, cfg.template_fraction)
        } else {
            Vec::new()
        };
        stats.template_shingles += templates.len();
        for &c in pages {
            let cutoff = doc_cutoff(&docs[c]);
            let content = minus(&docs[c].shingles, &templates);
            let content_size = crate::shingles::estimated_size(content.len(), cutoff);
            let set = if content_size < cfg.min_content_shingles && content.len() < docs[c].shingles.len() {
                stats.short_docs_full_set += 1;
                docs[c].shingles.clone()
            } else {
                content
            };
            features.insert(c, Feature { set, cutoff });
        }
    }
    features
}

/// The fingerprint set of central page `c` (empty for a page that has none).
fn features_of(features: &Features, c: usize) -> &[u32] {
    features.get(&c).map(|f| f.set.as_slice()).unwrap_or_default()
}

/// The cutoff of central page `c`'s fingerprint set.
fn cutoff_of(features: &Features, c: usize) -> u64 {
    features.get(&c).map_or(u64::MAX, |f| f.cutoff)
}

/// Step 3: candidate pairs of central pages (`a < b`) from the prefix-filtered inverted
/// index, plus the SimHash tables' hits when `cfg.simhash_k` is set.
fn candidate_pairs(
    centers: &[usize],
    features: &Features,
    t: f64,
    cfg: &OverlapConfig,
    stats: &mut OverlapStats,
) -> FastSet<(usize, usize)> {
    let mut candidates = index_candidates(centers, features, t, cfg.max_postings, stats);
    stats.candidates_index = candidates.len();
    if let Some(k) = cfg.simhash_k {
        add_simhash_candidates(centers, features, k, &mut candidates, stats);
    }
    stats.candidates = candidates.len();
    candidates
}

/// Pairs where one page's prefix (its |F| − ⌈t·|F|⌉ + 1 rarest fingerprints) meets the
/// other's fingerprints, and whose sizes (both restricted to the smaller cutoff) allow
/// Jaccard ≥ t; posting lists longer than `max_postings` are skipped (heavy fingerprints).
///
/// Every page is indexed on all its fingerprints and probes with its prefix: for two sets
/// whose restriction to the smaller cutoff has Jaccard ≥ t, the page with that cutoff has
/// its whole set in the comparison, so its prefix meets the other's set (prefix filtering's
/// argument), and no such pair is missed. For whole sets this finds every pair the
/// classic prefix-to-prefix join finds.
fn index_candidates(
    centers: &[usize],
    features: &Features,
    t: f64,
    max_postings: usize,
    stats: &mut OverlapStats,
) -> FastSet<(usize, usize)> {
    let mut df: FastMap<u32, u32> = FastMap::default();
    for f in features.values() {
        for &x in &f.set {
            *df.entry(x).or_default() += 1;
        }
    }
    let mut postings: FastMap<u32, Vec<usize>> = FastMap::default();
    for &c in centers {
        for &x in features_of(features, c) {
            postings.entry(x).or_default().push(c);
        }
    }
    let restricted = |c: usize, cut: u64| -> usize {
        let f = features_of(features, c);
        if cut == u64::MAX {
            f.len()
        } else {
            f.partition_point(|&x| u64::from(x) <= cut)
        }
    };
    let mut candidates: FastSet<(usize, usize)> = FastSet::default();
    let mut capped: FastSet<u32> = FastSet::default();
    for &a in centers {
        let f = features_of(features, a);
        let mut ordered: Vec<(u32, u32)> = f.iter().map(|x| (df.get(x).copied().unwrap_or(0), *x)).collect();
        ordered.sort_unstable();
        for &(_, x) in &ordered[..prefix_len(f.len(), t)] {
            let Some(list) = postings.get(&x) else { continue };
            if list.len() > max_postings {
                capped.insert(x);
                continue;
            }
            for &b in list {
                if b == a || candidates.contains(&(a.min(b), a.max(b))) {
                    continue;
                }
                let cut = cutoff_of(features, a).min(cutoff_of(features, b));
                let (la, lb) = (restricted(a, cut), restricted(b, cut));
                let (small, large) = if la < lb { (la, lb) } else { (lb, la) };
                if (small as f64) + 1e-9 >= t * large as f64 {
                    candidates.insert((a.min(b), a.max(b)));
                }
            }
        }
    }
    stats.heavy_fingerprints_capped += capped.len();
    candidates
}

/// Add the pairs whose fingerprint-set SimHashes are within Hamming distance `k` (Manku's
/// permuted tables) to `candidates`.
fn add_simhash_candidates(
    centers: &[usize],
    features: &Features,
    k: u32,
    candidates: &mut FastSet<(usize, usize)>,
    stats: &mut OverlapStats,
) {
    let keyed: Vec<(u64, u32)> = centers
        .iter()
        .filter(|&&c| !features_of(features, c).is_empty())
        .map(|&c| (set_simhash(features_of(features, c)), c as u32))
        .collect();
    // A configuration the tables cannot be built for proposes no candidates.
    let Ok(index) = NearDupIndex::build(IndexConfig::new(k), keyed.clone()) else { return };
    for &(key, c) in &keyed {
        for m in index.query(key) {
            let (a, b) = (c as usize, m.id as usize);
            if a < b {
                stats.candidates_simhash += 1;
                if candidates.insert((a, b)) {
                    stats.candidates_simhash_only += 1;
                }
            }
        }
    }
}

/// A confirmed near pair of central pages (`a < b`).
#[derive(Clone, Copy)]
struct NearPair {
    a: usize,
    b: usize,
    jaccard: f64,
    /// S&G's F: fingerprints in common.
    shared: usize,
}

/// Step 4: the candidates whose fingerprint sets have Jaccard ≥ t, counted exactly on
/// whole sets, and on sketches over both restricted to the smaller cutoff
/// ([`crate::shingles::sketch_jaccard`]; `shared` is then scaled to the pages' estimated
/// sizes), in (a, b) order.
fn confirmed_near_pairs(candidates: &FastSet<(usize, usize)>, features: &Features, t: f64) -> Vec<NearPair> {
    let mut near = Vec::new();
    for &(a, b) in candidates {
        let (fa, fb) = (features_of(features, a), features_of(features, b));
        let (ca, cb) = (cutoff_of(features, a), cutoff_of(features, b));
        let (j, shared, union) = sketch_jaccard(fa, ca, fb, cb);
        if union > 0 && shared as f64 + 1e-9 >= t * union as f64 {
            let shared = if ca == u64::MAX && cb == u64::MAX {
                shared
            } else {
                // |A ∩ B| = J (|A| + |B|) / (1 + J).
                let (na, nb) = (estimated_size(fa.len(), ca), estimated_size(fb.len(), cb));
                (j * (na + nb) as f64 / (1.0 + j)).round() as usize
            };
            near.push(NearPair { a, b, jaccard: j, shared });
        }
    }
    near.sort_by_key(|p| (p.a, p.b));
    near
}

/// Step 4's pairs: every pair across the two exact groups of each near pair of central pages.
fn near_pairs_of_members(docs: &[DocInput], groups: &ExactGroups, near: &[NearPair]) -> Vec<ReplicaPair> {
    let mut pairs = Vec::new();
    for p in near {
        for &x in groups.of_center(p.a) {
            for &y in groups.of_center(p.b) {
                let (a, b) = (x.min(y), x.max(y));
                pairs.push(ReplicaPair {
                    a,
                    b,
                    kind: ReplicaKind::Near,
                    jaccard: p.jaccard,
                    shared: p.shared,
                    hamming: simhash_distance(docs, a, b),
                });
            }
        }
    }
    pairs
}

/// Step 5: clusters of two or more pages, largest first. Each exact group's members join its
/// central page; central pages join through the best near pair found for them (highest
/// Jaccard) in a spanning forest.
fn clusters(docs: &[DocInput], groups: &ExactGroups, near: &[NearPair]) -> Vec<Cluster> {
    let (mut forest, tree_edges) = best_pair_forest(docs.len(), near);
    let mut components: HashMap<usize, Vec<usize>> = HashMap::new();
    for &c in &groups.centers {
        components.entry(forest.find(c)).or_default().push(c);
    }
    // The spanning tree's edges both ways, to orient it from each representative.
    let mut adjacent: HashMap<usize, Vec<(usize, f64)>> = HashMap::new();
    for &(a, b, j) in &tree_edges {
        adjacent.entry(a).or_default().push((b, j));
        adjacent.entry(b).or_default().push((a, j));
    }
    let mut roots: Vec<usize> = components.keys().copied().collect();
    roots.sort_unstable();
    let mut clusters = Vec::new();
    for r in roots {
        let centers = components.get(&r).map(Vec::as_slice).unwrap_or_default();
        let size: usize = centers.iter().map(|&c| groups.of_center(c).len()).sum();
        if size < 2 {
            continue;
        }
        let rep = centers.iter().copied().min().unwrap_or(r);
        clusters.push(Cluster { members: cluster_members(docs, groups, &adjacent, rep, size) });
    }
    clusters
        .sort_by(|a, b| b.members.len().cmp(&a.members.len()).then(a.members[0].doc.cmp(&b.members[0].doc)));
    clusters
}

/// Kruskal's spanning forest of the near pairs, highest Jaccard first (ties in (a, b)
/// order): the union-find of its components and its edges (a, b, Jaccard).
fn best_pair_forest(n: usize, near: &[NearPair]) -> (UnionFind, Vec<(usize, usize, f64)>) {
    let mut by_jaccard = near.to_vec();
    by_jaccard.sort_by(|x, y| y.jaccard.total_cmp(&x.jaccard).then((x.a, x.b).cmp(&(y.a, y.b))));
    let mut forest = UnionFind::new(n);
    let mut edges = Vec::new();
    for p in &by_jaccard {
        if forest.find(p.a) != forest.find(p.b) {
            forest.union(p.a, p.b);
            edges.push((p.a, p.b, p.jaccard));
        }
    }
    (forest, edges)
}

/// The members of the cluster whose representative is `rep`: its central pages in
/// breadth-first order of the spanning tree from `rep`, each followed by its exact group.
fn cluster_members(
    docs: &[DocInput],
    groups: &ExactGroups,
    adjacent: &HashMap<usize, Vec<(usize, f64)>>,
    rep: usize,
    size: usize,
) -> Vec<Member> {
    // The central page each joined through, and the Jaccard of that pair.
    let mut via: HashMap<usize, (usize, f64)> = HashMap::new();
    via.insert(rep, (rep, 1.0));
    let mut order = vec![rep];
    let mut i = 0;
    while i < order.len() {
        let x = order[i];
        i += 1;
        for &(y, j) in adjacent.get(&x).map(Vec::as_slice).unwrap_or(&[]) {
            if let std::collections::hash_map::Entry::Vacant(e) = via.entry(y) {
                e.insert((x, j));
                order.push(y);
            }
        }
    }
    let mut members = Vec::with_capacity(size);
    for &c in &order {
        let (v, j) = via.get(&c).copied().unwrap_or((c, 1.0));
        let kind = if c == rep { ReplicaKind::Representative } else { ReplicaKind::Near };
        members.push(Member { doc: c, kind, via: v, jaccard: j, hamming: simhash_distance(docs, c, v) });
        for &m in groups.of_center(c) {
            if m != c {
                members.push(Member {
                    doc: m,
                    kind: exact_kind(docs, c, m),
                    via: c,
                    jaccard: 1.0,
                    hamming: simhash_distance(docs, c, m),
                });
            }
        }
    }
    members
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingles::{jaccard, shingle_set, ShingleSketch};

    #[test]
    fn prefix_lengths_hand_computed() {
        // n = 10, t = 0.8: ⌈8⌉ = 8 → 10 − 8 + 1 = 3.
        assert_eq!(prefix_len(10, 0.8), 3);
        // n = 7, t = 0.8: ⌈5.6⌉ = 6 → 2.
        assert_eq!(prefix_len(7, 0.8), 2);
        assert_eq!(prefix_len(1, 0.8), 1);
        assert_eq!(prefix_len(0, 0.8), 0);
        assert_eq!(prefix_len(5, 1.0), 1);
        assert_eq!(prefix_len(5, 0.0), 5);
    }

    #[test]
    fn templates_hand_computed() {
        // 4 pages; need max(2, ⌈0.5·4⌉) = 2 pages: 1 (4 pages) and 2 (2 pages) qualify.
        let sets: Vec<&[u32]> = vec![&[1, 2, 5], &[1, 2], &[1, 3], &[1, 4]];
        assert_eq!(host_templates(&sets, 2, 0.5), vec![1, 2]);
        // min_pages 3: only 1.
        assert_eq!(host_templates(&sets, 3, 0.5), vec![1]);
        // A host smaller than min_pages has no template.
        assert!(host_templates(&sets[..2], 3, 0.5).is_empty());
        assert_eq!(minus(&[1, 2, 3, 4], &[2, 4]), vec![1, 3]);
    }

    fn doc(host: &str, text: &str, body: u8) -> DocInput {
        let shingles = shingle_set(text, 4);
        DocInput {
            host: host.into(),
            file_hash: [body; 20],
            text_hash: Some(crate::fingerprint::sha1(text.as_bytes())),
            shingles,
            shingles_partial: false,
            simhash: Some(crate::simhash::page_simhash(text)),
        }
    }

    fn words(n: usize, salt: &str) -> String {
        (0..n).map(|i| format!("w{salt}{i}")).collect::<Vec<_>>().join(" ")
    }

    /// Every pair with Jaccard ≥ t is found (prefix filtering is exact), none below is.
    #[test]
    fn near_pairs_match_brute_force_jaccard() {
        let base = words(200, "a");
        let mut docs = vec![doc("h1", &base, 1)];
        // Edits of growing size: replacing m words changes about 4m shingles.
        for (i, m) in [1usize, 3, 5, 8, 12, 20, 40].iter().enumerate() {
            let mut w: Vec<String> = base.split(' ').map(String::from).collect();
            for j in 0..*m {
                w[(j * 37) % 200] = format!("x{i}{j}");
            }
            docs.push(doc(&format!("h{}", i + 2), &w.join(" "), 10 + i as u8));
        }
        docs.push(doc("h9", &words(200, "b"), 99));
        let cfg = OverlapConfig { drop_templates: false, simhash_k: None, ..Default::default() };
        let r = find_replicas(&docs, &cfg);
        let mut want = Vec::new();
        for a in 0..docs.len() {
            for b in a + 1..docs.len() {
                if jaccard(&docs[a].shingles, &docs[b].shingles) >= 0.8 - 1e-12 {
                    want.push((a, b));
                }
            }
        }
        let mut got: Vec<(usize, usize)> = r.pairs.iter().map(|p| (p.a, p.b)).collect();
        got.sort_unstable();
        assert_eq!(got, want);
        assert!(!want.is_empty() && want.len() < 28);
    }

    /// Big pages known by bottom-256 sketches: clear near pairs are found, clearly different
    /// pages are not, and the estimated Jaccard is close to the true one.
    #[test]
    fn sketched_pages_find_clear_near_pairs() {
        let base = words(3000, "a");
        let mut docs = Vec::new();
        let mut truth = Vec::new();
        for (i, m) in [0usize, 10, 30, 60, 150, 300, 600].iter().enumerate() {
            let mut w: Vec<String> = base.split(' ').map(String::from).collect();
            for j in 0..*m {
                w[(j * 37 + 11) % 3000] = format!("x{i}{j}");
            }
            let full = doc(&format!("h{i}"), &w.join(" "), i as u8);
            truth.push(full.shingles.clone());
            let sk = ShingleSketch::of_set(&full.shingles, 256);
            assert!(!sk.complete);
            docs.push(DocInput { shingles: sk.hashes, shingles_partial: true, ..full });
        }
        let r = find_replicas(&docs, &OverlapConfig { simhash_k: None, ..Default::default() });
        for a in 0..docs.len() {
            for b in a + 1..docs.len() {
                let j = jaccard(&truth[a], &truth[b]);
                let found = r.pairs.iter().find(|p| (p.a, p.b) == (a, b));
                if j >= 0.9 {
                    let p = found.unwrap_or_else(|| panic!("{a}-{b} J {j} missed"));
                    assert!((p.jaccard - j).abs() < 0.08, "{a}-{b}: {} vs {j}", p.jaccard);
                } else if j < 0.7 {
                    assert!(found.is_none(), "{a}-{b} J {j} found");
                }
            }
        }
    }

    #[test]
    fn exact_groups_by_text_then_near_and_clusters() {
        let a = words(100, "a");
        let mut edited: Vec<&str> = a.split(' ').collect();
        edited[50] = "changed";
        let edited = edited.join(" ");
        let docs = vec![
            doc("h1", &a, 1),               // 0 representative
            doc("h2", &a, 1),               // 1 same bytes
            doc("h3", &a, 2),               // 2 same text, other bytes
            doc("h4", &edited, 3),          // 3 near (J = 96/104)
            doc("h5", &words(100, "z"), 4), // 4 unrelated
        ];
        let r = find_replicas(&docs, &OverlapConfig::default());
        let kinds: Vec<(usize, usize, ReplicaKind)> = r.pairs.iter().map(|p| (p.a, p.b, p.kind)).collect();
        assert!(kinds.contains(&(0, 1, ReplicaKind::ExactBytes)));
        assert!(kinds.contains(&(0, 2, ReplicaKind::ExactText)));
        assert!(kinds.contains(&(1, 2, ReplicaKind::ExactText)));
        // Near pairs expand over the exact group: 0–3, 1–3, 2–3.
        for x in 0..3 {
            let p = r.pairs.iter().find(|p| p.a == x && p.b == 3).expect("near pair");
            assert_eq!(p.kind, ReplicaKind::Near);
            // One word replaced in 100: shingles 97 each, 4 differ → 93 / 101.
            assert!((p.jaccard - 93.0 / 101.0).abs() < 1e-12, "{}", p.jaccard);
            assert_eq!(p.shared, 93);
        }
        assert_eq!(r.pairs.len(), 6);
        assert_eq!(r.clusters.len(), 1);
        let c = &r.clusters[0];
        assert_eq!(c.members[0].kind, ReplicaKind::Representative);
        assert_eq!(c.members.len(), 4);
        assert_eq!(r.stats.central_docs, 3);
    }

    #[test]
    fn host_templates_are_left_out_and_short_pages_use_their_full_set() {
        // Four pages of one host share a long footer; their own texts are unrelated: with the
        // template they would be near (the footer dominates), without it they are not.
        let footer = words(300, "f");
        let mut docs: Vec<DocInput> =
            (0..4).map(|i| doc("h", &format!("{} {footer}", words(30, &format!("p{i}"))), i)).collect();
        let cfg = OverlapConfig::default();
        let r = find_replicas(&docs, &cfg);
        assert!(r.pairs.is_empty(), "{:?}", r.pairs);
        assert!(r.stats.template_shingles > 250);
        let no_t = find_replicas(&docs, &OverlapConfig { drop_templates: false, ..cfg.clone() });
        assert_eq!(no_t.pairs.len(), 6);
        // Two short pages that are all template plus one different word: compared on their full
        // sets (short-page rule), they stay near each other.
        docs.push(doc("h", &format!("{footer} one"), 8));
        docs.push(doc("h", &format!("{footer} two"), 9));
        let r = find_replicas(&docs, &cfg);
        assert!(r.stats.short_docs_full_set >= 2);
        assert!(r.pairs.iter().any(|p| (p.a, p.b) == (4, 5)), "{:?}", r.pairs);
    }
}
