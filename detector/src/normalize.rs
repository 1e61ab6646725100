//! Chunk normalization, applied identically when building label sets and when detecting.
//!
//! The paper hashes chunks exactly (§3.5); we normalize first so that trivial differences
//! (case, whitespace, Unicode compatibility forms) do not hide a copy. The normalization is
//! recorded in every label-set file as a spec string, and a mismatch is an error.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// Which normalization steps apply, in this fixed order: NFKC, lower-case, collapse
/// whitespace runs to one space, trim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Normalization {
    pub nfkc: bool,
    pub lowercase: bool,
    pub collapse_whitespace: bool,
    pub trim: bool,
}

impl Default for Normalization {
    fn default() -> Self {
        Normalization { nfkc: true, lowercase: true, collapse_whitespace: true, trim: true }
    }
}

impl Normalization {
    /// No normalization at all: chunks hashed as the cleaner produced them.
    pub const NONE: Normalization =
        Normalization { nfkc: false, lowercase: false, collapse_whitespace: false, trim: false };

    /// Normalize `text`. Borrows when nothing changes.
    pub fn apply<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out: Cow<'a, str> = Cow::Borrowed(text);
        if self.nfkc && !text.is_ascii() && is_nfkc_quick(text.chars()) != IsNormalized::Yes {
            out = Cow::Owned(text.nfkc().collect());
        }
        if self.lowercase && out.chars().any(|c| c.is_uppercase()) {
            out = Cow::Owned(out.to_lowercase());
        }
        if self.collapse_whitespace || self.trim {
            if let Some(s) = self.fold_whitespace(&out) {
                out = Cow::Owned(s);
            }
        }
        out
    }

    /// Collapse and/or trim whitespace; `None` when the text is already folded.
    fn fold_whitespace(&self, s: &str) -> Option<String> {
        let needs = (self.trim && (s.starts_with(char::is_whitespace) || s.ends_with(char::is_whitespace)))
            || (self.collapse_whitespace && has_non_single_space_ws(s));
        if !needs {
            return None;
        }
        let src = if self.trim { s.trim() } else { s };
        if !self.collapse_whitespace {
            return Some(src.to_string());
        }
        let mut out = String::with_capacity(src.len());
        let mut in_ws = false;
        for c in src.chars() {
            if c.is_whitespace() {
                if !in_ws {
                    out.push(' ');
                }
                in_ws = true;
            } else {
                out.push(c);
                in_ws = false;
            }
        }
        Some(out)
    }
}

/// True when `s` has whitespace other than isolated ASCII spaces.
fn has_non_single_space_ws(s: &str) -> bool {
    let mut prev_ws = false;
    for c in s.chars() {
        let ws = c.is_whitespace();
        if ws && (c != ' ' || prev_ws) {
            return true;
        }
        prev_ws = ws;
    }
    false
}

impl fmt::Display for Normalization {
    /// Spec string, e.g. `nfkc,lower,collapse-ws,trim` or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.nfkc {
            parts.push("nfkc");
        }
        if self.lowercase {
            parts.push("lower");
        }
        if self.collapse_whitespace {
            parts.push("collapse-ws");
        }
        if self.trim {
            parts.push("trim");
        }
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join(","))
        }
    }
}

/// Error for an unknown normalization step name.
#[derive(Debug, thiserror::Error)]
#[error("unknown normalization step {0:?} (known: nfkc, lower, collapse-ws, trim, none)")]
pub struct UnknownNormalization(pub String);

impl FromStr for Normalization {
    type Err = UnknownNormalization;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut n = Normalization::NONE;
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "none" => {}
                "nfkc" => n.nfkc = true,
                "lower" => n.lowercase = true,
                "collapse-ws" => n.collapse_whitespace = true,
                "trim" => n.trim = true,
                other => return Err(UnknownNormalization(other.to_string())),
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_folds_case_whitespace_and_compat_forms() {
        let n = Normalization::default();
        assert_eq!(n.apply("  Hello\t\n  World  "), "hello world");
        // NFKC: the "ﬁ" ligature becomes "fi", full-width letters become ASCII.
        assert_eq!(n.apply("ﬁne ＡＢＣ"), "fine abc");
        // U+00A0 no-break space is whitespace and collapses.
        assert_eq!(n.apply("a\u{a0}\u{a0}b"), "a b");
        assert!(matches!(n.apply("already folded"), Cow::Borrowed(_)));
    }

    #[test]
    fn none_keeps_text() {
        assert_eq!(Normalization::NONE.apply("  A  B "), "  A  B ");
    }

    #[test]
    fn spec_round_trips() {
        for spec in ["nfkc,lower,collapse-ws,trim", "lower,trim", "none"] {
            let n: Normalization = spec.parse().unwrap();
            assert_eq!(n.to_string(), spec);
        }
        assert!("upper".parse::<Normalization>().is_err());
        assert_eq!(Normalization::default().to_string(), "nfkc,lower,collapse-ws,trim");
    }
}
