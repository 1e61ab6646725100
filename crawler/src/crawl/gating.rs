//! The scheduler's side of politeness per server ([`super::servers`]): a host's address
//! learnt before its first request (a mapping, a literal, a cached or looked-up answer), the
//! host put behind its address's gate, and the gate's state kept as requests start and end.

use std::net::IpAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use super::hostq::HostStatus;
use super::schedule::Scheduler;
use super::servers::{Resolved, Server};
use crate::dns::{first_ip, lookup_guarded};
use crate::error::CrawlError;
use crate::fetch::{is_non_public, FetchError, FetchErrorKind, Fetcher};

/// Most hosts whose first queued URL the scheduler keeps while their robots.txt is not
/// fetched yet ([`Scheduler::head_urls`](super::schedule::Scheduler)): about 100 bytes
/// each, a few MiB at most (hosts waiting this way already hold more in the queue).
const HEAD_URLS: usize = 65_536;

impl Scheduler {
    /// Whether `host` may start a request as far as its address goes: true when its
    /// address is known (or no address is bounded). Else its address is learnt now (a
    /// mapping, a literal, a cached answer: the host joins its address's gate, which lets
    /// it in when the address allows) or looked up (the host waits meanwhile), and false.
    pub(super) fn address_ready(&mut self, host: &str, now: Instant) -> Result<bool, CrawlError> {
        if !self.servers.enabled() || self.servers.addr(host, now).is_some() {
            return Ok(true);
        }
        // A host with requests in flight keeps the address they went to.
        if self.servers.host_ip.contains_key(host) && self.hosts.get(host).is_some_and(|st| st.in_flight > 0)
        {
            return Ok(true);
        }
        if self.servers.resolving.contains(host) {
            return Ok(false);
        }
        let Some(url) = self.store.frontier_pop_peek_url(host)? else { return Ok(true) };
        let Some(name) = url::Url::parse(&url).ok().and_then(|u| u.host_str().map(str::to_string)) else {
            return Ok(true);
        };
        // Kept for the host's first robots.txt fetch (its origin), so the queue is read once;
        // for at most HEAD_URLS hosts (a focused crawl learns the addresses of many hosts
        // it then leaves waiting behind their gates: beyond, their queues are read again).
        if !self.robots.knows(host) && self.head_urls.len() < HEAD_URLS {
            self.head_urls.insert(host.to_string(), url);
        }
        if let Some(ip) = known_addr(&self.fetcher, &name) {
            self.assign_addr(host, Some(ip), now);
            return Ok(false);
        }
        self.servers.resolving.insert(host.to_string());
        self.update_host(host, now);
        let (f, tx, wake, h) =
            (self.fetcher.clone(), self.resolved_tx.clone(), self.frontier_changed.clone(), host.to_string());
        tokio::spawn(async move {
            let result = resolve_host(&f, &name).await;
            let _ = tx.send(Resolved { host: h, result });
            wake.notify_one();
        });
        Ok(false)
    }

    /// Take the lookups that finished: each host joins its address's gate.
    pub(super) fn take_resolved(&mut self, now: Instant) {
        while let Ok(r) = self.resolved_rx.try_recv() {
            if !self.servers.resolving.remove(&r.host) {
                continue;
            }
            match r.result {
                Ok(ip) => self.assign_addr(&r.host, Some(ip), now),
                Err(e) => {
                    tracing::info!(host = %r.host, error = %e, "address lookup failed: fetched without the per-address bound");
                    self.assign_addr(&r.host, None, now);
                }
            }
            self.update_host(&r.host, now);
        }
    }

    /// `host`'s address is `ip` (None: unknown): it joins that address's gate.
    fn assign_addr(&mut self, host: &str, ip: Option<IpAddr>, now: Instant) {
        let old = self.servers.host_ip.insert(host.to_string(), (ip, now)).and_then(|(ip, _)| ip);
        if old == ip {
            return;
        }
        if let Some(old) = old {
            self.leave_server(old);
        }
        let gate = ip.map(|ip| {
            let queue = &mut self.queue;
            let s = self.servers.by_ip.entry(ip).or_insert_with(|| Server {
                gate: queue.new_gate(now),
                in_flight: 0,
                next_start: now,
                hosts: 0,
            });
            s.hosts += 1;
            s.gate
        });
        if let Some(id) = self.queue.id(host) {
            self.queue.set_gate(id, gate, now);
        }
        if let Some(ip) = ip {
            self.set_gate_state(ip, now);
        }
        self.counters.servers.store(self.servers.by_ip.len() as u64, Relaxed);
    }

    /// A host leaves the server of `ip`; a server without hosts or requests is dropped.
    fn leave_server(&mut self, ip: IpAddr) {
        let Some(s) = self.servers.by_ip.get_mut(&ip) else { return };
        s.hosts = s.hosts.saturating_sub(1);
        if s.hosts == 0 && s.in_flight == 0 && self.queue.gate_members(s.gate) == 0 {
            self.queue.drop_gate(s.gate);
            self.servers.by_ip.remove(&ip);
        }
    }

    /// Tell the queue whether `ip`'s gate lets a host start.
    fn set_gate_state(&mut self, ip: IpAddr, now: Instant) {
        if let Some((gate, state)) = self.servers.gate_state(ip) {
            self.queue.set_gate_state(gate, state, now);
        }
    }

    /// A request of `host` starts: its address's count and gap.
    pub(super) fn server_started(&mut self, host: &str, now: Instant) {
        let Some((Some(ip), _)) = self.servers.host_ip.get(host).copied() else { return };
        let gap = self.servers.min_gap;
        if let Some(s) = self.servers.by_ip.get_mut(&ip) {
            s.in_flight += 1;
            s.next_start = s.next_start.max(now + gap);
        }
        self.set_gate_state(ip, now);
    }

    /// A request of `host` ended.
    pub(super) fn server_finished(&mut self, host: &str, now: Instant) {
        let Some((Some(ip), _)) = self.servers.host_ip.get(host).copied() else { return };
        if let Some(s) = self.servers.by_ip.get_mut(&ip) {
            s.in_flight = s.in_flight.saturating_sub(1);
        }
        self.set_gate_state(ip, now);
    }

    /// The host is forgotten (idle): its address too.
    pub(super) fn forget_addr(&mut self, host: &str) {
        self.servers.resolving.remove(host);
        self.head_urls.remove(host);
        if let Some((Some(ip), _)) = self.servers.host_ip.remove(host) {
            self.leave_server(ip);
        }
    }

    /// Whether the host waits for its address to be looked up.
    pub(super) fn resolving_status(&self, host: &str) -> Option<HostStatus> {
        self.servers.resolving.contains(host).then_some(HostStatus::Busy)
    }
}

/// The address of `host` known without a lookup: an IP literal, a `--resolve` mapping, or a
/// live cached answer.
fn known_addr(f: &Fetcher, host: &str) -> Option<IpAddr> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Some(ip);
    }
    let cfg = f.config();
    if let Some(a) = cfg.resolve.get(host) {
        return Some(a.ip());
    }
    cfg.dns.get(host, Instant::now()).and_then(|a| first_ip(&a))
}

/// The address requests to `host` go to ([`known_addr`], else looked up and cached as the
/// fetcher's own connections would, under the same guard).
async fn resolve_host(f: &Fetcher, host: &str) -> Result<IpAddr, FetchError> {
    if let Some(ip) = known_addr(f, host) {
        return Ok(ip);
    }
    let cfg = f.config();
    let allow_private = cfg.allow_private;
    // The system resolver opens a socket: one of the fetcher's (waits at the bound).
    let _socket = f.lookup_socket().await;
    match lookup_guarded(&cfg.dns, host, |ip| allow_private || !is_non_public(ip)).await {
        Ok(addrs) => first_ip(&addrs).ok_or_else(|| FetchError {
            kind: FetchErrorKind::Connect,
            detail: format!("dns error: no address for {host}"),
        }),
        Err(e) => {
            let detail = e.to_string();
            let kind = if detail.starts_with("refused: ") {
                FetchErrorKind::Refused
            } else {
                FetchErrorKind::Connect
            };
            Err(FetchError { kind, detail: format!("dns error: {detail}") })
        }
    }
}
