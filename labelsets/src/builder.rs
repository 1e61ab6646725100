//! Building label sets (the paper's informed discovery, §3.2 step 3a, and §7's Wikipedia
//! `L_c`: "distinct chunks of length > 100").

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use detector::fingerprint::{chunk_hash, sha1};
use detector::{CleanOptions, Normalization, Sha1Digest, SourceId};

use crate::format::{write_file, Checksums, Counts, FilterParams, Header, Kind, Sections, WriteInput};
use crate::{filter, Error, Result};

/// Where readers put documents. [`LabelSetBuilder`] implements it; the root crate can feed
/// WARC records through the same trait, or wrap a builder to add its own filtering.
pub trait DocumentSink {
    /// A whole document (HTML or plain text) to be cleaned into blocks with `detector::clean`.
    fn document(&mut self, title: &str, url: &str, body: &[u8], content_type: Option<&str>) -> Result<()>;
    /// A document already reduced to paragraphs (e.g. wikitext, see [`crate::wikitext`]);
    /// `body` is the raw source, used as the file for label sets of kind `files`.
    fn paragraphs(&mut self, title: &str, url: &str, body: &[u8], paragraphs: &[String]) -> Result<()>;
}

/// Accumulates `(digest, source)` pairs and sources, then writes a `.dls` file.
///
/// Memory: 24 bytes per kept chunk (duplicates included until `write` sorts and dedups), plus
/// the source strings; 75 M chunks ≈ 1.8 GB.
#[derive(Debug, Clone)]
pub struct LabelSetBuilder {
    name: String,
    kind: Kind,
    norm: Normalization,
    min_chars: u32,
    description: String,
    bits_per_key: u32,
    sources: Vec<(String, String)>,
    entries: Vec<(Sha1Digest, SourceId)>,
    counts: Counts,
    clean_opts: CleanOptions,
}

impl LabelSetBuilder {
    /// A new, empty builder. `min_chars`: chunks are kept only when their normalized length in
    /// chars is strictly greater (§7, "chunks of length > 100": pass 100).
    pub fn new(name: &str, kind: Kind, norm: Normalization, min_chars: u32, description: &str) -> Self {
        LabelSetBuilder {
            name: name.into(),
            kind,
            norm,
            min_chars,
            description: description.into(),
            bits_per_key: filter::BITS_PER_KEY,
            sources: Vec::new(),
            entries: Vec::new(),
            counts: Counts::default(),
            clean_opts: CleanOptions { extract_links: false },
        }
    }

    /// Filter bits per key (default 10 → ~1 % false positives). Clamped to 4..=32.
    pub fn bits_per_key(mut self, bits: u32) -> Self {
        self.bits_per_key = bits.clamp(4, 32);
        self
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }
    pub fn normalization(&self) -> Normalization {
        self.norm
    }
    pub fn min_chars(&self) -> u32 {
        self.min_chars
    }
    /// Counts so far. `entries` and `duplicate_chunks` are final only after [`Self::write`].
    pub fn counts(&self) -> &Counts {
        &self.counts
    }
    /// Chunks kept so far, duplicates included.
    pub fn kept(&self) -> usize {
        self.entries.len()
    }

    /// Register a source (e.g. a Wikipedia article); its id is its index.
    pub fn add_source(&mut self, title: &str, url: &str) -> SourceId {
        self.sources.push((title.into(), url.into()));
        // Ids past u32::MAX saturate here; `write` rejects that many sources.
        u32::try_from(self.sources.len() - 1).unwrap_or(SourceId::MAX)
    }

    fn check(&self, source: SourceId, want: Kind, what: &'static str) -> Result<()> {
        if self.kind != want {
            return Err(Error::WrongKind { kind: self.kind, what });
        }
        if source as usize >= self.sources.len() {
            return Err(Error::UnknownSource(source));
        }
        Ok(())
    }

    /// Normalize one text block and keep its hash if its normalized length is > min_chars.
    /// Returns whether it was kept.
    pub fn add_text_block(&mut self, source: SourceId, raw_text: &str) -> Result<bool> {
        self.check(source, Kind::Chunks, "text blocks")?;
        self.counts.chunks_seen += 1;
        let text = self.norm.apply(raw_text);
        // Strictly greater (§7 "length > 100"); empty blocks (the paper's most common stop
        // chunk, §3.4.2) are always too short.
        if text.is_empty() || text.chars().count() <= self.min_chars as usize {
            self.counts.chunks_too_short += 1;
            return Ok(false);
        }
        self.entries.push((chunk_hash(&text), source));
        Ok(true)
    }

    /// Add an already computed digest (blind discovery, §3.2 step 3b, feeds these). The
    /// digest must be of a chunk whose normalized text is longer than `min_chars` chars,
    /// as [`Self::add_text_block`] keeps them: scans skip hashing shorter chunks
    /// (`LabelSet::min_member_bytes`). Hash lists of unknown lengths take `min_chars` 0.
    pub fn add_digest(&mut self, source: SourceId, digest: Sha1Digest) -> Result<()> {
        if source as usize >= self.sources.len() {
            return Err(Error::UnknownSource(source));
        }
        self.counts.chunks_seen += 1;
        self.entries.push((digest, source));
        Ok(())
    }

    /// `L_f`: the SHA-1 of the whole body as received (§3.1 step 1). Counts one document.
    pub fn add_file(&mut self, source: SourceId, body: &[u8]) -> Result<()> {
        self.check(source, Kind::Files, "files")?;
        self.counts.documents += 1;
        self.counts.chunks_seen += 1;
        self.entries.push((sha1(body), source));
        Ok(())
    }

    /// Add pre-split paragraphs of one document. Returns how many were kept.
    pub fn add_paragraphs<B: detector::BlockList + ?Sized>(
        &mut self,
        source: SourceId,
        paragraphs: &B,
    ) -> Result<usize> {
        self.check(source, Kind::Chunks, "text blocks")?;
        self.counts.documents += 1;
        let mut kept = 0;
        for p in paragraphs.blocks() {
            kept += self.add_text_block(source, p)? as usize;
        }
        Ok(kept)
    }

    /// Clean a document with `detector::clean` and add its blocks (kind `chunks`), or add its
    /// file hash (kind `files`). Returns how many digests were kept.
    pub fn add_document(
        &mut self,
        source: SourceId,
        body: &[u8],
        content_type: Option<&str>,
    ) -> Result<usize> {
        if self.kind == Kind::Files {
            self.add_file(source, body)?;
            return Ok(1);
        }
        self.check(source, Kind::Chunks, "documents")?;
        let base = self.sources.get(source as usize).map(|(_, u)| u.clone()).filter(|u| !u.is_empty());
        let doc = detector::clean(body, content_type, base.as_deref(), &self.clean_opts);
        self.add_paragraphs(source, &doc.blocks)
    }

    /// Sort, deduplicate (first source wins) and write atomically to `path` (temporary file in
    /// the same directory, then rename). Returns the header written. The builder stays usable.
    ///
    /// "First source" is the lowest source id, which is the first one added as long as
    /// sources are added before their blocks, as every reader here does.
    pub fn write(&mut self, path: impl AsRef<Path>) -> Result<Header> {
        let kept = self.entries.len() as u64;
        // Unstable sort on (digest, source) puts the lowest source first among equal digests,
        // without the extra n/2 buffer a stable sort would allocate.
        self.entries.sort_unstable();
        self.entries.dedup_by(|b, a| a.0 == b.0);
        self.entries.shrink_to_fit();
        self.counts.entries = self.entries.len() as u64;
        self.counts.duplicate_chunks = kept - self.counts.entries;
        self.counts.sources = self.sources.len() as u64;
        let header = Header {
            name: self.name.clone(),
            kind: self.kind,
            normalization: self.norm.to_string(),
            min_chars: self.min_chars,
            description: self.description.clone(),
            created: SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
            counts: self.counts.clone(),
            filter: FilterParams {
                kind: String::new(),
                blocks: 0,
                bits_per_key: self.bits_per_key,
                k: filter::K,
                expected_fp_rate: 0.0,
            },
            sections: Sections::default(),
            checksums: Checksums::default(),
        };
        write_file(
            path.as_ref(),
            WriteInput {
                header,
                entries: &self.entries,
                sources: &self.sources,
                bits_per_key: self.bits_per_key,
                k: filter::K,
            },
        )
    }
}

impl DocumentSink for LabelSetBuilder {
    fn document(&mut self, title: &str, url: &str, body: &[u8], content_type: Option<&str>) -> Result<()> {
        let id = self.add_source(title, url);
        self.add_document(id, body, content_type).map(|_| ())
    }

    fn paragraphs(&mut self, title: &str, url: &str, body: &[u8], paragraphs: &[String]) -> Result<()> {
        let id = self.add_source(title, url);
        match self.kind {
            Kind::Files => self.add_file(id, body),
            Kind::Chunks => self.add_paragraphs(id, paragraphs).map(|_| ()),
        }
    }
}
