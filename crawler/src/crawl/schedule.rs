//! The crawl loop: refresh the queue of hosts, start what is due (robots.txt first), take
//! finished fetches back, and decide when the crawl is over.

use std::collections::{HashMap, VecDeque};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use store::Store;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::fetched::{fetch_robots, unix_now, Done, DoneKind};
use super::hostq::{FocusRule, HostQueue, HostStatus, PickRule, Picked};
use super::retire::Retirements;
use super::robots_book::{origin_of, robots_url, RobotsBook};
use super::servers::{Resolved, Servers};
use super::sitemaps::{sitemap_urls, SitemapJob, SitemapJobs};
use super::{CrawlConfig, CrawlCounters, CrawlEvent, CrawlIo, FetchRecorder, LinkPolicy, PageSink};
use crate::error::CrawlError;
use crate::fetch::{FetchErrorKind, Fetcher};
use crate::politeness::HostState;
use crate::robots::product_token;

/// How often a partitioned crawl takes the links other partitions sent it.
const POLL_EVERY: Duration = Duration::from_millis(200);
/// A host with nothing queued and nothing in flight is forgotten (politeness state, robots.txt,
/// page count: [`Scheduler::evict_idle`]) once it has been idle this long and its politeness
/// delay is over; should it get URLs again, its robots.txt is fetched again and its page count
/// read from the store.
const EVICT_IDLE: Duration = Duration::from_secs(60);
/// Most hosts drained (URLs finished without requests) per pass.
const DRAIN_PER_PASS: usize = 256;
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

/// What one pass over the queued hosts did.
#[derive(Default)]
struct Pass {
    /// A fetch started or a URL was finished: go round again at once.
    started_any: bool,
}

/// The crawl's state between steps.
pub(super) struct Scheduler {
    pub(super) store: Arc<Store>,
    pub(super) fetcher: Fetcher,
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
    /// Tries so far of the URLs queued again after a failure that may pass (see
    /// `finish::MAX_TRIES`); a URL leaves it when it is fetched or given up.
    pub(super) retries: HashMap<String, u32>,
    /// Hosts retired for failing, and the failures in a row of the others.
    pub(super) retired: Retirements,
    /// The hosts' IP addresses and the requests per address ([`super::servers`]).
    pub(super) servers: Servers,
    /// A queued URL of each host whose address was learnt and none of whose robots.txt
    /// files is known yet: its first robots.txt fetch goes to that URL's origin without
    /// reading the host's queue again.
    pub(super) head_urls: HashMap<String, String>,
    /// Address lookups that finished.
    pub(super) resolved_tx: UnboundedSender<Resolved>,
    pub(super) resolved_rx: UnboundedReceiver<Resolved>,
    /// The hosts whose sitemaps are wanted or read, and their bounds ([`SitemapJobs`]).
    pub(super) sitemaps: SitemapJobs,
    /// Priority and depth of each host's last page taken: where its sitemaps' URLs go when
    /// the ranker names it (forgotten with the host).
    last_taken: HashMap<String, (u32, u32)>,
    done_tx: UnboundedSender<Done>,
    pub(super) in_flight: usize,
    /// Requests in flight picked with spare capacity (beyond the focus set), and by host.
    spare_in_flight: usize,
    spare_by_host: HashMap<String, u32>,
    pages_started: u64,
    /// The hosts with queued URLs, ranked, and which of them may start a request now: kept
    /// up to date host by host (told by the store which hosts got new URLs, by the ranker
    /// which hosts' ranks changed, by its own pops and finished fetches), never re-sorted.
    pub(super) queue: HostQueue,
    /// Hosts whose queues ran empty, and when they may be forgotten ([`EVICT_IDLE`]), oldest
    /// first.
    idle_hosts: VecDeque<(Instant, String)>,
    /// Hosts with requests in flight.
    active_hosts: usize,
    /// When the partition's inbox was last polled.
    last_poll: Option<Instant>,
    /// Read every host's queue head from the store at the next refresh (at the start, and
    /// before stopping).
    full_read: bool,
    /// Since when nothing was fetchable and nothing fetching.
    idle_since: Option<Instant>,
    /// Notified by the store when hosts get new URLs or tickets are completed
    /// ([`Store::frontier_set_waker`]), so that a waiting loop wakes at once.
    pub(super) frontier_changed: Arc<tokio::sync::Notify>,
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
        let limiter = cfg.global_rate.and_then(rate_quota).map(RateLimiter::direct);
        let retired = Retirements::new(cfg.retire);
        // Without a ranker, finish the hosts opened before opening more (among equal
        // depths); a ranker's order is left as it ranks.
        let queue = if cfg.ranker.is_none() { HostQueue::new().contacted_first() } else { HostQueue::new() };
        let (per_ip, gap) = cfg.servers.effective(cfg.polite.per_host_concurrency, cfg.polite.min_delay);
        let servers = Servers::new(per_ip, gap, crate::dns::DEFAULT_DNS_TTL);
        let (resolved_tx, resolved_rx) = tokio::sync::mpsc::unbounded_channel();
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
            retries: HashMap::new(),
            retired,
            servers,
            head_urls: HashMap::new(),
            resolved_tx,
            resolved_rx,
            sitemaps: SitemapJobs::default(),
            last_taken: HashMap::new(),
            done_tx,
            in_flight: 0,
            spare_in_flight: 0,
            spare_by_host: HashMap::new(),
            pages_started: 0,
            queue,
            idle_hosts: VecDeque::new(),
            active_hosts: 0,
            last_poll: None,
            full_read: true,
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
            }
            self.take_resolved(Instant::now());
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
            self.counters.hosts_active.store(self.active_hosts as u64, Relaxed);
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
            let next_due = self.queue.next_timer();
            self.wait_for_a_fetch(done_rx, next_due, now).await?;
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

    /// Take a finished fetch back (page or robots.txt): host states, frontier, sink, and the
    /// host's place in the queue.
    fn finish(&mut self, done: Done) -> Result<(), CrawlError> {
        self.in_flight -= 1;
        let host = done.host.clone();
        if let Some(n) = self.spare_by_host.get_mut(&host) {
            *n -= 1;
            self.spare_in_flight = self.spare_in_flight.saturating_sub(1);
            if *n == 0 {
                self.spare_by_host.remove(&host);
            }
        }
        let now = done.finished;
        let result = self.finish_fetch(done);
        if self.hosts.get(&host).is_none_or(|st| st.in_flight == 0) {
            self.active_hosts = self.active_hosts.saturating_sub(1);
        }
        self.server_finished(&host, now.max(Instant::now()));
        self.update_host(&host, now.max(Instant::now()));
        result
    }

    /// Bring the queue of hosts up to date: the hosts the store says got new URLs (every
    /// host's queue head only at the start and before stopping), the hosts whose ranks the
    /// ranker says changed, the hosts whose waits ran out, and the idle hosts to forget.
    /// Costs a few lookups per host changed, whatever the number of hosts.
    fn refresh_queue(&mut self, now: Instant) -> Result<(), CrawlError> {
        if let Some(r) = &self.links.partition {
            if self.last_poll.is_none_or(|t| now.duration_since(t) >= POLL_EVERY) {
                r.poll(&self.store)?;
                self.last_poll = Some(now);
            }
        }
        if std::mem::take(&mut self.full_read) {
            self.read_all_hosts(now)?;
        } else {
            // The store says the best priority queued since; the host's best is the greater
            // of it and the one known (pops tell the next best): no read of its queue.
            for (host, p) in self.store.frontier_take_queued_hosts_best() {
                let known = self.queue.id(&host).and_then(|id| self.queue.best(id));
                self.set_best(&host, Some(known.map_or(p, |b| b.max(p))), now);
            }
        }
        if let Some(r) = self.cfg.ranker.clone() {
            for host in r.take_changed() {
                let Some(id) = self.queue.id(&host) else { continue };
                if let Some(p) = self.queue.best(id) {
                    self.queue.set_best(id, Some(p), r.rank(&host, p), now);
                }
            }
            if self.cfg.sitemaps.ranked {
                for host in r.take_sitemap_hosts() {
                    let (priority, depth) = self.last_taken.get(&host).copied().unwrap_or((0, 0));
                    self.want_sitemaps(&host, priority, depth)?;
                }
            }
        }
        for id in self.queue.expired(now) {
            let host = self.queue.name(id).to_string();
            self.update_host(&host, now);
        }
        self.end_retirements(now);
        self.evict_idle(now);
        self.counters.queued_hosts.store(self.queue.queued() as u64, Relaxed);
        Ok(())
    }

    /// Read every host's queue head from the store (the hosts told of meanwhile are among
    /// them); hosts it no longer lists have nothing queued.
    fn read_all_hosts(&mut self, now: Instant) -> Result<(), CrawlError> {
        // Taken before the read: a host queued after it is told again.
        self.store.frontier_take_queued_hosts();
        let all: HashMap<String, u32> = self.store.frontier_hosts()?.into_iter().collect();
        for host in self.queue.queued_names() {
            if !all.contains_key(&host) {
                self.set_best(&host, None, now);
            }
        }
        for (host, p) in all {
            self.set_best(&host, Some(p), now);
        }
        Ok(())
    }

    /// A host's best queued priority is now `best` (None: nothing queued): its rank and
    /// place in the queue.
    fn set_best(&mut self, host: &str, best: Option<u32>, now: Instant) {
        let known = self.queue.id(host);
        if best.is_none() && known.is_none() {
            return;
        }
        let id = match known {
            Some(id) => id,
            None => {
                let id = self.queue.intern(host, now);
                let status = self.status_of(host, now);
                self.queue.set_status(id, status, now);
                id
            }
        };
        let rank = match (best, &self.cfg.ranker) {
            (None, _) => 0.0,
            (Some(p), Some(r)) => r.rank(host, p),
            (Some(p), None) => p as f64,
        };
        let was = self.queue.best(id);
        self.queue.set_best(id, best, rank, now);
        if best.is_none() && was.is_some() {
            self.idle_hosts.push_back((now + EVICT_IDLE, host.to_string()));
        }
    }

    /// Whether and when `host` may start a request, from its politeness state and robots.txt.
    fn status_of(&self, host: &str, now: Instant) -> HostStatus {
        if self.retired.get(host).is_some() {
            return HostStatus::Drain;
        }
        if let Some(status) = self.resolving_status(host) {
            return status;
        }
        if self.robots.is_refused(host) {
            return HostStatus::Drain;
        }
        if self.robots.is_fetching(host) {
            return HostStatus::Busy;
        }
        let st = self.hosts.get(host);
        if let Some(until) = st.and_then(|st| st.parked_until).filter(|p| *p > now) {
            return HostStatus::RestingUntil(until);
        }
        if let Some(until) = self.robots.unavailable_until(host, now) {
            return HostStatus::RestingUntil(until);
        }
        match st {
            None => HostStatus::DueAt(now),
            Some(st) if st.in_flight >= self.cfg.polite.per_host_concurrency.max(1) => HostStatus::Busy,
            Some(st) => HostStatus::DueAt(st.due_at()),
        }
    }

    /// Tell the queue `host`'s status after its state changed.
    pub(super) fn update_host(&mut self, host: &str, now: Instant) {
        if let Some(id) = self.queue.id(host) {
            let status = self.status_of(host, now);
            self.queue.set_status(id, status, now);
        }
    }

    /// Forget the hosts idle for [`EVICT_IDLE`] (nothing queued, nothing in flight, not
    /// parked, their delay over): their politeness state, robots.txt and page count.
    fn evict_idle(&mut self, now: Instant) {
        while self.idle_hosts.front().is_some_and(|(t, _)| *t <= now) {
            let Some((_, host)) = self.idle_hosts.pop_front() else { break };
            let Some(id) = self.queue.id(&host) else { continue };
            if self.queue.best(id).is_some() {
                continue; // queued again: it goes back on this list when it empties
            }
            let quiet = self.hosts.get(&host).is_none_or(|st| st.in_flight == 0 && st.due_at() <= now)
                && !self.robots.is_fetching(&host);
            if !quiet {
                self.idle_hosts.push_back((now + EVICT_IDLE, host));
                continue;
            }
            self.hosts.remove(&host);
            self.robots.remove(&host);
            self.host_pages.remove(&host);
            self.retired.forget(&host);
            self.last_taken.remove(&host);
            self.queue.evict(id);
            self.forget_addr(&host);
        }
    }

    /// Take a host's best URL; its next one (or none) becomes the host's best.
    pub(super) fn pop(&mut self, host: &str) -> Result<Option<store::FrontierEntry>, CrawlError> {
        let now = Instant::now();
        match self.store.frontier_pop_and_peek(host)? {
            Some((entry, next)) => {
                self.set_best(host, next, now);
                Ok(Some(entry))
            }
            None => {
                self.set_best(host, None, now);
                Ok(None)
            }
        }
    }

    /// One pass: drain the hosts whose URLs are finished without requests, then start the
    /// picked hosts, best first, within the in-flight and page limits (with a ranker, among
    /// the `focus_hosts` best hosts that can fetch at all: see `super::priority`).
    async fn start_due_hosts(&mut self, now: Instant) -> Result<Pass, CrawlError> {
        let mut pass = Pass::default();
        for id in self.queue.draining(DRAIN_PER_PASS) {
            let host = self.queue.name(id).to_string();
            self.drain_one(&host, &mut pass)?;
        }
        // Address lookups in flight take slots too: at most --max-in-flight at once.
        let busy = |s: &Self| s.in_flight + s.servers.resolving.len();
        let room = self.cfg.max_in_flight.saturating_sub(busy(self));
        // Spare capacity (beyond the focus set): up to a share of --max-in-flight at once.
        let share = if self.cfg.focus_spare.is_finite() { self.cfg.focus_spare.clamp(0.0, 1.0) } else { 0.0 };
        let spare_cap = (share * self.cfg.max_in_flight as f64) as usize;
        let focus = self.cfg.ranker.as_ref().map(|_| FocusRule {
            focus_hosts: self.cfg.focus_hosts,
            min_hosts: self.cfg.focus_min_hosts,
            rank_span: self.cfg.focus_rank_span,
            spare: spare_cap.saturating_sub(self.spare_in_flight),
        });
        for picked in self.queue.pick(PickRule { room, focus }) {
            if busy(self) >= self.cfg.max_in_flight || self.pages_started >= self.cfg.max_pages {
                break;
            }
            // Picked at the pass's start: a host that joined an address's gate since may
            // have taken the gate's turn from a host picked then.
            if !self.queue.is_ready(picked.id) {
                continue;
            }
            let host = self.queue.name(picked.id).to_string();
            let before = self.in_flight;
            self.start_host(&host, now, &mut pass, picked).await?;
            if picked.spare && self.in_flight > before {
                self.spare_in_flight += 1;
                *self.spare_by_host.entry(host).or_default() += 1;
            }
        }
        Ok(pass)
    }

    /// Finish URLs of a retired host, or one URL of a host whose address was refused,
    /// without requests.
    fn drain_one(&mut self, host: &str, pass: &mut Pass) -> Result<(), CrawlError> {
        if let Some(n) = self.drain_retired(host)? {
            pass.started_any |= n > 0;
            return Ok(());
        }
        if let Some(entry) = self.pop(host)? {
            self.counters.event(CrawlEvent::FetchError(FetchErrorKind::Refused));
            if let Some(log) = &self.cfg.failure_log {
                let why = "not fetched: the host's address is private, loopback or link-local";
                log.write(&entry.url, CrawlEvent::FetchError(FetchErrorKind::Refused), why);
            }
            tracing::warn!(
                host,
                url = %entry.url,
                "not fetched: the host's address is private, loopback or link-local (--allow-private allows it)"
            );
            // Kept aside: the next run retries it (e.g. with --allow-private).
            self.store.frontier_finish_refused(&entry)?;
            pass.started_any = true;
        }
        Ok(())
    }

    /// Start what `host` may start now: the host's next URL (fetching its origin's robots.txt
    /// first where needed).
    async fn start_host(
        &mut self,
        host: &str,
        now: Instant,
        pass: &mut Pass,
        slot: Picked,
    ) -> Result<(), CrawlError> {
        let st = host_state(&mut self.hosts, host, now);
        if !st.is_due(now, &self.cfg.polite) {
            // The queue's view was behind (it never is ahead): set it right.
            self.update_host(host, now);
            return Ok(());
        }
        // Its IP address first (per-address politeness): the host may have to wait for it.
        if !self.address_ready(host, now)? {
            pass.started_any = true;
            return Ok(());
        }
        // The host waits while one of its robots.txt files is fetched.
        if self.robots.is_fetching(host) || self.robots.is_refused(host) {
            return Ok(());
        }
        self.start_page_fetch(host, now, pass, slot).await
    }

    /// The host starts a request now: its politeness state and the count of active hosts.
    fn on_start(&mut self, host: &str, now: Instant) {
        let st = host_state(&mut self.hosts, host, now);
        if st.in_flight == 0 {
            self.active_hosts += 1;
        }
        st.on_start(now, &self.cfg.polite);
        self.server_started(host, now);
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
        // Its address's gap counts from now, not from the pass's start (a pass that starts
        // many hosts lasts a while), as a page fetch's does.
        let now = now.max(Instant::now());
        self.on_start(host, now);
        self.update_host(host, now);
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
        slot: Picked,
    ) -> Result<(), CrawlError> {
        // A host none of whose robots.txt files is known: its best URL's robots.txt first,
        // the URL left in its place (not taken and queued again: a read and a write of the
        // store per new host).
        if !self.robots.knows(host) {
            let url = match self.head_urls.remove(host) {
                Some(url) => Some(url),
                None => self.store.frontier_pop_peek_url(host)?,
            };
            let Some(url) = url else {
                self.set_best(host, None, now);
                return Ok(());
            };
            if origin_of(&url).and_then(|o| self.robots.rules(host, &o, now)).is_none() {
                return self.start_robots_fetch(host, &url, now, pass).await;
            }
        }
        let Some(entry) = self.pop(host)? else { return Ok(()) };
        let rules = origin_of(&entry.url).and_then(|o| self.robots.rules(host, &o, now));
        let Some(robots) = rules else {
            self.store.frontier_requeue(&entry)?;
            self.set_best(host, Some(entry.priority), now);
            return self.start_robots_fetch(host, &entry.url, now, pass).await;
        };
        if !robots.is_allowed(&self.token, &entry.url) {
            self.counters.event(CrawlEvent::RobotsDisallowed);
            self.store.frontier_finish(&entry.url, &[])?;
            pass.started_any = true;
            return Ok(());
        }
        if entry.sitemap {
            return self.start_sitemap_fetch(host, entry, pass).await;
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
        self.on_start(host, now);
        self.update_host(host, now);
        *self.host_pages.entry(host.to_string()).or_default() += 1;
        match self.last_taken.get_mut(host) {
            Some(t) => *t = (entry.priority, entry.depth),
            None => {
                self.last_taken.insert(host.to_string(), (entry.priority, entry.depth));
            }
        }
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
            let result = f.get_page(&entry.url).await;
            let finished = Instant::now();
            let _ = tx.send(Done { host: h, kind: DoneKind::Page { entry, result, fetch_time }, finished });
        });
        Ok(())
    }

    /// Fetch a sitemap of `host` (its robots.txt allows it): a request like a page's, under
    /// the host's politeness, not counted as a page; up to [`MAX_SITEMAP_BYTES`].
    ///
    /// [`MAX_SITEMAP_BYTES`]: crate::sitemap::MAX_SITEMAP_BYTES
    async fn start_sitemap_fetch(
        &mut self,
        host: &str,
        entry: store::FrontierEntry,
        pass: &mut Pass,
    ) -> Result<(), CrawlError> {
        if let Some(l) = &self.limiter {
            l.until_ready().await;
        }
        let now = Instant::now();
        self.on_start(host, now);
        self.update_host(host, now);
        self.in_flight += 1;
        pass.started_any = true;
        self.counters.requests.fetch_add(1, Relaxed);
        let (f, tx, h) = (self.fetcher.clone(), self.done_tx.clone(), host.to_string());
        let cap = crate::sitemap::MAX_SITEMAP_BYTES;
        tokio::spawn(async move {
            let fetch_time = unix_now();
            let result = f.get_capped(&entry.url, cap).await;
            let finished = Instant::now();
            let _ = tx.send(Done { host: h, kind: DoneKind::Page { entry, result, fetch_time }, finished });
        });
        Ok(())
    }

    /// Read `host`'s sitemaps, once per run: queued now if a robots.txt of the host is known,
    /// else when one is read. Their URLs go at `priority`, one deeper than `depth`.
    /// Nothing is read where the URLs listed would be too deep to queue (`--max-depth 0`).
    pub(super) fn want_sitemaps(&mut self, host: &str, priority: u32, depth: u32) -> Result<(), CrawlError> {
        if depth >= self.cfg.max_depth {
            return Ok(());
        }
        if self.sitemaps.want(host, SitemapJob { priority, depth }) {
            self.queue_sitemaps(host)?;
        }
        Ok(())
    }

    /// Queue the sitemaps of `host` if they are wanted: for each origin whose robots.txt is
    /// known, its `Sitemap:` lines naming the host, else its `/sitemap.xml`. A host whose
    /// robots.txt files were all unavailable waits for one that is not.
    pub(super) fn queue_sitemaps(&mut self, host: &str) -> Result<(), CrawlError> {
        let origins = self.robots.origins(host);
        if origins.iter().all(|(_, r)| matches!(**r, crate::robots::RobotsState::DisallowAll)) {
            return Ok(());
        }
        let Some(job) = self.sitemaps.start(host) else { return Ok(()) };
        let mut entries = Vec::new();
        for (origin, robots) in origins {
            for url in sitemap_urls(&origin, &robots) {
                let Some(mut e) = self.links.admit(None, &url, job.depth, job.priority) else { continue };
                if e.host_key != host {
                    self.counters.event(CrawlEvent::SitemapOffsite);
                } else if self.sitemaps.take_file(host) {
                    e.sitemap = true;
                    entries.push(e);
                } else {
                    self.counters.event(CrawlEvent::SitemapFileCap);
                }
            }
        }
        tracing::debug!(host, sitemaps = entries.len(), "reading the host's sitemaps");
        let entries = self.links.route(entries);
        self.store.frontier_add(&entries)?;
        Ok(())
    }

    /// Nothing was started. Stop when nothing fetchable is queued, nothing is fetching and
    /// no page in detection can add links any more; `None` to go on.
    fn stop_when_idle(&mut self, now: Instant) -> Result<Option<StopReason>, CrawlError> {
        if self.in_flight > 0 || !self.queue.only_resting() {
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
            self.full_read = true;
            self.refresh_queue(now)?;
            if !self.queue.only_resting() {
                return Ok(None);
            }
            // A partition also waits until no partition has work or links in transit.
            let done = match &self.links.partition {
                Some(r) => r.idle_and_done()?,
                None => true,
            };
            if done {
                let why = if self.queue.queued() == 0 {
                    StopReason::FrontierExhausted
                } else {
                    StopReason::OnlyRestingHostsLeft
                };
                return Ok(Some(why));
            }
        }
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
            }
            // New URLs or completed tickets: the next refresh reads them.
            _ = self.frontier_changed.notified() => {}
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

/// The quota of `--rate` requests per second: one request every 1/rate seconds, exactly
/// also for fractional rates (0.2: one per 5 s), with bursts of up to ⌊rate⌋ (at least 1)
/// after a quiet spell, as governor's per-second quotas allow. None for a rate that is not a
/// positive finite number, or too slow to express (under one per ~136 years).
fn rate_quota(rate: f64) -> Option<Quota> {
    if !(rate.is_finite() && rate > 0.0) {
        return None;
    }
    let period = Duration::try_from_secs_f64(1.0 / rate).ok()?;
    let burst = NonZeroU32::new(rate.floor().clamp(1.0, u32::MAX as f64) as u32)?;
    Some(Quota::with_period(period.max(Duration::from_nanos(1)))?.allow_burst(burst))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractional_rates_are_exact() {
        let q = rate_quota(0.2).expect("0.2/s");
        assert_eq!((q.replenish_interval(), q.burst_size().get()), (Duration::from_secs(5), 1));
        let q = rate_quota(2.5).expect("2.5/s");
        assert_eq!((q.replenish_interval(), q.burst_size().get()), (Duration::from_millis(400), 2));
        let q = rate_quota(10.0).expect("10/s");
        assert_eq!((q.replenish_interval(), q.burst_size().get()), (Duration::from_millis(100), 10));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(rate_quota(bad).is_none(), "{bad}");
        }
        // A limiter at 0.5/s lets one request through, then none for 2 s.
        let l = RateLimiter::direct(rate_quota(0.5).expect("0.5/s"));
        assert!(l.check().is_ok());
        assert!(l.check().is_err());
    }
}
