//! Resolved addresses, cached with a time to live (issue 37, item 4): the scheduler learns a
//! host's address before its first request (to bound the requests per address), and the
//! fetcher's connections use the same answer while it lives. `--resolve` mappings come first
//! and are never cached (they are fixed). The system resolver gives no TTL, so every answer
//! lives [`DEFAULT_DNS_TTL`]; the cache holds at most `max_entries` names (expired ones, then
//! the oldest, are dropped when it is full).

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a resolved address is used.
pub const DEFAULT_DNS_TTL: Duration = Duration::from_secs(300);
/// Most names kept (about 200 bytes each: 13 MiB; a crawl needs a name's answer from its
/// first request to its last within the TTL, far fewer names than that).
pub const DEFAULT_DNS_ENTRIES: usize = 1 << 16;

#[derive(Debug, Default)]
struct Entries {
    by_name: HashMap<String, (Vec<SocketAddr>, Instant)>,
    /// Names in insertion order, with their expiry (stale entries skipped).
    order: VecDeque<(Instant, String)>,
}

/// Answers of the resolver by host name, each until its expiry.
#[derive(Debug)]
pub struct DnsCache {
    ttl: Duration,
    max_entries: usize,
    entries: Mutex<Entries>,
}

impl Default for DnsCache {
    fn default() -> Self {
        DnsCache::new(DEFAULT_DNS_TTL, DEFAULT_DNS_ENTRIES)
    }
}

impl DnsCache {
    pub fn new(ttl: Duration, max_entries: usize) -> Self {
        DnsCache { ttl, max_entries: max_entries.max(1), entries: Mutex::new(Entries::default()) }
    }

    /// The live answer for `host`, if any.
    pub fn get(&self, host: &str, now: Instant) -> Option<Vec<SocketAddr>> {
        let e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        e.by_name.get(host).filter(|(_, until)| *until > now).map(|(a, _)| a.clone())
    }

    /// Keep `addrs` as `host`'s answer from `now`.
    pub fn put(&self, host: &str, addrs: Vec<SocketAddr>, now: Instant) {
        let mut e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let until = now + self.ttl;
        while e.by_name.len() >= self.max_entries && !e.by_name.contains_key(host) {
            let Some((t, name)) = e.order.pop_front() else { break };
            if e.by_name.get(&name).is_some_and(|(_, u)| *u == t) {
                e.by_name.remove(&name);
            }
        }
        e.by_name.insert(host.to_string(), (addrs, until));
        e.order.push_back((until, host.to_string()));
        // Drop what expired at the front, so `order` stays about the size of `by_name`.
        while e.order.front().is_some_and(|(t, _)| *t <= now) {
            let Some((t, name)) = e.order.pop_front() else { break };
            if e.by_name.get(&name).is_some_and(|(_, u)| *u == t) {
                e.by_name.remove(&name);
            }
        }
    }

    /// Names held.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The address a request to `host` goes to first, from an answer.
pub fn first_ip(addrs: &[SocketAddr]) -> Option<IpAddr> {
    addrs.first().map(|a| a.ip())
}

/// Look `host` up: the cached answer while it lives, else the system resolver's, the
/// addresses `keep` refuses (the SSRF guard) dropped (none left: refused), then cached.
#[cfg(feature = "net")]
pub(crate) async fn lookup_guarded(
    dns: &DnsCache,
    host: &str,
    keep: impl Fn(IpAddr) -> bool,
) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
    if let Some(addrs) = dns.get(host, Instant::now()) {
        return Ok(addrs);
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
    let allowed: Vec<SocketAddr> = addrs.iter().copied().filter(|a| keep(a.ip())).collect();
    if allowed.is_empty() {
        return Err(format!(
            "refused: {host} resolves only to non-public addresses ({addrs:?}); use --allow-private for intranet crawls"
        )
        .into());
    }
    dns.put(host, allowed.clone(), Instant::now());
    Ok(allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn answers_live_for_their_ttl() {
        let t0 = Instant::now();
        let c = DnsCache::new(Duration::from_secs(10), 100);
        assert_eq!(c.get("a.test", t0), None);
        c.put("a.test", vec![sa("192.0.2.1:0")], t0);
        assert_eq!(c.get("a.test", t0 + Duration::from_secs(9)), Some(vec![sa("192.0.2.1:0")]));
        assert_eq!(c.get("a.test", t0 + Duration::from_secs(10)), None);
        // A new answer replaces the old one and lives from its own time.
        c.put("a.test", vec![sa("192.0.2.2:0")], t0 + Duration::from_secs(5));
        assert_eq!(c.get("a.test", t0 + Duration::from_secs(12)), Some(vec![sa("192.0.2.2:0")]));
        assert_eq!(first_ip(&[sa("192.0.2.2:80"), sa("192.0.2.3:80")]), Some("192.0.2.2".parse().unwrap()));
    }

    #[test]
    fn a_full_cache_drops_its_oldest_names() {
        let t0 = Instant::now();
        let c = DnsCache::new(Duration::from_secs(60), 3);
        for (i, name) in ["a", "b", "c", "d"].iter().enumerate() {
            c.put(name, vec![sa("192.0.2.1:0")], t0 + Duration::from_secs(i as u64));
        }
        assert_eq!(c.len(), 3);
        assert!(c.get("a", t0).is_none() && c.get("d", t0).is_some());
        // Expired names are dropped as new ones come in.
        c.put("e", vec![sa("192.0.2.1:0")], t0 + Duration::from_secs(120));
        assert_eq!(c.len(), 1);
    }
}
