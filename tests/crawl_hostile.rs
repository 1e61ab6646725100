//! The crawler against hostile servers (issue: crawler, "Must show"): `ditto crawl` runs as a
//! subprocess against the loopback [`hostile_web`]; for each hostile resource we assert what
//! the crawler did, from the server's own request log (arrival times, in-flight counts) and
//! from the crawl's statistics JSON. Plus an SSRF test: links to private, loopback and
//! link-local addresses are refused before any connection is made.
//!
//! Loopback only: every host the crawler may fetch is mapped with `--resolve` to the test web
//! on 127.0.0.1, and the scope admits only those hosts (the SSRF test admits any host, but
//! links only to addresses the guard refuses before connecting; see there).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::*;
use crawler::crawl::CrawlEvent;
use crawler::fetch::FetchErrorKind;
use testweb::{
    hostile_seeds, hostile_web, RequestLog, RequestRecord, Resource, Site, TestWeb, WebSpec, HOSTILE_HOSTS,
};

const UA: &str = "ditto-test/0.1 (+http://hostile.test/contact)";
const MIN_DELAY_MS: u64 = 200;

/// What one crawl run produced.
struct Crawled {
    stats: serde_json::Value,
    stderr: String,
    elapsed: Duration,
}

impl Crawled {
    /// How often `event` happened, from the stats JSON (under the event's name).
    fn event(&self, event: CrawlEvent) -> u64 {
        self.stats["crawl"]["events"][&*event.name()].as_u64().unwrap_or(0)
    }
}

/// Runs `ditto crawl` with `args` (plus --stats-json and --progress none) and waits at most
/// `limit`; a run past it is killed and the test fails.
fn crawl(dir: &Path, args: &[String], limit: Duration) -> Crawled {
    let stats_path = dir.join("stats.json");
    let stderr_path = dir.join("crawl.stderr");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ditto"));
    cmd.arg("crawl")
        .args(args)
        .args(["--progress", "none", "--stats-json", stats_path.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("starting ditto crawl");
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "ditto crawl still running after {limit:?}: {}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let elapsed = start.elapsed();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(status.success(), "ditto crawl failed ({status}): {stderr}");
    let stats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&stats_path).expect("stats JSON written")).unwrap();
    Crawled { stats, stderr, elapsed }
}

/// URLs of the pages a store holds.
fn stored_urls(db: &Path) -> Vec<String> {
    let store = store::Store::open(db).unwrap();
    let mut urls: Vec<String> = store.pages().map(|p| p.unwrap().url).collect();
    urls.sort();
    urls
}

fn paths(log: &RequestLog, host: &str) -> Vec<String> {
    log.paths_for(host)
}

fn count(log: &RequestLog, host: &str, path: &str) -> usize {
    log.paths_for(host).iter().filter(|p| *p == path).count()
}

/// Requests to `path` on `host`, in arrival order.
fn hits(log: &RequestLog, host: &str, path: &str) -> Vec<RequestRecord> {
    log.requests_for(host).into_iter().filter(|r| r.path == path).collect()
}

/// For each request to `path` on `host` but the last: the gap between its arrival and the
/// arrival of the host's very next request (to any path).
fn gaps_after(log: &RequestLog, host: &str, path: &str) -> Vec<Duration> {
    let all = log.requests_for(host);
    all.windows(2).filter(|w| w[0].path == path).map(|w| w[1].at.duration_since(w[0].at)).collect()
}

fn secs(d: Duration) -> String {
    format!("{:.2}s", d.as_secs_f64())
}

#[test]
fn hostile_servers_are_handled_politely_and_safely() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = TestWeb::start_blocking(hostile_web()).unwrap();
    let log = web.log.clone();
    let db = tmp.path().join("hostile.db");
    let warcs = tmp.path().join("warcs");

    let args = hostile_crawl_args(&web, &db, &labelset, &warcs);
    let run = crawl(tmp.path(), &args, Duration::from_secs(240));
    let stored = report_hostile_crawl(&run, &log, &db);
    let x = Hostile { c: &run, log: &log, stored };

    check_user_agent_and_robots(&x);
    check_plain_pages(&x);
    check_retry_after_seconds(&x);
    check_retry_after_date(&x);
    check_503_backoff(&x);
    check_oversized_and_broken_responses(&x);
    check_charsets_and_non_html(&x);
    check_politeness(&x);
    check_warc_and_request_count(&x, &warcs);
    check_failure_log(&db);
}

fn failure_log_path(db: &Path) -> std::path::PathBuf {
    db.with_extension("failures.jsonl")
}

/// Issue 26: crawl failures were totals per event only; `--failure-log` names each URL and
/// its reason.
fn check_failure_log(db: &Path) {
    let text = std::fs::read_to_string(failure_log_path(db)).expect("failure log written");
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    eprintln!("failure log: {} lines", lines.len());
    let has = |path: &str, event: &str| {
        lines.iter().any(|l| l["url"] == format!("http://hostile.test{path}") && l["event"] == event)
    };
    assert!(has("/missing.html", "http_404"), "{text}");
    assert!(has("/drip", "error_timeout"), "{text}");
    assert!(has("/image.png", "skipped_not_text"), "{text}");
    assert!(lines.iter().all(|l| l["reason"].as_str().is_some_and(|r| !r.is_empty())), "{text}");
}

/// The host most hostile resources live on.
const HOSTILE: &str = "hostile.test";

/// What the hostile crawl left behind: its statistics, the server's request log and the
/// URLs stored.
struct Hostile<'a> {
    c: &'a Crawled,
    log: &'a RequestLog,
    stored: Vec<String>,
}

impl Hostile<'_> {
    fn is_stored(&self, url: &str) -> bool {
        self.stored.iter().any(|u| u == url)
    }
}

/// `ditto crawl`'s arguments for the hostile web: every hostile host seeded, mapped to
/// loopback and alone in scope.
fn hostile_crawl_args(web: &TestWeb, db: &Path, labelset: &Path, warcs: &Path) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "--store".into(),
        db.to_str().unwrap().into(),
        "--labelset".into(),
        labelset.to_str().unwrap().into(),
        "--user-agent".into(),
        UA.into(),
        "--min-delay-ms".into(),
        MIN_DELAY_MS.to_string(),
        "--timeout".into(),
        "5".into(),
        "--max-body-bytes".into(),
        "2000000".into(),
        "--warc-dir".into(),
        warcs.to_str().unwrap().into(),
        // Only the hostile hosts are in scope (every one is mapped to loopback below).
        "--scope".into(),
        "seeds".into(),
        "--threads".into(),
        "2".into(),
        "--failure-log".into(),
        failure_log_path(db).to_str().unwrap().into(),
    ];
    for seed in hostile_seeds() {
        args.extend(["--seed".into(), seed]);
    }
    for host in HOSTILE_HOSTS {
        args.extend(["--resolve".into(), web.resolve_arg(host)]);
        args.extend(["--allow-host".into(), host.to_string()]);
    }
    args
}

/// Prints what the crawl did (its stderr, events, rejected links, each host's requests) and
/// returns the URLs it stored, also printed.
fn report_hostile_crawl(c: &Crawled, log: &RequestLog, db: &Path) -> Vec<String> {
    eprintln!("crawl took {}; stderr:\n{}", secs(c.elapsed), c.stderr);
    eprintln!("events: {}", c.stats["crawl"]["events"]);
    eprintln!("links rejected: {}", c.stats["crawl"]["links_rejected"]);
    for host in HOSTILE_HOSTS {
        eprintln!("{host}: {:?}", paths(log, host));
    }
    let stored = stored_urls(db);
    eprintln!("stored: {stored:?}");
    stored
}

/// Every request came from us with our User-Agent; robots.txt fetched once per host and obeyed,
/// an unavailable robots.txt disallows all, a missing one allows all.
fn check_user_agent_and_robots(x: &Hostile) {
    let (c, log, h) = (x.c, x.log, HOSTILE);
    // Every request came from us, to a hostile host, with our User-Agent.
    for r in log.all() {
        assert!(HOSTILE_HOSTS.contains(&r.host.as_str()), "request to an unknown host: {r:?}");
        assert_eq!(r.user_agent.as_deref(), Some(UA));
    }

    // robots.txt: fetched once per host; /forbidden/ never requested.
    for host in HOSTILE_HOSTS {
        assert_eq!(count(log, host, "/robots.txt"), 1, "{host}: robots.txt fetches: {:?}", paths(log, host));
    }
    assert_eq!(count(log, h, "/forbidden/secret.html"), 0);
    assert!(c.event(CrawlEvent::RobotsDisallowed) >= 1, "robots_disallowed not counted");
    assert!(!x.is_stored("http://hostile.test/forbidden/secret.html"));

    // robots-error.test: robots.txt answers 503 → nothing else requested there.
    assert_eq!(paths(log, "robots-error.test"), vec!["/robots.txt".to_string()]);
    assert!(c.event(CrawlEvent::RobotsUnavailableDisallowAll) >= 1);
    // no-robots.test: 404 = allow all.
    assert!(x.is_stored("http://no-robots.test/") && x.is_stored("http://no-robots.test/page.html"));
}

/// A plain page, a plain redirect and a 404.
fn check_plain_pages(x: &Hostile) {
    let (c, log, h) = (x.c, x.log, HOSTILE);
    // A plain page and a plain redirect: fetched once, stored once.
    assert_eq!(count(log, h, "/ok.html"), 1);
    assert_eq!(count(log, h, "/redirect"), 1);
    assert!(x.is_stored("http://hostile.test/ok.html") && x.is_stored("http://hostile.test/"));
    // 404: recorded, not retried.
    assert_eq!(count(log, h, "/missing.html"), 1);
    assert!(c.event(CrawlEvent::HttpStatus(404)) >= 1);
}

/// 429 + Retry-After in seconds.
fn check_retry_after_seconds(x: &Hostile) {
    let (log, h) = (x.log, HOSTILE);
    // 429 + Retry-After: 2 (seconds): the retry (and every request to the host) waits ≥ 2 s.
    let rs = hits(log, h, "/retry-seconds");
    assert_eq!(rs.len(), 2, "429 then 200");
    let retry_wait = rs[1].at.duration_since(rs[0].at);
    let next_wait = gaps_after(log, h, "/retry-seconds")[0];
    eprintln!(
        "Retry-After 2: retried after {}, next request to the host after {}",
        secs(retry_wait),
        secs(next_wait)
    );
    assert!(retry_wait >= Duration::from_secs(2) && next_wait >= Duration::from_secs(2));
    assert!(x.is_stored("http://hostile.test/retry-seconds"));
}

/// 429 + Retry-After as an HTTP date.
fn check_retry_after_date(x: &Hostile) {
    let (c, log, h) = (x.c, x.log, HOSTILE);
    // 429 + Retry-After as an HTTP date ~3 s ahead (whole seconds): the retry arrives no
    // earlier than that date, on the server's wall clock.
    let rd = hits(log, h, "/retry-date");
    assert_eq!(rd.len(), 2, "429 then 200");
    let first = rd[0].time.duration_since(UNIX_EPOCH).unwrap();
    // The server formats now + 3 s when it answers (≥ the arrival), truncated to seconds.
    let date_floor = Duration::from_secs((first + Duration::from_secs(3)).as_secs());
    let retried = rd[1].time.duration_since(UNIX_EPOCH).unwrap();
    eprintln!(
        "Retry-After date: first request at {:.2}, date ≥ {:.0}, retried at {:.2} ({} later)",
        first.as_secs_f64(),
        date_floor.as_secs_f64(),
        retried.as_secs_f64(),
        secs(rd[1].at.duration_since(rd[0].at))
    );
    assert!(retried >= date_floor, "retried before the Retry-After date");
    let next_wait = gaps_after(log, h, "/retry-date")[0];
    assert!(SystemTime::UNIX_EPOCH + first + next_wait >= SystemTime::UNIX_EPOCH + date_floor);
    assert!(x.is_stored("http://hostile.test/retry-date"));
    assert!(c.event(CrawlEvent::BackoffRetryAfter) >= 2 && c.event(CrawlEvent::HttpStatus(429)) >= 2);
}

/// 503 without Retry-After: exponential backoff.
fn check_503_backoff(x: &Hostile) {
    let (c, log, h) = (x.c, x.log, HOSTILE);
    // 503 without Retry-After, twice: exponential backoff (base 2 s, ±25 % jitter) before the
    // host's next request each time, then the page.
    let un = hits(log, h, "/unavailable");
    assert_eq!(un.len(), 3, "503, 503, 200");
    let waits = gaps_after(log, h, "/unavailable");
    eprintln!(
        "503 backoff: next request to the host after {:?}; /unavailable retried after {}, {}",
        waits.iter().map(|d| secs(*d)).collect::<Vec<_>>(),
        secs(un[1].at.duration_since(un[0].at)),
        secs(un[2].at.duration_since(un[1].at))
    );
    for w in &waits[..2] {
        assert!(*w >= Duration::from_millis(1500), "backoff after a 503 too short: {w:?}");
    }
    assert!(c.event(CrawlEvent::BackoffExponential) >= 2 && c.event(CrawlEvent::HttpStatus(503)) >= 2);
    assert!(x.is_stored("http://hostile.test/unavailable"));
}

/// Endless body, gzip bomb, slow drip, redirect loop and huge headers: cut off or refused
/// cleanly, nothing of them stored.
fn check_oversized_and_broken_responses(x: &Hostile) {
    let (c, log, h) = (x.c, x.log, HOSTILE);
    // Endless body and gzip bomb: cut at the body cap, not stored, the crawl went on.
    assert_eq!(count(log, h, "/endless"), 1);
    assert_eq!(count(log, h, "/bomb"), 1);
    assert!(
        c.event(CrawlEvent::BodyTruncated) >= 2,
        "body_truncated: {}",
        c.event(CrawlEvent::BodyTruncated)
    );
    assert!(!x.is_stored("http://hostile.test/endless") && !x.is_stored("http://hostile.test/bomb"));

    // Slow drip (256 B/s of 64 KiB): gives up at the 5 s timeout, at most 3 tries in all
    // (issue 37: the per-URL retry cap).
    let drips = count(log, h, "/drip");
    assert!((1..=3).contains(&drips), "drip requests: {drips}");
    assert!(c.event(CrawlEvent::FetchError(FetchErrorKind::Timeout)) >= 1);
    assert!(!x.is_stored("http://hostile.test/drip"));

    // Redirect loop: each side requested at most once.
    assert!(count(log, h, "/loop/a") <= 1 && count(log, h, "/loop/b") <= 1);
    assert_eq!(count(log, h, "/loop/a"), 1, "the loop's entry was linked");

    // Huge headers: a clean fetch error, no crash, not stored.
    assert_eq!(count(log, h, "/huge-headers"), 1);
    assert!(
        c.event(CrawlEvent::FetchError(FetchErrorKind::Protocol))
            + c.event(CrawlEvent::FetchError(FetchErrorKind::Body))
            >= 1
    );
    assert!(!x.is_stored("http://hostile.test/huge-headers"));
}

/// Wrong charsets decoded and stored; non-HTML fetched but not stored.
fn check_charsets_and_non_html(x: &Hostile) {
    let (c, log, h) = (x.c, x.log, HOSTILE);
    // Wrong charsets: decoded without a crash and stored.
    assert!(
        x.is_stored("http://hostile.test/charset/cp1252") && x.is_stored("http://hostile.test/charset/sjis")
    );

    // Non-HTML: fetched, not stored as pages.
    assert_eq!(count(log, h, "/image.png"), 1);
    assert_eq!(count(log, h, "/doc.pdf"), 1);
    assert!(!x.is_stored("http://hostile.test/image.png") && !x.is_stored("http://hostile.test/doc.pdf"));
    assert!(c.event(CrawlEvent::SkippedNotText) >= 2);
}

/// Crawl-delay honoured, slow hosts crawled one request at a time, and the minimum delay kept
/// on every host.
fn check_politeness(x: &Hostile) {
    let (c, log) = (x.c, x.log);
    // delay.test: Crawl-delay 1 → ≥ 1 s between any two of its requests (robots.txt too).
    let delay_gap = log.min_gap("delay.test").unwrap();
    eprintln!("delay.test: {} requests, smallest gap {}", log.count_for("delay.test"), secs(delay_gap));
    assert_eq!(log.count_for("delay.test"), 7, "robots.txt, / and 5 pages");
    assert_eq!(log.gaps_below("delay.test", Duration::from_secs(1)), 0);
    assert!(c.event(CrawlEvent::CrawlDelayHonored) >= 1);
    // slow.test: all 4 pages, one at a time.
    assert_eq!(log.count_for("slow.test"), 5);

    // Politeness over every host, from the server's own clock: no two requests to one host
    // closer than the configured minimum delay, never two in flight at once.
    let mut min_gaps = BTreeMap::new();
    for host in HOSTILE_HOSTS {
        min_gaps.insert(*host, log.min_gap(host).map(secs));
        assert_eq!(log.max_in_flight(host), 1, "{host}: more than one request in flight");
    }
    let violations = log.total_gaps_below(Duration::from_millis(MIN_DELAY_MS));
    eprintln!("smallest gap per host: {min_gaps:?}; {violations} gaps below {MIN_DELAY_MS} ms");
    assert_eq!(violations, 0);
}

/// Every fetch went to the WARC output, and the stats count every request the server saw.
fn check_warc_and_request_count(x: &Hostile, warcs: &Path) {
    let (c, log) = (x.c, x.log);
    // Every fetch went to the WARC output.
    let warc_files: Vec<_> = std::fs::read_dir(warcs).unwrap().flatten().collect();
    assert!(warc_files.iter().any(|e| e.file_name().to_string_lossy().ends_with(".warc.gz")));
    assert_eq!(c.stats["crawl"]["requests"].as_u64().unwrap() as usize, log.count(), "requests counted");
}

/// SSRF: a page links to private, loopback and link-local addresses and to `localhost`
/// (which resolves to loopback but is not in the resolve map). The crawl must refuse every one.
///
/// No packet can leave loopback even if the guard had a bug: the test first checks, without
/// any I/O, that the guard classifies every target as non-public, and IP literals are refused
/// by the fetcher before a connection is attempted; `localhost` resolves to loopback only.
#[test]
fn ssrf_guard_refuses_private_loopback_and_link_local_addresses() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    // A second loopback server that must never be reached by name "localhost".
    let bait = TestWeb::start_blocking(
        WebSpec::default()
            .host("localhost", Site::default().page("/", Resource::text("you should not be here"))),
    )
    .unwrap();
    let targets = [
        "http://10.1.2.3/x".to_string(),
        "http://192.168.1.1/".to_string(),
        "http://[::1]:1/".to_string(),
        format!("http://localhost:{}/", bait.addr.port()),
        "http://169.254.169.254/latest".to_string(),
    ];
    // Precondition, pure: the guard's classification of every literal target.
    for ip in ["10.1.2.3", "192.168.1.1", "::1", "127.0.0.1", "169.254.169.254"] {
        assert!(crawler::fetch::is_non_public(ip.parse().unwrap()), "{ip} must be non-public");
    }
    let mut body = String::from("<!DOCTYPE html><html><head><title>SSRF bait</title></head><body><ul>");
    for t in &targets {
        body.push_str(&format!("<li><a href=\"{t}\">{t}</a></li>"));
    }
    body.push_str("<li><a href=\"/fine.html\">a fine page</a></li></ul></body></html>");
    let spec = WebSpec::default().host(
        "ssrf.test",
        Site::with_robots("User-agent: *\nDisallow:\n")
            .page("/", Resource::html(body))
            .page("/fine.html", Resource::html("<html><body><p>Fine.</p></body></html>")),
    );
    let web = TestWeb::start_blocking(spec).unwrap();
    let db = tmp.path().join("ssrf.db");
    let args: Vec<String> = [
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--user-agent",
        UA,
        "--seed",
        "http://ssrf.test/",
        "--resolve",
        &web.resolve_arg("ssrf.test"),
        "--scope",
        "any",
        "--min-delay-ms",
        "50",
        "--timeout",
        "5",
        "--threads",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let c = crawl(tmp.path(), &args, Duration::from_secs(120));
    eprintln!("events: {}", c.stats["crawl"]["events"]);
    eprintln!("links rejected: {}", c.stats["crawl"]["links_rejected"]);
    // The page and its fine link were crawled…
    assert_eq!(
        web.log.paths_for("ssrf.test"),
        vec!["/robots.txt".to_string(), "/".to_string(), "/fine.html".to_string()]
    );
    // …and every bad target refused: by the fetcher's guard (counted) or before fetching.
    let refused = c.event(CrawlEvent::FetchError(FetchErrorKind::Refused));
    let rejected: u64 = c.stats["crawl"]["links_rejected"]
        .as_object()
        .map(|m| m.values().filter_map(|v| v.as_u64()).sum())
        .unwrap_or(0);
    eprintln!("{refused} refused by the guard, {rejected} links rejected before fetching");
    assert!(refused + rejected >= targets.len() as u64, "not all {} targets refused", targets.len());
    assert!(refused >= 1, "the guard refused nothing");
    // The only requests were to ssrf.test; the bait server saw nothing.
    assert_eq!(web.log.count(), 3);
    assert_eq!(bait.log.count(), 0, "localhost was contacted: {:?}", bait.log.all());
    // Nothing but the two pages stored.
    assert_eq!(
        stored_urls(&db),
        vec!["http://ssrf.test/".to_string(), "http://ssrf.test/fine.html".to_string()]
    );
}

/// A page of many links meets a small `--max-queued`: the frontier never holds more than the
/// cap, the links past it are counted as `frontier_full`, and the crawl finishes what it took.
#[test]
fn a_full_frontier_drops_and_counts_links_instead_of_growing() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let mut body = String::from("<html><body><p>Many links.</p>");
    for i in 0..2_000 {
        body.push_str(&format!("<a href=\"/p{i}.html\">{i}</a> "));
    }
    body.push_str("</body></html>");
    let site = Site::with_robots("User-agent: *\nDisallow:\n")
        .page("/", Resource::html(body))
        .page("/p0.html", Resource::html("<html><body><p>Page zero.</p></body></html>"));
    let web = TestWeb::start_blocking(WebSpec::default().host("many.test", site)).unwrap();
    let db = tmp.path().join("q.db");
    let args: Vec<String> = [
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--user-agent",
        UA,
        "--seed",
        "http://many.test/",
        "--resolve",
        &web.resolve_arg("many.test"),
        "--min-delay-ms",
        "10",
        "--max-pages",
        "5",
        "--max-queued",
        "50",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let c = crawl(tmp.path(), &args, Duration::from_secs(120));
    let rejected = &c.stats["crawl"]["links_rejected"];
    // The seed was the one open URL when its page's 2,000 links came: 49 fit.
    assert_eq!(rejected["frontier_full"].as_u64(), Some(2_000 - 49), "{rejected}");
    assert!(c.stderr.contains("50 URLs queued"), "{}", c.stderr);
    let store = store::Store::open_existing(&db).unwrap();
    let (queued, in_flight) = store.frontier_counts().unwrap();
    assert!(queued + in_flight <= 50, "{queued} queued + {in_flight} in flight");
    assert_eq!(store.frontier_load_seen().unwrap(), 50, "dropped links are not marked seen");
}
