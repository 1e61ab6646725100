//! A stored page's text, read back from where the page came from.
//!
//! The store keeps verdicts, not text (`store` crate docs). Evidence (copied passages,
//! near-replica differences, quilt patches, origins, recrawl comparisons) and the analyses
//! over a finished store get a page's cleaned text blocks here: the text kept in the store
//! when the scan ran with `--keep-text`, else the page read back from its WARC record (file
//! and record offset) or file, its body's SHA-1 checked against the stored one (the key's),
//! and cleaned again with the same cleaner the scan used. A source that is gone or changed
//! gives [`PageText::Unavailable`] with a plain reason, and callers say so and go on.

use std::cell::Cell;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::Result;
use crawler::warc::{convert_record, WarcReader, DEFAULT_MAX_BODY};
use detector::fingerprint::{parse_hex, sha1, Sha1Digest};
use detector::{CleanOptions, PageOrigin};
use store::{PageRecord, Store};

/// Longest copied passage shown, in characters (the match stage cuts passages to this).
pub const PASSAGE_CHARS: usize = 300;

/// Collapse whitespace and cut to `max` chars, ending with "…" when cut.
pub fn shorten_passage(text: &str, max: usize) -> String {
    // One allocation for the usual case (the result is never longer than the text plus the
    // ellipsis, nor than `max` chars of up to 4 bytes each plus it).
    let mut out = String::with_capacity(text.len().min(max.saturating_mul(4)).saturating_add(3));
    let mut n = 0;
    for word in text.split_whitespace() {
        if n > 0 {
            out.push(' ');
            n += 1;
        }
        // A word that fits whole goes in as one copy; the cut one char by char below.
        let chars = if word.is_ascii() { word.len() } else { word.chars().count() };
        if n + chars <= max {
            out.push_str(word);
            n += chars;
            continue;
        }
        for c in word.chars() {
            if n >= max {
                out.push('…');
                return out;
            }
            out.push(c);
            n += 1;
        }
    }
    out
}

/// Store metadata naming the directory a crawl wrote its WARC files to (crawl records name
/// the file only).
pub const WARC_DIR_META: &str = "warc_dir";

/// A page's text, or why it cannot be had.
#[derive(Debug, Clone, PartialEq)]
pub enum PageText {
    /// The cleaned text blocks, as the scan saw them.
    Text(Vec<String>),
    /// The source is gone or changed (or was never kept): a plain sentence saying which.
    Unavailable(String),
}

impl PageText {
    /// The blocks, or none when unavailable.
    pub fn blocks(self) -> Option<Vec<String>> {
        match self {
            PageText::Text(b) => Some(b),
            PageText::Unavailable(_) => None,
        }
    }
}

/// Reads stored pages' text back (see the module docs).
pub struct TextSource<'a> {
    store: &'a Store,
    warc_dir: Option<PathBuf>,
    /// Pages whose text could not be had so far.
    unavailable: Cell<u64>,
    /// The first reason, for a summary line.
    first_reason: std::cell::RefCell<Option<String>>,
}

impl<'a> TextSource<'a> {
    pub fn new(store: &'a Store) -> Result<Self> {
        let warc_dir = store.meta(WARC_DIR_META)?.map(PathBuf::from);
        Ok(TextSource { store, warc_dir, unavailable: Cell::new(0), first_reason: Default::default() })
    }

    /// Pages whose text could not be had so far, and the first reason.
    pub fn unavailable(&self) -> (u64, Option<String>) {
        (self.unavailable.get(), self.first_reason.borrow().clone())
    }

    /// A line for stderr when some texts could not be had ("" when all could).
    pub fn summary(&self) -> Option<String> {
        let (n, why) = self.unavailable();
        (n > 0).then(|| {
            format!(
                "note: the text of {n} page(s) could not be read back from their sources (first: {}); \
                 they were left out of the evidence",
                why.unwrap_or_default()
            )
        })
    }

    /// The text of a stored page capture.
    pub fn text_of_key(&self, url: &str, file_hash: &Sha1Digest) -> Result<PageText> {
        if let Some(blocks) = self.store.page_text(url, file_hash)? {
            return Ok(PageText::Text(blocks));
        }
        match self.store.page(url, file_hash)? {
            Some(rec) => Ok(self.count(self.read_back(&rec.url, file_hash, &rec.origin))),
            None => Ok(self.count(PageText::Unavailable(format!("{url} is not in the store")))),
        }
    }

    /// The text of a stored page.
    pub fn text_of(&self, rec: &PageRecord) -> Result<PageText> {
        let Some(hash) = parse_hex(&rec.file_hash) else {
            return Ok(
                self.count(PageText::Unavailable(format!("{}: the stored file hash is damaged", rec.url)))
            );
        };
        if let Some(blocks) = self.store.page_text(&rec.url, &hash)? {
            return Ok(PageText::Text(blocks));
        }
        Ok(self.count(self.read_back(&rec.url, &hash, &rec.origin)))
    }

    /// Every stored page with its text, in URL order (the store's page order): pages whose
    /// text cannot be had come with no blocks (and are counted, [`Self::unavailable`]), so
    /// the numbering of pages is the same on every pass.
    pub fn texts(&self) -> impl Iterator<Item = Result<(String, Sha1Digest, Vec<String>)>> + '_ {
        self.store.pages().map(move |r| {
            let rec = r?;
            let hash = parse_hex(&rec.file_hash).unwrap_or_default();
            let blocks = self.text_of(&rec)?.blocks().unwrap_or_default();
            Ok((rec.url, hash, blocks))
        })
    }

    /// Fill in the passages of a stored record's evidence (the store keeps each passage's
    /// block number only) from the page's text; when that cannot be had, each passage says
    /// so instead.
    pub fn fill_passages(&self, rec: &mut PageRecord) -> Result<()> {
        if rec.evidence.iter().all(|e| !e.passage.is_empty()) {
            return Ok(());
        }
        match self.text_of(rec)? {
            PageText::Text(blocks) => {
                for e in rec.evidence.iter_mut().filter(|e| e.passage.is_empty()) {
                    e.passage = match blocks.get(e.block as usize) {
                        Some(b) => shorten_passage(b, PASSAGE_CHARS),
                        None => "(passage not available: the page's text has fewer blocks than the scan saw)"
                            .into(),
                    };
                }
            }
            PageText::Unavailable(why) => {
                for e in rec.evidence.iter_mut().filter(|e| e.passage.is_empty()) {
                    e.passage = format!("(passage not available: {why})");
                }
            }
        }
        Ok(())
    }

    fn count(&self, t: PageText) -> PageText {
        if let PageText::Unavailable(why) = &t {
            self.unavailable.set(self.unavailable.get() + 1);
            let mut first = self.first_reason.borrow_mut();
            if first.is_none() {
                *first = Some(why.clone());
            }
        }
        t
    }

    /// Read the page back from its origin, check its digest and clean it.
    fn read_back(&self, url: &str, hash: &Sha1Digest, origin: &PageOrigin) -> PageText {
        let page = match origin {
            PageOrigin::Warc { file, offset } => {
                let path = self.warc_path(file);
                read_warc_record(&path, *offset, url, hash)
            }
            PageOrigin::File { path } => read_file(Path::new(path), hash),
            PageOrigin::Fetch => Err(format!(
                "{url} was fetched by a crawl that wrote no WARC and kept no text (use --warc-dir or --keep-text)"
            )),
            PageOrigin::Unknown => Err(format!("{url}: the store does not say where the page came from")),
        };
        match page {
            Ok((body, content_type)) => {
                let doc = detector::clean(
                    &body,
                    content_type.as_deref(),
                    Some(url),
                    &CleanOptions { extract_links: false },
                );
                PageText::Text(doc.blocks.to_vec())
            }
            Err(why) => PageText::Unavailable(why),
        }
    }

    /// A WARC file named by a record: absolute as scans record it, or a crawl's file name in
    /// the crawl's WARC directory.
    fn warc_path(&self, file: &str) -> PathBuf {
        let p = Path::new(file);
        match &self.warc_dir {
            Some(dir) if p.is_relative() && !crate::source::listing::is_url(file) => dir.join(p),
            _ => p.to_path_buf(),
        }
    }
}

/// [`TextSource::fill_passages`] for a record read from one of several stores (a merged
/// report): the first store holding the page capture reads it back.
pub fn fill_passages_from(stores: &[&Store], rec: &mut PageRecord) -> Result<()> {
    if rec.evidence.iter().all(|e| !e.passage.is_empty()) {
        return Ok(());
    }
    let hash = parse_hex(&rec.file_hash).unwrap_or_default();
    for s in stores {
        if s.has_page(&rec.url, &hash)? {
            return TextSource::new(s)?.fill_passages(rec);
        }
    }
    match stores.first() {
        Some(s) => TextSource::new(s)?.fill_passages(rec),
        None => Ok(()),
    }
}

/// The body and content type of the record of `url` in the WARC member (or plain record)
/// at `offset` of `path`, when its SHA-1 is `hash`.
fn read_warc_record(
    path: &Path,
    offset: u64,
    url: &str,
    hash: &Sha1Digest,
) -> std::result::Result<(Vec<u8>, Option<String>), String> {
    let gone = |e: std::io::Error| format!("source gone: {} ({e})", path.display());
    let f = open_at(path, offset).map_err(gone)?;
    let mut changed = false;
    // Records are read from `offset` on; the page's record is in the first gzip member (or
    // is the first plain record), whose records all report offset 0 from here.
    for rec in WarcReader::new(f) {
        let Ok(rec) = rec else { break };
        if rec.offset != 0 {
            break;
        }
        if rec.target_uri.as_deref() != Some(url) {
            continue;
        }
        if let Some(page) = convert_record(&rec, &path.to_string_lossy(), DEFAULT_MAX_BODY).page {
            if sha1(&page.body) == *hash {
                return Ok((page.body, page.content_type));
            }
            changed = true;
        }
    }
    Err(if changed {
        format!(
            "source changed: the record of {url} in {} no longer has the SHA-1 the scan saw",
            path.display()
        )
    } else {
        format!("source changed: no record of {url} at offset {offset} of {}", path.display())
    })
}

/// A WARC file from byte `offset` on: a local file, or a remote one (`ditto scan` of URLs)
/// read with an HTTP `Range` request.
fn open_at(path: &Path, offset: u64) -> std::io::Result<Box<dyn std::io::Read>> {
    let name = path.to_string_lossy();
    if crate::source::listing::is_url(&name) {
        return open_remote_at(&name, offset);
    }
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(offset))?;
    Ok(Box::new(f))
}

#[cfg(feature = "crawl")]
fn open_remote_at(url: &str, offset: u64) -> std::io::Result<Box<dyn std::io::Read>> {
    use crawler::warc::{remote_client, RemoteClient, RemoteFile, RemoteOptions};
    static CLIENT: std::sync::OnceLock<Option<RemoteClient>> = std::sync::OnceLock::new();
    let opts = RemoteOptions { retries: 2, ..RemoteOptions::default() };
    let client = CLIENT.get_or_init(|| remote_client(&opts).ok()).clone();
    let client = client.ok_or_else(|| std::io::Error::other("no HTTP client could be built"))?;
    Ok(Box::new(RemoteFile::open_at(client, url, opts, offset)?))
}

#[cfg(not(feature = "crawl"))]
fn open_remote_at(url: &str, _offset: u64) -> std::io::Result<Box<dyn std::io::Read>> {
    Err(std::io::Error::other(format!("{url}: this build of ditto reads no remote files")))
}

/// A file's bytes and guessed content type, when its SHA-1 is `hash`.
fn read_file(path: &Path, hash: &Sha1Digest) -> std::result::Result<(Vec<u8>, Option<String>), String> {
    let body = std::fs::read(path).map_err(|e| format!("source gone: {} ({e})", path.display()))?;
    if sha1(&body) != *hash {
        return Err(format!("source changed: {} no longer has the SHA-1 the scan saw", path.display()));
    }
    Ok((body, super::dir::guess_content_type(path).map(str::to_string)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawler::warc::{FetchRecord, WarcWriter};
    use store::{Evidence, PageWrite};

    /// The char-by-char cut `shorten_passage` must agree with (its whole-word fast path
    /// included).
    fn shorten_reference(text: &str, max: usize) -> String {
        let mut out = String::new();
        let mut n = 0;
        for word in text.split_whitespace() {
            if n > 0 {
                out.push(' ');
                n += 1;
            }
            for c in word.chars() {
                if n >= max {
                    out.push('…');
                    return out;
                }
                out.push(c);
                n += 1;
            }
        }
        out
    }

    #[test]
    fn shorten_passage_matches_the_char_by_char_cut() {
        let texts = [
            "",
            "  ",
            "abc",
            "abc def",
            " a \n b\tc  ",
            "héllo wörld ünïcode 日本語 テキスト",
            "x\u{3000}y z",
        ];
        for t in texts {
            for max in 0..25 {
                assert_eq!(shorten_passage(t, max), shorten_reference(t, max), "{t:?} cut to {max}");
            }
        }
        assert_eq!(shorten_passage("abc def", 3), "abc …");
        assert_eq!(shorten_passage("日本語 テキスト", 5), "日本語 テ…");
        assert_eq!(shorten_passage("ab cd", 5), "ab cd");
    }

    const HTML: &[u8] = b"<html><body><p>The first paragraph of the page, long enough to be a block.</p>\
        <p>A second paragraph, with other words in it.</p></body></html>";

    fn write(store: &Store, url: &str, body: &[u8], origin: PageOrigin) {
        let file_hash = sha1(body);
        let mut w = PageWrite {
            record: PageRecord {
                url: url.into(),
                fetch_time: 0,
                status: 200,
                file_hash: detector::fingerprint::hex(&file_hash),
                chunks: 2,
                labeled_chunks: 1,
                stop_chunks: 0,
                contains: 0.5,
                file_match: None,
                sources: vec![],
                evidence: vec![Evidence { source: 3, passage: "in memory only".into(), block: 1 }],
                origin,
                simhash: None,
                text_hash: None,
                shingles: 0,
                near_duplicate_of: None,
                passages: None,
                sketch: Default::default(),
            },
            file_hash,
            neighborhoods: vec![],
            accumulator: Default::default(),
            fetched: None,
            links: vec![],
            shingles: vec![],
            text: None,
            keep_text: false,
            encoded: None,
        };
        w.encode().unwrap();
        assert_eq!(store.write_batch(&[w]).unwrap().written, 1);
    }

    fn cleaned(body: &[u8]) -> Vec<String> {
        detector::clean(body, Some("text/html"), None, &CleanOptions { extract_links: false }).blocks.to_vec()
    }

    #[test]
    fn files_are_read_back_checked_and_said_gone_or_changed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let page = dir.path().join("p.html");
        std::fs::write(&page, HTML).unwrap();
        let origin = PageOrigin::File { path: page.to_string_lossy().into_owned() };
        write(&store, "http://h/p.html", HTML, origin);
        let texts = TextSource::new(&store).unwrap();
        let h = sha1(HTML);
        assert_eq!(texts.text_of_key("http://h/p.html", &h).unwrap(), PageText::Text(cleaned(HTML)));
        // The passage is not stored; it comes back from the file.
        let mut rec = store.page("http://h/p.html", &h).unwrap().unwrap();
        assert_eq!(rec.evidence[0].passage, "");
        texts.fill_passages(&mut rec).unwrap();
        assert_eq!(rec.evidence[0].passage, "A second paragraph, with other words in it.");
        // Changed: the digest no longer matches.
        std::fs::write(&page, b"<p>something else</p>").unwrap();
        match texts.text_of_key("http://h/p.html", &h).unwrap() {
            PageText::Unavailable(why) => assert!(why.starts_with("source changed"), "{why}"),
            t => panic!("{t:?}"),
        }
        // Gone.
        std::fs::remove_file(&page).unwrap();
        let mut rec = store.page("http://h/p.html", &h).unwrap().unwrap();
        texts.fill_passages(&mut rec).unwrap();
        assert!(rec.evidence[0].passage.starts_with("(passage not available: source gone"), "{rec:?}");
        assert_eq!(texts.unavailable().0, 2);
        assert!(texts.summary().unwrap().contains("2 page(s)"));
    }

    #[test]
    fn warc_records_are_read_back_from_their_offset() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let warcs = dir.path().join("warcs");
        let mut w = WarcWriter::new(&warcs, "t", 1 << 30).unwrap();
        let rec = |url: &str, body: &[u8]| FetchRecord {
            url: url.into(),
            ip: None,
            fetch_time: 0,
            request_head: b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            status: 200,
            reason: "OK".into(),
            http_version: "HTTP/1.1".into(),
            response_headers: vec![("Content-Type".into(), "text/html".into())],
            payload: body.to_vec(),
            truncated: false,
        };
        let other = b"<p>another page entirely, in the record before</p>";
        w.write_fetch(&rec("http://h/other", other)).unwrap();
        // Stored as sent, gzip-encoded: read back decoded.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, HTML).unwrap();
        let mut sent = rec("http://h/p", &gz.finish().unwrap());
        sent.response_headers.push(("Content-Encoding".into(), "gzip".into()));
        let loc = w.write_fetch(&sent).unwrap();
        w.close().unwrap();
        // A crawl names the file only; the store says where the WARC directory is.
        store.set_meta(WARC_DIR_META, &warcs.to_string_lossy()).unwrap();
        let origin = PageOrigin::Warc { file: loc.file.clone(), offset: loc.offset };
        write(&store, "http://h/p", HTML, origin);
        // The same record named at the wrong offset is not found.
        write(&store, "http://h/q", HTML, PageOrigin::Warc { file: loc.file.clone(), offset: 0 });
        let texts = TextSource::new(&store).unwrap();
        assert_eq!(texts.text_of_key("http://h/p", &sha1(HTML)).unwrap(), PageText::Text(cleaned(HTML)));
        assert!(matches!(texts.text_of_key("http://h/q", &sha1(HTML)).unwrap(), PageText::Unavailable(_)));
        // Every page in URL order, the unavailable one with no blocks.
        let all: Vec<_> = texts.texts().map(|r| r.unwrap()).collect();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].2, cleaned(HTML));
        assert!(all[1].2.is_empty());
    }
}
