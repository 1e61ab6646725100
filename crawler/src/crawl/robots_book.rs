//! robots.txt per origin (RFC 9309 §2.3: the rules of `scheme://host:port/robots.txt` hold
//! for that scheme, host and port only), grouped by the host key the scheduler and its
//! politeness work with: `http://h:8080/robots.txt` never decides for `https://h/`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use url::Url;

use crate::robots::RobotsState;

/// What is known of one host's robots.txt files.
#[derive(Default)]
struct HostRobots {
    /// The SSRF guard refused the host's address: nothing there is fetched.
    refused: bool,
    /// robots.txt fetches of the host in flight.
    fetching: usize,
    /// Per origin: its rules, valid until the instant. A host has one or two origins (http
    /// and https) in all but odd cases, so a list.
    origins: Vec<(String, Arc<RobotsState>, Instant)>,
}

/// robots.txt rules of every host seen, per origin.
#[derive(Default)]
pub(super) struct RobotsBook {
    hosts: HashMap<String, HostRobots>,
}

impl RobotsBook {
    /// The SSRF guard refused `host`'s address.
    pub(super) fn is_refused(&self, host: &str) -> bool {
        self.hosts.get(host).is_some_and(|h| h.refused)
    }

    /// A robots.txt of `host` is being fetched: the host waits.
    pub(super) fn is_fetching(&self, host: &str) -> bool {
        self.hosts.get(host).is_some_and(|h| h.fetching > 0)
    }

    /// The rules for `origin` (of `host`), if known and not expired at `now`.
    pub(super) fn rules(&self, host: &str, origin: &str, now: Instant) -> Option<Arc<RobotsState>> {
        let h = self.hosts.get(host)?;
        h.origins.iter().find(|(o, _, until)| o == origin && *until > now).map(|(_, r, _)| r.clone())
    }

    /// Whether a robots.txt of `host` was read (for any origin, expired or not).
    pub(super) fn knows(&self, host: &str) -> bool {
        self.hosts.get(host).is_some_and(|h| !h.origins.is_empty())
    }

    /// Every origin of `host` whose robots.txt was read, with its rules (expired or not).
    pub(super) fn origins(&self, host: &str) -> Vec<(String, Arc<RobotsState>)> {
        self.hosts
            .get(host)
            .map_or_else(Vec::new, |h| h.origins.iter().map(|(o, r, _)| (o.clone(), r.clone())).collect())
    }

    /// A robots.txt fetch of `host` starts.
    pub(super) fn start_fetch(&mut self, host: &str) {
        self.hosts.entry(host.to_string()).or_default().fetching += 1;
    }

    /// The robots.txt of `origin` (of `host`) was read: `state` holds until `until`.
    pub(super) fn ready(&mut self, host: &str, origin: String, state: RobotsState, until: Instant) {
        let h = self.hosts.entry(host.to_string()).or_default();
        h.fetching = h.fetching.saturating_sub(1);
        h.origins.retain(|(o, _, _)| *o != origin);
        h.origins.push((origin, Arc::new(state), until));
    }

    /// The guard refused `host`'s address while fetching its robots.txt.
    pub(super) fn refuse(&mut self, host: &str) {
        let h = self.hosts.entry(host.to_string()).or_default();
        h.fetching = h.fetching.saturating_sub(1);
        h.refused = true;
    }

    /// Until when `host` rests because one of its robots.txt files was unavailable (it is
    /// asked again then: politeness is per host); None when none was.
    pub(super) fn unavailable_until(&self, host: &str, now: Instant) -> Option<Instant> {
        let h = self.hosts.get(host)?;
        h.origins
            .iter()
            .filter(|(_, r, until)| *until > now && matches!(**r, RobotsState::DisallowAll))
            .map(|(_, _, until)| *until)
            .max()
    }

    /// Forget `host` (idle long enough): its robots.txt files are fetched again should it
    /// get URLs again.
    pub(super) fn remove(&mut self, host: &str) {
        self.hosts.remove(host);
    }
}

/// The origin of `url` (`scheme://host:port`, the port always written), the key of its
/// robots.txt; None for a URL without a host.
pub(super) fn origin_of(url: &str) -> Option<String> {
    let u = Url::parse(url).ok()?;
    let host = u.host_str()?;
    let port = u.port_or_known_default()?;
    Some(format!("{}://{}:{}", u.scheme(), host, port))
}

/// `/robots.txt` at the scheme and authority of `page_url`.
pub(super) fn robots_url(page_url: &str) -> Option<String> {
    let mut r = Url::parse(page_url).ok()?;
    r.set_path("/robots.txt");
    r.set_query(None);
    r.set_fragment(None);
    Some(r.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn origins_are_scheme_host_and_port() {
        assert_eq!(origin_of("http://h.test/a").as_deref(), Some("http://h.test:80"));
        assert_eq!(origin_of("http://h.test:80/a").as_deref(), Some("http://h.test:80"));
        assert_eq!(origin_of("https://h.test/a").as_deref(), Some("https://h.test:443"));
        assert_eq!(origin_of("http://h.test:8080/a?q").as_deref(), Some("http://h.test:8080"));
        assert_eq!(origin_of("http://[::1]:81/").as_deref(), Some("http://[::1]:81"));
        assert_eq!(origin_of("not a url"), None);
        assert_eq!(
            robots_url("http://h.test:8080/a/b?q#f").as_deref(),
            Some("http://h.test:8080/robots.txt")
        );
    }

    #[test]
    fn rules_are_kept_per_origin_and_expire() {
        let now = Instant::now();
        let mut b = RobotsBook::default();
        assert!(b.rules("h", "http://h:80", now).is_none());
        b.start_fetch("h");
        assert!(b.is_fetching("h"));
        let deny = RobotsState::from_status(200, b"User-agent: *\nDisallow: /\n");
        b.ready("h", "http://h:80".into(), deny, now + Duration::from_secs(60));
        assert!(!b.is_fetching("h"));
        let r = b.rules("h", "http://h:80", now).unwrap();
        assert!(!r.is_allowed("ditto", "http://h/x"));
        // Another port of the host has no rules yet; neither has another scheme.
        assert!(b.rules("h", "http://h:8080", now).is_none());
        assert!(b.rules("h", "https://h:443", now).is_none());
        b.start_fetch("h");
        b.ready("h", "http://h:8080".into(), RobotsState::AllowAll, now + Duration::from_secs(1));
        assert!(b.rules("h", "http://h:8080", now).unwrap().is_allowed("ditto", "http://h:8080/x"));
        assert!(b.rules("h", "http://h:8080", now + Duration::from_secs(2)).is_none(), "expired");
        // A fresh read replaces the origin's rules.
        b.start_fetch("h");
        b.ready("h", "http://h:80".into(), RobotsState::AllowAll, now + Duration::from_secs(60));
        assert!(b.rules("h", "http://h:80", now).unwrap().is_allowed("ditto", "http://h/x"));
        assert!(b.unavailable_until("h", now).is_none());
        b.start_fetch("h");
        b.ready("h", "https://h:443".into(), RobotsState::unreachable(), now + Duration::from_secs(60));
        assert_eq!(b.unavailable_until("h", now), Some(now + Duration::from_secs(60)));
        assert!(!b.is_refused("h"));
        b.start_fetch("g");
        b.refuse("g");
        assert!(b.is_refused("g") && !b.is_fetching("g"));
        b.remove("g");
        assert!(!b.is_refused("g"));
    }
}
