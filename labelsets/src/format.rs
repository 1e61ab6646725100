//! The `.dls` on-disk layout (see the crate docs and `FORMAT.md`) and [`LabelSet`], a label
//! set opened by memory map.

use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use detector::{ChunkLookup, Normalization, Sha1Digest, SourceId};
use memmap2::Mmap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::layout::{le_u32, le_u64, prefix_index};
use crate::passages::{PassageHeader, PassageSections, PassageTable, PassageView, PASSAGE_ENTRY_BYTES};
use crate::{filter, io_err, Error, Result};

/// Magic bytes at offset 0.
pub const MAGIC: &[u8; 8] = b"DITTOLS\0";
/// The format version this build writes and reads (2: with checksums).
pub const VERSION: u32 = 2;
/// Bytes after the JSON header: a u64 checksum of everything before it.
pub const HEADER_CHECKSUM_BYTES: usize = 8;
/// The checksum algorithm named in the header: XXH3, 64-bit, seed 0.
pub const CHECKSUM_ALGORITHM: &str = "xxh3-64";
/// Every section starts at a multiple of this (a cache line).
pub const ALIGN: u64 = 64;
/// Bytes per exact-table entry: 20-byte SHA-1 + u32 source id.
pub const ENTRY_BYTES: usize = 24;
/// Fixed prefix: magic + version + header length.
pub const PREFIX_BYTES: usize = 16;
/// Largest JSON header accepted on open (a corrupt length must not make us allocate wildly).
pub const MAX_HEADER_BYTES: u32 = 1 << 20;
/// Largest prefix-index width.
pub const MAX_INDEX_BITS: u32 = 26;

/// Which of the paper's label sets a file holds (§3.1, §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `L_c`: hashes of normalized chunks.
    Chunks,
    /// `L_f`: hashes of whole files (bodies as received).
    Files,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Chunks => "chunks",
            Kind::Files => "files",
        })
    }
}

impl FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "chunks" | "c" => Ok(Kind::Chunks),
            "files" | "f" => Ok(Kind::Files),
            other => Err(format!("unknown label-set kind {other:?} (chunks or files)")),
        }
    }
}

/// What the builder saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Distinct digests in the exact table.
    pub entries: u64,
    /// Sources (documents given a title and URL).
    pub sources: u64,
    /// Documents read (pages, articles, files).
    pub documents: u64,
    /// Text blocks offered (kind chunks) or files offered (kind files).
    pub chunks_seen: u64,
    /// Blocks whose normalized length was not > min_chars (empty blocks included).
    pub chunks_too_short: u64,
    /// Kept chunks whose digest was already present (first source kept).
    pub duplicate_chunks: u64,
}

/// Filter parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterParams {
    /// Always `"blocked-bloom-512"` in versions 1 and 2.
    pub kind: String,
    pub blocks: u64,
    pub bits_per_key: u32,
    pub k: u32,
    /// Expected false-positive rate (Poisson model, see [`filter`]).
    pub expected_fp_rate: f64,
}

/// One section's place in the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    pub offset: u64,
    pub len: u64,
}

/// Section table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sections {
    pub filter: Section,
    pub index: Section,
    /// Prefix-index width `b`: `2^b` buckets on the digest's top bits.
    pub index_bits: u32,
    pub entries: Section,
    pub source_offsets: Section,
    pub source_blob: Section,
}

/// Bytes of a section hashed between two releases of its pages (`LabelSet::check_section`).
const CHECK_WINDOW: usize = 16 << 20;

/// A section's checksum: XXH3-64 (seed 0) of its bytes; 16 hex digits in the JSON header
/// (a JSON number could not hold every u64 for readers that parse numbers as doubles).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checksum(pub u64);

impl Checksum {
    /// The checksum of `bytes`.
    pub fn of(bytes: &[u8]) -> Checksum {
        Checksum(xxh3_64(bytes))
    }
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl Serialize for Checksum {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Checksum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(serde::de::Error::custom("a checksum is 16 hex digits"));
        }
        u64::from_str_radix(&s, 16).map(Checksum).map_err(serde::de::Error::custom)
    }
}

/// Per-section checksums (the header's own checksum follows the JSON, see `FORMAT.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checksums {
    /// Always [`CHECKSUM_ALGORITHM`] in version 2.
    pub algorithm: String,
    pub filter: Checksum,
    pub index: Checksum,
    pub entries: Checksum,
    pub source_offsets: Checksum,
    pub source_blob: Checksum,
}

impl Checksums {
    /// The recorded checksum of `s` (the passage sections' are in [`PassageHeader`]: zero
    /// here).
    pub fn get(&self, s: SectionId) -> Checksum {
        match s {
            SectionId::Filter => self.filter,
            SectionId::Index => self.index,
            SectionId::Entries => self.entries,
            SectionId::SourceOffsets => self.source_offsets,
            SectionId::SourceBlob => self.source_blob,
            SectionId::PassageFilter | SectionId::PassageIndex | SectionId::PassageTable => Checksum(0),
        }
    }
}

/// The five sections, in file order, and the passage table's three (present when the
/// header has `passages`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionId {
    Filter,
    Index,
    Entries,
    SourceOffsets,
    SourceBlob,
    PassageFilter,
    PassageIndex,
    PassageTable,
}

impl SectionId {
    /// Every section, in file order.
    pub const ALL: [SectionId; 5] = [
        SectionId::Filter,
        SectionId::Index,
        SectionId::Entries,
        SectionId::SourceOffsets,
        SectionId::SourceBlob,
    ];
    /// The sections [`LabelSet::open`] checksums: all but the entries (1.8 GB of 2.2 at
    /// Wikipedia scale), which [`LabelSet::open_verified`] adds.
    pub const ON_OPEN: [SectionId; 4] =
        [SectionId::Filter, SectionId::Index, SectionId::SourceOffsets, SectionId::SourceBlob];

    /// The name used in messages and `FORMAT.md`.
    pub fn name(self) -> &'static str {
        match self {
            SectionId::Filter => "filter",
            SectionId::Index => "index",
            SectionId::Entries => "entries",
            SectionId::SourceOffsets => "source offsets",
            SectionId::SourceBlob => "source blob",
            SectionId::PassageFilter => "passage filter",
            SectionId::PassageIndex => "passage index",
            SectionId::PassageTable => "passage table",
        }
    }
}

impl fmt::Display for SectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One checksum as `ditto labelset check` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionCheck {
    /// The section, or `None` for the header (prefix + JSON).
    pub section: Option<SectionId>,
    pub offset: u64,
    pub len: u64,
    /// Recorded in the file.
    pub expected: Checksum,
    /// Computed from the bytes.
    pub found: Checksum,
}

impl SectionCheck {
    pub fn ok(&self) -> bool {
        self.expected == self.found
    }
    /// `header` or the section's name.
    pub fn name(&self) -> &'static str {
        self.section.map_or("header", SectionId::name)
    }
}

/// The JSON header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub name: String,
    pub kind: Kind,
    /// `detector::Normalization` spec string, e.g. `nfkc,lower,collapse-ws,trim`.
    pub normalization: String,
    /// Chunks kept have normalized length (in chars) strictly greater than this (§7: "> 100").
    pub min_chars: u32,
    /// Where the content came from (free text: dump file name, directory, …).
    pub description: String,
    /// Build time, Unix seconds.
    pub created: u64,
    pub counts: Counts,
    pub filter: FilterParams,
    pub sections: Sections,
    pub checksums: Checksums,
    /// The passage table (issue 36); absent in label sets built without it (older ditto,
    /// `--passages off`), which match exact chunks only. Older readers ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passages: Option<PassageHeader>,
}

impl Header {
    /// The parsed normalization.
    pub fn normalization(&self) -> Result<Normalization, detector::normalize::UnknownNormalization> {
        self.normalization.parse()
    }
}

/// A source: where a labeled chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source<'a> {
    pub title: &'a str,
    pub url: &'a str,
}

/// A label set opened by memory map. Lookups read the mapping directly.
pub struct LabelSet {
    map: Mmap,
    path: PathBuf,
    /// The header's checksum, verified on open (reported by `ditto labelset check`).
    header_check: SectionCheck,
    header: Header,
    norm: Normalization,
    filter: Range<usize>,
    index: Range<usize>,
    entries: Range<usize>,
    src_offsets: Range<usize>,
    src_blob: Range<usize>,
    passages: Option<PassageTable>,
    n: usize,
    sources: usize,
    index_bits: u32,
    blocks: u64,
    k: u32,
}

impl fmt::Debug for LabelSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LabelSet").field("path", &self.path).field("header", &self.header).finish()
    }
}

fn checksum_error(path: &Path, c: &SectionCheck) -> Error {
    Error::Checksum {
        path: path.to_path_buf(),
        section: c.name(),
        offset: c.offset,
        len: c.len,
        expected: c.expected,
        found: c.found,
    }
}

fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Corrupt { path: path.to_path_buf(), reason: reason.into() }
}

/// An empty range, for sections a file does not have.
static EMPTY: Range<usize> = 0..0;

/// The passage table's sections, checked as the others are.
fn passage_sections(path: &Path, ph: &PassageHeader, file_len: u64) -> Result<PassageTable> {
    if !ph.params().is_valid() {
        return Err(corrupt(
            path,
            format!("bad passage parameters words={} modulus={}", ph.words, ph.modulus),
        ));
    }
    if ph.filter_k == 0 || ph.filter_k > filter::MAX_K || ph.filter_blocks == 0 {
        return Err(corrupt(
            path,
            format!("bad passage filter k={} blocks={}", ph.filter_k, ph.filter_blocks),
        ));
    }
    if ph.index_bits > MAX_INDEX_BITS || ph.entries > u32::MAX as u64 {
        return Err(corrupt(path, "passage index width or count out of range"));
    }
    let flen = ph.filter_blocks.checked_mul(filter::BLOCK_BYTES as u64);
    Ok(PassageTable {
        header: ph.clone(),
        filter: section(path, "passage filter", ph.filter, flen, file_len)?,
        index: section(path, "passage index", ph.index, Some(((1u64 << ph.index_bits) + 1) * 4), file_len)?,
        table: section(
            path,
            "passage table",
            ph.table,
            Some(ph.entries * PASSAGE_ENTRY_BYTES as u64),
            file_len,
        )?,
    })
}

/// Check a section lies inside the file, is aligned, and has the expected length.
fn section(
    path: &Path,
    what: &str,
    s: Section,
    expect_len: Option<u64>,
    file_len: u64,
) -> Result<Range<usize>> {
    if s.offset & (ALIGN - 1) != 0 {
        return Err(corrupt(path, format!("{what} section offset {} is not {ALIGN}-byte aligned", s.offset)));
    }
    if let Some(want) = expect_len {
        if s.len != want {
            return Err(corrupt(path, format!("{what} section is {} bytes, header implies {want}", s.len)));
        }
    }
    let end =
        s.offset.checked_add(s.len).ok_or_else(|| corrupt(path, format!("{what} section overflows")))?;
    if end > file_len {
        return Err(Error::Truncated { path: path.to_path_buf(), needed: end, len: file_len });
    }
    let start = usize::try_from(s.offset).map_err(|_| corrupt(path, "section offset too large"))?;
    let end = usize::try_from(end).map_err(|_| corrupt(path, "section end too large"))?;
    Ok(start..end)
}

impl LabelSet {
    /// Open and validate a `.dls` file: the prefix, the header's checksum, the header, every
    /// section's bounds, and the checksums of every section but the entries
    /// ([`SectionId::ON_OPEN`]: what `info`, reports and review read). Lookups then read the
    /// entries from the mapping: use [`LabelSet::open_verified`] before trusting them.
    pub fn open(path: impl AsRef<Path>) -> Result<LabelSet> {
        let set = Self::open_unverified(path.as_ref())?;
        set.verify_sections(&SectionId::ON_OPEN)?;
        if set.passages.is_some() {
            set.verify_sections(&[SectionId::PassageFilter, SectionId::PassageIndex])?;
        }
        // The last source offset bounds the blob; per-source offsets are checked on access.
        let b: &[u8] = &set.map;
        let last = le_u64(b, set.src_offsets.end - 8).unwrap_or(u64::MAX);
        if last > set.src_blob.len() as u64 {
            return Err(corrupt(&set.path, "source offsets point past the source blob"));
        }
        Ok(set)
    }

    /// [`LabelSet::open`] plus the entries' checksum, so every byte a lookup can read is
    /// checked: what scans and crawls open their label sets with (O(file): 0.23 s for the
    /// 2.2 GB of a Wikipedia-scale set, page cache warm; `FORMAT.md`).
    pub fn open_verified(path: impl AsRef<Path>) -> Result<LabelSet> {
        let set = Self::open(path)?;
        set.verify_sections(&[SectionId::Entries])?;
        if set.passages.is_some() {
            set.verify_sections(&[SectionId::PassageTable])?;
        }
        Ok(set)
    }

    /// Map the file and check the prefix, the header checksum, the header and the section
    /// bounds, but no section checksum: enough for bounds-checked reads, not for trust.
    pub(crate) fn open_unverified(path: &Path) -> Result<LabelSet> {
        let file = File::open(path).map_err(io_err(path))?;
        let file_len = file.metadata().map_err(io_err(path))?.len();
        if file_len < PREFIX_BYTES as u64 {
            // Too short to even hold the prefix; tell magic errors apart from truncation.
            return Err(Error::Truncated { path: path.into(), needed: PREFIX_BYTES as u64, len: file_len });
        }
        // SAFETY: the mapping is read-only; label-set files are written once to a temporary
        // name and renamed into place, never modified in place. If someone truncates the file
        // underneath us anyway, reads fault (SIGBUS) — the accepted risk of every mmap reader.
        let map = unsafe { Mmap::map(&file) }.map_err(io_err(path))?;
        Self::from_map(map, path)
    }

    fn from_map(map: Mmap, path: &Path) -> Result<LabelSet> {
        let file_len = map.len() as u64;
        let b: &[u8] = &map;
        if b.get(..8) != Some(&MAGIC[..]) {
            return Err(Error::BadMagic { path: path.into() });
        }
        let version = le_u32(b, 8).ok_or_else(|| corrupt(path, "no version"))?;
        if version == 1 {
            return Err(Error::NoChecksums { path: path.into() });
        }
        if version != VERSION {
            return Err(Error::UnsupportedVersion { path: path.into(), found: version, supported: VERSION });
        }
        let hlen = le_u32(b, 12).ok_or_else(|| corrupt(path, "no header length"))?;
        if hlen > MAX_HEADER_BYTES {
            return Err(corrupt(path, format!("header length {hlen} exceeds {MAX_HEADER_BYTES}")));
        }
        let hend = PREFIX_BYTES + hlen as usize;
        let needed = hend + HEADER_CHECKSUM_BYTES;
        let (covered, sum) = match (b.get(..hend), le_u64(b, hend)) {
            (Some(c), Some(s)) => (c, Checksum(s)),
            _ => return Err(Error::Truncated { path: path.into(), needed: needed as u64, len: file_len }),
        };
        // Checked before parsing: a damaged header is reported as such, not as whatever
        // the damage happens to make of the JSON.
        let header_check = SectionCheck {
            section: None,
            offset: 0,
            len: hend as u64,
            expected: sum,
            found: Checksum::of(covered),
        };
        if !header_check.ok() {
            return Err(checksum_error(path, &header_check));
        }
        let json = &covered[PREFIX_BYTES..];
        let header: Header =
            serde_json::from_slice(json).map_err(|e| corrupt(path, format!("header JSON: {e}")))?;
        let norm: Normalization =
            header.normalization.parse().map_err(|e| corrupt(path, format!("header normalization: {e}")))?;
        if header.checksums.algorithm != CHECKSUM_ALGORITHM {
            return Err(corrupt(
                path,
                format!(
                    "unknown checksum algorithm {:?} (expected {CHECKSUM_ALGORITHM})",
                    header.checksums.algorithm
                ),
            ));
        }

        let f = &header.filter;
        if f.kind != "blocked-bloom-512" {
            return Err(corrupt(path, format!("unknown filter kind {:?}", f.kind)));
        }
        if f.k == 0 || f.k > filter::MAX_K || f.blocks == 0 {
            return Err(corrupt(path, format!("bad filter parameters k={} blocks={}", f.k, f.blocks)));
        }
        let s = &header.sections;
        if s.index_bits > MAX_INDEX_BITS {
            return Err(corrupt(path, format!("index_bits {} > {MAX_INDEX_BITS}", s.index_bits)));
        }
        let n = header.counts.entries;
        let sources = header.counts.sources;
        if n > u32::MAX as u64 || sources > u32::MAX as u64 {
            return Err(corrupt(path, "entry or source count exceeds u32"));
        }
        let filter_len = f.blocks.checked_mul(filter::BLOCK_BYTES as u64);
        let sections_start = (needed as u64).next_multiple_of(ALIGN);
        let filter = section(path, "filter", s.filter, filter_len, file_len)?;
        let index = section(path, "index", s.index, Some(((1u64 << s.index_bits) + 1) * 4), file_len)?;
        let entries = section(path, "entries", s.entries, Some(n * ENTRY_BYTES as u64), file_len)?;
        let src_offsets =
            section(path, "source offsets", s.source_offsets, Some((2 * sources + 1) * 8), file_len)?;
        let src_blob = section(path, "source blob", s.source_blob, None, file_len)?;
        // Sections lie after the header, in the table's order, without overlapping: a
        // damaged offset must not make one section read another's (or the header's) bytes.
        let order = [
            ("filter", &filter),
            ("index", &index),
            ("entries", &entries),
            ("source offsets", &src_offsets),
            ("source blob", &src_blob),
        ];
        let passages = match &header.passages {
            None => None,
            Some(ph) => Some(passage_sections(path, ph, file_len)?),
        };
        let passage_order = passages.iter().flat_map(|t: &PassageTable| {
            [("passage filter", &t.filter), ("passage index", &t.index), ("passage table", &t.table)]
        });
        let header_end = sections_start as usize;
        let mut prev: (&str, usize) = ("header", header_end);
        for (what, r) in order.into_iter().chain(passage_order) {
            let over = if r.start < header_end { "header" } else { prev.0 };
            if r.start < prev.1 {
                return Err(corrupt(
                    path,
                    format!("{what} section at offset {} overlaps the {over}", r.start),
                ));
            }
            prev = (what, r.end);
        }
        Ok(LabelSet {
            path: path.into(),
            header_check,
            norm,
            n: n as usize,
            sources: sources as usize,
            index_bits: s.index_bits,
            blocks: f.blocks,
            k: f.k,
            header,
            filter,
            index,
            entries,
            src_offsets,
            src_blob,
            passages,
            map,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn kind(&self) -> Kind {
        self.header.kind
    }
    pub fn normalization(&self) -> Normalization {
        self.norm
    }
    /// Every chunk in the set has a normalized text of at least this many bytes of UTF-8:
    /// more than the header's `min_chars` chars (`LabelSetBuilder` drops shorter ones; hash
    /// lists from `ditto discover` and `labelset import` are written with `min_chars` 0).
    pub fn min_member_bytes(&self) -> usize {
        self.header().min_chars as usize + 1
    }

    /// Distinct digests in the set.
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// Number of sources.
    pub fn source_count(&self) -> usize {
        self.sources
    }
    /// File size in bytes.
    pub fn file_size(&self) -> u64 {
        self.map.len() as u64
    }

    /// Where section `s` lies in the file (validated on open).
    fn range(&self, s: SectionId) -> &Range<usize> {
        match s {
            SectionId::Filter => &self.filter,
            SectionId::Index => &self.index,
            SectionId::Entries => &self.entries,
            SectionId::SourceOffsets => &self.src_offsets,
            SectionId::SourceBlob => &self.src_blob,
            SectionId::PassageFilter => self.passages.as_ref().map_or(&EMPTY, |t| &t.filter),
            SectionId::PassageIndex => self.passages.as_ref().map_or(&EMPTY, |t| &t.index),
            SectionId::PassageTable => self.passages.as_ref().map_or(&EMPTY, |t| &t.table),
        }
    }

    /// The sections this file has, in file order: the five, then the passage table's.
    pub fn section_ids(&self) -> Vec<SectionId> {
        let mut v = SectionId::ALL.to_vec();
        if self.passages.is_some() {
            v.extend([SectionId::PassageFilter, SectionId::PassageIndex, SectionId::PassageTable]);
        }
        v
    }

    /// The passage table's header, when the file has one.
    pub fn passage_header(&self) -> Option<&PassageHeader> {
        self.passages.as_ref().map(|t| &t.header)
    }

    /// The passage table as the detector looks it up (`None`: exact chunks only, also when
    /// the table was built with another word hash: its anchors would never match).
    pub fn passages(&self) -> Option<PassageView<'_>> {
        self.passages
            .as_ref()
            .filter(|t| t.header.word_hash_current())
            .map(|table| PassageView { table, map: &self.map })
    }

    fn expected_checksum(&self, s: SectionId) -> Checksum {
        let p = self.passages.as_ref().map(|t| &t.header.checksums);
        match s {
            SectionId::PassageFilter => p.map_or(Checksum(0), |c| c.filter),
            SectionId::PassageIndex => p.map_or(Checksum(0), |c| c.index),
            SectionId::PassageTable => p.map_or(Checksum(0), |c| c.table),
            _ => self.header.checksums.get(s),
        }
    }

    /// Hash section `s` and compare with the header (O(section size)).
    ///
    /// The section is read in windows of [`CHECK_WINDOW`] bytes, each given back to the
    /// kernel once hashed ([`LabelSet::release`]): a scan verifies the exact and passage
    /// tables on open, and at Wikipedia size (GBs) would otherwise keep them all resident
    /// though it reads a few entries a page (issue 36: resident memory after open).
    pub fn check_section(&self, s: SectionId) -> SectionCheck {
        let r = self.range(s).clone();
        let bytes = self.map.get(r.clone()).unwrap_or(&[]);
        let mut hasher = Xxh3::new();
        for (i, window) in bytes.chunks(CHECK_WINDOW).enumerate() {
            hasher.update(window);
            self.release(r.start + i * CHECK_WINDOW, window.len());
        }
        SectionCheck {
            section: Some(s),
            offset: r.start as u64,
            len: r.len() as u64,
            expected: self.expected_checksum(s),
            found: Checksum(hasher.digest()),
        }
    }

    /// Drop this process's pages of `len` bytes of the mapping at `offset` (the whole pages
    /// inside it): they stay in the page cache and fault in again when read.
    fn release(&self, offset: usize, len: usize) {
        #[cfg(unix)]
        {
            const PAGE: usize = 4096;
            let (start, end) = (offset.next_multiple_of(PAGE), (offset + len) / PAGE * PAGE);
            if end > start && end <= self.map.len() {
                // SAFETY: the mapping is read-only and file-backed (`open_unverified`): after
                // MADV_DONTNEED, reads fault the same bytes in again from the file, so no
                // reference into the map sees different data. A page size other than 4 KiB
                // makes the call fail with EINVAL, ignored: the pages then just stay.
                let _ = unsafe {
                    self.map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
                };
            }
        }
        #[cfg(not(unix))]
        let _ = (offset, len);
    }

    /// The header's checksum (checked on open) and every section's, in file order.
    pub fn checksums(&self) -> Vec<SectionCheck> {
        std::iter::once(self.header_check)
            .chain(self.section_ids().into_iter().map(|s| self.check_section(s)))
            .collect()
    }

    fn verify_sections(&self, which: &[SectionId]) -> Result<()> {
        for &s in which {
            let c = self.check_section(s);
            if !c.ok() {
                return Err(checksum_error(&self.path, &c));
            }
        }
        Ok(())
    }

    /// Every section's checksum (O(file size); the header's was checked on open).
    pub fn verify_checksums(&self) -> Result<()> {
        self.verify_sections(&self.section_ids())
    }

    /// Error unless the file was built with `expected` normalization (DESIGN.md: a mismatch is
    /// an error, since hashes of differently normalized chunks never match).
    pub fn check_normalization(&self, expected: &Normalization) -> Result<()> {
        if &self.norm != expected {
            return Err(Error::NormalizationMismatch {
                path: self.path.clone(),
                found: self.norm.to_string(),
                expected: expected.to_string(),
            });
        }
        Ok(())
    }

    /// The filter answer alone (`false` = certainly absent).
    #[inline]
    pub fn may_contain(&self, d: &Sha1Digest) -> bool {
        filter::may_contain(&self.map[self.filter.clone()], self.blocks, self.k, d)
    }

    /// Exact-table search alone, skipping the filter.
    pub fn lookup_exact(&self, d: &Sha1Digest) -> Option<SourceId> {
        let b: &[u8] = &self.map;
        let bucket = self.bucket(d);
        let at = self.index.start + bucket * 4;
        // Clamp instead of trusting the index: a corrupt index can only cause misses.
        let lo = (le_u32(b, at)? as usize).min(self.n);
        let hi = (le_u32(b, at + 4)? as usize).min(self.n);
        let table = b.get(self.entries.clone())?;
        let (mut lo, mut hi) = (lo, hi.max(lo));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let e = table.get(mid * ENTRY_BYTES..(mid + 1) * ENTRY_BYTES)?;
            match e[..20].cmp(&d[..]) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return le_u32(e, 20),
            }
        }
        None
    }

    /// Look a digest up: filter first (one cache line), then the exact table.
    #[inline]
    pub fn lookup(&self, d: &Sha1Digest) -> Option<SourceId> {
        if !self.may_contain(d) {
            return None;
        }
        self.lookup_exact(d)
    }

    /// Batched [`LabelSet::lookup`]: `out` is cleared, then gets one answer per digest, in
    /// order. Identical answers to `lookup`, with the memory accesses of many keys overlapped
    /// (software pipelining):
    ///
    /// 1. compute the filter block address of the key [`PREFETCH_DISTANCE`] positions ahead
    ///    and prefetch it (one cache line), so that many filter loads are in flight;
    /// 2. test the filter for the current key (its line has arrived or is arriving);
    /// 3. per group of [`BATCH_GROUP`] keys, for the filter hits only: prefetch their
    ///    prefix-index buckets, then search the exact table.
    ///
    /// A negative lookup is one random read of a filter line, a latency-bound load (the
    /// filter is larger than L2 and spans more pages than the TLB covers); prefetching ahead
    /// keeps many misses in flight at once instead of one or two.
    pub fn lookup_many(&self, digests: &[Sha1Digest], out: &mut Vec<Option<SourceId>>) {
        out.clear();
        out.reserve(digests.len());
        let b: &[u8] = &self.map;
        let filter = b.get(self.filter.clone()).unwrap_or(&[]);
        let mut hits = [0usize; BATCH_GROUP];
        // 1. Prefetch the first PREFETCH_DISTANCE filter blocks; the loop below keeps that
        //    many ahead of the key it tests.
        for d in digests.iter().take(PREFETCH_DISTANCE) {
            prefetch(filter, filter_block_offset(d, self.blocks));
        }
        for (gi, group) in digests.chunks(BATCH_GROUP).enumerate() {
            // 2. Filter tests (the filter module is the authority on the bit layout).
            let mut n_hits = 0;
            for (i, d) in group.iter().enumerate() {
                if let Some(ahead) = digests.get(gi * BATCH_GROUP + i + PREFETCH_DISTANCE) {
                    prefetch(filter, filter_block_offset(ahead, self.blocks));
                }
                let maybe = filter::may_contain(filter, self.blocks, self.k, d);
                out.push(None);
                if maybe {
                    hits[n_hits] = i;
                    n_hits += 1;
                }
            }
            // 3. Exact table for the hits: index buckets prefetched first.
            let group_hits = &hits[..n_hits];
            for &i in group_hits {
                if let Some(d) = group.get(i) {
                    prefetch(b, self.index.start + self.bucket(d) * 4);
                }
            }
            let base = out.len() - group.len();
            for &i in group_hits {
                if let (Some(d), Some(slot)) = (group.get(i), out.get_mut(base + i)) {
                    *slot = self.lookup_exact(d);
                }
            }
        }
    }

    /// Prefix-index bucket of a digest: its top `index_bits` bits.
    #[inline]
    fn bucket(&self, d: &Sha1Digest) -> usize {
        if self.index_bits == 0 {
            0
        } else {
            (u32::from_be_bytes([d[0], d[1], d[2], d[3]]) >> (32 - self.index_bits)) as usize
        }
    }

    /// Normalize and hash `raw_text` with this set's normalization, then look it up.
    pub fn lookup_text(&self, raw_text: &str) -> Option<SourceId> {
        self.lookup(&detector::fingerprint::chunk_hash(&self.norm.apply(raw_text)))
    }

    /// The source with id `id`, or `None` when out of range or corrupt.
    pub fn source(&self, id: SourceId) -> Option<Source<'_>> {
        let i = id as usize;
        if i >= self.sources {
            return None;
        }
        let b: &[u8] = &self.map;
        let o = |j: usize| le_u64(b, self.src_offsets.start + j * 8).and_then(|v| usize::try_from(v).ok());
        let (t0, t1, u1) = (o(2 * i)?, o(2 * i + 1)?, o(2 * i + 2)?);
        let blob = b.get(self.src_blob.clone())?;
        let title = std::str::from_utf8(blob.get(t0..t1)?).ok()?;
        let url = std::str::from_utf8(blob.get(t1..u1)?).ok()?;
        Some(Source { title, url })
    }

    /// Iterate over all `(digest, source)` entries in digest order.
    pub fn iter(&self) -> impl Iterator<Item = (Sha1Digest, SourceId)> + '_ {
        let table = &self.map[self.entries.clone()];
        table.chunks_exact(ENTRY_BYTES).filter_map(|e| {
            let d: Sha1Digest = e[..20].try_into().ok()?;
            Some((d, le_u32(e, 20)?))
        })
    }

    /// Full consistency check, reading every section (O(file size)); `open` only checks
    /// bounds. Verifies: entries strictly sorted, source ids in range, every entry in the
    /// filter and found through the index, source offsets monotone and UTF-8.
    pub fn verify(&self) -> Result<()> {
        let p = &self.path;
        let mut prev: Option<Sha1Digest> = None;
        for (i, (d, s)) in self.iter().enumerate() {
            if prev.is_some_and(|q| q >= d) {
                return Err(corrupt(p, format!("entry {i} out of order")));
            }
            if s as usize >= self.sources {
                return Err(corrupt(p, format!("entry {i} has source id {s} ≥ {}", self.sources)));
            }
            if !self.may_contain(&d) {
                return Err(corrupt(p, format!("entry {i} missing from the filter")));
            }
            if self.lookup_exact(&d) != Some(s) {
                return Err(corrupt(p, format!("entry {i} not reachable through the index")));
            }
            prev = Some(d);
        }
        for id in 0..self.sources {
            if self.source(id as SourceId).is_none() {
                return Err(corrupt(p, format!("source {id} has bad offsets or is not UTF-8")));
            }
        }
        if let Some(t) = &self.passages {
            t.verify(&self.map, self.sources).map_err(|r| corrupt(p, r))?;
        }
        Ok(())
    }
}

/// The passage table, for the match stage (`None` answers when the file has none).
impl detector::passages::PassageLookup for LabelSet {
    fn params(&self) -> detector::passages::PassageParams {
        self.passages.as_ref().map(|t| t.header.params()).unwrap_or_default()
    }
    fn lookup_passage(&self, h: detector::passages::PassageHash) -> Option<SourceId> {
        self.passages()?.lookup_passage(h)
    }
}

impl ChunkLookup for LabelSet {
    fn lookup(&self, hash: &Sha1Digest) -> Option<SourceId> {
        LabelSet::lookup(self, hash)
    }
    fn lookup_many(&self, hashes: &[Sha1Digest], out: &mut Vec<Option<SourceId>>) {
        LabelSet::lookup_many(self, hashes, out)
    }
    /// Chunks are kept only when their normalized text has more than `min_chars` chars
    /// (`LabelSetBuilder::add_text_block`), and a char is at least one byte of UTF-8.
    fn min_member_bytes(&self) -> usize {
        self.min_member_bytes()
    }
}

/// Keys per exact-table group in [`LabelSet::lookup_many`]: the filter hits of a group have
/// their index buckets prefetched together.
pub const BATCH_GROUP: usize = 64;

/// How many keys ahead [`LabelSet::lookup_many`] prefetches filter blocks: enough loads in
/// flight to cover a cache and TLB miss, few enough that prefetched lines are still in L1
/// when tested. Measured on 10 M entries (AMD EPYC, `cargo bench -p labelsets --bench
/// lookup`): 16–32 beat 8 and a whole-group-then-test scheme of 64 (BENCHMARKS.md).
pub const PREFETCH_DISTANCE: usize = 32;

/// Byte offset of `d`'s block in the filter section. Mirrors `filter`'s block choice
/// (multiply-shift of the digest's first 8 bytes, big-endian); it is only used for
/// prefetching, so a mismatch could cost speed, never a wrong answer (tested below).
#[inline]
fn filter_block_offset(d: &Sha1Digest, blocks: u64) -> usize {
    let x = u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]);
    (((x as u128 * blocks as u128) >> 64) as usize) * filter::BLOCK_BYTES
}

/// Hint the CPU to bring the cache line holding `bytes[at]` into L1. Out of range: nothing.
/// A prefetch never faults and changes no state a program can observe, except timing.
#[inline(always)]
fn prefetch(bytes: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = bytes.get(at) {
        // SAFETY: `_mm_prefetch` is a hint that never faults and reads nothing into
        // registers; the pointer is derived from a live reference anyway. SSE is part of
        // the x86_64 baseline.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                p as *const u8 as *const i8,
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, at);
}

/// Prefix-index width for `n` entries: the smallest `b` with at most 16 entries per bucket on
/// average (8–16), so a lookup is a binary search over a few cache lines; at 75 M entries
/// `b` = 23, 8 M buckets, 32 MB.
pub fn index_bits_for(n: u64) -> u32 {
    let mut b = 0;
    while b < 24 && (n >> b) > 16 {
        b += 1;
    }
    b
}

/// The entries to write, sorted by digest and distinct: in memory, or in a file of
/// on-disk records (20-byte digest + u32 LE source, what a spilled build merges into).
#[derive(Clone, Copy)]
pub(crate) enum Entries<'a> {
    Slice(&'a [(Sha1Digest, SourceId)]),
    File { path: &'a Path, n: u64 },
}

impl Entries<'_> {
    fn len(&self) -> u64 {
        match self {
            Entries::Slice(e) => e.len() as u64,
            Entries::File { n, .. } => *n,
        }
    }
}

/// What the writer needs: entries sorted by digest and deduplicated.
pub(crate) struct WriteInput<'a> {
    pub header: Header,
    pub entries: Entries<'a>,
    pub sources: &'a [(String, String)],
    pub bits_per_key: u32,
    pub k: u32,
    /// The passage table's sections; `header.passages` holds its parameters and counts.
    pub passages: Option<PassageSections>,
}

/// The entries' on-disk bytes, a buffer at a time (whole records): the writer, its checksum,
/// the filter and the index see the same.
fn for_each_entry_chunk(
    entries: Entries<'_>,
    mut f: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    const PER_CHUNK: usize = 1 << 14;
    let mut buf = Vec::with_capacity(PER_CHUNK * ENTRY_BYTES);
    match entries {
        Entries::Slice(entries) => {
            for chunk in entries.chunks(PER_CHUNK) {
                buf.clear();
                for (d, s) in chunk {
                    buf.extend_from_slice(d);
                    buf.extend_from_slice(&s.to_le_bytes());
                }
                f(&buf)?;
            }
        }
        Entries::File { path, n } => {
            use std::io::Read;
            let mut r = File::open(path)?;
            let mut left = n * ENTRY_BYTES as u64;
            while left > 0 {
                let take = left.min((PER_CHUNK * ENTRY_BYTES) as u64) as usize;
                buf.resize(take, 0);
                r.read_exact(&mut buf)?;
                f(&buf)?;
                left -= take as u64;
            }
        }
    }
    Ok(())
}

fn pad(w: &mut impl Write, pos: &mut u64) -> std::io::Result<()> {
    let next = pos.next_multiple_of(ALIGN);
    w.write_all(&vec![0u8; (next - *pos) as usize])?;
    *pos = next;
    Ok(())
}

/// Write a label set atomically: to a temporary file in the same directory, fsync, rename.
pub(crate) fn write_file(path: &Path, mut input: WriteInput<'_>) -> Result<Header> {
    let n = input.entries.len();
    if n > u32::MAX as u64 || input.sources.len() as u64 > u32::MAX as u64 {
        return Err(Error::TooLarge(format!("{n} entries, {} sources (max 2^32-1)", input.sources.len())));
    }
    let bits = index_bits_for(n);
    let (bloom, index) = filter_and_index(input.entries, input.bits_per_key, input.k, bits)
        .map_err(|e| Error::Io { path: path.into(), source: e })?;
    let sections = SectionBytes {
        index,
        offsets: source_offsets(input.sources),
        blob_len: input.sources.iter().map(|(t, u)| (t.len() + u.len()) as u64).sum(),
        bloom,
    };
    // Checksums first: they go into the header, which is written before the sections.
    input.header.checksums =
        section_checksums(&sections, &input).map_err(|e| Error::Io { path: path.into(), source: e })?;
    input.header.filter = FilterParams {
        kind: "blocked-bloom-512".into(),
        blocks: sections.bloom.blocks(),
        bits_per_key: input.bits_per_key,
        k: sections.bloom.k(),
        expected_fp_rate: filter::expected_fp_rate(n, sections.bloom.blocks(), sections.bloom.k()),
    };
    input.header.counts.entries = n;
    input.header.counts.sources = input.sources.len() as u64;
    match (&input.passages, input.header.passages.as_mut()) {
        (Some(ps), Some(ph)) => {
            ph.checksums = ps.checksums();
            ph.filter_blocks = ps.filter.blocks();
            ph.filter_k = ps.filter.k();
            ph.index_bits = ps.index_bits;
            ph.entries = ps.entries();
        }
        _ => input.header.passages = None,
    }
    let json = lay_out_header(&mut input.header, &sections.lens(n), bits, path)?;
    write_atomically(path, &json, &sections, &input)?;
    Ok(input.header)
}

/// The sections a label set is written from, built in memory except the entries and the
/// source blob (streamed from the input).
struct SectionBytes {
    bloom: filter::BlockedBloom,
    index: Vec<u8>,
    offsets: Vec<u8>,
    blob_len: u64,
}

impl SectionBytes {
    /// Lengths of the five sections in file order.
    fn lens(&self, entries: u64) -> [u64; 5] {
        [
            self.bloom.as_bytes().len() as u64,
            self.index.len() as u64,
            entries * ENTRY_BYTES as u64,
            self.offsets.len() as u64,
            self.blob_len,
        ]
    }
}

/// The filter, and the prefix index (the start position of each of the `2^bits` buckets,
/// plus the end), in one pass over the sorted entries.
fn filter_and_index(
    entries: Entries<'_>,
    bits_per_key: u32,
    k: u32,
    bits: u32,
) -> std::io::Result<(filter::BlockedBloom, Vec<u8>)> {
    let n = entries.len();
    let mut bloom = filter::BlockedBloom::with_capacity(n, bits_per_key, k);
    let mut counts = vec![0u32; 1usize << bits];
    for_each_entry_chunk(entries, |buf| {
        for rec in buf.chunks_exact(ENTRY_BYTES) {
            let mut d: Sha1Digest = [0; 20];
            d.copy_from_slice(&rec[..20]);
            bloom.insert(&d);
            let top = if bits == 0 { 0 } else { u32::from_be_bytes([d[0], d[1], d[2], d[3]]) >> (32 - bits) };
            counts[top as usize] += 1;
        }
        Ok(())
    })?;
    Ok((bloom, prefix_index(counts, n)))
}

/// Source offsets into the blob: title start, URL start, …, end.
fn source_offsets(sources: &[(String, String)]) -> Vec<u8> {
    let mut offsets = Vec::with_capacity((sources.len() * 2 + 1) * 8);
    let mut blob_len = 0u64;
    offsets.extend_from_slice(&0u64.to_le_bytes());
    for (t, u) in sources {
        blob_len += t.len() as u64;
        offsets.extend_from_slice(&blob_len.to_le_bytes());
        blob_len += u.len() as u64;
        offsets.extend_from_slice(&blob_len.to_le_bytes());
    }
    offsets
}

/// Every section's checksum.
fn section_checksums(sections: &SectionBytes, input: &WriteInput<'_>) -> std::io::Result<Checksums> {
    let mut entries_sum = Xxh3::new();
    for_each_entry_chunk(input.entries, |b| {
        entries_sum.update(b);
        Ok(())
    })?;
    let mut blob_sum = Xxh3::new();
    for (t, u) in input.sources {
        blob_sum.update(t.as_bytes());
        blob_sum.update(u.as_bytes());
    }
    Ok(Checksums {
        algorithm: CHECKSUM_ALGORITHM.into(),
        filter: Checksum::of(sections.bloom.as_bytes()),
        index: Checksum::of(&sections.index),
        entries: Checksum(entries_sum.digest()),
        source_offsets: Checksum::of(&sections.offsets),
        source_blob: Checksum(blob_sum.digest()),
    })
}

/// Lay out the sections after the header and serialize it. The header length depends on the
/// offsets it holds, so iterate until the JSON length stops changing (twice at most in
/// practice).
fn lay_out_header(header: &mut Header, lens: &[u64; 5], bits: u32, path: &Path) -> Result<Vec<u8>> {
    let mut json = Vec::new();
    for _ in 0..8 {
        let mut at = ((PREFIX_BYTES + json.len() + HEADER_CHECKSUM_BYTES) as u64).next_multiple_of(ALIGN);
        let mut secs = [Section::default(); 5];
        for (s, len) in secs.iter_mut().zip(lens) {
            *s = Section { offset: at, len: *len };
            at = (at + len).next_multiple_of(ALIGN);
        }
        header.sections = Sections {
            filter: secs[0],
            index: secs[1],
            index_bits: bits,
            entries: secs[2],
            source_offsets: secs[3],
            source_blob: secs[4],
        };
        if let Some(ph) = header.passages.as_mut() {
            let lens = [
                ph.filter_blocks * filter::BLOCK_BYTES as u64,
                ((1u64 << ph.index_bits) + 1) * 4,
                ph.entries * PASSAGE_ENTRY_BYTES as u64,
            ];
            let mut put = |len: u64| {
                let s = Section { offset: at, len };
                at = (at + len).next_multiple_of(ALIGN);
                s
            };
            ph.filter = put(lens[0]);
            ph.index = put(lens[1]);
            ph.table = put(lens[2]);
        }
        let next = serde_json::to_vec(&header)
            .map_err(|e| Error::Input { path: path.into(), reason: format!("serializing header: {e}") })?;
        let stable = next.len() == json.len();
        json = next;
        if stable {
            break;
        }
    }
    if json.len() > MAX_HEADER_BYTES as usize {
        return Err(Error::TooLarge(format!("header JSON is {} bytes", json.len())));
    }
    Ok(json)
}

/// Write the file to a temporary name beside `path`, fsync, rename into place.
fn write_atomically(path: &Path, json: &[u8], sections: &SectionBytes, input: &WriteInput<'_>) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let fname =
        path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| "labelset".into());
    let tmp = dir.join(format!(".{fname}.tmp-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        write_sections(&mut w, json, sections, input)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::Io { path: tmp, source: e });
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::Io { path: path.into(), source: e }
    })
}

/// The prefix, the header JSON and its checksum, then each section at its aligned offset.
fn write_sections(
    w: &mut impl Write,
    json: &[u8],
    sections: &SectionBytes,
    input: &WriteInput<'_>,
) -> std::io::Result<()> {
    let lens = sections.lens(input.entries.len());
    let mut at = 0u64;
    let mut head = Vec::with_capacity(PREFIX_BYTES + json.len() + HEADER_CHECKSUM_BYTES);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&(json.len() as u32).to_le_bytes());
    head.extend_from_slice(json);
    let sum = Checksum::of(&head);
    head.extend_from_slice(&sum.0.to_le_bytes());
    w.write_all(&head)?;
    at += head.len() as u64;
    pad(w, &mut at)?;
    w.write_all(sections.bloom.as_bytes())?;
    at += lens[0];
    pad(w, &mut at)?;
    w.write_all(&sections.index)?;
    at += lens[1];
    pad(w, &mut at)?;
    for_each_entry_chunk(input.entries, |b| w.write_all(b))?;
    at += lens[2];
    pad(w, &mut at)?;
    w.write_all(&sections.offsets)?;
    at += lens[3];
    pad(w, &mut at)?;
    for (t, u) in input.sources {
        w.write_all(t.as_bytes())?;
        w.write_all(u.as_bytes())?;
    }
    at += lens[4];
    if let Some(ps) = &input.passages {
        for part in [ps.filter.as_bytes(), &ps.index[..]] {
            pad(w, &mut at)?;
            w.write_all(part)?;
            at += part.len() as u64;
        }
        pad(w, &mut at)?;
        ps.write_table(w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitmix64(mut x: u64) -> u64 {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    fn digest(i: u64) -> Sha1Digest {
        let mut d = [0u8; 20];
        for (j, part) in d.chunks_mut(8).enumerate() {
            part.copy_from_slice(&splitmix64(i * 3 + j as u64).to_le_bytes()[..part.len()]);
        }
        d
    }

    #[test]
    fn prefetch_address_is_the_filter_block() {
        // One key per filter: its bits must all lie in the block the prefetch targets.
        for i in 0..200u64 {
            let d = digest(i);
            let mut f = filter::BlockedBloom::with_capacity(1000, filter::BITS_PER_KEY, filter::K);
            f.insert(&d);
            let at = filter_block_offset(&d, f.blocks());
            let bytes = f.as_bytes();
            assert!(bytes[at..at + filter::BLOCK_BYTES].iter().any(|&x| x != 0));
            let outside = bytes[..at].iter().chain(&bytes[at + filter::BLOCK_BYTES..]);
            assert!(outside.into_iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn batched_lookup_equals_per_key_on_random_digests() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.dls");
        let mut b = crate::LabelSetBuilder::new("t", Kind::Chunks, Normalization::default(), 100, "t");
        let srcs: Vec<SourceId> = (0..7).map(|i| b.add_source(&format!("s{i}"), "")).collect();
        let n = 50_000u64;
        for i in 0..n {
            b.add_digest(srcs[(i % 7) as usize], digest(i)).unwrap();
        }
        b.write(&path).unwrap();
        let set = LabelSet::open(&path).unwrap();
        // Present, absent (with filter false positives among them), mixed; odd lengths.
        let mut queries: Vec<Sha1Digest> = Vec::new();
        for i in 0..20_000u64 {
            let j = splitmix64(i ^ 0x5eed);
            queries.push(if j.is_multiple_of(3) { digest(j % n) } else { digest((1 << 40) + j % (1 << 30)) });
        }
        let want: Vec<Option<SourceId>> = queries.iter().map(|d| set.lookup(d)).collect();
        assert!(want.iter().filter(|w| w.is_some()).count() > 6000);
        let mut out = vec![Some(99)]; // stale contents must be cleared
        for len in [0usize, 1, 63, 64, 65, 257, 20_000] {
            set.lookup_many(&queries[..len], &mut out);
            assert_eq!(out, want[..len]);
            ChunkLookup::lookup_many(&set, &queries[..len], &mut out);
            assert_eq!(out, want[..len]);
        }
        // The fingerprints of present digests all match their source.
        set.lookup_many(&(0..1000).map(digest).collect::<Vec<_>>(), &mut out);
        assert!(out.iter().enumerate().all(|(i, s)| *s == Some(srcs[i % 7])));
    }

    #[test]
    fn index_bits_grow_with_size() {
        assert_eq!(index_bits_for(0), 0);
        assert_eq!(index_bits_for(16), 0);
        assert_eq!(index_bits_for(10_000_000), 20);
        assert_eq!(index_bits_for(75_000_000), 23);
        assert_eq!(index_bits_for(u32::MAX as u64), 24);
    }
}
