//! Issue 37, item 3: every URL the crawl gives up on is in `--failure-log` with its reason,
//! also those finished without a fetch error of their own: a redirect past the redirect
//! limit, and the pages of a host whose address the guard refuses (a private address, here
//! loopback, without `--allow-private`).
//!
//! Loopback only: the redirecting host is mapped with the resolve option to 127.0.0.1; the
//! refused host is the IP literal 127.0.0.1, which the guard refuses before connecting.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{any_scope_links, Discard, Lines};
use crawler::crawl::{crawl, CrawlConfig, CrawlCounters, CrawlIo, CrawlReport, FailureLog, ServerConfig};
use crawler::fetch::{FetchConfig, Fetcher, ResolveMap};
use crawler::politeness::PolitenessConfig;

/// A loopback server: `/rN` redirects to `/r{N+1}` without end, robots.txt is 404. One
/// request per connection; at most 50 connections or 30 s.
fn redirecting_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        let start = Instant::now();
        for conn in l.incoming().take(50) {
            let Ok(mut c) = conn else { continue };
            let mut buf = [0u8; 4096];
            let n = c.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
            let answer = match path.strip_prefix("/r").and_then(|k| k.parse::<u32>().ok()) {
                Some(k) => format!(
                    "HTTP/1.1 302 Found\r\nLocation: /r{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    k + 1
                ),
                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into(),
            };
            let _ = c.write_all(answer.as_bytes());
            if start.elapsed() > Duration::from_secs(30) {
                break;
            }
        }
    });
    addr
}

/// Crawl `seeds` (at most 60 s): the report and the failure log's lines.
fn run(seeds: Vec<String>, map: ResolveMap) -> (CrawlReport, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(store::Store::open(&dir.path().join("s.db")).unwrap());
    let fetcher = Fetcher::new(FetchConfig {
        user_agent: "ditto-test/0.1 (+http://localhost/)".into(),
        total_timeout: Duration::from_secs(5),
        resolve: Arc::new(map),
        ..FetchConfig::default()
    })
    .unwrap();
    let lines = Lines::default();
    let cfg = CrawlConfig {
        polite: PolitenessConfig { min_delay: Duration::from_millis(5), ..PolitenessConfig::default() },
        idle_grace: Duration::from_secs(2),
        servers: ServerConfig::unbounded(),
        failure_log: Some(FailureLog::new(Box::new(lines.clone()))),
        ..CrawlConfig::default()
    };
    let links = any_scope_links();
    let io = CrawlIo {
        sink: Arc::new(Discard),
        recorder: None,
        counters: Arc::new(CrawlCounters::default()),
        stop: Arc::new(AtomicBool::new(false)),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().worker_threads(2).build().unwrap();
    let report = rt
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(60), crawl(store, fetcher, cfg, links, seeds, io)).await
        })
        .expect("the crawl ends within 60 s")
        .expect("crawl");
    let log = lines.json();
    (report, log)
}

#[test]
fn a_redirect_past_the_limit_is_logged() {
    let addr = redirecting_server();
    let mut map = ResolveMap::default();
    map.add(&format!("redir.test={addr}")).unwrap();
    let (report, log) = run(vec!["http://redir.test/r0".into()], map);
    eprintln!("{report:?}\n{log:?}");
    assert_eq!(report.events.get("redirect_limit").copied(), Some(1), "{report:?}");
    // The default limit is 5 redirects: /r0 .. /r4 followed, /r5's not.
    let line = log.iter().find(|l| l["event"] == "redirect_limit").expect("a redirect_limit line");
    assert_eq!(line["url"], "http://redir.test/r5", "{log:?}");
    assert!(line["reason"].as_str().is_some_and(|r| r.contains("5 redirects")), "{line}");
}

#[test]
fn the_pages_of_a_refused_address_are_logged() {
    let seeds: Vec<String> = (0..3).map(|i| format!("http://127.0.0.1:9/p{i}")).collect();
    let (report, log) = run(seeds.clone(), ResolveMap::default());
    eprintln!("{report:?}\n{log:?}");
    // Only the robots.txt attempt, which the guard refuses before connecting; no page.
    assert_eq!((report.robots_fetches, report.pages), (1, 0), "{report:?}");
    let robots = log.iter().filter(|l| l["event"] == "robots_refused_address").count();
    assert_eq!(robots, 1, "{log:?}");
    for url in &seeds {
        let line =
            log.iter().find(|l| l["url"] == url.as_str()).unwrap_or_else(|| panic!("{url} not in {log:?}"));
        assert_eq!(line["event"], "error_refused_address", "{line}");
        assert!(line["reason"].as_str().is_some_and(|r| r.contains("private, loopback")), "{line}");
    }
}
