//! Running a crawl: the network side of `crawl` (feature `net`).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use store::{FrontierEntry, Store};
use tokio::sync::mpsc;

use super::schedule::Scheduler;
use super::{CrawlConfig, CrawlCounters, CrawlEvent, CrawlReport, LinkPolicy, PageSink};
use crate::error::CrawlError;
use crate::fetch::{FetchResponse, Fetcher};

/// Records every fetch (the WARC writer implements it).
pub trait FetchRecorder: Send + Sync {
    /// Record a fetch; returns where it was written (file, offset of the response record).
    fn record(&self, url: &str, fetch_time: i64, resp: &FetchResponse) -> Option<(String, u64)>;
    /// Finish the output (close files); called once at the end of a crawl.
    fn close(&self) {}
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
    let (requeued, seed_entries) = resume_and_seed(&store, &links, &seeds)?;
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let read_seed_sitemaps = cfg.sitemaps.seeds;
    let mut scheduler = Scheduler::new(store, fetcher, cfg, links, io, done_tx);
    if read_seed_sitemaps {
        for e in &seed_entries {
            scheduler.want_sitemaps(&e.host_key, e.priority, e.depth)?;
        }
    }
    let stopped_by = scheduler.run(&mut done_rx).await?;
    scheduler.wind_down(&mut done_rx, stopped_by).await?;
    let s = &scheduler;
    s.counters.add(CrawlEvent::StaleConnectionRetried, s.fetcher.stale_retries());
    s.counters.add(CrawlEvent::SocketWaited, s.fetcher.socket_waits());
    s.counters.add(CrawlEvent::SocketPoolFlushed, s.fetcher.socket_pool_flushes());
    let mut links_rejected = s.links.rejected();
    match s.store.frontier_dropped_full() {
        0 => {}
        n => {
            links_rejected.insert("frontier_full", n);
        }
    }
    let mut events = s.counters.events();
    match s.links.credentials_stripped() {
        0 => {}
        n => {
            events.insert(super::CrawlEvent::CredentialsStripped.name().into_owned(), n);
        }
    }
    Ok(CrawlReport {
        seconds: start.elapsed().as_secs_f64(),
        requests: s.counters.requests.load(Relaxed),
        pages: s.counters.pages_out.load(Relaxed),
        robots_fetches: s.counters.robots_fetches.load(Relaxed),
        requeued_from_last_run: requeued,
        events,
        links_rejected,
        stopped_by: stopped_by.as_str().to_string(),
    })
}

/// Put the tickets a previous run left in flight, and the URLs it refused for their address,
/// back in the queue, load the seen set, and
/// queue the seeds (in a partitioned crawl, those this partition owns, after joining the
/// exchange). Returns how many tickets were requeued, and the seeds' entries.
fn resume_and_seed(
    store: &Store,
    links: &LinkPolicy,
    seeds: &[String],
) -> Result<(u64, Vec<FrontierEntry>), CrawlError> {
    let requeued = store.frontier_requeue_inflight()? + store.frontier_requeue_refused()?;
    store.frontier_load_seen()?;
    let mut seed_entries: Vec<FrontierEntry> =
        seeds.iter().filter_map(|s| links.admit(None, s, 0, u32::MAX)).collect();
    if let Some(r) = &links.partition {
        // Every partition may be given the same seeds: each keeps those it owns.
        seed_entries.retain(|e| r.owns(e));
        r.start()?;
    }
    store.frontier_add(&seed_entries)?;
    Ok((requeued, seed_entries))
}
