//! The one error type of WARC reading and writing.

use std::error::Error;
use std::fmt;
use std::io;

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
    /// Opening, writing, syncing or renaming a WARC file failed (no input offset: the
    /// writer, crash recovery, and opening a file to read).
    File,
    /// A writer's file prefix, or a file to recover, that is not one of our names.
    BadName,
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
            Self::File => "file",
            Self::BadName => "bad_name",
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
            Self::File => "WARC file error",
            Self::BadName => "not a WARC file name of ours",
        }
    }

    /// After an error of this kind the reader stops.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            Self::Io | Self::TruncatedGzip | Self::TruncatedRecord | Self::NotWarc | Self::UnknownVersion
        )
    }

    /// Errors about a file as a whole, not about a place in the input: they carry no offset.
    fn is_file_level(self) -> bool {
        matches!(self, Self::File | Self::BadName)
    }
}

/// An error reading or writing WARC files: its kind, where in the input it happened, and
/// the I/O error behind it, if any.
#[derive(Debug)]
pub struct WarcError {
    pub kind: WarcErrorKind,
    /// Input offset: the gzip member's start, or the record's / garbage's start. 0 for the
    /// file-level kinds ([`WarcErrorKind::File`], [`WarcErrorKind::BadName`]).
    pub offset: u64,
    /// For a record inside a gzip member holding several records (or a whole file in one
    /// gzip stream): where in the member's decompressed data the record starts, as `offset`
    /// is the member's start and is the same for all of them.
    pub member_offset: Option<u64>,
    /// Extra detail (inner error text, byte counts); may be empty. Printed escaped
    /// ([`printable`]).
    pub detail: String,
    /// The I/O error behind an `Io` or `File` error.
    io: Option<io::Error>,
}

impl WarcError {
    pub fn new(kind: WarcErrorKind, offset: u64, detail: impl Into<String>) -> Self {
        Self { kind, offset, member_offset: None, detail: detail.into(), io: None }
    }

    /// Reading the input failed at `offset`.
    pub fn read(offset: u64, e: io::Error) -> Self {
        Self { kind: WarcErrorKind::Io, offset, member_offset: None, detail: e.to_string(), io: Some(e) }
    }

    /// A file operation (open, write, sync, rename) failed.
    pub fn file(e: io::Error) -> Self {
        Self { kind: WarcErrorKind::File, offset: 0, member_offset: None, detail: e.to_string(), io: Some(e) }
    }

    /// A name that is not one of ours (writer prefix, file to recover).
    pub fn bad_name(detail: impl Into<String>) -> Self {
        Self::new(WarcErrorKind::BadName, 0, detail)
    }

    /// The I/O error behind this one, e.g. to tell `NotFound` from `PermissionDenied`.
    pub fn io_error(&self) -> Option<&io::Error> {
        self.io.as_ref()
    }
}

/// File operations: `?` on an `io::Result` in the writer (the reader maps its I/O errors
/// with their offset, [`WarcError::read`]).
impl From<io::Error> for WarcError {
    fn from(e: io::Error) -> Self {
        Self::file(e)
    }
}

impl fmt::Display for WarcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Details may quote the input (a version line, a header value): printed escaped, so
        // bytes of a file never reach the user's terminal as control sequences.
        let detail = printable(&self.detail);
        // File-level errors read as the I/O error (or name problem) itself, as before the
        // writer shared this type.
        if self.kind.is_file_level() {
            return f.write_str(&detail);
        }
        write!(f, "{} at offset {}", self.kind.message(), self.offset)?;
        if let Some(inner) = self.member_offset {
            write!(f, " (gzip member), byte {inner} of its decompressed data")?;
        }
        if !detail.is_empty() {
            write!(f, ": {detail}")?;
        }
        Ok(())
    }
}

/// `s` with what a terminal would act on escaped: control characters (C0, DEL, C1: escape
/// sequences, carriage returns, bells) and the bidirectional overrides that reorder what is
/// shown, each written as `\u{..}` (`\n`, `\r`, `\t` as such). Borrowed when there is nothing
/// to escape.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    fn hostile(c: char) -> bool {
        c.is_control()
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
    }
    if !s.chars().any(hostile) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hostile(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

impl Error for WarcError {
    /// The I/O error's text is already in our message; its own cause comes next.
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.io.as_ref().and_then(|e| e.source())
    }
}
