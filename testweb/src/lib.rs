//! `testweb`: a small web served on loopback only, for tests, benchmarks and `ditto demo`;
//! and a throwaway loopback Redis ([`LocalRedis`]) for the partitioned-crawl tests.
//!
//! One HTTP/1.1 server on a loopback port answers for many virtual hosts: it dispatches on
//! the `Host` header (port stripped, lower-cased) to a [`Site`], and each site maps paths to
//! [`Resource`]s — plain pages, redirects, throttling statuses, and the hostile things a
//! crawler must survive (endless bodies, gzip bombs, slow drips, huge headers).
//!
//! Crawlers reach it by name with a resolve override, e.g. the crawler's
//! `--resolve '*.demo.test=127.0.0.1:PORT'` or reqwest's `ClientBuilder::resolve(host, addr)`;
//! URLs stay port-less (`http://wiki.demo.test/`). Nothing here ever binds or contacts a
//! non-loopback address: [`serve_on`] refuses one.
//!
//! The server keeps its own [`RequestLog`] (arrival timestamps, per-host in-flight counts), so
//! tests measure politeness from the server's side rather than trusting the crawler.
//!
//! [`FileServer`] serves a folder's files with HTTP Range support (and broken transfers on
//! request) for the remote-input tests of `ditto scan`.
//!
//! Built-in webs: [`demo_web`] (for `ditto demo`, hosts under `.demo.test`), [`hostile_web`]
//! (the crawler's hostile-server suite) and [`many_hosts_web`] (throughput benchmarks).
//!
//! [`edited`] writes a different kind of test web, as files: content farms copying labeled
//! Wikipedia articles with the edits spinners make, beside innocent sites, and the truth
//! (issue 36; `cargo run --release -p testweb --example gen_edited_web`).

mod bodies;
mod demo;
pub mod edited;
mod files;
mod hostile;
mod log;
mod redis;
mod server;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;

pub use bodies::BOMB_INFLATED_BYTES;
pub use demo::{demo_articles, demo_seeds, demo_web, DEMO_HOSTS, DEMO_SUFFIX};
pub use files::{FileServer, Transfers};
pub use hostile::{
    hostile_seeds, hostile_web, many_hosts_seeds, many_hosts_web, DRIP_BYTES_PER_SEC, DRIP_TOTAL,
    HOSTILE_HOSTS, HUGE_HEADER_BYTES,
};
pub use log::{RequestLog, RequestRecord};
pub use redis::LocalRedis;
pub use server::{serve, serve_on, TestWeb, TestWebHandle};

/// A generator for pattern pages: called with the request's host (lower-case, no port) and
/// its path with query; `None` answers 404. Must not panic: both arguments come off the wire.
pub type Generator = Arc<dyn Fn(&str, &str) -> Option<Resource> + Send + Sync>;

/// How long a client should wait, sent as a `Retry-After` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// `Retry-After: <seconds>`.
    Seconds(u64),
    /// `Retry-After: <HTTP-date>`, the date computed when the response is sent as now + this
    /// (rounded down to whole seconds by the date format, so it can read up to 1 s early).
    DateIn(Duration),
    /// The header value as given (for malformed values).
    Raw(String),
}

/// What one path of a [`Site`] answers.
#[derive(Clone)]
pub enum Resource {
    /// `200 text/html`, with `; charset=<charset>` when given. `body` is bytes on purpose: the
    /// wrong-charset cases serve bytes that are not what the label says.
    Html { body: Bytes, charset: Option<&'static str>, extra_headers: Vec<(String, String)> },
    /// `200` with any content type (images, PDFs, robots.txt, plain text).
    Bytes { content_type: String, body: Bytes },
    /// A redirect (`status` 301/302/303/307/308) to `location`, which may be relative.
    Redirect { status: u16, location: String },
    /// Answer `code` (with `Retry-After` when given) to the first `times` requests for this
    /// path; after that serve `then`, or keep answering `code` when `then` is `None`.
    Status { code: u16, retry_after: Option<RetryAfter>, times: u32, then: Option<Box<Resource>> },
    /// `200 text/html`, chunked, streaming 64 KiB chunks forever until the client disconnects.
    EndlessBody,
    /// `200 text/html` with `Content-Encoding: gzip`: about 250 KiB on the wire that inflates to
    /// 256 MiB of spaces (built once, lazily, in milliseconds: see `bodies.rs`).
    GzipBomb,
    /// `200 text/html` with `Content-Length: total`, sent at about `bytes_per_sec`.
    SlowDrip { bytes_per_sec: u32, total: u64 },
    /// `200 text/html` with one header (`X-Huge`) whose value is `bytes` long.
    HugeHeaders { bytes: usize },
    /// A pattern: in [`Site::pages`] under a key ending in `/`, it answers every path below
    /// that prefix not matched exactly (longest prefix wins), by calling the generator.
    Generated(Generator),
}

impl Resource {
    /// A UTF-8 HTML page.
    pub fn html(body: impl Into<String>) -> Resource {
        Resource::Html { body: Bytes::from(body.into()), charset: Some("utf-8"), extra_headers: Vec::new() }
    }

    /// Bytes with a content type.
    pub fn bytes(content_type: &str, body: impl Into<Bytes>) -> Resource {
        Resource::Bytes { content_type: content_type.to_string(), body: body.into() }
    }

    /// A plain-text resource (`text/plain; charset=utf-8`).
    pub fn text(body: impl Into<String>) -> Resource {
        Resource::bytes("text/plain; charset=utf-8", body.into())
    }

    /// A redirect.
    pub fn redirect(status: u16, location: &str) -> Resource {
        Resource::Redirect { status, location: location.to_string() }
    }

    /// `code` for the first `times` requests, then `then`.
    pub fn status_then(code: u16, retry_after: Option<RetryAfter>, times: u32, then: Resource) -> Resource {
        Resource::Status { code, retry_after, times, then: Some(Box::new(then)) }
    }

    /// A pattern resource from a closure `(host, path_and_query) -> Option<Resource>`.
    pub fn generated(f: impl Fn(&str, &str) -> Option<Resource> + Send + Sync + 'static) -> Self {
        Resource::Generated(Arc::new(f))
    }
}

impl fmt::Debug for Resource {
    // Bodies can be large; show kinds and sizes only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Html { body, charset, .. } => {
                write!(f, "Html({} bytes, charset {charset:?})", body.len())
            }
            Resource::Bytes { content_type, body } => {
                write!(f, "Bytes({content_type}, {} bytes)", body.len())
            }
            Resource::Redirect { status, location } => write!(f, "Redirect({status} {location})"),
            Resource::Status { code, retry_after, times, then } => {
                write!(f, "Status({code}, {retry_after:?}, {times} times, then {then:?})")
            }
            Resource::EndlessBody => f.write_str("EndlessBody"),
            Resource::GzipBomb => f.write_str("GzipBomb"),
            Resource::SlowDrip { bytes_per_sec, total } => {
                write!(f, "SlowDrip({bytes_per_sec} B/s, {total} bytes)")
            }
            Resource::HugeHeaders { bytes } => write!(f, "HugeHeaders({bytes} bytes)"),
            Resource::Generated(_) => f.write_str("Generated"),
        }
    }
}

/// One virtual host.
#[derive(Clone, Debug, Default)]
pub struct Site {
    /// Path (optionally with `?query`) → resource. Lookup order: exact path+query, exact path,
    /// then the longest `Generated` entry whose key (ending in `/`) prefixes the path.
    pub pages: BTreeMap<String, Resource>,
    /// Served as `/robots.txt` (`text/plain`) unless `pages` has its own `/robots.txt` entry
    /// (e.g. a 503); `None` and no entry: 404, which RFC 9309 reads as "allow all".
    pub robots_txt: Option<String>,
    /// Wait this long before answering any request to this host (a slow server; also makes
    /// in-flight overlap observable).
    pub latency: Duration,
}

impl Site {
    /// An empty site with a robots.txt.
    pub fn with_robots(robots_txt: &str) -> Site {
        Site { robots_txt: Some(robots_txt.to_string()), ..Site::default() }
    }

    /// Adds a page (builder style).
    pub fn page(mut self, path: &str, resource: Resource) -> Site {
        self.pages.insert(path.to_string(), resource);
        self
    }
}

/// A whole test web: host name → site. A key `*.suffix` answers every host ending in
/// `.suffix` that has no exact entry (the longest matching suffix wins).
#[derive(Clone, Debug, Default)]
pub struct WebSpec {
    pub hosts: BTreeMap<String, Site>,
}

impl WebSpec {
    /// Adds a host (builder style); the name is lower-cased.
    pub fn host(mut self, name: &str, site: Site) -> WebSpec {
        self.hosts.insert(name.to_ascii_lowercase(), site);
        self
    }

    /// The site answering `host` (lower-case, no port), exact names first, then `*.suffix`.
    pub fn site_for(&self, host: &str) -> Option<&Site> {
        if let Some(site) = self.hosts.get(host) {
            return Some(site);
        }
        // Try ever-shorter suffixes: a.b.c → *.b.c → *.c.
        let mut rest = host;
        while let Some(dot) = rest.find('.') {
            rest = &rest[dot + 1..];
            if let Some(site) = self.hosts.get(&format!("*.{rest}")) {
                return Some(site);
            }
        }
        None
    }

    /// Host names this web answers (wildcards as `*.suffix`).
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.keys().cloned().collect()
    }

    /// Merges another web into this one (its hosts win on a clash).
    pub fn merge(mut self, other: WebSpec) -> WebSpec {
        self.hosts.extend(other.hosts);
        self
    }
}

/// HTML-escapes text for element content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A minimal UTF-8 HTML page with a title and body markup.
pub(crate) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head><body>\n{}\n</body></html>\n",
        escape(title),
        body
    )
}
