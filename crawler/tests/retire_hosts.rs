//! Issue 37, item 5: hosts that fail retire. Dead hosts (nothing listening on a loopback
//! port), a host answering 503 to everything, a host that dies after its robots.txt, and a
//! host that speaks plain HTTP to an `https` URL (a TLS failure) each retire after three
//! failures in a row; their queued URLs are finished as failed without requests, counted by
//! reason and written to the failure log, and the frontier is left empty. A robots.txt that
//! fails once and then answers does not retire its host.
//!
//! Item 4's retry cap lives here too: a URL that fails for a reason that may pass (an endless
//! 503) is tried at most three times, then finished as failed and logged.
//!
//! Loopback only: every host name is mapped with the resolve option to 127.0.0.1.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{any_scope_links, Discard, Lines};
use crawler::crawl::{crawl, CrawlConfig, CrawlCounters, CrawlIo, CrawlReport, FailureLog};
use crawler::fetch::{FetchConfig, Fetcher, ResolveMap};
use crawler::politeness::PolitenessConfig;

/// A loopback port with nothing listening on it: bound, then let go.
fn dead_port() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr")
}

/// What a test server answers to a request head: the status line's code and reason.
type Answer = Box<dyn Fn(&str) -> &'static str + Send>;

/// A loopback server answering each request with `answer(request head)` and an empty
/// body, one request per connection, counting requests by path. Stops after `max`
/// connections or 30 s (the test's bound); after `stop_after` connections it closes its
/// listener (the host dies).
fn server(answer: Answer, max: usize, stop_after: Option<usize>) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    let paths = Arc::new(Mutex::new(Vec::new()));
    let seen = paths.clone();
    std::thread::spawn(move || {
        let start = Instant::now();
        for (i, conn) in l.incoming().take(max).enumerate() {
            let Ok(mut c) = conn else { continue };
            let mut buf = [0u8; 4096];
            let n = c.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
            seen.lock().unwrap().push(path);
            let status = answer(&head);
            let _ = write!(c, "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            drop(c);
            if stop_after.is_some_and(|s| i + 1 >= s) || start.elapsed() > Duration::from_secs(30) {
                break; // the listener is dropped: connections are refused from now on
            }
        }
    });
    (addr, paths)
}

/// What a crawl left: its report, the failure log's lines, and the frontier's counts
/// (queued, in flight) at its end.
struct Ran {
    report: CrawlReport,
    log: Vec<serde_json::Value>,
    frontier: (u64, u64),
}

impl Ran {
    fn event(&self, name: &str) -> u64 {
        self.report.events.get(name).copied().unwrap_or(0)
    }

    /// The failure log's lines of `event`.
    fn logged(&self, event: &str) -> Vec<&serde_json::Value> {
        self.log.iter().filter(|l| l["event"] == event).collect()
    }
}

/// Crawl `seeds` with `host → addr` mappings and short backoffs (the default retirement:
/// three failures in a row), at most 60 s.
fn run(seeds: &[String], resolve: &[(&str, SocketAddr)]) -> Ran {
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
            tokio::time::timeout(
                Duration::from_secs(60),
                crawl(store.clone(), fetcher, cfg, links, seeds.to_vec(), io),
            )
            .await
        })
        .expect("the crawl ends within 60 s")
        .expect("crawl");
    let frontier = store.frontier_counts().unwrap();
    let log = lines.json();
    Ran { report, log, frontier }
}

/// `n` page URLs on `host`.
fn urls(host: &str, scheme: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{scheme}://{host}/p{i}")).collect()
}

#[test]
fn dead_hosts_retire_and_their_urls_are_finished_as_failed() {
    let hosts = ["dead1.test", "dead2.test", "dead3.test", "dead4.test"];
    let ports: Vec<SocketAddr> = hosts.iter().map(|_| dead_port()).collect();
    let resolve: Vec<(&str, SocketAddr)> = hosts.iter().copied().zip(ports.iter().copied()).collect();
    let seeds: Vec<String> = hosts.iter().flat_map(|h| urls(h, "http", 5)).collect();
    let ran = run(&seeds, &resolve);
    let r = &ran.report;
    assert_eq!(ran.event("host_retired_connect"), 4, "{r:?}");
    assert_eq!(ran.event("retired_url_connect"), 20, "{r:?}");
    // Three robots.txt tries per host, no page request: each try is a logged failure.
    assert_eq!(r.robots_fetches, 12, "{r:?}");
    assert_eq!(r.requests, 12, "{r:?}");
    let robots = ran.logged("robots_unavailable_disallow_all");
    assert_eq!(robots.len(), 12, "{:?}", ran.log);
    assert!(robots.iter().all(|l| l["url"].as_str().unwrap().ends_with("/robots.txt")), "{robots:?}");
    assert!(robots.iter().all(|l| l["reason"].as_str().unwrap().contains("connect")), "{robots:?}");
    // Every queued URL is in the log once, with its host's retirement.
    let retired = ran.logged("retired_url_connect");
    let mut logged: Vec<&str> = retired.iter().map(|l| l["url"].as_str().unwrap()).collect();
    logged.sort();
    let mut want: Vec<&str> = seeds.iter().map(String::as_str).collect();
    want.sort();
    assert_eq!(logged, want);
    let reason = retired[0]["reason"].as_str().unwrap();
    assert!(reason.contains("retired (connect") && reason.contains("3 failures in a row"), "{reason}");
    // The frontier is free: nothing queued, nothing in flight.
    assert_eq!(ran.frontier, (0, 0));
    assert_eq!(r.stopped_by, "frontier_exhausted");
}

#[test]
fn a_host_answering_503_to_everything_retires_after_three_robots_txt_tries() {
    let (addr, paths) = server(Box::new(|_| "503 Service Unavailable"), 50, None);
    let seeds = urls("busy.test", "http", 10);
    let ran = run(&seeds, &[("busy.test", addr)]);
    let r = &ran.report;
    assert_eq!(*paths.lock().unwrap(), vec!["/robots.txt"; 3], "{r:?}");
    assert_eq!(ran.event("host_retired_robots_unreachable"), 1, "{r:?}");
    assert_eq!(ran.event("retired_url_robots_unreachable"), 10, "{r:?}");
    assert_eq!(ran.logged("robots_unavailable_disallow_all").len(), 3, "{:?}", ran.log);
    assert!(ran.logged("robots_unavailable_disallow_all")[0]["reason"]
        .as_str()
        .unwrap()
        .contains("HTTP status 503"));
    assert_eq!(ran.logged("retired_url_robots_unreachable").len(), 10);
    assert_eq!(ran.frontier, (0, 0));
    assert_eq!(r.stopped_by, "frontier_exhausted");
}

#[test]
fn a_robots_txt_that_fails_once_does_not_retire_its_host() {
    let robots_tries = Arc::new(AtomicUsize::new(0));
    let tries = robots_tries.clone();
    let answer: Answer = Box::new(move |head| {
        if head.starts_with("GET /robots.txt") && tries.fetch_add(1, Relaxed) == 0 {
            "503 Service Unavailable"
        } else if head.starts_with("GET /robots.txt") {
            "404 Not Found"
        } else {
            "200 OK"
        }
    });
    let (addr, paths) = server(answer, 50, None);
    let seeds = urls("flaky.test", "http", 3);
    let ran = run(&seeds, &[("flaky.test", addr)]);
    let r = &ran.report;
    assert_eq!(robots_tries.load(Relaxed), 2, "{r:?}");
    let pages = paths.lock().unwrap().iter().filter(|p| p.starts_with("/p")).count();
    assert_eq!(pages, 3, "{r:?}");
    assert!(r.events.keys().all(|k| !k.contains("retired")), "{r:?}");
    assert_eq!(ran.logged("robots_unavailable_disallow_all").len(), 1, "{:?}", ran.log);
}

#[test]
fn a_host_that_dies_after_its_robots_txt_retires_after_three_failed_connections() {
    // Serves robots.txt (404: allow all) and one page, then stops listening.
    let (addr, paths) = server(Box::new(|_| "404 Not Found"), 50, Some(2));
    let seeds = urls("dying.test", "http", 8);
    let ran = run(&seeds, &[("dying.test", addr)]);
    let r = &ran.report;
    assert_eq!(paths.lock().unwrap().len(), 2, "{r:?}");
    assert_eq!(ran.event("http_404"), 1, "{r:?}");
    assert_eq!(ran.event("host_retired_connect"), 1, "{r:?}");
    // Three failed connections (the first two URLs' tries), then the host retires: the URL
    // of the third failure and the 5 never tried are finished as retired, the other one was
    // queued for a retry and is finished with them.
    assert_eq!(ran.event("error_connect"), 3, "{r:?}");
    assert_eq!(ran.event("retired_url_connect"), 7, "{r:?}");
    assert_eq!(ran.logged("error_connect").len(), 3, "{:?}", ran.log);
    assert_eq!(ran.logged("retired_url_connect").len(), 7, "{:?}", ran.log);
    assert_eq!(ran.frontier, (0, 0));
}

#[test]
fn plain_http_behind_an_https_url_retires_its_host_as_a_tls_failure() {
    let (addr, _paths) = server(Box::new(|_| "400 Bad Request"), 50, None);
    let seeds = urls("notls.test", "https", 4);
    let ran = run(&seeds, &[("notls.test", addr)]);
    let r = &ran.report;
    assert_eq!(ran.event("host_retired_tls"), 1, "{r:?} {:?}", ran.log);
    assert_eq!(ran.event("retired_url_tls"), 4, "{r:?}");
    assert_eq!(ran.frontier, (0, 0));
}

/// Issue 37, item 4: a page answered 503 without Retry-After, forever (robots.txt 404: no
/// rules), is tried three times, then finished as failed and logged; the crawl ends instead of
/// requeueing it.
#[test]
fn an_endless_503_is_tried_three_times_then_given_up_and_logged() {
    let page_requests = Arc::new(AtomicUsize::new(0));
    let counted = page_requests.clone();
    let answer: Answer = Box::new(move |head| {
        if head.starts_with("GET /robots.txt") {
            "404 Not Found"
        } else {
            counted.fetch_add(1, Relaxed);
            "503 Service Unavailable"
        }
    });
    let (addr, _) = server(answer, 50, None);
    let ran = run(&["http://busy.test/a".to_string()], &[("busy.test", addr)]);
    let (report, log) = (&ran.report, &ran.log);
    assert_eq!(page_requests.load(Relaxed), 3, "three tries: {report:?}");
    assert_eq!(report.events.get("retries_exhausted"), Some(&1), "{report:?}");
    assert_eq!(report.events.get("http_503"), Some(&3), "{report:?}");
    assert_eq!(report.stopped_by, "frontier_exhausted");
    let gave_up: Vec<_> = log.iter().filter(|l| l["event"] == "retries_exhausted").collect();
    assert_eq!(gave_up.len(), 1, "{log:?}");
    assert_eq!(gave_up[0]["url"], "http://busy.test/a");
    assert_eq!(gave_up[0]["reason"], "gave up after 3 tries: HTTP status 503");
}
