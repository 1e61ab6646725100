//! The server's own record of every request, for politeness assertions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

/// One request as the server saw it arrive.
#[derive(Clone, Debug)]
pub struct RequestRecord {
    /// `Host` header, lower-cased, port stripped (empty when missing).
    pub host: String,
    /// Path with query, as sent.
    pub path: String,
    pub method: String,
    pub user_agent: Option<String>,
    /// Arrival on the server's monotonic clock (for gaps).
    pub at: Instant,
    /// Arrival on the wall clock (for reports and Retry-After dates).
    pub time: SystemTime,
}

#[derive(Default)]
struct Inner {
    records: Vec<RequestRecord>,
    /// host → (in flight now, most ever in flight).
    in_flight: HashMap<String, (usize, usize)>,
}

/// Shared, cheap to clone; every method takes a consistent snapshot.
#[derive(Clone, Default)]
pub struct RequestLog {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for RequestLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RequestLog({} requests)", self.count())
    }
}

impl RequestLog {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panicking test thread must not hide the log from the others.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records an arrival and counts it in flight until the returned guard drops (the server
    /// drops it when the response body is fully sent or abandoned).
    pub(crate) fn arrive(
        &self,
        host: String,
        path: String,
        method: String,
        user_agent: Option<String>,
    ) -> InFlight {
        let mut inner = self.lock();
        // Stamped under the lock so records stay in arrival order across connections.
        inner.records.push(RequestRecord {
            host: host.clone(),
            path,
            method,
            user_agent,
            at: Instant::now(),
            time: SystemTime::now(),
        });
        let entry = inner.in_flight.entry(host.clone()).or_insert((0, 0));
        entry.0 += 1;
        entry.1 = entry.1.max(entry.0);
        InFlight { log: self.clone(), host }
    }

    /// Every request so far, in arrival order.
    pub fn all(&self) -> Vec<RequestRecord> {
        self.lock().records.clone()
    }

    /// Requests to one host (lower-case, no port), in arrival order.
    pub fn requests_for(&self, host: &str) -> Vec<RequestRecord> {
        let host = host.to_ascii_lowercase();
        self.lock().records.iter().filter(|r| r.host == host).cloned().collect()
    }

    /// Paths requested on one host, in arrival order.
    pub fn paths_for(&self, host: &str) -> Vec<String> {
        self.requests_for(host).into_iter().map(|r| r.path).collect()
    }

    /// How many requests arrived in all.
    pub fn count(&self) -> usize {
        self.lock().records.len()
    }

    /// How many requests arrived for one host.
    pub fn count_for(&self, host: &str) -> usize {
        self.requests_for(host).len()
    }

    /// Hosts seen, sorted.
    pub fn hosts(&self) -> Vec<String> {
        let mut hosts: Vec<String> = self.lock().records.iter().map(|r| r.host.clone()).collect();
        hosts.sort();
        hosts.dedup();
        hosts
    }

    /// Smallest gap between consecutive arrivals at one host; `None` under two requests.
    pub fn min_gap(&self, host: &str) -> Option<Duration> {
        gaps(&self.requests_for(host)).min()
    }

    /// How many consecutive arrivals at one host were closer than `min` (politeness
    /// violations when `min` is the crawler's per-host delay).
    pub fn gaps_below(&self, host: &str, min: Duration) -> usize {
        gaps(&self.requests_for(host)).filter(|g| *g < min).count()
    }

    /// [`Self::gaps_below`] summed over every host.
    pub fn total_gaps_below(&self, min: Duration) -> usize {
        self.hosts().iter().map(|h| self.gaps_below(h, min)).sum()
    }

    /// Most requests to one host ever in flight at once (arrival to body sent or dropped).
    pub fn max_in_flight(&self, host: &str) -> usize {
        let host = host.to_ascii_lowercase();
        self.lock().in_flight.get(&host).map_or(0, |e| e.1)
    }

    /// Requests to one host in flight right now.
    pub fn in_flight(&self, host: &str) -> usize {
        let host = host.to_ascii_lowercase();
        self.lock().in_flight.get(&host).map_or(0, |e| e.0)
    }

    /// Forgets everything recorded so far (in-flight counts of live requests are kept).
    pub fn clear(&self) {
        let mut inner = self.lock();
        inner.records.clear();
        for entry in inner.in_flight.values_mut() {
            entry.1 = entry.0;
        }
    }
}

fn gaps(records: &[RequestRecord]) -> impl Iterator<Item = Duration> + '_ {
    records.windows(2).map(|w| w[1].at.saturating_duration_since(w[0].at))
}

/// Counts one request in flight while alive.
pub(crate) struct InFlight {
    log: RequestLog,
    host: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut inner = self.log.lock();
        if let Some(entry) = inner.in_flight.get_mut(&self.host) {
            entry.0 = entry.0.saturating_sub(1);
        }
    }
}
