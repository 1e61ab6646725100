//! WARC/1.1 writer for the crawler's fetches (ISO 28500:2017, "WARC 1.1" below).
//!
//! Files are named `{prefix}-{YYYYMMDDhhmmss}-{serial:05}.warc.gz` (UTC time the file was
//! opened, serial increasing across restarts) and are written as
//! `{name}.open`, renamed to `{name}` when closed or rotated, so a finished name always
//! means a finished file. Every record is its own gzip member (WARC 1.1 annex D.2,
//! "record-at-time compression"), so a record can be read from its offset alone.
//!
//! Each file starts with a `warcinfo` record (WARC 1.1 §6.4); each fetch adds a `request`
//! and a `response` record (§6.5, §6.6) linked by `WARC-Concurrent-To` (§5.7). Both hold the
//! HTTP messages as sent, as Heritrix and wget write them: the request head the fetcher
//! wrote, and the response with its headers and its body still in its Content-Encoding
//! (gzip, br, …), so payload digests match other archives of the same resource. What the
//! HTTP client does not hand over is the one difference: a chunked body is stored de-chunked,
//! its `Transfer-Encoding` kept as `X-Ditto-Orig-Transfer-Encoding`; header names are in
//! lower case. Readers decode the body by its Content-Encoding ([`super::http`]).
//!
//! Crash recovery: [`WarcWriter::new`] finds leftover `{prefix}-*.warc.gz.open` files of a
//! crashed run, truncates each to its last complete gzip member (a member whose deflate
//! stream, CRC-32 and length trailer check out), and renames it to `.warc.gz`; a file with
//! no complete member is deleted. See [`recover_open_file`].

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use detector::fingerprint::sha1;

use super::date::{file_stamp, now_secs, warc_date};
use super::error::WarcError;
use super::record::WarcRecord;

/// Suffix of a file being written.
pub const OPEN_SUFFIX: &str = ".open";
/// Suffix of a finished file.
pub const WARC_SUFFIX: &str = ".warc.gz";

/// What the `warcinfo` record at the start of each file says (WARC 1.1 §6.4, fields as
/// recommended in annex C).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarcInfo {
    /// `software:`, default `ditto/{crate version}`.
    pub software: String,
    /// `operator:` (who runs the crawl, how to contact them).
    pub operator: Option<String>,
    /// `http-header-user-agent:`, the User-Agent the crawler sends.
    pub user_agent: Option<String>,
    /// `robots:` policy, e.g. `obey`.
    pub robots: Option<String>,
    /// `description:`.
    pub description: Option<String>,
}

impl Default for WarcInfo {
    fn default() -> Self {
        WarcInfo {
            software: format!("ditto/{}", env!("CARGO_PKG_VERSION")),
            operator: None,
            user_agent: None,
            robots: Some("obey".to_string()),
            description: None,
        }
    }
}

/// One fetch as it went over the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchRecord {
    /// The URL fetched (`WARC-Target-URI`).
    pub url: String,
    /// The server's address, when known (`WARC-IP-Address`).
    pub ip: Option<IpAddr>,
    /// Unix seconds (UTC) of the fetch (`WARC-Date`).
    pub fetch_time: i64,
    /// The HTTP request as sent: request line, headers, blank line (and body, if any).
    pub request_head: Vec<u8>,
    pub status: u16,
    /// Reason phrase; may be empty (HTTP/2 has none).
    pub reason: String,
    /// `HTTP/1.1`, `HTTP/2.0`, … (`HTTP/` is added when missing; empty means `HTTP/1.1`).
    pub http_version: String,
    /// Response headers in order, as received.
    pub response_headers: Vec<(String, String)>,
    /// The body as sent: transfer coding (chunking) removed, Content-Encoding intact.
    pub payload: Vec<u8>,
    /// The payload was cut at the crawler's size cap: the record gets `WARC-Truncated: length`
    /// (WARC 1.1 §5.13), so readers know it is not the whole resource.
    pub truncated: bool,
}

/// Where a record was written: file name (no directory), offset of its gzip member in
/// the file, and the member's compressed length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarcLocation {
    pub file: String,
    pub offset: u64,
    pub length: u64,
}

/// The file being written.
#[derive(Debug)]
struct OpenWarc {
    file: File,
    name: String,
    open_path: PathBuf,
    final_path: PathBuf,
    len: u64,
    warcinfo_id: String,
}

/// Writes fetches into rotating `.warc.gz` files. Not thread-safe by itself: one writer
/// per crawler thread or behind a lock.
#[derive(Debug)]
pub struct WarcWriter {
    dir: PathBuf,
    prefix: String,
    max_file_bytes: u64,
    info: WarcInfo,
    next_serial: u32,
    current: Option<OpenWarc>,
    recovered: Vec<PathBuf>,
}

impl WarcWriter {
    /// A writer into `dir` (created if missing). A file is rotated once it holds
    /// `max_file_bytes` or more, so a file exceeds the limit by at most one fetch (the
    /// request and response of a fetch stay together). Leftover `.open` files with this
    /// prefix are recovered first ([`recovered`](Self::recovered) lists them); serials
    /// continue after the highest one found in `dir`.
    pub fn new(dir: impl Into<PathBuf>, prefix: &str, max_file_bytes: u64) -> Result<Self, WarcError> {
        if prefix.is_empty() || prefix.contains(['/', '\\']) || prefix.chars().any(char::is_control) {
            return Err(WarcError::bad_name(format!("bad WARC prefix {prefix:?}")));
        }
        let dir = dir.into();
        fs::create_dir_all(&dir)?;
        // Serials are taken before recovery so that even a deleted leftover's is not reused.
        let next_serial = max_serial(&dir, prefix)?.map_or(0, |s| s.saturating_add(1));
        let recovered = recover_open_files(&dir, prefix)?;
        Ok(WarcWriter {
            dir,
            prefix: prefix.to_string(),
            max_file_bytes,
            info: WarcInfo::default(),
            next_serial,
            current: None,
            recovered,
        })
    }

    /// Set the `warcinfo` contents; applies to files opened from now on.
    pub fn with_info(mut self, info: WarcInfo) -> Self {
        self.info = info;
        self
    }

    /// Finished files renamed from `.open` leftovers by [`new`](Self::new).
    pub fn recovered(&self) -> &[PathBuf] {
        &self.recovered
    }

    /// Name of the file being written (its final name), if one is open.
    pub fn current_file(&self) -> Option<&str> {
        self.current.as_ref().map(|c| c.name.as_str())
    }

    /// Write the `request` and `response` records of one fetch; returns where the response
    /// record is.
    pub fn write_fetch(&mut self, rec: &FetchRecord) -> Result<WarcLocation, WarcError> {
        if self.current.as_ref().is_some_and(|c| c.len >= self.max_file_bytes) {
            self.close()?;
        }
        if self.current.is_none() {
            self.open_next()?;
        }
        let Some(cur) = self.current.as_mut() else {
            return Err(WarcError::file(io::Error::other("no open WARC file")));
        };
        let request_id = record_id();
        let response_id = record_id();
        let date = warc_date(rec.fetch_time);
        let uri = header_uri(&rec.url);
        let ip = rec.ip.map(|a| a.to_string());

        let mut fields = vec![
            ("WARC-Type", "request".to_string()),
            ("WARC-Record-ID", request_id.clone()),
            ("WARC-Date", date.clone()),
            ("WARC-Target-URI", uri.clone()),
        ];
        if let Some(ip) = &ip {
            fields.push(("WARC-IP-Address", ip.clone()));
        }
        fields.push(("WARC-Concurrent-To", response_id.clone()));
        fields.push(("WARC-Warcinfo-ID", cur.warcinfo_id.clone()));
        fields.push(("Content-Type", "application/http; msgtype=request".to_string()));
        fields.push(("WARC-Block-Digest", sha1_base32(&rec.request_head)));
        let request = record_member(fields, rec.request_head.clone())?;

        let block = response_block(rec);
        let mut fields = vec![
            ("WARC-Type", "response".to_string()),
            ("WARC-Record-ID", response_id),
            ("WARC-Date", date),
            ("WARC-Target-URI", uri),
        ];
        if let Some(ip) = ip {
            fields.push(("WARC-IP-Address", ip));
        }
        fields.push(("WARC-Concurrent-To", request_id));
        fields.push(("WARC-Warcinfo-ID", cur.warcinfo_id.clone()));
        fields.push(("Content-Type", "application/http; msgtype=response".to_string()));
        fields.push(("WARC-Block-Digest", sha1_base32(&block)));
        // The payload is the entity body as sent (WARC 1.1 §5.9): Content-Encoding intact.
        fields.push(("WARC-Payload-Digest", sha1_base32(&rec.payload)));
        if rec.truncated {
            fields.push(("WARC-Truncated", "length".to_string()));
        }
        let response = record_member(fields, block)?;

        cur.append(&request)?;
        let offset = cur.len;
        cur.append(&response)?;
        Ok(WarcLocation { file: cur.name.clone(), offset, length: response.len() as u64 })
    }

    /// Make everything written so far durable (`fdatasync`). Records are handed to the
    /// OS as they are written; this is for callers that then point at them (the store).
    pub fn flush(&mut self) -> Result<(), WarcError> {
        match self.current.as_mut() {
            Some(c) => {
                c.file.flush()?;
                Ok(c.file.sync_data()?)
            }
            None => Ok(()),
        }
    }

    /// Finish the current file: fsync, rename `.open` to its final name, fsync the
    /// directory. A later write opens a new file. Closing with no file open does nothing.
    pub fn close(&mut self) -> Result<(), WarcError> {
        let Some(mut cur) = self.current.take() else {
            return Ok(());
        };
        cur.file.flush()?;
        cur.file.sync_all()?;
        drop(cur.file);
        fs::rename(&cur.open_path, &cur.final_path)?;
        sync_dir(&self.dir);
        Ok(())
    }

    fn open_next(&mut self) -> Result<(), WarcError> {
        let stamp = file_stamp(now_secs());
        // Skip names already taken (a restart within the same second, a foreign file).
        let (name, open_path, final_path, file) = loop {
            let serial = self.next_serial;
            self.next_serial =
                serial.checked_add(1).ok_or_else(|| io::Error::other("WARC file serials exhausted"))?;
            let name = format!("{}-{stamp}-{serial:05}{WARC_SUFFIX}", self.prefix);
            let final_path = self.dir.join(&name);
            let open_path = self.dir.join(format!("{name}{OPEN_SUFFIX}"));
            if final_path.exists() {
                continue;
            }
            match OpenOptions::new().write(true).create_new(true).open(&open_path) {
                Ok(f) => break (name, open_path, final_path, f),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let warcinfo_id = record_id();
        let body = warcinfo_block(&self.info);
        let fields = vec![
            ("WARC-Type", "warcinfo".to_string()),
            ("WARC-Record-ID", warcinfo_id.clone()),
            ("WARC-Date", warc_date(now_secs())),
            ("WARC-Filename", header_value(&name)),
            ("Content-Type", "application/warc-fields".to_string()),
            ("WARC-Block-Digest", sha1_base32(&body)),
        ];
        let member = record_member(fields, body)?;
        let mut cur = OpenWarc { file, name, open_path, final_path, len: 0, warcinfo_id };
        cur.append(&member)?;
        self.current = Some(cur);
        Ok(())
    }
}

impl Drop for WarcWriter {
    /// Best effort: a writer dropped without [`close`](WarcWriter::close) still finishes
    /// its file; errors are lost here (call `close` to see them).
    fn drop(&mut self) {
        let _ = self.close();
    }
}

impl OpenWarc {
    /// Append one whole gzip member. On a failed write the file is cut back to its last
    /// complete member, so later records never follow a torn one.
    fn append(&mut self, member: &[u8]) -> io::Result<()> {
        if let Err(e) = self.file.write_all(member) {
            let _ = self.file.set_len(self.len);
            let _ = self.file.seek(SeekFrom::Start(self.len));
            return Err(e);
        }
        self.len += member.len() as u64;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Record formatting
// ---------------------------------------------------------------------------------------

/// The WARC version the writer writes.
const WRITTEN_VERSION: &str = "1.1";

/// A record of these fields (Content-Length is added) and block, as one gzip member.
fn record_member(fields: Vec<(&str, String)>, block: Vec<u8>) -> io::Result<Vec<u8>> {
    let fields = fields.into_iter().map(|(name, value)| (name.to_string(), value)).collect();
    gzip_member(&WarcRecord::new(WRITTEN_VERSION, fields, block).to_bytes())
}

fn gzip_member(bytes: &[u8]) -> io::Result<Vec<u8>> {
    let mut gz = GzEncoder::new(Vec::with_capacity(bytes.len() / 3 + 64), Compression::default());
    gz.write_all(bytes)?;
    gz.finish()
}

/// The `application/warc-fields` block of a `warcinfo` record.
fn warcinfo_block(info: &WarcInfo) -> Vec<u8> {
    let mut fields = vec![("software", info.software.clone())];
    fields.push(("format", "WARC File Format 1.1".to_string()));
    fields.push((
        "conformsTo",
        "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/".to_string(),
    ));
    for (name, value) in [
        ("operator", &info.operator),
        ("http-header-user-agent", &info.user_agent),
        ("robots", &info.robots),
        ("description", &info.description),
    ] {
        if let Some(v) = value {
            fields.push((name, v.clone()));
        }
    }
    let mut out = Vec::new();
    for (name, value) in fields {
        out.extend_from_slice(format!("{name}: {}\r\n", header_value(&value)).as_bytes());
    }
    out
}

/// Headers renamed in the stored response (to `X-Ditto-Orig-{name}`) because the stored
/// payload is no longer in that form: the HTTP client de-chunks and hands over no chunk
/// framing. Content-Encoding and Content-Length stay: the payload is as sent.
const DECODED_AWAY: [&str; 1] = ["Transfer-Encoding"];

/// The `application/http; msgtype=response` block: status line, headers as received (in
/// order; [`DECODED_AWAY`] renamed), blank line, payload as sent.
fn response_block(rec: &FetchRecord) -> Vec<u8> {
    let version = match rec.http_version.trim() {
        "" => "HTTP/1.1".to_string(),
        // `get` so a non-ASCII version string cannot split a character.
        v if v.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("HTTP/")) => format!("HTTP/{}", &v[5..]),
        v => format!("HTTP/{v}"),
    };
    let mut head = format!("{} {} {}\r\n", header_value(&version), rec.status, header_value(&rec.reason));
    for (name, value) in &rec.response_headers {
        if !is_token(name) {
            continue; // not a header name; would break the header block
        }
        let value = header_value(value);
        if DECODED_AWAY.iter().any(|d| d.eq_ignore_ascii_case(name)) {
            head.push_str(&format!("X-Ditto-Orig-{name}: {value}\r\n"));
            continue;
        }
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = Vec::with_capacity(head.len() + rec.payload.len());
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(&rec.payload);
    out
}

/// RFC 9110 §5.6.2 token (header field names).
fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A header value on one line: control characters (CR, LF, …) become spaces, so a
/// hostile value cannot inject fields or end the header block.
fn header_value(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().to_string()
}

/// `WARC-Target-URI` value: a URI has no spaces (WARC 1.1 §5.6 writes it bare, no `<>`).
fn header_uri(s: &str) -> String {
    header_value(s).replace(' ', "%20")
}

/// A new `<urn:uuid:…>` record ID (WARC 1.1 §5.2), random version 4 UUID (RFC 9562 §5.4).
fn record_id() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("<urn:uuid:{}-{}-{}-{}-{}>", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// Base32 (RFC 4648 §6 alphabet, `=` padding). 20 bytes (a SHA-1) give 32 characters and
/// no padding.
pub fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    for chunk in bytes.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let v = buf.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        // Characters carrying input bits: ceil(8 * len / 5); the rest are padding.
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(ALPHABET[((v >> (35 - 5 * i)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `sha1:` + base32 of the SHA-1 of `bytes`, the customary WARC digest form (§5.8, §5.9).
pub fn sha1_base32(bytes: &[u8]) -> String {
    format!("sha1:{}", base32(&sha1(bytes)))
}

// ---------------------------------------------------------------------------------------
// Files, serials, recovery
// ---------------------------------------------------------------------------------------

/// Serial of a file name `{prefix}-{14 digits}-{serial}.warc.gz[.open]` of this prefix.
fn serial_of(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?.strip_prefix('-')?;
    let rest = rest.strip_suffix(OPEN_SUFFIX).unwrap_or(rest);
    let rest = rest.strip_suffix(WARC_SUFFIX)?;
    let (stamp, serial) = rest.split_once('-')?;
    if stamp.len() != 14 || !stamp.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if serial.is_empty() || !serial.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    serial.parse().ok()
}

fn max_serial(dir: &Path, prefix: &str) -> Result<Option<u32>, WarcError> {
    let mut max = None;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if let Some(s) = entry.file_name().to_str().and_then(|n| serial_of(n, prefix)) {
            max = max.max(Some(s));
        }
    }
    Ok(max)
}

/// Recover every `{prefix}-….warc.gz.open` in `dir` ([`recover_open_file`]); returns the
/// finished files.
pub fn recover_open_files(dir: &Path, prefix: &str) -> Result<Vec<PathBuf>, WarcError> {
    let mut open = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.ends_with(OPEN_SUFFIX) && serial_of(name, prefix).is_some() {
            open.push(entry.path());
        }
    }
    open.sort();
    let mut done = Vec::new();
    for path in open {
        if let Some(p) = recover_open_file(&path)?.finished {
            done.push(p);
        }
    }
    Ok(done)
}

/// What [`recover_open_file`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The renamed file, or `None` when nothing was complete and the file was deleted.
    pub finished: Option<PathBuf>,
    /// Bytes kept (whole gzip members).
    pub kept: u64,
    /// Bytes cut off after the last complete member.
    pub dropped: u64,
}

/// Recover a `.open` file left by a crash: keep the longest prefix made of complete gzip
/// members (each inflates to its end and its CRC-32 and size trailer match), cut the rest,
/// fsync, and rename it without `.open`. A file without one complete member is deleted.
/// Records are whole members, so the result holds only whole records.
pub fn recover_open_file(path: &Path) -> Result<Recovery, WarcError> {
    let total = fs::metadata(path)?.len();
    let kept = complete_members_len(File::open(path)?)?;
    let final_path = match path.to_str().and_then(|p| p.strip_suffix(OPEN_SUFFIX)) {
        Some(p) => PathBuf::from(p),
        None => return Err(WarcError::bad_name(format!("not a {OPEN_SUFFIX} file: {path:?}"))),
    };
    if kept == 0 {
        fs::remove_file(path)?;
        return Ok(Recovery { finished: None, kept: 0, dropped: total });
    }
    let file = OpenOptions::new().write(true).open(path)?;
    file.set_len(kept)?;
    file.sync_all()?;
    drop(file);
    fs::rename(path, &final_path)?;
    if let Some(dir) = final_path.parent() {
        sync_dir(dir);
    }
    Ok(Recovery { finished: Some(final_path), kept, dropped: total - kept })
}

/// A reader that counts the bytes it has produced.
struct Counting<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Length of the longest prefix of `input` made of complete gzip members.
pub fn complete_members_len<R: Read>(input: R) -> Result<u64, WarcError> {
    let mut reader = BufReader::new(Counting { inner: input, count: 0 });
    let pos = |r: &BufReader<Counting<R>>| r.get_ref().count - r.buffer().len() as u64;
    let mut good = 0;
    loop {
        if reader.fill_buf()?.is_empty() {
            return Ok(good);
        }
        // bufread::GzDecoder reads exactly one member and leaves what follows unread.
        let mut member = flate2::bufread::GzDecoder::new(reader);
        let ok = io::copy(&mut member, &mut io::sink()).is_ok();
        reader = member.into_inner();
        let end = pos(&reader);
        if !ok || end == good {
            return Ok(good);
        }
        good = end;
    }
}

/// fsync a directory so a rename in it is durable (best effort: not every platform can
/// open a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_rfc4648_vectors() {
        // RFC 4648 §10 test vectors.
        let cases = [
            ("", ""),
            ("f", "MY======"),
            ("fo", "MZXQ===="),
            ("foo", "MZXW6==="),
            ("foob", "MZXW6YQ="),
            ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI======"),
        ];
        for (input, want) in cases {
            assert_eq!(base32(input.as_bytes()), want, "{input}");
        }
        // SHA-1 of the empty string, as WARC tools write it.
        assert_eq!(sha1_base32(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }

    #[test]
    fn record_ids_are_v4_uuids() {
        let id = record_id();
        assert_eq!(id.len(), "<urn:uuid:>".len() + 36);
        assert!(id.starts_with("<urn:uuid:") && id.ends_with('>'));
        assert_eq!(&id[24..25], "4");
        assert!(matches!(&id[29..30], "8" | "9" | "a" | "b"), "{id}");
        assert_ne!(record_id(), id);
    }

    #[test]
    fn serials_parse_only_our_names() {
        assert_eq!(serial_of("c-20240301120005-00007.warc.gz", "c"), Some(7));
        assert_eq!(serial_of("c-20240301120005-00007.warc.gz.open", "c"), Some(7));
        assert_eq!(serial_of("cc-20240301120005-00007.warc.gz", "c"), None);
        assert_eq!(serial_of("c-2024-00007.warc.gz", "c"), None);
        assert_eq!(serial_of("c-20240301120005-00007.warc", "c"), None);
    }

    #[test]
    fn response_block_keeps_the_message_as_sent() {
        let rec = FetchRecord {
            url: "http://h/".into(),
            ip: None,
            fetch_time: 0,
            request_head: Vec::new(),
            status: 200,
            reason: "OK".into(),
            http_version: "HTTP/1.1".into(),
            response_headers: vec![
                ("Content-Type".into(), "text/html".into()),
                ("Content-Encoding".into(), "gzip".into()),
                ("transfer-encoding".into(), "chunked".into()),
                ("content-length".into(), "5".into()),
                ("X-Evil".into(), "a\r\nInjected: yes".into()),
                ("Bad Name".into(), "x".into()),
            ],
            payload: b"\x1f\x8b..".to_vec(),
            truncated: false,
        };
        // Headers kept (Content-Encoding, Content-Length) and the payload byte for byte;
        // only the chunking is renamed, since the payload is stored de-chunked.
        let want = [
            &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\
               X-Ditto-Orig-transfer-encoding: chunked\r\ncontent-length: 5\r\n\
               X-Evil: a  Injected: yes\r\n\r\n"[..],
            b"\x1f\x8b..",
        ]
        .concat();
        assert_eq!(String::from_utf8_lossy(&response_block(&rec)), String::from_utf8_lossy(&want));
        assert_eq!(response_block(&rec), want);
        let h2 = FetchRecord { http_version: "2.0".into(), reason: String::new(), ..rec };
        assert!(response_block(&h2).starts_with(b"HTTP/2.0 200 \r\n"));
        let odd = FetchRecord { http_version: "HTTé/1".into(), ..h2.clone() };
        assert!(response_block(&odd).starts_with("HTTP/HTTé/1 200 \r\n".as_bytes()));
        let lower = FetchRecord { http_version: "http/1.0".into(), ..h2 };
        assert!(response_block(&lower).starts_with(b"HTTP/1.0 200 \r\n"));
    }
}
