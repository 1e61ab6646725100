//! Issue 37, item 4: politeness per server. Twelve hosts share one loopback address (a
//! "farm") beside eight hosts on eight other loopback addresses. The crawl bounds the farm's
//! address to 2 requests in flight and 100 ms between request starts over all its hosts,
//! while the other hosts are crawled at their own pace. Asserted from the server's side: it
//! records, per local address, when each request arrived and when its answer was sent (each
//! answer takes 300 ms, so without the bound 3 or more would overlap).
//!
//! Loopback only: 127.0.0.1–127.0.0.9, every host name mapped with the resolve option.

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{any_scope_links, Discard};
use crawler::crawl::{crawl, CrawlConfig, CrawlCounters, CrawlIo, CrawlReport, PolitenessKey, ServerConfig};
use crawler::fetch::{FetchConfig, Fetcher, ResolveMap};
use crawler::politeness::PolitenessConfig;

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Hit {
    addr: IpAddr,
    host: String,
    path: String,
    arrived: Instant,
    answered: Instant,
}

type Hits = Arc<Mutex<Vec<Hit>>>;

/// A server on `ip` (any free port): robots.txt 404, pages 200 with a little HTML, every
/// answer after `service`; one thread per connection, at most 200 connections or 60 s.
fn server(ip: &str, service: Duration, hits: Hits) -> SocketAddr {
    let l = TcpListener::bind((ip, 0)).expect("bind a loopback address");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        let start = Instant::now();
        for conn in l.incoming().take(200) {
            if start.elapsed() > Duration::from_secs(60) {
                break;
            }
            let Ok(mut c) = conn else { continue };
            let hits = hits.clone();
            std::thread::spawn(move || {
                let arrived = Instant::now();
                let mut buf = [0u8; 4096];
                let n = c.read(&mut buf).unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                let host = head
                    .lines()
                    .find_map(|l| l.strip_prefix("host: ").or_else(|| l.strip_prefix("Host: ")))
                    .unwrap_or("")
                    .split(':')
                    .next()
                    .unwrap_or("")
                    .to_string();
                std::thread::sleep(service);
                let answer = if path == "/robots.txt" {
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
                } else {
                    let body = format!("<html><body><p>{host}{path}</p></body></html>");
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                };
                let _ = c.write_all(answer.as_bytes());
                let answered = Instant::now();
                let addr = c.local_addr().map(|a| a.ip()).unwrap_or(IpAddr::from([0, 0, 0, 0]));
                hits.lock().unwrap().push(Hit { addr, host, path, arrived, answered });
            });
        }
    });
    addr
}

/// Crawl `pages` pages of each host in `hosts` (host → server) under `servers`.
fn run(hosts: &[(String, SocketAddr)], pages: usize, servers: ServerConfig) -> CrawlReport {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(store::Store::open(&dir.path().join("s.db")).unwrap());
    let mut map = ResolveMap::default();
    for (h, a) in hosts {
        map.add(&format!("{h}={a}")).unwrap();
    }
    let fetcher = Fetcher::new(FetchConfig {
        user_agent: "ditto-test/0.1 (+http://localhost/)".into(),
        total_timeout: Duration::from_secs(10),
        resolve: Arc::new(map),
        ..FetchConfig::default()
    })
    .unwrap();
    let cfg = CrawlConfig {
        polite: PolitenessConfig {
            min_delay: Duration::from_millis(10),
            delay_factor: 0.0,
            ..PolitenessConfig::default()
        },
        idle_grace: Duration::from_secs(2),
        servers,
        ..CrawlConfig::default()
    };
    let links = any_scope_links();
    let io = CrawlIo {
        sink: Arc::new(Discard),
        recorder: None,
        counters: Arc::new(CrawlCounters::default()),
        stop: Arc::new(AtomicBool::new(false)),
    };
    let seeds: Vec<String> =
        hosts.iter().flat_map(|(h, _)| (0..pages).map(move |i| format!("http://{h}/p{i}"))).collect();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().worker_threads(2).build().unwrap();
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), crawl(store, fetcher, cfg, links, seeds, io)).await
    })
    .expect("the crawl ends within 60 s")
    .expect("crawl")
}

/// The most requests the server was answering at once on `addr`, and the smallest and mean
/// gaps between arrivals there.
fn load_on(hits: &[Hit], addr: IpAddr) -> (usize, Duration, Duration) {
    let mut on: Vec<&Hit> = hits.iter().filter(|h| h.addr == addr).collect();
    on.sort_by_key(|h| h.arrived);
    let most = on
        .iter()
        .map(|h| on.iter().filter(|o| o.arrived <= h.arrived && o.answered > h.arrived).count())
        .max();
    let gaps: Vec<Duration> = on.windows(2).map(|w| w[1].arrived.duration_since(w[0].arrived)).collect();
    let min = gaps.iter().min().copied().unwrap_or_default();
    let mean = gaps.iter().sum::<Duration>() / gaps.len().max(1) as u32;
    (most.unwrap_or(0), min, mean)
}

#[test]
fn hosts_on_one_address_share_its_bound_while_other_addresses_go_at_their_own_pace() {
    let hits: Hits = Default::default();
    let service = Duration::from_millis(300);
    let farm = server("127.0.0.1", service, hits.clone());
    let mut hosts: Vec<(String, SocketAddr)> = (0..12).map(|i| (format!("farm{i}.test"), farm)).collect();
    for i in 0..8 {
        let addr = server(&format!("127.0.0.{}", i + 2), service, hits.clone());
        hosts.push((format!("other{i}.test"), addr));
    }
    let servers = ServerConfig {
        key: PolitenessKey::Host,
        per_ip_in_flight: 2,
        per_ip_min_gap: Duration::from_millis(100),
    };
    let report = run(&hosts, 2, servers);
    std::thread::sleep(Duration::from_millis(100)); // the last answers' records
    let hits = hits.lock().unwrap().clone();
    eprintln!("{report:?}");
    // Every host: robots.txt and its 2 pages.
    assert_eq!(hits.len(), 20 * 3, "{report:?}");
    assert_eq!(report.pages, 40);

    let farm_ip: IpAddr = "127.0.0.1".parse().unwrap();
    let (most, min_gap, mean_gap) = load_on(&hits, farm_ip);
    eprintln!("farm: at most {most} at once, gaps ≥ {min_gap:?}, mean {mean_gap:?}");
    assert!(most <= 2, "the farm's address answered {most} requests at once");
    assert_eq!(most, 2, "the bound of 2 was used");
    // 100 ms between starts, as the crawler counts them; the server sees arrivals a little
    // later or sooner than the starts (thread scheduling), so a margin.
    assert!(min_gap >= Duration::from_millis(70), "gap on the farm's address: {min_gap:?}");
    assert!(mean_gap >= Duration::from_millis(100), "mean gap on the farm's address: {mean_gap:?}");

    // The other addresses: their hosts are not held up by the farm. Each has 3 requests of
    // 300 ms, 10 ms apart: done long before the farm's 36 requests at ≥ 100 ms each.
    let last = |pick: &dyn Fn(&Hit) -> bool| hits.iter().filter(|h| pick(h)).map(|h| h.answered).max();
    let first = hits.iter().map(|h| h.arrived).min().expect("requests");
    let farm_done = last(&|h| h.addr == farm_ip).expect("farm requests").duration_since(first);
    let others_done = last(&|h| h.addr != farm_ip).expect("other requests").duration_since(first);
    eprintln!("farm done after {farm_done:?}, the others after {others_done:?}");
    assert!(farm_done >= Duration::from_millis(35 * 100), "{farm_done:?}");
    assert!(others_done < farm_done / 2, "others {others_done:?}, farm {farm_done:?}");
    let mut per_other: HashMap<IpAddr, usize> = HashMap::new();
    for h in hits.iter().filter(|h| h.addr != farm_ip) {
        *per_other.entry(h.addr).or_default() += 1;
        assert!(h.host.starts_with("other"), "{h:?}");
    }
    assert_eq!(per_other.len(), 8);
    assert!(hits
        .iter()
        .filter(|h| h.addr == farm_ip)
        .all(|h| h.host.starts_with("farm") && !h.path.is_empty()));
}

#[test]
fn the_ip_key_gives_an_address_the_rules_of_one_host() {
    let hits: Hits = Default::default();
    let farm = server("127.0.0.1", Duration::from_millis(50), hits.clone());
    let hosts: Vec<(String, SocketAddr)> = (0..6).map(|i| (format!("farm{i}.test"), farm)).collect();
    // Per host: one request at a time, 10 ms apart (`run`); per address by default 8 and
    // 100 ms. With the ip key, the address gets one at a time and the larger gap.
    let servers = ServerConfig { key: PolitenessKey::Ip, ..ServerConfig::default() };
    let report = run(&hosts, 2, servers);
    std::thread::sleep(Duration::from_millis(100));
    let hits = hits.lock().unwrap().clone();
    assert_eq!(hits.len(), 18, "{report:?}");
    let (most, min_gap, _) = load_on(&hits, "127.0.0.1".parse().unwrap());
    eprintln!("ip key: at most {most} at once, gaps ≥ {min_gap:?}");
    assert_eq!(most, 1);
    assert!(min_gap >= Duration::from_millis(70), "{min_gap:?}");
}

#[test]
fn without_a_bound_hosts_on_one_address_go_at_once() {
    // The control: the same farm, no per-address bound; requests overlap.
    let hits: Hits = Default::default();
    let farm = server("127.0.0.1", Duration::from_millis(300), hits.clone());
    let hosts: Vec<(String, SocketAddr)> = (0..6).map(|i| (format!("farm{i}.test"), farm)).collect();
    let report = run(&hosts, 1, ServerConfig::unbounded());
    std::thread::sleep(Duration::from_millis(100));
    let hits = hits.lock().unwrap().clone();
    assert_eq!(hits.len(), 12, "{report:?}");
    let (most, _, _) = load_on(&hits, "127.0.0.1".parse().unwrap());
    assert!(most >= 3, "at most {most} at once without a bound");
}
