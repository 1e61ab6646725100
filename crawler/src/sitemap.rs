//! Sitemaps (the sitemaps.org protocol, 0.9): `<urlset>` files listing pages, `<sitemapindex>`
//! files listing sitemaps, plain-text files of one URL per line, any of them gzipped. Outside
//! input, read within the protocol's bounds: at most [`MAX_SITEMAP_URLS`] URLs and
//! [`MAX_SITEMAP_BYTES`] (uncompressed) per file; the rest is cut and counted.
//!
//! The reader is a scan for `<loc>` elements, not an XML parser: it takes a `loc` only inside a
//! `<url>` or `<sitemap>` element and only without a namespace prefix (so an image or video
//! extension's `<image:loc>` is not a page), skips comments, reads CDATA and the five XML
//! entities and character references. Anything else in the file is ignored.

use crate::warc::http::decode_coding;

/// Most URLs read from one sitemap file (the protocol's limit).
pub const MAX_SITEMAP_URLS: usize = 50_000;
/// Most bytes of one sitemap file read, uncompressed (the protocol's 50 MB).
pub const MAX_SITEMAP_BYTES: usize = 50 * 1024 * 1024;
/// Longest `<loc>` value taken (longer ones are not URLs a crawler fetches).
const MAX_LOC_BYTES: usize = 4096;

/// What a sitemap file lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SitemapKind {
    /// `<urlset>`: pages.
    #[default]
    UrlSet,
    /// `<sitemapindex>`: other sitemaps.
    Index,
    /// One URL per line (the protocol's text format): pages.
    Text,
}

/// A sitemap file as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sitemap {
    pub kind: SitemapKind,
    /// The URLs listed, in order, at most [`MAX_SITEMAP_URLS`].
    pub locs: Vec<String>,
    /// URLs past [`MAX_SITEMAP_URLS`], not taken.
    pub over_cap: u64,
    /// The file was longer than [`MAX_SITEMAP_BYTES`] uncompressed: read up to there.
    pub truncated: bool,
    /// Not a sitemap: a gzip stream that does not inflate, or neither XML nor URL lines.
    pub unreadable: bool,
}

/// Read a sitemap file's bytes (as served, after any Content-Encoding): gunzipped when they
/// are a gzip stream (`sitemap.xml.gz`), then read as XML or as text.
pub fn parse_sitemap(body: &[u8]) -> Sitemap {
    let mut out = Sitemap::default();
    let inflated;
    let mut data = body;
    if body.starts_with(&[0x1f, 0x8b]) {
        match decode_coding("gzip", body, MAX_SITEMAP_BYTES) {
            Some((d, capped)) => {
                out.truncated = capped;
                inflated = d;
                data = &inflated;
            }
            None => {
                out.unreadable = true;
                return out;
            }
        }
    }
    if data.len() > MAX_SITEMAP_BYTES {
        data = &data[..MAX_SITEMAP_BYTES];
        out.truncated = true;
    }
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let start = data.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(data.len());
    match data.get(start) {
        Some(b'<') => read_xml(&data[start..], &mut out),
        Some(_) => read_text(&data[start..], &mut out),
        None => {}
    }
    out
}

fn push(out: &mut Sitemap, loc: String) {
    if out.locs.len() < MAX_SITEMAP_URLS {
        out.locs.push(loc);
    } else {
        out.over_cap += 1;
    }
}

/// One URL per line (`http://` or `https://`); a file with lines that are neither is not a
/// text sitemap.
fn read_text(data: &[u8], out: &mut Sitemap) {
    out.kind = SitemapKind::Text;
    for line in data.split(|&b| b == b'\n') {
        let line = String::from_utf8_lossy(line);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let lower = line.get(..8).unwrap_or(line).to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) || line.len() > MAX_LOC_BYTES {
            out.unreadable = out.locs.is_empty();
            return;
        }
        push(out, line.to_string());
    }
}

/// `<loc>` values inside `<url>` / `<sitemap>` elements.
fn read_xml(data: &[u8], out: &mut Sitemap) {
    let mut i = 0;
    let mut root_seen = false;
    let mut in_entry = false;
    while let Some(p) = memchr::memchr(b'<', &data[i..]) {
        let at = i + p;
        let rest = &data[at..];
        if rest.starts_with(b"<!--") {
            i = match memchr::memmem::find(rest, b"-->") {
                Some(e) => at + e + 3,
                None => return,
            };
            continue;
        }
        if rest.starts_with(b"<?") || rest.starts_with(b"<!") {
            i = at + 2;
            continue;
        }
        let closing = rest.get(1) == Some(&b'/');
        let name_start = at + 1 + usize::from(closing);
        let name_len = data[name_start..]
            .iter()
            .position(|&b| b.is_ascii_whitespace() || b == b'>' || b == b'/')
            .unwrap_or(data.len() - name_start);
        let name = &data[name_start..name_start + name_len];
        let Some(gt) = memchr::memchr(b'>', &data[name_start..]) else { return };
        let after = name_start + gt + 1;
        i = after;
        // The root element decides the kind (a namespace prefix on it is allowed).
        let local = name.rsplit(|&b| b == b':').next().unwrap_or(name);
        if !root_seen && !closing {
            root_seen = true;
            if local.eq_ignore_ascii_case(b"sitemapindex") {
                out.kind = SitemapKind::Index;
            }
            continue;
        }
        if name.eq_ignore_ascii_case(b"url") || name.eq_ignore_ascii_case(b"sitemap") {
            in_entry = !closing;
            continue;
        }
        if closing || !in_entry || !name.eq_ignore_ascii_case(b"loc") || data[after - 2] == b'/' {
            continue;
        }
        let (value, end) = element_text(data, after);
        i = end;
        let value = decode_entities(value.trim_ascii());
        if !value.is_empty() && value.len() <= MAX_LOC_BYTES {
            push(out, value);
        }
    }
}

/// The text of an element whose content starts at `from`: up to the next `<`, or a CDATA
/// section's content. Returns it and where reading goes on.
fn element_text(data: &[u8], from: usize) -> (&[u8], usize) {
    let rest = &data[from..];
    let lead = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
    if rest[lead..].starts_with(b"<![CDATA[") {
        let body = from + lead + 9;
        return match memchr::memmem::find(&data[body..], b"]]>") {
            Some(e) => (&data[body..body + e], body + e + 3),
            None => (&data[body..], data.len()),
        };
    }
    let end = memchr::memchr(b'<', rest).map_or(data.len(), |e| from + e);
    (&data[from..end], end)
}

/// XML's five entities and character references decoded; anything else kept as written.
fn decode_entities(v: &[u8]) -> String {
    let s = String::from_utf8_lossy(v);
    if !s.contains('&') {
        return s.into_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = &*s;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        rest = &rest[p..];
        let decoded = rest.find(';').filter(|&e| e <= 10).and_then(|e| {
            let c = match &rest[1..e] {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                r if r.starts_with("#x") || r.starts_with("#X") => {
                    char::from_u32(u32::from_str_radix(&r[2..], 16).ok()?)?
                }
                r if r.starts_with('#') => char::from_u32(r[1..].parse().ok()?)?,
                _ => return None,
            };
            Some((c, e + 1))
        });
        match decoded {
            Some((c, n)) => {
                out.push(c);
                rest = &rest[n..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- <url><loc>http://h.test/commented</loc></url> -->
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc> http://h.test/a?x=1&amp;y=2 </loc>
    <lastmod>2024-01-01</lastmod>
    <image:image><image:loc>http://h.test/img.png</image:loc></image:image>
  </url>
  <url><loc><![CDATA[http://h.test/b<c>]]></loc></url>
  <url><loc>http://h.test/&#233;t&#xE9;</loc></url>
  <loc>http://h.test/outside-an-entry</loc>
</urlset>"#;

    #[test]
    fn urlsets_give_their_page_locs() {
        let s = parse_sitemap(URLSET.as_bytes());
        assert_eq!(s.kind, SitemapKind::UrlSet);
        assert_eq!(s.locs, ["http://h.test/a?x=1&y=2", "http://h.test/b<c>", "http://h.test/été"]);
        assert!(!s.truncated && !s.unreadable && s.over_cap == 0);
    }

    #[test]
    fn indexes_text_and_gzip() {
        let index = "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                     <sitemap><loc>http://h.test/s1.xml.gz</loc></sitemap>\
                     <sitemap><loc>http://h.test/s2.xml</loc><lastmod>x</lastmod></sitemap></sitemapindex>";
        let s = parse_sitemap(index.as_bytes());
        assert_eq!((s.kind, s.locs.len()), (SitemapKind::Index, 2));
        let text = "\u{feff}http://h.test/1\r\n\nhttps://h.test/2\n";
        let s = parse_sitemap(text.as_bytes());
        assert_eq!(
            (s.kind, s.locs.as_slice()),
            (SitemapKind::Text, &["http://h.test/1".to_string(), "https://h.test/2".into()][..])
        );
        assert!(parse_sitemap(b"just some words\n").unreadable);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(URLSET.as_bytes()).unwrap();
        let s = parse_sitemap(&gz.finish().unwrap());
        assert_eq!(s.locs.len(), 3);
        assert!(parse_sitemap(b"\x1f\x8b\x08 not gzip").unreadable);
        assert_eq!(parse_sitemap(b"").locs.len(), 0);
    }

    #[test]
    fn bounded_at_50000_urls_and_50_mb() {
        let mut xml = String::from("<urlset>");
        for k in 0..MAX_SITEMAP_URLS + 7 {
            xml.push_str(&format!("<url><loc>http://h.test/{k}</loc></url>"));
        }
        xml.push_str("</urlset>");
        let s = parse_sitemap(xml.as_bytes());
        assert_eq!((s.locs.len(), s.over_cap), (MAX_SITEMAP_URLS, 7));
        // A gzip stream inflating past 50 MB is cut there.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"<urlset><url><loc>http://h.test/x</loc></url>").unwrap();
        let pad = vec![b' '; 1 << 20];
        for _ in 0..51 {
            gz.write_all(&pad).unwrap();
        }
        gz.write_all(b"<url><loc>http://h.test/late</loc></url></urlset>").unwrap();
        let s = parse_sitemap(&gz.finish().unwrap());
        assert!(s.truncated);
        assert_eq!(s.locs, ["http://h.test/x"]);
    }

    #[test]
    fn broken_xml_never_panics() {
        for input in [
            "<urlset><url><loc>http://h.test/a",
            "<urlset><url><loc><![CDATA[http://h.test/a",
            "<urlset><url><loc/><loc>x</loc",
            "<",
            "<!--",
            "<urlset><url><loc>&#xFFFFFFFF;&#99999999999;&bogus;&</loc></url>",
        ] {
            let s = parse_sitemap(input.as_bytes());
            assert!(s.locs.len() <= 1, "{input}: {s:?}");
        }
        let s = parse_sitemap(b"<urlset><url><loc>&#xFFFFFFFF;a&amp;</loc></url>");
        assert_eq!(s.locs, ["&#xFFFFFFFF;a&"]);
    }
}
