//! Clean stage: HTML or plain text → paragraph-level text blocks + outgoing links.
//!
//! The paper chunks each file into paragraphs: "we use minimal understanding of the
//! semantics of the text to break it into chunks" (§3.1 step 2). For HTML a chunk is the
//! text between block-level tag boundaries (`p`, `li`, `td`, `h1`–`h6`, `div`, ...), with
//! inline markup (`a`, `b`, `span`, ...) ignored and `<br>` read as a space; for plain text
//! a chunk is a run of lines between blank lines. Blocks keep their raw whitespace (entities
//! decoded); normalization happens later ([`crate::normalize`]). Blocks that are entirely
//! whitespace are dropped here.
//!
//! Dropped: `<head>` (title included), `script`, `style`, `noscript`, `template`, `iframe`,
//! `noembed`, `noframes`, `textarea` and comments. `xmp` and `plaintext` content is kept as
//! literal text, as browsers show it.
//!
//! No input can make the cleaner panic or loop: any byte sequence cleans to some (possibly
//! empty) list of blocks. Limits for hostile input: [`MAX_BLOCK_BYTES`] per block (longer text is cut into several blocks),
//! [`MAX_BLOCKS`] blocks and [`MAX_LINKS`] links per page (beyond, `truncated` is set),
//! [`MAX_ATTRIBUTES_PER_TAG`] attributes per tag (later ones are dropped before html5ever's
//! tokenizer sees them, which is quadratic in them: see `clean/guard.rs`), and
//! [`MAX_NESTING`] open block elements tracked (deeper nesting costs nothing: no tree is
//! built, and blocks deeper down are tagged with the deepest one tracked).
//!
//! Encodings: see [`encoding`] for the detection order (BOM, HTTP header, `<meta>` prescan,
//! UTF-8, then `chardetng`'s guess).

pub mod baseline;
mod encoding;
mod guard;
mod html;
#[cfg(test)]
mod tests;

pub use guard::MAX_ATTRIBUTES_PER_TAG;
pub use html::{MAX_ANCHOR_BYTES, MAX_BLOCKS, MAX_BLOCK_BYTES, MAX_LINKS, MAX_NESTING};

pub use crate::blocks::{BlockList, TextBlocks};

/// What kind of document the body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    Html,
    Text,
}

/// Options for the cleaner.
#[derive(Debug, Clone)]
pub struct CleanOptions {
    /// Collect `<a href>` / `<area href>` links (resolved against the page URL and any
    /// `<base href>`). Scans may turn this off; then no link work is done at all.
    pub extract_links: bool,
}

impl Default for CleanOptions {
    fn default() -> Self {
        CleanOptions { extract_links: true }
    }
}

/// A cleaned document.
#[derive(Debug, Clone, Default)]
pub struct CleanedDoc {
    /// Paragraph-level text blocks in document order (not yet normalized, never all
    /// whitespace), in one buffer.
    pub blocks: TextBlocks,
    /// For each block, the innermost open block-level element when its text was collected
    /// (`"p"`, `"li"`, `"td"`, `"h2"`, `"div"`, `"body"`, ...); `""` for text outside any
    /// block element and for every block of a plain-text document.
    pub block_tags: Vec<&'static str>,
    /// Absolute outgoing link URLs (http, https, ftp; fragment removed) in document order.
    pub links: Vec<String>,
    /// The anchor text of each link, parallel to `links` (whitespace collapsed, at most
    /// [`MAX_ANCHOR_BYTES`]; empty for `<area>` and for links without text). A focused crawl
    /// scores links by it.
    pub anchors: Vec<String>,
    /// Name of the encoding the body was decoded with (WHATWG name, e.g. `"UTF-8"`,
    /// `"windows-1252"`); `""` when the body was not decoded (`kind` is `None`).
    pub encoding: &'static str,
    /// The kind the body was cleaned as; `None` when it is neither HTML nor text (no blocks).
    pub kind: Option<DocKind>,
    /// A limit ([`MAX_BLOCKS`], [`MAX_LINKS`], [`MAX_ATTRIBUTES_PER_TAG`]) was hit and some
    /// text, links or attributes were dropped.
    pub truncated: bool,
    /// Attributes dropped past [`MAX_ATTRIBUTES_PER_TAG`] (over all tags of the page).
    pub attributes_dropped: u64,
}

/// Decide whether a body is HTML, plain text, or neither.
///
/// An explicit `Content-Type` decides: `text/html` and `application/xhtml+xml` are HTML;
/// `text/plain` (and the prose formats `text/markdown`, `text/x-markdown`, `text/x-rst`) are
/// text; any other explicit type (images, PDF, scripts, CSS, ...) is `None`. A missing,
/// malformed or generic type (`application/octet-stream`, `*/*`, ...) is sniffed: after an
/// optional BOM, whitespace and `<?xml ...?>`, a leading HTML tag from the WHATWG sniffing
/// list (`<!doctype html`, `<html`, `<head`, `<body`, `<p`, `<div`, `<!--`, ...) within the
/// first 512 bytes means HTML; otherwise valid UTF-8 (or a UTF-16 BOM) without NUL bytes
/// means text; anything else is `None`.
pub fn sniff_kind(content_type: Option<&str>, body: &[u8]) -> Option<DocKind> {
    match content_type.map(declared_kind) {
        Some(Declared::Kind(kind)) => Some(kind),
        Some(Declared::Other) => None,
        Some(Declared::Unknown) | None => sniff_body(body),
    }
}

/// What a `Content-Type` header declares, before the body is seen ([`sniff_kind`]'s rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declared {
    /// A type we read.
    Kind(DocKind),
    /// A missing, malformed or generic type: the body decides.
    Unknown,
    /// An explicit type we never read (images, PDF, video, scripts, CSS, ...).
    Other,
}

/// What `content_type` declares: the crawler refuses an [`Declared::Other`] body after the
/// headers, without reading it.
pub fn declared_kind(content_type: &str) -> Declared {
    let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => Declared::Kind(DocKind::Html),
        "text/plain" | "text/markdown" | "text/x-markdown" | "text/x-rst" => Declared::Kind(DocKind::Text),
        ""
        | "*/*"
        | "application/octet-stream"
        | "binary/octet-stream"
        | "application/unknown"
        | "unknown/unknown" => Declared::Unknown,
        m if !m.contains('/') => Declared::Unknown,
        _ => Declared::Other,
    }
}

fn sniff_body(body: &[u8]) -> Option<DocKind> {
    match encoding_rs::Encoding::for_bom(body) {
        Some((enc, bom)) if enc != encoding_rs::UTF_8 => {
            // UTF-16: look at a decoded prefix.
            let end = body.len().min(bom + 1024) & !1;
            let (prefix, _) = enc.decode_without_bom_handling(body.get(bom..end).unwrap_or_default());
            if looks_like_html(prefix.as_bytes()) {
                return Some(DocKind::Html);
            }
            return Some(DocKind::Text);
        }
        Some((_, bom)) => return sniff_utf8ish(&body[bom..]),
        None => {}
    }
    sniff_utf8ish(body)
}

fn sniff_utf8ish(body: &[u8]) -> Option<DocKind> {
    if looks_like_html(body) {
        return Some(DocKind::Html);
    }
    // A body cut mid-character (truncated fetch) is still text.
    let valid = match std::str::from_utf8(body) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    (valid && !body.contains(&0)).then_some(DocKind::Text)
}

/// A leading HTML tag (WHATWG MIME sniffing's "HTML" patterns) within the first 512 bytes.
fn looks_like_html(body: &[u8]) -> bool {
    const TAGS: [&[u8]; 17] = [
        b"<!doctype html",
        b"<html",
        b"<head",
        b"<script",
        b"<iframe",
        b"<h1",
        b"<div",
        b"<font",
        b"<table",
        b"<a",
        b"<style",
        b"<title",
        b"<b",
        b"<body",
        b"<br",
        b"<p",
        b"<!--",
    ];
    let window = &body[..body.len().min(512)];
    let mut pos = 0;
    loop {
        while window.get(pos).is_some_and(|b| b.is_ascii_whitespace()) {
            pos += 1;
        }
        let rest = &window[pos..];
        // XHTML often starts with an XML declaration; look past it.
        if rest.starts_with(b"<?xml") {
            match rest.iter().position(|&b| b == b'>') {
                Some(end) => {
                    pos += end + 1;
                    continue;
                }
                None => return false,
            }
        }
        return TAGS.iter().any(|t| {
            rest.len() > t.len()
                && rest[..t.len()].eq_ignore_ascii_case(t)
                // The tag name must end here ("<p>" yes, "<pre" is not "<p").
                && (t == b"<!--" || matches!(rest[t.len()], b' ' | b'>' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/'))
        });
    }
}

/// Clean `body`: detect its kind ([`sniff_kind`]) and encoding, then split it into blocks
/// (and, for HTML with `opts.extract_links`, collect links resolved against `base_url`).
pub fn clean(
    body: &[u8],
    content_type: Option<&str>,
    base_url: Option<&str>,
    opts: &CleanOptions,
) -> CleanedDoc {
    let Some(kind) = sniff_kind(content_type, body) else {
        return CleanedDoc::default();
    };
    let (encoding, text) = encoding::detect_and_decode(body, content_type, kind == DocKind::Html, base_url);
    let encoding = encoding.name();
    match kind {
        DocKind::Html => {
            let out = html::clean_html(&text, base_url, opts.extract_links);
            CleanedDoc {
                blocks: out.blocks,
                block_tags: out.block_tags,
                links: out.links,
                anchors: out.anchors,
                encoding,
                kind: Some(kind),
                truncated: out.truncated,
                attributes_dropped: out.attributes_dropped,
            }
        }
        DocKind::Text => {
            let (blocks, truncated) = text_blocks(&text);
            CleanedDoc {
                block_tags: vec![""; blocks.len()],
                blocks,
                links: Vec::new(),
                anchors: Vec::new(),
                encoding,
                kind: Some(kind),
                truncated,
                attributes_dropped: 0,
            }
        }
    }
}

/// Plain text: paragraphs are runs of lines separated by blank (whitespace-only) lines;
/// lines of a paragraph are joined with `\n` (CR LF and CR-less endings alike).
fn text_blocks(text: &str) -> (TextBlocks, bool) {
    let mut blocks = TextBlocks::new();
    let mut truncated = false;
    let mut cur = String::new();
    let mut flush = |cur: &mut String, blocks: &mut TextBlocks| {
        if !cur.trim().is_empty() {
            if blocks.len() < MAX_BLOCKS {
                blocks.push(cur);
            } else {
                truncated = true;
            }
        }
        cur.clear();
    };
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.chars().all(char::is_whitespace) {
            flush(&mut cur, &mut blocks);
            continue;
        }
        if !cur.is_empty() {
            if cur.len() + 1 + line.len() > MAX_BLOCK_BYTES {
                flush(&mut cur, &mut blocks);
            } else {
                cur.push('\n');
            }
        }
        let mut rest = line;
        while cur.len() + rest.len() > MAX_BLOCK_BYTES {
            let mut cut = MAX_BLOCK_BYTES - cur.len();
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            cur.push_str(&rest[..cut]);
            flush(&mut cur, &mut blocks);
            rest = &rest[cut..];
        }
        cur.push_str(rest);
    }
    flush(&mut cur, &mut blocks);
    (blocks, truncated)
}
