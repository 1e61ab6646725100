//! Character-encoding detection and decoding for fetched bodies.
//!
//! Order (WHATWG "encoding sniffing algorithm", <https://html.spec.whatwg.org/#encoding-sniffing-algorithm>):
//! 1. a byte-order mark (UTF-8, UTF-16LE, UTF-16BE) — it wins even over the HTTP header,
//!    because a BOM is far less likely to be wrong than a server's default charset;
//! 2. the `charset` parameter of the HTTP `Content-Type` header;
//! 3. for HTML only, a `<meta charset>` / `<meta http-equiv=Content-Type content=...>` found
//!    by the WHATWG prescan of the first 1024 bytes;
//! 4. fallback: UTF-8 when the bytes are valid UTF-8, else windows-1252 (the web's de-facto
//!    default for unlabeled Western pages; every byte sequence decodes under it).
//!
//! Labels are resolved with `Encoding::for_label`, i.e. the WHATWG label table: for example
//! `iso-8859-1` and `ascii` both mean windows-1252, so that is the name reported. Decoding
//! never fails: malformed sequences become U+FFFD.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// How many leading bytes the `<meta>` prescan looks at (WHATWG uses 1024).
pub(crate) const PRESCAN_BYTES: usize = 1024;

/// Choose the encoding of `body` (see the module docs for the order; `html` enables the
/// `<meta>` prescan) and decode it. Borrows when the bytes already are the text (valid
/// UTF-8, or pure ASCII in an ASCII-compatible encoding), so the common case copies nothing,
/// and UTF-8 is validated only once.
pub(crate) fn detect_and_decode<'a>(
    body: &'a [u8],
    content_type: Option<&str>,
    html: bool,
) -> (&'static Encoding, Cow<'a, str>) {
    let (encoding, bytes) = if let Some((enc, bom_len)) = Encoding::for_bom(body) {
        (enc, &body[bom_len..])
    } else if let Some(enc) = content_type.and_then(charset_from_content_type) {
        (enc, body)
    } else if let Some(enc) = html.then(|| prescan(&body[..body.len().min(PRESCAN_BYTES)])).flatten() {
        (enc, body)
    } else {
        // Fallback: the validation that picks UTF-8 also yields the text.
        return match std::str::from_utf8(body) {
            Ok(s) => (UTF_8, Cow::Borrowed(s)),
            Err(_) => (WINDOWS_1252, WINDOWS_1252.decode_without_bom_handling(body).0),
        };
    };
    if encoding == UTF_8 {
        if let Ok(s) = std::str::from_utf8(bytes) {
            return (encoding, Cow::Borrowed(s));
        }
    }
    (encoding, encoding.decode_without_bom_handling(bytes).0)
}

/// The encoding named by the `charset` parameter of a `Content-Type` value, if any and known.
pub(crate) fn charset_from_content_type(ct: &str) -> Option<&'static Encoding> {
    for param in ct.split(';').skip(1) {
        let Some((name, value)) = param.split_once('=') else { continue };
        if name.trim().eq_ignore_ascii_case("charset") {
            let v = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
            return Encoding::for_label(v.as_bytes());
        }
    }
    None
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

fn starts_with_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len() && hay[..needle.len()].eq_ignore_ascii_case(needle)
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let hay = hay.get(from..)?;
    hay.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

/// WHATWG "prescan a byte stream to determine its encoding", over `buf` (already cut to the
/// first 1024 bytes). Returns `None` when no usable declaration is found.
pub(crate) fn prescan(buf: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    while pos < buf.len() {
        let rest = &buf[pos..];
        if rest.starts_with(b"<!--") {
            // The closing "-->" may share its dashes with the opening "<!--" ("<!-->").
            pos = find(buf, pos + 2, b"-->")? + 3;
            continue;
        }
        if starts_with_ci(rest, b"<meta") && rest.get(5).is_some_and(|&b| is_space(b) || b == b'/') {
            pos += 5;
            if let Some(enc) = meta_charset(buf, &mut pos) {
                return Some(enc);
            }
            continue;
        }
        let tag_start = if rest.starts_with(b"</") { 2 } else { 1 };
        if rest[0] == b'<' && rest.get(tag_start).is_some_and(u8::is_ascii_alphabetic) {
            // Any other tag: skip its name, then its attributes (so a '>' inside a quoted
            // attribute value does not end it).
            pos += tag_start;
            while pos < buf.len() && !is_space(buf[pos]) && buf[pos] != b'>' {
                pos += 1;
            }
            while get_attribute(buf, &mut pos)?.is_some() {}
            pos += 1;
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            pos = find(buf, pos, b">")? + 1;
            continue;
        }
        pos += 1;
    }
    None
}

/// The attributes of one `<meta` (position just after the name): the encoding it declares,
/// following the WHATWG rules (`charset`, or `http-equiv=content-type` + `content`).
fn meta_charset(buf: &[u8], pos: &mut usize) -> Option<&'static Encoding> {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma: Option<bool> = None;
    let mut charset: Option<&'static Encoding> = None;
    // `?` on end of input: the prescan is over, nothing found in this tag.
    while let Some((name, value)) = get_attribute(buf, pos)? {
        if seen.contains(&name) {
            continue;
        }
        match name.as_slice() {
            b"http-equiv" if value == b"content-type" => got_pragma = true,
            b"content" if charset.is_none() => {
                if let Some(label) = charset_from_meta_content(&value) {
                    charset = Encoding::for_label(label);
                    need_pragma = Some(true);
                }
            }
            b"charset" => {
                charset = Encoding::for_label(&value);
                need_pragma = Some(false);
            }
            _ => {}
        }
        seen.push(name);
    }
    match need_pragma {
        None => return None,
        Some(true) if !got_pragma => return None,
        _ => {}
    }
    let enc = charset?;
    // A document that could be read as ASCII to find this tag is not UTF-16.
    Some(if enc == UTF_16BE || enc == UTF_16LE {
        UTF_8
    } else if enc == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        enc
    })
}

/// WHATWG "get an attribute". `Ok`-like contract folded into options: outer `None` means the
/// input ran out (end the prescan), inner `None` means no more attributes in this tag (the
/// position is then on the `>`). Names and values are ASCII-lower-cased.
#[allow(clippy::type_complexity)]
fn get_attribute(buf: &[u8], pos: &mut usize) -> Option<Option<(Vec<u8>, Vec<u8>)>> {
    while is_space(*buf.get(*pos)?) || buf[*pos] == b'/' {
        *pos += 1;
    }
    if buf[*pos] == b'>' {
        return Some(None);
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    // Attribute name.
    loop {
        let c = *buf.get(*pos)?;
        if c == b'=' && !name.is_empty() {
            *pos += 1;
            break;
        }
        if is_space(c) {
            while is_space(*buf.get(*pos)?) {
                *pos += 1;
            }
            if buf[*pos] != b'=' {
                return Some(Some((name, value)));
            }
            *pos += 1;
            break;
        }
        if c == b'/' || c == b'>' {
            return Some(Some((name, value)));
        }
        name.push(c.to_ascii_lowercase());
        *pos += 1;
    }
    // Attribute value.
    while is_space(*buf.get(*pos)?) {
        *pos += 1;
    }
    let c = *buf.get(*pos)?;
    if c == b'"' || c == b'\'' {
        *pos += 1;
        loop {
            let b = *buf.get(*pos)?;
            *pos += 1;
            if b == c {
                return Some(Some((name, value)));
            }
            value.push(b.to_ascii_lowercase());
        }
    }
    if c == b'>' {
        return Some(Some((name, value)));
    }
    loop {
        let b = *buf.get(*pos)?;
        if is_space(b) || b == b'>' {
            return Some(Some((name, value)));
        }
        value.push(b.to_ascii_lowercase());
        *pos += 1;
    }
}

/// WHATWG "extracting a character encoding from a meta element": the label after
/// `charset=` in a (lower-cased) `content` value.
fn charset_from_meta_content(v: &[u8]) -> Option<&[u8]> {
    let mut pos = 0;
    loop {
        pos = find(v, pos, b"charset")? + 7;
        while v.get(pos).copied().is_some_and(is_space) {
            pos += 1;
        }
        if v.get(pos) == Some(&b'=') {
            pos += 1;
            break;
        }
    }
    while v.get(pos).copied().is_some_and(is_space) {
        pos += 1;
    }
    match v.get(pos)? {
        &q @ (b'"' | b'\'') => {
            let end = find(v, pos + 1, &[q])?;
            Some(&v[pos + 1..end])
        }
        _ => {
            let end = v[pos..].iter().position(|&b| is_space(b) || b == b';').map_or(v.len(), |e| e + pos);
            Some(&v[pos..end])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{EUC_JP, SHIFT_JIS, WINDOWS_1251};

    #[test]
    fn prescan_finds_meta_charset_forms() {
        assert_eq!(prescan(b"<html><head><meta charset=\"Shift_JIS\">"), Some(SHIFT_JIS));
        assert_eq!(prescan(b"<meta charset=euc-jp>"), Some(EUC_JP));
        assert_eq!(
            prescan(b"<META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=windows-1251'>"),
            Some(WINDOWS_1251)
        );
        // content= without the http-equiv pragma does not count.
        assert_eq!(prescan(b"<meta content='text/html; charset=windows-1251'>"), None);
        // Inside a comment or an attribute value of another tag: ignored.
        assert_eq!(prescan(b"<!-- <meta charset=euc-jp> --><p>"), None);
        assert_eq!(prescan(b"<a title='<meta charset=euc-jp>'>"), None);
        // UTF-16 in a meta is impossible and means UTF-8.
        assert_eq!(prescan(b"<meta charset=utf-16le>"), Some(UTF_8));
        // Unknown labels and truncation are not errors.
        assert_eq!(prescan(b"<meta charset=klingon>"), None);
        assert_eq!(prescan(b"<meta charset=\"utf-8"), None);
        assert_eq!(prescan(b"<meta"), None);
    }

    #[test]
    fn content_type_charset() {
        assert_eq!(charset_from_content_type("text/html; charset=\"UTF-8\""), Some(UTF_8));
        assert_eq!(charset_from_content_type("text/html;Charset=latin1"), Some(WINDOWS_1252));
        assert_eq!(charset_from_content_type("text/html"), None);
        assert_eq!(charset_from_content_type("text/html; charset=bogus"), None);
    }
}
