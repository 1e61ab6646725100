//! Issue 37, item 3: a server that closes idle connections. The loopback server keeps each
//! connection open after its first answer (HTTP/1.1 keep-alive) but closes it, unanswered,
//! when a second request comes on it: what a client sees when a server (nginx, at its
//! keep-alive timeout or connection limit) closes an idle connection just as a request is sent
//! on it. Every fetch that meets a closed pooled connection is sent again once on a fresh one:
//! all pages are fetched, no fetch fails, no page budget is spent on the dead connections.
//!
//! Loopback only: the host name is mapped with the resolve option to 127.0.0.1.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{any_scope_links, Count};
use crawler::crawl::{crawl, CrawlConfig, CrawlCounters, CrawlIo, ServerConfig};
use crawler::fetch::{FetchConfig, Fetcher, ResolveMap};
use crawler::politeness::PolitenessConfig;

/// Answers the first request of each connection and keeps it open; a second request on it
/// closes it unanswered. Counts answered and dropped requests; at most 100 connections or
/// 30 s.
fn closing_server(answered: Arc<AtomicUsize>, dropped: Arc<AtomicUsize>) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        let start = Instant::now();
        for conn in l.incoming().take(100) {
            if start.elapsed() > Duration::from_secs(30) {
                break;
            }
            let Ok(mut c) = conn else { continue };
            let (answered, dropped) = (answered.clone(), dropped.clone());
            std::thread::spawn(move || {
                let _ = c.set_read_timeout(Some(Duration::from_secs(10)));
                let mut buf = [0u8; 4096];
                let n = c.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    return;
                }
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let answer = if head.starts_with("GET /robots.txt") {
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_string()
                } else {
                    let body = "<html><body><p>A page.</p></body></html>";
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    )
                };
                if c.write_all(answer.as_bytes()).is_err() {
                    return;
                }
                answered.fetch_add(1, Relaxed);
                // Idle until the client sends on this connection again: then close it.
                if c.read(&mut buf).unwrap_or(0) > 0 {
                    dropped.fetch_add(1, Relaxed);
                }
            });
        }
    });
    addr
}

#[test]
fn a_request_on_a_connection_the_server_closed_is_sent_again_on_a_fresh_one() {
    let (answered, dropped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let addr = closing_server(answered.clone(), dropped.clone());
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(store::Store::open(&dir.path().join("s.db")).unwrap());
    let mut map = ResolveMap::default();
    map.add(&format!("closer.test={addr}")).unwrap();
    let fetcher = Fetcher::new(FetchConfig {
        user_agent: "ditto-test/0.1 (+http://localhost/)".into(),
        total_timeout: Duration::from_secs(10),
        resolve: Arc::new(map),
        ..FetchConfig::default()
    })
    .unwrap();
    let cfg = CrawlConfig {
        polite: PolitenessConfig { min_delay: Duration::from_millis(20), ..PolitenessConfig::default() },
        idle_grace: Duration::from_secs(2),
        max_pages: 6,
        servers: ServerConfig::unbounded(),
        ..CrawlConfig::default()
    };
    let links = any_scope_links();
    let sink = Arc::new(Count::default());
    let counters = Arc::new(CrawlCounters::default());
    let io = CrawlIo { sink: sink.clone(), recorder: None, counters, stop: Arc::new(AtomicBool::new(false)) };
    let seeds: Vec<String> = (0..6).map(|i| format!("http://closer.test/p{i}")).collect();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().worker_threads(2).build().unwrap();
    let report = rt
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(60), crawl(store, fetcher, cfg, links, seeds, io)).await
        })
        .expect("the crawl ends within 60 s")
        .expect("crawl");
    eprintln!("{report:?}; answered {}, dropped {}", answered.load(Relaxed), dropped.load(Relaxed));
    // Every page fetched, none failed, and the budget of 6 pages bought 6 pages.
    assert_eq!(*sink.0.lock().unwrap(), 6, "{report:?}");
    assert_eq!(report.pages, 6);
    assert!(report.events.keys().all(|k| !k.starts_with("error_")), "{report:?}");
    assert_eq!(report.requests, 7, "robots.txt and 6 pages: {report:?}");
    // The server answered each once and closed the connection under each reuse (the pool
    // may not reuse one that its idle timeout or the pause already dropped).
    assert_eq!(answered.load(Relaxed), 7);
    let stale = report.events.get("stale_connection_retried").copied().unwrap_or(0);
    assert_eq!(stale as usize, dropped.load(Relaxed), "{report:?}");
    assert!(stale >= 3, "the pool reused connections: {report:?}");
}
