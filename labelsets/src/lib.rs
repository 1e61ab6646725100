//! `labelsets`: ditto's label-set (`.dls`) and stop-chunk files.
//!
//! A label set is the paper's labeled dataset **L** (Ardi & Heidemann 2014, §3.2): either
//! `L_c`, hashes of chunks (paragraphs) of a labeled body of content such as a Wikipedia
//! snapshot (§7: "75.0M distinct chunks of length > 100"), or `L_f`, hashes of whole files.
//! Building uses `detector`'s cleaner and normalization, so building and detecting chunk and
//! normalize identically; the normalization is recorded in the file.
//!
//! # File format (version 2), summarized — full description in `FORMAT.md`
//!
//! All integers little-endian; every section starts at a multiple of 64 bytes.
//!
//! | offset | size | what |
//! | --- | --- | --- |
//! | 0 | 8 | magic `DITTOLS\0` |
//! | 8 | 4 | u32 format version (2) |
//! | 12 | 4 | u32 header length `H` in bytes |
//! | 16 | H | JSON header ([`Header`]): name, kind, normalization, min_chars, description, created, counts, filter parameters, section offsets and lengths, section checksums |
//! | 16 + H | 8 | u64 XXH3-64 of bytes `0 .. 16 + H` |
//! | … | … | **filter**: cache-blocked Bloom filter, `blocks × 64` bytes ([`filter`]) |
//! | … | … | **index**: `(2^b + 1)` u32 entry positions, bucket = top `b` bits of the digest |
//! | … | … | **entries**: `n × 24` bytes sorted by digest: 20-byte SHA-1 + u32 source id |
//! | … | … | **source offsets**: `(2·sources + 1)` u64 offsets into the blob (title i = `[o[2i], o[2i+1])`, url i = `[o[2i+1], o[2i+2])`) |
//! | … | … | **source blob**: UTF-8 titles and URLs |
//!
//! [`LabelSet::open`] maps the file with `memmap2`, validates magic, version, the header's
//! checksum, the header, every section bound and the checksums of every section but the
//! entries (a damaged or truncated file is an [`Error`] naming the damaged part, never a
//! panic); [`LabelSet::open_verified`], what scans use, checks the entries' too. Lookups are
//! served straight from the mapping: filter first, then one bucket's binary search.
//!
//! # Modules
//! - [`format`]: the on-disk layout, [`LabelSet`] (open + lookup) and [`Header`].
//! - [`filter`]: the blocked Bloom filter.
//! - [`builder`]: [`LabelSetBuilder`] and the [`DocumentSink`] trait the readers feed.
//! - [`readers`]: directories of pages, Wikimedia Enterprise NDJSON, MediaWiki XML dumps.
//! - [`wikitext`]: the documented wikitext → paragraphs approximation.
//! - [`stopchunks`]: stop chunks (§3.4.2), [`StopChunks`].
//! - [`info`]: `ditto labelset info` rendering.
//! - [`check`]: `ditto labelset check`, every checksum and the structural checks.

pub mod builder;
pub mod check;
pub mod filter;
pub mod format;
pub mod info;
pub mod inputs;
pub(crate) mod layout;
pub mod merge;
pub mod parallel;
pub mod parallel_sort;
pub(crate) mod parallel_threads;
pub mod passages;
pub mod readers;
pub mod sniff;
pub(crate) mod spill;
pub mod stopchunks;
pub mod tar;
pub mod wikitext;

use std::path::PathBuf;

pub use builder::{Digested, Digester, DocRef, DocumentSink, LabelSetBuilder, Progress};
pub use detector::{Normalization, Sha1Digest, SourceId};
pub use format::{
    Checksum, Checksums, Counts, FilterParams, Header, Kind, LabelSet, Section, SectionCheck, SectionId,
    Sections, Source,
};
pub use readers::ReadStats;
pub use stopchunks::StopChunks;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a ditto label-set file (bad magic bytes)")]
    BadMagic { path: PathBuf },
    #[error("{path}: unsupported label-set format version {found} (this build reads version {supported})")]
    UnsupportedVersion { path: PathBuf, found: u32, supported: u32 },
    #[error(
        "{path}: label set format version 1 has no checksums: rebuild it with this ditto \
         (`ditto labelset build`, `ditto labelset import` or `ditto discover`)"
    )]
    NoChecksums { path: PathBuf },
    #[error(
        "{path}: damaged label-set file: {section} checksum mismatch (bytes {offset}..+{len} hash to \
         {found}, the file records {expected}); rebuild the label set or copy it again"
    )]
    Checksum {
        path: PathBuf,
        /// `header` or a section name ([`format::SectionId::name`]).
        section: &'static str,
        offset: u64,
        len: u64,
        expected: format::Checksum,
        found: format::Checksum,
    },
    #[error("{path}: truncated label-set file: needs at least {needed} bytes, has {len}")]
    Truncated { path: PathBuf, needed: u64, len: u64 },
    #[error("{path}: corrupt label-set file: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("label set {path} uses normalization {found:?}, expected {expected:?}")]
    NormalizationMismatch { path: PathBuf, found: String, expected: String },
    #[error("source id {0} was not added to this builder")]
    UnknownSource(SourceId),
    #[error("a label set of kind {kind} cannot take {what}")]
    WrongKind { kind: Kind, what: &'static str },
    #[error("too large for the label-set format: {0}")]
    TooLarge(String),
    #[error("{path}: {reason}")]
    Input { path: PathBuf, reason: String },
    #[error("parallel build: {0}")]
    Pool(String),
}

/// Crate result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}
