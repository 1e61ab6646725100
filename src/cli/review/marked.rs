//! The page view's picture: the page's text as the scan saw it (its cleaned blocks), each
//! copied block highlighted in place as a `<mark>` with a numbered reference to its source,
//! beside the list of those sources (each linking to its first passage). Chunks are text
//! blocks (Ardi & Heidemann 2014 §3.1), so a copied passage is a whole block.

use std::collections::HashMap;
use std::fmt::Write;

use super::html::esc;

/// Blocks shown at most (the rest are counted).
pub const MAX_BLOCKS: usize = 2000;

/// One source in the side list: its reference number is its position (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRef {
    pub id: u32,
    /// The source as HTML (already escaped: a link or `#id`).
    pub link: String,
    /// Labeled chunks the scan counted from it on this page (0 when the store has no count).
    pub chunks: u32,
    /// Copied blocks of this page's text from it, and the first one's block number.
    pub passages: usize,
    pub first: Option<usize>,
}

/// The page text with its copied blocks marked, and the sources list.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkedText {
    pub text: String,
    pub sources: Vec<SourceRef>,
    /// (block, source id) of every highlighted block, in page order.
    pub marks: Vec<(usize, u32)>,
}

/// `copied[i]`: the source of block `i` when it is copied. `counted`: the store's per-source
/// counts for the page (most first), which order the list; sources found only in the text
/// follow in page order. `link` renders a source.
pub fn marked_text(
    blocks: &[String],
    copied: &[Option<u32>],
    counted: &[(u32, u32)],
    link: &dyn Fn(u32) -> String,
) -> MarkedText {
    let mut order: Vec<u32> = counted.iter().map(|&(id, _)| id).collect();
    let chunks: HashMap<u32, u32> = counted.iter().copied().collect();
    for id in copied.iter().take(MAX_BLOCKS).flatten() {
        if !order.contains(id) {
            order.push(*id);
        }
    }
    let number: HashMap<u32, usize> = order.iter().enumerate().map(|(k, &id)| (id, k + 1)).collect();
    let mut sources: Vec<SourceRef> = order
        .iter()
        .map(|&id| SourceRef {
            id,
            link: link(id),
            chunks: chunks.get(&id).copied().unwrap_or(0),
            passages: 0,
            first: None,
        })
        .collect();
    let mut text = String::with_capacity(blocks.iter().take(MAX_BLOCKS).map(|b| b.len() + 24).sum());
    let mut marks = Vec::new();
    for (i, b) in blocks.iter().enumerate().take(MAX_BLOCKS) {
        match copied.get(i).copied().flatten() {
            Some(id) => {
                let n = number.get(&id).copied().unwrap_or(0);
                if let Some(s) = sources.get_mut(n.wrapping_sub(1)) {
                    s.passages += 1;
                    s.first.get_or_insert(i);
                }
                marks.push((i, id));
                let _ = write!(
                    text,
                    "<p class=\"copied\"><mark id=\"b{i}\" data-source=\"{id}\">{}</mark> \
                     <a class=\"ref\" href=\"#src-{id}\" title=\"source {n}\">[{n}]</a></p>",
                    esc(b)
                );
            }
            None => {
                let _ = write!(text, "<p class=\"other\" id=\"b{i}\">{}</p>", esc(b));
            }
        }
    }
    if blocks.len() > MAX_BLOCKS {
        let _ = write!(text, "<p class=\"muted\">… {} more blocks</p>", blocks.len() - MAX_BLOCKS);
    }
    MarkedText { text, sources, marks }
}

impl MarkedText {
    /// The text beside its sources (two columns; one on a narrow window).
    pub fn html(&self) -> String {
        let mut s = String::with_capacity(self.text.len() + 1024);
        let copied = self.marks.len();
        let _ = write!(
            s,
            "<div class=\"textview\"><div class=\"pagetext\">{}</div><aside class=\"sources\"><h3>Sources</h3>",
            self.text
        );
        if self.sources.is_empty() {
            s.push_str("<p class=\"muted\">No block of this page is in the label set.</p>");
        } else {
            let _ = write!(s, "<p class=\"muted\">{copied} highlighted blocks</p><ol>");
            for r in &self.sources {
                let _ = write!(s, "<li id=\"src-{}\">{}<br><small>", r.id, r.link);
                if r.chunks > 0 {
                    let _ = write!(s, "{} labeled chunks counted · ", r.chunks);
                }
                match r.first {
                    Some(b) => {
                        let _ = write!(s, "<a href=\"#b{b}\">{} highlighted</a>", r.passages);
                    }
                    None => s.push_str("none highlighted"),
                }
                s.push_str("</small></li>");
            }
            s.push_str("</ol>");
        }
        s.push_str("</aside></div>");
        s
    }
}

/// The page view's styles (in the page's nonce'd style sheet).
pub const STYLE: &str = ".textview{display:grid;grid-template-columns:minmax(0,3fr) minmax(200px,1fr);gap:16px;align-items:start}\
@media (max-width:800px){.textview{grid-template-columns:1fr}}\
.textview aside{position:sticky;top:8px;border-left:3px solid #ffca28;padding:4px 10px;background:#fffdf5}\
.textview aside h3{margin:2px 0 4px;font-size:14px}.textview aside ol{padding-left:20px;margin:4px 0}.textview aside li{margin:4px 0;word-break:break-word}\
.pagetext mark{background:#ffe082;padding:1px 0}.pagetext a.ref{font-family:sans-serif;font-size:11px;text-decoration:none;vertical-align:super}\
.pagetext p:target,.pagetext mark:target{outline:2px solid #f0b400}";

#[cfg(test)]
mod tests {
    use super::*;

    fn link(id: u32) -> String {
        format!("<a href=\"http://s.test/{id}\">S{id}</a>")
    }

    #[test]
    fn copied_blocks_are_marked_in_place_in_order_and_escaped() {
        let blocks: Vec<String> = [
            "Menu",
            "First copied <script>alert(1)</script> paragraph\u{1b}[31m",
            "Own words",
            "Second copied paragraph",
            "Third, from another source",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let copied = [None, Some(7), None, Some(7), Some(3)];
        let m = marked_text(&blocks, &copied, &[(3, 9), (7, 2)], &link);
        // Highlights are exactly the copied blocks, in page order.
        assert_eq!(m.marks, vec![(1, 7), (3, 7), (4, 3)]);
        let marked: Vec<&str> = m
            .text
            .split("<mark ")
            .skip(1)
            .map(|x| x.split_once('>').unwrap().1.split("</mark>").next().unwrap())
            .collect();
        assert_eq!(
            marked,
            vec![
                "First copied &lt;script&gt;alert(1)&lt;/script&gt; paragraph\u{FFFD}[31m",
                "Second copied paragraph",
                "Third, from another source"
            ]
        );
        assert!(!m.text.contains("<script") && !m.text.contains('\u{1b}'));
        // The list follows the store's counts; references point at it.
        assert_eq!(m.sources.iter().map(|s| s.id).collect::<Vec<_>>(), vec![3, 7]);
        assert_eq!(m.sources[1].passages, 2);
        assert_eq!(m.sources[1].first, Some(1));
        assert!(m.text.contains("<mark id=\"b1\" data-source=\"7\">"));
        assert!(m.text.contains("href=\"#src-7\" title=\"source 2\">[2]</a>"));
        assert!(m.text.contains("<p class=\"other\" id=\"b2\">Own words</p>"));
        let h = m.html();
        assert!(h.contains("<li id=\"src-3\"><a href=\"http://s.test/3\">S3</a><br><small>9 labeled chunks counted · <a href=\"#b4\">1 highlighted</a>"), "{h}");
    }

    #[test]
    fn sources_only_in_the_text_follow_and_counted_ones_without_blocks_say_so() {
        let blocks = vec!["a".to_string(), "b".to_string()];
        let m = marked_text(&blocks, &[Some(5), None], &[(9, 4)], &link);
        assert_eq!(m.sources.iter().map(|s| s.id).collect::<Vec<_>>(), vec![9, 5]);
        assert!(m.html().contains("none highlighted"));
        assert!(m.text.contains("[2]"));
        let none = marked_text(&blocks, &[], &[], &link);
        assert!(none.marks.is_empty());
        assert!(none.html().contains("No block of this page is in the label set."));
    }
}
