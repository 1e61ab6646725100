//! What an input is, told by its content, never its name: the compression by its magic
//! bytes, then the first bytes after decompression.

use std::fmt;
use std::io::{BufRead, Read};
use std::path::Path;

use crate::{io_err, Result};

/// How much decompressed data is looked at.
pub const SNIFF_BYTES: usize = 64 * 1024;

/// Compression, by magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Bzip2,
}

impl Compression {
    pub fn of(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Compression::Bzip2
        } else {
            Compression::None
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "uncompressed",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
        })
    }
}

/// What the decompressed content is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// A MediaWiki XML export (`<mediawiki`, after an optional `<?xml …?>` and comments).
    MediaWikiXml,
    /// NDJSON whose first line has Wikimedia Enterprise fields (`name`, `article_body`).
    EnterpriseNdjson,
    /// JSON lines without them: read as Enterprise NDJSON, every line skipped and counted.
    OtherJson,
    /// The wikitext of one page (`{{` first, or `[[links]]` with bold quotes, templates or
    /// `== headings ==` in the first bytes).
    Wikitext,
    /// A tar archive (`ustar` magic at byte 257): members are read one by one.
    Tar,
    /// A WARC file (`WARC/1.x`).
    Warc,
    /// One HTML document.
    Html,
    /// One plain-text document.
    Text,
    /// Nothing at all.
    Empty,
    /// Binary data none of the above.
    Binary,
}

impl fmt::Display for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Content::MediaWikiXml => "a MediaWiki XML dump",
            Content::EnterpriseNdjson => "a Wikimedia Enterprise NDJSON dump",
            Content::OtherJson => "JSON lines without Wikimedia Enterprise fields (name, article_body)",
            Content::Tar => "a tar archive",
            Content::Warc => "a WARC file",
            Content::Wikitext => "the wikitext of one page",
            Content::Html => "one HTML document",
            Content::Text => "one plain-text document",
            Content::Empty => "an empty file",
            Content::Binary => "binary data of no known kind",
        })
    }
}

/// What an input file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniffed {
    pub compression: Compression,
    pub content: Content,
}

impl fmt::Display for Sniffed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.compression {
            Compression::None => write!(f, "{}", self.content),
            c => write!(f, "{} ({c})", self.content),
        }
    }
}

fn skip_ws(mut b: &[u8]) -> &[u8] {
    if let Some(rest) = b.strip_prefix(b"\xef\xbb\xbf") {
        b = rest;
    }
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

fn starts_with_ignore_case(b: &[u8], p: &[u8]) -> bool {
    b.len() >= p.len() && b[..p.len()].eq_ignore_ascii_case(p)
}

/// Skip `<?xml …?>`, `<!-- … -->` and whitespace at the start of an XML document.
fn skip_xml_prolog(mut b: &[u8]) -> &[u8] {
    loop {
        b = skip_ws(b);
        let end = if b.starts_with(b"<?") {
            b.windows(2).position(|w| w == b"?>").map(|p| p + 2)
        } else if b.starts_with(b"<!--") {
            b.windows(3).position(|w| w == b"-->").map(|p| p + 3)
        } else {
            return b;
        };
        match end {
            Some(e) => b = &b[e..],
            None => return b,
        }
    }
}

pub use crate::tar::is_tar_header;

/// Classify decompressed content by its first bytes.
pub fn content_of(head: &[u8]) -> Content {
    if head.is_empty() {
        return Content::Empty;
    }
    if is_tar_header(head) {
        return Content::Tar;
    }
    let b = skip_ws(head);
    if b.is_empty() {
        return Content::Empty;
    }
    if b.starts_with(b"WARC/") {
        return Content::Warc;
    }
    if b.starts_with(b"{{") {
        return Content::Wikitext;
    }
    if b.starts_with(b"{") {
        let line = b.split(|&c| c == b'\n').next().unwrap_or(b);
        let has = |k: &[u8]| line.windows(k.len()).any(|w| w == k);
        return if has(b"\"name\"") && has(b"\"article_body\"") {
            Content::EnterpriseNdjson
        } else {
            Content::OtherJson
        };
    }
    let x = skip_xml_prolog(b);
    if x.starts_with(b"<mediawiki") {
        return Content::MediaWikiXml;
    }
    if starts_with_ignore_case(x, b"<!doctype html") || starts_with_ignore_case(x, b"<html") {
        return Content::Html;
    }
    if x.starts_with(b"<") && x.len() > 1 && (x[1].is_ascii_alphabetic() || x[1] == b'!') {
        // Some other markup: HTML fragments and tag soup are cleaned as HTML.
        return Content::Html;
    }
    let sample = &head[..head.len().min(8192)];
    if sample.contains(&0) || std::str::from_utf8(trim_partial_utf8(sample)).is_err() {
        return Content::Binary;
    }
    let has = |k: &[u8]| sample.windows(k.len()).any(|w| w == k);
    if has(b"[[") && has(b"]]") && (has(b"'''") || has(b"{{") || has(b"\n==")) {
        return Content::Wikitext;
    }
    Content::Text
}

/// `b` without an incomplete UTF-8 sequence cut at its end.
fn trim_partial_utf8(b: &[u8]) -> &[u8] {
    match std::str::from_utf8(b) {
        Ok(_) => b,
        Err(e) if e.error_len().is_none() => &b[..e.valid_up_to()],
        Err(_) => b,
    }
}

/// Read up to [`SNIFF_BYTES`] from a reader without consuming them from `r`'s point of view:
/// the bytes are returned, to be chained before the rest.
pub fn peek(r: &mut impl Read, path: &Path) -> Result<Vec<u8>> {
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    r.by_ref().take(SNIFF_BYTES as u64).read_to_end(&mut head).map_err(io_err(path))?;
    Ok(head)
}

/// Sniff a stream: returns what it is and a reader that yields it from its first byte.
pub fn sniff_reader<'a>(
    mut r: Box<dyn BufRead + 'a>,
    path: &Path,
) -> Result<(Content, Box<dyn BufRead + 'a>)> {
    let head = peek(&mut r, path)?;
    let content = content_of(&head);
    Ok((content, Box::new(std::io::Cursor::new(head).chain(r))))
}
