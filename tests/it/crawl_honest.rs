//! A crawler honest with what it is told (issue 38), on loopback servers that record every
//! request's headers: credentials in links, seeds and redirects never sent; robots.txt per
//! origin (two ports of one host); page directives (meta robots and `X-Robots-Tag`
//! `nofollow`, `noindex`, meta refresh, `rel=canonical`); WARC records of the messages as
//! sent (a gzip-encoded page read by warcio).

use crate::common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;

const UA: &str = "ditto-test/0.1 (+http://a.honest.test/contact)";

/// One request as the server read it.
#[derive(Clone, Debug)]
struct Req {
    /// The `Host` header without the port, lower-cased.
    host: String,
    path: String,
    /// Every header, names lower-cased.
    headers: Vec<(String, String)>,
    /// The request head as received, byte for byte.
    raw: Vec<u8>,
}

/// status, headers, body. A `Transfer-Encoding: chunked` header has the body sent in two
/// chunks, without a `Content-Length`.
type Resp = (u16, Vec<(String, String)>, Vec<u8>);
type Handler = Arc<dyn Fn(&Req) -> Resp + Send + Sync>;

/// A loopback HTTP/1.1 server (one response per connection) that records each request.
struct Server {
    port: u16,
    log: Arc<Mutex<Vec<Req>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    fn start(handler: Handler) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let log: Arc<Mutex<Vec<Req>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (log2, stop2) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (h, l) = (handler.clone(), log2.clone());
                        std::thread::spawn(move || serve(conn, &*h, &l));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Server { port, log, stop }
    }

    fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }

    fn paths(&self, host: &str) -> Vec<String> {
        self.requests().into_iter().filter(|r| r.host == host).map(|r| r.path).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(mut conn: TcpStream, handler: &(dyn Fn(&Req) -> Resp + Send + Sync), log: &Mutex<Vec<Req>>) {
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65536 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head).to_string();
    let mut lines = text.split("\r\n");
    let path = lines.next().unwrap_or("").split(' ').nth(1).unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let host = headers.iter().find(|(k, _)| k == "host").map(|(_, v)| v.as_str()).unwrap_or("");
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h).to_ascii_lowercase();
    let req = Req { host, path, headers, raw: head.clone() };
    log.lock().unwrap().push(req.clone());
    let (status, extra, body) = handler(&req);
    let chunked = extra.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v == "chunked");
    let mut out = format!("HTTP/1.1 {status} X\r\nConnection: close\r\n");
    if !chunked {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (k, v) in extra {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    if chunked {
        let (a, b) = body.split_at(body.len() / 2);
        for part in [a, b] {
            out.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            out.extend_from_slice(part);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        out.extend_from_slice(&body);
    }
    let _ = conn.write_all(&out);
}

fn html(body: &str) -> Resp {
    (200, vec![("Content-Type".into(), "text/html; charset=utf-8".into())], body.as_bytes().to_vec())
}

fn not_found() -> Resp {
    (404, vec![("Content-Type".into(), "text/plain".into())], b"no".to_vec())
}

fn robots(rules: &str) -> Resp {
    (200, vec![("Content-Type".into(), "text/plain".into())], rules.as_bytes().to_vec())
}

/// `ditto crawl` of `seeds` with `resolve` mappings, bounded in time; returns the stats JSON
/// and stderr.
fn crawl(dir: &Path, labelset: &Path, seeds: &[String], resolve: &[String]) -> (serde_json::Value, String) {
    crawl_with(dir, labelset, seeds, resolve, &["--scope", "any"])
}

/// [`crawl`] with more flags.
fn crawl_with(
    dir: &Path,
    labelset: &Path,
    seeds: &[String],
    resolve: &[String],
    extra: &[&str],
) -> (serde_json::Value, String) {
    let db = dir.join("crawl.db");
    let stats = dir.join("stats.json");
    let mut cmd = ditto();
    cmd.args(["crawl", "--store", db.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()])
        .args(["--user-agent", UA, "--min-delay-ms", "5", "--timeout", "10", "--threads", "1"])
        .args(["--progress", "none", "--max-pages", "50"])
        .args(["--stats-json", stats.to_str().unwrap()]);
    for s in seeds {
        cmd.args(["--seed", s]);
    }
    for r in resolve {
        cmd.args(["--resolve", r]);
    }
    cmd.args(extra);
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ditto crawl still running after 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "ditto crawl failed: {stderr}");
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    (stats, stderr)
}

fn event(stats: &serde_json::Value, name: &str) -> u64 {
    stats["crawl"]["events"][name].as_u64().unwrap_or(0)
}

/// Credentials found in a link, a seed and a redirect target are never sent: the server
/// sees no `Authorization` header, yet the pages behind them are fetched (without them).
#[test]
fn credentials_in_links_seeds_and_redirects_are_never_sent() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let server = Server::start(Arc::new(|r: &Req| match (r.host.as_str(), r.path.as_str()) {
        (_, "/robots.txt") => not_found(),
        ("a.honest.test", "/") => html(
            "<html><body><p>Start page with two links.</p>\
             <a href=\"http://user:secret@b.honest.test/private\">private</a>\
             <a href=\"/redir\">redirect</a></body></html>",
        ),
        ("a.honest.test", "/redir") => {
            (302, vec![("Location".into(), "http://joe:pw@b.honest.test/after".into())], Vec::new())
        }
        ("a.honest.test", "/seeded") => html("<p>A seed given with credentials.</p>"),
        ("b.honest.test", "/private" | "/after") => html("<p>Behind a link with credentials.</p>"),
        _ => not_found(),
    }));
    let p = server.port;
    let (stats, stderr) = crawl(
        tmp.path(),
        &labelset,
        &[format!("http://a.honest.test:{p}/"), format!("http://seed:pw@a.honest.test:{p}/seeded")],
        &[format!("*.honest.test=127.0.0.1:{p}")],
    );
    let reqs = server.requests();
    for r in &reqs {
        assert!(
            !r.headers.iter().any(|(k, _)| k == "authorization"),
            "credentials sent to {} {}: {:?}",
            r.host,
            r.path,
            r.headers
        );
    }
    let b = server.paths("b.honest.test");
    assert!(b.contains(&"/private".to_string()) && b.contains(&"/after".to_string()), "{b:?}");
    assert!(server.paths("a.honest.test").contains(&"/seeded".to_string()), "{reqs:?}");
    // The link, the redirect target and the seed.
    assert_eq!(event(&stats, "credentials_stripped"), 3, "{stats}");
    assert!(stderr.contains("credentials"), "the seed's credentials are warned of: {stderr}");
    // What was stored carries no credentials either.
    let store = store::Store::open(&tmp.path().join("crawl.db")).unwrap();
    let urls: Vec<String> = store.pages().map(|p| p.unwrap().url).collect();
    assert!(urls.iter().any(|u| u.ends_with("/private")), "{urls:?}");
    assert!(urls.iter().all(|u| !u.contains('@')), "{urls:?}");
}

/// robots.txt is per origin (RFC 9309 §2.3): two ports of one host, each with its own rules,
/// each obeyed for its own URLs only.
#[test]
fn robots_txt_applies_per_origin_on_two_ports_of_one_host() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let ports: Arc<Mutex<(u16, u16)>> = Arc::default();
    let handler = |which: u8| -> Handler {
        let ports = ports.clone();
        Arc::new(move |r: &Req| {
            let (p1, p2) = *ports.lock().unwrap();
            match (which, r.path.as_str()) {
                (1, "/robots.txt") => robots("User-agent: *\nDisallow: /private\n"),
                (2, "/robots.txt") => robots("User-agent: *\nDisallow: /open\n"),
                (1, "/") => html(&format!(
                    "<p>Port one links to both ports.</p>\
                     <a href=\"/private/x\">x</a><a href=\"/open/x\">x</a>\
                     <a href=\"http://h.honest.test:{p2}/private/y\">y</a>\
                     <a href=\"http://h.honest.test:{p2}/open/y\">y</a>\
                     <a href=\"http://h.honest.test:{p1}/private/z\">z</a>"
                )),
                (_, "/private/x" | "/open/x" | "/private/y" | "/open/y" | "/private/z") => {
                    html("<p>A page behind the rules.</p>")
                }
                _ => not_found(),
            }
        })
    };
    let one = Server::start(handler(1));
    let two = Server::start(handler(2));
    *ports.lock().unwrap() = (one.port, two.port);
    let (stats, _) = crawl(
        tmp.path(),
        &labelset,
        &[format!("http://h.honest.test:{}/", one.port)],
        &[format!("h.honest.test=127.0.0.1:{}", one.port)],
    );
    let on = |s: &Server| -> Vec<String> { s.requests().into_iter().map(|r| r.path).collect() };
    let (p1, p2) = (on(&one), on(&two));
    assert_eq!(p1.iter().filter(|p| *p == "/robots.txt").count(), 1, "port one: {p1:?}");
    assert_eq!(p2.iter().filter(|p| *p == "/robots.txt").count(), 1, "port two: {p2:?}");
    assert!(p1.contains(&"/open/x".to_string()), "{p1:?}");
    assert!(!p1.iter().any(|p| p.starts_with("/private")), "port one's rules broken: {p1:?}");
    assert!(p2.contains(&"/private/y".to_string()), "port one's rules applied to port two: {p2:?}");
    assert!(!p2.contains(&"/open/y".to_string()), "port two's rules broken: {p2:?}");
    assert_eq!(event(&stats, "robots_disallowed"), 3, "{stats}");
}

/// Page directives: `nofollow` (meta and header) keeps links out, counted; a meta refresh
/// is followed; `noindex` and a canonical URL elsewhere are counted.
#[test]
fn page_directives_are_honoured() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    // Two pages copy Wikipedia, so that the page report lists them.
    let copied = article_paragraphs("Albedo", 100).into_iter().take(8).collect::<Vec<_>>().join("\n");
    let server = Server::start(Arc::new(move |r: &Req| match r.path.as_str() {
        "/robots.txt" => not_found(),
        "/" => html(
            "<p>Index.</p><a href=/meta-nf>a</a><a href=/header-nf>b</a><a href=/refresh>c</a>\
             <a href=/canon>d</a><a href=/googlebot-nf>e</a>",
        ),
        "/meta-nf" => html(&format!(
            "<html><head><meta name=\"robots\" content=\"noindex, nofollow\"></head>\
             <body>{copied}<a href=/never-1>x</a></body></html>"
        )),
        "/header-nf" => {
            let mut resp = html("<p>Do not follow either.</p><a href=/never-2>x</a>");
            resp.1.push(("X-Robots-Tag".into(), "nofollow".into()));
            resp
        }
        "/googlebot-nf" => html(
            "<head><meta name=googlebot content=nofollow></head><p>Another bot's rule.</p>\
             <a href=/followed>x</a>",
        ),
        "/refresh" => {
            html("<head><meta http-equiv=refresh content=\"0; url=/refreshed\"></head><p>Moved.</p>")
        }
        "/canon" => html(&format!(
            "<head><link rel=canonical href=\"http://orig.honest.test/story\"></head><body>{copied}</body>"
        )),
        "/refreshed" | "/followed" => html("<p>Reached.</p>"),
        _ => not_found(),
    }));
    let p = server.port;
    // The copied paragraphs link to Wikipedia: the seed's domain only, so that nothing
    // but loopback is asked.
    let (stats, _) = crawl_with(
        tmp.path(),
        &labelset,
        &[format!("http://d.honest.test:{p}/")],
        &[format!("d.honest.test=127.0.0.1:{p}")],
        &["--scope", "domain"],
    );
    assert_eq!(stats["crawl"]["robots_fetches"], 1, "only d.honest.test was asked: {stats}");
    let paths = server.paths("d.honest.test");
    for never in ["/never-1", "/never-2"] {
        assert!(!paths.contains(&never.to_string()), "{never} followed: {paths:?}");
    }
    for reached in ["/refreshed", "/followed"] {
        assert!(paths.contains(&reached.to_string()), "{reached} not reached: {paths:?}");
    }
    let want: BTreeMap<&str, u64> = [
        ("page_nofollow", 2),
        ("page_noindex", 1),
        ("meta_refresh_followed", 1),
        ("page_canonical_elsewhere", 1),
    ]
    .into_iter()
    .collect();
    for (name, n) in want {
        assert_eq!(event(&stats, name), n, "{name}: {stats}");
    }
    // The two pages' links (the copied paragraphs have some too), none admitted.
    assert!(stats["crawl"]["links_rejected"]["nofollow"].as_u64() >= Some(2), "{stats}");
    // The page report shows what each copying page said of itself.
    let db = tmp.path().join("crawl.db");
    let out = run_ok(&["report", "--store", db.to_str().unwrap(), "--level", "page", "--format", "jsonl"]);
    let rows: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let row = |path: &str| {
        let url = format!("http://d.honest.test:{p}{path}");
        let found = rows.iter().find(|r| r["neighborhood"] == url.as_str()).cloned();
        found.unwrap_or_else(|| panic!("{url} not in the report: {rows:#?}"))
    };
    let (canon, hidden) = (row("/canon"), row("/meta-nf"));
    assert_eq!(canon["canonical"], "http://orig.honest.test/story", "{canon}");
    assert!(canon.get("noindex").is_none(), "{canon}");
    assert_eq!(hidden["noindex"], true, "{hidden}");
    assert!(hidden.get("canonical").is_none(), "{hidden}");
    // And so does the review page of each.
    let canon_page = review_page(&db, &format!("http://d.honest.test:{p}/canon"));
    assert!(canon_page.contains("<th>canonical</th>"), "{canon_page}");
    assert!(canon_page.contains("http://orig.honest.test/story"), "{canon_page}");
    assert!(!canon_page.contains("<th>noindex</th>"), "{canon_page}");
    let hidden_page = review_page(&db, &format!("http://d.honest.test:{p}/meta-nf"));
    assert!(hidden_page.contains("<th>noindex</th>"), "{hidden_page}");
    assert!(!hidden_page.contains("<th>canonical</th>"), "{hidden_page}");
}

/// The review page of `url` in the store `db` (`ditto review` on loopback, stopped after).
fn review_page(db: &Path, url: &str) -> String {
    use std::io::BufRead;
    let mut child = ditto()
        .args(["review", "--store", db.to_str().unwrap(), "--listen", "127.0.0.1:0", "--reviewer", "t"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let base = line.split_whitespace().find(|w| w.starts_with("http://")).map(str::to_string);
    let body = (|| {
        let authority = base?.trim_start_matches("http://").trim_end_matches('/').to_string();
        let mut conn = TcpStream::connect(&authority).ok()?;
        conn.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
        let q: String = url
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        write!(conn, "GET /p?url={q} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n").ok()?;
        let mut out = String::new();
        conn.read_to_string(&mut out).ok()?;
        Some(out)
    })();
    let _ = child.kill();
    let _ = child.wait();
    body.unwrap_or_else(|| panic!("no review page for {url}"))
}

/// Distinct prose for page `k` (no two pages are replicas).
fn prose(k: u64) -> String {
    let mut x = (k + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..200)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("word{}", x % 5000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `ditto recrawl` sends the earlier capture's `ETag`/`Last-Modified` (from its WARC
/// records); a 304 counts as unchanged, without a body; the summary counts what was
/// fetched; a recrawl cut by its page budget says so and exits non-zero.
#[test]
fn recrawl_sends_validators_and_counts_304s() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let labelset = wikipedia_labelset(dir);
    let version = Arc::new(std::sync::atomic::AtomicU32::new(1));
    let v = version.clone();
    let server = Server::start(Arc::new(move |r: &Req| {
        let Some(k) = r.path.strip_prefix("/p").and_then(|k| k.parse::<u64>().ok()) else {
            return not_found();
        };
        // Version 2 changes pages 0 and 1.
        let ver = if k < 2 { v.load(Ordering::Relaxed) } else { 1 };
        let etag = format!("\"p{k}-v{ver}\"");
        let sent = r.headers.iter().find(|(n, _)| n == "if-none-match").map(|(_, v)| v.as_str());
        if sent == Some(etag.as_str()) {
            return (304, vec![("ETag".into(), etag)], Vec::new());
        }
        let mut resp = html(&format!("<h1>Page {k}</h1><p>{} {ver}</p>", prose(k * 10 + ver as u64)));
        resp.1.push(("ETag".into(), etag));
        resp.1.push(("Last-Modified".into(), "Mon, 01 Jan 2024 00:00:00 GMT".into()));
        resp
    }));
    let p = server.port;
    let urls: Vec<String> = (0..6).map(|k| format!("http://r.honest.test:{p}/p{k}")).collect();
    let resolve = format!("r.honest.test=127.0.0.1:{p}");
    let old_dir = dir.join("old");
    std::fs::create_dir_all(&old_dir).unwrap();
    let warcs = old_dir.join("warcs");
    crawl_with(
        &old_dir,
        &labelset,
        &urls,
        std::slice::from_ref(&resolve),
        &["--warc-dir", warcs.to_str().unwrap(), "--max-depth", "0", "--scope", "any"],
    );
    let old_db = old_dir.join("crawl.db");
    assert!(server.requests().iter().all(|r| !r.headers.iter().any(|(n, _)| n.starts_with("if-"))));
    version.store(2, Ordering::Relaxed);
    let before = server.requests().len();

    let recrawl = |name: &str, extra: &[&str]| {
        let stats = dir.join(format!("{name}.json"));
        let out = ditto()
            .args(["recrawl", "--store", old_db.to_str().unwrap()])
            .args(["--new-store", dir.join(format!("{name}.db")).to_str().unwrap()])
            .args(["--labelset", labelset.to_str().unwrap()])
            .args(["--warc-dir", dir.join(format!("{name}-warcs")).to_str().unwrap()])
            .args(["--stats-json", stats.to_str().unwrap()])
            .args(["--user-agent", UA, "--resolve", &resolve, "--min-delay-ms", "5", "--timeout", "10"])
            .args(["--threads", "1", "--progress", "none"])
            .args(extra)
            .output()
            .unwrap();
        let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
        (out, summary)
    };
    let (out, s) = recrawl("new", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    // Every page was asked for conditionally, with the ETag its capture had.
    let asked: Vec<Req> =
        server.requests()[before..].iter().filter(|r| r.path.starts_with("/p")).cloned().collect();
    assert_eq!(asked.len(), 6, "{asked:?}");
    for r in &asked {
        let k = &r.path[2..];
        let inm = r.headers.iter().find(|(n, _)| n == "if-none-match").map(|(_, v)| v.clone());
        assert_eq!(inm, Some(format!("\"p{k}-v1\"")), "{r:?}");
        assert!(
            r.headers.iter().any(|(n, v)| n == "if-modified-since" && v.starts_with("Mon, 01 Jan 2024")),
            "{r:?}"
        );
    }
    assert_eq!(s["conditional"], 6, "{s}");
    assert_eq!(s["fetched"], 6, "{s}");
    assert_eq!(s["not_modified"], 4, "{s}");
    assert_eq!(s["unfetched"], 0, "{s}");
    assert_eq!(s["stopped_by_budget"], false, "{s}");
    // The changed pages are stored anew; the unchanged ones were not sent again.
    let stored: Vec<String> =
        store::Store::open(&dir.join("new.db")).unwrap().pages().map(|p| p.unwrap().url).collect();
    assert_eq!(stored.len(), 2, "{stored:?}");

    // A budget of 3 pages: cut, said, non-zero.
    let (out, s) = recrawl("cut", &["--max-pages", "3"]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "a recrawl cut by its budget must fail: {stderr}");
    assert!(stderr.contains("page budget"), "{stderr}");
    assert_eq!(s["stopped_by_budget"], true, "{s}");
    assert_eq!(s["fetched"], 3, "{s}");
    assert_eq!(s["unfetched"], 3, "{s}");
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn sha1_hex(data: &[u8]) -> String {
    detector::fingerprint::sha1(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// WARC records hold the messages as sent (issue 38, item 6): a gzip-encoded response (one
/// with a Content-Length, one chunked) is stored with its Content-Encoding and its payload as
/// the server sent it, with correct digests; the request record is the request the server
/// received, byte for byte. warcio (scripts/read_warc_warcio.py) reads every record with its
/// digests checked and decodes the same bodies ditto judged; `ditto scan` of the WARC files
/// gives the crawl's verdicts.
#[test]
fn warc_records_hold_the_messages_as_sent() {
    use crawler::warc::{sha1_base32, WarcReader};

    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let copied = article_paragraphs("Albedo", 100).into_iter().take(8).collect::<Vec<_>>().join("\n");
    let page = |title: &str| format!("<html><head><title>{title}</title></head><body>{copied}</body></html>");
    let (gz_page, chunked_page) = (page("gzip"), page("gzip, chunked"));
    let (gz, gz_chunked) = (gzip(gz_page.as_bytes()), gzip(chunked_page.as_bytes()));
    let (gz2, gz_chunked2) = (gz.clone(), gz_chunked.clone());
    let server = Server::start(Arc::new(move |r: &Req| {
        let encoded = |body: &[u8], chunked: bool| -> Resp {
            let mut h: Vec<(String, String)> = vec![
                ("Content-Type".into(), "text/html; charset=utf-8".into()),
                ("Content-Encoding".into(), "gzip".into()),
            ];
            if chunked {
                h.push(("Transfer-Encoding".into(), "chunked".into()));
            }
            (200, h, body.to_vec())
        };
        match r.path.as_str() {
            "/robots.txt" => not_found(),
            "/" => html("<p>Index.</p><a href=/gz>a</a><a href=/chunked>b</a><a href=/plain>c</a>"),
            "/gz" => encoded(&gz2, false),
            "/chunked" => encoded(&gz_chunked2, true),
            "/plain" => html("<p>A page sent as it is.</p>"),
            _ => not_found(),
        }
    }));
    let p = server.port;
    let warcs = tmp.path().join("warcs");
    crawl_with(
        tmp.path(),
        &labelset,
        &[format!("http://w.honest.test:{p}/")],
        &[format!("w.honest.test=127.0.0.1:{p}")],
        &["--scope", "domain", "--warc-dir", warcs.to_str().unwrap()],
    );
    let url = |path: &str| format!("http://w.honest.test:{p}{path}");
    let reqs = server.requests();
    for path in ["/robots.txt", "/", "/gz", "/chunked", "/plain"] {
        assert!(reqs.iter().any(|r| r.path == path), "{path} not asked for: {reqs:?}");
    }
    for r in &reqs {
        let ae = r.headers.iter().find(|(k, _)| k == "accept-encoding").map(|(_, v)| v.as_str());
        assert_eq!(ae, Some("gzip, deflate, br"), "{r:?}");
    }

    let mut files: Vec<_> = std::fs::read_dir(&warcs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    assert!(!files.is_empty());

    // ditto's own reader: the records byte for byte.
    let mut requests = BTreeMap::new();
    let mut responses = BTreeMap::new();
    for f in &files {
        for rec in WarcReader::open(f).unwrap() {
            let rec = rec.unwrap();
            let uri = rec.target_uri.clone().unwrap_or_default();
            match rec.warc_type.as_str() {
                "request" => {
                    requests.insert(uri, rec);
                }
                "response" => {
                    responses.insert(uri, rec);
                }
                _ => {}
            }
        }
    }
    for r in &reqs {
        let rec = &requests[&url(&r.path)];
        assert_eq!(
            String::from_utf8_lossy(&rec.block),
            String::from_utf8_lossy(&r.raw),
            "the request record is not the request the server received"
        );
    }
    for (path, sent) in [("/gz", &gz), ("/chunked", &gz_chunked)] {
        let rec = &responses[&url(path)];
        let split = rec.block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let head = String::from_utf8_lossy(&rec.block[..split]).to_ascii_lowercase();
        assert!(head.contains("\r\ncontent-encoding: gzip\r\n"), "{head}");
        assert_eq!(&rec.block[split..], sent.as_slice(), "{path}: payload not as sent");
        assert_eq!(rec.header("WARC-Payload-Digest"), Some(sha1_base32(sent).as_str()), "{path}");
        assert_eq!(rec.header("WARC-Block-Digest"), Some(sha1_base32(&rec.block).as_str()), "{path}");
        if path == "/chunked" {
            // Stored de-chunked (the client hands over no chunk framing), and says so.
            assert!(head.contains("\r\nx-ditto-orig-transfer-encoding: chunked\r\n"), "{head}");
            assert!(!head.contains("\r\ntransfer-encoding:"), "{head}");
        } else {
            assert!(head.contains(&format!("\r\ncontent-length: {}\r\n", sent.len())), "{head}");
        }
    }

    // warcio: digests checked, payloads as sent, decoded to the bodies ditto judged.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/read_warc_warcio.py");
    let out = std::process::Command::new("python3").arg(script).args(&files).output().unwrap();
    assert!(out.status.success(), "warcio failed: {}", String::from_utf8_lossy(&out.stderr));
    let seen: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(seen.len(), 2 * reqs.len(), "a request and a response per fetch: {seen:#?}");
    let store = store::Store::open(&tmp.path().join("crawl.db")).unwrap();
    let judged: BTreeMap<String, String> =
        store.pages().map(|r| r.unwrap()).map(|r| (r.url, r.file_hash)).collect();
    drop(store);
    for (path, sent, body) in [("/gz", &gz, &gz_page), ("/chunked", &gz_chunked, &chunked_page)] {
        let rec = seen.iter().find(|r| r["type"] == "response" && r["uri"] == url(path).as_str()).unwrap();
        let ce = rec["http_headers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h[0].as_str().is_some_and(|k| k.eq_ignore_ascii_case("content-encoding")));
        assert_eq!(ce.map(|h| h[1].clone()), Some("gzip".into()), "{rec}");
        assert_eq!(rec["payload_sha1"], sha1_hex(sent), "{path}: warcio's payload is not as sent");
        assert_eq!(rec["payload_digest"], sha1_base32(sent), "{rec}");
        assert_eq!(rec["content_sha1"], sha1_hex(body.as_bytes()), "{path}: warcio decodes another body");
        assert_eq!(
            judged.get(&url(path)),
            Some(&sha1_hex(body.as_bytes())),
            "{path}: ditto judged another body"
        );
    }

    // `ditto scan` of the WARC files: the crawl's verdicts.
    let scan_db = tmp.path().join("rescan.db");
    let mut args =
        vec!["scan", "--store", scan_db.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()];
    args.extend(["--progress", "none", "--threads", "1"]);
    let names: Vec<String> = files.iter().map(|f| f.to_string_lossy().into_owned()).collect();
    args.extend(names.iter().map(String::as_str));
    run_ok(&args);
    let rows = |db: &Path| -> Vec<serde_json::Value> {
        let db = db.to_str().unwrap();
        let out =
            run_ok(&["report", "--store", db, "--level", "page", "--threshold", "0", "--format", "jsonl"]);
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let crawl_db = tmp.path().join("crawl.db");
    let (crawled, rescanned) = (rows(&crawl_db), rows(&scan_db));
    let flagged: Vec<&str> = crawled.iter().map(|r| r["neighborhood"].as_str().unwrap()).collect();
    assert!(
        flagged.contains(&url("/gz").as_str()) && flagged.contains(&url("/chunked").as_str()),
        "{crawled:#?}"
    );
    assert_eq!(crawled, rescanned, "ditto scan of the crawl's WARC files gives other verdicts");
    let pages = |db: &Path| -> Vec<(String, String, u32, u32)> {
        let store = store::Store::open(db).unwrap();
        let v = store.pages().map(|p| p.unwrap()).map(|p| (p.url, p.file_hash, p.chunks, p.labeled_chunks));
        v.collect()
    };
    assert_eq!(pages(&crawl_db), pages(&scan_db), "the scan stored other pages than the crawl");
}

fn xml(body: &str) -> Resp {
    (200, vec![("Content-Type".into(), "application/xml".into())], body.as_bytes().to_vec())
}

fn urlset(urls: &[String]) -> String {
    let locs: String = urls.iter().map(|u| format!("<url><loc>{u}</loc></url>")).collect();
    format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{locs}</urlset>")
}

/// Sitemaps (issue 38, item 3), under `--focus bfs --sitemaps seeds`: robots.txt names a
/// sitemap index whose children are a gzipped urlset (`.xml.gz`, served as
/// `application/gzip`) and a plain one; their URLs, linked from nowhere, are fetched under
/// the usual rules (robots.txt, the seeds' scope); entries on other hosts are not taken.
/// Without `--sitemaps seeds` none of it is read.
#[test]
fn sitemap_index_with_a_gzipped_child() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let port: Arc<Mutex<u16>> = Arc::default();
    let p2 = port.clone();
    let server = Server::start(Arc::new(move |r: &Req| {
        let p = *p2.lock().unwrap();
        let at = |path: &str| format!("http://s.honest.test:{p}{path}");
        if r.host != "s.honest.test" {
            return not_found();
        }
        match r.path.as_str() {
            "/robots.txt" => robots(&format!(
                "User-agent: *\nDisallow: /private\nSitemap: {}\nSitemap: http://other.honest.test/x.xml\n",
                at("/sitemap_index.xml")
            )),
            "/sitemap_index.xml" => xml(&format!(
                "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                 <sitemap><loc>{}</loc></sitemap><sitemap><loc>{}</loc></sitemap>\
                 <sitemap><loc>http://other.honest.test/s.xml</loc></sitemap></sitemapindex>",
                at("/sm/pages.xml.gz"),
                at("/sm/more.xml")
            )),
            "/sm/pages.xml.gz" => {
                let set = urlset(&[
                    at("/deep/a"),
                    at("/deep/b"),
                    at("/private/c"),
                    "http://other.honest.test/z".into(),
                ]);
                (200, vec![("Content-Type".into(), "application/gzip".into())], gzip(set.as_bytes()))
            }
            "/sm/more.xml" => xml(&urlset(&[at("/deep/d"), at("/deep/a")])),
            "/" => html("<p>Home: it links to nothing.</p>"),
            "/deep/a" | "/deep/b" | "/deep/d" | "/private/c" => html("<p>Only a sitemap leads here.</p>"),
            _ => not_found(),
        }
    }));
    let p = server.port;
    *port.lock().unwrap() = p;
    let run = |name: &str, sitemaps: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        crawl_with(
            &dir,
            &labelset,
            &[format!("http://s.honest.test:{p}/")],
            &[format!("*.honest.test=127.0.0.1:{p}")],
            &["--focus", "bfs", "--sitemaps", sitemaps],
        )
        .0
    };
    let stats = run("seeds", "seeds");
    let paths = server.paths("s.honest.test");
    for reached in ["/sitemap_index.xml", "/sm/pages.xml.gz", "/sm/more.xml", "/deep/a", "/deep/b", "/deep/d"]
    {
        assert_eq!(paths.iter().filter(|x| *x == reached).count(), 1, "{reached}: {paths:?}");
    }
    assert!(!paths.iter().any(|x| x.starts_with("/private")), "robots.txt broken: {paths:?}");
    let others: Vec<Req> = server.requests().into_iter().filter(|r| r.host != "s.honest.test").collect();
    assert!(others.is_empty(), "another host was asked: {others:?}");
    assert_eq!(event(&stats, "sitemap_read"), 3, "{stats}");
    assert_eq!(event(&stats, "sitemap_children_queued"), 2, "{stats}");
    // /deep/a twice (queued once), /private/c queued and then disallowed.
    assert_eq!(event(&stats, "sitemap_urls"), 5, "{stats}");
    assert_eq!(event(&stats, "sitemap_urls_queued"), 4, "{stats}");
    // robots.txt's line, the index's child and the urlset's entry on other.honest.test.
    assert_eq!(event(&stats, "sitemap_offsite"), 3, "{stats}");
    assert_eq!(event(&stats, "robots_disallowed"), 1, "{stats}");
    // Sitemaps are requests, not pages: the seed and the four pages.
    assert_eq!(stats["crawl"]["pages"], 4, "{stats}");

    let before = server.requests().len();
    let stats = run("off", "auto");
    let paths: Vec<String> = server.requests()[before..].iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/robots.txt", "/"], "a bfs crawl without --sitemaps seeds reads none: {stats}");
}

/// Under `--focus labeled` (`--sitemaps auto`, the default) the sitemap of a host whose pages
/// showed copied content is read, and only that one: its unlinked copies are found; the seed's
/// host, which showed none, is never asked for a sitemap. `--sitemaps off` reads none.
#[test]
fn a_focused_crawl_reads_the_sitemaps_of_copying_hosts() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let copied =
        |title: &str| article_paragraphs(title, 100).into_iter().take(8).collect::<Vec<_>>().join("\n");
    let (albedo, aardvark) = (copied("Albedo"), copied("Aardvark"));
    let port: Arc<Mutex<u16>> = Arc::default();
    let p2 = port.clone();
    let server = Server::start(Arc::new(move |r: &Req| {
        let p = *p2.lock().unwrap();
        match (r.host.as_str(), r.path.as_str()) {
            (_, "/robots.txt") => not_found(),
            ("seed.honest.test", "/") => {
                html(&format!("<p>A blog post.</p><a href=\"http://copier.honest.test:{p}/copy\">a copy</a>"))
            }
            ("copier.honest.test", "/copy") => html(&format!("<html><body>{albedo}</body></html>")),
            ("copier.honest.test", "/sitemap.xml") => {
                xml(&urlset(&[format!("http://copier.honest.test:{p}/hidden")]))
            }
            ("copier.honest.test", "/hidden") => html(&format!("<html><body>{aardvark}</body></html>")),
            _ => not_found(),
        }
    }));
    let p = server.port;
    *port.lock().unwrap() = p;
    let run = |name: &str, extra: &[&str]| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let mut flags = vec!["--scope", "any"];
        flags.extend_from_slice(extra);
        crawl_with(
            &dir,
            &labelset,
            &[format!("http://seed.honest.test:{p}/")],
            &[format!("*.honest.test=127.0.0.1:{p}")],
            &flags,
        )
        .0
    };
    let stats = run("auto", &[]);
    let copier = server.paths("copier.honest.test");
    assert!(
        copier.contains(&"/sitemap.xml".to_string()) && copier.contains(&"/hidden".to_string()),
        "{copier:?}"
    );
    assert!(
        !server.paths("seed.honest.test").contains(&"/sitemap.xml".to_string()),
        "the seed's host showed no copy"
    );
    assert_eq!((event(&stats, "sitemap_read"), event(&stats, "sitemap_urls_queued")), (1, 1), "{stats}");
    // The copies the sitemap led to are judged as copies.
    let store = store::Store::open(&tmp.path().join("auto").join("crawl.db")).unwrap();
    let hidden =
        store.pages().map(|r| r.unwrap()).find(|r| r.url.ends_with("/hidden")).expect("/hidden stored");
    assert!(hidden.labeled_chunks > 0, "{hidden:?}");
    drop(store);

    let before = server.requests().len();
    run("off", &["--sitemaps", "off"]);
    let later: Vec<String> = server.requests()[before..].iter().map(|r| r.path.clone()).collect();
    assert!(!later.iter().any(|x| x == "/sitemap.xml" || x == "/hidden"), "{later:?}");
}
