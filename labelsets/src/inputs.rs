//! One build input, whatever it is: told by its content ([`crate::sniff`]), read by the
//! matching reader, sequentially or on a pool ([`crate::parallel`]), with a report of what it
//! was read as and what it gave, and, when it gave no chunk, why.

use std::io::{BufRead, Read};
use std::path::Path;
use std::sync::Arc;

use crate::builder::{DocumentSink, LabelSetBuilder, Progress};
use crate::readers::{self, ReadStats, ENWIKI_URL_PREFIX};
use crate::sniff::{self, Content, Sniffed};
use crate::{io_err, parallel, Error, Result};

/// A reader for inputs this crate does not read itself (WARC files: the root crate passes
/// the crawler's reader).
pub type ExternalReader<'a> = &'a dyn Fn(&Path, &mut dyn DocumentSink) -> Result<ReadStats>;

/// How inputs are read.
#[derive(Clone, Default)]
pub struct InputOptions {
    /// Worker threads (1: the sequential build).
    pub threads: usize,
    /// URL prefix: of directory pages and single documents (+ file stem), and of dump
    /// articles (+ title; default `https://en.wikipedia.org/wiki/`).
    pub url_prefix: Option<String>,
    /// Input bytes read go here (a directory's page files: to the builder's progress, by
    /// the workers that read them).
    pub progress: Option<Arc<Progress>>,
}

/// What one input was read as and gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputReport {
    /// E.g. `a MediaWiki XML dump (bzip2)`.
    pub read_as: String,
    /// Documents handed to the builder.
    pub documents: u64,
    /// Records skipped (other namespaces, redirects, unparsable lines, unknown tar members).
    pub skipped: u64,
    /// Text blocks offered, and those too short.
    pub chunks_seen: u64,
    pub chunks_too_short: u64,
    /// Chunks kept (repeats included).
    pub kept: u64,
    /// Compressed streams decoded in parallel (0: read sequentially).
    pub parallel_streams: u64,
    /// Of those, the streams of a MediaWiki XML dump whose pages the worker that decoded
    /// them parsed and digested (each holds whole pages; the rest were parsed in order).
    pub streams_parsed_on_pool: u64,
    /// Why the records were skipped, for the message when nothing was kept.
    pub skip_reason: &'static str,
}

impl InputReport {
    /// When nothing was kept: why, in words.
    pub fn why_nothing_kept(&self, min_chars: u32) -> Option<String> {
        if self.kept > 0 {
            return None;
        }
        Some(if self.documents == 0 {
            format!(
                "read as {}: no documents ({} records skipped{}{})",
                self.read_as,
                self.skipped,
                if self.skip_reason.is_empty() { "" } else { ": " },
                self.skip_reason
            )
        } else if self.chunks_seen == 0 {
            format!("read as {}: {} documents, none had any text block", self.read_as, self.documents)
        } else {
            format!(
                "read as {}: {} documents, all {} of their text blocks have {} characters or fewer after \
                 normalization (--min-chars)",
                self.read_as, self.documents, self.chunks_seen, min_chars
            )
        })
    }
}

const XML_SKIPS: &str = "pages outside namespace 0, and redirects";
const NDJSON_SKIPS: &str = "lines that are not JSON objects with name and article_body.html in namespace 0";

/// Read one input (a file of any kind, or a directory) into `b`.
pub fn read_input(
    b: &mut LabelSetBuilder,
    path: &Path,
    opts: &InputOptions,
    warc: Option<ExternalReader<'_>>,
) -> Result<InputReport> {
    let before = (b.counts().documents, b.counts().chunks_seen, b.counts().chunks_too_short, b.kept() as u64);
    let threads = opts.threads.max(1);
    b.use_threads(threads);
    let mut report = InputReport::default();
    let stats = if path.is_dir() {
        report.read_as = "a directory of pages (.html, .htm, .txt)".into();
        let prefix = opts.url_prefix.as_deref();
        parallel::with_pool(b, threads, |sink| readers::read_directory(path, prefix, sink))?
    } else {
        let sniffed = readers::sniff_file(path)?;
        report.read_as = sniffed.to_string();
        read_file(b, path, sniffed, opts, warc, &mut report)?
    };
    let c = b.counts();
    report.documents = stats.documents;
    report.skipped = stats.skipped;
    report.chunks_seen = c.chunks_seen - before.1;
    report.chunks_too_short = c.chunks_too_short - before.2;
    report.kept = b.kept() as u64 - before.3;
    debug_assert_eq!(c.documents - before.0, stats.documents);
    Ok(report)
}

/// Sum of the sizes of the files under `dir` (for progress).
pub fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

/// The decompressed content of `path`: decoded on the pool when it is multistream bzip2 or
/// multi-member gzip, else streamed.
fn open_content(
    path: &Path,
    opts: &InputOptions,
    report: &mut InputReport,
) -> Result<(Box<dyn BufRead>, Option<ParallelStreams>)> {
    if let Some(d) = parallel::open_parallel(path, opts.threads, opts.progress.clone())? {
        let shared = ParallelStreams(Arc::new(std::sync::Mutex::new(0)));
        report.parallel_streams = 0;
        return Ok((Box::new(CountStreams { inner: d, out: shared.clone() }), Some(shared)));
    }
    Ok((readers::open_counted(path, opts.progress.clone())?, None))
}

/// Streams a parallel decoder used, read back after the reader is gone.
#[derive(Clone)]
struct ParallelStreams(Arc<std::sync::Mutex<u64>>);

struct CountStreams {
    inner: parallel::ParallelDecoder,
    out: ParallelStreams,
}

impl Read for CountStreams {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.note();
        Ok(n)
    }
}

impl BufRead for CountStreams {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.note();
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.inner.consume(n)
    }
}

impl CountStreams {
    fn note(&self) {
        if let Ok(mut s) = self.out.0.lock() {
            *s = self.inner.streams;
        }
    }
}

fn read_file(
    b: &mut LabelSetBuilder,
    path: &Path,
    sniffed: Sniffed,
    opts: &InputOptions,
    warc: Option<ExternalReader<'_>>,
    report: &mut InputReport,
) -> Result<ReadStats> {
    let threads = opts.threads.max(1);
    let dump_prefix = opts.url_prefix.as_deref().unwrap_or(ENWIKI_URL_PREFIX).to_string();
    let stats = match sniffed.content {
        Content::MediaWikiXml => {
            report.skip_reason = XML_SKIPS;
            // Multistream: pages parsed and digested by the workers that decode them.
            if let Some((stats, streams, parsed)) =
                parallel::read_mediawiki_streams(b, path, threads, &dump_prefix, opts.progress.clone())?
            {
                report.parallel_streams = streams;
                report.streams_parsed_on_pool = parsed;
                return Ok(stats);
            }
            // Not multistream (`read_mediawiki_streams` looked): streamed, its pages digested
            // on the pool.
            let r = readers::open_counted(path, opts.progress.clone())?;
            parallel::with_pool(b, threads, |sink| {
                readers::read_mediawiki_xml_from(r, path, &dump_prefix, sink)
            })?
        }
        Content::EnterpriseNdjson | Content::OtherJson => {
            report.skip_reason = NDJSON_SKIPS;
            let (r, streams) = open_content(path, opts, report)?;
            let stats =
                parallel::with_pool(b, threads, |sink| readers::read_enterprise_ndjson_from(r, path, sink))?;
            report.parallel_streams = streams.map_or(0, |s| s.0.lock().map(|n| *n).unwrap_or(0));
            stats
        }
        Content::Tar => {
            report.skip_reason = "tar members that are neither NDJSON, MediaWiki XML, HTML nor text";
            let (r, streams) = open_content(path, opts, report)?;
            let stats = parallel::with_pool(b, threads, |sink| read_tar(r, path, &dump_prefix, sink))?;
            report.parallel_streams = streams.map_or(0, |s| s.0.lock().map(|n| *n).unwrap_or(0));
            stats
        }
        Content::Warc => {
            report.skip_reason = "records that are not 2xx responses, or unreadable";
            match warc {
                Some(read) => parallel::with_pool(b, threads, |sink| read(path, sink))?,
                None => {
                    return Err(Error::Input {
                        path: path.into(),
                        reason: "a WARC file: read by `ditto labelset build`, not by this library".into(),
                    })
                }
            }
        }
        Content::Html | Content::Text | Content::Wikitext => {
            let mut body = Vec::new();
            readers::open_counted(path, opts.progress.clone())?
                .read_to_end(&mut body)
                .map_err(io_err(path))?;
            let stem = document_stem(path);
            let url = match opts.url_prefix.as_deref() {
                Some(p) => format!("{p}{stem}"),
                None => path.display().to_string(),
            };
            one_document(b, sniffed.content, &readers::title_from_stem(&stem), &url, &body)?
        }
        Content::Empty | Content::Binary => {
            return Err(Error::Input {
                path: path.into(),
                reason: format!(
                    "read as {sniffed}: not a MediaWiki XML dump, Wikimedia Enterprise NDJSON, tar \
                     archive, WARC file, HTML or text; nothing to build from"
                ),
            })
        }
    };
    Ok(stats)
}

/// One HTML, text or wikitext document.
fn one_document(
    sink: &mut dyn DocumentSink,
    content: Content,
    title: &str,
    url: &str,
    body: &[u8],
) -> Result<ReadStats> {
    match content {
        Content::Wikitext => sink.wikitext(title, url, &String::from_utf8_lossy(body))?,
        Content::Html => sink.document(title, url, body, Some("text/html"))?,
        _ => sink.document(title, url, body, Some("text/plain"))?,
    }
    Ok(ReadStats { documents: 1, skipped: 0 })
}

/// The file name without its compression and type extensions: the document's title.
fn document_stem(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut stem = name.as_str();
    for ext in [".gz", ".bz2", ".html", ".htm", ".txt", ".wiki"] {
        if stem.len() > ext.len() && stem.to_ascii_lowercase().ends_with(ext) {
            stem = &stem[..stem.len() - ext.len()];
        }
    }
    stem.to_string()
}

/// Every member of a tar stream, each told by its own content (a member may itself be
/// gzip- or bzip2-compressed).
fn read_tar(r: impl Read, path: &Path, dump_prefix: &str, sink: &mut dyn DocumentSink) -> Result<ReadStats> {
    let mut stats = ReadStats::default();
    crate::tar::for_each_member(r, path, |name, member| {
        let member_path = path.join(name);
        let member = readers::decompress(member).map_err(io_err(&member_path))?;
        let (content, mut member) = sniff::sniff_reader(member, &member_path)?;
        let s = match content {
            Content::EnterpriseNdjson | Content::OtherJson => {
                readers::read_enterprise_ndjson_from(member, &member_path, sink)?
            }
            Content::MediaWikiXml => {
                readers::read_mediawiki_xml_from(member, &member_path, dump_prefix, sink)?
            }
            Content::Html | Content::Text | Content::Wikitext => {
                let mut body = Vec::new();
                member.read_to_end(&mut body).map_err(io_err(&member_path))?;
                let stem = document_stem(Path::new(name));
                one_document(sink, content, &readers::title_from_stem(&stem), name, &body)?
            }
            _ => ReadStats { documents: 0, skipped: 1 },
        };
        stats.documents += s.documents;
        stats.skipped += s.skipped;
        Ok(())
    })?;
    Ok(stats)
}
