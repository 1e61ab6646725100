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

/// Whether a folder name reads as a host name: `localhost`, an IPv4 address, or two or more dot-separated
/// labels of letters, digits and inner hyphens, the last not all digits, with an optional
/// `:port` (`en.wikipedia.org`, `docs.test`, `mirror.example.org:8080`). Directories laid out
/// as `DIR/HOST/PATH` are recognized by it.
pub fn is_host_name(name: &str) -> bool {
    let (host, port) = match name.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (name, None),
    };
    if port.is_some_and(|p| p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    if host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::Ipv4Addr>().is_ok() {
        return true;
    }
    let labels: Vec<&str> = host.split('.').collect();
    let label_ok = |l: &&str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    host.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(label_ok)
        && labels.last().is_some_and(|t| !t.bytes().all(|b| b.is_ascii_digit()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_told_from_other_folder_names() {
        for h in [
            "en.wikipedia.org",
            "docs.test",
            "farm.test:8080",
            "localhost",
            "127.0.0.1",
            "xn--bcher-kva.example",
        ] {
            assert!(is_host_name(h), "{h}");
        }
        for n in [
            "articles",
            "2024",
            "v1.2",
            "a..b",
            "-a.test",
            "a.test:",
            "a.test:port",
            "my site.test",
            "index.html.",
        ] {
            assert!(!is_host_name(n), "{n}");
        }
    }
}
