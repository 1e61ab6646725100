//! Issue 37, item 3: sockets bounded under the process's descriptor limit. The test runs the
//! crawl in a child process (this test again, under `ulimit -n 128`): 200 hosts on a
//! loopback server that keeps every connection alive, 2 URLs each, 64 requests in flight at
//! most, so requests in flight and idle pooled connections would need more descriptors than
//! the limit leaves. With the fetcher's socket budget (the limit less the descriptors open
//! and a reserve), every URL is fetched, none fails, requests wait for a socket instead
//! (`socket_waited`), and the sockets the child holds (sampled from `/proc/self/fd` every
//! 2 ms) stay within the budget. Without the budget (the control, `max_sockets` far above
//! the limit) the same crawl fails fetches with "Too many open files", each in the failure
//! log with its reason.
//!
//! Loopback only: every host name is mapped with the resolve option to 127.0.0.1.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{any_scope_links, Count, Lines};
use crawler::crawl::{crawl, CrawlConfig, CrawlCounters, CrawlIo, FailureLog, ServerConfig};
use crawler::fetch::{FetchConfig, Fetcher, ResolveMap};
use crawler::politeness::PolitenessConfig;

const TEST: &str = "sockets_stay_under_a_low_descriptor_limit";
const LIMIT: usize = 128;
const HOSTS: usize = 200;
const PAGES_PER_HOST: usize = 2;

/// A keep-alive loopback server: each connection answers requests until the client closes
/// it or stays silent 10 s (robots.txt 404, every other path a small page). Counts the
/// connections open at once (the most) and the requests. Stops accepting after 60 s.
fn keep_alive_server(
    open: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        let start = Instant::now();
        for conn in l.incoming() {
            if start.elapsed() > Duration::from_secs(60) {
                break;
            }
            let Ok(c) = conn else { continue };
            let now = open.fetch_add(1, Relaxed) + 1;
            most.fetch_max(now, Relaxed);
            let (open, requests) = (open.clone(), requests.clone());
            std::thread::spawn(move || {
                let _ = c.set_read_timeout(Some(Duration::from_secs(10)));
                let mut w = c.try_clone().expect("clone");
                let mut r = BufReader::new(c);
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                    // The rest of the head.
                    loop {
                        let mut h = String::new();
                        if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                    }
                    requests.fetch_add(1, Relaxed);
                    let answer = if path == "/robots.txt" {
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_string()
                    } else {
                        let body = format!("<html><body><p>Page {path}.</p></body></html>");
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        )
                    };
                    if w.write_all(answer.as_bytes()).is_err() {
                        break;
                    }
                }
                open.fetch_sub(1, Relaxed);
            });
        }
    });
    addr
}

/// The child: crawl every URL of the server at `addr` under the low limit, with the socket
/// budget (`bounded`) or without it, and check what it must.
fn child(addr: SocketAddr, bounded: bool) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(store::Store::open(&dir.path().join("s.db")).unwrap());
    let mut map = ResolveMap::default();
    map.add(&format!("*.fd.test={addr}")).unwrap();
    let fetcher = Fetcher::new(FetchConfig {
        user_agent: "ditto-test/0.1 (+http://localhost/)".into(),
        total_timeout: Duration::from_secs(10),
        resolve: Arc::new(map),
        max_sockets: if bounded { None } else { Some(100_000) },
        ..FetchConfig::default()
    })
    .unwrap();
    let limit = fetcher.socket_limit();
    let lines = Lines::default();
    let cfg = CrawlConfig {
        polite: PolitenessConfig {
            min_delay: Duration::from_millis(10),
            backoff_base: Duration::from_millis(20),
            backoff_cap: Duration::from_millis(200),
            ..PolitenessConfig::default()
        },
        idle_grace: Duration::from_secs(2),
        max_in_flight: 64,
        servers: ServerConfig::unbounded(),
        failure_log: Some(FailureLog::new(Box::new(lines.clone()))),
        ..CrawlConfig::default()
    };
    let links = any_scope_links();
    let sink = Arc::new(Count::default());
    let io = CrawlIo {
        sink: sink.clone(),
        recorder: None,
        counters: Arc::new(CrawlCounters::default()),
        stop: Arc::new(AtomicBool::new(false)),
    };
    // Sockets open in this process, sampled while the crawl runs.
    let done = Arc::new(AtomicBool::new(false));
    let most_sockets = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (done, most) = (done.clone(), most_sockets.clone());
        std::thread::spawn(move || {
            while !done.load(Relaxed) {
                let sockets = std::fs::read_dir("/proc/self/fd")
                    .map(|d| {
                        d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                            .filter(|t| t.to_string_lossy().starts_with("socket:"))
                            .count()
                    })
                    .unwrap_or(0);
                most.fetch_max(sockets, Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let seeds: Vec<String> = (0..HOSTS)
        .flat_map(|h| (0..PAGES_PER_HOST).map(move |p| format!("http://h{h}.fd.test/p{p}")))
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().worker_threads(2).build().unwrap();
    let report = rt
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(90), crawl(store, fetcher, cfg, links, seeds, io)).await
        })
        .expect("the crawl ends within 90 s")
        .expect("crawl");
    done.store(true, Relaxed);
    sampler.join().unwrap();
    let most_sockets = most_sockets.load(Relaxed);
    let log = lines.json();
    let pages = *sink.0.lock().unwrap();
    eprintln!(
        "bounded {bounded}: socket limit {limit}, most sockets open {most_sockets}, {pages} pages, {} failure-log \
         lines; {report:?}; first lines: {:?}",
        log.len(),
        &log[..log.len().min(3)]
    );
    // Every failure in the log names its URL, its event and a reason.
    for l in &log {
        assert!(l["url"].as_str().is_some_and(|u| u.contains(".fd.test/")), "{l}");
        assert!(l["event"].as_str().is_some_and(|e| !e.is_empty()), "{l}");
        assert!(l["reason"].as_str().is_some_and(|r| !r.is_empty()), "{l}");
    }
    let emfile = |l: &serde_json::Value| {
        let r = l["reason"].as_str().unwrap_or("");
        r.contains("Too many open files") || r.contains("os error 24")
    };
    if bounded {
        assert!(limit + 64 <= LIMIT, "the budget leaves the reserve under the limit: {limit}");
        assert_eq!(pages, HOSTS * PAGES_PER_HOST, "{report:?}; {log:?}");
        assert!(log.is_empty(), "{log:?}");
        assert!(report.events.keys().all(|k| !k.starts_with("error_")), "{report:?}");
        assert!(
            report.events.get("socket_waited").copied().unwrap_or(0) > 0,
            "the bound was reached: {report:?}"
        );
        // A dropped client's idle connections close asynchronously; their permits come back
        // after a grace (`fetch_sockets::CLOSE_GRACE`), which a loaded machine can outrun by
        // a few sockets. What must hold is the limit: the budget keeps 64 descriptors in
        // reserve, and a stray close may use a quarter of them, never the limit itself.
        assert!(most_sockets <= limit + 16, "{most_sockets} sockets open, budget {limit}");
    } else {
        assert!(
            log.iter().any(emfile),
            "without the budget, fetches fail for descriptors: {report:?}; {log:?}"
        );
    }
}

#[test]
fn sockets_stay_under_a_low_descriptor_limit() {
    if let Ok(v) = std::env::var("DITTO_FD_TEST_SERVER") {
        let addr: SocketAddr = v.parse().expect("server address");
        child(addr, std::env::var("DITTO_FD_TEST_BOUNDED").as_deref() == Ok("1"));
        return;
    }
    let exe = std::env::current_exe().expect("test executable");
    for bounded in [true, false] {
        let (open, most, requests) =
            (Arc::default(), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let addr = keep_alive_server(open, most.clone(), requests.clone());
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -n {LIMIT} && exec \"$0\" \"$@\""))
            .arg(&exe)
            .args(["--exact", TEST, "--nocapture", "--test-threads", "1"])
            .env("DITTO_FD_TEST_SERVER", addr.to_string())
            .env("DITTO_FD_TEST_BOUNDED", if bounded { "1" } else { "0" })
            .output()
            .expect("running the child");
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        eprintln!(
            "child (bounded {bounded}): most connections open at once on the server {}, requests {}\n{text}",
            most.load(Relaxed),
            requests.load(Relaxed)
        );
        assert!(out.status.success(), "the child failed (bounded {bounded}):\n{text}");
        if bounded {
            // robots.txt and every page of every host.
            assert_eq!(requests.load(Relaxed), HOSTS * (PAGES_PER_HOST + 1));
        }
    }
}
