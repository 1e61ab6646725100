//! Input readers (no network): a directory of pages, Wikimedia Enterprise HTML dumps
//! (NDJSON), MediaWiki XML export dumps. Each feeds a [`DocumentSink`].
//!
//! Compressed input (gzip, bzip2, multi-stream included) is recognized by its magic bytes,
//! not its name; so is every kind of input ([`crate::sniff`], [`crate::inputs`]). Tar
//! archives (Enterprise dumps ship as `.json.tar.gz` of NDJSON) are read member by member
//! ([`crate::tar`], [`crate::inputs::read_input`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quick_xml::events::Event;
use serde::Deserialize;

use crate::builder::{DocumentSink, Progress};
use crate::sniff::Compression;
use crate::{io_err, wikitext, Error, Result};

/// English Wikipedia article URL prefix.
pub const ENWIKI_URL_PREFIX: &str = "https://en.wikipedia.org/wiki/";

/// What a reader read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Documents handed to the sink.
    pub documents: u64,
    /// Records skipped: other namespaces, redirects, unparsable NDJSON lines, unreadable files.
    pub skipped: u64,
}

/// Open a file, transparently decompressing gzip or bzip2 (detected by magic bytes).
pub fn open_maybe_compressed(path: &Path) -> Result<Box<dyn BufRead>> {
    open_counted(path, None)
}

/// Sniff a file: its compression, and its content after decompression.
pub fn sniff_file(path: &Path) -> Result<crate::sniff::Sniffed> {
    let mut r = open_maybe_compressed(path)?;
    let raw_head = {
        let f = std::fs::File::open(path).map_err(io_err(path))?;
        let mut b = Vec::new();
        f.take(8).read_to_end(&mut b).map_err(io_err(path))?;
        b
    };
    let head = crate::sniff::peek(&mut r, path)?;
    Ok(crate::sniff::Sniffed {
        compression: Compression::of(&raw_head),
        content: crate::sniff::content_of(&head),
    })
}

/// A reader that adds the bytes it reads to a build's progress.
struct Counted<R> {
    inner: R,
    progress: Option<Arc<Progress>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(p) = &self.progress {
            p.add_input(n as u64);
        }
        Ok(n)
    }
}

/// As [`open_maybe_compressed`], counting the (compressed) bytes read into `progress`.
pub fn open_counted(path: &Path, progress: Option<Arc<Progress>>) -> Result<Box<dyn BufRead>> {
    let file = File::open(path).map_err(io_err(path))?;
    let r = BufReader::with_capacity(1 << 16, Counted { inner: file, progress });
    decompress(r).map_err(io_err(path))
}

/// Wrap any reader so that gzip or bzip2 content (by magic bytes) comes out decompressed.
pub fn decompress<'a>(r: impl BufRead + 'a) -> std::io::Result<Box<dyn BufRead + 'a>> {
    let mut r = r;
    let head = r.fill_buf()?;
    Ok(match Compression::of(head) {
        Compression::Gzip => {
            Box::new(BufReader::with_capacity(1 << 16, flate2::read::MultiGzDecoder::new(r)))
        }
        Compression::Bzip2 => {
            Box::new(BufReader::with_capacity(1 << 16, bzip2::read::MultiBzDecoder::new(r)))
        }
        Compression::None => Box::new(r),
    })
}

/// Title from a file stem: `Abstract_(law)` → `Abstract (law)`.
pub fn title_from_stem(stem: &str) -> String {
    stem.replace('_', " ")
}

/// Wikipedia-style URL for a title: spaces → underscores after the prefix.
pub fn url_for_title(prefix: &str, title: &str) -> String {
    format!("{prefix}{}", title.replace(' ', "_"))
}

fn content_type_for(path: &Path) -> Option<&'static str> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "html" | "htm" => Some("text/html"),
        "txt" => Some("text/plain"),
        _ => None,
    }
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<(PathBuf, bool)> = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let e = e.map_err(io_err(dir))?;
        // The entry's type comes with the listing on most file systems: no `stat` for each
        // file. A symbolic link is followed (a folder of links to host folders).
        let is_dir = match e.file_type() {
            Ok(t) if t.is_symlink() => e.path().is_dir(),
            Ok(t) => t.is_dir(),
            Err(_) => e.path().is_dir(),
        };
        entries.push((e.path(), is_dir));
    }
    entries.sort();
    for (p, is_dir) in entries {
        if is_dir {
            collect_files(&p, out)?;
        } else if content_type_for(&p).is_some() {
            out.push(p);
        }
    }
    Ok(())
}

/// Every `.html`, `.htm` and `.txt` file under `dir` (recursive, sorted by path) becomes one
/// source: title = file stem with `_` → space; URL = `url_prefix` + file stem when a prefix is
/// given (`https://en.wikipedia.org/wiki/` for `shared/data/wikipedia/articles`), else
/// `http://HOST/PATH` for a file at `dir/HOST/PATH` whose first folder is named like a host,
/// else the path relative to `dir` (not a link: `ditto labelset build` warns).
pub fn read_directory(
    dir: &Path,
    url_prefix: Option<&str>,
    sink: &mut dyn DocumentSink,
) -> Result<ReadStats> {
    let mut files = Vec::new();
    collect_files(dir, &mut files)?;
    let mut stats = ReadStats::default();
    for path in files {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let url = match url_prefix {
            Some(prefix) => format!("{prefix}{stem}"),
            None => {
                let rel = path.strip_prefix(dir).unwrap_or(&path);
                let rel_s = rel.to_string_lossy().replace('\\', "/");
                // `DIR/HOST/PATH`: the page's URL is http://HOST/PATH.
                let first = rel.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned());
                if rel.components().count() >= 2 && first.is_some_and(|h| detector::page::is_host_name(&h)) {
                    format!("http://{rel_s}")
                } else {
                    rel_s
                }
            }
        };
        // Read by the sink: on the pool in a parallel build.
        sink.file(&title_from_stem(&stem), &url, &path, content_type_for(&path))?;
        stats.documents += 1;
    }
    Ok(stats)
}

#[derive(Deserialize)]
struct EnterpriseRecord {
    name: String,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    namespace: Option<EnterpriseNamespace>,
    #[serde(default)]
    article_body: Option<EnterpriseBody>,
}

#[derive(Deserialize)]
struct EnterpriseNamespace {
    #[serde(default)]
    identifier: Option<i64>,
}

#[derive(Deserialize)]
struct EnterpriseBody {
    #[serde(default)]
    html: Option<String>,
}

/// Wikimedia Enterprise HTML dump: NDJSON, one article per line with `name`, `url`,
/// `article_body.html` (plain, `.gz` or `.bz2`). Records of a namespace other than 0, without
/// HTML, or that fail to parse are skipped and counted.
pub fn read_enterprise_ndjson(path: &Path, sink: &mut dyn DocumentSink) -> Result<ReadStats> {
    let r = open_maybe_compressed(path)?;
    read_enterprise_ndjson_from(r, path, sink)
}

/// As [`read_enterprise_ndjson`], from any reader (`path` names it in errors).
pub fn read_enterprise_ndjson_from(
    mut r: impl BufRead,
    path: &Path,
    sink: &mut dyn DocumentSink,
) -> Result<ReadStats> {
    let mut stats = ReadStats::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line).map_err(io_err(path))? == 0 {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(rec) = serde_json::from_slice::<EnterpriseRecord>(&line) else {
            stats.skipped += 1;
            continue;
        };
        let ns = rec.namespace.and_then(|n| n.identifier).unwrap_or(0);
        let Some(html) = rec.article_body.and_then(|b| b.html) else {
            stats.skipped += 1;
            continue;
        };
        if ns != 0 {
            stats.skipped += 1;
            continue;
        }
        let url = rec.url.unwrap_or_else(|| url_for_title(ENWIKI_URL_PREFIX, &rec.name));
        sink.document(&rec.name, &url, html.as_bytes(), Some("text/html"))?;
        stats.documents += 1;
    }
    Ok(stats)
}

/// MediaWiki XML export dump (`pages-articles`, plain or `.bz2`/`.gz`), streamed: only pages
/// in namespace 0 that are not redirects; wikitext reduced to paragraphs by
/// [`wikitext::paragraphs`]. URL = `url_prefix` + title with spaces → `_`.
pub fn read_mediawiki_xml(path: &Path, url_prefix: &str, sink: &mut dyn DocumentSink) -> Result<ReadStats> {
    let r = open_maybe_compressed(path)?;
    read_mediawiki_xml_from(r, path, url_prefix, sink)
}

#[derive(PartialEq, Clone, Copy)]
enum Field {
    None,
    Title,
    Ns,
    Text,
}

/// As [`read_mediawiki_xml`], from any reader (`path` names it in errors).
pub fn read_mediawiki_xml_from(
    r: impl BufRead,
    path: &Path,
    url_prefix: &str,
    sink: &mut dyn DocumentSink,
) -> Result<ReadStats> {
    Ok(parse_mediawiki_xml(r, path, url_prefix, sink, XmlStart::default())?.stats)
}

/// Where a MediaWiki XML parse starts: at the document's start (the default), or, in a
/// parallel build, at a point between two pages of it ([`crate::parallel`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct XmlStart {
    /// Elements open at that point (`<mediawiki>`): their ends are not unmatched.
    pub depth: usize,
    /// Decompressed bytes before that point, for the byte offsets of errors.
    pub base: u64,
    /// One stream of a multistream dump alone, whose place in the document is not known
    /// yet: end tags without a start are counted ([`XmlEnd::min_depth`]), not an error.
    pub alone: bool,
}

/// How a MediaWiki XML parse ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct XmlEnd {
    pub stats: ReadStats,
    /// It ended between pages: outside any `<page>`, `<revision>` or field, not inside a tag
    /// (a parse error would have been returned), so that the text after it parses the same
    /// alone as after it; and no `</page>` came without its `<page>` (which reads the page
    /// before it again).
    pub between_pages: bool,
    /// The lowest element depth reached, from 0 at the start (below 0: end tags whose
    /// starts came before), and the depth at the end.
    pub min_depth: i64,
    pub end_depth: i64,
}

/// The pages read so far and the one being read.
struct PageState {
    title: String,
    ns: String,
    text: String,
    redirect: bool,
    in_page: bool,
    in_revision: bool,
    field: Field,
}

/// The MediaWiki XML reader, from `start`: only pages in namespace 0 that are not redirects
/// reach `sink`.
pub(crate) fn parse_mediawiki_xml(
    r: impl BufRead,
    path: &Path,
    url_prefix: &str,
    sink: &mut dyn DocumentSink,
    start: XmlStart,
) -> Result<XmlEnd> {
    // Elements already open are opened again before the text, so that their end tags match.
    let opened = b"<x>".repeat(start.depth);
    let skip = opened.len() as u64;
    let mut reader = quick_xml::Reader::from_reader(std::io::Cursor::new(opened).chain(r));
    reader.config_mut().check_end_names = false;
    reader.config_mut().allow_unmatched_ends = start.alone;
    let mut end = XmlEnd::default();
    let mut depth = 0i64;
    let mut stray_page_end = false;
    let mut buf = Vec::new();
    let mut st = PageState {
        title: String::new(),
        ns: String::new(),
        text: String::new(),
        redirect: false,
        in_page: false,
        in_revision: false,
        field: Field::None,
    };
    let xml_err = |e: quick_xml::Error, pos: u64| Error::Input {
        path: path.to_path_buf(),
        reason: format!("XML error at byte {}: {e}", (pos + start.base).saturating_sub(skip)),
    };
    loop {
        let ev = reader.read_event_into(&mut buf).map_err(|e| xml_err(e, reader.buffer_position()))?;
        match ev {
            Event::Start(e) => {
                depth += 1;
                match e.local_name().as_ref() {
                    b"page" => {
                        st.in_page = true;
                        st.title.clear();
                        st.ns.clear();
                        st.text.clear();
                        st.redirect = false;
                    }
                    b"revision" => st.in_revision = true,
                    b"title" if st.in_page && !st.in_revision => st.field = Field::Title,
                    b"ns" if st.in_page && !st.in_revision => st.field = Field::Ns,
                    // Only the first revision's text (pages-articles dumps have one).
                    b"text" if st.in_revision && st.text.is_empty() => st.field = Field::Text,
                    b"redirect" if st.in_page => st.redirect = true,
                    _ => {}
                }
            }
            Event::Empty(e) if st.in_page && e.local_name().as_ref() == b"redirect" => st.redirect = true,
            Event::Text(t) if st.field != Field::None => {
                let s = t.unescape().map_err(|e| xml_err(e, reader.buffer_position()))?;
                match st.field {
                    Field::Title => st.title.push_str(&s),
                    Field::Ns => st.ns.push_str(&s),
                    Field::Text => st.text.push_str(&s),
                    Field::None => {}
                }
            }
            Event::CData(t) if st.field == Field::Text => st.text.push_str(&String::from_utf8_lossy(&t)),
            Event::End(e) => {
                depth -= 1;
                end.min_depth = end.min_depth.min(depth - start.depth as i64);
                match e.local_name().as_ref() {
                    b"title" | b"ns" | b"text" => st.field = Field::None,
                    b"revision" => st.in_revision = false,
                    b"page" => {
                        // An end without its start reads the page before again: from the
                        // document's start only.
                        stray_page_end |= !st.in_page;
                        st.in_page = false;
                        page_end(&st, url_prefix, sink, &mut end.stats)?;
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    end.end_depth = depth - start.depth as i64;
    end.between_pages = !st.in_page && !st.in_revision && st.field == Field::None && !stray_page_end;
    Ok(end)
}

/// A page read: to the sink when it is an article, else counted as skipped.
fn page_end(
    st: &PageState,
    url_prefix: &str,
    sink: &mut dyn DocumentSink,
    stats: &mut ReadStats,
) -> Result<()> {
    // Dumps without <ns> (very old schemas) are taken as articles.
    let article = st.ns.trim().is_empty() || st.ns.trim() == "0";
    if !article || st.redirect || wikitext::is_redirect(&st.text) {
        stats.skipped += 1;
    } else {
        let url = url_for_title(url_prefix, st.title.trim());
        sink.wikitext(st.title.trim(), &url, &st.text)?;
        stats.documents += 1;
    }
    Ok(())
}
