//! The hostile-server web for the crawler's safety suite, and a many-host web for
//! throughput benchmarks.
//!
//! [`hostile_web`] — every path is linked from `http://hostile.test/`, so a crawl seeded
//! there discovers all of them (and the other hosts):
//!
//! | URL | what the server does | what a polite, safe crawler does |
//! | --- | --- | --- |
//! | `hostile.test/robots.txt` | `User-agent: *` / `Disallow: /forbidden/` | fetches it once per host, caches it |
//! | `hostile.test/forbidden/secret.html` | a page, linked from `/` | never requests it |
//! | `hostile.test/ok.html` | a plain UTF-8 page | fetches it once |
//! | `hostile.test/missing.html` | 404 | records the 404, does not retry |
//! | `hostile.test/retry-seconds` | `429`, `Retry-After: 2` for the first request, then 200 | waits ≥ 2 s, fetches again, gets the page |
//! | `hostile.test/retry-date` | `429`, `Retry-After` as an HTTP date ~3 s ahead, once, then 200 | waits until that date, then fetches |
//! | `hostile.test/unavailable` | `503` without `Retry-After`, twice, then 200 | backs off (exponential, jitter, capped), then succeeds |
//! | `hostile.test/endless` | 200, chunked HTML that never ends | stops at its body size cap and closes the connection; keeps the HTML up to the cap |
//! | `hostile.test/bomb` | 200, `Content-Encoding: gzip`, ~250 KiB inflating to 256 MiB | stops inflating at its cap; memory stays bounded; keeps the HTML up to the cap |
//! | `hostile.test/drip` | 200, `Content-Length: 65536`, sent at 256 B/s (about 4 min) | gives up at its read/total timeout |
//! | `hostile.test/loop/a`, `/loop/b` | `302` to each other, forever | stops at its hop limit (or on seeing a repeat) |
//! | `hostile.test/redirect` | `301` to `/ok.html` | follows it (robots and scope checked per hop) |
//! | `hostile.test/huge-headers` | 200 with a 1 MiB `X-Huge` header | fails the fetch cleanly (header size limit), carries on |
//! | `hostile.test/charset/cp1252` | windows-1252 bytes labeled `charset=utf-8` | decodes without crashing (replacement characters) |
//! | `hostile.test/charset/sjis` | Shift_JIS bytes, `text/html` with no charset; only `<meta>` names it | sniffs the meta charset and decodes the Japanese text |
//! | `hostile.test/image.png` | `image/png` (a 1×1 PNG) | refuses it after the headers, body not read (content-type filter) |
//! | `hostile.test/doc.pdf` | `application/pdf` | same |
//! | `delay.test/`, `/p/1`…`/p/5` | robots.txt has `Crawl-delay: 1` | ≥ 1 s between its requests to this host |
//! | `slow.test/`, `/p/1`…`/p/3` | every response waits 500 ms first | one request in flight; may scale its delay to response time |
//! | `robots-error.test/robots.txt` | `503` always | treats the host as fully disallowed: requests nothing else there |
//! | `no-robots.test/robots.txt` | `404` | treats it as allow-all and crawls `/` and `/page.html` |
//!
//! Every host here is answered by the same server; resolve each (or `*.test`) to it.

use std::time::Duration;

use axum::body::Bytes;

use super::{escape, page, Resource, RetryAfter, Site, WebSpec};

/// Every host of [`hostile_web`].
pub const HOSTILE_HOSTS: &[&str] =
    &["hostile.test", "delay.test", "slow.test", "robots-error.test", "no-robots.test"];

/// Where the hostile suite starts crawling.
pub fn hostile_seeds() -> Vec<String> {
    vec!["http://hostile.test/".to_string()]
}

/// A 1×1 RGB PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00,
    0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01,
    0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60,
    0x82,
];

/// A tiny one-page PDF.
const PDF: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

/// Windows-1252 bytes (é, ï, curly quotes, en dash) that the header calls UTF-8.
const CP1252_HTML: &[u8] = b"<!DOCTYPE html>\n<html><head><title>Caf\xe9 menu</title></head><body>\n<h1>Caf\xe9 menu</h1>\n<p>Our na\xefve r\xe9sum\xe9 of \x93house specials\x94 \x96 cr\xe8me br\xfbl\xe9e, p\xe2t\xe9 and caf\xe9 au lait \x96 is written in Windows-1252 but labeled UTF-8.</p>\n</body></html>\n";

/// Shift_JIS bytes whose only charset label is the meta element.
const SJIS_HTML: &[u8] = b"<!DOCTYPE html>\n<html><head><meta http-equiv=\x22Content-Type\x22 content=\x22text/html; charset=Shift_JIS\x22><title>\x95\xb6\x8e\x9a\x83R\x81[\x83h\x82\xcc\x83e\x83X\x83g</title></head><body>\n<h1>\x95\xb6\x8e\x9a\x83R\x81[\x83h\x82\xcc\x83e\x83X\x83g</h1>\n<p>\x82\xb1\x82\xcc\x83y\x81[\x83W\x82\xcd\x83V\x83t\x83gJIS\x82\xc5\x8f\x91\x82\xa9\x82\xea\x82\xc4\x82\xa2\x82\xdc\x82\xb7\x81BHTTP\x83w\x83b\x83_\x81[\x82\xc9\x82\xcd\x95\xb6\x8e\x9a\x83R\x81[\x83h\x82\xaa\x82\xc8\x82\xad\x81A\x83\x81\x83^\x97v\x91f\x82\xbe\x82\xaf\x82\xaa\x90\xb3\x82\xb5\x82\xa2\x95\xb6\x8e\x9a\x83R\x81[\x83h\x82\xf0\x8e\xa6\x82\xb5\x82\xc4\x82\xa2\x82\xdc\x82\xb7\x81B\x83N\x83\x8d\x81[\x83\x89\x81[\x82\xcd\x83\x81\x83^\x97v\x91f\x82\xf0\x93\xc7\x82\xf1\x82\xc5\x90\xb3\x82\xb5\x82\xad\x89\xf0\x93\xc7\x82\xb7\x82\xe9\x82\xd7\x82\xab\x82\xc5\x82\xb7\x81B</p>\n</body></html>\n";

/// What [`Resource::HugeHeaders`] sends on `/huge-headers`.
pub const HUGE_HEADER_BYTES: usize = 1 << 20;

/// The drip's rate and size.
pub const DRIP_BYTES_PER_SEC: u32 = 256;
pub const DRIP_TOTAL: u64 = 64 * 1024;

/// The hostile web (table in the module docs).
pub fn hostile_web() -> WebSpec {
    WebSpec::default()
        .host("hostile.test", hostile_site())
        .host("delay.test", numbered_site("Crawl-delay", "User-agent: *\nCrawl-delay: 1\n", 5, Duration::ZERO))
        .host("slow.test", numbered_site("Slow server", "User-agent: *\nDisallow:\n", 3, Duration::from_millis(500)))
        .host(
            "robots-error.test",
            Site::default()
                .page("/robots.txt", Resource::Status { code: 503, retry_after: None, times: 0, then: None })
                .page("/", Resource::html(page("Robots error", "<p>Never fetched by a polite crawler: robots.txt is failing.</p><p><a href=\"/page.html\">page</a></p>")))
                .page("/page.html", Resource::html(page("Robots error page", "<p>Never fetched either.</p>"))),
        )
        .host(
            "no-robots.test",
            Site::default()
                .page("/", Resource::html(page("No robots", "<p>No robots.txt here (404): allow all.</p><p><a href=\"/page.html\">page</a></p>")))
                .page("/page.html", Resource::html(page("No robots page", "<p>Crawlable.</p>"))),
        )
}

fn hostile_site() -> Site {
    let links = [
        ("/ok.html", "a plain page"),
        ("/missing.html", "a missing page"),
        ("/forbidden/secret.html", "disallowed by robots.txt"),
        ("/retry-seconds", "429 with Retry-After in seconds"),
        ("/retry-date", "429 with Retry-After as a date"),
        ("/unavailable", "503 without Retry-After"),
        ("/endless", "an endless body"),
        ("/bomb", "a gzip bomb"),
        ("/drip", "a slow drip"),
        ("/loop/a", "a redirect loop"),
        ("/redirect", "a plain redirect"),
        ("/huge-headers", "huge headers"),
        ("/charset/cp1252", "windows-1252 labeled utf-8"),
        ("/charset/sjis", "Shift_JIS named by meta only"),
        ("/image.png", "an image"),
        ("/doc.pdf", "a PDF"),
        ("http://delay.test/", "a host with Crawl-delay"),
        ("http://slow.test/", "a slow host"),
        ("http://robots-error.test/", "a host whose robots.txt fails"),
        ("http://no-robots.test/", "a host without robots.txt"),
    ];
    let mut index = String::from("<h1>Hostile server</h1>\n<ul>\n");
    for (href, text) in links {
        index.push_str(&format!("<li><a href=\"{href}\">{}</a></li>\n", escape(text)));
    }
    index.push_str("</ul>");
    let ok = |title: &str| {
        Resource::html(page(title, &format!("<h1>{}</h1><p>Finally, the page itself.</p>", escape(title))))
    };

    Site::with_robots("User-agent: *\nDisallow: /forbidden/\n")
        .page("/", Resource::html(page("Hostile server", &index)))
        .page("/ok.html", ok("OK"))
        .page("/forbidden/secret.html", ok("Forbidden"))
        .page(
            "/retry-seconds",
            Resource::status_then(429, Some(RetryAfter::Seconds(2)), 1, ok("Retry seconds")),
        )
        .page(
            "/retry-date",
            Resource::status_then(429, Some(RetryAfter::DateIn(Duration::from_secs(3))), 1, ok("Retry date")),
        )
        .page("/unavailable", Resource::status_then(503, None, 2, ok("Unavailable")))
        .page("/endless", Resource::EndlessBody)
        .page("/bomb", Resource::GzipBomb)
        .page("/drip", Resource::SlowDrip { bytes_per_sec: DRIP_BYTES_PER_SEC, total: DRIP_TOTAL })
        .page("/loop/a", Resource::redirect(302, "/loop/b"))
        .page("/loop/b", Resource::redirect(302, "/loop/a"))
        .page("/redirect", Resource::redirect(301, "/ok.html"))
        .page("/huge-headers", Resource::HugeHeaders { bytes: HUGE_HEADER_BYTES })
        .page(
            "/charset/cp1252",
            Resource::Html {
                body: Bytes::from_static(CP1252_HTML),
                charset: Some("utf-8"),
                extra_headers: Vec::new(),
            },
        )
        .page(
            "/charset/sjis",
            Resource::Html { body: Bytes::from_static(SJIS_HTML), charset: None, extra_headers: Vec::new() },
        )
        .page("/image.png", Resource::bytes("image/png", Bytes::from_static(PNG)))
        .page("/doc.pdf", Resource::bytes("application/pdf", Bytes::from_static(PDF)))
}

/// `/` linking `/p/1`…`/p/n`, each page linking the next.
fn numbered_site(name: &str, robots: &str, n: usize, latency: Duration) -> Site {
    let mut index = format!("<h1>{}</h1>\n<ul>\n", escape(name));
    let mut site = Site::with_robots(robots);
    for i in 1..=n {
        index.push_str(&format!("<li><a href=\"/p/{i}\">page {i}</a></li>\n"));
        let next = if i < n { format!("<a href=\"/p/{}\">next</a>", i + 1) } else { String::new() };
        site.pages.insert(
            format!("/p/{i}"),
            Resource::html(page(
                &format!("{name} {i}"),
                &format!("<p>{} page {i}.</p><p>{next}</p>", escape(name)),
            )),
        );
    }
    index.push_str("</ul>");
    site.pages.insert("/".into(), Resource::html(page(name, &index)));
    site.latency = latency;
    site
}

/// A web of `hosts` virtual hosts `h0.bench.test` … (one `*.bench.test` entry), each with
/// `/` linking `/p/0`…, every page linking the next page and the next host's `/`, so a
/// crawl from `http://h0.bench.test/` reaches all `hosts × (pages_per_host + 1)` pages.
/// Page text is distinct per host and page. For throughput and politeness benchmarks.
pub fn many_hosts_web(hosts: usize, pages_per_host: usize) -> WebSpec {
    let site = Site::with_robots("User-agent: *\nDisallow:\n").page(
        "/",
        Resource::generated(move |host, path| {
            let i: usize = host.strip_prefix('h')?.strip_suffix(".bench.test")?.parse().ok()?;
            if i >= hosts {
                return None;
            }
            let next_host = format!("http://h{}.bench.test/", (i + 1) % hosts);
            if path == "/" {
                let mut body = format!("<h1>Host {i}</h1>\n<ul>\n");
                for k in 0..pages_per_host {
                    body.push_str(&format!("<li><a href=\"/p/{k}\">page {k}</a></li>\n"));
                }
                body.push_str(&format!("</ul>\n<p><a href=\"{next_host}\">next host</a></p>"));
                return Some(Resource::html(page(&format!("Host {i}"), &body)));
            }
            let k: usize = path.strip_prefix("/p/")?.parse().ok()?;
            if k >= pages_per_host {
                return None;
            }
            let body = format!(
                "<h1>Host {i}, page {k}</h1>\n<p>This is page {k} of benchmark host {i}. Its text                  differs from every other page so that nothing here looks copied: {i} times {k}                  is {}, and {i} plus {k} is {}.</p>\n<p><a href=\"/p/{}\">next page</a>                  <a href=\"{next_host}\">next host</a></p>",
                i * k,
                i + k,
                (k + 1) % pages_per_host.max(1),
            );
            Some(Resource::html(page(&format!("Host {i} page {k}"), &body)))
        }),
    );
    WebSpec::default().host("*.bench.test", site)
}

/// Seeds for [`many_hosts_web`]: every host's `/`.
pub fn many_hosts_seeds(hosts: usize) -> Vec<String> {
    (0..hosts).map(|i| format!("http://h{i}.bench.test/")).collect()
}
