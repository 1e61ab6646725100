//! Politeness per server (issue 37, item 4): besides each host's own rules, the requests to
//! one IP address, over all the hosts on it, are bounded in number at once
//! ([`ServerConfig::per_ip_in_flight`]) and spaced ([`ServerConfig::per_ip_min_gap`]), so a
//! farm of 500 domains on one address gets a few requests a second, not 500. A host's address
//! is learnt before its first request (the `--resolve` mapping, an IP literal, or a lookup
//! cached with a time to live that the fetcher's connections share: [`crate::dns`]); the
//! hosts of one address share a gate of the [`HostQueue`](super::hostq::HostQueue), which lets
//! one of them (the best ranked) start at a time when the address allows a request.
//!
//! `--politeness-key` says what the per-host rules apply to: `host` (each host name),
//! `domain` (each registrable domain: its hosts share one queue, delay and page cap), or `ip`
//! (each address: the per-address bound takes the per-host values, one request at a time
//! and the per-host delay between starts, when those are stricter).

#[cfg(feature = "net")]
use std::collections::{HashMap, HashSet};
#[cfg(feature = "net")]
use std::net::IpAddr;
use std::time::Duration;
#[cfg(feature = "net")]
use std::time::Instant;

/// What the per-host politeness rules apply to (`--politeness-key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PolitenessKey {
    /// Each host name (and the per-address bound across them).
    #[default]
    Host,
    /// Each registrable domain (`a.example.com` and `b.example.com` are one).
    Domain,
    /// Each IP address.
    Ip,
}

/// Per-address bounds ([`crate::crawl::CrawlConfig::servers`]).
#[derive(Debug, Clone, Copy)]
pub struct ServerConfig {
    pub key: PolitenessKey,
    /// Requests in flight to one address over all its hosts; 0: no bound.
    pub per_ip_in_flight: usize,
    /// Least time between the starts of two requests to one address; zero: none.
    pub per_ip_min_gap: Duration,
}

/// Requests in flight to one address by default.
pub const DEFAULT_PER_IP_IN_FLIGHT: usize = 8;
/// Least time between two requests to one address by default: at most 10 a second, where
/// each host gets 1 a second (the default `--min-delay-ms` of 1,000).
pub const DEFAULT_PER_IP_MIN_GAP: Duration = Duration::from_millis(100);

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            key: PolitenessKey::Host,
            per_ip_in_flight: DEFAULT_PER_IP_IN_FLIGHT,
            per_ip_min_gap: DEFAULT_PER_IP_MIN_GAP,
        }
    }
}

impl ServerConfig {
    /// No per-address bound at all (each host on its own, as before issue 37).
    pub fn unbounded() -> Self {
        ServerConfig { key: PolitenessKey::Host, per_ip_in_flight: 0, per_ip_min_gap: Duration::ZERO }
    }

    /// The bounds that apply, given the per-host ones: with `--politeness-key ip` the
    /// address takes the per-host in-flight bound and delay where they are stricter.
    pub fn effective(&self, per_host_in_flight: usize, per_host_delay: Duration) -> (usize, Duration) {
        match self.key {
            PolitenessKey::Ip => {
                let n = match self.per_ip_in_flight {
                    0 => per_host_in_flight.max(1),
                    n => n.min(per_host_in_flight.max(1)),
                };
                (n, self.per_ip_min_gap.max(per_host_delay))
            }
            _ => (self.per_ip_in_flight, self.per_ip_min_gap),
        }
    }
}

#[cfg(feature = "net")]
/// One address: its gate in the queue of hosts, its requests in flight, when the next may
/// start, and how many hosts are on it.
#[derive(Debug)]
pub(super) struct Server {
    pub(super) gate: super::hostq::GateId,
    pub(super) in_flight: usize,
    pub(super) next_start: Instant,
    pub(super) hosts: usize,
}

#[cfg(feature = "net")]
/// The addresses of the hosts and the state of each address.
#[derive(Debug, Default)]
pub(super) struct Servers {
    /// Requests in flight per address (0: no bound) and least gap between starts.
    pub(super) max_in_flight: usize,
    pub(super) min_gap: Duration,
    /// How long a host's address is used before it is looked up again.
    pub(super) ttl: Duration,
    pub(super) by_ip: HashMap<IpAddr, Server>,
    /// Each host's address (None: it could not be resolved; the host goes ungated and its
    /// fetch fails as the fetcher finds), and when it was learnt.
    pub(super) host_ip: HashMap<String, (Option<IpAddr>, Instant)>,
    /// Hosts whose address is being looked up.
    pub(super) resolving: HashSet<String>,
}

#[cfg(feature = "net")]
impl Servers {
    pub(super) fn new(max_in_flight: usize, min_gap: Duration, ttl: Duration) -> Self {
        Servers { max_in_flight, min_gap, ttl, ..Default::default() }
    }

    /// Whether addresses are bounded at all (else no address is looked up).
    pub(super) fn enabled(&self) -> bool {
        self.max_in_flight > 0 || !self.min_gap.is_zero()
    }

    /// The host's address, if known and fresh at `now`: Some(None) when it could not be
    /// resolved.
    pub(super) fn addr(&self, host: &str, now: Instant) -> Option<Option<IpAddr>> {
        self.host_ip.get(host).filter(|(_, at)| now.duration_since(*at) < self.ttl).map(|(ip, _)| *ip)
    }

    /// The state of the gate of `ip`'s server: shut at its bound, else open from its next start.
    pub(super) fn gate_state(&self, ip: IpAddr) -> Option<(super::hostq::GateId, super::hostq::GateState)> {
        let s = self.by_ip.get(&ip)?;
        let state = if self.max_in_flight > 0 && s.in_flight >= self.max_in_flight {
            super::hostq::GateState::Shut
        } else {
            super::hostq::GateState::OpenAt(s.next_start)
        };
        Some((s.gate, state))
    }
}

/// A lookup that finished: the host (key) and its address.
#[cfg(feature = "net")]
pub(super) struct Resolved {
    pub(super) host: String,
    pub(super) result: Result<IpAddr, crate::fetch::FetchError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ip_key_takes_the_stricter_of_the_per_host_and_per_address_bounds() {
        let c = ServerConfig {
            key: PolitenessKey::Ip,
            per_ip_in_flight: 8,
            per_ip_min_gap: Duration::from_millis(100),
        };
        assert_eq!(c.effective(1, Duration::from_secs(1)), (1, Duration::from_secs(1)));
        let c = ServerConfig { per_ip_in_flight: 0, per_ip_min_gap: Duration::ZERO, ..c };
        assert_eq!(c.effective(2, Duration::from_millis(20)), (2, Duration::from_millis(20)));
        let host = ServerConfig::default();
        assert_eq!(host.effective(1, Duration::from_secs(1)), (8, Duration::from_millis(100)));
        #[cfg(feature = "net")]
        {
            assert!(!Servers::new(0, Duration::ZERO, Duration::from_secs(1)).enabled());
            assert!(Servers::new(0, Duration::from_millis(1), Duration::from_secs(1)).enabled());
        }
    }
}
