//! HTTP/1.x response messages as archived in WARC `response` records: the status line and
//! headers, de-chunking and Content-Encoding decoding (gzip, deflate, br) with an output cap.
//! The fetcher decodes what it receives with the same functions, so a crawl and a scan of its
//! WARC files see the same bodies.
//!
//! Archived traffic is messy, so everything here is lenient: a missing reason phrase,
//! duplicate headers, obs-fold continuation lines, broken chunking (falls back to the raw
//! body) and undecodable bodies (kept raw, flagged) are all accepted.

use std::io::Read;

use flate2::read::{DeflateDecoder, MultiGzDecoder, ZlibDecoder};

/// Cap on an HTTP header block; a longer "header" is not an HTTP message.
pub const MAX_HTTP_HEADER: usize = 256 << 10;

/// Status line and headers of a response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpHead {
    /// e.g. "HTTP/1.1"
    pub version: String,
    pub status: u16,
    /// May be empty (`HTTP/1.1 200` with no reason phrase).
    pub reason: String,
    /// Header fields in order, duplicates kept, continuation lines folded in.
    pub headers: Vec<(String, String)>,
    /// Bytes of the block taken by the status line, headers and the blank line.
    pub header_len: usize,
}

impl HttpHead {
    /// First header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// All values of a header, in order.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The Content-Type header (carries the charset).
    pub fn content_type(&self) -> Option<&str> {
        self.header("Content-Type").filter(|v| !v.is_empty())
    }

    fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers_named(name).flat_map(|v| v.split(',')).any(|t| t.trim().eq_ignore_ascii_case(token))
    }
}

/// End of the header block: index just past the blank line (CRLFCRLF or LFLF).
fn header_end(block: &[u8]) -> Option<usize> {
    let lim = block.len().min(MAX_HTTP_HEADER);
    let mut i = 0;
    while i < lim {
        let p = block[i..lim].iter().position(|&b| b == b'\n')?;
        let next = i + p + 1;
        // A blank line: LF, CRLF, or (from some writers) CR CR LF.
        let crs = block[next..lim].iter().take_while(|&&b| b == b'\r').count();
        if block.get(next + crs) == Some(&b'\n') {
            return Some(next + crs + 1);
        }
        i = next;
    }
    None
}

/// Parse the status line and headers at the start of `block`. None if it does not start
/// with an `HTTP/` status line. A block that ends inside the header (no blank line) is
/// taken as all header, empty body.
pub fn parse_response_head(block: &[u8]) -> Option<HttpHead> {
    let start = block.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let block_from = &block[start..];
    if block_from.len() < 5 || !block_from[..5].eq_ignore_ascii_case(b"HTTP/") {
        return None;
    }
    let end = match header_end(block_from) {
        Some(e) => e,
        None if block_from.len() <= MAX_HTTP_HEADER => block_from.len(),
        None => return None,
    };
    let text = String::from_utf8_lossy(&block_from[..end]);
    let mut lines = text.split('\n').map(|l| l.trim_end_matches('\r'));
    let status_line = lines.next()?;
    let mut parts = status_line.trim().splitn(3, [' ', '\t']);
    let version = parts.next()?.to_string();
    let code = parts.next()?.trim();
    if code.len() != 3 || !code.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let status: u16 = code.parse().ok()?;
    let reason = parts.next().unwrap_or("").trim().to_string();
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            // obs-fold: continuation of the previous header's value.
            if let Some((_, v)) = headers.last_mut() {
                if !v.is_empty() {
                    v.push(' ');
                }
                v.push_str(line.trim());
            }
            continue;
        }
        if let Some((n, v)) = line.split_once(':') {
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
    }
    Some(HttpHead { version, status, reason, headers, header_len: start + end })
}

/// De-chunk a `Transfer-Encoding: chunked` body. None when it does not start with a valid
/// chunk (the body is then not really chunked); a chunk stream broken later keeps the
/// chunks decoded so far and the rest raw, as warcio does.
pub fn dechunk(raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    let mut first = true;
    loop {
        let Some(p) = raw[i..].iter().position(|&b| b == b'\n') else {
            // Ends without the last-chunk marker: keep what we have (and any raw rest).
            if first {
                return None;
            }
            out.extend_from_slice(&raw[i..]);
            return Some(out);
        };
        let line = &raw[i..i + p];
        let line = std::str::from_utf8(line).unwrap_or("");
        let size_str = line.split(';').next().unwrap_or("").trim();
        let size = if size_str.is_empty() || size_str.len() > 15 {
            None
        } else {
            usize::from_str_radix(size_str, 16).ok()
        };
        let Some(size) = size else {
            if first {
                return None;
            }
            out.extend_from_slice(&raw[i..]);
            return Some(out);
        };
        first = false;
        i += p + 1;
        if size == 0 {
            return Some(out);
        }
        let take = size.min(raw.len() - i);
        out.extend_from_slice(&raw[i..i + take]);
        i += take;
        if take < size {
            return Some(out);
        }
        // CRLF after the chunk data (tolerate LF or nothing).
        if raw[i..].starts_with(b"\r\n") {
            i += 2;
        } else if raw[i..].starts_with(b"\n") {
            i += 1;
        }
        if i >= raw.len() {
            return Some(out);
        }
    }
}

/// Result of decoding a response body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecodedBody {
    pub body: Vec<u8>,
    /// Chunked per the headers but not parseable: raw body kept.
    pub dechunk_failed: bool,
    /// Content-Encoding could not be decoded (or is unsupported): undecoded body kept.
    pub decode_failed: bool,
    /// The decoded body hit the cap and was cut there.
    pub capped: bool,
}

/// Read all of `r` up to `max` bytes: Some((data, capped)); None when the stream is
/// invalid. A stream cut short keeps what decoded.
fn read_capped(mut r: impl Read, max: usize, hint: usize) -> Option<(Vec<u8>, bool)> {
    let mut out = Vec::with_capacity(hint.min(max).min(16 << 20));
    let res = r.by_ref().take(max as u64 + 1).read_to_end(&mut out);
    let capped = out.len() > max;
    out.truncate(max);
    match res {
        Ok(_) => Some((out, capped)),
        // A truncated body (common in crawls) keeps its decoded prefix.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !out.is_empty() => Some((out, capped)),
        Err(_) => None,
    }
}

/// Decode one Content-Encoding coding, output capped at `max`: Some((data, capped)); None
/// when the data is invalid or the coding unsupported.
pub fn decode_coding(coding: &str, data: &[u8], max: usize) -> Option<(Vec<u8>, bool)> {
    let hint = data.len().saturating_mul(4);
    match coding.trim().to_ascii_lowercase().as_str() {
        "" | "identity" | "none" => {
            let capped = data.len() > max;
            Some((data[..data.len().min(max)].to_vec(), capped))
        }
        "gzip" | "x-gzip" => read_capped(MultiGzDecoder::new(data), max, hint),
        "br" => read_capped(brotli_decompressor::Decompressor::new(data, 16 << 10), max, hint),
        "deflate" => {
            // RFC 9110 says zlib; many servers send raw deflate. Check the zlib header.
            let zlib = data.len() >= 2
                && data[0] & 0x0f == 8
                && (u16::from(data[0]) << 8 | u16::from(data[1])) % 31 == 0;
            if zlib {
                read_capped(ZlibDecoder::new(data), max, hint)
                    .or_else(|| read_capped(DeflateDecoder::new(data), max, hint))
            } else {
                read_capped(DeflateDecoder::new(data), max, hint)
            }
        }
        _ => None,
    }
}

/// The content codings of a message's `Content-Encoding` values, in the order applied
/// (lower case; `identity` left out).
pub fn content_codings<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    values
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty() && t != "identity")
        .collect()
}

/// Undo `codings` (as [`content_codings`] lists them: last applied, first undone), output
/// capped at `max`: (body, capped, failed). On a coding that cannot be decoded (invalid data,
/// unsupported coding) the body is the one before it, undecoded, and `failed` is set.
pub fn decode_codings(codings: &[String], mut body: Vec<u8>, max: usize) -> (Vec<u8>, bool, bool) {
    let mut capped = false;
    for c in codings.iter().rev() {
        match decode_coding(c, &body, max) {
            Some((b, cut)) => {
                body = b;
                capped |= cut;
            }
            None => return (body, capped, true),
        }
    }
    (body, capped, false)
}

/// De-chunk (if `Transfer-Encoding: chunked`) and decode Content-Encoding (if any) of a
/// response body, keeping the undecoded bytes when decoding fails. Output capped at `max`.
pub fn decode_body(head: &HttpHead, raw: &[u8], max: usize) -> DecodedBody {
    let mut d = DecodedBody::default();
    let mut body: Vec<u8>;
    if head.has_token("Transfer-Encoding", "chunked") {
        match dechunk(raw) {
            Some(b) => body = b,
            None => {
                d.dechunk_failed = true;
                body = raw.to_vec();
            }
        }
    } else {
        body = raw.to_vec();
    }
    let codings = content_codings(head.headers_named("Content-Encoding"));
    let (decoded, capped, failed) = decode_codings(&codings, body, max);
    body = decoded;
    d.capped |= capped;
    d.decode_failed = failed;
    if body.len() > max {
        body.truncate(max);
        d.capped = true;
    }
    d.body = body;
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn head(s: &str) -> HttpHead {
        parse_response_head(s.as_bytes()).expect("head")
    }

    #[test]
    fn status_lines() {
        let h = head("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nbody");
        assert_eq!((h.status, h.reason.as_str(), h.version.as_str()), (200, "OK", "HTTP/1.1"));
        assert_eq!(h.content_type(), Some("text/html"));
        assert_eq!(h.header_len, 44);
        let h = head("HTTP/1.0 302 \r\nLocation: x\r\n\r\n");
        assert_eq!((h.status, h.reason.as_str()), (302, ""));
        let h = head("HTTP/1.1 200\nA: b\n\nbody");
        assert_eq!((h.status, h.header("a")), (200, Some("b")));
        assert_eq!(h.header_len, 19);
        assert!(parse_response_head(b"GET / HTTP/1.1\r\n\r\n").is_none());
        assert!(parse_response_head(b"HTTP/1.1 abc\r\n\r\n").is_none());
        // No blank line: all header.
        let h = head("HTTP/1.1 204 No Content\r\nX: y");
        assert_eq!(h.header("x"), Some("y"));
    }

    #[test]
    fn duplicates_and_obs_fold() {
        let h =
            head("HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a: 2\r\nContent-Type: text/html;\r\n charset=utf-8\r\n\r\n");
        assert_eq!(h.headers_named("X-A").collect::<Vec<_>>(), ["1", "2"]);
        assert_eq!(h.content_type(), Some("text/html; charset=utf-8"));
    }

    #[test]
    fn huge_header_is_not_http() {
        let mut s = b"HTTP/1.1 200 OK\r\n".to_vec();
        while s.len() <= MAX_HTTP_HEADER + 10 {
            s.extend_from_slice(b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        assert!(parse_response_head(&s).is_none());
    }

    #[test]
    fn chunked() {
        assert_eq!(dechunk(b"5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n").unwrap(), b"hello world");
        assert_eq!(dechunk(b"5\nhello\n0\n").unwrap(), b"hello");
        assert!(dechunk(b"<html>not chunked</html>").is_none());
        // Truncated chunk keeps what arrived.
        assert_eq!(dechunk(b"a\r\nhello").unwrap(), b"hello");
        let h = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        let d = decode_body(&h, b"<html>not chunked", 1 << 20);
        assert!(d.dechunk_failed);
        assert_eq!(d.body, b"<html>not chunked");
        let d = decode_body(&h, b"3\r\nabc\r\n0\r\n\r\n", 1 << 20);
        assert_eq!((d.body.as_slice(), d.dechunk_failed), (&b"abc"[..], false));
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn content_encodings() {
        let text = b"<html>hello hello hello</html>".repeat(10);
        let h = head("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n");
        let d = decode_body(&h, &gzip(&text), 1 << 20);
        assert_eq!(d.body, text);
        assert!(!d.decode_failed);

        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&text).unwrap();
        let zlib = z.finish().unwrap();
        let mut r = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        r.write_all(&text).unwrap();
        let rawd = r.finish().unwrap();
        let h = head("HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n\r\n");
        assert_eq!(decode_body(&h, &zlib, 1 << 20).body, text);
        assert_eq!(decode_body(&h, &rawd, 1 << 20).body, text);

        // Chunked + gzip.
        let g = gzip(&text);
        let mut chunked = format!("{:x}\r\n", g.len()).into_bytes();
        chunked.extend_from_slice(&g);
        chunked.extend_from_slice(b"\r\n0\r\n\r\n");
        let h = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: x-gzip\r\n\r\n");
        assert_eq!(decode_body(&h, &chunked, 1 << 20).body, text);

        // Labelled gzip but not: keep raw, flag.
        let h = head("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n");
        let d = decode_body(&h, b"<html>plain</html>", 1 << 20);
        assert!(d.decode_failed);
        assert_eq!(d.body, b"<html>plain</html>");
        // Brotli (RFC 7932): "hello" as one compressed meta-block.
        let h = head("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n");
        let d = decode_body(&h, b"\x0b\x02\x80hello\x03", 1 << 20);
        assert_eq!((d.body.as_slice(), d.decode_failed), (&b"hello"[..], false));
        assert!(decode_body(&h, b"<html>not brotli", 1 << 20).decode_failed);
        // Two codings, undone last first.
        let h = head("HTTP/1.1 200 OK\r\nContent-Encoding: br, gzip\r\n\r\n");
        assert_eq!(decode_body(&h, &gzip(b"\x0b\x02\x80hello\x03"), 1 << 20).body, b"hello");

        // Unknown coding: keep raw, flag.
        let h = head("HTTP/1.1 200 OK\r\nContent-Encoding: zstd\r\n\r\n");
        assert!(decode_body(&h, b"abc", 1 << 20).decode_failed);
    }

    #[test]
    fn gzip_bomb_capped() {
        let zeros = vec![0u8; 50 << 20];
        let bomb = gzip(&zeros);
        assert!(bomb.len() < 200_000);
        let h = head("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n");
        let d = decode_body(&h, &bomb, 1 << 20);
        assert!(d.capped);
        assert_eq!(d.body.len(), 1 << 20);
    }
}
