//! The parallel build: every core decompresses and digests, the result is the sequential
//! build's.
//!
//! - [`open_parallel`]: a multistream bzip2 file (Wikimedia's `pages-articles-multistream`,
//!   or any made by `pbzip2`) or a multi-member gzip file is decompressed stream by stream on
//!   a pool. Streams are found by their magic bytes (`BZh1`–`BZh9` followed by a block or
//!   end-of-stream magic; `1f 8b 08`); a candidate is taken only where the previous stream
//!   really ends (each worker reports how many bytes its stream took), so a magic-looking
//!   byte run inside compressed data is decoded, found off the chain and dropped. The streams'
//!   text comes out in file order, so parsing sees exactly the bytes a sequential decoder
//!   gives.
//! - [`with_pool`]: readers hand documents to a [`ParallelSink`]; a pool runs
//!   [`Digester::digest`] (HTML cleaning or wikitext reduction, normalization, length filter,
//!   SHA-1) on batches of them, and one collector adds the results to the builder in reading
//!   order. Source ids, entries and counts are therefore those of the sequential build.
//!   A folder's pages are handed over as paths ([`DocumentSink::file`]): the workers read
//!   them, so the reading thread only walks the folder.
//! - [`read_mediawiki_streams`]: a multistream MediaWiki XML dump's pages are parsed and
//!   digested by the worker that decoded their stream (Wikimedia's streams hold whole
//!   pages); the reading thread only puts the streams in order. From the first stream that
//!   does not end between pages, the rest is parsed in order as the sequential reader does.
//!
//! Memory stays bounded: at most `4 × threads` streams or batches are in flight.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Receiver, Sender};

use crate::builder::{Digested, Digester, DocRef, DocumentSink, LabelSetBuilder, Progress};
use crate::parallel_threads::{named, named_scoped};
use crate::readers::{self, ReadStats, XmlEnd, XmlStart};
use crate::sniff::Compression;
use crate::{io_err, Error, Result};

/// Streams further apart than this (compressed) are decoded sequentially instead: a worker
/// holds a whole stream's text in memory.
pub const MAX_PARALLEL_SPAN: usize = 64 << 20;
/// A decoded stream larger than this is an error (a damaged or hostile file).
const MAX_STREAM_TEXT: u64 = 2 << 30;

/// Offsets where a bzip2 stream may start: `BZh` + level digit + block magic
/// `0x314159265359` or end-of-stream magic `0x177245385090`.
pub fn bzip2_candidates(data: &[u8]) -> Vec<usize> {
    const BLOCK: [u8; 6] = [0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
    const END: [u8; 6] = [0x17, 0x72, 0x45, 0x38, 0x50, 0x90];
    memchr::memmem::find_iter(data, b"BZh")
        .filter(|&i| {
            data.get(i + 3).is_some_and(|d| (b'1'..=b'9').contains(d))
                && data.get(i + 4..i + 10).is_some_and(|m| m == BLOCK || m == END)
        })
        .collect()
}

/// Offsets where a gzip member may start: `1f 8b 08` and flags with the reserved bits clear.
pub fn gzip_candidates(data: &[u8]) -> Vec<usize> {
    memchr::memmem::find_iter(data, &[0x1f, 0x8b, 0x08])
        .filter(|&i| data.get(i + 3).is_some_and(|f| f & 0xe0 == 0))
        .collect()
}

/// One stream decoded: its length in the file, its text, and what the pool's stream work
/// (a multistream XML dump's pages, digested) made of it.
pub(crate) struct Decoded {
    consumed: usize,
    pub text: Vec<u8>,
    pub pages: Option<StreamPages>,
}

/// A stream's pages, parsed and digested by the worker that decoded it
/// ([`read_mediawiki_streams`]).
pub(crate) struct StreamPages {
    pub digested: Vec<Digested>,
    pub end: XmlEnd,
}

/// What a decoding worker does with each stream's text beside handing it over: `None` when
/// it made nothing of it.
pub(crate) type StreamWork = Arc<dyn Fn(&[u8]) -> Option<StreamPages> + Send + Sync>;

/// Decode the one stream starting at byte `at` of `file` (read, not mapped: the input's
/// pages do not count in the process's memory), returning its text and its length.
fn decode_one(file: &mut File, at: u64, compression: Compression) -> std::io::Result<Decoded> {
    file.seek(SeekFrom::Start(at))?;
    let mut text = Vec::new();
    let mut r = BufReader::with_capacity(1 << 18, &mut *file);
    match compression {
        Compression::Bzip2 => {
            let mut d = bzip2::bufread::BzDecoder::new(&mut r);
            (&mut d).take(MAX_STREAM_TEXT).read_to_end(&mut text)?;
        }
        Compression::Gzip => {
            let mut d = flate2::bufread::GzDecoder::new(&mut r);
            (&mut d).take(MAX_STREAM_TEXT).read_to_end(&mut text)?;
        }
        Compression::None => {}
    }
    if text.len() as u64 >= MAX_STREAM_TEXT {
        return Err(std::io::Error::other("a stream decompresses to more than 2 GiB"));
    }
    let buffered = r.buffer().len() as u64;
    let end = r.get_mut().stream_position()? - buffered;
    Ok(Decoded { consumed: (end - at) as usize, text, pages: None })
}

/// Candidate stream starts of a whole file, read in blocks (with an overlap for magics
/// that straddle two).
fn scan_candidates(path: &Path, compression: Compression) -> std::io::Result<Vec<usize>> {
    const BLOCK: usize = 8 << 20;
    const OVERLAP: usize = 16;
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; BLOCK + OVERLAP];
    let (mut base, mut have) = (0usize, 0usize);
    let mut out = Vec::new();
    loop {
        let n = f.read(&mut buf[have..])?;
        let len = have + n;
        let last = n == 0;
        // Magics starting in buf[..limit] are complete in buf[..len].
        let limit = if last { len } else { len.saturating_sub(OVERLAP) };
        let found = match compression {
            Compression::Bzip2 => bzip2_candidates(&buf[..len]),
            Compression::Gzip => gzip_candidates(&buf[..len]),
            Compression::None => Vec::new(),
        };
        out.extend(found.into_iter().filter(|&i| i < limit).map(|i| base + i));
        if last {
            return Ok(out);
        }
        buf.copy_within(limit..len, 0);
        base += limit;
        have = len - limit;
        if have + BLOCK / 2 > buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
    }
}

/// A reader over a file's decompressed text, its streams decoded on `threads` workers.
pub struct ParallelDecoder {
    path: PathBuf,
    len: usize,
    candidates: Vec<usize>,
    rx: Receiver<(usize, std::io::Result<Decoded>)>,
    tokens: Sender<()>,
    pending: BTreeMap<usize, std::io::Result<Decoded>>,
    expected: usize,
    buf: Vec<u8>,
    pos: usize,
    progress: Option<Arc<Progress>>,
    workers: Vec<JoinHandle<()>>,
    /// Whether the workers still do the stream work (see [`Self::stop_work`]).
    working: Arc<AtomicBool>,
    /// Streams decoded and used.
    pub streams: u64,
}

/// Open `path` for parallel decompression when it is multistream bzip2 or multi-member gzip
/// (streams at most [`MAX_PARALLEL_SPAN`] apart); `None` when it should be read sequentially.
pub fn open_parallel(
    path: &Path,
    threads: usize,
    progress: Option<Arc<Progress>>,
) -> Result<Option<ParallelDecoder>> {
    open_parallel_with(path, threads, progress, None)
}

/// As [`open_parallel`], each worker running `work` on the streams it decodes.
pub(crate) fn open_parallel_with(
    path: &Path,
    threads: usize,
    progress: Option<Arc<Progress>>,
    work: Option<StreamWork>,
) -> Result<Option<ParallelDecoder>> {
    if threads < 2 {
        return Ok(None);
    }
    let mut file = File::open(path).map_err(io_err(path))?;
    let len = file.metadata().map_err(io_err(path))?.len() as usize;
    let mut head = Vec::new();
    (&mut file).take(8).read_to_end(&mut head).map_err(io_err(path))?;
    let compression = Compression::of(&head);
    if compression == Compression::None {
        return Ok(None);
    }
    let candidates = scan_candidates(path, compression).map_err(io_err(path))?;
    let spans_ok = candidates.windows(2).all(|w| w[1] - w[0] <= MAX_PARALLEL_SPAN)
        && candidates.last().is_some_and(|&l| len - l <= MAX_PARALLEL_SPAN);
    if candidates.len() < 2 || candidates.first() != Some(&0) || !spans_ok {
        return Ok(None);
    }
    let in_flight = 4 * threads;
    let (job_tx, job_rx) = bounded::<usize>(in_flight);
    let (res_tx, rx) = bounded(in_flight);
    let (tokens, token_rx) = bounded::<()>(in_flight);
    for _ in 0..in_flight {
        let _ = tokens.send(());
    }
    let mut workers = Vec::with_capacity(threads + 1);
    let working = Arc::new(AtomicBool::new(work.is_some()));
    for _ in 0..threads {
        let (job_rx, res_tx) = (job_rx.clone(), res_tx.clone());
        let (work, working) = (work.clone(), working.clone());
        let mut file = File::open(path).map_err(io_err(path))?;
        workers.push(named("ls-decode", move || {
            for at in job_rx {
                let mut r = decode_one(&mut file, at as u64, compression);
                if let (Ok(d), Some(work)) = (r.as_mut(), &work) {
                    if working.load(Ordering::Relaxed) {
                        d.pages = work(&d.text);
                    }
                }
                if res_tx.send((at, r)).is_err() {
                    return;
                }
            }
        }));
    }
    let feed = candidates.clone();
    workers.push(named("ls-feed", move || {
        for at in feed {
            if token_rx.recv().is_err() || job_tx.send(at).is_err() {
                return;
            }
        }
    }));
    Ok(Some(ParallelDecoder {
        path: path.into(),
        len,
        candidates,
        rx,
        tokens,
        pending: BTreeMap::new(),
        expected: 0,
        buf: Vec::new(),
        pos: 0,
        progress,
        workers,
        working,
        streams: 0,
    }))
}

impl ParallelDecoder {
    fn err(&self, what: String) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {what}", self.path.display()))
    }

    /// Drop results of candidates the chain has passed (false magics), freeing their slots.
    fn drop_passed(&mut self) {
        while let Some((&at, _)) = self.pending.first_key_value() {
            if at >= self.expected {
                break;
            }
            self.pending.remove(&at);
            let _ = self.tokens.send(());
        }
    }

    /// The workers stop the stream work: what is left is read as text.
    pub(crate) fn stop_work(&self) {
        self.working.store(false, Ordering::Relaxed);
    }

    /// The next stream, in file order; `None` at the end of the file.
    pub(crate) fn next_decoded(&mut self) -> std::io::Result<Option<Decoded>> {
        loop {
            if self.expected >= self.len {
                return Ok(None);
            }
            if self.candidates.binary_search(&self.expected).is_err() {
                return Err(self.err(format!(
                    "byte {} follows a complete stream but does not start one (damaged, or not \
                     compressed data)",
                    self.expected
                )));
            }
            if let Some(r) = self.pending.remove(&self.expected) {
                let _ = self.tokens.send(());
                let d = r.map_err(|e| self.err(format!("stream at byte {}: {e}", self.expected)))?;
                if d.consumed == 0 {
                    return Err(self.err(format!("empty stream at byte {}", self.expected)));
                }
                self.expected += d.consumed;
                if let Some(p) = &self.progress {
                    p.add_input(d.consumed as u64);
                }
                self.drop_passed();
                self.streams += 1;
                return Ok(Some(d));
            }
            match self.rx.recv() {
                Ok((at, r)) => {
                    if at < self.expected {
                        let _ = self.tokens.send(());
                    } else {
                        self.pending.insert(at, r);
                    }
                }
                Err(_) => return Err(self.err("the decoding pool stopped".into())),
            }
        }
    }

    /// Load the next stream's text into `buf`; `false` at the end of the file.
    fn next_stream(&mut self) -> std::io::Result<bool> {
        match self.next_decoded()? {
            Some(d) => {
                self.buf = d.text;
                self.pos = 0;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

impl Read for ParallelDecoder {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let b = self.fill_buf()?;
            let n = b.len().min(out.len());
            out[..n].copy_from_slice(&b[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ParallelDecoder {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.pos >= self.buf.len() {
            if !self.next_stream()? {
                return Ok(&[]);
            }
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }
}

impl Drop for ParallelDecoder {
    fn drop(&mut self) {
        // Closing the channels stops the feeder and the workers.
        let (_, dead_rx) = bounded(0);
        self.rx = dead_rx;
        let (dead_tx, _) = bounded(0);
        self.tokens = dead_tx;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// A document owned, to travel to the pool.
enum OwnedDoc {
    Document {
        title: String,
        url: String,
        body: Vec<u8>,
        content_type: Option<String>,
    },
    Wikitext {
        title: String,
        url: String,
        text: String,
    },
    Paragraphs {
        title: String,
        url: String,
        body: Vec<u8>,
        paragraphs: Vec<String>,
    },
    /// A document in a file, read by the worker.
    File {
        title: String,
        url: String,
        path: PathBuf,
        content_type: Option<String>,
    },
}

impl OwnedDoc {
    /// Digested; a file read first, its bytes added to `progress`.
    fn digest(&self, digester: &Digester, progress: Option<&Progress>) -> Result<Digested> {
        Ok(digester.digest(match self {
            OwnedDoc::Document { title, url, body, content_type } => {
                DocRef::Document { title, url, body, content_type: content_type.as_deref() }
            }
            OwnedDoc::Wikitext { title, url, text } => DocRef::Wikitext { title, url, text },
            OwnedDoc::Paragraphs { title, url, body, paragraphs } => {
                DocRef::Paragraphs { title, url, body, paragraphs }
            }
            OwnedDoc::File { title, url, path, content_type } => {
                let body = std::fs::read(path).map_err(io_err(path))?;
                if let Some(p) = progress {
                    p.add_input(body.len() as u64);
                }
                return Ok(digester.digest(DocRef::Document {
                    title,
                    url,
                    body: &body,
                    content_type: content_type.as_deref(),
                }));
            }
        }))
    }
}

/// Batches of this many bytes (or [`BATCH_DOCS`] documents, or [`BATCH_FILES`] files) go to
/// the pool.
const BATCH_BYTES: usize = 1 << 20;
const BATCH_DOCS: usize = 512;
const BATCH_FILES: usize = 64;

/// What the collector receives: a batch's documents digested, in reading order (a file
/// that could not be read is its error).
type Results = Vec<Result<Digested>>;

/// The sink readers feed in a parallel build (see [`with_pool`]).
pub struct ParallelSink {
    tx: Option<Sender<(u64, Vec<OwnedDoc>)>>,
    /// Batches digested already ([`Self::digested`]) go straight to the collector.
    done_tx: Option<Sender<(u64, Results)>>,
    tokens: Receiver<()>,
    batch: Vec<OwnedDoc>,
    bytes: usize,
    seq: u64,
}

impl ParallelSink {
    fn push(&mut self, doc: OwnedDoc, bytes: usize) -> Result<()> {
        self.batch.push(doc);
        self.bytes += bytes;
        if self.bytes >= BATCH_BYTES || self.batch.len() >= BATCH_DOCS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        self.bytes = 0;
        self.tokens.recv().map_err(|_| stopped())?;
        let tx = self.tx.as_ref().ok_or_else(stopped)?;
        tx.send((self.seq, batch)).map_err(|_| stopped())?;
        self.seq += 1;
        Ok(())
    }

    /// Documents digested elsewhere (by the worker that decoded their stream), to be added
    /// after those handed over before them.
    pub(crate) fn digested(&mut self, docs: Vec<Digested>) -> Result<()> {
        self.flush()?;
        self.tokens.recv().map_err(|_| stopped())?;
        let tx = self.done_tx.as_ref().ok_or_else(stopped)?;
        tx.send((self.seq, docs.into_iter().map(Ok).collect())).map_err(|_| stopped())?;
        self.seq += 1;
        Ok(())
    }
}

fn stopped() -> Error {
    Error::Pool("the build pool stopped".into())
}

impl DocumentSink for ParallelSink {
    fn document(&mut self, title: &str, url: &str, body: &[u8], content_type: Option<&str>) -> Result<()> {
        let doc = OwnedDoc::Document {
            title: title.into(),
            url: url.into(),
            body: body.to_vec(),
            content_type: content_type.map(str::to_string),
        };
        self.push(doc, body.len())
    }

    fn paragraphs(&mut self, title: &str, url: &str, body: &[u8], paragraphs: &[String]) -> Result<()> {
        let bytes = paragraphs.iter().map(String::len).sum::<usize>() + body.len();
        let doc = OwnedDoc::Paragraphs {
            title: title.into(),
            url: url.into(),
            body: body.to_vec(),
            paragraphs: paragraphs.to_vec(),
        };
        self.push(doc, bytes)
    }

    fn wikitext(&mut self, title: &str, url: &str, text: &str) -> Result<()> {
        self.push(OwnedDoc::Wikitext { title: title.into(), url: url.into(), text: text.into() }, text.len())
    }

    fn file(&mut self, title: &str, url: &str, path: &Path, content_type: Option<&str>) -> Result<()> {
        let doc = OwnedDoc::File {
            title: title.into(),
            url: url.into(),
            path: path.into(),
            content_type: content_type.map(str::to_string),
        };
        self.push(doc, BATCH_BYTES / BATCH_FILES)
    }
}

/// Run `read` (a reader feeding the sink it is given) with a pool of `threads` workers
/// digesting its documents, the results added to `b` in reading order. `threads` ≤ 1 feeds
/// `b` directly (the sequential build).
pub fn with_pool<R>(
    b: &mut LabelSetBuilder,
    threads: usize,
    read: impl FnOnce(&mut dyn DocumentSink) -> Result<R>,
) -> Result<R> {
    if threads <= 1 {
        return read(b);
    }
    run_pool(b, threads, |sink| read(sink))
}

/// [`with_pool`] for `threads` ≥ 2, `read` given the pool's own sink.
pub(crate) fn run_pool<R>(
    b: &mut LabelSetBuilder,
    threads: usize,
    read: impl FnOnce(&mut ParallelSink) -> Result<R>,
) -> Result<R> {
    let (digester, progress) = (b.digester(), b.progress_handle());
    let in_flight = 4 * threads;
    let (job_tx, job_rx) = bounded::<(u64, Vec<OwnedDoc>)>(in_flight);
    let (res_tx, res_rx) = bounded::<(u64, Results)>(in_flight);
    let (token_tx, token_rx) = bounded::<()>(in_flight);
    for _ in 0..in_flight {
        let _ = token_tx.send(());
    }
    std::thread::scope(|s| {
        for _ in 0..threads {
            let (job_rx, res_tx, digester, progress) =
                (job_rx.clone(), res_tx.clone(), &digester, progress.as_deref());
            named_scoped(s, "ls-digest", move || {
                for (seq, docs) in job_rx {
                    let out = docs.iter().map(|d| d.digest(digester, progress)).collect();
                    if res_tx.send((seq, out)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(job_rx);
        let collector = named_scoped(s, "ls-collect", move || -> Result<()> {
            let mut pending = BTreeMap::new();
            let mut next = 0u64;
            for (seq, out) in res_rx {
                pending.insert(seq, out);
                while let Some(out) = pending.remove(&next) {
                    for d in out {
                        b.add_digested(d?)?;
                    }
                    next += 1;
                    let _ = token_tx.send(());
                }
            }
            Ok(())
        });
        let mut sink = ParallelSink {
            tx: Some(job_tx),
            done_tx: Some(res_tx),
            tokens: token_rx,
            batch: Vec::new(),
            bytes: 0,
            seq: 0,
        };
        let result = read(&mut sink).and_then(|r| sink.flush().map(|_| r));
        drop(sink);
        let collected =
            collector.join().unwrap_or_else(|_| Err(Error::Pool("a build worker panicked".into())));
        // The collector's error (e.g. a spill that failed) is the cause of a stopped pool.
        collected.and(result)
    })
}

/// A document sink that digests on the spot, keeping the results (a decoding worker's).
struct Collect<'a> {
    digester: &'a Digester,
    out: Vec<Digested>,
}

impl DocumentSink for Collect<'_> {
    fn document(&mut self, title: &str, url: &str, body: &[u8], content_type: Option<&str>) -> Result<()> {
        self.out.push(self.digester.digest(DocRef::Document { title, url, body, content_type }));
        Ok(())
    }
    fn paragraphs(&mut self, title: &str, url: &str, body: &[u8], paragraphs: &[String]) -> Result<()> {
        self.out.push(self.digester.digest(DocRef::Paragraphs { title, url, body, paragraphs }));
        Ok(())
    }
    fn wikitext(&mut self, title: &str, url: &str, text: &str) -> Result<()> {
        self.out.push(self.digester.digest(DocRef::Wikitext { title, url, text }));
        Ok(())
    }
}

/// A multistream MediaWiki XML dump read on `threads` workers: each worker decodes a stream,
/// parses its pages and digests them; here they are only put in order. A stream that does
/// not hold whole pages (it ends inside one: a dump not cut between pages, as `pbzip2` cuts)
/// and every stream after it are parsed here instead, in order, as the sequential reader
/// does, their pages digested on the pool; so the result is the sequential build's for any
/// dump. `None` when the file is not multistream (to be read sequentially); else the read's
/// counts, the streams decoded in parallel and those of them whose pages their worker read.
pub fn read_mediawiki_streams(
    b: &mut LabelSetBuilder,
    path: &Path,
    threads: usize,
    url_prefix: &str,
    progress: Option<Arc<Progress>>,
) -> Result<Option<(ReadStats, u64, u64)>> {
    let digester = b.digester();
    let (p, prefix) = (path.to_path_buf(), url_prefix.to_string());
    let work: StreamWork = Arc::new(move |text: &[u8]| {
        let mut sink = Collect { digester: &digester, out: Vec::new() };
        let start = XmlStart { alone: true, ..XmlStart::default() };
        let end = readers::parse_mediawiki_xml(text, &p, &prefix, &mut sink, start).ok()?;
        Some(StreamPages { digested: sink.out, end })
    });
    let Some(mut dec) = open_parallel_with(path, threads, progress, Some(work))? else {
        return Ok(None);
    };
    let mut parsed = 0u64;
    let stats = run_pool(b, threads, |sink| {
        let mut stats = ReadStats::default();
        // Elements open and text read before the next stream.
        let (mut depth, mut base) = (0i64, 0u64);
        // The decoder's errors name the file already.
        let decode_err = |e: std::io::Error| Error::Input {
            path: path.into(),
            reason: e.to_string().trim_start_matches(&format!("{}: ", path.display())).to_string(),
        };
        while let Some(d) = dec.next_decoded().map_err(decode_err)? {
            match d.pages {
                // Its pages are the sequential reader's when the stream before ended between
                // pages (so did every stream so far) and its end tags have their starts.
                Some(pages) if pages.end.between_pages && depth + pages.end.min_depth >= 0 => {
                    sink.digested(pages.digested)?;
                    stats.documents += pages.end.stats.documents;
                    stats.skipped += pages.end.stats.skipped;
                    depth += pages.end.end_depth;
                    base += d.text.len() as u64;
                    parsed += 1;
                }
                _ => {
                    dec.stop_work();
                    let start = XmlStart { depth: depth.max(0) as usize, base, alone: false };
                    let rest = std::io::Cursor::new(d.text).chain(&mut dec);
                    let end = readers::parse_mediawiki_xml(rest, path, url_prefix, sink, start)?;
                    stats.documents += end.stats.documents;
                    stats.skipped += end.stats.skipped;
                    break;
                }
            }
        }
        Ok(stats)
    })?;
    Ok(Some((stats, dec.streams, parsed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block-wise scan finds what a scan of the whole file finds, magics straddling the
    /// 8 MiB blocks included.
    #[test]
    fn block_scan_finds_magics_across_blocks() {
        const B: usize = 8 << 20;
        let mut data = vec![0u8; 3 * B + 100];
        let magic = [b'B', b'Z', b'h', b'9', 0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
        for at in [0, B - 40, B - 25, B - 12, B - 2, B + 9, 2 * B - 7, 3 * B + 90] {
            data[at..at + 10].copy_from_slice(&magic);
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, &data).unwrap();
        let whole = bzip2_candidates(&data);
        assert_eq!(whole.len(), 8);
        assert_eq!(scan_candidates(&p, Compression::Bzip2).unwrap(), whole);
    }
}
