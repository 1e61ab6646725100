//! Streaming WARC reader (WARC/0.18, 1.0, 1.1) over any [`Read`], our own code.
//!
//! Handles gzip-per-record `.warc.gz` (detected by magic bytes, not by name), plain
//! `.warc`, and mixtures of both. Gzip members are decoded one at a time with our own
//! header/trailer handling so that each record knows the offset of its member, a CRC
//! failure is pinned to one member, and a truncated member is reported instead of being
//! passed on as a short record.
//!
//! Recovery follows `shared/data/warc/MANIFEST.md` ("what a robust reader should do"):
//! * truncated gzip member: error, partial record dropped, reading ends;
//! * corrupt member (CRC or inflate error): error, record dropped, resync on the next
//!   member (right after the trailer for a CRC error, by scanning for gzip magic otherwise);
//! * garbage between records: one `Garbage` error, skip to the next `WARC/` line or gzip
//!   member;
//! * missing / unparsable Content-Length: error, resync on the next `WARC/` line;
//! * Content-Length that does not match the block: record emitted with a
//!   [`WarcErrorKind::LengthMismatch`] issue, resync on the real next record (also when the
//!   bad length swallowed the start of the next record);
//! * several records in one gzip stream, or members not aligned to records: read through,
//!   records flagged (their offsets point at a member, so they cannot be indexed);
//! * a file that does not start with a WARC record, or an unknown `WARC/` version: error,
//!   reading stops.
//!
//! Errors are values: the iterator yields `Result<WarcRecord, WarcError>` and ends after a
//! fatal one. Problems that do not lose a record are attached to it as `issues` instead.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use flate2::{Crc, Decompress, FlushDecompress, Status};

use detector::{Page, PageOrigin};

use super::http;

/// Default cap on one record's block; bigger records are drained and skipped.
pub const DEFAULT_MAX_RECORD: u64 = 64 << 20;
/// Raw input buffer size (large reads keep syscalls off the profile).
const RAW_BUF: usize = 1 << 20;
/// Decompressed output buffer size.
const OUT_BUF: usize = 256 << 10;
/// Cap on a record's WARC header block.
const MAX_HEADER: usize = 1 << 20;
/// How much of a not-WARC gzip file we decode to find out whether it is corrupt.
const NOT_WARC_PROBE: usize = 1 << 20;
/// How far back from a block's end we look for a swallowed `WARC/` line.
const TAIL_SEARCH: usize = 64 << 10;

const GZ_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// What went wrong (or, for issues attached to a record, what is suspicious).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WarcErrorKind {
    /// Reading the underlying input failed.
    Io,
    /// The input ended inside a gzip member (the partial record is dropped).
    TruncatedGzip,
    /// The input ended inside an uncompressed record.
    TruncatedRecord,
    /// A gzip member decoded but its CRC32 / ISIZE trailer does not match.
    CorruptGzip,
    /// A gzip member's header or deflate data is invalid.
    Inflate,
    /// The input does not start with a WARC record.
    NotWarc,
    /// Bytes between records that are not a record; skipped.
    Garbage,
    /// A `WARC/` line with a version we do not know; reading stops.
    UnknownVersion,
    /// A record without Content-Length; skipped.
    MissingContentLength,
    /// A Content-Length that is not a number; record skipped.
    BadContentLength,
    /// A WARC header block over the cap; record skipped.
    HeaderTooLarge,
    /// A record over the configured body cap; drained and skipped.
    RecordTooLarge,
    /// Issue: Content-Length does not match where the next record starts.
    LengthMismatch,
    /// Issue: a mandatory field (WARC-Record-ID, WARC-Date, WARC-Type) is missing.
    MissingField,
    /// Issue: WARC-Date present but not ISO 8601 (`date` is 0).
    BadDate,
    /// Issue: several records in one gzip member; offsets cannot index them.
    SharedGzipMember,
    /// Issue: the record spans gzip member boundaries.
    UnalignedGzipMember,
    /// Issue: an uncompressed record in a gzip file.
    MixedCompression,
}

impl WarcErrorKind {
    /// Short stable name, for stats and logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Io => "io",
            Self::TruncatedGzip => "truncated_gzip",
            Self::TruncatedRecord => "truncated_record",
            Self::CorruptGzip => "corrupt_gzip",
            Self::Inflate => "inflate",
            Self::NotWarc => "not_warc",
            Self::Garbage => "garbage",
            Self::UnknownVersion => "unknown_version",
            Self::MissingContentLength => "missing_content_length",
            Self::BadContentLength => "bad_content_length",
            Self::HeaderTooLarge => "header_too_large",
            Self::RecordTooLarge => "record_too_large",
            Self::LengthMismatch => "length_mismatch",
            Self::MissingField => "missing_field",
            Self::BadDate => "bad_date",
            Self::SharedGzipMember => "shared_gzip_member",
            Self::UnalignedGzipMember => "unaligned_gzip_member",
            Self::MixedCompression => "mixed_compression",
        }
    }

    fn message(self) -> &'static str {
        match self {
            Self::Io => "I/O error",
            Self::TruncatedGzip => "unexpected EOF inside gzip member",
            Self::TruncatedRecord => "unexpected EOF inside record",
            Self::CorruptGzip => "gzip member fails its CRC32/size check",
            Self::Inflate => "gzip decompression error",
            Self::NotWarc => "not a WARC file",
            Self::Garbage => "garbage between records",
            Self::UnknownVersion => "unknown WARC version",
            Self::MissingContentLength => "missing Content-Length",
            Self::BadContentLength => "invalid Content-Length",
            Self::HeaderTooLarge => "WARC header block too large",
            Self::RecordTooLarge => "record larger than the cap, skipped",
            Self::LengthMismatch => "Content-Length does not match the record block",
            Self::MissingField => "missing mandatory WARC field",
            Self::BadDate => "invalid WARC-Date",
            Self::SharedGzipMember => "several records in one gzip member",
            Self::UnalignedGzipMember => "gzip members not aligned to records",
            Self::MixedCompression => "uncompressed record in a gzip file",
        }
    }

    /// After an error of this kind the reader stops.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            Self::Io | Self::TruncatedGzip | Self::TruncatedRecord | Self::NotWarc | Self::UnknownVersion
        )
    }
}

/// An error with the byte offset (of the gzip member for gzip input) it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarcError {
    pub kind: WarcErrorKind,
    /// Input offset: the gzip member's start, or the record's / garbage's start.
    pub offset: u64,
    /// Extra detail (inner error text, byte counts); may be empty.
    pub detail: String,
}

impl WarcError {
    pub fn new(kind: WarcErrorKind, offset: u64, detail: impl Into<String>) -> Self {
        Self { kind, offset, detail: detail.into() }
    }
}

impl fmt::Display for WarcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}", self.kind.message(), self.offset)?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for WarcError {}

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
    /// Offset of the record, or of its gzip member for gzip input.
    pub offset: u64,
    /// All WARC header fields in order, duplicates kept.
    pub headers: Vec<(String, String)>,
    /// The record block (Content-Length bytes, less any swallowed next record).
    pub block: Vec<u8>,
    /// Problems that did not prevent reading the record.
    pub issues: Vec<WarcErrorKind>,
}

impl WarcRecord {
    /// First header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Counters over everything a reader has seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarcStats {
    /// Records yielded, by WARC-Type.
    pub records_by_type: BTreeMap<String, u64>,
    /// Errors yielded and issues attached to records, by kind.
    pub errors_by_kind: BTreeMap<WarcErrorKind, u64>,
    /// Records yielded.
    pub records: u64,
    /// Input bytes consumed (compressed bytes for gzip input).
    pub bytes_in: u64,
    /// Block bytes of yielded records.
    pub block_bytes: u64,
    /// Input bytes skipped while resynchronizing.
    pub bytes_skipped: u64,
    /// Records over the cap, drained and skipped.
    pub oversized: u64,
}

impl WarcStats {
    pub fn errors(&self, kind: WarcErrorKind) -> u64 {
        self.errors_by_kind.get(&kind).copied().unwrap_or(0)
    }
    pub fn records_of(&self, warc_type: &str) -> u64 {
        self.records_by_type.get(warc_type).copied().unwrap_or(0)
    }
}

// ---------------------------------------------------------------------------------------
// Raw input: a big buffer over the reader that knows the file offset of every byte.

struct RawInput<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    /// File offset of `buf[0]`.
    base: u64,
    eof: bool,
}

impl<R: Read> RawInput<R> {
    fn new(inner: R) -> Self {
        Self { inner, buf: vec![0; RAW_BUF], pos: 0, len: 0, base: 0, eof: false }
    }

    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn avail(&self) -> &[u8] {
        &self.buf[self.pos..self.len]
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.len);
    }

    fn read_more(&mut self) -> io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.len, 0);
            self.base += self.pos as u64;
            self.len -= self.pos;
            self.pos = 0;
        }
        if self.len == self.buf.len() {
            let n = self.buf.len() * 2;
            self.buf.resize(n, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.len += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// At least `n` bytes available unless the input ends first.
    fn fill_min(&mut self, n: usize) -> io::Result<usize> {
        while self.len - self.pos < n && !self.eof {
            self.read_more()?;
        }
        Ok(self.len - self.pos)
    }

    /// Put bytes back in front of the current position (they came from there).
    fn unread(&mut self, bytes: &[u8]) {
        let off = self.offset().saturating_sub(bytes.len() as u64);
        let mut v = Vec::with_capacity(bytes.len() + (self.len - self.pos) + RAW_BUF);
        v.extend_from_slice(bytes);
        v.extend_from_slice(&self.buf[self.pos..self.len]);
        self.len = v.len();
        v.resize(self.len.max(RAW_BUF), 0);
        self.buf = v;
        self.pos = 0;
        self.base = off;
    }
}

// ---------------------------------------------------------------------------------------
// Units: the stretch of input being read is either one gzip member or plain bytes.

struct GzMember {
    start: u64,
    inflate: Decompress,
    crc: Crc,
    finished: bool,
}

enum Unit {
    None,
    Plain,
    Gzip(Box<GzMember>),
}

/// Internal read failure: clean end of input, or a real error.
enum Fail {
    Eof,
    Err(WarcError),
}

impl From<WarcError> for Fail {
    fn from(e: WarcError) -> Self {
        Fail::Err(e)
    }
}

fn io_err(offset: u64, e: io::Error) -> WarcError {
    WarcError::new(WarcErrorKind::Io, offset, e.to_string())
}

/// One inflate step of member `m` into `out[*olen..]`; returns bytes produced (0 once the
/// member is finished and its trailer verified).
fn gz_step<R: Read>(
    raw: &mut RawInput<R>,
    m: &mut GzMember,
    out: &mut Vec<u8>,
    olen: &mut usize,
) -> Result<usize, WarcError> {
    if m.finished {
        return Ok(0);
    }
    if out.len() - *olen < OUT_BUF / 4 {
        let n = out.len() + OUT_BUF;
        out.resize(n, 0);
    }
    loop {
        if raw.avail().is_empty() {
            raw.fill_min(1).map_err(|e| io_err(m.start, e))?;
        }
        if raw.avail().is_empty() {
            return Err(WarcError::new(WarcErrorKind::TruncatedGzip, m.start, ""));
        }
        let (in0, out0) = (m.inflate.total_in(), m.inflate.total_out());
        let status = m
            .inflate
            .decompress(raw.avail(), &mut out[*olen..], FlushDecompress::None)
            .map_err(|e| WarcError::new(WarcErrorKind::Inflate, m.start, e.to_string()))?;
        let consumed = (m.inflate.total_in() - in0) as usize;
        let produced = (m.inflate.total_out() - out0) as usize;
        raw.consume(consumed);
        m.crc.update(&out[*olen..*olen + produced]);
        *olen += produced;
        if status == Status::StreamEnd {
            m.finished = true;
            let have = raw.fill_min(8).map_err(|e| io_err(m.start, e))?;
            if have < 8 {
                return Err(WarcError::new(WarcErrorKind::TruncatedGzip, m.start, "in trailer"));
            }
            let t = raw.avail();
            let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
            let size = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
            raw.consume(8);
            if crc != m.crc.sum() || size != m.crc.amount() {
                return Err(WarcError::new(WarcErrorKind::CorruptGzip, m.start, "incorrect data check"));
            }
            return Ok(produced);
        }
        if produced > 0 {
            return Ok(produced);
        }
        if consumed == 0 {
            // Input and output space available but no progress: the stream is stuck.
            return Err(WarcError::new(WarcErrorKind::Inflate, m.start, "inflate stalled"));
        }
    }
}

/// Parse a gzip member header at the current raw position (magic already checked).
fn gz_header<R: Read>(raw: &mut RawInput<R>, start: u64) -> Result<(), WarcError> {
    let trunc = || WarcError::new(WarcErrorKind::TruncatedGzip, start, "in header");
    let ioe = |e| io_err(start, e);
    if raw.fill_min(10).map_err(ioe)? < 10 {
        return Err(trunc());
    }
    let flags = raw.avail()[3];
    raw.consume(10);
    if flags & 0xe0 != 0 {
        return Err(WarcError::new(WarcErrorKind::Inflate, start, "reserved gzip flags set"));
    }
    if flags & 0x04 != 0 {
        // FEXTRA (e.g. the "sl" subfield some writers add).
        if raw.fill_min(2).map_err(ioe)? < 2 {
            return Err(trunc());
        }
        let a = raw.avail();
        let mut xlen = u16::from_le_bytes([a[0], a[1]]) as usize;
        raw.consume(2);
        while xlen > 0 {
            let n = raw.fill_min(1).map_err(ioe)?;
            if n == 0 {
                return Err(trunc());
            }
            let k = n.min(xlen);
            raw.consume(k);
            xlen -= k;
        }
    }
    for bit in [0x08u8, 0x10] {
        // FNAME, FCOMMENT: zero-terminated.
        if flags & bit != 0 {
            loop {
                if raw.fill_min(1).map_err(ioe)? == 0 {
                    return Err(trunc());
                }
                let a = raw.avail();
                if let Some(i) = a.iter().position(|&b| b == 0) {
                    raw.consume(i + 1);
                    break;
                }
                let n = a.len();
                raw.consume(n);
            }
        }
    }
    if flags & 0x02 != 0 {
        if raw.fill_min(2).map_err(ioe)? < 2 {
            return Err(trunc());
        }
        raw.consume(2);
    }
    Ok(())
}

/// Where a resync scan may stop in `buf`: a `WARC/<digit>` at a line start, or (in plain
/// input) gzip magic. `prev_nl`: the byte before `buf[0]` was a newline.
fn find_resync(buf: &[u8], prev_nl: bool, want_gzip: bool) -> Option<usize> {
    let mut i = 0;
    while i + 6 <= buf.len() {
        let rest = &buf[i..];
        let off = rest.iter().position(|&b| b == b'W' || (want_gzip && b == 0x1f))?;
        i += off;
        if i + 6 > buf.len() {
            return None;
        }
        let b = &buf[i..];
        if b[0] == b'W' {
            let line_start = if i == 0 { prev_nl } else { buf[i - 1] == b'\n' };
            if line_start && b.starts_with(b"WARC/") && b[5].is_ascii_digit() {
                return Some(i);
            }
        } else if b.starts_with(&GZ_MAGIC) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Is `version` like "1.0" / "0.18"?
fn valid_version(v: &str) -> bool {
    match v.split_once('.') {
        Some((a, b)) => {
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

// ---------------------------------------------------------------------------------------
// The reader.

/// Streaming WARC record iterator; see the module docs for recovery behaviour.
pub struct WarcReader<R> {
    raw: RawInput<R>,
    unit: Unit,
    out: Vec<u8>,
    opos: usize,
    olen: usize,
    max_record: u64,
    stats: WarcStats,
    done: bool,
    /// Nothing read yet: a non-WARC start means "not a WARC file".
    at_start: bool,
    /// The first unit was gzip (a plain record later is "mixed compression").
    gzip_file: bool,
    /// Records started in the current gzip member.
    member_records: u32,
    /// The record being read crossed a unit boundary.
    crossed: bool,
    /// After an inflate error: scan the raw input for the next member or record.
    scan_raw: bool,
    /// The record just read is followed by another one in the same gzip member.
    shared_next: bool,
    /// An error to yield before reading on (garbage found after a good record).
    pending: Option<WarcError>,
}

enum Trailer {
    Ok,
    Mismatch,
    Garbage(WarcError),
}

enum Step {
    Record(Box<WarcRecord>),
    Again,
    End,
}

impl WarcReader<File> {
    /// Open a WARC file (gzip or not, whatever its name).
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self::new(File::open(path)?))
    }
}

impl<R: Read> WarcReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            raw: RawInput::new(inner),
            unit: Unit::None,
            out: vec![0; OUT_BUF],
            opos: 0,
            olen: 0,
            max_record: DEFAULT_MAX_RECORD,
            stats: WarcStats::default(),
            done: false,
            at_start: true,
            gzip_file: false,
            member_records: 0,
            crossed: false,
            scan_raw: false,
            shared_next: false,
            pending: None,
        }
    }

    /// Records whose block is larger than `max` bytes are drained and skipped.
    pub fn with_max_record(mut self, max: u64) -> Self {
        self.max_record = max;
        self
    }

    pub fn stats(&self) -> &WarcStats {
        &self.stats
    }

    /// Input bytes consumed so far (compressed offset for gzip input), for progress bars.
    pub fn input_offset(&self) -> u64 {
        self.raw.offset()
    }

    // -- unit-level byte access ---------------------------------------------------------

    fn avail(&self) -> &[u8] {
        match self.unit {
            Unit::None => &[],
            Unit::Plain => self.raw.avail(),
            Unit::Gzip(_) => &self.out[self.opos..self.olen],
        }
    }

    fn consume(&mut self, n: usize) {
        match self.unit {
            Unit::None => {}
            Unit::Plain => self.raw.consume(n),
            Unit::Gzip(_) => self.opos = (self.opos + n).min(self.olen),
        }
    }

    fn unit_offset(&self) -> u64 {
        match &self.unit {
            Unit::Gzip(m) => m.start,
            _ => self.raw.offset(),
        }
    }

    /// At least `n` bytes of the current unit available, fewer only at the unit's end
    /// (0 = unit ended; for gzip the trailer has then been verified).
    fn fill_unit_min(&mut self, n: usize) -> Result<usize, WarcError> {
        match &mut self.unit {
            Unit::None => Ok(0),
            Unit::Plain => {
                let off = self.raw.offset();
                self.raw.fill_min(n).map_err(|e| io_err(off, e))
            }
            Unit::Gzip(m) => {
                if self.olen - self.opos >= n {
                    return Ok(self.olen - self.opos);
                }
                if self.opos == self.olen {
                    self.opos = 0;
                    self.olen = 0;
                } else if self.opos > 0 {
                    self.out.copy_within(self.opos..self.olen, 0);
                    self.olen -= self.opos;
                    self.opos = 0;
                }
                while self.olen < n && !m.finished {
                    gz_step(&mut self.raw, m, &mut self.out, &mut self.olen)?;
                }
                Ok(self.olen)
            }
        }
    }

    fn fill_unit(&mut self) -> Result<usize, WarcError> {
        let have = self.avail().len();
        if have > 0 {
            return Ok(have);
        }
        self.fill_unit_min(1)
    }

    /// Leave the current unit and open the next one; false at end of input.
    fn advance_unit(&mut self) -> Result<bool, WarcError> {
        self.unit = Unit::None;
        self.opos = 0;
        self.olen = 0;
        self.member_records = 0;
        if self.scan_raw {
            // After an inflate error: look for the next member or record line.
            self.scan_raw = false;
            self.unit = Unit::Plain;
            let skipped = self.resync_scan(true)?;
            self.stats.bytes_skipped += skipped;
            if matches!(self.unit, Unit::Plain) && self.avail().is_empty() {
                self.unit = Unit::None;
                return Ok(false);
            }
            if matches!(self.unit, Unit::Plain) {
                return Ok(true);
            }
        }
        let off = self.raw.offset();
        let have = self.raw.fill_min(3).map_err(|e| io_err(off, e))?;
        if have == 0 {
            return Ok(false);
        }
        if self.raw.avail().starts_with(&GZ_MAGIC) {
            if self.at_start {
                self.gzip_file = true;
            }
            if let Err(e) = gz_header(&mut self.raw, off) {
                if e.kind == WarcErrorKind::Inflate {
                    self.scan_raw = true;
                }
                return Err(e);
            }
            self.unit = Unit::Gzip(Box::new(GzMember {
                start: off,
                inflate: Decompress::new(false),
                crc: Crc::new(),
                finished: false,
            }));
        } else {
            self.unit = Unit::Plain;
        }
        Ok(true)
    }

    /// Skip CR/LF bytes within the current unit; returns how many.
    fn skip_newlines(&mut self) -> Result<usize, WarcError> {
        let mut count = 0;
        loop {
            if self.fill_unit()? == 0 {
                return Ok(count);
            }
            let a = self.avail();
            let k = a.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
            let all = k == a.len();
            self.consume(k);
            count += k;
            if !all {
                return Ok(count);
            }
        }
    }

    /// Scan forward in the current unit to the next `WARC/<digit>` line start (or gzip
    /// magic in plain input, which ends the plain unit). Returns bytes skipped.
    fn resync_scan(&mut self, mut prev_nl: bool) -> Result<u64, WarcError> {
        let mut skipped = 0u64;
        loop {
            let plain = matches!(self.unit, Unit::Plain);
            let n = self.fill_unit_min(8)?;
            if n == 0 {
                return Ok(skipped);
            }
            let a = self.avail();
            if let Some(i) = find_resync(a, prev_nl, plain) {
                let gz = a[i] == 0x1f;
                self.consume(i);
                skipped += i as u64;
                if gz {
                    self.unit = Unit::None;
                }
                return Ok(skipped);
            }
            if n < 8 {
                // Unit's last bytes: too short to hold a record start.
                self.consume(n);
                skipped += n as u64;
                continue;
            }
            let k = n - 7;
            prev_nl = a[k - 1] == b'\n';
            self.consume(k);
            skipped += k as u64;
        }
    }

    /// Read `n` bytes (crossing unit boundaries) into `sink`, or discard them.
    fn read_bytes(&mut self, mut n: u64, mut sink: Option<&mut Vec<u8>>) -> Result<(), Fail> {
        while n > 0 {
            let have = self.fill_unit()?;
            if have == 0 {
                if !self.advance_unit()? {
                    return Err(Fail::Eof);
                }
                self.crossed = true;
                continue;
            }
            let take = (have as u64).min(n) as usize;
            if let Some(v) = sink.as_deref_mut() {
                v.extend_from_slice(&self.avail()[..take]);
            }
            self.consume(take);
            n -= take as u64;
        }
        Ok(())
    }

    /// Read one line (crossing units), without its line end. Err(Eof) if input ends first.
    fn read_line(&mut self, line: &mut Vec<u8>, max: usize) -> Result<bool, Fail> {
        line.clear();
        loop {
            let have = self.fill_unit()?;
            if have == 0 {
                if !self.advance_unit()? {
                    return Err(Fail::Eof);
                }
                self.crossed = true;
                continue;
            }
            let a = self.avail();
            if let Some(i) = a.iter().position(|&b| b == b'\n') {
                line.extend_from_slice(&a[..i]);
                self.consume(i + 1);
                // Strip CR (some writers emit CR CR LF).
                while line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(true);
            }
            line.extend_from_slice(a);
            self.consume(have);
            if line.len() > max {
                return Ok(false);
            }
        }
    }

    fn count_error(&mut self, kind: WarcErrorKind) {
        *self.stats.errors_by_kind.entry(kind).or_insert(0) += 1;
    }

    /// State changes after an error surfaced from `read_record`.
    fn recover(&mut self, e: &WarcError) {
        self.count_error(e.kind);
        match e.kind {
            k if k.is_fatal() => self.done = true,
            // The trailer was read: the next member starts right here.
            WarcErrorKind::CorruptGzip => {
                self.unit = Unit::None;
            }
            WarcErrorKind::Inflate => {
                self.unit = Unit::None;
                self.scan_raw = true;
            }
            _ => {}
        }
    }

    /// Not a WARC start at the beginning of the input: for gzip, decode a little more so
    /// that a corrupt file is reported as such.
    fn not_warc(&mut self) -> WarcError {
        self.done = true;
        let off = self.unit_offset();
        if matches!(self.unit, Unit::Gzip(_)) {
            let mut seen = 0;
            while seen < NOT_WARC_PROBE {
                match self.fill_unit() {
                    Ok(0) => break,
                    Ok(n) => {
                        self.consume(n);
                        seen += n;
                    }
                    Err(e) => return e,
                }
            }
        }
        WarcError::new(WarcErrorKind::NotWarc, off, "input does not start with a WARC/ line")
    }

    fn read_record(&mut self) -> Result<Step, WarcError> {
        // Find a unit with data, past blank lines.
        if self.fill_unit()? == 0 {
            if !self.advance_unit()? {
                return Ok(Step::End);
            }
            return Ok(Step::Again);
        }
        self.skip_newlines()?;
        let have = self.fill_unit_min(6)?;
        if have == 0 {
            return Ok(Step::Again);
        }
        let gz = matches!(self.unit, Unit::Gzip(_));
        if !gz && self.avail().starts_with(&GZ_MAGIC) {
            // Plain bytes ended where a gzip member starts (mixed compression).
            self.unit = Unit::None;
            return Ok(Step::Again);
        }
        let offset = self.unit_offset();
        self.crossed = false;
        let mut issues = Vec::new();
        if gz {
            self.member_records += 1;
            if self.member_records > 1 {
                issues.push(WarcErrorKind::SharedGzipMember);
            }
        } else if self.gzip_file {
            issues.push(WarcErrorKind::MixedCompression);
        }

        if !self.avail().starts_with(b"WARC/") {
            if self.at_start {
                if !self.stats.errors_by_kind.is_empty() {
                    // The start was already reported as corrupt and what follows is no
                    // WARC either: one error for the file is enough.
                    self.done = true;
                    return Ok(Step::End);
                }
                return Err(self.not_warc());
            }
            let skipped = self.resync_scan(true)?;
            self.stats.bytes_skipped += skipped;
            return Err(WarcError::new(WarcErrorKind::Garbage, offset, format!("{skipped} bytes skipped")));
        }
        self.at_start = false;

        let fail = |f: Fail, gz: bool| match f {
            Fail::Err(e) => e,
            Fail::Eof if gz => WarcError::new(WarcErrorKind::TruncatedGzip, offset, ""),
            Fail::Eof => WarcError::new(WarcErrorKind::TruncatedRecord, offset, ""),
        };

        // Version line.
        let mut line = Vec::with_capacity(256);
        self.read_line(&mut line, 4096).map_err(|f| fail(f, gz))?;
        let version = String::from_utf8_lossy(&line[5..]).trim().to_string();
        if !valid_version(&version) {
            return Err(WarcError::new(WarcErrorKind::UnknownVersion, offset, format!("WARC/{version}")));
        }

        // Header fields, with continuation lines folded in.
        let mut headers: Vec<(String, String)> = Vec::with_capacity(16);
        let mut total = 0usize;
        loop {
            let complete = self.read_line(&mut line, MAX_HEADER).map_err(|f| fail(f, gz))?;
            total += line.len() + 2;
            if !complete || total > MAX_HEADER {
                let skipped = self.resync_scan(false)?;
                self.stats.bytes_skipped += skipped;
                return Err(WarcError::new(WarcErrorKind::HeaderTooLarge, offset, ""));
            }
            if line.is_empty() {
                break;
            }
            let text = String::from_utf8_lossy(&line);
            if line[0] == b' ' || line[0] == b'\t' {
                if let Some((_, v)) = headers.last_mut() {
                    v.push(' ');
                    v.push_str(text.trim());
                }
                continue;
            }
            if let Some((n, v)) = text.split_once(':') {
                headers.push((n.trim().to_string(), v.trim().to_string()));
            }
        }
        let get =
            |name: &str| headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());

        let length = match get("Content-Length") {
            None => {
                let skipped = self.resync_scan(true)?;
                self.stats.bytes_skipped += skipped;
                return Err(WarcError::new(
                    WarcErrorKind::MissingContentLength,
                    offset,
                    format!("{skipped} bytes skipped to the next record"),
                ));
            }
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) => n,
                Err(_) => {
                    let detail = format!("{v:?}");
                    let skipped = self.resync_scan(true)?;
                    self.stats.bytes_skipped += skipped;
                    return Err(WarcError::new(WarcErrorKind::BadContentLength, offset, detail));
                }
            },
        };

        if length > self.max_record {
            self.read_bytes(length, None).map_err(|f| fail(f, gz))?;
            self.stats.oversized += 1;
            self.stats.bytes_skipped += length;
            let mut dummy = Vec::new();
            if let Trailer::Garbage(g) = self.check_trailer(&mut dummy)? {
                self.pending = Some(g);
            }
            return Err(WarcError::new(
                WarcErrorKind::RecordTooLarge,
                offset,
                format!("{length} bytes > cap {}", self.max_record),
            ));
        }

        let mut block = Vec::with_capacity(length.min(8 << 20) as usize);
        self.shared_next = false;
        self.read_bytes(length, Some(&mut block)).map_err(|f| fail(f, gz))?;
        match self.check_trailer(&mut block)? {
            Trailer::Ok => {}
            Trailer::Mismatch => issues.push(WarcErrorKind::LengthMismatch),
            // Reported after this record.
            Trailer::Garbage(g) => self.pending = Some(g),
        }
        if self.crossed {
            issues.push(WarcErrorKind::UnalignedGzipMember);
        }
        if self.shared_next && !issues.contains(&WarcErrorKind::SharedGzipMember) {
            issues.push(WarcErrorKind::SharedGzipMember);
        }

        let warc_type = get("WARC-Type").unwrap_or("").to_string();
        let target_uri = get("WARC-Target-URI").map(clean_uri).filter(|u| !u.is_empty());
        let date = match get("WARC-Date") {
            Some(d) => parse_warc_date(d).unwrap_or_else(|| {
                issues.push(WarcErrorKind::BadDate);
                0
            }),
            None => 0,
        };
        if get("WARC-Type").is_none() || get("WARC-Record-ID").is_none() || get("WARC-Date").is_none() {
            issues.push(WarcErrorKind::MissingField);
        }
        let content_type = get("Content-Type").map(str::to_string);
        let record_id = get("WARC-Record-ID").map(str::to_string);
        Ok(Step::Record(Box::new(WarcRecord {
            version,
            warc_type,
            target_uri,
            date,
            content_type,
            record_id,
            offset,
            headers,
            block,
            issues,
        })))
    }

    /// After a block: expect record-end newlines then the unit's end or the next record.
    /// On a wrong length the reader is resynchronized (and, if the block swallowed the
    /// start of the next record, that part is put back). Garbage after a well-terminated
    /// record is skipped and returned as an error for the caller to report.
    fn check_trailer(&mut self, block: &mut Vec<u8>) -> Result<Trailer, WarcError> {
        let nl = self.skip_newlines_counting()?;
        // Two line ends close a record; writers of empty blocks sometimes write one.
        let enough = nl >= if block.is_empty() { 1 } else { 2 };
        let have = self.fill_unit_min(6)?;
        if have == 0 {
            // The block ends exactly where the member / file ends: consistent.
            return Ok(Trailer::Ok);
        }
        let a = self.avail();
        let next_record = a.starts_with(b"WARC/");
        if next_record || (matches!(self.unit, Unit::Plain) && a.starts_with(&GZ_MAGIC)) {
            if next_record {
                // Another record follows inside the same gzip member.
                self.shared_next = matches!(self.unit, Unit::Gzip(_));
            } else {
                self.unit = Unit::None;
            }
            return Ok(if enough { Trailer::Ok } else { Trailer::Mismatch });
        }
        // If the block's tail holds a record start, the Content-Length ran into the next
        // record: give that part back.
        let from = block.len().saturating_sub(TAIL_SEARCH);
        let found = find_resync(&block[from..], false, false).map(|p| from + p);
        if let Some(at) = found {
            let back = block.split_off(at);
            while matches!(block.last(), Some(b'\r' | b'\n')) && block.len() + 4 > at {
                block.pop();
            }
            self.unread(&back);
            return Ok(Trailer::Mismatch);
        }
        let offset = self.unit_offset();
        let skipped = self.resync_scan(nl > 0)?;
        self.stats.bytes_skipped += skipped;
        if enough {
            return Ok(Trailer::Garbage(WarcError::new(
                WarcErrorKind::Garbage,
                offset,
                format!("{skipped} bytes skipped"),
            )));
        }
        Ok(Trailer::Mismatch)
    }

    /// Like `skip_newlines` but returns the number of line feeds skipped.
    fn skip_newlines_counting(&mut self) -> Result<usize, WarcError> {
        let mut lf = 0;
        loop {
            if self.fill_unit()? == 0 {
                return Ok(lf);
            }
            let a = self.avail();
            let k = a.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
            lf += a[..k].iter().filter(|&&b| b == b'\n').count();
            let all = k == a.len();
            self.consume(k);
            if !all {
                return Ok(lf);
            }
        }
    }

    fn unread(&mut self, bytes: &[u8]) {
        match self.unit {
            Unit::Gzip(_) => {
                let mut v = Vec::with_capacity(bytes.len() + self.olen - self.opos + OUT_BUF);
                v.extend_from_slice(bytes);
                v.extend_from_slice(&self.out[self.opos..self.olen]);
                self.olen = v.len();
                self.opos = 0;
                v.resize(self.olen + OUT_BUF, 0);
                self.out = v;
            }
            Unit::Plain => self.raw.unread(bytes),
            Unit::None => {
                self.raw.unread(bytes);
                self.unit = Unit::Plain;
            }
        }
    }
}

impl<R: Read> Iterator for WarcReader<R> {
    type Item = Result<WarcRecord, WarcError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.pending.take() {
                self.recover(&e);
                return Some(Err(e));
            }
            if self.done {
                self.stats.bytes_in = self.raw.offset();
                return None;
            }
            match self.read_record() {
                Ok(Step::Record(rec)) => {
                    let s = &mut self.stats;
                    s.records += 1;
                    s.block_bytes += rec.block.len() as u64;
                    *s.records_by_type.entry(rec.warc_type.clone()).or_insert(0) += 1;
                    for &k in &rec.issues {
                        *s.errors_by_kind.entry(k).or_insert(0) += 1;
                    }
                    s.bytes_in = self.raw.offset();
                    return Some(Ok(*rec));
                }
                Ok(Step::Again) => continue,
                Ok(Step::End) => {
                    self.done = true;
                    continue;
                }
                Err(e) => {
                    self.recover(&e);
                    self.stats.bytes_in = self.raw.offset();
                    return Some(Err(e));
                }
            }
        }
    }
}

/// `<http://x/ y>` → `http://x/ y`: strip whitespace and the angle brackets wget wrote.
fn clean_uri(v: &str) -> String {
    let v = v.trim();
    let v = v.strip_prefix('<').unwrap_or(v);
    let v = v.strip_suffix('>').unwrap_or(v);
    v.trim().to_string()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// ISO 8601 / W3C-DTF date as in WARC-Date (`2014-01-27T17:12:38Z`, fractional seconds,
/// `+hh:mm` offsets, or just a date) to Unix seconds; None when invalid.
pub fn parse_warc_date(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let year = num(0..4)?;
    let (mut month, mut day) = (1, 1);
    let (mut hh, mut mm, mut ss) = (0, 0, 0);
    let mut i = 4;
    if b.get(i) == Some(&b'-') {
        month = num(5..7)?;
        i = 7;
        if b.get(i) == Some(&b'-') {
            day = num(8..10)?;
            i = 10;
        }
    }
    let mut offset_secs = 0;
    if matches!(b.get(i), Some(b'T' | b't' | b' ')) {
        hh = num(i + 1..i + 3)?;
        i += 3;
        if b.get(i) == Some(&b':') {
            mm = num(i + 1..i + 3)?;
            i += 3;
            if b.get(i) == Some(&b':') {
                ss = num(i + 1..i + 3)?;
                i += 3;
                if matches!(b.get(i), Some(b'.' | b',')) {
                    i += 1;
                    while b.get(i).is_some_and(u8::is_ascii_digit) {
                        i += 1;
                    }
                }
            }
        }
        match b.get(i) {
            None => {}
            Some(b'Z' | b'z') => i += 1,
            Some(&c @ (b'+' | b'-')) => {
                let oh = num(i + 1..i + 3)?;
                let om = if b.get(i + 3) == Some(&b':') {
                    let v = num(i + 4..i + 6)?;
                    i += 6;
                    v
                } else if b.len() >= i + 5 {
                    let v = num(i + 3..i + 5)?;
                    i += 5;
                    v
                } else {
                    i += 3;
                    0
                };
                offset_secs = (oh * 3600 + om * 60) * if c == b'+' { 1 } else { -1 };
            }
            _ => return None,
        }
    }
    if i != b.len() || !(1..=12).contains(&month) || !(1..=31).contains(&day) || hh > 24 || mm > 59 || ss > 60
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86400 + hh * 3600 + mm * 60 + ss - offset_secs)
}

// ---------------------------------------------------------------------------------------
// Records to pages.

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
}

/// Pages (response and resource records, any status) of one WARC file.
pub struct WarcPages {
    reader: WarcReader<File>,
    file: String,
    max_body: usize,
    stats: PageStats,
    size: u64,
}

impl WarcPages {
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path: PathBuf = path.as_ref().to_path_buf();
        let f = File::open(&path)?;
        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(Self {
            reader: WarcReader::new(f),
            file: path.to_string_lossy().into_owned(),
            max_body: DEFAULT_MAX_BODY,
            stats: PageStats::default(),
            size,
        })
    }

    /// Cap records (before decoding) and decoded bodies at `max` bytes.
    pub fn with_max_size(mut self, max: usize) -> Self {
        self.reader.max_record = max as u64;
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

impl Iterator for WarcPages {
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
                        // A body cut by our cap, or recorded cut (`WARC-Truncated`, e.g. by
                        // ditto's crawler at its body cap), is not the page: its hash and
                        // chunks would be wrong. Skipped and counted, as a crawl skips it.
                        if c.body_capped || rec.header("WARC-Truncated").is_some() {
                            s.truncated += 1;
                            continue;
                        }
                        s.pages += 1;
                        return Some(Ok(p));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn rec(ty: &str, body: &str) -> Vec<u8> {
        format!(
            "WARC/1.0\r\nWARC-Type: {ty}\r\nWARC-Record-ID: <urn:x>\r\n\
             WARC-Date: 2014-01-27T17:12:38Z\r\nWARC-Target-URI: < http://a/b c >\r\n\
             Content-Length: {}\r\n\r\n{body}\r\n\r\n",
            body.len()
        )
        .into_bytes()
    }

    #[test]
    fn dates() {
        assert_eq!(parse_warc_date("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_warc_date("2014-01-27T17:12:38Z"), Some(1390842758));
        assert_eq!(parse_warc_date("2014-01-27T17:12:38.123456Z"), Some(1390842758));
        assert_eq!(parse_warc_date("2014-01-27T18:12:38+01:00"), Some(1390842758));
        assert_eq!(parse_warc_date("2014-01-27"), Some(1390780800));
        assert_eq!(parse_warc_date("2008-10-294T00:00:00Z"), None);
        assert_eq!(parse_warc_date("garbage"), None);
        assert_eq!(parse_warc_date(""), None);
    }

    #[test]
    fn plain_and_gzip_records() {
        let mut data = rec("warcinfo", "x");
        data.extend(rec("resource", "hello"));
        let plain: Vec<_> = WarcReader::new(&data[..]).collect();
        assert_eq!(plain.len(), 2);
        let r = plain[1].as_ref().unwrap();
        assert_eq!(r.target_uri.as_deref(), Some("http://a/b c"));
        assert_eq!(r.block, b"hello");
        assert_eq!(r.offset, rec("warcinfo", "x").len() as u64);
        assert_eq!(r.date, 1390842758);
        assert!(r.issues.is_empty(), "{:?}", r.issues);

        let a = gz(&rec("warcinfo", "x"));
        let mut g = a.clone();
        g.extend(gz(&rec("resource", "hello")));
        let recs: Vec<_> = WarcReader::new(&g[..]).map(|r| r.unwrap()).collect();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].offset, a.len() as u64);
        assert!(recs[1].issues.is_empty());
    }

    #[test]
    fn truncated_gzip_and_oversize() {
        let a = gz(&rec("warcinfo", "x"));
        let mut g = a.clone();
        let b = gz(&rec("resource", &"y".repeat(5000)));
        g.extend_from_slice(&b[..b.len() - 10]);
        let items: Vec<_> = WarcReader::new(&g[..]).collect();
        assert_eq!(items.len(), 2);
        let e = items[1].as_ref().unwrap_err();
        assert_eq!(e.kind, WarcErrorKind::TruncatedGzip);
        assert_eq!(e.to_string(), format!("unexpected EOF inside gzip member at offset {}", a.len()));

        let mut data = rec("resource", &"z".repeat(1000));
        data.extend(rec("resource", "ok"));
        let mut r = WarcReader::new(&data[..]).with_max_record(100);
        let items: Vec<_> = r.by_ref().collect();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].as_ref().unwrap_err().kind, WarcErrorKind::RecordTooLarge);
        assert_eq!(items[1].as_ref().unwrap().block, b"ok");
        assert_eq!(r.stats().oversized, 1);
    }

    #[test]
    fn not_warc() {
        let items: Vec<_> = WarcReader::new(&b"hello world\n"[..]).collect();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].as_ref().unwrap_err().kind, WarcErrorKind::NotWarc);
        let g = gz(b"just some text, not a warc");
        let items: Vec<_> = WarcReader::new(&g[..]).collect();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].as_ref().unwrap_err().kind, WarcErrorKind::NotWarc);
        let items: Vec<_> = WarcReader::new(&b""[..]).collect();
        assert!(items.is_empty());
    }
}
