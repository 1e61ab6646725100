//! What a stored capture of a URL said of its version (`ETag`, `Last-Modified`), sent back
//! by the fetcher as a conditional request (feature `net`); `ditto recrawl` reads them from
//! the earlier crawl's WARC records and hands them to its crawl passes as a list.

use std::collections::HashMap;

/// A URL's validators (RFC 9110 §8.8), sent as `If-None-Match` / `If-Modified-Since`
/// (§13): a 304 answers "unchanged" without a body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl Validators {
    /// Read `URL<TAB>ETag<TAB>Last-Modified` lines (an empty field: none; other lines
    /// skipped).
    pub fn parse_list(text: &str) -> HashMap<String, Validators> {
        let some = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
        text.lines()
            .filter_map(|l| {
                let mut f = l.split('\t');
                let url = f.next()?.trim();
                let v = Validators { etag: f.next().and_then(some), last_modified: f.next().and_then(some) };
                (!url.is_empty() && (v.etag.is_some() || v.last_modified.is_some()))
                    .then(|| (url.to_string(), v))
            })
            .collect()
    }

    /// One line of the list [`Self::parse_list`] reads (tabs and line ends in the values
    /// become spaces).
    pub fn list_line(&self, url: &str) -> String {
        let field = |s: &Option<String>| s.as_deref().unwrap_or("").replace(['\t', '\n', '\r'], " ");
        format!("{url}\t{}\t{}\n", field(&self.etag), field(&self.last_modified))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validator_lists() {
        let m = Validators::parse_list(
            "http://a.test/x\t\"v1\"\tMon, 01 Jan 2024 00:00:00 GMT\nhttp://a.test/y\t\t\n\
             http://a.test/z\tW/\"w\"\t\njunk\n\n",
        );
        assert_eq!(m.len(), 2, "{m:?}");
        let x = &m["http://a.test/x"];
        assert_eq!(x.etag.as_deref(), Some("\"v1\""));
        assert_eq!(x.last_modified.as_deref(), Some("Mon, 01 Jan 2024 00:00:00 GMT"));
        assert_eq!(m["http://a.test/z"].etag.as_deref(), Some("W/\"w\""));
        assert_eq!(m["http://a.test/z"].last_modified, None);
        // Written and read back, tabs in values made harmless.
        let v = Validators { etag: Some("\"a\tb\"".into()), last_modified: None };
        let back = Validators::parse_list(&v.list_line("http://a.test/w"));
        assert_eq!(back["http://a.test/w"].etag.as_deref(), Some("\"a b\""));
    }
}
