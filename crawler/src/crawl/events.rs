//! Crawl events and the counters a crawl keeps: what happened to requests and URLs, counted
//! by [`CrawlEvent`] and read by name for the report, the progress line and `--metrics`.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use super::retire::RetireReason;
use crate::error::FetchErrorKind;

/// One thing that happened in a crawl. Its [`name`](Self::name) is what the report's
/// `events`, `ditto stats` and `--metrics` show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CrawlEvent {
    /// A URL robots.txt disallows, finished without a request.
    RobotsDisallowed,
    /// A URL of a host that reached `per_host_max_pages`, finished without a request.
    HostBudgetExhausted,
    /// The SSRF guard refused the address of a host when fetching its robots.txt: nothing
    /// there is fetched.
    RobotsRefusedAddress,
    /// robots.txt set a Crawl-delay, applied to the host.
    CrawlDelayHonored,
    /// The robots.txt fetch was throttled or failed: the host backs off.
    RobotsBackoff,
    /// robots.txt was unreachable or 5xx: the host is not crawled until it is asked again.
    RobotsUnavailableDisallowAll,
    /// A page fetch failed (`error_{kind}`). A URL of a host whose address was refused is
    /// counted as `error_refused_address` too, though no request is sent.
    FetchError(FetchErrorKind),
    /// A host rests after repeated failures.
    HostParked,
    /// A 429/503 with Retry-After: the host waits as told.
    BackoffRetryAfter,
    /// A 429/503 without Retry-After: exponential backoff.
    BackoffExponential,
    /// A response with this HTTP status (`http_{status}`).
    HttpStatus(u16),
    /// A body cut at the size cap.
    BodyTruncated,
    /// A redirect past `max_redirects`, not followed.
    RedirectLimit,
    /// The page consumer stopped: the page's ticket stays in flight (fetched on resume).
    SinkClosed,
    /// A 2xx body over the size cap that is not a page: refused by its Content-Length, or
    /// read to the cap and not HTML or text. (HTML and text over the cap are kept cut.)
    SkippedTooLarge,
    /// A 2xx response that is not a text type we read, not handed on.
    SkippedNotText,
    /// A 2xx body refused after the headers, not read (its type, or its Content-Length over
    /// the cap; counted as `skipped_not_text` or `skipped_too_large` too).
    BodyRefusedAfterHeaders,
    /// A link, seed or redirect target carried credentials (`user:secret@`): removed, never
    /// sent.
    CredentialsStripped,
    /// A page said `nofollow` (meta robots or `X-Robots-Tag`): its links are not followed
    /// (counted as `links_rejected.nofollow`).
    PageNofollow,
    /// A page said `noindex`: still read and judged, and recorded as such.
    PageNoindex,
    /// A page named a canonical URL other than its own (`<link rel="canonical">`).
    PageCanonicalElsewhere,
    /// A `<meta http-equiv="refresh">` target queued as a redirect.
    MetaRefreshFollowed,
    /// A 304 to a conditional request: unchanged since the stored capture, no body.
    NotModified,
    /// A URL that failed on every one of its tries (429, 5xx, timeouts, refused
    /// connections), finished as failed.
    RetriesExhausted,
    /// A host retired (`host_retired_{reason}`): its connections failed again and again, or
    /// its robots.txt was unreachable ([`super::retire`]).
    HostRetired(RetireReason),
    /// A URL of a retired host, finished as failed without a request
    /// (`retired_url_{reason}`).
    RetiredUrl(RetireReason),
    /// A fetch failed on a pooled connection the server had closed and was sent again on a
    /// fresh one, spending no budget (`crate::connections`).
    StaleConnectionRetried,
    /// A request or address lookup that waited for a socket: the sockets held had reached
    /// the bound under the descriptor limit (`crate::fetch_sockets`).
    SocketWaited,
    /// The idle pooled connections all dropped to free sockets for other hosts.
    SocketPoolFlushed,
    /// A sitemap file read (robots.txt `Sitemap:`, `/sitemap.xml`, or an index's child).
    SitemapRead,
    /// A sitemap that was neither XML nor URL lines, or a gzip stream that did not inflate.
    SitemapUnreadable,
    /// A sitemap file longer than 50 MB uncompressed (or cut at the fetch's cap): read as
    /// far as it came.
    SitemapTruncated,
    /// Page URLs taken from sitemaps: on the sitemap's own host, admitted by the usual rules
    /// (scope, traps, depth), within the host's page budget.
    SitemapUrls,
    /// Sitemap URLs new to the frontier (scope, traps and depth passed, not seen before).
    SitemapUrlsQueued,
    /// Sitemaps an index listed, queued to be read.
    SitemapChildrenQueued,
    /// Sitemap entries on another host than the sitemap's, or robots.txt `Sitemap:` lines
    /// naming another host: not taken.
    SitemapOffsite,
    /// URLs past the 50,000 a sitemap file may list.
    SitemapUrlCap,
    /// Sitemap URLs past the host's page budget (`per_host_max_pages`), not taken.
    SitemapHostBudget,
    /// Sitemaps past the most read per host (`MAX_SITEMAP_FILES_PER_HOST`), not taken.
    SitemapFileCap,
}

impl CrawlEvent {
    /// The stable name of the event (`robots_disallowed`, `error_timeout`, `http_404`, …).
    pub fn name(&self) -> Cow<'static, str> {
        let name = match self {
            Self::RobotsDisallowed => "robots_disallowed",
            Self::HostBudgetExhausted => "host_budget_exhausted",
            Self::RobotsRefusedAddress => "robots_refused_address",
            Self::CrawlDelayHonored => "crawl_delay_honored",
            Self::RobotsBackoff => "robots_backoff",
            Self::RobotsUnavailableDisallowAll => "robots_unavailable_disallow_all",
            Self::FetchError(kind) => return Cow::Owned(format!("error_{}", kind.as_str())),
            Self::HostParked => "host_parked",
            Self::BackoffRetryAfter => "backoff_retry_after",
            Self::BackoffExponential => "backoff_exponential",
            Self::HttpStatus(status) => return Cow::Owned(format!("http_{status}")),
            Self::BodyTruncated => "body_truncated",
            Self::RedirectLimit => "redirect_limit",
            Self::SinkClosed => "sink_closed",
            Self::SkippedTooLarge => "skipped_too_large",
            Self::SkippedNotText => "skipped_not_text",
            Self::BodyRefusedAfterHeaders => "body_refused_after_headers",
            Self::CredentialsStripped => "credentials_stripped",
            Self::PageNofollow => "page_nofollow",
            Self::PageNoindex => "page_noindex",
            Self::PageCanonicalElsewhere => "page_canonical_elsewhere",
            Self::MetaRefreshFollowed => "meta_refresh_followed",
            Self::NotModified => "not_modified",
            Self::RetriesExhausted => "retries_exhausted",
            Self::HostRetired(r) => return Cow::Owned(format!("host_retired_{}", r.as_str())),
            Self::RetiredUrl(r) => return Cow::Owned(format!("retired_url_{}", r.as_str())),
            Self::StaleConnectionRetried => "stale_connection_retried",
            Self::SocketWaited => "socket_waited",
            Self::SocketPoolFlushed => "socket_pool_flushed",
            Self::SitemapRead => "sitemap_read",
            Self::SitemapUnreadable => "sitemap_unreadable",
            Self::SitemapTruncated => "sitemap_truncated",
            Self::SitemapUrls => "sitemap_urls",
            Self::SitemapUrlsQueued => "sitemap_urls_queued",
            Self::SitemapChildrenQueued => "sitemap_children_queued",
            Self::SitemapOffsite => "sitemap_offsite",
            Self::SitemapUrlCap => "sitemap_url_cap",
            Self::SitemapHostBudget => "sitemap_host_budget",
            Self::SitemapFileCap => "sitemap_file_cap",
        };
        Cow::Borrowed(name)
    }
}

impl fmt::Display for CrawlEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Counters of a crawl, also read live for progress and metrics.
#[derive(Debug, Default)]
pub struct CrawlCounters {
    pub requests: AtomicU64,
    pub pages_out: AtomicU64,
    pub robots_fetches: AtomicU64,
    pub in_flight: AtomicU64,
    pub hosts_active: AtomicU64,
    pub queued_hosts: AtomicU64,
    /// Hosts retired now ([`super::RetireConfig`]).
    pub retired_hosts: AtomicU64,
    /// IP addresses whose hosts the crawl knows ([`super::ServerConfig`]).
    pub servers: AtomicU64,
    events: Mutex<HashMap<CrawlEvent, u64>>,
}

impl CrawlCounters {
    /// Count one event.
    pub fn event(&self, event: CrawlEvent) {
        self.add(event, 1);
    }

    /// Count `n` occurrences of an event (none: nothing recorded).
    pub fn add(&self, event: CrawlEvent, n: u64) {
        if n > 0 {
            *self.events.lock().unwrap_or_else(|e| e.into_inner()).entry(event).or_default() += n;
        }
    }

    /// How often `event` happened so far.
    pub fn count(&self, event: CrawlEvent) -> u64 {
        self.events.lock().unwrap_or_else(|e| e.into_inner()).get(&event).copied().unwrap_or(0)
    }

    /// Every event so far by name, in name order: the one view the report, the progress
    /// line and `--metrics` read.
    /// Occurrences of the events `which` selects (e.g. all fetch errors).
    pub fn sum(&self, which: impl Fn(&CrawlEvent) -> bool) -> u64 {
        let events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        events.iter().filter(|(e, _)| which(e)).map(|(_, n)| n).sum()
    }

    pub fn events(&self) -> BTreeMap<String, u64> {
        let events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let mut by_name = BTreeMap::new();
        for (event, n) in events.iter() {
            *by_name.entry(event.name().into_owned()).or_default() += n;
        }
        by_name
    }
}

/// Where a crawl writes one line per failed or dropped URL (`ditto crawl --failure-log`):
/// JSON objects `{"url": …, "event": …, "reason": …}`, the event named as in the report.
/// Shared by the crawl's tasks; a write error turns the log off (counted, never fatal).
#[derive(Clone)]
pub struct FailureLog {
    out: std::sync::Arc<Mutex<Option<Box<dyn std::io::Write + Send>>>>,
    lost: std::sync::Arc<AtomicU64>,
}

impl FailureLog {
    pub fn new(out: Box<dyn std::io::Write + Send>) -> Self {
        FailureLog { out: std::sync::Arc::new(Mutex::new(Some(out))), lost: Default::default() }
    }

    /// Write `url`'s failure: `event` and the reason in words.
    pub fn write(&self, url: &str, event: CrawlEvent, reason: &str) {
        let line = serde_json::json!({ "url": url, "event": event.name(), "reason": reason });
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = out.as_mut() {
            if writeln!(w, "{line}").and_then(|_| w.flush()).is_err() {
                *out = None;
            }
        }
        if out.is_none() {
            self.lost.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Lines not written (the log failed).
    pub fn lost(&self) -> u64 {
        self.lost.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl fmt::Debug for FailureLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FailureLog")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names are an interface (reports, `ditto stats`, `--metrics`, dashboards):
    /// spelled out here so a rename cannot slip through.
    #[test]
    fn names_are_stable() {
        let named = [
            (CrawlEvent::RobotsDisallowed, "robots_disallowed"),
            (CrawlEvent::HostBudgetExhausted, "host_budget_exhausted"),
            (CrawlEvent::RobotsRefusedAddress, "robots_refused_address"),
            (CrawlEvent::CrawlDelayHonored, "crawl_delay_honored"),
            (CrawlEvent::RobotsBackoff, "robots_backoff"),
            (CrawlEvent::RobotsUnavailableDisallowAll, "robots_unavailable_disallow_all"),
            (CrawlEvent::FetchError(FetchErrorKind::Refused), "error_refused_address"),
            (CrawlEvent::FetchError(FetchErrorKind::Connect), "error_connect"),
            (CrawlEvent::FetchError(FetchErrorKind::Timeout), "error_timeout"),
            (CrawlEvent::FetchError(FetchErrorKind::Protocol), "error_protocol"),
            (CrawlEvent::FetchError(FetchErrorKind::Body), "error_body"),
            (CrawlEvent::FetchError(FetchErrorKind::BadUrl), "error_bad_url"),
            (CrawlEvent::HostParked, "host_parked"),
            (CrawlEvent::BackoffRetryAfter, "backoff_retry_after"),
            (CrawlEvent::BackoffExponential, "backoff_exponential"),
            (CrawlEvent::HttpStatus(200), "http_200"),
            (CrawlEvent::HttpStatus(429), "http_429"),
            (CrawlEvent::BodyTruncated, "body_truncated"),
            (CrawlEvent::RedirectLimit, "redirect_limit"),
            (CrawlEvent::SinkClosed, "sink_closed"),
            (CrawlEvent::SkippedTooLarge, "skipped_too_large"),
            (CrawlEvent::SkippedNotText, "skipped_not_text"),
            (CrawlEvent::BodyRefusedAfterHeaders, "body_refused_after_headers"),
            (CrawlEvent::CredentialsStripped, "credentials_stripped"),
            (CrawlEvent::PageNofollow, "page_nofollow"),
            (CrawlEvent::PageNoindex, "page_noindex"),
            (CrawlEvent::PageCanonicalElsewhere, "page_canonical_elsewhere"),
            (CrawlEvent::MetaRefreshFollowed, "meta_refresh_followed"),
            (CrawlEvent::NotModified, "not_modified"),
            (CrawlEvent::RetriesExhausted, "retries_exhausted"),
            (CrawlEvent::HostRetired(RetireReason::Connect), "host_retired_connect"),
            (CrawlEvent::HostRetired(RetireReason::Dns), "host_retired_dns"),
            (CrawlEvent::HostRetired(RetireReason::Tls), "host_retired_tls"),
            (CrawlEvent::HostRetired(RetireReason::Timeout), "host_retired_timeout"),
            (CrawlEvent::HostRetired(RetireReason::RobotsUnreachable), "host_retired_robots_unreachable"),
            (CrawlEvent::RetiredUrl(RetireReason::Connect), "retired_url_connect"),
            (CrawlEvent::RetiredUrl(RetireReason::RobotsUnreachable), "retired_url_robots_unreachable"),
            (CrawlEvent::StaleConnectionRetried, "stale_connection_retried"),
            (CrawlEvent::SocketWaited, "socket_waited"),
            (CrawlEvent::SocketPoolFlushed, "socket_pool_flushed"),
            (CrawlEvent::SitemapRead, "sitemap_read"),
            (CrawlEvent::SitemapUnreadable, "sitemap_unreadable"),
            (CrawlEvent::SitemapTruncated, "sitemap_truncated"),
            (CrawlEvent::SitemapUrls, "sitemap_urls"),
            (CrawlEvent::SitemapUrlsQueued, "sitemap_urls_queued"),
            (CrawlEvent::SitemapChildrenQueued, "sitemap_children_queued"),
            (CrawlEvent::SitemapOffsite, "sitemap_offsite"),
            (CrawlEvent::SitemapUrlCap, "sitemap_url_cap"),
            (CrawlEvent::SitemapHostBudget, "sitemap_host_budget"),
            (CrawlEvent::SitemapFileCap, "sitemap_file_cap"),
        ];
        for (event, name) in named {
            assert_eq!(event.name(), name);
            assert_eq!(event.to_string(), name);
        }
    }

    /// Crawl failures go to the log with URL and reason, one JSON line each.
    #[test]
    fn failure_log_lines_name_url_event_and_reason() {
        #[derive(Clone, Default)]
        struct Buf(std::sync::Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Buf::default();
        let log = FailureLog::new(Box::new(buf.clone()));
        log.write("http://a.test/x", CrawlEvent::FetchError(FetchErrorKind::Timeout), "timeout: 5 s");
        log.write("http://a.test/\u{1b}[2J", CrawlEvent::HttpStatus(404), "HTTP 404");
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0]["url"], "http://a.test/x");
        assert_eq!(lines[0]["event"], "error_timeout");
        assert_eq!(lines[0]["reason"], "timeout: 5 s");
        assert_eq!(lines[1]["event"], "http_404");
        // JSON escapes control characters: the log is safe to print.
        assert!(!text.contains('\u{1b}'));
        assert_eq!(log.lost(), 0);
    }

    #[test]
    fn counters_read_by_name_in_name_order() {
        let c = CrawlCounters::default();
        c.event(CrawlEvent::HttpStatus(404));
        c.event(CrawlEvent::BackoffRetryAfter);
        c.event(CrawlEvent::HttpStatus(200));
        c.event(CrawlEvent::HttpStatus(200));
        assert_eq!(c.count(CrawlEvent::HttpStatus(200)), 2);
        assert_eq!(c.count(CrawlEvent::SinkClosed), 0);
        let by_name: Vec<(String, u64)> = c.events().into_iter().collect();
        assert_eq!(
            by_name,
            [
                ("backoff_retry_after".to_string(), 1),
                ("http_200".to_string(), 2),
                ("http_404".to_string(), 1)
            ]
        );
    }
}
