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
use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::error::{WarcError, WarcErrorKind};
use super::input::{gz_header, gz_step, GzMember, RawInput, GZ_MAGIC, OUT_BUF};
use super::record::WarcRecord;

/// Default cap on one record's block; bigger records are drained and skipped.
pub const DEFAULT_MAX_RECORD: u64 = 64 << 20;
/// Cap on a record's WARC header block.
const MAX_HEADER: usize = 1 << 20;
/// Cap on the `WARC/x.y` line.
const MAX_VERSION_LINE: usize = 4096;
/// How much of a not-WARC gzip file we decode to find out whether it is corrupt.
const NOT_WARC_PROBE: usize = 1 << 20;
/// How far back from a block's end we look for a swallowed `WARC/` line.
const TAIL_SEARCH: usize = 64 << 10;

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
// Units: the stretch of input being read is either one gzip member or plain bytes.

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

impl Fail {
    /// The error for a record at `offset`: running out of input inside it is a truncation.
    fn at_record(self, offset: u64, gz: bool) -> WarcError {
        match self {
            Fail::Err(e) => e,
            Fail::Eof if gz => WarcError::new(WarcErrorKind::TruncatedGzip, offset, ""),
            Fail::Eof => WarcError::new(WarcErrorKind::TruncatedRecord, offset, ""),
        }
    }
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
    /// Where the record being read starts in its gzip member's decompressed data, when that
    /// is not the member's start (several records in one member or one gzip stream).
    record_in_member: Option<u64>,
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

/// Where [`WarcReader::find_record_start`] got to.
enum Start {
    /// Record bytes start at `offset` (of the gzip member, for gzip input).
    Record { offset: u64, gz: bool },
    /// No record here: end of input, or look again.
    Not(Step),
}

impl WarcReader<File> {
    /// Open a WARC file (gzip or not, whatever its name).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, WarcError> {
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
            record_in_member: None,
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
                self.raw.fill_min(n).map_err(|e| WarcError::read(off, e))
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
        let have = self.raw.fill_min(3).map_err(|e| WarcError::read(off, e))?;
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
            self.unit = Unit::Gzip(Box::new(GzMember::new(off, self.raw.offset())));
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

    /// One record, or the error that cost one; the steps are below, in reading order.
    fn read_record(&mut self) -> Result<Step, WarcError> {
        let (offset, gz) = match self.find_record_start()? {
            Start::Record { offset, gz } => (offset, gz),
            Start::Not(step) => return Ok(step),
        };
        self.crossed = false;
        let mut issues = self.placement_issues(gz);
        if !self.avail().starts_with(b"WARC/") {
            return self.not_a_record(offset);
        }
        self.at_start = false;
        let version = self.read_version(offset, gz)?;
        let headers = self.read_header_fields(offset, gz)?;
        let length = self.content_length(&headers, offset)?;
        if length > self.max_record {
            return Err(self.skip_oversized(length, offset, gz));
        }
        let block = self.read_block(length, offset, gz, &mut issues)?;
        let mut rec = WarcRecord::new(version, headers, block);
        rec.offset = offset;
        // The reader's issues (placement, length) come before the fields' (date, missing).
        issues.append(&mut rec.issues);
        rec.issues = issues;
        Ok(Step::Record(Box::new(rec)))
    }

    /// Past blank lines to the next record's first bytes, opening units as needed.
    fn find_record_start(&mut self) -> Result<Start, WarcError> {
        if self.fill_unit()? == 0 {
            if !self.advance_unit()? {
                return Ok(Start::Not(Step::End));
            }
            return Ok(Start::Not(Step::Again));
        }
        self.skip_newlines()?;
        let have = self.fill_unit_min(6)?;
        if have == 0 {
            return Ok(Start::Not(Step::Again));
        }
        let gz = matches!(self.unit, Unit::Gzip(_));
        if !gz && self.avail().starts_with(&GZ_MAGIC) {
            // Plain bytes ended where a gzip member starts (mixed compression).
            self.unit = Unit::None;
            return Ok(Start::Not(Step::Again));
        }
        self.record_in_member = match &self.unit {
            Unit::Gzip(m) => Some(m.decoded() - (self.olen - self.opos) as u64).filter(|&at| at > 0),
            _ => None,
        };
        Ok(Start::Record { offset: self.unit_offset(), gz })
    }

    /// Issues from where the record sits: a second record in one gzip member, or a plain
    /// record in a gzip file.
    fn placement_issues(&mut self, gz: bool) -> Vec<WarcErrorKind> {
        let mut issues = Vec::new();
        if gz {
            self.member_records += 1;
            if self.member_records > 1 {
                issues.push(WarcErrorKind::SharedGzipMember);
            }
        } else if self.gzip_file {
            issues.push(WarcErrorKind::MixedCompression);
        }
        issues
    }

    /// What is at `offset` does not start with `WARC/`: not a WARC file (at the start), or
    /// garbage skipped up to the next record.
    fn not_a_record(&mut self, offset: u64) -> Result<Step, WarcError> {
        if self.at_start {
            if !self.stats.errors_by_kind.is_empty() {
                // The start was already reported as corrupt and what follows is no WARC
                // either: one error for the file is enough.
                self.done = true;
                return Ok(Step::End);
            }
            return Err(self.not_warc());
        }
        let skipped = self.resync_scan(true)?;
        self.stats.bytes_skipped += skipped;
        Err(WarcError::new(WarcErrorKind::Garbage, offset, format!("{skipped} bytes skipped")))
    }

    /// The `WARC/x.y` line; an unknown version stops the reader.
    fn read_version(&mut self, offset: u64, gz: bool) -> Result<String, WarcError> {
        let mut line = Vec::with_capacity(256);
        self.read_line(&mut line, MAX_VERSION_LINE).map_err(|f| f.at_record(offset, gz))?;
        // The line starts with `WARC/` (checked before reading it).
        let version = String::from_utf8_lossy(line.get(5..).unwrap_or_default()).trim().to_string();
        if !valid_version(&version) {
            return Err(WarcError::new(WarcErrorKind::UnknownVersion, offset, format!("WARC/{version}")));
        }
        Ok(version)
    }

    /// Header fields up to the blank line, continuation lines folded in. A header block
    /// over [`MAX_HEADER`] is skipped up to the next record.
    fn read_header_fields(&mut self, offset: u64, gz: bool) -> Result<Vec<(String, String)>, WarcError> {
        let mut headers: Vec<(String, String)> = Vec::with_capacity(16);
        let mut line = Vec::with_capacity(256);
        let mut total = 0usize;
        loop {
            let complete = self.read_line(&mut line, MAX_HEADER).map_err(|f| f.at_record(offset, gz))?;
            total += line.len() + 2;
            if !complete || total > MAX_HEADER {
                let skipped = self.resync_scan(false)?;
                self.stats.bytes_skipped += skipped;
                return Err(WarcError::new(WarcErrorKind::HeaderTooLarge, offset, ""));
            }
            let Some(&first) = line.first() else {
                return Ok(headers);
            };
            let text = String::from_utf8_lossy(&line);
            if first == b' ' || first == b'\t' {
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
    }

    /// The record's Content-Length; a missing or bad one skips to the next record.
    fn content_length(&mut self, headers: &[(String, String)], offset: u64) -> Result<u64, WarcError> {
        let value = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("Content-Length")).map(|(_, v)| v);
        let Some(value) = value else {
            let skipped = self.resync_scan(true)?;
            self.stats.bytes_skipped += skipped;
            return Err(WarcError::new(
                WarcErrorKind::MissingContentLength,
                offset,
                format!("{skipped} bytes skipped to the next record"),
            ));
        };
        match value.trim().parse::<u64>() {
            Ok(n) => Ok(n),
            Err(_) => {
                let detail = format!("{value:?}");
                let skipped = self.resync_scan(true)?;
                self.stats.bytes_skipped += skipped;
                Err(WarcError::new(WarcErrorKind::BadContentLength, offset, detail))
            }
        }
    }

    /// Drain a block over the cap; the error to report for it (a read error if draining
    /// failed).
    fn skip_oversized(&mut self, length: u64, offset: u64, gz: bool) -> WarcError {
        if let Err(f) = self.read_bytes(length, None) {
            return f.at_record(offset, gz);
        }
        self.stats.oversized += 1;
        self.stats.bytes_skipped += length;
        let mut nothing = Vec::new();
        match self.check_trailer(&mut nothing) {
            Ok(Trailer::Garbage(g)) => self.pending = Some(g),
            Ok(Trailer::Ok | Trailer::Mismatch) => {}
            Err(e) => return e,
        }
        WarcError::new(
            WarcErrorKind::RecordTooLarge,
            offset,
            format!("{length} bytes > cap {}", self.max_record),
        )
    }

    /// The block and what its end says: a wrong length, garbage after it (reported after
    /// this record), or gzip members that do not line up with it.
    fn read_block(
        &mut self,
        length: u64,
        offset: u64,
        gz: bool,
        issues: &mut Vec<WarcErrorKind>,
    ) -> Result<Vec<u8>, WarcError> {
        let mut block = Vec::with_capacity(length.min(8 << 20) as usize);
        self.shared_next = false;
        self.read_bytes(length, Some(&mut block)).map_err(|f| f.at_record(offset, gz))?;
        match self.check_trailer(&mut block)? {
            Trailer::Ok => {}
            Trailer::Mismatch => issues.push(WarcErrorKind::LengthMismatch),
            Trailer::Garbage(g) => self.pending = Some(g),
        }
        if self.crossed {
            issues.push(WarcErrorKind::UnalignedGzipMember);
        }
        if self.shared_next && !issues.contains(&WarcErrorKind::SharedGzipMember) {
            issues.push(WarcErrorKind::SharedGzipMember);
        }
        Ok(block)
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
                Err(mut e) => {
                    self.recover(&e);
                    self.stats.bytes_in = self.raw.offset();
                    // Errors about the record itself name where in its member it starts
                    // (the member's offset is the same for every record in it).
                    if matches!(
                        e.kind,
                        WarcErrorKind::MissingContentLength
                            | WarcErrorKind::BadContentLength
                            | WarcErrorKind::HeaderTooLarge
                            | WarcErrorKind::RecordTooLarge
                            | WarcErrorKind::UnknownVersion
                            | WarcErrorKind::TruncatedGzip
                    ) {
                        e.member_offset = self.record_in_member;
                    }
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warc::printable;
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

    /// Issue 26: in one gzip stream holding several records, every error named the same
    /// offset (the member's); now each names where its record starts inside the member.
    #[test]
    fn errors_inside_one_gzip_stream_name_their_record() {
        let bad = |n: usize| {
            format!("WARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:{n}>\r\n\r\nbody {n}\r\n\r\n")
                .into_bytes()
        };
        let mut plain = rec("warcinfo", "x");
        let first_bad = plain.len() as u64;
        plain.extend(bad(1));
        plain.extend(rec("resource", "between"));
        let second_bad = plain.len() as u64;
        plain.extend(bad(2));
        plain.extend(rec("resource", "last"));
        let errors: Vec<WarcError> = WarcReader::new(&gz(&plain)[..]).filter_map(Result::err).collect();
        let kinds: Vec<_> = errors.iter().map(|e| (e.kind, e.offset, e.member_offset)).collect();
        assert_eq!(
            kinds,
            [
                (WarcErrorKind::MissingContentLength, 0, Some(first_bad)),
                (WarcErrorKind::MissingContentLength, 0, Some(second_bad)),
            ]
        );
        assert!(
            errors[1].to_string().starts_with(&format!(
                "missing Content-Length at offset 0 (gzip member), byte {second_bad} of its decompressed data"
            )),
            "{}",
            errors[1]
        );
        // One record per member (the usual layout): the member's offset says it all.
        let mut per_record = gz(&rec("warcinfo", "x"));
        let at = per_record.len() as u64;
        per_record.extend(gz(&bad(1)));
        let e = WarcReader::new(&per_record[..]).find_map(Result::err).unwrap();
        assert_eq!((e.offset, e.member_offset), (at, None));
    }

    /// Issue 26: bytes of a WARC version line were printed raw, so escape sequences in a
    /// file reached the terminal.
    #[test]
    fn input_bytes_in_messages_are_escaped() {
        let data = b"WARC/1.0\x1b[2J\x1b]0;pwned\x07\r\nContent-Length: 0\r\n\r\n\r\n";
        let e = WarcReader::new(&data[..]).find_map(Result::err).unwrap();
        assert_eq!(e.kind, WarcErrorKind::UnknownVersion);
        let msg = e.to_string();
        assert!(!msg.chars().any(char::is_control), "{msg:?}");
        assert_eq!(msg, "unknown WARC version at offset 0: WARC/1.0\\u{1b}[2J\\u{1b}]0;pwned\\u{7}");
        assert_eq!(printable("a\u{202e}b\tc"), "a\\u{202e}b\\tc");
        assert!(matches!(printable("plain text é"), std::borrow::Cow::Borrowed(_)));
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
