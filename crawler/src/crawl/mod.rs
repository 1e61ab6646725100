//! The crawl loop: picks due hosts from the frontier (kept in the store), fetches politely,
//! and hands pages out. Links come back in through the store (the caller queues them with
//! the page, in one atomic batch), so the crawler never sees detection results — only the
//! priorities the caller gave the links (DESIGN.md: pages out, links and priorities in).

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use detector::{Page, PageOrigin};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use serde::Serialize;
use store::{FrontierEntry, Store};
use tokio::sync::mpsc;
use url::Url;

use crate::error::CrawlError;
use crate::fetch::{parse_retry_after, FetchError, FetchErrorKind, FetchResponse, Fetcher};
use crate::partition::PartitionRouter;
use crate::politeness::{HostState, Outcome, PolitenessConfig};
use crate::robots::{product_token, RobotsState, MAX_ROBOTS_BYTES};
use crate::urls::{canonical_url, surt_host_key, OutOfScope, ScopeRules, TrapGuard};

mod events;

pub use events::{CrawlCounters, CrawlEvent};

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

/// Admits links into the frontier: canonicalization, scope, traps, depth. Shared by the
/// crawler (redirect targets) and the caller (links found on pages).
pub struct LinkPolicy {
    pub scope: ScopeRules,
    pub traps: Mutex<TrapGuard>,
    pub max_depth: u32,
    rejected: Mutex<BTreeMap<&'static str, u64>>,
    /// Partitioned crawls: links to hosts another partition owns go to it
    /// (`crate::partition`).
    pub partition: Option<Arc<PartitionRouter>>,
}

impl LinkPolicy {
    pub fn new(scope: ScopeRules, traps: TrapGuard, max_depth: u32) -> Self {
        LinkPolicy {
            scope,
            traps: Mutex::new(traps),
            max_depth,
            rejected: Mutex::new(BTreeMap::new()),
            partition: None,
        }
    }

    /// Crawl one partition: see [`PartitionRouter`].
    pub fn with_partition(mut self, router: Arc<PartitionRouter>) -> Self {
        self.partition = Some(router);
        self
    }

    /// Admitted entries this partition owns; the others are sent to their owners now
    /// (before the caller commits the page that found them). All of them without partitions.
    pub fn route(&self, entries: Vec<FrontierEntry>) -> Vec<FrontierEntry> {
        match &self.partition {
            Some(r) => r.route(entries),
            None => entries,
        }
    }

    /// A frontier entry for `href` found at `depth` with `priority`, or None (counted).
    pub fn admit(&self, base: Option<&str>, href: &str, depth: u32, priority: u32) -> Option<FrontierEntry> {
        let url = match base {
            Some(b) => crate::urls::canonicalize_with_base(b, href),
            None => crate::urls::canonicalize(href),
        };
        let Ok(url) = url else {
            self.reject("bad_url");
            return None;
        };
        let Ok(parsed) = canonical_url(&url) else {
            self.reject("bad_url");
            return None;
        };
        if depth > self.max_depth {
            self.reject("max_depth");
            return None;
        }
        if let Err(e) = self.scope.allows(&parsed) {
            self.reject(scope_reason(&e));
            return None;
        }
        if let Some(t) = self.traps.lock().unwrap_or_else(|e| e.into_inner()).check(&parsed) {
            self.reject(t.as_str());
            return None;
        }
        let host_key = surt_host_key(parsed.host_str().unwrap_or(""));
        Some(FrontierEntry { url, host_key, depth, priority, hops: 0 })
    }

    fn reject(&self, why: &'static str) {
        *self.rejected.lock().unwrap_or_else(|e| e.into_inner()).entry(why).or_default() += 1;
    }

    /// Links refused, by reason.
    pub fn rejected(&self) -> BTreeMap<&'static str, u64> {
        self.rejected.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn scope_reason(e: &OutOfScope) -> &'static str {
    e.as_str()
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

enum RobotsSlot {
    Fetching,
    Ready(Arc<RobotsState>, Instant),
    /// The SSRF guard refused the host's address (e.g. a link to a private IP, or a name
    /// resolving to one): its URLs are finished without a request.
    Refused,
}

struct Done {
    host: String,
    kind: DoneKind,
}

enum DoneKind {
    Robots {
        state: RobotsState,
        outcome: Outcome,
        crawl_delay_token: Option<f64>,
        /// The SSRF guard refused the host's address: nothing there may be fetched.
        refused: bool,
    },
    Page {
        entry: FrontierEntry,
        result: Result<FetchResponse, FetchError>,
        fetch_time: i64,
    },
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
    let CrawlIo { sink, recorder, counters, stop } = io;
    let start = Instant::now();
    let token = product_token(&fetcher.config().user_agent).to_string();
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

    let limiter: Option<DefaultDirectRateLimiter> = cfg.global_rate.and_then(|r| {
        let per_sec = NonZeroU32::new(r.ceil().max(1.0) as u32)?;
        Some(RateLimiter::direct(Quota::per_second(per_sec)))
    });
    let mut hosts: HashMap<String, HostState> = HashMap::new();
    let mut robots: HashMap<String, RobotsSlot> = HashMap::new();
    let mut host_pages: HashMap<String, u64> = HashMap::new();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Done>();
    let mut in_flight = 0usize;
    let mut pages_started = 0u64;
    let mut queued: Vec<(String, u32)> = Vec::new();
    let mut last_refresh: Option<Instant> = None;
    let mut idle_since: Option<Instant> = None;
    let stopped_by;

    // One finished fetch (page or robots.txt) back into host states and the frontier.
    macro_rules! finish {
        ($done:expr) => {
            handle_done(
                $done,
                &store,
                &cfg,
                &links,
                &mut hosts,
                &mut robots,
                &sink,
                &recorder,
                &counters,
                &token,
            )?
        };
    }
    loop {
        // Finished fetches first: they change host states and the frontier.
        while let Ok(done) = done_rx.try_recv() {
            in_flight -= 1;
            finish!(done);
            last_refresh = None; // new links may have arrived
        }
        counters.in_flight.store(in_flight as u64, Relaxed);
        if stop.load(Relaxed) {
            stopped_by = "signal".to_string();
            break;
        }
        if pages_started >= cfg.max_pages {
            stopped_by = "max_pages".to_string();
            break;
        }
        let now = Instant::now();
        if last_refresh.is_none_or_older(now, Duration::from_millis(200)) {
            if let Some(r) = &links.partition {
                r.poll(&store)?;
            }
            queued = store.frontier_hosts()?;
            // Best priority first; SURT order breaks ties, so runs are repeatable.
            queued.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            counters.queued_hosts.store(queued.len() as u64, Relaxed);
            last_refresh = Some(now);
        }
        let mut started_any = false;
        let mut next_due: Option<Instant> = None;
        for (host, _) in &queued {
            if in_flight >= cfg.max_in_flight || pages_started >= cfg.max_pages {
                break;
            }
            if matches!(robots.get(host), Some(RobotsSlot::Refused)) {
                // Nothing is sent: drain the host's queue without politeness waits.
                if let Some(entry) = store.frontier_pop(host)? {
                    counters.event(CrawlEvent::FetchError(FetchErrorKind::Refused));
                    store.frontier_finish(&entry.url, &[])?;
                    started_any = true;
                }
                continue;
            }
            let st = hosts.entry(host.clone()).or_insert_with(|| HostState::new(now));
            if !st.is_due(now, &cfg.polite) {
                if st.in_flight < cfg.polite.per_host_concurrency.max(1) {
                    next_due = Some(next_due.map_or(st.due_at(), |d: Instant| d.min(st.due_at())));
                }
                continue;
            }
            // robots.txt first, once per host (and again after it expires).
            let robots_state = match robots.get(host) {
                Some(RobotsSlot::Ready(r, exp)) if *exp > now => Some(r.clone()),
                Some(RobotsSlot::Fetching) | Some(RobotsSlot::Refused) => continue,
                _ => None,
            };
            let Some(robots_state) = robots_state else {
                let Some(entry_url) = peek_url(&store, host)? else { continue };
                let Some(robots_url) = robots_url(&entry_url) else { continue };
                robots.insert(host.clone(), RobotsSlot::Fetching);
                st.on_start(now, &cfg.polite);
                in_flight += 1;
                started_any = true;
                if let Some(l) = &limiter {
                    l.until_ready().await;
                }
                counters.requests.fetch_add(1, Relaxed);
                counters.robots_fetches.fetch_add(1, Relaxed);
                let (f, tx, h, tok, rec) =
                    (fetcher.clone(), done_tx.clone(), host.clone(), token.clone(), recorder.clone());
                tokio::spawn(async move {
                    let kind = fetch_robots(&f, &robots_url, &tok, rec.as_deref()).await;
                    let _ = tx.send(Done { host: h, kind });
                });
                continue;
            };
            let Some(entry) = store.frontier_pop(host)? else { continue };
            if !robots_state.is_allowed(&token, &entry.url) {
                counters.event(CrawlEvent::RobotsDisallowed);
                store.frontier_finish(&entry.url, &[])?;
                started_any = true;
                continue;
            }
            let fetched =
                *host_pages.entry(host.clone()).or_insert_with(|| store.host_pages(host).unwrap_or(0));
            if fetched >= cfg.per_host_max_pages {
                counters.event(CrawlEvent::HostBudgetExhausted);
                store.frontier_finish(&entry.url, &[])?;
                started_any = true;
                continue;
            }
            if let Some(l) = &limiter {
                l.until_ready().await;
            }
            st.on_start(Instant::now(), &cfg.polite);
            *host_pages.entry(host.clone()).or_default() += 1;
            in_flight += 1;
            pages_started += 1;
            started_any = true;
            counters.requests.fetch_add(1, Relaxed);
            let (f, tx, h) = (fetcher.clone(), done_tx.clone(), host.clone());
            tokio::spawn(async move {
                let fetch_time =
                    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
                let result = f.get(&entry.url).await;
                let _ = tx.send(Done { host: h, kind: DoneKind::Page { entry, result, fetch_time } });
            });
        }
        counters.hosts_active.store(hosts.values().filter(|h| h.in_flight > 0).count() as u64, Relaxed);
        if started_any {
            idle_since = None;
            if let Some(r) = &links.partition {
                r.set_busy()?;
            }
            continue;
        }
        // Hosts resting for long (robots.txt unavailable until its retry, or parked after
        // repeated failures) keep their URLs queued for a later run; they alone do not keep
        // the crawl going.
        let resting = |(host, _): &(String, u32)| {
            hosts.get(host).is_some_and(|st| st.is_parked(now))
                || matches!(robots.get(host), Some(RobotsSlot::Ready(r, exp))
                    if *exp > now && matches!(**r, RobotsState::DisallowAll))
        };
        if in_flight == 0 && queued.iter().all(resting) {
            // Nothing fetchable queued and nothing fetching. Pages still in detection hold
            // in-flight tickets in the store and may add links: stop only when none is left
            // (or after `idle_grace` without progress, should a consumer never complete a
            // ticket).
            let since = *idle_since.get_or_insert(now);
            let (_, tickets) = store.frontier_counts()?;
            if tickets == 0 || now.duration_since(since) >= cfg.idle_grace {
                // A partition also waits until no partition has work or links in transit.
                let done = match &links.partition {
                    Some(r) => r.idle_and_done()?,
                    None => true,
                };
                if done {
                    stopped_by =
                        if queued.is_empty() { "frontier_exhausted" } else { "only_resting_hosts_left" }
                            .to_string();
                    break;
                }
            }
            last_refresh = None;
        } else {
            idle_since = None;
        }
        let wait = next_due.map(|d| d.saturating_duration_since(now)).unwrap_or(Duration::from_millis(50));
        let wait = wait.clamp(Duration::from_millis(1), Duration::from_millis(100));
        if let Ok(Some(done)) = tokio::time::timeout(wait, done_rx.recv()).await {
            in_flight -= 1;
            finish!(done);
            last_refresh = None;
        }
    }
    if let Some(r) = &links.partition {
        if stopped_by == "signal" || stopped_by == "max_pages" {
            r.set_stopped()?;
        }
    }
    // Let fetches in flight finish and hand their pages on.
    while in_flight > 0 {
        match tokio::time::timeout(Duration::from_secs(120), done_rx.recv()).await {
            Ok(Some(done)) => {
                in_flight -= 1;
                finish!(done);
            }
            _ => break,
        }
    }
    Ok(CrawlReport {
        seconds: start.elapsed().as_secs_f64(),
        requests: counters.requests.load(Relaxed),
        pages: counters.pages_out.load(Relaxed),
        robots_fetches: counters.robots_fetches.load(Relaxed),
        requeued_from_last_run: requeued,
        events: counters.events(),
        links_rejected: links.rejected(),
        stopped_by,
    })
}

trait OlderExt {
    fn is_none_or_older(&self, now: Instant, age: Duration) -> bool;
}
impl OlderExt for Option<Instant> {
    fn is_none_or_older(&self, now: Instant, age: Duration) -> bool {
        match self {
            None => true,
            Some(t) => now.duration_since(*t) >= age,
        }
    }
}

fn peek_url(store: &Store, host: &str) -> Result<Option<String>, store::StoreError> {
    // The queue head tells us scheme and authority for robots.txt.
    store.frontier_pop_peek_url(host)
}

fn robots_url(page_url: &str) -> Option<String> {
    let u = Url::parse(page_url).ok()?;
    let mut r = u.clone();
    r.set_path("/robots.txt");
    r.set_query(None);
    r.set_fragment(None);
    Some(r.to_string())
}

async fn fetch_robots(f: &Fetcher, url: &str, token: &str, rec: Option<&dyn FetchRecorder>) -> DoneKind {
    // RFC 9309 §2.3.1.2: follow at least five redirects.
    let mut url = url.to_string();
    for _ in 0..=5 {
        let fetch_time =
            SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
        match f.get(&url).await {
            Ok(resp) => {
                if let Some(r) = rec {
                    r.record(&url, fetch_time, &resp);
                }
                let outcome = outcome_of(&resp);
                if (300..400).contains(&resp.status) {
                    if let Some(next) =
                        resp.header("location").and_then(|l| Url::parse(&url).ok()?.join(l).ok())
                    {
                        url = next.to_string();
                        continue;
                    }
                }
                let body = &resp.body[..resp.body.len().min(MAX_ROBOTS_BYTES)];
                let state = RobotsState::from_status(resp.status, body);
                let crawl_delay_token = state.crawl_delay(token);
                return DoneKind::Robots { state, outcome, crawl_delay_token, refused: false };
            }
            Err(e) => {
                return DoneKind::Robots {
                    state: RobotsState::unreachable(),
                    outcome: Outcome::Failed,
                    crawl_delay_token: None,
                    refused: e.kind == FetchErrorKind::Refused,
                }
            }
        }
    }
    // Redirect limit reached: RFC 9309 §2.3.1.2 says treat as unavailable (allow all).
    DoneKind::Robots {
        state: RobotsState::AllowAll,
        outcome: Outcome::Ok { elapsed: Duration::ZERO },
        crawl_delay_token: None,
        refused: false,
    }
}

fn outcome_of(resp: &FetchResponse) -> Outcome {
    match resp.status {
        429 | 503 => Outcome::Throttled {
            retry_after: resp.header("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now())),
        },
        500..=599 => Outcome::Failed,
        _ => Outcome::Ok { elapsed: resp.elapsed },
    }
}

#[allow(clippy::too_many_arguments)]
fn handle_done(
    done: Done,
    store: &Store,
    cfg: &CrawlConfig,
    links: &LinkPolicy,
    hosts: &mut HashMap<String, HostState>,
    robots: &mut HashMap<String, RobotsSlot>,
    sink: &Arc<dyn PageSink>,
    recorder: &Option<Arc<dyn FetchRecorder>>,
    counters: &CrawlCounters,
    _token: &str,
) -> Result<(), store::StoreError> {
    let now = Instant::now();
    let st = hosts.entry(done.host.clone()).or_insert_with(|| HostState::new(now));
    match done.kind {
        DoneKind::Robots { refused: true, .. } => {
            // No request left the crawler: no politeness wait, no retry.
            st.in_flight = st.in_flight.saturating_sub(1);
            counters.event(CrawlEvent::RobotsRefusedAddress);
            robots.insert(done.host, RobotsSlot::Refused);
        }
        DoneKind::Robots { state, outcome, crawl_delay_token, refused: false } => {
            // Crawl-delay first, so that it already spaces the request after robots.txt.
            st.crawl_delay =
                crawl_delay_token.filter(|d| d.is_finite() && *d > 0.0).map(Duration::from_secs_f64);
            if st.crawl_delay.is_some() {
                counters.event(CrawlEvent::CrawlDelayHonored);
            }
            let backoff = st.on_finish(now, outcome, &cfg.polite);
            if backoff.is_some() {
                counters.event(CrawlEvent::RobotsBackoff);
            }
            let ttl = match state {
                RobotsState::DisallowAll => {
                    counters.event(CrawlEvent::RobotsUnavailableDisallowAll);
                    // Wait before asking again; the host's URLs stay queued meanwhile.
                    st.next_allowed = st.next_allowed.max(now + cfg.robots_retry);
                    cfg.robots_retry
                }
                _ => cfg.robots_ttl,
            };
            robots.insert(done.host, RobotsSlot::Ready(Arc::new(state), now + ttl));
        }
        DoneKind::Page { entry, result, fetch_time } => match result {
            Err(e) => {
                st.on_finish(now, Outcome::Failed, &cfg.polite);
                counters.event(CrawlEvent::FetchError(e.kind));
                if st.is_parked(now) {
                    counters.event(CrawlEvent::HostParked);
                }
                if matches!(e.kind, FetchErrorKind::Timeout | FetchErrorKind::Connect) && entry.priority > 0 {
                    // One more try later, at a lower priority so it cannot loop forever.
                    let retry = FrontierEntry { priority: 0, ..entry };
                    store.frontier_requeue(&retry)?;
                } else {
                    store.frontier_finish(&entry.url, &[])?;
                }
            }
            Ok(resp) => {
                let outcome = outcome_of(&resp);
                if let Some(wait) = st.on_finish(now, outcome, &cfg.polite) {
                    if matches!(outcome, Outcome::Throttled { .. }) {
                        counters.event(if resp.header("retry-after").is_some() {
                            CrawlEvent::BackoffRetryAfter
                        } else {
                            CrawlEvent::BackoffExponential
                        });
                        let _ = wait;
                    }
                    if st.is_parked(now) {
                        counters.event(CrawlEvent::HostParked);
                    }
                }
                let warc = recorder.as_ref().and_then(|r| r.record(&entry.url, fetch_time, &resp));
                counters.event(CrawlEvent::HttpStatus(resp.status));
                if resp.truncated {
                    counters.event(CrawlEvent::BodyTruncated);
                }
                match resp.status {
                    429 | 503 => {
                        // Try again after the backoff; the entry keeps its place.
                        store.frontier_requeue(&entry)?;
                    }
                    300..=399 => {
                        let target = resp.header("location").map(str::to_string);
                        let next = target.and_then(|t| {
                            if entry.hops >= cfg.max_redirects {
                                counters.event(CrawlEvent::RedirectLimit);
                                return None;
                            }
                            let mut e = links.admit(Some(&entry.url), &t, entry.depth, entry.priority)?;
                            e.hops = entry.hops + 1;
                            Some(e)
                        });
                        let next = links.route(next.into_iter().collect());
                        store.frontier_finish(&entry.url, &next)?;
                    }
                    200..=299
                        if !resp.truncated
                            && (cfg.accept_content)(resp.header("content-type"), &resp.body) =>
                    {
                        let page = Page {
                            url: entry.url.clone(),
                            fetch_time,
                            status: resp.status,
                            content_type: resp.header("content-type").map(str::to_string),
                            body: resp.body,
                            origin: match warc {
                                Some((file, offset)) => PageOrigin::Warc { file, offset },
                                None => PageOrigin::Fetch,
                            },
                        };
                        counters.pages_out.fetch_add(1, Relaxed);
                        if !sink.send(CrawledPage { page, entry: entry.clone() }) {
                            // Downstream stopped: leave the ticket in flight (fetched again
                            // on resume) rather than lose the page.
                            counters.event(CrawlEvent::SinkClosed);
                        }
                    }
                    200..=299 => {
                        counters.event(if resp.truncated {
                            CrawlEvent::SkippedTooLarge
                        } else {
                            CrawlEvent::SkippedNotText
                        });
                        store.frontier_finish(&entry.url, &[])?;
                    }
                    _ => {
                        store.frontier_finish(&entry.url, &[])?;
                    }
                }
            }
        },
    }
    Ok(())
}
