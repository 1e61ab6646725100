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
        let mut ascii = text.is_ascii();
        if self.nfkc && !ascii {
            if let Some(s) = nfkc_by_segments(text) {
                out = Cow::Owned(s);
                ascii = out.is_ascii();
            }
        }
        if ascii {
            // Hot path (most chunks): lower-case and fold whitespace in one byte pass.
            return match self.lower_fold_ascii(&out) {
                Some(s) => Cow::Owned(s),
                None => out,
            };
        }
        if self.lowercase && out.chars().any(|c| c.is_uppercase()) {
            out = Cow::Owned(to_lowercase(&out));
        }
        if self.collapse_whitespace || self.trim {
            if let Some(s) = self.fold_whitespace(&out) {
                out = Cow::Owned(s);
            }
        }
        out
    }

    /// Lower-case + collapse + trim of ASCII text in one pass, with the same result as the
    /// general steps (for ASCII, `char::is_whitespace` is exactly TAB, LF, VT, FF, CR and
    /// space); `None` when nothing changes.
    fn lower_fold_ascii(&self, s: &str) -> Option<String> {
        let b = s.as_bytes();
        let lower = self.lowercase && b.iter().any(u8::is_ascii_uppercase);
        let collapse = self.collapse_whitespace && ascii_needs_collapse(b);
        let trim = self.trim
            && (b.first().is_some_and(|&c| is_ascii_ws(c)) || b.last().is_some_and(|&c| is_ascii_ws(c)));
        if !lower && !collapse && !trim {
            return None;
        }
        // For ASCII, `str::trim` strips exactly the ASCII whitespace bytes.
        let src = if self.trim { s.trim() } else { s };
        let mut out = if collapse {
            // Copy the stretches between whitespace runs that need folding in bulk; single
            // spaces (the common case) stay inside a stretch. Every index here is an ASCII
            // byte, so every slice is on a char boundary.
            let sb = src.as_bytes();
            let mut out = String::with_capacity(src.len());
            let (mut i, mut seg) = (0, 0);
            while i < sb.len() {
                if !is_ascii_ws(sb[i]) {
                    i += 1;
                    continue;
                }
                let mut j = i + 1;
                while j < sb.len() && is_ascii_ws(sb[j]) {
                    j += 1;
                }
                if j - i > 1 || sb[i] != b' ' {
                    out.push_str(&src[seg..i]);
                    out.push(' ');
                    seg = j;
                }
                i = j;
            }
            out.push_str(&src[seg..]);
            out
        } else {
            src.to_string()
        };
        if lower {
            out.make_ascii_lowercase();
        }
        Some(out)
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

/// Common non-ASCII symbols of web text that every normalization step leaves alone: each is
/// its own NFKC form, composes with nothing, has no lower-case mapping, is not whitespace and
/// is not a word character (tested). The fingerprint stage's fast paths use this list; any
/// other non-ASCII character takes the general path.
#[inline]
pub(crate) fn is_stable_symbol(c: char) -> bool {
    matches!(
        c,
        '\u{a7}' // §
            | '\u{a9}' // ©
            | '\u{ab}' // «
            | '\u{b6}' // ¶
            | '\u{bb}' // »
            | '\u{200b}' // zero-width space
            | '\u{2013}' // –
            | '\u{2014}' // —
            | '\u{2018}' // ‘
            | '\u{2019}' // ’
            | '\u{201c}' // “
            | '\u{201d}' // ”
            | '\u{2022}' // •
            | '\u{2192}' // →
    )
}

/// For a non-ASCII, non-whitespace character that NFKC leaves alone whatever surrounds it
/// (a starter, combining class 0, with NFKC quick check "yes": UAX #15 §9), what lower-casing
/// makes of it as [`Normalization::apply`] would: itself when it has no lower-case mapping,
/// its lower case when it is upper-case. `None` for every other character: those NFKC may
/// change or compose, Σ (whose lower case depends on context), and letters such as
/// titlecase `ǅ` that `apply` lower-cases only when the text has an upper-case letter.
pub(crate) fn simple_char_lowercase(c: char) -> Option<std::char::ToLowercase> {
    if c == '\u{3a3}'
        || unicode_normalization::char::canonical_combining_class(c) != 0
        || is_nfkc_quick(std::iter::once(c)) != IsNormalized::Yes
    {
        return None;
    }
    let lower = c.to_lowercase();
    let unchanged = lower.len() == 1 && lower.clone().next() == Some(c);
    if !unchanged && !c.is_uppercase() {
        return None;
    }
    Some(lower)
}

/// NFKC of `text`, or `None` when the quick check says it already is NFKC.
///
/// Same result as `text.nfkc()`, faster on mostly-ASCII text: an ASCII character is a
/// starter that never composes with what precedes it, so there is a normalization boundary
/// before every ASCII character (UAX #15, "stable code points"). Each non-ASCII run, with the
/// one ASCII character before it (which may compose with it: "e" + U+0301), is checked and
/// normalized on its own; the ASCII in between is copied.
fn nfkc_by_segments(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut done = 0; // `text[..done]` is already in `out`
    let mut i = 0; // always at an ASCII byte or the end
    while i < b.len() {
        let Some(j) = b[i..].iter().position(|&c| c >= 0x80).map(|p| p + i) else { break };
        let k = b[j..].iter().position(|&c| c < 0x80).map_or(b.len(), |p| p + j);
        if is_nfkc_quick(text[j..k].chars()) != IsNormalized::Yes {
            let seg_start = if j > i { j - 1 } else { j };
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[done..seg_start]);
            o.extend(text[seg_start..k].nfkc());
            done = k;
        }
        i = k;
    }
    let mut o = out?;
    o.push_str(&text[done..]);
    Some(o)
}

/// `str::to_lowercase`, but ASCII runs after the first non-ASCII character stay on the fast
/// path too. The only context-dependent mapping (final sigma) is left to the standard one.
fn to_lowercase(s: &str) -> String {
    if s.contains('\u{3a3}') {
        return s.to_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        let n = rest.bytes().position(|c| c >= 0x80).unwrap_or(rest.len());
        let start = out.len();
        out.push_str(&rest[..n]);
        out[start..].make_ascii_lowercase();
        rest = &rest[n..];
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            if c.is_ascii() {
                break;
            }
            out.extend(c.to_lowercase());
            rest = chars.as_str();
        }
    }
    out
}

/// ASCII text has a TAB, LF, VT, FF or CR, or two spaces in a row. Written as
/// non-short-circuiting folds so that it vectorizes; this runs on every chunk.
fn ascii_needs_collapse(b: &[u8]) -> bool {
    let ctrl = b.iter().fold(false, |acc, &c| acc | (c.wrapping_sub(b'\t') < 5));
    let double =
        b.iter().zip(b.iter().skip(1)).fold(false, |acc, (&x, &y)| acc | ((x == b' ') & (y == b' ')));
    ctrl | double
}

/// ASCII bytes that `char::is_whitespace` accepts: TAB, LF, VT, FF, CR, space.
fn is_ascii_ws(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ')
}

/// True when `s` has whitespace other than isolated ASCII spaces.
///
/// Byte scan (this runs on every chunk): ASCII bytes are tested directly; a non-ASCII
/// character is decoded only when its lead byte can start a Unicode whitespace character
/// (U+0085, U+00A0: 0xC2; U+1680: 0xE1; U+2000..U+205F: 0xE2; U+3000: 0xE3), and any
/// non-ASCII whitespace counts.
fn has_non_single_space_ws(s: &str) -> bool {
    let b = s.as_bytes();
    let mut prev_ws = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            let ws = is_ascii_ws(c);
            if ws && (c != b' ' || prev_ws) {
                return true;
            }
            prev_ws = ws;
            i += 1;
        } else {
            if matches!(c, 0xC2 | 0xE1 | 0xE2 | 0xE3)
                && s.get(i..).and_then(|t| t.chars().next()).is_some_and(char::is_whitespace)
            {
                return true;
            }
            prev_ws = false;
            i += 1;
            // Skip the continuation bytes.
            while i < b.len() && (b[i] & 0xC0) == 0x80 {
                i += 1;
            }
        }
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
    fn stable_symbols_are_left_alone_by_every_step() {
        let all: Vec<char> =
            (0x80u32..0x3000).filter_map(char::from_u32).filter(|&c| is_stable_symbol(c)).collect();
        assert_eq!(all.len(), 14);
        for c in all {
            let s = c.to_string();
            assert_eq!(s.nfkc().collect::<String>(), s, "{c:?} NFKC");
            // Composes with nothing before or after it (checked against ASCII and itself).
            for other in ["a", "e", " ", "\u{301}", s.as_str()] {
                let pair = format!("{other}{s}");
                assert_eq!(pair.nfkc().collect::<String>(), pair, "{other:?}{c:?}");
            }
            assert_eq!(c.to_lowercase().collect::<String>(), s, "{c:?} lower-case");
            assert!(!c.is_whitespace(), "{c:?} whitespace");
            assert!(!crate::shingles::is_word_char(c), "{c:?} word char");
        }
        // Every whitespace character stays whitespace under NFKC (so it folds into its run).
        for c in (0u32..0x11_0000).filter_map(char::from_u32).filter(|c| c.is_whitespace()) {
            let n: String = c.to_string().nfkc().collect();
            assert!(!n.is_empty() && n.chars().all(char::is_whitespace), "{c:?} → {n:?}");
        }
        // The no-break space is whitespace, and NFKC makes it a space.
        assert!('\u{a0}'.is_whitespace());
        assert_eq!("\u{a0}".nfkc().collect::<String>(), " ");
    }

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
