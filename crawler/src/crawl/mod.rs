//! The crawl loop: picks due hosts from the frontier (kept in the store), fetches politely,
//! and hands pages out. Links come back in through the store (the caller queues them with
//! the page, in one atomic batch), so the crawler never sees detection results — only the
//! priorities the caller gave the links (DESIGN.md: pages out, links and priorities in).
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | the crawl's settings, inputs and report |
//! | `schedule.rs` | the loop: which host to fetch from next, when to stop |
//! | `finish.rs` | a finished fetch back into host states, the frontier and the sink |
//! | `links.rs` | [`LinkPolicy`]: which links enter the frontier |
//! | `priority.rs` | [`HostRanker`]: which hosts are fetched from next, when the caller ranks them |
//! | `robots_book.rs` | robots.txt per origin (RFC 9309 §2.3), grouped by host |
//! | `sitemaps.rs` | which hosts' sitemaps are read, and their bounds per host |
//! | `hostq.rs` | [`hostq::HostQueue`]: the hosts with queued URLs, ranked, and which may start now, at a cost per change |
//! | `retire.rs` | [`RetireConfig`]: hosts retired after repeated connection failures or an unreachable robots.txt, their URLs finished as failed |
//! | `retiring.rs` | the scheduler's side of it: failures counted, retired hosts' URLs finished, retirements ended |
//! | `servers.rs` | [`ServerConfig`]: politeness per IP address over its hosts, and `--politeness-key` |
//! | `gating.rs` | the scheduler's side of it: addresses learnt before a host's first request, hosts behind their address's gate |
//! | `events.rs` | [`CrawlEvent`] and [`CrawlCounters`] |
//! | `run.rs` | [`crawl`]: resume, seed, schedule, wind down (feature `net`) |

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use detector::Page;
use serde::Serialize;
use store::FrontierEntry;

use crate::politeness::PolitenessConfig;

mod events;
#[cfg(feature = "net")]
mod fetched;
#[cfg(feature = "net")]
mod finish;
#[cfg(feature = "net")]
mod gating;
pub mod hostq;
mod links;
mod priority;
mod retire;
#[cfg(feature = "net")]
mod retiring;
#[cfg(feature = "net")]
mod robots_book;
#[cfg(feature = "net")]
mod run;
#[cfg(feature = "net")]
mod schedule;
mod servers;
#[cfg(feature = "net")]
mod sitemaps;

pub use events::{CrawlCounters, CrawlEvent, FailureLog};
pub use links::{LinkPolicy, DEFAULT_MAX_LINKS_PER_PAGE};
pub use priority::{rank_hosts, HostRanker, RankedHost};
pub use retire::{RetireConfig, RetireReason};
#[cfg(feature = "net")]
pub use run::{crawl, CrawlIo, FetchRecorder};
pub use servers::{PolitenessKey, ServerConfig, DEFAULT_PER_IP_IN_FLIGHT, DEFAULT_PER_IP_MIN_GAP};

/// A fetched page on its way to detection, with the frontier ticket it completes.
#[derive(Debug)]
pub struct CrawledPage {
    pub page: Page,
    pub entry: FrontierEntry,
}

/// Where fetched pages go. The caller must complete each page's ticket (write it to the
/// store with `PageWrite::fetched`), or the URL is fetched again on resume.
pub trait PageSink: Send + Sync {
    /// Hand a page on; false when the consumer has stopped.
    fn send(&self, page: CrawledPage) -> bool;

    /// The crawl has nothing to fetch until pages already handed on complete their tickets
    /// (`true`), or fetches again (`false`). A consumer that holds pages back to write them
    /// in batches should write them now: the crawl waits on them (at its end, the whole
    /// crawl does). The default ignores it.
    fn set_waiting(&self, _waiting: bool) {}
}

/// Requests in flight over all hosts, by default (`--max-in-flight`). A slot is held from a
/// request's start until the scheduler has taken its response back, which in a crawl's
/// CPU-bound burst is several times the fetch itself. On the 535-host nginx bench (2 cores,
/// detection inside), 256 slots against 64, same binary, alternating: 4,070–4,457 against
/// 3,924–4,307 pages/s (11 rounds each), and medians 4,178 against 4,098 (10 pairs, 256 ahead
/// in 8); the last host started 0.39–0.55 s in instead of 0.48–0.62 s (BENCHMARKS.md, issue
/// 22 round 7). Politeness is per host and unchanged; the cost is memory in the worst case:
/// each request in flight may hold a body of up to `--max-body-bytes`.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// Settings of a crawl.
#[derive(Clone)]
pub struct CrawlConfig {
    pub polite: PolitenessConfig,
    /// Stop after this many page fetches (robots.txt not counted).
    pub max_pages: u64,
    pub per_host_max_pages: u64,
    pub max_depth: u32,
    /// Requests per second over all hosts (`governor`); None = no global cap.
    pub global_rate: Option<f64>,
    /// Requests in flight over all hosts.
    pub max_in_flight: usize,
    pub robots_ttl: Duration,
    /// When robots.txt answered 429 (or was unavailable with retiring off, see
    /// [`RetireConfig::after_failures`]): ask again after this (the host waits meanwhile).
    pub robots_retry: Duration,
    pub max_redirects: u32,
    /// Content types passed on as pages; others are fetched, recorded and dropped.
    pub accept_content: fn(Option<&str>, &[u8]) -> bool,
    /// Longest wait for pages still in detection (holding in-flight tickets) to add links
    /// once the frontier is empty.
    pub idle_grace: Duration,
    /// Ranks hosts (a focused crawl's per-host learning); None: best priority first, every
    /// queued host eligible ([`HostRanker`]).
    pub ranker: Option<Arc<dyn HostRanker>>,
    /// With a ranker: how many of the best-ranked hosts make the focus set, served first;
    /// the others get only the request slots it leaves free ([`CrawlConfig::focus_spare`]).
    pub focus_hosts: usize,
    /// With a ranker: beyond the best [`FOCUS_MIN_HOSTS`] hosts, only hosts ranked at least
    /// this share of the best host's rank are fetched from (the page budget goes to the
    /// hosts that promise most, while a few always explore).
    pub focus_rank_span: f64,
    /// With a ranker: this many of the best hosts are always eligible, whatever their rank
    /// (see [`CrawlConfig::focus_rank_span`]): the crawl keeps exploring while it fetches the
    /// hosts that promise most ([`FOCUS_MIN_HOSTS`] by default).
    pub focus_min_hosts: usize,
    /// With a ranker: the share of [`CrawlConfig::max_in_flight`] that hosts beyond the focus
    /// set (the hosts `focus_hosts`, `focus_min_hosts` and `focus_rank_span` name) may use
    /// when the set leaves request slots free, best ranked first ([`FOCUS_SPARE`] by default;
    /// 0: the set alone, the focused crawl before issue 37 item 2).
    pub focus_spare: f64,
    /// One line per failed or dropped URL, with the reason (`--failure-log`); None = counts
    /// only.
    pub failure_log: Option<FailureLog>,
    /// Most links taken from one page (the rest counted, `page_link_cap`).
    pub max_links_per_page: usize,
    /// When hosts retire for failing ([`RetireConfig`]).
    pub retire: RetireConfig,
    /// Politeness per IP address over its hosts, and what the per-host rules apply to
    /// ([`ServerConfig`]).
    pub servers: ServerConfig,
    /// Whose sitemaps are read ([`SitemapPolicy`]).
    pub sitemaps: SitemapPolicy,
}

/// Which hosts' sitemaps a crawl reads (robots.txt `Sitemap:` lines, else `/sitemap.xml`;
/// indexes and gzipped files too, within 50,000 URLs and 50 MB per file): their URLs enter
/// the frontier under the usual rules, at the host's priority. See `sitemaps.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SitemapPolicy {
    /// The hosts the ranker names ([`HostRanker::take_sitemap_hosts`]): with a focused
    /// crawl's ranker, the hosts whose pages showed copied content.
    pub ranked: bool,
    /// The seeds' hosts, from the start (with or without a ranker).
    pub seeds: bool,
}

impl Default for SitemapPolicy {
    fn default() -> Self {
        SitemapPolicy { ranked: true, seeds: false }
    }
}

/// With a ranker, this many of the best hosts are always eligible by default (see
/// [`CrawlConfig::focus_min_hosts`]). 4 since issue 37, 8 before: the scheduler that picks
/// hosts from a priority queue starts a host the moment it is due, so the always-eligible
/// hosts ranked far below the best (hosts whose text showed no labeled chunk) took more of
/// the page budget while the best hosts waited out their politeness delays. On the
/// focused-crawl test web (`tests/focus_crawl.rs`, 540 pages, 20 ms delay), labeled chunks
/// found: 8 → 69–106, 4 → 364, 2 → 500, 1 → 583 (crawl 0.34, 0.77, 1.7, 3.2 s); the
/// scheduler before issue 37 with 8: 180–284 (0.5–0.7 s).
pub const FOCUS_MIN_HOSTS: usize = 4;

/// With a ranker, the share of `--max-in-flight` open to hosts beyond the focus set by
/// default ([`CrawlConfig::focus_spare`]): a focused crawl does not idle while hosts are due,
/// and the slots it keeps free hold the wait of the best hosts' requests short. On the
/// 535-host test web (20 ms delay) the whole web took 2.25–2.5 s with 0.1, 2.5–2.75 s with 1
/// (`--focus bfs`: 2.0–2.75 s), and 0.1 had 626–1,039 labeled chunks after 0.5 s where 1 had
/// 14–29 (docs/benchmarks/issue-37.md, session 3). Any share above 0 trades labeled chunks
/// per page for time: with 0 a crawl whose page budget binds keeps its pages for the best
/// hosts, waiting for their politeness delays.
pub const FOCUS_SPARE: f64 = 0.1;

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            polite: PolitenessConfig::default(),
            max_pages: u64::MAX,
            per_host_max_pages: u64::MAX,
            max_depth: u32::MAX,
            global_rate: None,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            robots_ttl: Duration::from_secs(24 * 3600),
            robots_retry: Duration::from_secs(600),
            max_redirects: 5,
            accept_content: |ct, body| detector::clean::sniff_kind(ct, body).is_some(),
            idle_grace: Duration::from_secs(60),
            ranker: None,
            focus_hosts: 64,
            focus_rank_span: 0.1,
            focus_min_hosts: FOCUS_MIN_HOSTS,
            focus_spare: FOCUS_SPARE,
            failure_log: None,
            max_links_per_page: DEFAULT_MAX_LINKS_PER_PAGE,
            retire: RetireConfig::default(),
            servers: ServerConfig::default(),
            sitemaps: SitemapPolicy::default(),
        }
    }
}

/// What a crawl did.
#[derive(Debug, Clone, Serialize)]
pub struct CrawlReport {
    pub seconds: f64,
    pub requests: u64,
    pub pages: u64,
    pub robots_fetches: u64,
    pub requeued_from_last_run: u64,
    /// Outcomes and skips by name (robots_disallowed, backoff, parked, http_404, …).
    pub events: BTreeMap<String, u64>,
    pub links_rejected: BTreeMap<&'static str, u64>,
    pub stopped_by: String,
}

impl CrawlReport {
    /// How often `event` happened in the crawl.
    pub fn event(&self, event: CrawlEvent) -> u64 {
        self.events.get(&*event.name()).copied().unwrap_or(0)
    }
}
