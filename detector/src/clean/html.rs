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
const MAX_STACK: usize = 256;
/// Input is fed to the tokenizer in pieces of at most this many bytes (tendrils hold at most
/// 4 GiB).
const FEED_PIECE: usize = 1 << 30;

/// What the sink collected.
pub(crate) struct HtmlOut {
    pub blocks: TextBlocks,
    pub block_tags: Vec<&'static str>,
    pub links: Vec<String>,
    pub truncated: bool,
}

/// Tokenize `text` and collect blocks (and links when `page_url` handling is on).
pub(crate) fn clean_html(text: &str, base_url: Option<&str>, extract_links: bool) -> HtmlOut {
    let page_url = if extract_links { base_url.and_then(|u| Url::parse(u).ok()) } else { None };
    let sink = Sink(RefCell::new(State {
        blocks: TextBlocks::new(),
        block_tags: Vec::new(),
        cur_has_text: false,
        stack: Vec::new(),
        raw: Raw::None,
        template_depth: 0,
        in_head: false,
        extract_links,
        page_url,
        base_seen: false,
        links: Vec::new(),
        truncated: false,
    }));
    let tok = Tokenizer::new(sink, TokenizerOpts::default());
    let queue = BufferQueue::default();
    let mut rest = text;
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
    let st = tok.sink.0.into_inner();
    HtmlOut { blocks: st.blocks, block_tags: st.block_tags, links: st.links, truncated: st.truncated }
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
    stack: Vec<&'static str>,
    raw: Raw,
    template_depth: u32,
    in_head: bool,
    extract_links: bool,
    /// Base for resolving links: the page URL, replaced by the first `<base href>`.
    page_url: Option<Url>,
    base_seen: bool,
    links: Vec<String>,
    truncated: bool,
}

struct Sink(RefCell<State>);

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut st = self.0.borrow_mut();
        match token {
            Token::CharacterTokens(t) => st.text(&t),
            Token::TagToken(tag) => return st.tag(tag),
            Token::EOFToken => st.flush(),
            // Comments, doctypes, NULs and parse errors carry no visible text.
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// The lower-case name of a block-level element (one whose start or end tag ends the
/// current block), or `None` for inline and unknown elements.
fn block_name(name: &LocalName) -> Option<&'static str> {
    Some(match *name {
        local_name!("p") => "p",
        local_name!("div") => "div",
        local_name!("li") => "li",
        local_name!("td") => "td",
        local_name!("th") => "th",
        local_name!("tr") => "tr",
        local_name!("h1") => "h1",
        local_name!("h2") => "h2",
        local_name!("h3") => "h3",
        local_name!("h4") => "h4",
        local_name!("h5") => "h5",
        local_name!("h6") => "h6",
        local_name!("ul") => "ul",
        local_name!("ol") => "ol",
        local_name!("dl") => "dl",
        local_name!("dd") => "dd",
        local_name!("dt") => "dt",
        local_name!("pre") => "pre",
        local_name!("blockquote") => "blockquote",
        local_name!("table") => "table",
        local_name!("tbody") => "tbody",
        local_name!("thead") => "thead",
        local_name!("tfoot") => "tfoot",
        local_name!("caption") => "caption",
        local_name!("section") => "section",
        local_name!("article") => "article",
        local_name!("header") => "header",
        local_name!("footer") => "footer",
        local_name!("nav") => "nav",
        local_name!("aside") => "aside",
        local_name!("main") => "main",
        local_name!("figure") => "figure",
        local_name!("figcaption") => "figcaption",
        local_name!("form") => "form",
        local_name!("fieldset") => "fieldset",
        local_name!("legend") => "legend",
        local_name!("address") => "address",
        local_name!("details") => "details",
        local_name!("summary") => "summary",
        local_name!("dialog") => "dialog",
        local_name!("hgroup") => "hgroup",
        local_name!("hr") => "hr",
        local_name!("center") => "center",
        local_name!("menu") => "menu",
        local_name!("dir") => "dir",
        local_name!("listing") => "listing",
        local_name!("search") => "search",
        local_name!("select") => "select",
        local_name!("option") => "option",
        local_name!("optgroup") => "optgroup",
        local_name!("frameset") => "frameset",
        local_name!("body") => "body",
        local_name!("html") => "html",
        local_name!("xmp") => "xmp",
        local_name!("plaintext") => "plaintext",
        _ => return None,
    })
}

/// Elements that may appear in `<head>`; any other start tag ends the head (as in the HTML
/// tree builder's "in head" insertion mode).
fn is_head_element(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("meta")
            | local_name!("link")
            | local_name!("title")
            | local_name!("style")
            | local_name!("script")
            | local_name!("noscript")
            | local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("template")
            | local_name!("noframes")
            | local_name!("head")
            | local_name!("html")
    )
}

/// Block elements that cannot contain themselves: a new one implicitly closes an open one.
fn self_closing_block(name: &str) -> bool {
    matches!(
        name,
        "p" | "li" | "dd" | "dt" | "td" | "th" | "tr" | "option" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
    )
}

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
        if !self.cur_has_text && !t.chars().all(char::is_whitespace) {
            self.cur_has_text = true;
        }
        self.blocks.buffer_mut().push_str(t);
    }

    /// End the current block; keep it unless it is entirely whitespace.
    fn flush(&mut self) {
        if self.cur_has_text && self.blocks.len() < MAX_BLOCKS {
            self.blocks.commit();
            self.block_tags.push(self.stack.last().copied().unwrap_or(""));
        } else {
            if self.cur_has_text {
                self.truncated = true;
            }
            self.blocks.discard_open();
        }
        self.cur_has_text = false;
    }

    fn tag(&mut self, tag: Tag) -> TokenSinkResult<()> {
        match tag.kind {
            TagKind::StartTag => self.start_tag(tag),
            TagKind::EndTag => {
                self.end_tag(&tag.name);
                TokenSinkResult::Continue
            }
        }
    }

    fn start_tag(&mut self, tag: Tag) -> TokenSinkResult<()> {
        if self.in_head && !is_head_element(&tag.name) {
            self.in_head = false;
        }
        // Raw-text elements: the tokenizer must be switched, or it would parse their content
        // as markup ("</p><p>" inside a script would become real tags).
        let raw = match tag.name {
            local_name!("script") => Some((Raw::Skip, TokenSinkResult::RawData(RawKind::ScriptData))),
            local_name!("style")
            | local_name!("noscript")
            | local_name!("iframe")
            | local_name!("noembed")
            | local_name!("noframes") => Some((Raw::Skip, TokenSinkResult::RawData(RawKind::Rawtext))),
            local_name!("title") | local_name!("textarea") => {
                Some((Raw::Skip, TokenSinkResult::RawData(RawKind::Rcdata)))
            }
            local_name!("xmp") => Some((Raw::Keep, TokenSinkResult::RawData(RawKind::Rawtext))),
            _ => None,
        };
        if let Some((kind, result)) = raw {
            if kind == Raw::Keep {
                self.open_block("xmp");
            }
            self.raw = kind;
            return result;
        }
        match tag.name {
            local_name!("br") => {
                if !self.skipping() {
                    self.blocks.buffer_mut().push(' ');
                }
            }
            local_name!("a") | local_name!("area") => {
                if self.extract_links && !self.skipping() {
                    self.link(&tag);
                }
            }
            local_name!("base") => {
                if self.extract_links && !self.base_seen {
                    self.base(&tag);
                }
            }
            local_name!("head") => {
                self.flush();
                self.in_head = true;
            }
            local_name!("template") => self.template_depth = self.template_depth.saturating_add(1),
            local_name!("plaintext") => {
                // Everything after `<plaintext>` is literal text to EOF.
                self.open_block("plaintext");
                return TokenSinkResult::Plaintext;
            }
            ref name => {
                if let Some(b) = block_name(name) {
                    self.open_block(b);
                }
            }
        }
        TokenSinkResult::Continue
    }

    fn end_tag(&mut self, name: &LocalName) {
        if self.raw != Raw::None {
            // In a raw-text state the only end tag the tokenizer emits is the element's own.
            if self.raw == Raw::Keep {
                self.close_block("xmp");
            }
            self.raw = Raw::None;
            return;
        }
        match *name {
            local_name!("head") => self.in_head = false,
            local_name!("template") => self.template_depth = self.template_depth.saturating_sub(1),
            local_name!("br") => {
                // `</br>` is treated as `<br>` by browsers.
                if !self.skipping() {
                    self.blocks.buffer_mut().push(' ');
                }
            }
            ref name => {
                if let Some(b) = block_name(name) {
                    self.close_block(b);
                }
            }
        }
    }

    fn open_block(&mut self, name: &'static str) {
        self.flush();
        if let Some(&top) = self.stack.last() {
            // <p><p>, <li><li>, ...: the new element closes the open one; and any block
            // start closes an open <p> (HTML's "close a p element").
            if (top == name && self_closing_block(name)) || top == "p" {
                self.stack.pop();
            }
        }
        if matches!(name, "hr") {
            return; // void: nothing to tag
        }
        if self.stack.len() < MAX_STACK {
            self.stack.push(name);
        }
    }

    fn close_block(&mut self, name: &'static str) {
        self.flush();
        // Pop up to the innermost open element of that name; a stray end tag pops nothing.
        if let Some(i) = self.stack.iter().rposition(|&n| n == name) {
            self.stack.truncate(i);
        }
    }

    fn href(tag: &Tag) -> Option<&str> {
        tag.attrs.iter().find(|a| a.name.local == local_name!("href")).map(|a| &*a.value)
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
            self.links.push(u.into());
        } else {
            self.truncated = true;
        }
    }
}
