//! Bad-neighborhood detection (§3.3, §3.1 step 6).
//!
//! "A neighborhood N is defined by the URL prefix p, it consists of all files f ∈ C where
//! p(f) = p(N)" and "each site will have neighborhoods at each level of the hierarchy": for
//! `arxiv.org/archive/physics/` the paper counts `arxiv.org/archive/physics/`,
//! `arxiv.org/archive/` and `arxiv.org/`. A page belongs to every prefix of its directory.

use serde::{Deserialize, Serialize};

use crate::matching::PageVerdict;

/// The neighborhoods (URL prefixes) of a page URL, shortest first:
/// `http://host/a/b/c.html` → `http://host/`, `http://host/a/`, `http://host/a/b/`.
///
/// The last path segment is the file name and is not a neighborhood; a URL ending in `/` is
/// its own directory. Query and fragment are ignored. URLs without `scheme://` give none.
pub fn neighborhoods(url: &str) -> Vec<String> {
    let Some(root_len) = root_len(url) else {
        return Vec::new();
    };
    let path_end = url[root_len..].find(['?', '#']).map(|i| root_len + i).unwrap_or(url.len());
    let mut out = Vec::new();
    let mut root = url[..root_len].to_string();
    root.push('/');
    out.push(root);
    // Every '/' after the root closes a directory prefix.
    let path = &url[root_len..path_end];
    for (i, b) in path.bytes().enumerate() {
        if b == b'/' && i > 0 {
            out.push(format!("{}{}", &url[..root_len], &path[..=i]));
        }
    }
    out
}

/// Number of directory levels below the host (0 for `http://host/x.html`).
pub fn prefix_depth(url: &str) -> usize {
    neighborhoods(url).len().saturating_sub(1)
}

/// Length of `scheme://authority`, or `None` when the URL has no authority.
fn root_len(url: &str) -> Option<usize> {
    let start = url.find("://")? + 3;
    let end = url[start..].find(['/', '?', '#']).map(|i| start + i).unwrap_or(url.len());
    if end == start {
        return None;
    }
    Some(end)
}

/// Fixed-point scale for summing `contains`: sums of integers are exact and independent of
/// the order pages arrive in, so a resumed or parallel run gives bit-identical totals.
pub const CONTAINS_SCALE: f64 = (1u64 << 40) as f64;

/// `contains` as a fixed-point integer (rounded to 2^-40).
pub fn contains_fixed(contains: f64) -> u64 {
    (contains.clamp(0.0, 1.0) * CONTAINS_SCALE).round() as u64
}

/// Running totals of one neighborhood N.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeighborhoodAccumulator {
    /// |N|: pages (files) in the neighborhood.
    pub pages: u64,
    /// Chunk occurrences over its pages (after stop-chunk removal).
    pub chunks: u64,
    /// Labeled chunk occurrences over its pages.
    pub labeled_chunks: u64,
    /// Σ contains(L_c, n) over n ∈ N, fixed point (see [`CONTAINS_SCALE`]).
    pub contains_sum_fixed: u64,
}

impl NeighborhoodAccumulator {
    pub const ENCODED_LEN: usize = 32;

    /// The contribution of one page.
    pub fn of_page(v: &PageVerdict) -> Self {
        NeighborhoodAccumulator {
            pages: 1,
            chunks: v.chunks as u64,
            labeled_chunks: v.labeled_chunks as u64,
            contains_sum_fixed: contains_fixed(v.contains),
        }
    }

    pub fn add(&mut self, o: &Self) {
        self.pages += o.pages;
        self.chunks += o.chunks;
        self.labeled_chunks += o.labeled_chunks;
        self.contains_sum_fixed += o.contains_sum_fixed;
    }

    /// Σ contains(L_c, n) over the neighborhood.
    pub fn contains_sum(&self) -> f64 {
        self.contains_sum_fixed as f64 / CONTAINS_SCALE
    }

    /// `badness(N) = Σ_{n ∈ N} contains(L_c, n) / |N|` (§3.1 step 6).
    pub fn badness(&self) -> f64 {
        if self.pages == 0 {
            0.0
        } else {
            self.contains_sum() / self.pages as f64
        }
    }

    pub fn encode(&self) -> [u8; Self::ENCODED_LEN] {
        let mut b = [0u8; Self::ENCODED_LEN];
        b[0..8].copy_from_slice(&self.pages.to_le_bytes());
        b[8..16].copy_from_slice(&self.chunks.to_le_bytes());
        b[16..24].copy_from_slice(&self.labeled_chunks.to_le_bytes());
        b[24..32].copy_from_slice(&self.contains_sum_fixed.to_le_bytes());
        b
    }

    /// Decode; `None` when the bytes are not an accumulator (corrupt store).
    pub fn decode(b: &[u8]) -> Option<Self> {
        if b.len() != Self::ENCODED_LEN {
            return None;
        }
        let u = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        Some(NeighborhoodAccumulator {
            pages: u(0),
            chunks: u(8),
            labeled_chunks: u(16),
            contains_sum_fixed: u(24),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_as_in_the_paper() {
        assert_eq!(
            neighborhoods("http://arxiv.org/archive/physics/"),
            vec!["http://arxiv.org/", "http://arxiv.org/archive/", "http://arxiv.org/archive/physics/"]
        );
        assert_eq!(
            neighborhoods("http://h:8080/a/b/c.html?x=/y/#z"),
            vec!["http://h:8080/", "http://h:8080/a/", "http://h:8080/a/b/"]
        );
        assert_eq!(neighborhoods("http://h"), vec!["http://h/"]);
        assert_eq!(neighborhoods("http://h/index.html"), vec!["http://h/"]);
        assert!(neighborhoods("not a url").is_empty());
        assert_eq!(prefix_depth("http://h/a/b/c"), 2);
    }

    #[test]
    fn badness_by_hand() {
        // Three pages with contains 1.0, 0.5 and 0: badness = 1.5 / 3 = 0.5.
        let mut n = NeighborhoodAccumulator::default();
        for (l, c) in [(4u32, 4u32), (1, 2), (0, 5)] {
            let v = PageVerdict {
                chunks: c,
                labeled_chunks: l,
                contains: crate::matching::contains(l as u64, c as u64),
                ..Default::default()
            };
            n.add(&NeighborhoodAccumulator::of_page(&v));
        }
        assert_eq!(n.pages, 3);
        assert_eq!(n.chunks, 11);
        assert_eq!(n.labeled_chunks, 5);
        assert!((n.badness() - 0.5).abs() < 1e-12);
        assert_eq!(NeighborhoodAccumulator::decode(&n.encode()), Some(n));
        assert_eq!(NeighborhoodAccumulator::decode(&[1, 2]), None);
        assert_eq!(NeighborhoodAccumulator::default().badness(), 0.0);
    }
}
