//! Headers first (issue 37, item 6): what a page fetch decides from a 2xx response's headers,
//! before reading its body. A type the crawl never reads (`Content-Type` an image, PDF, video,
//! script, ...) is refused, and so is a body whose `Content-Length` is over the cap unless its
//! type is one we read (HTML or text: those are read up to the cap and kept cut, marked
//! `WARC-Truncated: length` in the WARC file). A refused body is not read: the connection is
//! dropped (a PDF or video behind a link costs its headers, not `--max-body-bytes` of it).
//!
//! Before this, every body was read up to the cap (10 MiB; 256 fetches in flight: up to
//! 2.5 GiB) and then dropped when its type was not text, and an HTML page over the cap was
//! dropped whole.

use std::fmt;

use detector::clean::{declared_kind, Declared};

/// Why a body was refused after the headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyRefused {
    /// The declared type is one the crawl never reads.
    NotText { content_type: String },
    /// `Content-Length` is over the cap, and the type does not say HTML or text (a prefix of
    /// an unknown type is no page).
    TooLong { content_length: u64, cap: usize },
}

impl fmt::Display for BodyRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotText { content_type } => {
                write!(f, "not a text type we read (Content-Type: {content_type}); body not read")
            }
            Self::TooLong { content_length, cap } => write!(
                f,
                "Content-Length {content_length} over the cap of {cap} bytes, type not HTML or text; body not read"
            ),
        }
    }
}

/// The header `name`'s first value (names compared without case).
fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// Whether a 2xx response with these headers should have its body refused (see the module
/// notes); None: read it (up to `cap` bytes).
pub fn refuse_after_headers(headers: &[(String, String)], cap: usize) -> Option<BodyRefused> {
    let declared = header(headers, "content-type").map(|ct| (ct, declared_kind(ct)));
    if let Some((ct, Declared::Other)) = declared {
        // The header is outside input: kept short and printable for the log.
        let content_type: String = ct.chars().take(100).filter(|c| !c.is_control()).collect();
        return Some(BodyRefused::NotText { content_type });
    }
    let readable = matches!(declared, Some((_, Declared::Kind(_))));
    let length = header(headers, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
    match length {
        Some(n) if n > cap as u64 && !readable => Some(BodyRefused::TooLong { content_length: n, cap }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn types_we_never_read_are_refused_whatever_their_length() {
        for ct in ["video/mp4", "application/pdf", "image/png; x=1", "IMAGE/JPEG", "text/css"] {
            let got = refuse_after_headers(&h(&[("Content-Type", ct), ("Content-Length", "10")]), 100);
            assert_eq!(got, Some(BodyRefused::NotText { content_type: ct.to_string() }), "{ct}");
        }
        let got = refuse_after_headers(&h(&[("content-type", "video/x\u{1b}[2J")]), 100);
        assert_eq!(got, Some(BodyRefused::NotText { content_type: "video/x[2J".into() }));
    }

    #[test]
    fn html_and_text_are_read_up_to_the_cap_whatever_their_length() {
        for ct in ["text/html; charset=utf-8", "application/xhtml+xml", "text/plain"] {
            let headers = h(&[("Content-Type", ct), ("Content-Length", "40000000")]);
            assert_eq!(refuse_after_headers(&headers, 10 << 20), None, "{ct}");
        }
    }

    #[test]
    fn unknown_types_over_the_cap_are_refused_by_their_length() {
        let big = h(&[("Content-Type", "application/octet-stream"), ("Content-Length", " 1073741824 ")]);
        assert_eq!(
            refuse_after_headers(&big, 10 << 20),
            Some(BodyRefused::TooLong { content_length: 1 << 30, cap: 10 << 20 })
        );
        let untyped = h(&[("Content-Length", "101")]);
        assert_eq!(
            refuse_after_headers(&untyped, 100),
            Some(BodyRefused::TooLong { content_length: 101, cap: 100 })
        );
        // Within the cap, unknown lengths and lengths that do not parse: read (and sniffed).
        assert_eq!(refuse_after_headers(&h(&[("Content-Length", "100")]), 100), None);
        assert_eq!(refuse_after_headers(&h(&[("Content-Length", "-5")]), 100), None);
        assert_eq!(refuse_after_headers(&h(&[("Content-Length", "99999999999999999999999")]), 100), None);
        assert_eq!(refuse_after_headers(&h(&[]), 100), None);
        let text = BodyRefused::TooLong { content_length: 101, cap: 100 }.to_string();
        assert_eq!(
            text,
            "Content-Length 101 over the cap of 100 bytes, type not HTML or text; body not read"
        );
    }
}
