//! Issue 37, item 4: a URL that fails for a reason that may pass is tried at most three
//! times, then finished as failed and logged; the crawl ends instead of requeueing it
//! forever. A hostile server on loopback answers every page with 503.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crawler::crawl::{
    crawl, CrawlConfig, CrawlCounters, CrawlIo, CrawledPage, FailureLog, LinkPolicy, PageSink,
};
use crawler::fetch::{FetchConfig, Fetcher, ResolveMap};
use crawler::politeness::PolitenessConfig;
use crawler::urls::{Scope, ScopeRules, TrapGuard, TrapLimits};

/// Serves `robots.txt` as 404 (no rules) and every other path as 503 without Retry-After,
/// counting page requests; one request per connection. Stops accepting after `max`
/// connections or 30 s (the test's bound).
fn endless_503(page_requests: Arc<AtomicUsize>, max: usize) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        let start = Instant::now();
        for conn in l.incoming().take(max) {
            if start.elapsed() > Duration::from_secs(30) {
                break;
            }
            let Ok(mut c) = conn else { continue };
            let mut buf = [0u8; 4096];
            let n = c.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]);
            let status = if head.starts_with("GET /robots.txt") {
                "404 Not Found"
            } else {
                page_requests.fetch_add(1, Relaxed);
                "503 Service Unavailable"
            };
            let _ = write!(c, "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    addr
}

struct Discard;
impl PageSink for Discard {
    fn send(&self, _page: CrawledPage) -> bool {
        true
    }
}

#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);
impl Write for Lines {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Crawl `seeds` with `host → addr` mappings and short backoffs; the report and the
/// failure log's lines.
fn run(
    seeds: &[&str],
    resolve: &[(&str, SocketAddr)],
) -> (crawler::crawl::CrawlReport, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(store::Store::open(&dir.path().join("s.db")).unwrap());
    let mut map = ResolveMap::default();
    for (h, a) in resolve {
        map.add(&format!("{h}={a}")).unwrap();
    }
    let fetcher = Fetcher::new(FetchConfig {
        user_agent: "ditto-test/0.1 (+http://localhost/)".into(),
        connect_timeout: Duration::from_secs(2),
        total_timeout: Duration::from_secs(5),
        resolve: Arc::new(map),
        ..FetchConfig::default()
    })
    .unwrap();
    let lines = Lines::default();
    let cfg = CrawlConfig {
        polite: PolitenessConfig {
            min_delay: Duration::from_millis(10),
            backoff_base: Duration::from_millis(20),
            backoff_cap: Duration::from_millis(200),
            ..PolitenessConfig::default()
        },
        idle_grace: Duration::from_secs(2),
        failure_log: Some(FailureLog::new(Box::new(lines.clone()))),
        ..CrawlConfig::default()
    };
    let links =
        Arc::new(LinkPolicy::new(ScopeRules::new(Scope::Any), TrapGuard::new(TrapLimits::default()), 5));
    let io = CrawlIo {
        sink: Arc::new(Discard),
        recorder: None,
        counters: Arc::new(CrawlCounters::default()),
        stop: Arc::new(AtomicBool::new(false)),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().worker_threads(2).build().unwrap();
    let seeds = seeds.iter().map(|s| s.to_string()).collect();
    let report = rt
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(60), crawl(store, fetcher, cfg, links, seeds, io)).await
        })
        .expect("the crawl ends within 60 s")
        .expect("crawl");
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let lines = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (report, lines)
}

#[test]
fn an_endless_503_is_tried_three_times_then_given_up_and_logged() {
    let page_requests = Arc::new(AtomicUsize::new(0));
    let addr = endless_503(page_requests.clone(), 50);
    let (report, log) = run(&["http://busy.test/a"], &[("busy.test", addr)]);
    assert_eq!(page_requests.load(Relaxed), 3, "three tries: {report:?}");
    assert_eq!(report.events.get("retries_exhausted"), Some(&1), "{report:?}");
    assert_eq!(report.events.get("http_503"), Some(&3), "{report:?}");
    assert_eq!(report.stopped_by, "frontier_exhausted");
    let gave_up: Vec<_> = log.iter().filter(|l| l["event"] == "retries_exhausted").collect();
    assert_eq!(gave_up.len(), 1, "{log:?}");
    assert_eq!(gave_up[0]["url"], "http://busy.test/a");
    assert_eq!(gave_up[0]["reason"], "gave up after 3 tries: HTTP status 503");
}
