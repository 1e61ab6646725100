//! HTML → text blocks + links with html5ever's bare tokenizer and our own `TokenSink`.
//!
//! No DOM is built: block boundaries are decided from the token stream alone, which is what
//! makes cleaning run near the tokenizer's own speed. The chunking rule is the paper's
//! "minimal understanding of the semantics of the text" (§3.1 step 2): a chunk is the text
//! between two block-level tag boundaries.
//!
//! Robustness against broken markup: there is no element stack that has to balance. Block
//! boundaries are single tags (a stray `</div>` just ends a block, an unclosed `<p>` is ended
//! by the next block tag or EOF); skipped regions are either raw-text elements, which the
//! tokenizer itself ends at their end tag or EOF, or `<template>`/`<head>`, tracked with a
//! saturating counter and a flag. Nothing here can panic or loop on input.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts, TokenizerResult,
};
use html5ever::{local_name, LocalName};
use url::Url;

use super::guard::GuardedText;
use crate::blocks::TextBlocks;

/// Longest block kept in one piece (bytes of UTF-8). A longer run of text without a block
/// boundary (a 50 MB `<pre>`, a page that is one huge text node) is cut into several blocks
/// of at most this size, at character boundaries, so no single chunk is unbounded.
pub const MAX_BLOCK_BYTES: usize = 1 << 20;
/// Most blocks kept per page; text after that is dropped and `truncated` is set.
pub const MAX_BLOCKS: usize = 200_000;
/// Most links kept per page; further links are dropped and `truncated` is set.
pub const MAX_LINKS: usize = 100_000;
/// Deepest block-element stack tracked for [`super::CleanedDoc::block_tags`]; deeper
/// nesting (only seen in broken or hostile markup) is ignored for tagging, not for text.
pub const MAX_NESTING: usize = 256;
/// Input is fed to the tokenizer in pieces of at most this many bytes (tendrils hold at most
/// 4 GiB).
const FEED_PIECE: usize = 1 << 30;
/// Longest anchor text kept per link (bytes, cut at a character boundary): enough to name
/// a page, bounded so that a page of many links cannot hold much memory through them.
pub const MAX_ANCHOR_BYTES: usize = 120;

/// What the sink collected.
pub(crate) struct HtmlOut {
    pub blocks: TextBlocks,
    pub block_tags: Vec<&'static str>,
    pub links: Vec<String>,
    /// The anchor text of each link (parallel to `links`; at most [`MAX_ANCHOR_BYTES`]).
    pub anchors: Vec<String>,
    pub truncated: bool,
    /// Attributes the guard removed before tokenizing ([`super::guard`]).
    pub attributes_dropped: u64,
    /// Most attributes the tokenizer gave any one tag: at most
    /// [`super::guard::MAX_ATTRIBUTES_PER_TAG`]. Read by the guard's tests.
    #[cfg_attr(not(test), allow(dead_code))]
    pub max_attributes_seen: usize,
}

/// Tokenize `text` and collect blocks (and links when `page_url` handling is on).
pub(crate) fn clean_html(text: &str, base_url: Option<&str>, extract_links: bool) -> HtmlOut {
    clean_html_with(text, base_url, extract_links, true)
}

/// [`clean_html`]; `strip_unread`: the guard also removes the attributes and inline tags the
/// sink does not read before tokenizing ([`super::guard::prepare`]; `href` and links' tags
/// too when links are not collected), which changes nothing in the output (the tests compare
/// both ways) and saves the tokenizer most of the markup.
pub(crate) fn clean_html_with(
    text: &str,
    base_url: Option<&str>,
    extract_links: bool,
    strip_unread: bool,
) -> HtmlOut {
    use super::guard::Strip;
    let strip = match (strip_unread, extract_links) {
        (false, _) => Strip::Nothing,
        (true, true) => Strip::KeepLinks,
        (true, false) => Strip::TextOnly,
    };
    let guarded = super::guard::prepare(text, super::guard::MAX_ATTRIBUTES_PER_TAG, strip);
    let text: &str = guarded.text.as_str();
    let page_url = if extract_links { base_url.and_then(|u| Url::parse(u).ok()) } else { None };
    // Room for the usual share of text (a third of the HTML on markup-heavy pages, two
    // thirds on articles) and about one block per 250 bytes, so the buffers rarely regrow;
    // capped, as a huge page's blocks may be mostly markup.
    let (text_room, block_room) = ((text.len() / 2).min(1 << 20), (text.len() / 256).min(1 << 14));
    let sink = Sink(RefCell::new(State {
        blocks: TextBlocks::with_capacity(text_room, block_room),
        block_tags: Vec::with_capacity(block_room),
        cur_has_text: false,
        stack: Vec::new(),
        raw: Raw::None,
        template_depth: 0,
        in_head: false,
        extract_links,
        page_url,
        base_seen: false,
        links: Vec::new(),
        anchors: Vec::new(),
        anchor_from: None,
        truncated: false,
        max_attributes_seen: 0,
    }));
    let tok = Tokenizer::new(sink, TokenizerOpts::default());
    let queue = BufferQueue::default();
    let mut rest = text;
    // The guard's own tendril, when it made one that fits a piece, is fed as it is.
    if let GuardedText::Owned(t) = &guarded.text {
        if t.len() <= FEED_PIECE {
            queue.push_back(t.clone());
            while let TokenizerResult::Script(()) = tok.feed(&queue) {}
            rest = "";
        }
    }
    while !rest.is_empty() {
        let mut cut = rest.len().min(FEED_PIECE);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        queue.push_back(StrTendril::from_slice(&rest[..cut]));
        rest = &rest[cut..];
        // Our sink never returns `Script`, so this is always `Done`; loop anyway.
        while let TokenizerResult::Script(()) = tok.feed(&queue) {}
    }
    tok.end();
    let mut st = tok.sink.0.into_inner();
    st.end_anchor();
    HtmlOut {
        blocks: st.blocks,
        block_tags: st.block_tags,
        links: st.links,
        anchors: st.anchors,
        truncated: st.truncated || guarded.attributes_dropped > 0,
        attributes_dropped: guarded.attributes_dropped,
        max_attributes_seen: st.max_attributes_seen,
    }
}

/// Inside a raw-text element: its content arrives as character tokens until its end tag.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Raw {
    None,
    /// `script`, `style`, `title`, `textarea`, ...: content dropped.
    Skip,
    /// `xmp`: displayed literally, so its content is text.
    Keep,
}

struct State {
    /// Finished blocks, and the block being built (raw, whitespace kept) at the buffer's end.
    blocks: TextBlocks,
    block_tags: Vec<&'static str>,
    /// The open block has a non-whitespace character.
    cur_has_text: bool,
    /// Open block elements, innermost last; only used to tag blocks.
    stack: Vec<u8>,
    raw: Raw,
    template_depth: u32,
    in_head: bool,
    extract_links: bool,
    /// Base for resolving links: the page URL, replaced by the first `<base href>`.
    page_url: Option<Url>,
    base_seen: bool,
    links: Vec<String>,
    /// Anchor text per link in `links`; filled when the link's element ends.
    anchors: Vec<String>,
    /// The open `<a>`: where its text starts in the block buffer.
    anchor_from: Option<usize>,
    truncated: bool,
    max_attributes_seen: usize,
}

struct Sink(RefCell<State>);

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut st = self.0.borrow_mut();
        // Matched by reference: moving the token's fields out copies them with wide loads
        // across the tokenizer's narrower stores, which the CPU cannot forward.
        match &token {
            Token::CharacterTokens(t) => st.text(t),
            Token::TagToken(tag) => return st.tag(tag),
            Token::EOFToken => st.flush(),
            // Comments, doctypes, NULs and parse errors carry no visible text.
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// `t.chars().all(char::is_whitespace)`, with ASCII text decided byte by byte.
#[inline]
fn is_all_whitespace(t: &str) -> bool {
    let b = t.as_bytes();
    match b.iter().position(|&c| !matches!(c, b' ' | b'\n' | b'\t' | b'\r' | b'\x0b' | b'\x0c')) {
        None => true,
        Some(i) => b[i] >= 0x80 && t.get(i..).is_some_and(|rest| rest.chars().all(char::is_whitespace)),
    }
}

/// Block-level elements: a start or end tag of one ends the current block. A block is
/// tagged with the innermost open one ([`super::CleanedDoc::block_tags`]); the open ones are
/// held as indexes into this list.
const BLOCK_NAMES: [&str; 55] = [
    "p",
    "div",
    "li",
    "td",
    "th",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "dl",
    "dd",
    "dt",
    "pre",
    "blockquote",
    "table",
    "tbody",
    "thead",
    "tfoot",
    "caption",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
    "figure",
    "figcaption",
    "form",
    "fieldset",
    "legend",
    "address",
    "details",
    "summary",
    "dialog",
    "hgroup",
    "hr",
    "center",
    "menu",
    "dir",
    "listing",
    "search",
    "select",
    "option",
    "optgroup",
    "frameset",
    "body",
    "html",
    "xmp",
    "plaintext",
];

/// Elements that may appear in `<head>`; any other start tag ends the head (as in the HTML
/// tree builder's "in head" insertion mode).
const HEAD_ELEMENTS: [&str; 13] = [
    "meta", "link", "title", "style", "script", "noscript", "base", "basefont", "bgsound", "template",
    "noframes", "head", "html",
];

/// Block elements that cannot contain themselves: a new one implicitly closes an open one.
fn self_closing_block(name: &str) -> bool {
    matches!(
        name,
        "p" | "li" | "dd" | "dt" | "td" | "th" | "tr" | "option" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
    )
}

/// What a tag name means to the cleaner, from one table lookup ([`TagTable`]) instead of a
/// chain of comparisons per tag (most tags are inline and would go through every one).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TagClass {
    /// Inline or unknown: ignored.
    Other,
    /// A block element, as its index in [`BLOCK_NAMES`].
    Block(u8),
    /// Raw-text elements whose content is dropped, with the tokenizer state they need.
    Script,
    Rawtext,
    Rcdata,
    /// `xmp`: raw text that is shown, so kept (also a block).
    Xmp,
    /// `plaintext`: literal text to EOF (also a block).
    Plaintext,
    Br,
    /// `a` and `area`: links.
    Link,
    Base,
    Head,
    Template,
}

/// A name's class and whether it may appear in `<head>`.
#[derive(Clone, Copy, Debug)]
struct TagInfo {
    class: TagClass,
    in_head: bool,
}

const OTHER_TAG: TagInfo = TagInfo { class: TagClass::Other, in_head: false };

/// Tag name → [`TagInfo`] for every name above, keyed by the atom's 64-bit representation
/// (html5ever keeps names of up to 7 bytes inline in it, and longer known names as static
/// atoms, so equal names have equal keys). A multiplicative hash that puts every listed name
/// in its own slot is found once; a lookup is then one multiply, one load and one compare,
/// with no branch per candidate name.
struct TagTable {
    bits: u32,
    multiplier: u64,
    keys: Vec<u64>,
    infos: Vec<TagInfo>,
}

impl TagTable {
    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(self.multiplier) >> (64 - self.bits)) as usize
    }

    #[inline]
    fn get(&self, name: &LocalName) -> TagInfo {
        let key = name.unsafe_data();
        let i = self.slot(key);
        match (self.keys.get(i), self.infos.get(i)) {
            (Some(&k), Some(&info)) if k == key => info,
            _ => OTHER_TAG,
        }
    }

    fn build() -> TagTable {
        let mut named: Vec<(u64, TagInfo)> = Vec::new();
        let mut set = |name: &str, f: &dyn Fn(&mut TagInfo)| {
            let key = LocalName::from(name).unsafe_data();
            let at = match named.iter().position(|(k, _)| *k == key) {
                Some(at) => at,
                None => {
                    named.push((key, OTHER_TAG));
                    named.len() - 1
                }
            };
            f(&mut named[at].1);
        };
        for (i, name) in BLOCK_NAMES.iter().enumerate() {
            set(name, &|t| t.class = TagClass::Block(i as u8));
        }
        for (names, class) in [
            (&["script"][..], TagClass::Script),
            (&["style", "noscript", "iframe", "noembed", "noframes"][..], TagClass::Rawtext),
            (&["title", "textarea"][..], TagClass::Rcdata),
            (&["xmp"][..], TagClass::Xmp),
            (&["plaintext"][..], TagClass::Plaintext),
            (&["br"][..], TagClass::Br),
            (&["a", "area"][..], TagClass::Link),
            (&["base"][..], TagClass::Base),
            (&["head"][..], TagClass::Head),
            (&["template"][..], TagClass::Template),
        ] {
            for name in names {
                set(name, &|t| t.class = class);
            }
        }
        for name in HEAD_ELEMENTS {
            set(name, &|t| t.in_head = true);
        }
        // A multiplier with no two names in one slot: at 512 slots for ~80 names about one
        // odd multiplier in 100 works; more slots if none of the first 100,000 does.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for bits in 9..=20 {
            for _ in 0..100_000 {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                let multiplier = (z ^ (z >> 31)) | 1;
                let mut table = TagTable {
                    bits,
                    multiplier,
                    keys: vec![0; 1 << bits],
                    infos: vec![OTHER_TAG; 1 << bits],
                };
                // An atom's representation is never 0, so 0 marks an empty slot.
                if named.iter().all(|&(key, info)| {
                    let i = table.slot(key);
                    let free = table.keys[i] == 0;
                    table.keys[i] = key;
                    table.infos[i] = info;
                    free
                }) {
                    return table;
                }
            }
        }
        // Unreachable in practice (2^20 slots for ~80 keys); an empty table would only
        // make every tag inline, never a crash.
        TagTable { bits: 1, multiplier: 1, keys: vec![0; 2], infos: vec![OTHER_TAG; 2] }
    }
}

fn tag_table() -> &'static TagTable {
    static TABLE: std::sync::OnceLock<TagTable> = std::sync::OnceLock::new();
    TABLE.get_or_init(TagTable::build)
}

fn tag_info(name: &LocalName) -> TagInfo {
    tag_table().get(name)
}

/// The block index of `name` (`xmp` and `plaintext` included), or `None`.
fn block_index(class: TagClass) -> Option<u8> {
    match class {
        TagClass::Block(i) => Some(i),
        TagClass::Xmp => Some(XMP),
        TagClass::Plaintext => Some(PLAINTEXT),
        _ => None,
    }
}

const XMP: u8 = 53;
const PLAINTEXT: u8 = 54;
const HR: u8 = 41;
const P: u8 = 0;
const _: () = assert!(
    matches!(BLOCK_NAMES[XMP as usize].as_bytes(), b"xmp")
        && matches!(BLOCK_NAMES[PLAINTEXT as usize].as_bytes(), b"plaintext")
        && matches!(BLOCK_NAMES[HR as usize].as_bytes(), b"hr")
        && matches!(BLOCK_NAMES[P as usize].as_bytes(), b"p")
);

impl State {
    fn skipping(&self) -> bool {
        self.raw == Raw::Skip || self.template_depth > 0 || self.in_head
    }

    fn text(&mut self, t: &str) {
        if self.raw == Raw::Skip || self.template_depth > 0 {
            return;
        }
        if self.in_head {
            // Non-blank text in <head> is displayed by browsers (the head is implicitly closed).
            if t.chars().all(char::is_whitespace) {
                return;
            }
            self.in_head = false;
        }
        // One byte: most often a `\n`, which the tokenizer emits as a token of its own
        // (about 15,000 per MB of the Debian docs); pushed without a copy call.
        if let [b] = t.as_bytes() {
            if self.blocks.open_len() < MAX_BLOCK_BYTES {
                if !self.cur_has_text && !matches!(b, b' ' | b'\n' | b'\t' | b'\r' | b'\x0b' | b'\x0c') {
                    self.cur_has_text = true;
                }
                self.blocks.buffer_mut().push(char::from(*b));
                return;
            }
        }
        self.append(t);
    }

    /// Append raw text to the current block, cutting at `MAX_BLOCK_BYTES`.
    fn append(&mut self, mut t: &str) {
        while self.blocks.open_len() + t.len() > MAX_BLOCK_BYTES {
            let mut cut = MAX_BLOCK_BYTES.saturating_sub(self.blocks.open_len());
            while !t.is_char_boundary(cut) {
                cut -= 1;
            }
            self.push_piece(&t[..cut]);
            // Always empties the open block, so the loop makes progress.
            self.flush();
            t = &t[cut..];
        }
        self.push_piece(t);
    }

    fn push_piece(&mut self, t: &str) {
        if !self.cur_has_text && !is_all_whitespace(t) {
            self.cur_has_text = true;
        }
        self.blocks.buffer_mut().push_str(t);
    }

    /// End the current block; keep it unless it is entirely whitespace.
    fn flush(&mut self) {
        if self.cur_has_text && self.blocks.len() < MAX_BLOCKS {
            self.blocks.commit();
            self.block_tags.push(self.stack.last().map_or("", |&b| BLOCK_NAMES[b as usize]));
        } else {
            if self.cur_has_text {
                self.truncated = true;
            }
            self.blocks.discard_open();
        }
        self.cur_has_text = false;
    }

    fn tag(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        self.max_attributes_seen = self.max_attributes_seen.max(tag.attrs.len());
        match tag.kind {
            TagKind::StartTag => self.start_tag(tag),
            TagKind::EndTag => {
                self.end_tag(&tag.name);
                TokenSinkResult::Continue
            }
        }
    }

    fn start_tag(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        let info = tag_info(&tag.name);
        if self.in_head && !info.in_head {
            self.in_head = false;
        }
        match info.class {
            TagClass::Other => TokenSinkResult::Continue,
            TagClass::Block(b) => {
                self.open_block(b);
                TokenSinkResult::Continue
            }
            class => self.special_start_tag(class, tag),
        }
    }

    /// A start tag of one of the few elements with their own rule.
    fn special_start_tag(&mut self, class: TagClass, tag: &Tag) -> TokenSinkResult<()> {
        // Raw-text elements: the tokenizer must be switched, or it would parse their content
        // as markup ("</p><p>" inside a script would become real tags).
        let raw = |kind: RawKind| TokenSinkResult::RawData(kind);
        match class {
            TagClass::Other | TagClass::Block(_) => {}
            TagClass::Script => {
                self.raw = Raw::Skip;
                return raw(RawKind::ScriptData);
            }
            TagClass::Rawtext => {
                self.raw = Raw::Skip;
                return raw(RawKind::Rawtext);
            }
            TagClass::Rcdata => {
                self.raw = Raw::Skip;
                return raw(RawKind::Rcdata);
            }
            TagClass::Xmp => {
                self.open_block(XMP);
                self.raw = Raw::Keep;
                return raw(RawKind::Rawtext);
            }
            TagClass::Br => {
                if !self.skipping() {
                    self.blocks.buffer_mut().push(' ');
                }
            }
            TagClass::Link => {
                if self.extract_links && !self.skipping() {
                    self.link(tag);
                }
            }
            TagClass::Base => {
                if self.extract_links && !self.base_seen {
                    self.base(tag);
                }
            }
            TagClass::Head => {
                self.flush();
                self.in_head = true;
            }
            TagClass::Template => self.template_depth = self.template_depth.saturating_add(1),
            TagClass::Plaintext => {
                // Everything after `<plaintext>` is literal text to EOF.
                self.open_block(PLAINTEXT);
                return TokenSinkResult::Plaintext;
            }
        }
        TokenSinkResult::Continue
    }

    fn end_tag(&mut self, name: &LocalName) {
        if self.raw != Raw::None {
            // In a raw-text state the only end tag the tokenizer emits is the element's own.
            if self.raw == Raw::Keep {
                self.close_block(XMP);
            }
            self.raw = Raw::None;
            return;
        }
        let class = tag_info(name).class;
        if let TagClass::Block(b) = class {
            self.close_block(b);
            return;
        }
        match class {
            TagClass::Head => self.in_head = false,
            TagClass::Template => self.template_depth = self.template_depth.saturating_sub(1),
            TagClass::Link => self.end_anchor(),
            TagClass::Br => {
                // `</br>` is treated as `<br>` by browsers.
                if !self.skipping() {
                    self.blocks.buffer_mut().push(' ');
                }
            }
            _ => {
                if let Some(b) = block_index(class) {
                    self.close_block(b);
                }
            }
        }
    }

    /// Open block element `b` (an index into [`BLOCK_NAMES`]).
    fn open_block(&mut self, b: u8) {
        self.flush();
        if let Some(&top) = self.stack.last() {
            // <p><p>, <li><li>, ...: the new element closes the open one; and any block
            // start closes an open <p> (HTML's "close a p element").
            if (top == b && self_closing_block(BLOCK_NAMES[b as usize])) || top == P {
                self.stack.pop();
            }
        }
        if b == HR {
            return; // void: nothing to tag
        }
        if self.stack.len() < MAX_NESTING {
            self.stack.push(b);
        }
    }

    fn close_block(&mut self, b: u8) {
        self.flush();
        // Pop up to the innermost open element of that name; a stray end tag pops nothing.
        if let Some(i) = self.stack.iter().rposition(|&n| n == b) {
            self.stack.truncate(i);
        }
    }

    fn href(tag: &Tag) -> Option<&str> {
        tag.attrs.iter().find(|a| a.name.local == local_name!("href")).map(|a| &*a.value)
    }

    /// The open link's anchor: the text collected since it started (across blocks; text a
    /// dropped block took with it is lost), whitespace collapsed, at most
    /// [`MAX_ANCHOR_BYTES`].
    fn end_anchor(&mut self) {
        let Some(from) = self.anchor_from.take() else { return };
        let buf = self.blocks.buffer_mut();
        let Some(text) = buf.get(from..) else { return };
        let mut out = String::new();
        for word in text.split_whitespace() {
            if out.len() + word.len() + 1 > MAX_ANCHOR_BYTES {
                break;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
        }
        if let Some(slot) = self.anchors.last_mut() {
            *slot = out;
        }
    }

    fn base(&mut self, tag: &Tag) {
        let Some(href) = Self::href(tag) else { return };
        self.base_seen = true;
        let resolved = match &self.page_url {
            Some(u) => u.join(href),
            None => Url::parse(href),
        };
        if let Ok(u) = resolved {
            if !u.cannot_be_a_base() {
                self.page_url = Some(u);
            }
        }
    }

    fn link(&mut self, tag: &Tag) {
        let Some(href) = Self::href(tag) else { return };
        let h = href.trim_start();
        // Cheap rejection before URL parsing.
        for scheme in ["javascript:", "mailto:", "data:", "tel:"] {
            if h.len() >= scheme.len() && h.as_bytes()[..scheme.len()].eq_ignore_ascii_case(scheme.as_bytes())
            {
                return;
            }
        }
        let resolved = match &self.page_url {
            Some(u) => u.join(h),
            None => Url::parse(h),
        };
        let Ok(mut u) = resolved else { return };
        // Only what a web crawler can fetch.
        if !matches!(u.scheme(), "http" | "https" | "ftp") {
            return;
        }
        u.set_fragment(None);
        if self.links.len() < MAX_LINKS {
            // An `<a>` left open ends where the next one starts (as browsers do).
            self.end_anchor();
            self.links.push(u.into());
            self.anchors.push(String::new());
            self.anchor_from = Some(self.blocks.buffer_mut().len());
        } else {
            self.truncated = true;
        }
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;

    #[test]
    fn every_listed_name_has_its_class() {
        for (i, name) in BLOCK_NAMES.iter().enumerate() {
            let info = tag_info(&LocalName::from(*name));
            assert_eq!(block_index(info.class), Some(i as u8), "{name}");
        }
        for name in HEAD_ELEMENTS {
            assert!(tag_info(&LocalName::from(name)).in_head, "{name}");
        }
        let class = |n: &str| tag_info(&LocalName::from(n)).class;
        assert_eq!(class("script"), TagClass::Script);
        assert_eq!(class("iframe"), TagClass::Rawtext);
        assert_eq!(class("textarea"), TagClass::Rcdata);
        assert_eq!(class("area"), TagClass::Link);
        assert_eq!(class("span"), TagClass::Other);
        assert_eq!(class("my-element"), TagClass::Other);
        assert!(!tag_info(&LocalName::from("div")).in_head);
    }

    /// The guard cuts inline tags whole (`guard.rs`, `prepare`): only names the sink does
    /// nothing with outside the head, links' tags only when links are not collected.
    #[test]
    fn tags_the_guard_cuts_are_inert() {
        for name in super::super::guard::INLINE_TAGS.iter().chain(&["a", "area"]) {
            let info = tag_info(&LocalName::from(*name));
            assert!(
                matches!(info.class, TagClass::Other | TagClass::Link) && !info.in_head,
                "{name}: {info:?}"
            );
        }
        assert!(!tag_info(&LocalName::from("body")).in_head);
    }

    #[test]
    fn whitespace_test_equals_char_is_whitespace() {
        for t in [
            "",
            " ",
            " \n\t\r\x0b\x0c",
            "a",
            " a",
            "\u{a0}",
            " \u{a0} ",
            " \u{a0}x",
            "\u{3000}\u{2003}",
            "\u{85}",
            "é",
        ] {
            assert_eq!(is_all_whitespace(t), t.chars().all(char::is_whitespace), "{t:?}");
        }
    }
}
