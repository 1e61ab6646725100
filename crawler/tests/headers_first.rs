//! Issue 37, item 6: headers first. A loopback server streams a 1 GB "video" (never held in
//! memory: written 64 KiB at a time until the client goes away), a 1 GB body of an unknown
//! type, and a 40 MB HTML page. The crawl refuses the video after its headers (its type) and
//! the blob before its body (its Content-Length over the cap), dropping both connections;
//! the HTML page is read up to the cap, handed on cut, and its WARC record is marked
//! `WARC-Truncated: length` (and read back as the same page). Asserted from the server's
//! side: bytes written per path.
//!
//! Loopback only: the host name is mapped with the resolve option to 127.0.0.1.

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{any_scope_links, Lines};
use crawler::crawl::{
    crawl, CrawlConfig, CrawlCounters, CrawlIo, CrawlReport, CrawledPage, FailureLog, FetchRecorder, PageSink,
};
use crawler::fetch::{FetchConfig, FetchResponse, Fetcher, ResolveMap};
use crawler::politeness::PolitenessConfig;
use crawler::warc::{WarcPages, WarcReader, WarcWriter};

const GB: u64 = 1 << 30;
const HTML_BYTES: u64 = 40 << 20;
const CAP: usize = 10 << 20;

/// Bytes the server wrote per path (headers included), once each connection ended.
type Written = Arc<Mutex<HashMap<String, u64>>>;

/// Write `total` bytes of `fill` after `head`, 64 KiB at a time, until done or the client
/// has gone (a write fails); returns the bytes written.
fn stream(c: &mut TcpStream, head: &str, total: u64, fill: &[u8]) -> u64 {
    let mut written = 0u64;
    if c.write_all(head.as_bytes()).is_err() {
        return 0;
    }
    written += head.len() as u64;
    let chunk: Vec<u8> = fill.iter().copied().cycle().take(64 << 10).collect();
    let mut left = total;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        if c.write_all(&chunk[..n]).is_err() {
            break;
        }
        written += n as u64;
        left -= n as u64;
    }
    written
}

/// The server: `/robots.txt` 404, `/video` 1 GB of `video/mp4`, `/blob` 1 GB of
/// `application/octet-stream`, `/big.html` 40 MB of HTML; one request per connection, one
/// thread per connection, at most 20 connections or 60 s.
fn server(written: Written) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        let start = Instant::now();
        for conn in l.incoming().take(20) {
            if start.elapsed() > Duration::from_secs(60) {
                break;
            }
            let Ok(mut c) = conn else { continue };
            let written = written.clone();
            std::thread::spawn(move || {
                let _ = c.set_write_timeout(Some(Duration::from_secs(30)));
                let mut buf = [0u8; 4096];
                let n = c.read(&mut buf).unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                let ok = |ct: &str, len: u64| {
                    format!("HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")
                };
                let n = match path.as_str() {
                    "/video" => stream(&mut c, &ok("video/mp4", GB), GB, b"\x00\x01\x02\x03"),
                    "/blob" => stream(&mut c, &ok("application/octet-stream", GB), GB, b"\x00\xff"),
                    "/big.html" => {
                        let open = "<!DOCTYPE html><html><head><title>Big</title></head><body>";
                        let _ = c.write_all(ok("text/html; charset=utf-8", HTML_BYTES).as_bytes());
                        let _ = c.write_all(open.as_bytes());
                        let para = b"<p>A long page of plain words, repeated to forty megabytes.</p>\n";
                        stream(&mut c, "", HTML_BYTES - open.len() as u64, para) + open.len() as u64
                    }
                    _ => stream(
                        &mut c,
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                        0,
                        b" ",
                    ),
                };
                written.lock().unwrap().insert(path, n);
            });
        }
    });
    addr
}

/// Keeps what pages it is handed: URL and body length.
#[derive(Default)]
struct Keep(Mutex<Vec<(String, usize)>>);
impl PageSink for Keep {
    fn send(&self, page: CrawledPage) -> bool {
        self.0.lock().unwrap().push((page.page.url, page.page.body.len()));
        true
    }
}

/// Writes every fetch to a WARC file, as `ditto crawl --warc-dir` does.
struct Warc(Mutex<WarcWriter>);
impl FetchRecorder for Warc {
    fn record(&self, url: &str, fetch_time: i64, resp: &FetchResponse) -> Option<(String, u64)> {
        let rec = resp.warc_record(url, fetch_time);
        let loc = self.0.lock().unwrap().write_fetch(&rec).expect("WARC write");
        Some((loc.file, loc.offset))
    }
    fn close(&self) {
        self.0.lock().unwrap().close().expect("WARC close");
    }
}

#[test]
fn a_video_and_a_huge_blob_are_refused_after_their_headers_and_big_html_is_kept_cut() {
    let written: Written = Default::default();
    let addr = server(written.clone());
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(store::Store::open(&dir.path().join("s.db")).unwrap());
    let mut map = ResolveMap::default();
    map.add(&format!("big.test={addr}")).unwrap();
    let fetcher = Fetcher::new(FetchConfig {
        user_agent: "ditto-test/0.1 (+http://localhost/)".into(),
        total_timeout: Duration::from_secs(30),
        max_body_bytes: CAP,
        resolve: Arc::new(map),
        ..FetchConfig::default()
    })
    .unwrap();
    let lines = Lines::default();
    let cfg = CrawlConfig {
        polite: PolitenessConfig { min_delay: Duration::from_millis(10), ..PolitenessConfig::default() },
        idle_grace: Duration::from_secs(2),
        failure_log: Some(FailureLog::new(Box::new(lines.clone()))),
        ..CrawlConfig::default()
    };
    let links = any_scope_links();
    let warcs = dir.path().join("warcs");
    std::fs::create_dir_all(&warcs).unwrap();
    let warc = Arc::new(Warc(Mutex::new(WarcWriter::new(&warcs, "t", 1 << 30).unwrap())));
    let sink = Arc::new(Keep::default());
    let io = CrawlIo {
        sink: sink.clone(),
        recorder: Some(warc.clone()),
        counters: Arc::new(CrawlCounters::default()),
        stop: Arc::new(AtomicBool::new(false)),
    };
    let seeds: Vec<String> =
        ["/video", "/blob", "/big.html"].iter().map(|p| format!("http://big.test{p}")).collect();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().worker_threads(2).build().unwrap();
    let started = Instant::now();
    let report: CrawlReport = rt
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(60), crawl(store, fetcher, cfg, links, seeds, io)).await
        })
        .expect("the crawl ends within 60 s")
        .expect("crawl");
    warc.close();
    eprintln!("crawl: {:.2} s, {report:?}", started.elapsed().as_secs_f64());
    let ev = |n: &str| report.events.get(n).copied().unwrap_or(0);

    // Refused after the headers: counted, logged with the reason, not handed on.
    assert_eq!(ev("body_refused_after_headers"), 2, "{report:?}");
    assert_eq!((ev("skipped_not_text"), ev("skipped_too_large")), (1, 1), "{report:?}");
    let log = lines.json();
    let reason_of = |url: &str| {
        log.iter().find(|l| l["url"] == url).map(|l| l["reason"].as_str().unwrap_or("").to_string())
    };
    let video = reason_of("http://big.test/video").expect("video logged");
    assert!(video.contains("video/mp4") && video.contains("body not read"), "{video}");
    let blob = reason_of("http://big.test/blob").expect("blob logged");
    assert!(blob.contains("Content-Length 1073741824 over the cap"), "{blob}");

    // The HTML page: handed on cut at the cap, counted as truncated.
    let pages = sink.0.lock().unwrap().clone();
    assert_eq!(pages, vec![("http://big.test/big.html".to_string(), CAP)]);
    assert_eq!(ev("body_truncated"), 1, "{report:?}");

    // From the server's side: the connections were dropped early. Kernel buffers on loopback
    // take a few MiB after the client stops reading; far from 1 GB, or 40 MB.
    std::thread::sleep(Duration::from_millis(500)); // let the server's threads see the close
    let w = written.lock().unwrap().clone();
    eprintln!("bytes written by the server: {w:?}");
    for (path, limit) in [("/video", 64u64 << 20), ("/blob", 64 << 20), ("/big.html", 36 << 20)] {
        let n = *w.get(path).unwrap_or_else(|| panic!("{path} not served: {w:?}"));
        assert!(n < limit, "{path}: the server wrote {n} bytes");
    }

    // The WARC: the cut page's record says so, and reads back as the page the crawl kept;
    // the refused ones are recorded with no body.
    let file = std::fs::read_dir(&warcs).unwrap().flatten().next().expect("a WARC file").path();
    let mut truncated = HashMap::new();
    for rec in WarcReader::open(&file).unwrap() {
        let rec = rec.unwrap();
        if rec.warc_type == "response" {
            let url = rec.target_uri.clone().unwrap_or_default();
            truncated.insert(url, rec.header("WARC-Truncated").map(str::to_string));
        }
    }
    for url in ["http://big.test/big.html", "http://big.test/video", "http://big.test/blob"] {
        assert_eq!(truncated.get(url), Some(&Some("length".to_string())), "{url}: {truncated:?}");
    }
    let mut pages = WarcPages::open(&file).unwrap();
    let read_back: Vec<(String, usize)> = pages
        .by_ref()
        .map(|p| p.expect("a page record"))
        .filter(|p| p.status == 200)
        .map(|p| (p.url, p.body.len()))
        .collect();
    eprintln!("read back: {:?}", pages.stats());
    assert_eq!(read_back, vec![("http://big.test/big.html".to_string(), CAP)]);
}
