//! The crawl loop: picks due hosts from the frontier (kept in the store), fetches politely,
//! and hands pages out. Links come back in through the store (the caller queues them with
//! the page, in one atomic batch), so the crawler never sees detection results — only the
//! priorities the caller gave the links (DESIGN.md: pages out, links and priorities in).
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | the crawl's settings, inputs and report; [`crawl`] |
//! | `schedule.rs` | the loop: which host to fetch from next, when to stop |
//! | `finish.rs` | a finished fetch back into host states, the frontier and the sink |
//! | `links.rs` | [`LinkPolicy`]: which links enter the frontier |
//! | `events.rs` | [`CrawlEvent`] and [`CrawlCounters`] |

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use detector::Page;
use serde::Serialize;
use store::{FrontierEntry, Store};
use tokio::sync::mpsc;

use crate::error::CrawlError;
use crate::fetch::{FetchResponse, Fetcher};
use crate::politeness::PolitenessConfig;

mod events;
mod finish;
mod links;
mod schedule;

pub use events::{CrawlCounters, CrawlEvent};
pub use links::LinkPolicy;

use schedule::Scheduler;

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
}

/// Records every fetch (the WARC writer implements it).
pub trait FetchRecorder: Send + Sync {
    /// Record a fetch; returns where it was written (file, offset of the response record).
    fn record(&self, url: &str, fetch_time: i64, resp: &FetchResponse) -> Option<(String, u64)>;
    /// Finish the output (close files); called once at the end of a crawl.
    fn close(&self) {}
}

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
    /// When robots.txt was unreachable or 5xx: retry after this (hosts wait meanwhile).
    pub robots_retry: Duration,
    pub max_redirects: u32,
    /// Content types passed on as pages; others are fetched, recorded and dropped.
    pub accept_content: fn(Option<&str>, &[u8]) -> bool,
    /// Longest wait for pages still in detection (holding in-flight tickets) to add links
    /// once the frontier is empty.
    pub idle_grace: Duration,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            polite: PolitenessConfig::default(),
            max_pages: u64::MAX,
            per_host_max_pages: u64::MAX,
            max_depth: u32::MAX,
            global_rate: None,
            max_in_flight: 64,
            robots_ttl: Duration::from_secs(24 * 3600),
            robots_retry: Duration::from_secs(600),
            max_redirects: 5,
            accept_content: |ct, body| detector::clean::sniff_kind(ct, body).is_some(),
            idle_grace: Duration::from_secs(60),
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

/// Where a crawl's output goes and how it is watched and stopped.
pub struct CrawlIo {
    pub sink: Arc<dyn PageSink>,
    pub recorder: Option<Arc<dyn FetchRecorder>>,
    pub counters: Arc<CrawlCounters>,
    /// Set to stop scheduling; fetches in flight finish and are handed on.
    pub stop: Arc<AtomicBool>,
}

/// Run a crawl until the frontier is exhausted, `max_pages` is reached, or `stop` is set.
pub async fn crawl(
    store: Arc<Store>,
    fetcher: Fetcher,
    cfg: CrawlConfig,
    links: Arc<LinkPolicy>,
    seeds: Vec<String>,
    io: CrawlIo,
) -> Result<CrawlReport, CrawlError> {
    let start = Instant::now();
    let requeued = resume_and_seed(&store, &links, &seeds)?;
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let mut scheduler = Scheduler::new(store, fetcher, cfg, links, io, done_tx);
    let stopped_by = scheduler.run(&mut done_rx).await?;
    scheduler.wind_down(&mut done_rx, stopped_by).await?;
    let s = &scheduler;
    Ok(CrawlReport {
        seconds: start.elapsed().as_secs_f64(),
        requests: s.counters.requests.load(Relaxed),
        pages: s.counters.pages_out.load(Relaxed),
        robots_fetches: s.counters.robots_fetches.load(Relaxed),
        requeued_from_last_run: requeued,
        events: s.counters.events(),
        links_rejected: s.links.rejected(),
        stopped_by: stopped_by.as_str().to_string(),
    })
}

/// Put the tickets a previous run left in flight back in the queue, load the seen set, and
/// queue the seeds (in a partitioned crawl, those this partition owns, after joining the
/// exchange). Returns how many tickets were requeued.
fn resume_and_seed(store: &Store, links: &LinkPolicy, seeds: &[String]) -> Result<u64, CrawlError> {
    let requeued = store.frontier_requeue_inflight()?;
    store.frontier_load_seen()?;
    let mut seed_entries: Vec<FrontierEntry> =
        seeds.iter().filter_map(|s| links.admit(None, s, 0, u32::MAX)).collect();
    if let Some(r) = &links.partition {
        // Every partition may be given the same seeds: each keeps those it owns.
        seed_entries.retain(|e| r.owns(e));
        r.start()?;
    }
    store.frontier_add(&seed_entries)?;
    Ok(requeued)
}
