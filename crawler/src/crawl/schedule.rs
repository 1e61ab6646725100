//! The crawl loop: refresh the queue of hosts, start what is due (robots.txt first), take
//! finished fetches back, and decide when the crawl is over.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use store::Store;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::finish::{fetch_robots, Done, DoneKind};
use super::priority::{rank_hosts, RankedHost};
use super::robots_book::{origin_of, robots_url, RobotsBook};
use super::{CrawlConfig, CrawlCounters, CrawlEvent, CrawlIo, FetchRecorder, LinkPolicy, PageSink};
use crate::error::CrawlError;
use crate::fetch::{FetchErrorKind, Fetcher};
use crate::politeness::HostState;
use crate::robots::product_token;

/// How often the queue of hosts is refreshed while nothing else changes it.
const REFRESH_EVERY: Duration = Duration::from_millis(200);
/// How often every host's queue head is read from the store again. Between these reads
/// the scheduler keeps the hosts with queued URLs in memory, told by the store which hosts
/// got new URLs ([`Store::frontier_take_queued_hosts`]) and by its own pops which hosts'
/// queues shrank, so a finished fetch costs a few lookups rather than one per host.
const FULL_READ_EVERY: Duration = Duration::from_secs(5);
/// Longest wait for in-flight fetches once the crawl stops scheduling.
const WIND_DOWN_WAIT: Duration = Duration::from_secs(120);

/// Why the crawl stopped (the report's `stopped_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StopReason {
    /// `stop` was set (Ctrl-C).
    Signal,
    MaxPages,
    FrontierExhausted,
    /// Only hosts resting for long (parked, or robots.txt unavailable) have URLs left.
    OnlyRestingHostsLeft,
}

impl StopReason {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Signal => "signal",
            Self::MaxPages => "max_pages",
            Self::FrontierExhausted => "frontier_exhausted",
            Self::OnlyRestingHostsLeft => "only_resting_hosts_left",
        }
    }
}

/// A host's place in a pass: its rank and position among the eligible hosts.
#[derive(Clone, Copy)]
struct Slot {
    rank: f64,
    position: usize,
}

/// What one pass over the queued hosts did.
#[derive(Default)]
struct Pass {
    /// A fetch started or a URL was finished: go round again at once.
    started_any: bool,
    /// The soonest a host that had to wait becomes due.
    next_due: Option<Instant>,
}

/// The crawl's state between steps.
pub(super) struct Scheduler {
    pub(super) store: Arc<Store>,
    fetcher: Fetcher,
    pub(super) cfg: CrawlConfig,
    pub(super) links: Arc<LinkPolicy>,
    pub(super) sink: Arc<dyn PageSink>,
    pub(super) recorder: Option<Arc<dyn FetchRecorder>>,
    pub(super) counters: Arc<CrawlCounters>,
    stop: Arc<AtomicBool>,
    /// The User-Agent's product token, matched against robots.txt groups and page directives.
    pub(super) token: String,
    /// The global request rate cap, if any.
    limiter: Option<DefaultDirectRateLimiter>,
    pub(super) hosts: HashMap<String, HostState>,
    /// robots.txt per origin, by host ([`RobotsBook`]).
    pub(super) robots: RobotsBook,
    /// Pages fetched per host, this run and before (for `per_host_max_pages`).
    host_pages: HashMap<String, u64>,
    done_tx: UnboundedSender<Done>,
    pub(super) in_flight: usize,
    pages_started: u64,
    /// Hosts with queued URLs, their best priority and rank, best first.
    queued: Vec<RankedHost>,
    /// Hosts with queued URLs and the priority of each one's best URL, as known: `queued`
    /// is ranked from it.
    best: HashMap<String, u32>,
    /// `best` changed since `queued` was ranked.
    best_changed: bool,
    /// When `queued` was refreshed; None forces a refresh (new links may have arrived).
    last_refresh: Option<Instant>,
    /// When every host's queue head was last read from the store; None forces a read.
    last_full_read: Option<Instant>,
    /// Since when nothing was fetchable and nothing fetching.
    idle_since: Option<Instant>,
    /// Notified by the store when hosts get new URLs or tickets are completed
    /// ([`Store::frontier_set_waker`]), so that a waiting loop wakes at once.
    frontier_changed: Arc<tokio::sync::Notify>,
}

impl Scheduler {
    pub(super) fn new(
        store: Arc<Store>,
        fetcher: Fetcher,
        cfg: CrawlConfig,
        links: Arc<LinkPolicy>,
        io: CrawlIo,
        done_tx: UnboundedSender<Done>,
    ) -> Scheduler {
        let CrawlIo { sink, recorder, counters, stop } = io;
        let token = product_token(&fetcher.config().user_agent).to_string();
        let frontier_changed = Arc::new(tokio::sync::Notify::new());
        let notify = frontier_changed.clone();
        store.frontier_set_waker(move || notify.notify_one());
        let limiter = cfg.global_rate.and_then(|r| {
            let per_sec = NonZeroU32::new(r.ceil().max(1.0) as u32)?;
            Some(RateLimiter::direct(Quota::per_second(per_sec)))
        });
        Scheduler {
            store,
            fetcher,
            cfg,
            links,
            sink,
            recorder,
            counters,
            stop,
            token,
            limiter,
            hosts: HashMap::new(),
            robots: RobotsBook::default(),
            host_pages: HashMap::new(),
            done_tx,
            in_flight: 0,
            pages_started: 0,
            queued: Vec::new(),
            best: HashMap::new(),
            best_changed: false,
            last_refresh: None,
            last_full_read: None,
            frontier_changed,
            idle_since: None,
        }
    }

    /// Schedule until the crawl should stop; returns why.
    pub(super) async fn run(
        &mut self,
        done_rx: &mut UnboundedReceiver<Done>,
    ) -> Result<StopReason, CrawlError> {
        loop {
            // Finished fetches first: they change host states and the frontier.
            while let Ok(done) = done_rx.try_recv() {
                self.finish(done)?;
                self.last_refresh = None; // new links may have arrived
            }
            self.counters.in_flight.store(self.in_flight as u64, Relaxed);
            if self.stop.load(Relaxed) {
                return Ok(StopReason::Signal);
            }
            if self.pages_started >= self.cfg.max_pages {
                return Ok(StopReason::MaxPages);
            }
            let now = Instant::now();
            self.refresh_queue(now)?;
            let pass = self.start_due_hosts(now).await?;
            let active = self.hosts.values().filter(|h| h.in_flight > 0).count();
            self.counters.hosts_active.store(active as u64, Relaxed);
            if pass.started_any {
                self.set_idle_since(None);
                if let Some(r) = &self.links.partition {
                    r.set_busy()?;
                }
                continue;
            }
            if let Some(why) = self.stop_when_idle(now)? {
                return Ok(why);
            }
            self.wait_for_a_fetch(done_rx, pass.next_due, now).await?;
        }
    }

    /// After the loop: tell the other partitions if this one was stopped, then let fetches
    /// in flight finish and hand their pages on.
    pub(super) async fn wind_down(
        &mut self,
        done_rx: &mut UnboundedReceiver<Done>,
        stopped_by: StopReason,
    ) -> Result<(), CrawlError> {
        if let Some(r) = &self.links.partition {
            if matches!(stopped_by, StopReason::Signal | StopReason::MaxPages) {
                r.set_stopped()?;
            }
        }
        while self.in_flight > 0 {
            match tokio::time::timeout(WIND_DOWN_WAIT, done_rx.recv()).await {
                Ok(Some(done)) => self.finish(done)?,
                _ => break,
            }
        }
        Ok(())
    }

    /// Take a finished fetch back (page or robots.txt): host states, frontier, sink.
    fn finish(&mut self, done: Done) -> Result<(), CrawlError> {
        self.in_flight -= 1;
        self.finish_fetch(done)
    }

    /// Refresh the hosts with queued URLs (and, partitioned, take the links sent to us) when
    /// the last refresh is old or was invalidated: the hosts that got new URLs are read
    /// from the store, every host only every [`FULL_READ_EVERY`]; then the hosts are ranked
    /// again if anything changed (always with a ranker: its ranks change as it learns).
    fn refresh_queue(&mut self, now: Instant) -> Result<(), CrawlError> {
        if self.last_refresh.is_some_and(|t| now.duration_since(t) < REFRESH_EVERY) {
            return Ok(());
        }
        if let Some(r) = &self.links.partition {
            r.poll(&self.store)?;
        }
        if self.last_full_read.is_none_or(|t| now.duration_since(t) >= FULL_READ_EVERY) {
            self.read_all_hosts(now)?;
        } else {
            for host in self.store.frontier_take_queued_hosts() {
                match self.store.frontier_peek(&host)? {
                    Some(p) => self.set_best(host, Some(p)),
                    None => self.set_best(host, None),
                }
            }
        }
        if self.best_changed || self.cfg.ranker.is_some() {
            // Best rank (or priority) first; SURT order breaks ties, so runs are repeatable.
            let hosts = self.best.iter().map(|(h, p)| (h.clone(), *p)).collect();
            self.queued = rank_hosts(hosts, self.cfg.ranker.as_deref());
            self.best_changed = false;
        }
        self.counters.queued_hosts.store(self.queued.len() as u64, Relaxed);
        self.last_refresh = Some(now);
        Ok(())
    }

    /// Read every host's queue head from the store (the hosts told of meanwhile are among
    /// them).
    fn read_all_hosts(&mut self, now: Instant) -> Result<(), CrawlError> {
        // Taken before the read: a host queued after it is told again.
        self.store.frontier_take_queued_hosts();
        let all: HashMap<String, u32> = self.store.frontier_hosts()?.into_iter().collect();
        if all != self.best {
            self.best = all;
            self.best_changed = true;
        }
        self.last_full_read = Some(now);
        Ok(())
    }

    /// A host's best queued priority is now `best` (None: nothing queued).
    fn set_best(&mut self, host: String, best: Option<u32>) {
        let changed = match best {
            Some(p) => self.best.insert(host, p) != Some(p),
            None => self.best.remove(&host).is_some(),
        };
        self.best_changed |= changed;
    }

    /// Take a host's best URL; its next one (or none) becomes the host's best.
    fn pop(&mut self, host: &str) -> Result<Option<store::FrontierEntry>, CrawlError> {
        match self.store.frontier_pop_and_peek(host)? {
            Some((entry, next)) => {
                self.set_best(host.to_string(), next);
                Ok(Some(entry))
            }
            None => {
                self.set_best(host.to_string(), None);
                Ok(None)
            }
        }
    }

    /// One pass over the queued hosts, best first, starting what is due within the
    /// in-flight and page limits (and, with a ranker, among the `focus_hosts` best hosts
    /// that can fetch at all: see `super::priority`).
    async fn start_due_hosts(&mut self, now: Instant) -> Result<Pass, CrawlError> {
        // Taken out while hosts are started (starting one needs `&mut self`).
        let queued = std::mem::take(&mut self.queued);
        let mut pass = Pass::default();
        let mut result = Ok(());
        let mut eligible = 0usize;
        let best_rank = queued.iter().map(|h| h.rank).find(|r| r.is_finite()).unwrap_or(0.0);
        for h in &queued {
            if self.in_flight >= self.cfg.max_in_flight || self.pages_started >= self.cfg.max_pages {
                break;
            }
            let slot = Slot { rank: h.rank, position: eligible };
            if self.cfg.ranker.is_some() {
                // Resting and refused hosts cannot use a place among the best.
                if !self.is_resting(&h.host, now) && !self.robots.is_refused(&h.host) {
                    let beyond_span =
                        eligible >= super::FOCUS_MIN_HOSTS && h.rank < best_rank * self.cfg.focus_rank_span;
                    if eligible >= self.cfg.focus_hosts.max(1) || beyond_span {
                        break;
                    }
                    eligible += 1;
                }
            }
            result = self.start_host(&h.host, now, &mut pass, slot).await;
            if result.is_err() {
                break;
            }
        }
        self.queued = queued;
        result.map(|()| pass)
    }

    /// Start what `host` may start now: finish a URL of a refused host, or take the host's
    /// next URL (fetching its origin's robots.txt first where needed).
    async fn start_host(
        &mut self,
        host: &str,
        now: Instant,
        pass: &mut Pass,
        slot: Slot,
    ) -> Result<(), CrawlError> {
        if self.robots.is_refused(host) {
            // Nothing is sent: drain the host's queue without politeness waits.
            if let Some(entry) = self.pop(host)? {
                self.counters.event(CrawlEvent::FetchError(FetchErrorKind::Refused));
                tracing::warn!(
                    host,
                    url = %entry.url,
                    "not fetched: the host's address is private, loopback or link-local (--allow-private allows it)"
                );
                // Kept aside: the next run retries it (e.g. with --allow-private).
                self.store.frontier_finish_refused(&entry)?;
                pass.started_any = true;
            }
            return Ok(());
        }
        let st = host_state(&mut self.hosts, host, now);
        if !st.is_due(now, &self.cfg.polite) {
            if st.in_flight < self.cfg.polite.per_host_concurrency.max(1) {
                let due = st.due_at();
                pass.next_due = Some(pass.next_due.map_or(due, |d| d.min(due)));
            }
            return Ok(());
        }
        // The host waits while one of its robots.txt files is fetched.
        if self.robots.is_fetching(host) {
            return Ok(());
        }
        self.start_page_fetch(host, now, pass, slot).await
    }

    /// Fetch the robots.txt of `entry_url`'s origin (RFC 9309 §2.3: scheme, host, port).
    async fn start_robots_fetch(
        &mut self,
        host: &str,
        entry_url: &str,
        now: Instant,
        pass: &mut Pass,
    ) -> Result<(), CrawlError> {
        let (Some(robots_url), Some(origin)) = (robots_url(entry_url), origin_of(entry_url)) else {
            return Ok(());
        };
        self.robots.start_fetch(host);
        host_state(&mut self.hosts, host, now).on_start(now, &self.cfg.polite);
        self.in_flight += 1;
        pass.started_any = true;
        if let Some(l) = &self.limiter {
            l.until_ready().await;
        }
        self.counters.requests.fetch_add(1, Relaxed);
        self.counters.robots_fetches.fetch_add(1, Relaxed);
        let (f, tx, h, tok, rec) = (
            self.fetcher.clone(),
            self.done_tx.clone(),
            host.to_string(),
            self.token.clone(),
            self.recorder.clone(),
        );
        tokio::spawn(async move {
            let kind = fetch_robots(&f, &robots_url, origin, &tok, rec.as_deref()).await;
            let _ = tx.send(Done { host: h, kind, finished: Instant::now() });
        });
        Ok(())
    }

    /// Fetch the host's next URL, unless robots.txt disallows it or the host's page budget
    /// is spent (then the URL is finished unfetched). A URL whose origin's robots.txt is
    /// not known (or expired) goes back to its queue while that robots.txt is fetched.
    async fn start_page_fetch(
        &mut self,
        host: &str,
        now: Instant,
        pass: &mut Pass,
        slot: Slot,
    ) -> Result<(), CrawlError> {
        let Some(entry) = self.pop(host)? else { return Ok(()) };
        let rules = origin_of(&entry.url).and_then(|o| self.robots.rules(host, &o, now));
        let Some(robots) = rules else {
            self.store.frontier_requeue(&entry)?;
            self.set_best(host.to_string(), Some(entry.priority));
            return self.start_robots_fetch(host, &entry.url, now, pass).await;
        };
        if !robots.is_allowed(&self.token, &entry.url) {
            self.counters.event(CrawlEvent::RobotsDisallowed);
            self.store.frontier_finish(&entry.url, &[])?;
            pass.started_any = true;
            return Ok(());
        }
        let store = &self.store;
        let fetched =
            *self.host_pages.entry(host.to_string()).or_insert_with(|| store.host_pages(host).unwrap_or(0));
        if fetched >= self.cfg.per_host_max_pages {
            self.counters.event(CrawlEvent::HostBudgetExhausted);
            self.store.frontier_finish(&entry.url, &[])?;
            pass.started_any = true;
            return Ok(());
        }
        if let Some(l) = &self.limiter {
            l.until_ready().await;
        }
        let now = Instant::now();
        host_state(&mut self.hosts, host, now).on_start(now, &self.cfg.polite);
        *self.host_pages.entry(host.to_string()).or_default() += 1;
        self.in_flight += 1;
        self.pages_started += 1;
        if let Some(r) = &self.cfg.ranker {
            r.taken(&entry, self.pages_started, slot.rank, slot.position);
        }
        pass.started_any = true;
        self.counters.requests.fetch_add(1, Relaxed);
        let (f, tx, h) = (self.fetcher.clone(), self.done_tx.clone(), host.to_string());
        tokio::spawn(async move {
            let fetch_time = unix_now();
            let result = f.get(&entry.url).await;
            let finished = Instant::now();
            let _ = tx.send(Done { host: h, kind: DoneKind::Page { entry, result, fetch_time }, finished });
        });
        Ok(())
    }

    /// Nothing was started. Stop when nothing fetchable is queued, nothing is fetching and
    /// no page in detection can add links any more; `None` to go on.
    fn stop_when_idle(&mut self, now: Instant) -> Result<Option<StopReason>, CrawlError> {
        if self.in_flight > 0 || !self.queued.iter().all(|h| self.is_resting(&h.host, now)) {
            self.set_idle_since(None);
            return Ok(None);
        }
        // Pages still in detection hold in-flight tickets in the store and may add links:
        // stop only when none is left (or after `idle_grace` without progress, should a
        // consumer never complete a ticket).
        let since = self.idle_since.unwrap_or(now);
        self.set_idle_since(Some(since));
        let (_, tickets) = self.store.frontier_counts()?;
        if tickets == 0 || now.duration_since(since) >= self.cfg.idle_grace {
            // Links queued since the last refresh (by the page that completed the last
            // ticket, say) keep the crawl going: read every host again before stopping.
            self.last_full_read = None;
            self.last_refresh = None;
            self.refresh_queue(now)?;
            if !self.queued.iter().all(|h| self.is_resting(&h.host, now)) {
                return Ok(None);
            }
            // A partition also waits until no partition has work or links in transit.
            let done = match &self.links.partition {
                Some(r) => r.idle_and_done()?,
                None => true,
            };
            if done {
                let why = if self.queued.is_empty() {
                    StopReason::FrontierExhausted
                } else {
                    StopReason::OnlyRestingHostsLeft
                };
                return Ok(Some(why));
            }
        }
        self.last_refresh = None;
        Ok(None)
    }

    /// Start or end an idle spell (nothing to fetch, waiting on pages in detection), and
    /// tell the sink when one starts or ends.
    fn set_idle_since(&mut self, since: Option<Instant>) {
        if since.is_some() != self.idle_since.is_some() {
            self.sink.set_waiting(since.is_some());
        }
        self.idle_since = since;
    }

    /// A host resting for long (robots.txt unavailable until its retry, or parked after
    /// repeated failures) keeps its URLs queued for a later run; such hosts alone do not
    /// keep the crawl going.
    fn is_resting(&self, host: &str, now: Instant) -> bool {
        self.hosts.get(host).is_some_and(|st| st.is_parked(now)) || self.robots.unavailable(host, now)
    }

    /// Wait until the next host is due (at most 100 ms), a fetch finishes, or the store
    /// tells of new URLs or completed tickets. The last [`PRECISE_WAIT`] before a host is
    /// due is slept on this thread, where it may block (see [`can_block`]).
    async fn wait_for_a_fetch(
        &mut self,
        done_rx: &mut UnboundedReceiver<Done>,
        next_due: Option<Instant>,
        now: Instant,
    ) -> Result<(), CrawlError> {
        let mut wait =
            next_due.map(|d| d.saturating_duration_since(now)).unwrap_or(Duration::from_millis(100));
        if next_due.is_some() && can_block() {
            if wait <= PRECISE_WAIT {
                tokio::task::block_in_place(|| std::thread::sleep(wait));
                return Ok(());
            }
            // tokio's timer wakes this early enough for the sleep above to end on time.
            wait -= PRECISE_WAIT;
        }
        let deadline = tokio::time::Instant::from_std(now + wait.min(Duration::from_millis(100)));
        tokio::select! {
            done = done_rx.recv() => {
                if let Some(done) = done {
                    self.finish(done)?;
                }
                self.last_refresh = None;
            }
            _ = self.frontier_changed.notified() => self.last_refresh = None,
            // A host is due: the queue of hosts is as it was.
            _ = tokio::time::sleep_until(deadline) => {}
        }
        Ok(())
    }
}

/// How long before a host is due the scheduler stops waiting on tokio's timer and sleeps
/// on its thread instead. tokio's timer counts whole milliseconds and rounds a deadline up,
/// and its driver then waits in `epoll` (milliseconds too), so a host became due 1–1.5 ms
/// late; a thread's sleep ends within tens of microseconds. Late is never impolite, but on a
/// crawl whose last hosts are fetched one page per delay, each request late is the whole
/// crawl late: measured on the 535-host nginx bench (20 ms delay), the gaps between a
/// host's requests in nginx's log fell from 22.9–23.2 ms to 21.3–22.3 ms.
const PRECISE_WAIT: Duration = Duration::from_millis(2);

/// Whether the scheduler may block its thread for [`PRECISE_WAIT`]: on a multi-thread
/// runtime (`ditto crawl` runs the scheduler in its `block_on`), `block_in_place` hands any
/// tasks of this thread to another; a current-thread runtime has no other thread, and keeps
/// tokio's timer.
fn can_block() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// The politeness state of `host`, new if it has none yet. A function of the map alone, so
/// the scheduler's settings can be borrowed beside it.
pub(super) fn host_state<'a>(
    hosts: &'a mut HashMap<String, HostState>,
    host: &str,
    now: Instant,
) -> &'a mut HostState {
    if !hosts.contains_key(host) {
        hosts.insert(host.to_string(), HostState::new(now));
    }
    match hosts.get_mut(host) {
        Some(st) => st,
        None => unreachable!("inserted above"),
    }
}

/// Unix seconds now (0 if the clock is before 1970).
pub(super) fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}
