//! Character-encoding detection and decoding for fetched bodies.
//!
//! Order (WHATWG "encoding sniffing algorithm", <https://html.spec.whatwg.org/#encoding-sniffing-algorithm>):
//! 1. a byte-order mark (UTF-8, UTF-16LE, UTF-16BE) — it wins even over the HTTP header,
//!    because a BOM is far less likely to be wrong than a server's default charset;
//! 2. the `charset` parameter of the HTTP `Content-Type` header;
//! 3. for HTML only, a `<meta charset>` / `<meta http-equiv=Content-Type content=...>` found
//!    by the WHATWG prescan of the first 1024 bytes;
//! 4. fallback: UTF-8 when the bytes are valid UTF-8, else the guess of `chardetng` (Firefox's
//!    detector for unlabeled legacy content: windows-1251, ISO-8859-7, Shift_JIS, GBK, Big5,
//!    EUC-KR, windows-1252, …) over the first [`DETECT_BYTES`] bytes, helped by the top-level
//!    domain of the page's URL as Firefox is. UTF-8 is never its guess here (the bytes are not
//!    UTF-8), nor ISO-2022-JP (which browsers refuse to guess for pages that run scripts).
//!
//! Labels are resolved with `Encoding::for_label`, i.e. the WHATWG label table: for example
//! `iso-8859-1` and `ascii` both mean windows-1252, so that is the name reported. Decoding
//! never fails: malformed sequences become U+FFFD.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// How many leading bytes the `<meta>` prescan looks at (WHATWG uses 1024).
pub(crate) const PRESCAN_BYTES: usize = 1024;

/// How many leading bytes of an undeclared, non-UTF-8 body the detector reads: enough text
/// for a confident guess, a bounded cost for any body.
pub const DETECT_BYTES: usize = 64 * 1024;

/// Choose the encoding of `body` (see the module docs for the order; `html` enables the
/// `<meta>` prescan; `url`, the page's, gives the detector its top-level domain) and decode it. Borrows when the bytes already are the text (valid
/// UTF-8, or pure ASCII in an ASCII-compatible encoding), so the common case copies nothing,
/// and UTF-8 is validated only once.
pub(crate) fn detect_and_decode<'a>(
    body: &'a [u8],
    content_type: Option<&str>,
    html: bool,
    url: Option<&str>,
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
            // Mostly UTF-8 with a few stray bytes (a Latin-1 byte pasted into a UTF-8 page)
            // is UTF-8: legacy encodings almost never form valid multi-byte sequences.
            Err(_) if mostly_utf8(&body[..body.len().min(DETECT_BYTES)]) => {
                (UTF_8, String::from_utf8_lossy(body))
            }
            Err(_) => {
                let enc = guess(body, url);
                (enc, enc.decode_without_bom_handling(body).0)
            }
        };
    };
    if encoding == UTF_8 {
        if let Ok(s) = std::str::from_utf8(bytes) {
            return (encoding, Cow::Borrowed(s));
        }
    }
    (encoding, encoding.decode_without_bom_handling(bytes).0)
}

/// Whether `bytes` hold more valid non-ASCII UTF-8 characters than invalid sequences.
fn mostly_utf8(bytes: &[u8]) -> bool {
    let non_ascii =
        |b: &[u8]| std::str::from_utf8(b).map_or(0, |s| s.chars().filter(|c| !c.is_ascii()).count());
    let (mut valid, mut invalid) = (0usize, 0usize);
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                valid += s.chars().filter(|c| !c.is_ascii()).count();
                break;
            }
            Err(e) => {
                valid += non_ascii(&rest[..e.valid_up_to()]);
                match e.error_len() {
                    Some(n) => {
                        invalid += 1;
                        rest = &rest[e.valid_up_to() + n..];
                    }
                    // Cut mid-character at the end of the prefix: not an error.
                    None => break,
                }
            }
        }
    }
    valid > invalid
}

/// `chardetng`'s guess for a body that declares nothing and is not UTF-8.
pub(crate) fn guess(body: &[u8], url: Option<&str>) -> &'static Encoding {
    let mut d = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    let prefix = &body[..body.len().min(DETECT_BYTES)];
    d.feed(prefix, prefix.len() == body.len());
    let tld = url.and_then(tld_of);
    d.guess(tld.as_deref(), chardetng::Utf8Detection::Deny)
}

/// The top-level domain of `url`'s host in the form `chardetng` takes (lower-case ASCII
/// letters, digits, `-`; it panics on anything else), or None (an IP address, no host).
fn tld_of(url: &str) -> Option<Vec<u8>> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.starts_with('[') {
        return None;
    }
    let host = host.split(':').next()?.trim_end_matches('.');
    let tld = host.rsplit('.').next()?.to_ascii_lowercase();
    let ok = !tld.is_empty()
        && tld.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !tld.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| tld.into_bytes())
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

    /// Pages that declare no charset in legacy encodings (Cyrillic, Greek, Japanese,
    /// Chinese, Korean): the detector reads them right where the old fallback
    /// (windows-1252) garbled them.
    #[test]
    fn undeclared_legacy_encodings_are_detected() {
        use encoding_rs::{BIG5, EUC_KR, GBK, ISO_8859_7, WINDOWS_1253};
        let cases: [(&'static Encoding, &str, &str); 6] = [
            (
                WINDOWS_1251,
                "http://news.example.ru/a",
                "<html><head><title>Новости</title></head><body><p>Москва — столица России, крупнейший по                  численности населения город страны и её политический, экономический и культурный центр.                  Город расположен на реке Москве в центре Восточно-Европейской равнины.</p></body></html>",
            ),
            (
                ISO_8859_7,
                "http://www.example.gr/",
                "<html><body><p>Η Αθήνα είναι η πρωτεύουσα και μεγαλύτερη πόλη της Ελλάδας. Είναι μία από                  τις αρχαιότερες πόλεις του κόσμου, με καταγεγραμμένη ιστορία που εκτείνεται σε πάνω από                  3.400 χρόνια.</p></body></html>",
            ),
            (
                SHIFT_JIS,
                "http://example.jp/",
                "<html><body><p>東京都は日本の首都であり、世界有数の大都市である。人口は約千四百万人で、                 政治、経済、文化の中心地となっている。江戸時代には江戸と呼ばれていた。</p></body></html>",
            ),
            (
                GBK,
                "http://example.cn/",
                "<html><body><p>北京是中华人民共和国的首都，是全国的政治中心、文化中心，是世界著名古都和                 现代化国际城市。北京有着三千多年的建城史和八百五十多年的建都史。</p></body></html>",
            ),
            (
                BIG5,
                "http://example.tw/",
                "<html><body><p>臺北市是中華民國的首都，位於臺灣北部的臺北盆地，是臺灣的政治、經濟、                 文化與媒體中心。臺北市有許多著名的觀光景點與美食。</p></body></html>",
            ),
            (
                EUC_KR,
                "http://example.kr/",
                "<html><body><p>서울특별시는 대한민국의 수도이자 최대 도시이다. 한반도 중앙부에 위치하며,                  한강이 도시를 가로질러 흐른다. 서울은 정치, 경제, 문화의 중심지이다.</p></body></html>",
            ),
        ];
        for (enc, url, text) in cases {
            let (bytes, _, unmappable) = enc.encode(text);
            assert!(!unmappable, "{}", enc.name());
            // Without the URL too: the text alone decides (Greek reads as windows-1253 or
            // ISO-8859-7, which agree on these letters).
            for u in [Some(url), None] {
                let (got, decoded) = detect_and_decode(&bytes, Some("text/html"), true, u);
                let same = got == enc || (enc == ISO_8859_7 && got == WINDOWS_1253);
                assert!(same, "{} detected as {} (url {u:?})", enc.name(), got.name());
                assert_eq!(decoded, text, "{}", enc.name());
            }
            // The old fallback garbled them.
            assert_ne!(WINDOWS_1252.decode_without_bom_handling(&bytes).0, text);
        }
        // Declared or UTF-8: the detector is not asked.
        let (bytes, _, _) = WINDOWS_1251.encode("<p>Москва</p>");
        assert_eq!(
            detect_and_decode(&bytes, Some("text/html; charset=koi8-r"), true, None).0.name(),
            "KOI8-R"
        );
        assert_eq!(detect_and_decode("<p>Москва</p>".as_bytes(), None, true, None).0, UTF_8);
        // Mostly UTF-8 with a stray Latin-1 byte: UTF-8, the byte replaced.
        let mut mixed = "<p>Москва и Санкт-Петербург</p><p>caf".as_bytes().to_vec();
        mixed.extend(b"\xE9</p>");
        let (got, text) = detect_and_decode(&mixed, None, true, None);
        assert_eq!((got, text.as_ref()), (UTF_8, "<p>Москва и Санкт-Петербург</p><p>caf\u{FFFD}</p>"));
        assert!(!mostly_utf8(&WINDOWS_1251.encode("<p>Москва и Санкт-Петербург</p>").0));
    }

    #[test]
    fn tlds_for_the_detector() {
        assert_eq!(tld_of("http://News.Example.RU:8080/a?b").as_deref(), Some(&b"ru"[..]));
        assert_eq!(tld_of("https://u:p@example.jp./").as_deref(), Some(&b"jp"[..]));
        assert_eq!(tld_of("http://xn--p1ai/").as_deref(), Some(&b"xn--p1ai"[..]));
        assert_eq!(tld_of("http://127.0.0.1/"), None);
        assert_eq!(tld_of("http://[::1]/"), None);
        assert_eq!(tld_of("http://bücher.de/"), Some(b"de".to_vec()));
        assert_eq!(tld_of("http://ex.bü/"), None);
        assert_eq!(tld_of("no url"), None);
        // Any of these as a page URL never panics the detector.
        for u in ["http://a.B_C/", "http://h/", "http:///", "http://a..b/"] {
            let _ = guess(b"\xE9\xE8", Some(u));
        }
    }

    #[test]
    fn content_type_charset() {
        assert_eq!(charset_from_content_type("text/html; charset=\"UTF-8\""), Some(UTF_8));
        assert_eq!(charset_from_content_type("text/html;Charset=latin1"), Some(WINDOWS_1252));
        assert_eq!(charset_from_content_type("text/html"), None);
        assert_eq!(charset_from_content_type("text/html; charset=bogus"), None);
    }
}
