//! `testweb`: the loopback test web behaves as documented. Every request goes to
//! 127.0.0.1 (names are mapped with reqwest's `resolve`), and every test is time-bounded.

use std::collections::{BTreeSet, VecDeque};
use std::io::Read;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime};

use testweb::{
    self, demo_seeds, demo_web, hostile_web, many_hosts_web, serve, serve_on, Resource, RetryAfter, Site,
    TestWeb, TestWebHandle, WebSpec, BOMB_INFLATED_BYTES, DEMO_HOSTS, DRIP_BYTES_PER_SEC, DRIP_TOTAL,
    HOSTILE_HOSTS, HUGE_HEADER_BYTES,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;

const UA: &str = "ditto-test/0.1 (+https://example.invalid/bot)";

/// A client that only ever talks to the test web: every host resolves to it, no proxy, no
/// redirects followed, no transparent gzip (the bomb must arrive as sent).
fn client(addr: SocketAddr, hosts: &[&str]) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .no_gzip()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(UA)
        .timeout(Duration::from_secs(20));
    for host in hosts {
        builder = builder.resolve(host, addr);
    }
    builder.build().expect("client")
}

async fn get(c: &reqwest::Client, url: &str) -> reqwest::Response {
    c.get(url).send().await.expect(url)
}

fn header<'a>(resp: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    resp.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Sends one raw HTTP/1.1 request (Connection: close) and returns everything read back.
async fn raw_get(addr: SocketAddr, host: &str, path: &str) -> Vec<u8> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await.expect("write");
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.expect("read");
    out
}

async fn hostile() -> (TestWebHandle, reqwest::Client) {
    let web = serve(hostile_web()).await.expect("serve");
    let c = client(web.addr, HOSTILE_HOSTS);
    (web, c)
}

#[tokio::test]
async fn throttling_statuses_then_success() {
    timeout(Duration::from_secs(30), async {
        let (web, c) = hostile().await;

        let r = get(&c, "http://hostile.test/retry-seconds").await;
        assert_eq!(r.status(), 429);
        assert_eq!(header(&r, "retry-after"), Some("2"));
        assert_eq!(get(&c, "http://hostile.test/retry-seconds").await.status(), 200);

        let r = get(&c, "http://hostile.test/retry-date").await;
        assert_eq!(r.status(), 429);
        let date = header(&r, "retry-after").expect("retry-after");
        let when = httpdate::parse_http_date(date).expect("an HTTP date");
        let ahead = when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO);
        assert!(ahead <= Duration::from_secs(3), "{date} is {ahead:?} ahead");
        assert!(when > SystemTime::now() - Duration::from_secs(1), "{date} in the past");
        assert_eq!(get(&c, "http://hostile.test/retry-date").await.status(), 200);

        for _ in 0..2 {
            let r = get(&c, "http://hostile.test/unavailable").await;
            assert_eq!(r.status(), 503);
            assert!(header(&r, "retry-after").is_none());
        }
        let r = get(&c, "http://hostile.test/unavailable").await;
        assert_eq!(r.status(), 200);
        assert!(r.text().await.expect("body").contains("Unavailable"));

        assert_eq!(get(&c, "http://hostile.test/missing.html").await.status(), 404);
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn robots_redirects_and_index() {
    timeout(Duration::from_secs(20), async {
        let (web, c) = hostile().await;

        let robots = get(&c, "http://hostile.test/robots.txt").await;
        assert_eq!(robots.status(), 200);
        assert!(header(&robots, "content-type").unwrap_or("").starts_with("text/plain"));
        assert!(robots.text().await.expect("robots").contains("Disallow: /forbidden/"));
        let delay = get(&c, "http://delay.test/robots.txt").await;
        assert!(delay.text().await.expect("robots").contains("Crawl-delay: 1"));
        for _ in 0..2 {
            let r = get(&c, "http://robots-error.test/robots.txt").await;
            assert_eq!(r.status(), 503);
        }
        assert_eq!(get(&c, "http://no-robots.test/robots.txt").await.status(), 404);
        assert_eq!(get(&c, "http://no-robots.test/page.html").await.status(), 200);

        let a = get(&c, "http://hostile.test/loop/a").await;
        assert_eq!(a.status(), 302);
        assert_eq!(header(&a, "location"), Some("/loop/b"));
        let b = get(&c, "http://hostile.test/loop/b").await;
        assert_eq!(b.status(), 302);
        assert_eq!(header(&b, "location"), Some("/loop/a"));
        let r = get(&c, "http://hostile.test/redirect").await;
        assert_eq!(r.status(), 301);
        assert_eq!(header(&r, "location"), Some("/ok.html"));

        let index = get(&c, "http://hostile.test/").await.text().await.expect("index");
        for path in [
            "/ok.html",
            "/forbidden/secret.html",
            "/retry-seconds",
            "/retry-date",
            "/unavailable",
            "/endless",
            "/bomb",
            "/drip",
            "/loop/a",
            "/redirect",
            "/huge-headers",
            "/charset/cp1252",
            "/charset/sjis",
            "/image.png",
            "/doc.pdf",
            "http://delay.test/",
            "http://slow.test/",
            "http://robots-error.test/",
            "http://no-robots.test/",
        ] {
            assert!(index.contains(&format!("href=\"{path}\"")), "{path} not linked");
        }
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn endless_body_streams_until_dropped() {
    timeout(Duration::from_secs(30), async {
        let (web, c) = hostile().await;
        let mut r = get(&c, "http://hostile.test/endless").await;
        assert_eq!(r.status(), 200);
        assert!(r.content_length().is_none(), "must be chunked");
        let mut got = 0usize;
        while got <= 4 << 20 {
            let chunk = r.chunk().await.expect("chunk").expect("still streaming");
            got += chunk.len();
        }
        assert_eq!(web.log.in_flight("hostile.test"), 1);
        drop(r);
        drop(c);
        // The server notices the disconnect and drops the body: nothing left in flight.
        let start = Instant::now();
        while web.log.in_flight("hostile.test") > 0 {
            assert!(start.elapsed() < Duration::from_secs(10), "body never dropped");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn shutdown_closes_open_streams() {
    timeout(Duration::from_secs(20), async {
        let (web, c) = hostile().await;
        let mut r = get(&c, "http://hostile.test/endless").await;
        assert!(r.chunk().await.expect("chunk").is_some());
        web.shutdown().await;
        // Whatever was buffered drains, then the stream ends or errors.
        while let Ok(Some(_)) = r.chunk().await {}
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn gzip_bomb_is_small_and_inflates_past_256_mib() {
    timeout(Duration::from_secs(120), async {
        let (web, c) = hostile().await;
        let r = get(&c, "http://hostile.test/bomb").await;
        assert_eq!(r.status(), 200);
        assert_eq!(header(&r, "content-encoding"), Some("gzip"));
        let body = r.bytes().await.expect("body");
        assert!(body.len() < 1 << 20, "compressed size {}", body.len());
        // Inflate it completely (off the runtime): checks size and the gzip CRC.
        let inflated = tokio::task::spawn_blocking(move || {
            let mut decoder = flate2::read::GzDecoder::new(&body[..]);
            let mut buf = vec![0u8; 1 << 20];
            let mut total = 0u64;
            loop {
                let n = decoder.read(&mut buf).expect("valid gzip");
                if n == 0 {
                    break total;
                }
                assert!(buf[..n].iter().all(|&b| b == b' '));
                total += n as u64;
            }
        })
        .await
        .expect("inflate");
        assert_eq!(inflated, BOMB_INFLATED_BYTES);
        assert!(inflated >= 256 << 20);
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn huge_headers_arrive_whole() {
    timeout(Duration::from_secs(20), async {
        let web = serve(hostile_web()).await.expect("serve");
        let raw = raw_get(web.addr, "hostile.test", "/huge-headers").await;
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("end of headers");
        assert!(raw.starts_with(b"HTTP/1.1 200"));
        assert!(end >= HUGE_HEADER_BYTES, "headers are {end} bytes");
        assert!(raw[end..].windows(7).any(|w| w == b"</html>"));
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn slow_drip_keeps_its_rate() {
    timeout(Duration::from_secs(20), async {
        let (web, c) = hostile().await;
        let mut r = get(&c, "http://hostile.test/drip").await;
        assert_eq!(r.content_length(), Some(DRIP_TOTAL));
        let start = Instant::now();
        let mut got = 0usize;
        while start.elapsed() < Duration::from_secs(2) {
            match timeout(Duration::from_millis(500), r.chunk()).await {
                Ok(Ok(Some(chunk))) => got += chunk.len(),
                Ok(other) => panic!("drip ended early: {other:?}"),
                Err(_) => {}
            }
        }
        let expected = DRIP_BYTES_PER_SEC as f64 * start.elapsed().as_secs_f64();
        assert!(
            (got as f64) > expected * 0.5 && (got as f64) < expected * 1.5 + 64.0,
            "got {got} bytes in {:?}, expected about {expected}",
            start.elapsed()
        );
        drop(r);
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn wrong_charsets_and_non_html() {
    timeout(Duration::from_secs(20), async {
        let (web, c) = hostile().await;
        let r = get(&c, "http://hostile.test/charset/cp1252").await;
        assert_eq!(header(&r, "content-type"), Some("text/html; charset=utf-8"));
        let body = r.bytes().await.expect("body");
        assert!(std::str::from_utf8(&body).is_err(), "must not be UTF-8");
        assert!(body.windows(4).any(|w| w == b"Caf\xe9"));

        let r = get(&c, "http://hostile.test/charset/sjis").await;
        assert_eq!(header(&r, "content-type"), Some("text/html"));
        let body = r.bytes().await.expect("body");
        assert!(std::str::from_utf8(&body).is_err(), "must not be UTF-8");
        assert!(body.windows(17).any(|w| w == b"charset=Shift_JIS"));
        // 文字 in Shift_JIS.
        assert!(body.windows(4).any(|w| w == b"\x95\xb6\x8e\x9a"));

        let r = get(&c, "http://hostile.test/image.png").await;
        assert_eq!(header(&r, "content-type"), Some("image/png"));
        assert!(r.bytes().await.expect("png").starts_with(b"\x89PNG\r\n\x1a\n"));
        let r = get(&c, "http://hostile.test/doc.pdf").await;
        assert_eq!(header(&r, "content-type"), Some("application/pdf"));
        assert!(r.bytes().await.expect("pdf").starts_with(b"%PDF-"));
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn slow_host_waits_before_answering() {
    timeout(Duration::from_secs(20), async {
        let (web, c) = hostile().await;
        let start = Instant::now();
        assert_eq!(get(&c, "http://slow.test/p/1").await.status(), 200);
        assert!(start.elapsed() >= Duration::from_millis(500));
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn request_log_records_host_ua_and_time() {
    timeout(Duration::from_secs(20), async {
        let (web, c) = hostile().await;
        let before = SystemTime::now();
        get(&c, "http://Hostile.test/ok.html?x=1").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        get(&c, "http://hostile.test/ok.html").await;
        get(&c, "http://delay.test/").await;
        let after = SystemTime::now();

        assert_eq!(web.log.count(), 3);
        let reqs = web.log.requests_for("hostile.test");
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].host, "hostile.test");
        assert_eq!(reqs[0].path, "/ok.html?x=1");
        assert_eq!(reqs[0].method, "GET");
        assert_eq!(reqs[0].user_agent.as_deref(), Some(UA));
        assert!(reqs[0].time >= before && reqs[0].time <= after);
        let gap = web.log.min_gap("hostile.test").expect("two requests");
        assert!(gap >= Duration::from_millis(200), "{gap:?}");
        assert_eq!(web.log.gaps_below("hostile.test", Duration::from_secs(1)), 1);
        assert_eq!(web.log.min_gap("delay.test"), None);
        assert_eq!(web.log.hosts(), vec!["delay.test", "hostile.test"]);
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn max_in_flight_sees_concurrent_requests() {
    timeout(Duration::from_secs(20), async {
        let slow = Site { latency: Duration::from_millis(300), ..Site::default() }
            .page("/", Resource::html("<p>slow</p>"));
        let spec = WebSpec::default().host("a.test", slow.clone()).host("b.test", slow);
        let web = serve(spec).await.expect("serve");
        let c = client(web.addr, &["a.test", "b.test"]);
        let (x, y) = tokio::join!(get(&c, "http://a.test/"), get(&c, "http://a.test/"));
        assert_eq!((x.status().as_u16(), y.status().as_u16()), (200, 200));
        get(&c, "http://b.test/").await;
        get(&c, "http://b.test/").await;
        assert_eq!(web.log.max_in_flight("a.test"), 2);
        assert_eq!(web.log.max_in_flight("b.test"), 1);
        assert_eq!(web.log.in_flight("a.test"), 0);
        assert_eq!(web.log.max_in_flight("nobody.test"), 0);
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn unknown_hosts_and_paths_are_404() {
    timeout(Duration::from_secs(20), async {
        let web = serve(WebSpec::default().host("x.test", Site::default())).await.expect("serve");
        let c = client(web.addr, &["x.test", "y.test"]);
        assert_eq!(get(&c, "http://y.test/").await.status(), 404);
        assert_eq!(get(&c, "http://x.test/nothing").await.status(), 404);
        assert_eq!(get(&c, "http://x.test/robots.txt").await.status(), 404);
        // A request without a Host header is logged with an empty host and answered.
        let raw = raw_get(web.addr, "", "/").await;
        assert!(raw.starts_with(b"HTTP/1.1 "));
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn refuses_non_loopback_binds() {
    let err =
        serve_on(WebSpec::default(), "0.0.0.0:0".parse().expect("addr")).await.err().expect("must refuse");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(TestWeb::start_blocking_on(WebSpec::default(), "0.0.0.0:0".parse().expect("addr")).is_err());
}

#[test]
fn start_blocking_serves_from_sync_code() {
    let web = TestWeb::start_blocking(hostile_web()).expect("start");
    assert!(web.addr.ip().is_loopback());
    assert_eq!(web.resolve_arg("*.test"), format!("*.test={}", web.addr));
    let mut stream = std::net::TcpStream::connect(web.addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    std::io::Write::write_all(
        &mut stream,
        b"GET /ok.html HTTP/1.1\r\nHost: hostile.test\r\nConnection: close\r\n\r\n",
    )
    .expect("write");
    let mut out = Vec::new();
    stream.read_to_end(&mut out).expect("read");
    assert!(out.starts_with(b"HTTP/1.1 200"));
    assert_eq!(web.log.count(), 1);
    web.shutdown();
}

#[tokio::test]
async fn demo_hosts_serve_index_and_robots() {
    timeout(Duration::from_secs(30), async {
        let web = serve(demo_web()).await.expect("serve");
        let c = client(web.addr, DEMO_HOSTS);
        for host in DEMO_HOSTS {
            let robots = get(&c, &format!("http://{host}/robots.txt")).await;
            assert_eq!(robots.status(), 200, "{host}");
            assert!(robots.text().await.expect("robots").contains("User-agent: *"));
            if *host == "busy.demo.test" {
                continue; // throttled; checked below
            }
            let index = get(&c, &format!("http://{host}/")).await;
            assert_eq!(index.status(), 200, "{host}");
        }
        let blog_robots = get(&c, "http://blog.demo.test/robots.txt").await;
        assert!(blog_robots.text().await.expect("robots").contains("Disallow: /private/"));

        // 429 with Retry-After: 1 twice per page, then the page.
        for path in ["/", "/timetable.html"] {
            for _ in 0..2 {
                let r = get(&c, &format!("http://busy.demo.test{path}")).await;
                assert_eq!(r.status(), 429, "{path}");
                assert_eq!(header(&r, "retry-after"), Some("1"));
            }
            let r = get(&c, &format!("http://busy.demo.test{path}")).await;
            assert_eq!(r.status(), 200, "{path}");
        }

        // The original carries attribution; the farm copies its text without it; the
        // mirror is byte-identical to the farm; the near-replica differs a little.
        let wiki = get(&c, "http://wiki.demo.test/wiki/Albedo").await.text().await.expect("wiki");
        assert!(wiki.contains("CC BY-SA 3.0"));
        assert!(wiki.contains("https://en.wikipedia.org/wiki/Albedo"));
        let farm = get(&c, "http://farm.demo.test/articles/albedo.html").await.text().await.expect("farm");
        let mirror =
            get(&c, "http://mirror.demo.test/articles/albedo.html").await.text().await.expect("mirror");
        let near = get(&c, "http://near.demo.test/articles/albedo.html").await.text().await.expect("near");
        assert!(!farm.contains("CC BY-SA"));
        assert!(farm.contains("SPONSORED"));
        assert_eq!(farm, mirror);
        assert_ne!(farm, near);
        let farm_paras: BTreeSet<&str> = farm.lines().filter(|l| l.starts_with("<p>")).collect();
        let near_paras: BTreeSet<&str> = near.lines().filter(|l| l.starts_with("<p>")).collect();
        assert_eq!(farm_paras.intersection(&near_paras).count(), farm_paras.len() - 1);
        let first = farm_paras.iter().find(|p| p.len() > 200).expect("a long paragraph");
        let inner = first.trim_start_matches("<p>");
        assert!(wiki.contains(&inner[..100]), "farm paragraph not from the article");

        // Traps go on forever.
        let cal = get(&c, "http://trap.demo.test/cal/2024/12").await.text().await.expect("cal");
        assert!(cal.contains("href=\"/cal/2025/01\""));
        let ev = get(&c, "http://trap.demo.test/events?month=2024-12").await.text().await.expect("events");
        assert!(ev.contains("href=\"/events?month=2025-01\""));
        let deep = get(&c, "http://trap.demo.test/a/a/a/").await.text().await.expect("a");
        assert!(deep.contains("href=\"/a/a/a/a/\""));
        assert_eq!(get(&c, "http://trap.demo.test/a/b/").await.status(), 404);
        assert_eq!(get(&c, "http://trap.demo.test/cal/2024/13").await.status(), 404);

        assert_eq!(web.log.count_for("busy.demo.test"), 1 + 6);
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

/// Links in an HTML page, made absolute against its host (no URL crate needed for this web).
fn links(host: &str, html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, _) in html.match_indices("href=\"") {
        let rest = &html[i + 6..];
        let Some(end) = rest.find('"') else { continue };
        let href = &rest[..end];
        if let Some(abs) = href.strip_prefix("http://") {
            let (h, p) = abs.split_once('/').map_or((abs, "/".to_string()), |(h, p)| (h, format!("/{p}")));
            out.push((h.to_string(), p));
        } else if href.starts_with('/') {
            out.push((host.to_string(), href.to_string()));
        }
    }
    out
}

/// A crawl of the spec itself (no network) from the demo seeds reaches every host, and only
/// `.demo.test` hosts; trap pages are not followed past the first.
#[test]
fn demo_seeds_reach_every_host() {
    let web = demo_web();
    let mut queue: VecDeque<(String, String)> = demo_seeds()
        .iter()
        .map(|s| {
            let host = s.trim_start_matches("http://").trim_end_matches('/');
            (host.to_string(), "/".to_string())
        })
        .collect();
    let mut seen: BTreeSet<(String, String)> = queue.iter().cloned().collect();
    let mut hosts = BTreeSet::new();
    while let Some((host, path)) = queue.pop_front() {
        assert!(host.ends_with(".demo.test"), "left the demo: {host}");
        assert!(seen.len() < 500, "runaway");
        hosts.insert(host.clone());
        let site = web.site_for(&host).expect("known host");
        let html = match site.pages.get(&path) {
            Some(Resource::Html { body, .. }) => String::from_utf8_lossy(body).into_owned(),
            Some(Resource::Status { then: Some(then), .. }) => match then.as_ref() {
                Resource::Html { body, .. } => String::from_utf8_lossy(body).into_owned(),
                _ => continue,
            },
            _ => continue, // generated trap pages, robots-disallowed or missing
        };
        for link in links(&host, &html) {
            if seen.insert(link.clone()) {
                queue.push_back(link);
            }
        }
    }
    let expected: BTreeSet<String> = DEMO_HOSTS.iter().map(|h| h.to_string()).collect();
    assert_eq!(hosts, expected);
}

#[tokio::test]
async fn many_hosts_web_answers_every_host() {
    timeout(Duration::from_secs(20), async {
        let web = serve(many_hosts_web(600, 3)).await.expect("serve");
        let c = client(web.addr, &["h0.bench.test", "h599.bench.test", "h600.bench.test"]);
        let r = get(&c, "http://h599.bench.test/").await.text().await.expect("index");
        assert!(r.contains("href=\"http://h0.bench.test/\""));
        assert_eq!(get(&c, "http://h0.bench.test/p/2").await.status(), 200);
        assert_eq!(get(&c, "http://h0.bench.test/p/3").await.status(), 404);
        assert_eq!(get(&c, "http://h600.bench.test/").await.status(), 404);
        assert_eq!(get(&c, "http://h0.bench.test/robots.txt").await.status(), 200);
        assert_eq!(testweb::many_hosts_seeds(600).len(), 600);
        web.shutdown().await;
    })
    .await
    .expect("timed out");
}

#[test]
fn retry_after_kinds_are_distinct() {
    assert_ne!(RetryAfter::Seconds(1), RetryAfter::Raw("1".into()));
}
