//! Building label sets (the paper's informed discovery, §3.2 step 3a, and §7's Wikipedia
//! `L_c`: "distinct chunks of length > 100").

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use detector::fingerprint::{chunk_hash, sha1};
use detector::passages::{document_anchors, PassageHash, PassageParams};
use detector::{CleanOptions, Normalization, Sha1Digest, SourceId};

use crate::format::{
    write_file, Checksums, Counts, Entries, FilterParams, Header, Kind, Section, Sections, WriteInput,
};
use crate::passages::{
    build_table, merge_runs, table_key, PassageChecksums, PassageHeader, PassageSections,
    DEFAULT_MAX_DOCUMENTS, KEY_BITS,
};
use crate::spill::{Entry, Runs};
use crate::{filter, wikitext, Error, LabelSet, Result};

/// Where readers put documents. [`LabelSetBuilder`] implements it; the root crate can feed
/// WARC records through the same trait, or wrap a builder to add its own filtering.
pub trait DocumentSink {
    /// A whole document (HTML or plain text) to be cleaned into blocks with `detector::clean`.
    fn document(&mut self, title: &str, url: &str, body: &[u8], content_type: Option<&str>) -> Result<()>;
    /// A document already reduced to paragraphs (e.g. wikitext, see [`crate::wikitext`]);
    /// `body` is the raw source, used as the file for label sets of kind `files`.
    fn paragraphs(&mut self, title: &str, url: &str, body: &[u8], paragraphs: &[String]) -> Result<()>;
    /// A MediaWiki page's wikitext (namespace 0, not a redirect), to be reduced to paragraphs
    /// with [`wikitext::paragraphs`]. The default reduces it here and calls
    /// [`Self::paragraphs`]; the parallel build reduces it in its pool.
    fn wikitext(&mut self, title: &str, url: &str, text: &str) -> Result<()> {
        let paras = wikitext::paragraphs(text);
        self.paragraphs(title, url, text.as_bytes(), &paras)
    }
    /// A whole document in a file (a directory's page), as [`Self::document`] of its bytes.
    /// The default reads it here; the parallel build reads it on its pool, so that one
    /// thread does not read every file.
    fn file(&mut self, title: &str, url: &str, path: &Path, content_type: Option<&str>) -> Result<()> {
        let body = std::fs::read(path).map_err(crate::io_err(path))?;
        self.document(title, url, &body, content_type)
    }
}

/// One document as a reader hands it over, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum DocRef<'a> {
    /// HTML or plain text, cleaned with `detector::clean`.
    Document { title: &'a str, url: &'a str, body: &'a [u8], content_type: Option<&'a str> },
    /// Wikitext, reduced with [`wikitext::paragraphs`].
    Wikitext { title: &'a str, url: &'a str, text: &'a str },
    /// Already split into paragraphs; `body` is the raw source.
    Paragraphs { title: &'a str, url: &'a str, body: &'a [u8], paragraphs: &'a [String] },
}

/// What one document gives a label set: its source, the digests kept (in block order) and
/// the counts it adds. Computed by [`Digester::digest`], alike in the sequential and the
/// parallel build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Digested {
    pub title: String,
    pub url: String,
    pub digests: Vec<Sha1Digest>,
    /// The document's distinct passage anchors (`detector::passages`), sorted; empty when
    /// the build keeps no passages.
    pub passages: Vec<PassageHash>,
    pub documents: u64,
    pub chunks_seen: u64,
    pub chunks_too_short: u64,
}

/// The per-document work of a build (cleaning or wikitext reduction, normalization,
/// length filter, hashing), independent of the builder's state so a pool can run it.
#[derive(Debug, Clone)]
pub struct Digester {
    kind: Kind,
    norm: Normalization,
    min_chars: u32,
    clean_opts: CleanOptions,
    passages: Option<PassageParams>,
}

impl Digester {
    pub fn digest(&self, doc: DocRef<'_>) -> Digested {
        let (title, url) = match doc {
            DocRef::Document { title, url, .. }
            | DocRef::Wikitext { title, url, .. }
            | DocRef::Paragraphs { title, url, .. } => (title, url),
        };
        let mut out = Digested { title: title.into(), url: url.into(), documents: 1, ..Digested::default() };
        if self.kind == Kind::Files {
            let body = match doc {
                DocRef::Document { body, .. } | DocRef::Paragraphs { body, .. } => body,
                DocRef::Wikitext { text, .. } => text.as_bytes(),
            };
            out.chunks_seen = 1;
            out.digests.push(sha1(body));
            return out;
        }
        match doc {
            DocRef::Document { url, body, content_type, .. } => {
                let base = Some(url).filter(|u| !u.is_empty());
                let cleaned = detector::clean(body, content_type, base, &self.clean_opts);
                self.blocks(&cleaned.blocks, &mut out);
            }
            DocRef::Wikitext { text, .. } => self.blocks(&wikitext::paragraphs(text), &mut out),
            DocRef::Paragraphs { paragraphs, .. } => self.blocks(paragraphs, &mut out),
        }
        out
    }

    fn blocks<B: detector::BlockList + ?Sized>(&self, blocks: &B, out: &mut Digested) {
        if let Some(params) = self.passages {
            // Over the word stream of the whole document: its blocks' edges play no part.
            out.passages = document_anchors(blocks.blocks(), params);
        }
        for p in blocks.blocks() {
            out.chunks_seen += 1;
            match self.block(p) {
                Some(d) => out.digests.push(d),
                None => out.chunks_too_short += 1,
            }
        }
    }

    /// Normalize one block; its digest when its normalized length is > min_chars.
    fn block(&self, raw_text: &str) -> Option<Sha1Digest> {
        let text = self.norm.apply(raw_text);
        // Strictly greater (§7 "length > 100"); empty blocks (the paper's most common stop
        // chunk, §3.4.2) are always too short.
        if text.is_empty() || text.chars().count() <= self.min_chars as usize {
            return None;
        }
        Some(chunk_hash(&text))
    }
}

/// Live figures of a build, for progress lines (updated by the builder and the readers).
#[derive(Debug, Default)]
pub struct Progress {
    /// Input bytes read (as stored: compressed bytes for compressed input).
    pub input_bytes: AtomicU64,
    /// Documents added.
    pub documents: AtomicU64,
    /// Chunks kept (repeats included).
    pub kept: AtomicU64,
}

impl Progress {
    pub fn add_input(&self, n: u64) {
        self.input_bytes.fetch_add(n, Ordering::Relaxed);
    }
}

/// Accumulates `(digest, source)` pairs and sources, then writes a `.dls` file.
///
/// Memory: 24 bytes per kept chunk (duplicates included until `write` sorts and dedups) and
/// 16 per passage anchor of each source, plus the source strings; 75 M chunks ≈ 1.8 GB. With
/// [`Self::memory`] both tables stay within a budget: past it, sorted runs spill to disk and
/// `write` merges them ([`crate::spill`]), giving the same file.
#[derive(Debug)]
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
    /// Chunks kept, repeats included (the entries vector is emptied at each spill).
    kept: u64,
    /// The `--memory` budget in bytes (`None`: never spill); [`Self::limits`] splits it.
    memory: Option<u64>,
    tmp_dir: PathBuf,
    runs: Option<Runs<Entry>>,
    passage_runs: Option<Runs<(u64, SourceId)>>,
    progress: Option<Arc<Progress>>,
    /// Passage anchors kept (issue 36): `None` builds an exact-only label set.
    passage_params: Option<PassageParams>,
    /// Anchors in more documents than this are stop passages.
    passage_max_documents: u32,
    /// `(table key, source)` pairs (`crate::passages::table_key`), each document's distinct.
    passages: Vec<(PassageHash, SourceId)>,
    anchors_seen: u64,
    /// Stop passages found by `write` (kept for a second `write`).
    stop_passages: u64,
    /// Threads sorting the tables (`write`, spills): [`crate::parallel_sort`].
    threads: usize,
}

/// Bytes of memory per chunk-table entry while building: the entry itself (24 bytes).
pub const ENTRY_MEMORY: u64 = 24;
/// Bytes of memory per passage pair while building: `(u64 key, u32 source)`, padded (16).
pub const PASSAGE_MEMORY: u64 = 16;

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
            kept: 0,
            memory: None,
            tmp_dir: std::env::temp_dir(),
            runs: None,
            passage_runs: None,
            progress: None,
            passage_params: (kind == Kind::Chunks).then(PassageParams::default),
            passage_max_documents: DEFAULT_MAX_DOCUMENTS,
            passages: Vec::new(),
            anchors_seen: 0,
            stop_passages: 0,
            threads: 1,
        }
    }

    /// Sort the tables (at `write`, and each spilled run) on `n` threads; the file is the
    /// same whatever `n`. [`crate::inputs::read_input`] raises it to its input's threads.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// As [`Self::threads`], never lowering it.
    pub fn use_threads(&mut self, n: usize) {
        self.threads = self.threads.max(n);
    }

    /// Keep passage anchors with these parameters (`None`: exact chunks only, as label sets
    /// built before issue 36). Kind `files` keeps none.
    pub fn passages(mut self, params: Option<PassageParams>) -> Self {
        self.passage_params = params.filter(|p| p.is_valid() && self.kind == Kind::Chunks);
        self
    }

    /// Anchors found in more than `n` documents are dropped as stop passages.
    pub fn passage_max_documents(mut self, n: u32) -> Self {
        self.passage_max_documents = n.max(1);
        self
    }

    /// Keep the chunk table and the passage pairs within `bytes` of memory: past it, sorted
    /// runs are spilled to private directories under `tmp_dir`, removed when the builder is
    /// dropped. When passages are kept the budget is split in half, one half for chunk
    /// entries ([`ENTRY_MEMORY`] each), the other for passage pairs ([`PASSAGE_MEMORY`]
    /// each); otherwise the chunk entries have it all. At least 256 of each are held.
    pub fn memory(mut self, bytes: u64, tmp_dir: &Path) -> Self {
        self.memory = Some(bytes);
        self.tmp_dir = tmp_dir.to_path_buf();
        self
    }

    /// Chunk entries and passage pairs held in memory before a sorted run of them is
    /// spilled (`None`: never), as [`Self::memory`] splits its budget.
    fn limits(&self) -> (Option<usize>, Option<usize>) {
        let Some(bytes) = self.memory else { return (None, None) };
        if self.passage_params.is_none() {
            return (Some((bytes / ENTRY_MEMORY).max(256) as usize), None);
        }
        let half = bytes / 2;
        (Some((half / ENTRY_MEMORY).max(256) as usize), Some((half / PASSAGE_MEMORY).max(256) as usize))
    }

    /// Report documents and kept chunks to `progress` as they are added.
    pub fn progress(mut self, progress: Arc<Progress>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Where this build's progress goes (a pool reading files adds their bytes).
    pub(crate) fn progress_handle(&self) -> Option<Arc<Progress>> {
        self.progress.clone()
    }

    /// The per-document work, for a pool to run ([`crate::parallel`]).
    pub fn digester(&self) -> Digester {
        Digester {
            kind: self.kind,
            norm: self.norm,
            min_chars: self.min_chars,
            clean_opts: self.clean_opts.clone(),
            passages: self.passage_params,
        }
    }

    /// Sorted runs spilled so far, of both tables.
    pub fn spilled_runs(&self) -> usize {
        self.runs.as_ref().map_or(0, Runs::len) + self.spilled_passage_runs()
    }

    /// Sorted runs of passage pairs spilled so far.
    pub fn spilled_passage_runs(&self) -> usize {
        self.passage_runs.as_ref().map_or(0, Runs::len)
    }

    /// Add what [`Digester::digest`] computed for one document: a new source and its digests.
    pub fn add_digested(&mut self, d: Digested) -> Result<()> {
        let id = self.add_source(&d.title, &d.url);
        self.counts.documents += d.documents;
        self.counts.chunks_seen += d.chunks_seen;
        self.counts.chunks_too_short += d.chunks_too_short;
        if let Some(p) = &self.progress {
            p.documents.fetch_add(d.documents, Ordering::Relaxed);
            p.kept.fetch_add(d.digests.len() as u64, Ordering::Relaxed);
        }
        for digest in d.digests {
            self.push(digest, id)?;
        }
        self.add_passages(id, &d.passages)
    }

    fn add_passages(&mut self, source: SourceId, anchors: &[PassageHash]) -> Result<()> {
        if self.passage_params.is_some() {
            self.anchors_seen += anchors.len() as u64;
            self.push_passages(anchors.iter().map(|&h| (table_key(h), source)))?;
        }
        Ok(())
    }

    /// Add passage anchors of `source` as they are (blind discovery counts anchors over a
    /// corpus and labels the frequent ones without their text).
    pub fn add_passage_anchors(&mut self, source: SourceId, anchors: &[PassageHash]) -> Result<()> {
        self.add_passages(source, anchors)
    }

    /// Keep `(table key, source)` pairs, spilling a sorted run past the budget.
    fn push_passages(&mut self, pairs: impl Iterator<Item = (u64, SourceId)>) -> Result<()> {
        let Some(max) = self.limits().1 else {
            self.passages.extend(pairs);
            return Ok(());
        };
        for p in pairs {
            self.passages.push(p);
            if self.passages.len() >= max {
                self.spill_passages()?;
            }
        }
        Ok(())
    }

    /// Sort and deduplicate the pairs in memory and write them as a run.
    fn spill_passages(&mut self) -> Result<()> {
        if self.passage_runs.is_none() {
            self.passage_runs = Some(Runs::new(&self.tmp_dir, "passages")?);
        }
        if let Some(runs) = self.passage_runs.as_mut() {
            crate::parallel_sort::sort_dedup(&mut self.passages, self.threads, passage_bucket, |a, b| a == b);
            runs.spill_sorted(&mut self.passages)?;
        }
        Ok(())
    }

    /// Add another label set's sources (after this builder's) and entries, and its counts:
    /// what a build over its inputs after this builder's would have given
    /// (`ditto labelset merge`). Kind, normalization and min_chars must agree.
    pub fn merge_from(&mut self, ls: &LabelSet) -> Result<()> {
        let h = ls.header();
        if ls.kind() != self.kind {
            return Err(Error::Input {
                path: ls.path().into(),
                reason: format!("a label set of {}, this merge is of {}", ls.kind(), self.kind),
            });
        }
        if ls.normalization() != self.norm || h.min_chars != self.min_chars {
            return Err(Error::Input {
                path: ls.path().into(),
                reason: format!(
                    "normalization {:?} and min_chars {}, this merge has {:?} and {}",
                    h.normalization,
                    h.min_chars,
                    self.norm.to_string(),
                    self.min_chars
                ),
            });
        }
        let base = self.sources.len() as u64;
        if base + ls.source_count() as u64 > u32::MAX as u64 {
            return Err(Error::TooLarge(format!("{} sources", base + ls.source_count() as u64)));
        }
        for id in 0..ls.source_count() {
            let src = ls.source(id as SourceId).ok_or_else(|| Error::Corrupt {
                path: ls.path().into(),
                reason: format!("source {id} is unreadable"),
            })?;
            self.sources.push((src.title.to_string(), src.url.to_string()));
        }
        let c = &h.counts;
        self.counts.documents += c.documents;
        self.counts.chunks_seen += c.chunks_seen;
        self.counts.chunks_too_short += c.chunks_too_short;
        // Its kept chunks, repeats included, as its own build counted them.
        self.kept += c.duplicate_chunks;
        for (d, s) in ls.iter() {
            self.push(d, (base + s as u64) as SourceId)?;
        }
        // Its passages (stop passages already dropped there: an anchor common in both parts
        // but under the limit in each stays; `FORMAT.md`, "Passages").
        match (ls.passages(), ls.passage_header()) {
            (Some(view), Some(ph)) if self.passage_params == Some(ph.params()) && ph.word_hash_current() => {
                self.anchors_seen += ph.anchors_seen;
                self.push_passages(view.iter().map(|(h, s)| (h, (base + s as u64) as SourceId)))?;
            }
            _ => self.passage_params = None,
        }
        Ok(())
    }

    fn push(&mut self, digest: Sha1Digest, source: SourceId) -> Result<()> {
        self.entries.push((digest, source));
        self.kept += 1;
        if self.limits().0.is_some_and(|m| self.entries.len() >= m) {
            if self.runs.is_none() {
                self.runs = Some(Runs::new(&self.tmp_dir, "chunks")?);
            }
            if let Some(runs) = self.runs.as_mut() {
                runs.spill(&mut self.entries, self.threads)?;
            }
        }
        Ok(())
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
        self.kept as usize
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
        match self.digester().block(raw_text) {
            Some(d) => {
                self.push(d, source)?;
                Ok(true)
            }
            None => {
                self.counts.chunks_too_short += 1;
                Ok(false)
            }
        }
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
        self.push(digest, source)
    }

    /// `L_f`: the SHA-1 of the whole body as received (§3.1 step 1). Counts one document.
    pub fn add_file(&mut self, source: SourceId, body: &[u8]) -> Result<()> {
        self.check(source, Kind::Files, "files")?;
        self.counts.documents += 1;
        self.counts.chunks_seen += 1;
        self.push(sha1(body), source)
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
        if let Some(params) = self.passage_params {
            let anchors = document_anchors(paragraphs.blocks(), params);
            self.add_passages(source, &anchors)?;
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
    ///
    /// After spills, the in-memory rest is spilled too and the runs are merged into one file
    /// the entries are streamed from; the builder then holds no entries in memory.
    pub fn write(&mut self, path: impl AsRef<Path>) -> Result<Header> {
        let kept = self.kept;
        // Unstable sort on (digest, source) puts the lowest source first among equal digests,
        // without the extra n/2 buffer a stable sort would allocate; on the build's threads.
        let merged = match self.runs.as_mut() {
            None => {
                crate::parallel_sort::sort_dedup(
                    &mut self.entries,
                    self.threads,
                    |e| e.0[0],
                    |a, b| a.0 == b.0,
                );
                self.entries.shrink_to_fit();
                None
            }
            Some(runs) => {
                if !self.entries.is_empty() {
                    runs.spill(&mut self.entries, self.threads)?;
                }
                self.entries = Vec::new();
                Some(runs.merge_first()?)
            }
        };
        self.counts.entries = match &merged {
            None => self.entries.len() as u64,
            Some((_, n)) => *n,
        };
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
            passages: None,
        };
        let mut header = header;
        let passages = self.passage_sections(&mut header)?;
        write_file(
            path.as_ref(),
            WriteInput {
                header,
                entries: match &merged {
                    None => Entries::Slice(&self.entries),
                    Some((path, n)) => Entries::File { path, n: *n },
                },
                sources: &self.sources,
                bits_per_key: self.bits_per_key,
                k: filter::K,
                passages,
            },
        )
    }

    /// The passage table's sections (and `header.passages`), when passages are kept: built
    /// in memory from the pairs, or, after spills, merged from the runs into a file the
    /// writer streams (the same bytes). The builder stays usable: its pairs (or its one run)
    /// become the table's.
    fn passage_sections(&mut self, header: &mut Header) -> Result<Option<PassageSections>> {
        let Some(params) = self.passage_params else { return Ok(None) };
        let sections = if self.passage_runs.is_some() {
            if !self.passages.is_empty() {
                self.spill_passages()?;
            }
            self.passages = Vec::new();
            let Some(runs) = self.passage_runs.as_mut() else { return Ok(None) };
            let (path, n, stop) = merge_runs(runs, self.passage_max_documents)?;
            self.stop_passages += stop;
            PassageSections::of_pairs(&path, n)?
        } else {
            // Sorted here on the build's threads: `build_table`'s own sort then finds them in order.
            crate::parallel_sort::sort_unstable(&mut self.passages, self.threads, passage_bucket);
            let (table, stop) = build_table(std::mem::take(&mut self.passages), self.passage_max_documents);
            self.stop_passages += stop;
            let sections = PassageSections::of(&table);
            self.passages = table;
            sections
        };
        header.passages = Some(PassageHeader {
            word_hash: detector::passages::WORD_HASH_VERSION,
            words: params.words,
            modulus: params.modulus,
            max_documents: self.passage_max_documents,
            entries: sections.entries(),
            stop_passages: self.stop_passages,
            anchors_seen: self.anchors_seen,
            filter_blocks: 0,
            filter_k: 0,
            index_bits: 0,
            filter: Section::default(),
            index: Section::default(),
            table: Section::default(),
            checksums: PassageChecksums::default(),
        });
        Ok(Some(sections))
    }
}

/// The parallel sort's bucket of a passage pair: its key's top byte.
fn passage_bucket(p: &(u64, SourceId)) -> u8 {
    (p.0 >> (KEY_BITS - 8)) as u8
}

impl DocumentSink for LabelSetBuilder {
    fn document(&mut self, title: &str, url: &str, body: &[u8], content_type: Option<&str>) -> Result<()> {
        let d = self.digester().digest(DocRef::Document { title, url, body, content_type });
        self.add_digested(d)
    }

    fn paragraphs(&mut self, title: &str, url: &str, body: &[u8], paragraphs: &[String]) -> Result<()> {
        let d = self.digester().digest(DocRef::Paragraphs { title, url, body, paragraphs });
        self.add_digested(d)
    }

    fn wikitext(&mut self, title: &str, url: &str, text: &str) -> Result<()> {
        let d = self.digester().digest(DocRef::Wikitext { title, url, text });
        self.add_digested(d)
    }

    fn file(&mut self, title: &str, url: &str, path: &Path, content_type: Option<&str>) -> Result<()> {
        let body = std::fs::read(path).map_err(crate::io_err(path))?;
        if let Some(p) = &self.progress {
            p.add_input(body.len() as u64);
        }
        self.document(title, url, &body, content_type)
    }
}
