//! The one WARC record type: what the reader yields and what the writer writes.

use super::date::parse_warc_date;
use super::error::WarcErrorKind;

/// One WARC record with its block in memory.
#[derive(Debug, Clone, Default)]
pub struct WarcRecord {
    /// The version from the `WARC/x.y` line, e.g. "1.0".
    pub version: String,
    /// WARC-Type as written (e.g. "response"); "" when missing.
    pub warc_type: String,
    /// WARC-Target-URI without surrounding `<>` and whitespace.
    pub target_uri: Option<String>,
    /// WARC-Date as Unix seconds; 0 when missing or invalid.
    pub date: i64,
    /// The record's Content-Type (e.g. `application/http; msgtype=response`).
    pub content_type: Option<String>,
    pub record_id: Option<String>,
    /// Offset of the record, or of its gzip member for gzip input (0 for a record not read
    /// from a file).
    pub offset: u64,
    /// All WARC header fields in order, duplicates kept.
    pub headers: Vec<(String, String)>,
    /// The record block (Content-Length bytes, less any swallowed next record).
    pub block: Vec<u8>,
    /// Problems that did not prevent reading the record.
    pub issues: Vec<WarcErrorKind>,
}

impl WarcRecord {
    /// A record of WARC `version` from its header fields (in order) and its block. The
    /// named fields are taken from `headers`; a bad WARC-Date or a missing mandatory field
    /// is noted in `issues`.
    pub fn new(version: impl Into<String>, headers: Vec<(String, String)>, block: Vec<u8>) -> Self {
        let mut rec = WarcRecord { version: version.into(), headers, block, ..WarcRecord::default() };
        rec.warc_type = rec.header("WARC-Type").unwrap_or("").to_string();
        rec.target_uri = rec.header("WARC-Target-URI").map(clean_uri).filter(|u| !u.is_empty());
        if let Some(d) = rec.header("WARC-Date") {
            match parse_warc_date(d) {
                Some(secs) => rec.date = secs,
                None => rec.issues.push(WarcErrorKind::BadDate),
            }
        }
        let mandatory = ["WARC-Type", "WARC-Record-ID", "WARC-Date"];
        if mandatory.iter().any(|name| rec.header(name).is_none()) {
            rec.issues.push(WarcErrorKind::MissingField);
        }
        rec.content_type = rec.header("Content-Type").map(str::to_string);
        rec.record_id = rec.header("WARC-Record-ID").map(str::to_string);
        rec
    }

    /// First header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The record as written in a file (WARC 1.1 §4): `WARC/{version}`, the header fields
    /// in order except Content-Length, a Content-Length of the block, blank line, block, and
    /// the two CRLFs that end a record. Values are written as they are: whoever builds the
    /// record keeps each on one line.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.block.len() + 512);
        out.extend_from_slice(format!("WARC/{}\r\n", self.version).as_bytes());
        for (name, value) in &self.headers {
            // The block's real length is written below; a stale one would contradict it.
            if name.eq_ignore_ascii_case("Content-Length") {
                continue;
            }
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", self.block.len()).as_bytes());
        out.extend_from_slice(&self.block);
        out.extend_from_slice(b"\r\n\r\n");
        out
    }
}

/// `<http://x/ y>` → `http://x/ y`: strip whitespace and the angle brackets wget wrote.
fn clean_uri(v: &str) -> String {
    let v = v.trim();
    let v = v.strip_prefix('<').unwrap_or(v);
    let v = v.strip_suffix('>').unwrap_or(v);
    v.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warc::WarcReader;

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    #[test]
    fn named_fields_and_issues_come_from_the_headers() {
        let rec = WarcRecord::new(
            "1.1",
            fields(&[
                ("WARC-Type", "resource"),
                ("WARC-Record-ID", "<urn:x>"),
                ("WARC-Date", "2014-01-27T17:12:38Z"),
                ("WARC-Target-URI", "< http://a/b c >"),
                ("Content-Type", "text/plain"),
            ]),
            b"hello".to_vec(),
        );
        assert_eq!(rec.warc_type, "resource");
        assert_eq!(rec.target_uri.as_deref(), Some("http://a/b c"));
        assert_eq!(rec.date, 1390842758);
        assert_eq!(rec.content_type.as_deref(), Some("text/plain"));
        assert_eq!(rec.record_id.as_deref(), Some("<urn:x>"));
        assert!(rec.issues.is_empty(), "{:?}", rec.issues);

        let bad = WarcRecord::new("1.0", fields(&[("WARC-Date", "yesterday")]), Vec::new());
        assert_eq!(bad.date, 0);
        assert_eq!(bad.issues, [WarcErrorKind::BadDate, WarcErrorKind::MissingField]);
    }

    #[test]
    fn written_records_read_back() {
        let rec = WarcRecord::new(
            "1.1",
            fields(&[
                ("WARC-Type", "resource"),
                ("WARC-Record-ID", "<urn:x>"),
                ("WARC-Date", "2024-03-01T12:00:05Z"),
                ("Content-Length", "999"),
            ]),
            b"hello\r\nworld".to_vec(),
        );
        let bytes = rec.to_bytes();
        assert!(bytes.starts_with(b"WARC/1.1\r\nWARC-Type: resource\r\n"));
        let back: Vec<_> = WarcReader::new(&bytes[..]).collect();
        assert_eq!(back.len(), 1);
        let Some(Ok(read)) = back.into_iter().next() else { panic!("no record read back") };
        assert_eq!(read.block, rec.block);
        assert_eq!(read.header("Content-Length"), Some("12"));
        assert_eq!((read.warc_type, read.date), (rec.warc_type, rec.date));
        assert!(read.issues.is_empty(), "{:?}", read.issues);
    }
}
