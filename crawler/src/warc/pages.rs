//! WARC records to pages: `response` and `resource` records become [`detector::Page`]s, their
//! archived HTTP responses decoded with a cap.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use detector::{Page, PageOrigin};

use super::error::{WarcError, WarcErrorKind};
use super::http;
use super::reader::{WarcReader, WarcStats};
use super::record::WarcRecord;

/// Cap on a decoded HTTP body (gzip-bomb safety).
pub const DEFAULT_MAX_BODY: usize = 64 << 20;

/// What converting one record to a page found.
#[derive(Debug, Default)]
pub struct Conversion {
    pub page: Option<Page>,
    /// A response record whose HTTP head could not be parsed.
    pub http_unparsable: bool,
    pub dechunk_failed: bool,
    pub decode_failed: bool,
    /// The decoded body hit the cap and was cut.
    pub body_capped: bool,
}

fn is_http_response(rec: &WarcRecord) -> bool {
    let ct = rec.content_type.as_deref().unwrap_or("").to_ascii_lowercase();
    ct.contains("application/http") || rec.block.starts_with(b"HTTP/")
}

/// Convert a record to a page (None for non-page records), with the details of decoding.
pub fn convert_record(rec: &WarcRecord, file: &str, max_body: usize) -> Conversion {
    let mut c = Conversion::default();
    let url = match &rec.target_uri {
        Some(u) => u.clone(),
        None => return c,
    };
    let origin = PageOrigin::Warc { file: file.to_string(), offset: rec.offset };
    let ty = rec.warc_type.to_ascii_lowercase();
    if ty == "response" && is_http_response(rec) {
        let Some(head) = http::parse_response_head(&rec.block) else {
            c.http_unparsable = true;
            return c;
        };
        let raw = &rec.block[head.header_len.min(rec.block.len())..];
        let d = http::decode_body(&head, raw, max_body);
        c.dechunk_failed = d.dechunk_failed;
        c.decode_failed = d.decode_failed;
        c.body_capped = d.capped;
        c.page = Some(Page {
            url,
            fetch_time: rec.date,
            status: head.status,
            content_type: head.content_type().map(str::to_string),
            body: d.body,
            origin,
        });
    } else if ty == "resource" || ty == "response" {
        // A resource (or a non-HTTP response such as dns:) is its own payload.
        c.page = Some(Page {
            url,
            fetch_time: rec.date,
            status: 200,
            content_type: rec.content_type.clone(),
            body: rec.block.clone(),
            origin,
        });
    }
    c
}

/// A page for `response` and `resource` records; None for every other record type.
pub fn record_to_page(rec: &WarcRecord, file: &str) -> Option<Page> {
    convert_record(rec, file, DEFAULT_MAX_BODY).page
}

/// Counters of [`WarcPages`]: the reader's, plus page conversion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageStats {
    pub warc: WarcStats,
    pub pages: u64,
    pub http_unparsable: u64,
    pub dechunk_failed: u64,
    pub decode_failed: u64,
    pub body_capped: u64,
    /// Page records skipped because the body was cut (by the cap, or `WARC-Truncated`).
    pub truncated: u64,
    /// Page records skipped because their Content-Length does not match the record's real
    /// extent ([`WarcErrorKind::LengthMismatch`]): the block is cut or overlong, so it is not
    /// the page. Each is also yielded as an error naming the record's offset.
    pub length_mismatch: u64,
}

/// Pages (response and resource records, any status) of one WARC file.
pub struct WarcPages<R = File> {
    reader: WarcReader<R>,
    file: String,
    max_body: usize,
    stats: PageStats,
    size: u64,
}

impl WarcPages<File> {
    pub fn open(path: impl AsRef<Path>) -> Result<Self, WarcError> {
        let path = path.as_ref();
        let f = File::open(path)?;
        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(Self::from_reader(f, &path.to_string_lossy(), size))
    }
}

impl<R: Read> WarcPages<R> {
    /// Pages of a WARC read from any stream (a remote file, a pipe); `name` is what pages
    /// record as their WARC file, `size` the input's length when known (0 if not).
    pub fn from_reader(reader: R, name: &str, size: u64) -> Self {
        Self {
            reader: WarcReader::new(reader),
            file: name.to_string(),
            max_body: DEFAULT_MAX_BODY,
            stats: PageStats::default(),
            size,
        }
    }

    /// Cap records (before decoding) and decoded bodies at `max` bytes.
    pub fn with_max_size(mut self, max: usize) -> Self {
        self.reader = self.reader.with_max_record(max as u64);
        self.max_body = max;
        self
    }

    /// Size of the input file in bytes (compressed), for a progress bar.
    pub fn file_size(&self) -> u64 {
        self.size
    }

    /// Input bytes consumed so far; compare with [`Self::file_size`].
    pub fn input_offset(&self) -> u64 {
        self.reader.input_offset()
    }

    pub fn stats(&self) -> PageStats {
        let mut s = self.stats.clone();
        s.warc = self.reader.stats().clone();
        s
    }
}

impl<R: Read> Iterator for WarcPages<R> {
    type Item = Result<Page, WarcError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.reader.next()? {
                Err(e) => return Some(Err(e)),
                Ok(rec) => {
                    let c = convert_record(&rec, &self.file, self.max_body);
                    let s = &mut self.stats;
                    s.http_unparsable += c.http_unparsable as u64;
                    s.dechunk_failed += c.dechunk_failed as u64;
                    s.decode_failed += c.decode_failed as u64;
                    s.body_capped += c.body_capped as u64;
                    if let Some(p) = c.page {
                        // A body cut by our cap, or recorded cut (`WARC-Truncated`), is not
                        // the page: its hash and chunks would be wrong. Skipped and counted,
                        // except what ditto's crawler keeps (issue 37): HTML or text cut at its
                        // body cap, `WARC-Truncated: length` with a body, scanned as the crawl
                        // scanned it.
                        let kept_cut = rec.header("WARC-Truncated").is_some_and(|v| v.trim() == "length")
                            && !p.body.is_empty();
                        if c.body_capped || (rec.header("WARC-Truncated").is_some() && !kept_cut) {
                            s.truncated += 1;
                            continue;
                        }
                        // The reader saw the block end somewhere other than Content-Length
                        // says (issue 26: a record stored cut, silently): not the page.
                        if rec.issues.contains(&WarcErrorKind::LengthMismatch) {
                            s.length_mismatch += 1;
                            let declared = rec.header("Content-Length").unwrap_or("");
                            return Some(Err(WarcError::new(
                                WarcErrorKind::LengthMismatch,
                                rec.offset,
                                format!(
                                    "Content-Length {declared:?}, {} bytes read as the block; page record skipped",
                                    rec.block.len()
                                ),
                            )));
                        }
                        s.pages += 1;
                        return Some(Ok(p));
                    }
                }
            }
        }
    }
}
