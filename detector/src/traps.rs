//! Recursion errors and crawler traps in URLs (§3.4.1 and appendix A).
//!
//! "We ... use heuristics involving how often a URL path component is repeated and remove
//! that URL from processing if it is determined to be a recursion error" (§3.4.1), and
//! appendix A cuts neighborhoods whose prefix length exceeds 96 ("we therefore set a
//! threshold of 96"). The same rules serve the crawler's trap avoidance.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::neighborhood::prefix_depth;

/// Why a URL was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrapReason {
    /// A sequence of path segments repeats back to back too many times (`/a/b/a/b/a/b/`).
    RepeatedPath,
    /// The neighborhood prefix is deeper than the limit (paper: 96).
    TooDeep,
}

impl TrapReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            TrapReason::RepeatedPath => "repeated_path",
            TrapReason::TooDeep => "too_deep",
        }
    }
}

impl fmt::Display for TrapReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The recursion-error heuristics and their limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrapRules {
    /// A run of 1..=`max_sequence_len` segments repeated back to back this many times or
    /// more marks a recursion error. 0 disables the check.
    pub max_repeats: usize,
    /// Longest segment sequence considered for repetition.
    pub max_sequence_len: usize,
    /// Deepest allowed neighborhood prefix, in directory levels (appendix A: 96).
    pub max_depth: usize,
}

impl Default for TrapRules {
    fn default() -> Self {
        TrapRules { max_repeats: 3, max_sequence_len: 8, max_depth: 96 }
    }
}

impl TrapRules {
    /// `Some(reason)` when the URL is a recursion error to skip.
    pub fn check(&self, url: &str) -> Option<TrapReason> {
        if prefix_depth(url) > self.max_depth {
            return Some(TrapReason::TooDeep);
        }
        if self.max_repeats >= 2
            && has_tandem_repeat(&path_segments(url), self.max_sequence_len, self.max_repeats)
        {
            return Some(TrapReason::RepeatedPath);
        }
        None
    }
}

/// Non-empty path segments of a URL (query and fragment dropped).
fn path_segments(url: &str) -> Vec<&str> {
    let after_scheme = url.find("://").map(|i| &url[i + 3..]).unwrap_or(url);
    let path = match after_scheme.find('/') {
        Some(i) => &after_scheme[i..],
        None => return Vec::new(),
    };
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// True when some run of `len` ≤ `max_len` segments occurs `repeats` times back to back.
fn has_tandem_repeat(segs: &[&str], max_len: usize, repeats: usize) -> bool {
    for len in 1..=max_len.min(segs.len() / repeats.max(1)) {
        for start in 0..segs.len() {
            if start + len * repeats > segs.len() {
                break;
            }
            let unit = &segs[start..start + len];
            if (1..repeats).all(|k| &segs[start + k * len..start + (k + 1) * len] == unit) {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_sequences_are_recursion_errors() {
        let r = TrapRules::default();
        assert_eq!(r.check("http://h/a/a/a/x.html"), Some(TrapReason::RepeatedPath));
        assert_eq!(r.check("http://h/x/a/b/a/b/a/b/"), Some(TrapReason::RepeatedPath));
        assert_eq!(r.check("http://h/a/b/a/b/"), None); // twice is allowed
        assert_eq!(r.check("http://h/a/x/a/y/a/"), None); // not back to back
        assert_eq!(r.check("http://h/docs/en/index.html?p=/a/a/a/"), None); // query ignored
        assert_eq!(r.check("http://h/"), None);
    }

    #[test]
    fn depth_limit_is_96_levels() {
        let r = TrapRules { max_repeats: 0, ..TrapRules::default() };
        let ok = format!("http://h/{}", (0..96).map(|i| format!("d{i}/")).collect::<String>());
        let deep = format!("http://h/{}", (0..97).map(|i| format!("d{i}/")).collect::<String>());
        assert_eq!(r.check(&ok), None);
        assert_eq!(r.check(&deep), Some(TrapReason::TooDeep));
    }
}
