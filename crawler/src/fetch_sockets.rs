//! Sockets held under the process's descriptor limit (issue 37, item 3): every socket the
//! fetcher may hold is one permit of a [`SocketBudget`], a bound under the soft
//! `RLIMIT_NOFILE` less what was open when the fetcher was built and [`RESERVED_DESCRIPTORS`]
//! (store and WARC files opened later, the failure log, the metrics server). A request in
//! flight holds a permit; so does an address lookup (the system resolver opens a socket); and
//! so does an idle pooled connection: when a response leaves its connection in the HTTP
//! client's pool (at most one per host), the request's permit becomes that host's idle lease,
//! taken over by the host's next request (which reuses the connection) or released once the
//! pool has certainly closed it (twice its idle timeout, the period of the pool's sweep, plus
//! a margin: [`idle_hold`]). So sockets open ≤ permits held ≤ the bound, and at the bound a
//! request waits for a permit rather than failing with "too many open files".
//!
//! Waiting on idle leases alone would stall a crawl of many hosts for seconds (every host's
//! idle connection holds a descriptor until the pool drops it), so when no permit is free and
//! the current client holds idle leases, the fetcher starts a new client
//! ([`Pool::checkout`]): the old one's pool, and with it every idle connection, is dropped as
//! soon as the requests still running on it end, and their leases go back to the budget then
//! (counted: `socket_pool_flushes`).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Descriptors kept out of the sockets' budget for files opened after the fetcher (WARC
/// files, the store's, the failure log) and sockets that are not the fetcher's.
pub const RESERVED_DESCRIPTORS: usize = 64;
/// Most idle pooled connections by default: beyond them the client's idle connections are
/// dropped ([`Pool::checkin`]). Each holds buffers (tens of KiB): at 100,000 hosts, one idle
/// connection per host fetched from in the last seconds held about 170 MiB (peak RSS 336
/// MiB against 166 MiB with 1,000).
pub const DEFAULT_MAX_IDLE: usize = 1024;
/// The budget where the descriptor limit cannot be read (not Linux) or is unlimited.
pub const UNBOUNDED_SOCKETS: usize = 1 << 20;
/// How often a request waiting for a permit looks for idle leases that have run out.
const SWEEP_EVERY: Duration = Duration::from_millis(100);
/// How long the leases of a dropped client's idle connections are held after it: the
/// connections close on the runtime, soon after their pool is dropped, not at once.
const CLOSE_GRACE: Duration = Duration::from_millis(50);

/// How long an idle connection may outlive its request in the HTTP client's pool: the pool
/// drops a connection idle longer than `idle_timeout` when it next sweeps, every
/// `idle_timeout` (hyper-util's `IdleTask`), so within twice that; the margin covers the
/// connection's task ending after the drop.
pub fn idle_hold(idle_timeout: Duration) -> Duration {
    idle_timeout * 2 + Duration::from_millis(500)
}

/// The soft limit on open files and the descriptors open now, from `/proc/self` (Linux);
/// None elsewhere, or when the limit is unlimited.
pub fn descriptor_limit_and_open() -> Option<(usize, usize)> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let soft = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))?
        .split_whitespace()
        .nth(3)?
        .parse::<usize>()
        .ok()?;
    let open = std::fs::read_dir("/proc/self/fd").ok()?.count();
    Some((soft, open))
}

/// The sockets the fetcher may hold: the soft descriptor limit less the descriptors open now
/// and [`RESERVED_DESCRIPTORS`] (at least 1); [`UNBOUNDED_SOCKETS`] where the limit is unknown.
pub fn socket_budget_from_limit() -> usize {
    match descriptor_limit_and_open() {
        Some((soft, open)) => soft.saturating_sub(open + RESERVED_DESCRIPTORS).clamp(1, UNBOUNDED_SOCKETS),
        None => UNBOUNDED_SOCKETS,
    }
}

/// One HTTP client and the idle leases of the connections its pool keeps, by pool key
/// (scheme, host and port). Dropped when the fetcher has moved on to a new client and the
/// last request on this one has ended: the client's pool first (closing its connections),
/// then the leases.
pub(crate) struct Generation {
    pub(crate) client: reqwest::Client,
    idle: Mutex<Leases>,
}

/// Idle leases by pool key, and their keys in the order they run out (every lease is held
/// for the same time, so that is the order they were taken; a key taken over and leased
/// again is skipped by its number).
#[derive(Default)]
struct Leases {
    by_key: HashMap<String, (OwnedSemaphorePermit, u64)>,
    order: VecDeque<(Instant, u64, String)>,
    next: u64,
}

impl Leases {
    fn take(&mut self, key: &str) -> Option<OwnedSemaphorePermit> {
        self.by_key.remove(key).map(|(p, _)| p)
    }

    /// Lease `permit` to `key`'s idle connection; returns the leases held.
    fn put(&mut self, key: String, permit: OwnedSemaphorePermit, until: Instant) -> usize {
        if self.by_key.contains_key(&key) {
            return self.by_key.len(); // the pool keeps one idle connection per key: this one is closed
        }
        self.next += 1;
        self.order.push_back((until, self.next, key.clone()));
        self.by_key.insert(key, (permit, self.next));
        self.by_key.len()
    }

    /// Release the leases whose connections the pool has closed by `now`.
    fn sweep(&mut self, now: Instant) {
        while self.order.front().is_some_and(|(until, _, _)| *until <= now) {
            let Some((_, n, key)) = self.order.pop_front() else { break };
            if self.by_key.get(&key).is_some_and(|(_, m)| *m == n) {
                self.by_key.remove(&key);
            }
        }
        // Keys taken over leave stale entries behind: dropped once they outnumber the leases.
        if self.order.len() > 2 * self.by_key.len() + 64 {
            let by_key = &self.by_key;
            self.order.retain(|(_, n, key)| by_key.get(key).is_some_and(|(_, m)| m == n));
        }
    }
}

impl Generation {
    fn new(client: reqwest::Client) -> Self {
        Generation { client, idle: Mutex::new(Leases::default()) }
    }

    fn leases(&self) -> std::sync::MutexGuard<'_, Leases> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Generation {
    /// The client (dropped right after this) drops its pool, and each idle connection's task
    /// then ends on the runtime, closing its socket: the leases go back to the budget only
    /// after [`CLOSE_GRACE`], once those tasks have run.
    fn drop(&mut self) {
        let leases = std::mem::take(&mut *self.leases());
        if leases.by_key.is_empty() {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                tokio::time::sleep(CLOSE_GRACE).await;
                drop(leases);
            });
        }
    }
}

/// A permit held by one request ([`Pool::checkout`]), handed back with [`Pool::checkin`].
pub(crate) struct Checkout {
    pub(crate) generation: Arc<Generation>,
    key: String,
    permit: OwnedSemaphorePermit,
}

/// The fetcher's HTTP clients and the budget of sockets they share.
pub(crate) struct Pool {
    sockets: Arc<Semaphore>,
    limit: usize,
    max_idle: usize,
    idle_hold: Duration,
    current: Mutex<Arc<Generation>>,
    build: Box<dyn Fn() -> Result<reqwest::Client, reqwest::Error> + Send + Sync>,
    waits: AtomicU64,
    flushes: AtomicU64,
}

impl Pool {
    /// A budget of `limit` sockets, at most `max_idle` of them idle connections.
    pub(crate) fn new(
        limit: usize,
        max_idle: usize,
        idle_timeout: Duration,
        build: Box<dyn Fn() -> Result<reqwest::Client, reqwest::Error> + Send + Sync>,
    ) -> Result<Pool, reqwest::Error> {
        let limit = limit.clamp(1, UNBOUNDED_SOCKETS);
        let first = Generation::new(build()?);
        Ok(Pool {
            sockets: Arc::new(Semaphore::new(limit)),
            limit,
            max_idle: max_idle.max(1),
            idle_hold: idle_hold(idle_timeout),
            current: Mutex::new(Arc::new(first)),
            build,
            waits: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
        })
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Permits held now (requests in flight, lookups, idle leases).
    pub(crate) fn in_use(&self) -> usize {
        self.limit - self.sockets.available_permits()
    }

    /// Requests and lookups that waited for a permit.
    pub(crate) fn waits(&self) -> u64 {
        self.waits.load(Relaxed)
    }

    /// New clients started to drop the idle connections of the old one.
    pub(crate) fn flushes(&self) -> u64 {
        self.flushes.load(Relaxed)
    }

    /// A permit for a request to pool key `key`: that key's idle lease when the current
    /// client holds one (the request reuses its connection), else a free permit, else, when
    /// the current client holds idle leases, a new client (the old one's idle connections
    /// close once its last request ends) and a wait for a permit.
    pub(crate) async fn checkout(&self, key: &str) -> Checkout {
        let mut waited = false;
        loop {
            let generation = {
                let mut cur = self.current.lock().unwrap_or_else(|e| e.into_inner());
                let g = cur.clone();
                let lease = {
                    let mut leases = g.leases();
                    leases.sweep(Instant::now());
                    leases.take(key)
                };
                if let Some(permit) = lease {
                    return Checkout { generation: g, key: key.to_string(), permit };
                }
                if let Ok(permit) = self.sockets.clone().try_acquire_owned() {
                    return Checkout { generation: g, key: key.to_string(), permit };
                }
                let idle = g.leases().by_key.len();
                if idle > 0 {
                    self.rotate(&mut cur);
                }
                cur.clone()
            };
            drop(generation);
            if !waited {
                waited = true;
                self.waits.fetch_add(1, Relaxed);
            }
            let permit = tokio::time::timeout(SWEEP_EVERY, self.sockets.clone().acquire_owned()).await;
            if let Ok(Ok(permit)) = permit {
                let g = self.current.lock().unwrap_or_else(|e| e.into_inner()).clone();
                return Checkout { generation: g, key: key.to_string(), permit };
            }
        }
    }

    /// The request of `c` ended; `pooled`: its connection may stay in the client's pool (a
    /// response read to its end, without `Connection: close`). Its permit becomes the key's
    /// idle lease (one per key, as the pool keeps one idle connection per host), else it is
    /// released.
    /// Past `max_idle` leases, the client's idle connections are all dropped (a new client).
    pub(crate) fn checkin(&self, c: Checkout, pooled: bool) {
        if !pooled {
            return;
        }
        let until = Instant::now() + self.idle_hold;
        let idle = c.generation.leases().put(c.key, c.permit, until);
        if idle > self.max_idle {
            let mut cur = self.current.lock().unwrap_or_else(|e| e.into_inner());
            if Arc::ptr_eq(&cur, &c.generation) {
                self.rotate(&mut cur);
            }
        }
    }

    /// A new client in place of `cur`: the old one, and its idle connections, are dropped
    /// once the requests running on it end (their leases [`CLOSE_GRACE`] after).
    fn rotate(&self, cur: &mut Arc<Generation>) {
        match (self.build)() {
            Ok(client) => {
                *cur = Arc::new(Generation::new(client));
                self.flushes.fetch_add(1, Relaxed);
            }
            Err(e) => tracing::warn!(error = %e, "a new HTTP client could not be built"),
        }
    }

    /// A permit for an address lookup (the system resolver's socket), released when dropped.
    pub(crate) async fn lookup_permit(&self) -> OwnedSemaphorePermit {
        if let Ok(p) = self.sockets.clone().try_acquire_owned() {
            return p;
        }
        self.waits.fetch_add(1, Relaxed);
        loop {
            if let Ok(Ok(p)) = tokio::time::timeout(SWEEP_EVERY, self.sockets.clone().acquire_owned()).await {
                return p;
            }
            let g = self.current.lock().unwrap_or_else(|e| e.into_inner()).clone();
            g.leases().sweep(Instant::now());
        }
    }
}

/// The pool key of a URL: scheme, host and port (the HTTP client pools by these).
pub(crate) fn pool_key(url: &url::Url) -> String {
    format!(
        "{}://{}:{}",
        url.scheme(),
        url.host_str().unwrap_or(""),
        url.port_or_known_default().unwrap_or(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(limit: usize, idle: Duration) -> Pool {
        Pool::new(limit, DEFAULT_MAX_IDLE, idle, Box::new(|| reqwest::Client::builder().build())).unwrap()
    }

    #[test]
    fn the_limit_is_read_from_proc() {
        if let Some((soft, open)) = descriptor_limit_and_open() {
            assert!(soft > 0 && open > 0 && open < soft, "{soft} {open}");
            // Other tests open files meanwhile: the budget is below the limit less the reserve.
            let budget = socket_budget_from_limit();
            assert!(budget >= 1 && budget <= soft.saturating_sub(RESERVED_DESCRIPTORS).max(1), "{budget}");
        }
        assert_eq!(idle_hold(Duration::from_secs(5)), Duration::from_millis(10_500));
    }

    #[tokio::test]
    async fn idle_leases_are_reused_by_their_host_flushed_when_short_and_expire() {
        let p = pool(2, Duration::from_millis(100));
        let a = p.checkout("http://a.test:80").await;
        let b = p.checkout("http://b.test:80").await;
        assert_eq!(p.in_use(), 2);
        let first = Arc::as_ptr(&a.generation);
        p.checkin(a, true);
        p.checkin(b, false);
        assert_eq!(p.in_use(), 1, "a's lease held, b's permit released");
        // a's next request takes its lease over: no new permit.
        let a = p.checkout("http://a.test:80").await;
        assert_eq!(p.in_use(), 1);
        p.checkin(a, true);
        let c = p.checkout("http://c.test:80").await;
        assert_eq!((p.in_use(), p.waits(), p.flushes()), (2, 0, 0));
        p.checkin(c, true);
        // No permit free, a and c idle: a new client; the old one's leases go back to the
        // budget as soon as nothing runs on it (here at once).
        let d = p.checkout("http://d.test:80").await;
        assert_eq!((p.waits(), p.flushes()), (1, 1));
        assert_ne!(Arc::as_ptr(&d.generation), first);
        assert_eq!(p.in_use(), 1);
        p.checkin(d, true);
        // A lease runs out after idle_hold (2 × 100 ms + 500 ms).
        tokio::time::sleep(Duration::from_millis(800)).await;
        let e = p.checkout("http://e.test:80").await;
        let f = p.checkout("http://f.test:80").await;
        assert_eq!(p.in_use(), 2);
        assert_eq!(p.flushes(), 1, "the expired lease was swept, not flushed");
        drop((e, f));
    }

    #[tokio::test]
    async fn past_max_idle_the_idle_connections_are_dropped() {
        let p = Pool::new(100, 2, Duration::from_secs(5), Box::new(|| reqwest::Client::builder().build()))
            .unwrap();
        for host in ["a", "b"] {
            let c = p.checkout(&format!("http://{host}.test:80")).await;
            p.checkin(c, true);
        }
        assert_eq!((p.in_use(), p.flushes()), (2, 0));
        let c = p.checkout("http://c.test:80").await;
        p.checkin(c, true);
        // A third idle lease: the client goes, its leases after CLOSE_GRACE.
        assert_eq!(p.flushes(), 1);
        tokio::time::sleep(CLOSE_GRACE + Duration::from_millis(100)).await;
        assert_eq!(p.in_use(), 0);
    }

    #[tokio::test]
    async fn at_the_bound_a_request_waits_for_a_permit() {
        let p = Arc::new(pool(1, Duration::from_secs(5)));
        let held = p.checkout("http://a.test:80").await;
        let p2 = p.clone();
        let waiter = tokio::spawn(async move {
            let c = p2.checkout("http://b.test:80").await;
            p2.checkin(c, false);
        });
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(!waiter.is_finished(), "no permit free: the request waits");
        p.checkin(held, false);
        tokio::time::timeout(Duration::from_secs(5), waiter).await.unwrap().unwrap();
        assert_eq!((p.in_use(), p.waits()), (0, 1));
        let l = p.lookup_permit().await;
        assert_eq!(p.in_use(), 1);
        drop(l);
        assert_eq!(p.in_use(), 0);
    }
}
