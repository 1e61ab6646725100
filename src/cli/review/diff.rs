//! The near-replica view's picture: two pages' text blocks side by side, aligned by a longest
//! common subsequence over their blocks (whitespace collapsed, empty blocks dropped), the
//! blocks that differ paired row by row and the runs they share collapsed into one line
//! (opened with a `<details>`, no script). A common prefix and suffix are taken off first;
//! the middle is aligned with a quadratic table only up to [`MAX_CELLS`] cells, beyond
//! which it is shown as one change (and the page says so).

use std::fmt::Write;
use std::ops::Range;

use super::html::{ellipsize, esc};

/// Largest LCS table (blocks of one side × blocks of the other, after the common prefix and
/// suffix): 4 M cells of u32, 16 MiB, well under a second.
pub const MAX_CELLS: usize = 4 << 20;
/// Shared runs this long or shorter are shown whole, longer ones collapsed.
const SHOW_SAME: usize = 2;
/// Rows drawn at most (a page of many thousand blocks stays readable).
const MAX_ROWS: usize = 600;
/// Characters shown of one block.
const BLOCK_CHARS: usize = 2000;

/// One run of the alignment: indices into the two (normalized) block lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    /// `a[a]` equals `b[b]`, block for block.
    Same { a: Range<usize>, b: Range<usize> },
    /// `a[a]` replaced by `b[b]` (either may be empty).
    Change { a: Range<usize>, b: Range<usize> },
}

/// The alignment of two pages' blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDiff {
    /// The normalized blocks the hunks index.
    pub a: Vec<String>,
    pub b: Vec<String>,
    pub hunks: Vec<Hunk>,
    /// The middle was too large to align ([`MAX_CELLS`]) and is one change.
    pub unaligned: bool,
}

fn normalize(blocks: &[String]) -> Vec<String> {
    blocks
        .iter()
        .map(|b| b.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|b| !b.is_empty())
        .collect()
}

impl BlockDiff {
    pub fn new(a: &[String], b: &[String]) -> BlockDiff {
        let (a, b) = (normalize(a), normalize(b));
        let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let suf = a[pre..].iter().rev().zip(b[pre..].iter().rev()).take_while(|(x, y)| x == y).count();
        let (ma, mb) = (pre..a.len() - suf, pre..b.len() - suf);
        let mut hunks = Vec::new();
        if pre > 0 {
            hunks.push(Hunk::Same { a: 0..pre, b: 0..pre });
        }
        let cells = (ma.len() + 1).saturating_mul(mb.len() + 1);
        let unaligned = cells > MAX_CELLS && !ma.is_empty() && !mb.is_empty();
        if unaligned {
            hunks.push(Hunk::Change { a: ma.clone(), b: mb.clone() });
        } else {
            lcs_hunks(&a, &b, ma.clone(), mb.clone(), &mut hunks);
        }
        if suf > 0 {
            hunks.push(Hunk::Same { a: ma.end..a.len(), b: mb.end..b.len() });
        }
        BlockDiff { a, b, hunks, unaligned }
    }

    /// Blocks shared, only in `a`, only in `b`.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for h in &self.hunks {
            match h {
                Hunk::Same { a, .. } => c.0 += a.len(),
                Hunk::Change { a, b } => {
                    c.1 += a.len();
                    c.2 += b.len();
                }
            }
        }
        c
    }

    /// The side-by-side table (escaped; no script).
    pub fn table(&self, a_title: &str, b_title: &str) -> String {
        let mut s = String::with_capacity(16 * 1024);
        let _ = write!(
            s,
            "<table class=\"sbs\"><thead><tr><th>{}</th><th>{}</th></tr></thead><tbody>",
            a_title, b_title
        );
        let mut rows = 0usize;
        let mut cut = false;
        for h in &self.hunks {
            if rows >= MAX_ROWS {
                cut = true;
                break;
            }
            match h {
                Hunk::Same { a, .. } if a.len() <= SHOW_SAME => {
                    for i in a.clone() {
                        let _ = write!(
                            s,
                            "<tr class=\"same\"><td colspan=\"2\">{}</td></tr>",
                            esc(&ellipsize(&self.a[i], BLOCK_CHARS))
                        );
                        rows += 1;
                    }
                }
                Hunk::Same { a, .. } => {
                    let _ = write!(
                        s,
                        "<tr class=\"same\"><td colspan=\"2\"><details><summary>{} blocks the same in both</summary>",
                        a.len()
                    );
                    for i in a.clone().take(MAX_ROWS) {
                        let _ = write!(s, "<p>{}</p>", esc(&ellipsize(&self.a[i], BLOCK_CHARS)));
                    }
                    s.push_str("</details></td></tr>");
                    rows += 1;
                }
                Hunk::Change { a, b } => {
                    for k in 0..a.len().max(b.len()) {
                        let (x, y) =
                            (a.clone().nth(k).map(|i| &self.a[i]), b.clone().nth(k).map(|i| &self.b[i]));
                        // A pair of blocks: the words that differ marked inside them.
                        let (hx, hy) = match (x, y) {
                            (Some(x), Some(y)) => {
                                word_diff(&ellipsize(x, BLOCK_CHARS), &ellipsize(y, BLOCK_CHARS))
                            }
                            _ => (
                                x.map(|x| esc(&ellipsize(x, BLOCK_CHARS))).unwrap_or_default(),
                                y.map(|y| esc(&ellipsize(y, BLOCK_CHARS))).unwrap_or_default(),
                            ),
                        };
                        let cell = |h: String, present: bool, class: &str| {
                            if present {
                                format!("<td class=\"{class}\">{h}</td>")
                            } else {
                                "<td class=\"gap\"></td>".to_string()
                            }
                        };
                        let _ = write!(
                            s,
                            "<tr class=\"change\">{}{}</tr>",
                            cell(hx, x.is_some(), "del"),
                            cell(hy, y.is_some(), "ins")
                        );
                        rows += 1;
                        if rows >= MAX_ROWS && k + 1 < a.len().max(b.len()) {
                            cut = true;
                            break;
                        }
                    }
                }
            }
        }
        if cut {
            let _ = write!(
                s,
                "<tr class=\"more\"><td colspan=\"2\">… the rest is not shown ({MAX_ROWS} rows at most)</td></tr>"
            );
        }
        s.push_str("</tbody></table>");
        s
    }
}

/// Words, single punctuation marks and runs of spaces: the tokens of [`word_diff`].
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut kind = 0u8; // 1 word, 2 space, 3 anything else (one char a token)
    for (i, c) in s.char_indices() {
        let k = if c.is_alphanumeric() {
            1
        } else if c.is_whitespace() {
            2
        } else {
            3
        };
        if i > start && (k != kind || k == 3) {
            out.push(&s[start..i]);
            start = i;
        }
        kind = k;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Tokens per block compared word by word at most (beyond, the blocks are shown plainly).
const MAX_WORD_TOKENS: usize = 600;

/// Two differing blocks escaped, the tokens not in their longest common subsequence wrapped
/// in `<span class="wd">` (so "Name" beside "Name:" marks the colon).
pub fn word_diff(a: &str, b: &str) -> (String, String) {
    let (ta, tb) = (tokens(a), tokens(b));
    if ta.len() > MAX_WORD_TOKENS || tb.len() > MAX_WORD_TOKENS {
        return (esc(a), esc(b));
    }
    let (keep_a, keep_b) = crate::source::labeled::lcs_keep(&ta, &tb);
    let render = |toks: &[&str], keep: &[bool]| {
        let mut s = String::new();
        let mut open = false;
        for (k, tok) in toks.iter().enumerate() {
            // Spaces between two changed tokens stay inside the mark.
            let changed = !keep[k] && !tok.trim().is_empty();
            let next_changed = toks[k + 1..]
                .iter()
                .zip(&keep[k + 1..])
                .find(|(t, _)| !t.trim().is_empty())
                .is_some_and(|(_, &kept)| !kept);
            if changed && !open {
                s.push_str("<span class=\"wd\">");
                open = true;
            } else if open && !changed && !(tok.trim().is_empty() && next_changed) {
                s.push_str("</span>");
                open = false;
            }
            s.push_str(&esc(tok));
        }
        if open {
            s.push_str("</span>");
        }
        s
    };
    (render(&ta, &keep_a), render(&tb, &keep_b))
}

/// LCS alignment of `a[ra]` and `b[rb]`, appended to `out` as hunks.
fn lcs_hunks(a: &[String], b: &[String], ra: Range<usize>, rb: Range<usize>, out: &mut Vec<Hunk>) {
    let (n, m) = (ra.len(), rb.len());
    // t[i][j] = LCS length of a[ra.start + i..] and b[rb.start + j..].
    let w = m + 1;
    let mut t = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * w + j] = if a[ra.start + i] == b[rb.start + j] {
                t[(i + 1) * w + j + 1] + 1
            } else {
                t[(i + 1) * w + j].max(t[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut change: Option<(usize, usize)> = None;
    let mut same: Option<(usize, usize)> = None;
    let flush_change = |c: &mut Option<(usize, usize)>, i: usize, j: usize, out: &mut Vec<Hunk>| {
        if let Some((ci, cj)) = c.take() {
            out.push(Hunk::Change { a: ra.start + ci..ra.start + i, b: rb.start + cj..rb.start + j });
        }
    };
    let flush_same = |c: &mut Option<(usize, usize)>, i: usize, j: usize, out: &mut Vec<Hunk>| {
        if let Some((ci, cj)) = c.take() {
            out.push(Hunk::Same { a: ra.start + ci..ra.start + i, b: rb.start + cj..rb.start + j });
        }
    };
    while i < n || j < m {
        if i < n && j < m && a[ra.start + i] == b[rb.start + j] {
            flush_change(&mut change, i, j, out);
            same.get_or_insert((i, j));
            i += 1;
            j += 1;
        } else {
            flush_same(&mut same, i, j, out);
            change.get_or_insert((i, j));
            if j < m && (i == n || t[i * w + j + 1] >= t[(i + 1) * w + j]) {
                j += 1;
            } else {
                i += 1;
            }
        }
    }
    flush_same(&mut same, i, j, out);
    flush_change(&mut change, i, j, out);
}

/// The side-by-side's styles (in the page's nonce'd style sheet).
pub const STYLE: &str = "table.sbs{table-layout:fixed}table.sbs td{font-family:Georgia,serif;width:50%}\
table.sbs tr.same td{color:#777;background:#fafafa}table.sbs td.del{background:#ffebee;border-left:3px solid #e57373}\
table.sbs td.ins{background:#e8f5e9;border-left:3px solid #81c784}table.sbs td.gap{background:repeating-linear-gradient(45deg,#fff,#fff 6px,#f3f3f3 6px,#f3f3f3 12px)}\
table.sbs td.del .wd{background:#ef9a9a;text-decoration:line-through;text-decoration-color:#b71c1c}\
table.sbs td.ins .wd{background:#a5d6a7}table.sbs summary{cursor:pointer;font-family:system-ui,sans-serif;font-size:12px;color:#555}table.sbs details p{margin:.3em 0}";

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    /// Check a diff covers both sides exactly, in order, and that Same hunks are equal.
    fn check(d: &BlockDiff) {
        let (mut ia, mut ib) = (0, 0);
        for h in &d.hunks {
            let (a, b) = match h {
                Hunk::Same { a, b } => {
                    assert_eq!(d.a[a.clone()], d.b[b.clone()]);
                    (a, b)
                }
                Hunk::Change { a, b } => {
                    assert!(!a.is_empty() || !b.is_empty());
                    (a, b)
                }
            };
            assert_eq!((a.start, b.start), (ia, ib));
            ia = a.end;
            ib = b.end;
        }
        assert_eq!((ia, ib), (d.a.len(), d.b.len()));
    }

    #[test]
    fn aligns_blocks_and_finds_the_differing_ones() {
        let a = v(&["head", "one", "two  words", "three", "four", "five", "six", "tail"]);
        let b = v(&["head", "one", "two\nwords", "THREE", "four", "five", "inserted", "six", "", "tail"]);
        let d = BlockDiff::new(&a, &b);
        check(&d);
        assert_eq!(
            d.hunks,
            vec![
                Hunk::Same { a: 0..3, b: 0..3 },
                Hunk::Change { a: 3..4, b: 3..4 },
                Hunk::Same { a: 4..6, b: 4..6 },
                Hunk::Change { a: 6..6, b: 6..7 },
                Hunk::Same { a: 6..8, b: 7..9 },
            ]
        );
        assert_eq!(d.counts(), (7, 1, 2));
        assert!(!d.unaligned);
    }

    #[test]
    fn lcs_is_maximal_on_reordered_blocks() {
        let a = v(&["a", "b", "c", "d", "e", "f"]);
        let b = v(&["b", "a", "c", "f", "e", "d"]);
        let d = BlockDiff::new(&a, &b);
        check(&d);
        // LCS length 3 (e.g. a c e / b c d).
        assert_eq!(d.counts().0, 3);
        let same = BlockDiff::new(&a, &a);
        assert_eq!(same.hunks, vec![Hunk::Same { a: 0..6, b: 0..6 }]);
        let empty = BlockDiff::new(&[], &a);
        assert_eq!(empty.hunks, vec![Hunk::Change { a: 0..0, b: 0..6 }]);
        assert!(BlockDiff::new(&[], &[]).hunks.is_empty());
    }

    #[test]
    fn table_shows_differing_blocks_side_by_side_and_collapses_shared_runs() {
        let shared: Vec<String> = (0..10).map(|i| format!("shared paragraph {i}")).collect();
        let mut a = shared.clone();
        a.insert(5, "only in A <script>alert(1)</script>\u{0}".into());
        let mut b = shared.clone();
        b.insert(5, "only in B".into());
        b.push("B's own ending".into());
        let d = BlockDiff::new(&a, &b);
        check(&d);
        let t = d.table("A", "B");
        // The two differing blocks on one row, their differing words marked; the extra one
        // beside a gap.
        assert!(
            t.contains(
                "<tr class=\"change\"><td class=\"del\">only in <span class=\"wd\">A &lt;script&gt;alert(1)\
                 &lt;/script&gt;\u{FFFD}</span></td><td class=\"ins\">only in <span class=\"wd\">B</span></td></tr>"
            ),
            "{t}"
        );
        assert!(t.contains(
            "<tr class=\"change\"><td class=\"gap\"></td><td class=\"ins\">B&#39;s own ending</td></tr>"
        ));
        // Shared runs of five: collapsed, each block shown once.
        assert_eq!(t.matches("5 blocks the same in both").count(), 2, "{t}");
        for p in &shared {
            assert_eq!(t.matches(&format!(">{p}<")).count(), 1, "{p} shown once");
        }
        assert!(!t.contains("<script"));
    }

    #[test]
    fn word_diff_marks_the_changed_tokens_escaped() {
        let (a, b) = word_diff("Name", "Name:");
        assert_eq!(a, "Name");
        assert_eq!(b, "Name<span class=\"wd\">:</span>");
        let (a, b) = word_diff("the quick brown fox <b>", "the slow red fox <i>");
        assert_eq!(a, "the <span class=\"wd\">quick brown</span> fox &lt;<span class=\"wd\">b</span>&gt;");
        assert_eq!(b, "the <span class=\"wd\">slow red</span> fox &lt;<span class=\"wd\">i</span>&gt;");
        assert_eq!(tokens("a, b  c"), vec!["a", ",", " ", "b", "  ", "c"]);
        let long = "w ".repeat(400);
        assert_eq!(word_diff(&long, "x").0, esc(&long));
    }

    #[test]
    fn too_large_a_middle_is_one_change() {
        let a: Vec<String> = (0..2100).map(|i| format!("a{i}")).collect();
        let b: Vec<String> = (0..2100).map(|i| format!("b{i}")).collect();
        let d = BlockDiff::new(&a, &b);
        assert!(d.unaligned);
        assert_eq!(d.hunks, vec![Hunk::Change { a: 0..2100, b: 0..2100 }]);
        assert!(d.table("A", "B").contains("rows at most"));
    }
}
