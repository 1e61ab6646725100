//! The page type that flows through the pipeline: every source (WARC reader, directory
//! walker, crawler fetch) produces a [`Page`]; the CPU stages consume it.

use serde::{Deserialize, Serialize};

/// Where a page's bytes came from, so a report can point a reviewer at the original.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PageOrigin {
    /// A record of a WARC file: path and byte offset of the record (of its gzip member when
    /// the file is gzip-per-record).
    Warc { file: String, offset: u64 },
    /// A file on disk.
    File { path: String },
    /// Fetched live by the crawler (its WARC location, if any, is recorded separately).
    Fetch,
    #[default]
    Unknown,
}

/// One fetched or archived document.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// Absolute URL (already canonical where the source knows how).
    pub url: String,
    /// Fetch time, seconds since the Unix epoch (WARC-Date, file mtime, or fetch time).
    pub fetch_time: i64,
    /// HTTP status; 200 for files and WARC resource records.
    pub status: u16,
    /// The HTTP `Content-Type` header value, if any (carries the charset the cleaner honors first).
    pub content_type: Option<String>,
    /// The payload: HTTP body after de-chunking and Content-Encoding decoding.
    pub body: Vec<u8>,
    pub origin: PageOrigin,
}

impl Page {
    /// The host part of the URL, lower-cased ("" when the URL has none).
    pub fn host(&self) -> &str {
        host_of(&self.url)
    }
}

/// The host of a URL string without a full parse (`scheme://host[:port]/...`).
pub fn host_of(url: &str) -> &str {
    let rest = match url.find("://") {
        Some(i) => &url[i + 3..],
        None => return "",
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    authority
}
