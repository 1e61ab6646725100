//! Retiring hosts that fail (issue 37, item 5): a host that fails `after_failures` times in a
//! row (3 by default) — connections refused or reset, DNS, TLS, connect timeouts, or its
//! robots.txt unreachable (a network failure or a 5xx, which RFC 9309 §2.3.1.4 says forbids
//! crawling the host; asked again after the host's backoff) — is retired for `retire_for`. Its queued URLs, and those it gets meanwhile,
//! are finished as failed without requests (counted by reason, one failure-log line each),
//! which frees their places in the frontier and under `--max-queued`; when the time is up the
//! host is forgotten and, should it get URLs again, starts afresh (robots.txt first).
//!
//! Before this, a host whose robots.txt was unreachable rested 10 minutes and was asked
//! again, forever, its URLs held in the frontier. Retirement is kept in memory only (a new
//! run tries every host again) and costs one map entry per retired host until it ends.

#[cfg(feature = "net")]
use std::collections::{HashMap, VecDeque};
use std::time::Duration;
#[cfg(feature = "net")]
use std::time::Instant;

#[cfg(feature = "net")]
use crate::fetch::{FetchError, FetchErrorKind};

/// When hosts retire ([`crate::crawl::CrawlConfig::retire`]).
#[derive(Debug, Clone, Copy)]
pub struct RetireConfig {
    /// Failures in a row (no response between them) after which a host retires: connections
    /// that fail, and robots.txt fetches that find it unreachable (each asked again after the
    /// host's backoff). 0: never retire (an unreachable robots.txt then rests the host for
    /// `robots_retry` and is asked again, as before issue 37).
    pub after_failures: u32,
    /// How long a retired host stays retired.
    pub retire_for: Duration,
}

impl Default for RetireConfig {
    fn default() -> Self {
        RetireConfig { after_failures: 3, retire_for: Duration::from_secs(3600) }
    }
}

/// Why a host retired (the events `host_retired_{reason}` and `retired_url_{reason}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RetireReason {
    /// The connection was refused or reset, or failed otherwise below HTTP.
    Connect,
    /// The name did not resolve.
    Dns,
    /// The TLS handshake failed (certificate, protocol).
    Tls,
    /// The connection was not made in time.
    Timeout,
    /// robots.txt answered with a server error (5xx), or broke off after the connection was
    /// made (a read timeout, a broken response).
    RobotsUnreachable,
}

impl RetireReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Dns => "dns",
            Self::Tls => "tls",
            Self::Timeout => "timeout",
            Self::RobotsUnreachable => "robots_unreachable",
        }
    }

    /// The reason a failed fetch gives, when it failed to connect at all (DNS, TCP, TLS or a
    /// connect timeout); None for failures after a connection was made (a slow or broken
    /// response, a bad URL, an address the guard refused).
    #[cfg(feature = "net")]
    pub fn of(e: &FetchError) -> Option<RetireReason> {
        let detail = e.detail.to_ascii_lowercase();
        match e.kind {
            FetchErrorKind::Connect => Some(if detail.contains("dns error") {
                RetireReason::Dns
            } else if TLS_WORDS.iter().any(|w| detail.contains(w)) {
                RetireReason::Tls
            } else {
                RetireReason::Connect
            }),
            // reqwest names the connect step in its error chain; a timeout while reading a
            // response is the server being slow, not gone.
            FetchErrorKind::Timeout if detail.contains("(connect)") => Some(RetireReason::Timeout),
            _ => None,
        }
    }
}

#[cfg(feature = "net")]
/// Words of rustls' and reqwest's errors that say a TLS handshake failed.
const TLS_WORDS: [&str; 8] = [
    "tls",
    "certificate",
    "handshake",
    "ssl",
    "corrupt message",
    "fatal alert",
    "peer is incompatible",
    "peer misbehaved",
];

#[cfg(feature = "net")]
/// A retired host: until when, why, and the failure that retired it (for the failure log).
#[derive(Debug, Clone)]
pub(super) struct Retired {
    pub(super) until: Instant,
    pub(super) reason: RetireReason,
    pub(super) detail: String,
}

#[cfg(feature = "net")]
/// The retired hosts and the connection failures in a row of the others.
#[derive(Debug, Default)]
pub(super) struct Retirements {
    cfg: RetireConfig,
    /// Connection failures in a row per host (dropped at a response, a retirement or when
    /// the host is forgotten).
    strikes: HashMap<String, u32>,
    retired: HashMap<String, Retired>,
    /// When each retirement ends, oldest first (an entry may be stale: checked on expiry).
    ends: VecDeque<(Instant, String)>,
}

#[cfg(feature = "net")]
impl Retirements {
    pub(super) fn new(cfg: RetireConfig) -> Self {
        Retirements { cfg, ..Default::default() }
    }

    /// The host's retirement, if it is retired.
    pub(super) fn get(&self, host: &str) -> Option<&Retired> {
        self.retired.get(host)
    }

    /// Hosts retired now.
    pub(super) fn count(&self) -> usize {
        self.retired.len()
    }

    /// A response came from the host: its connections work.
    pub(super) fn on_response(&mut self, host: &str) {
        if !self.strikes.is_empty() {
            self.strikes.remove(host);
        }
    }

    /// A connection to the host failed, or its robots.txt was unreachable, for `reason`: true
    /// when this retires it.
    pub(super) fn on_failure(
        &mut self,
        host: &str,
        reason: RetireReason,
        detail: &str,
        now: Instant,
    ) -> bool {
        if self.cfg.after_failures == 0 || self.retired.contains_key(host) {
            return false;
        }
        let n = self.strikes.entry(host.to_string()).or_default();
        *n += 1;
        if *n < self.cfg.after_failures {
            return false;
        }
        let n = *n;
        let detail = format!("{n} failures in a row, the last: {detail}");
        self.retire(host, reason, detail, now);
        true
    }

    /// Retire the host now (robots.txt unreachable, or after its connection failures).
    pub(super) fn retire(&mut self, host: &str, reason: RetireReason, detail: String, now: Instant) {
        self.strikes.remove(host);
        let until = now + self.cfg.retire_for;
        self.retired.insert(host.to_string(), Retired { until, reason, detail });
        self.ends.push_back((until, host.to_string()));
    }

    /// End the retirements that are over by `now`; returns those hosts.
    pub(super) fn expire(&mut self, now: Instant) -> Vec<String> {
        let mut out = Vec::new();
        while self.ends.front().is_some_and(|(t, _)| *t <= now) {
            let Some((_, host)) = self.ends.pop_front() else { break };
            if self.retired.get(&host).is_some_and(|r| r.until <= now) {
                self.retired.remove(&host);
                out.push(host);
            }
        }
        out
    }

    /// The host is forgotten (idle): its failures in a row go too (not its retirement).
    pub(super) fn forget(&mut self, host: &str) {
        self.strikes.remove(host);
    }
}

#[cfg(feature = "net")]
/// The failure-log line of a URL finished because its host is retired.
pub(super) fn retired_url_reason(host: &str, r: &Retired, now: Instant) -> String {
    let left = r.until.saturating_duration_since(now).as_secs();
    format!("host {host} retired ({}, {left} s left): {}", r.reason.as_str(), r.detail)
}

#[cfg(feature = "net")]
#[cfg(test)]
mod tests {
    use super::*;

    fn fe(kind: FetchErrorKind, detail: &str) -> FetchError {
        FetchError { kind, detail: detail.to_string() }
    }

    #[test]
    fn reasons_from_reqwest_errors() {
        let cases = [
            (FetchErrorKind::Connect, "error sending request for url (http://dead.test/): client error (Connect): tcp connect error: Connection refused (os error 111)", Some(RetireReason::Connect)),
            (FetchErrorKind::Connect, "error sending request for url (http://x.test/): client error (Connect): dns error: failed to lookup address information: Name or service not known", Some(RetireReason::Dns)),
            (FetchErrorKind::Connect, "error sending request for url (https://t.test/): client error (Connect): received corrupt message of type InvalidContentType", Some(RetireReason::Tls)),
            (FetchErrorKind::Connect, "client error (Connect): invalid peer certificate: UnknownIssuer", Some(RetireReason::Tls)),
            (FetchErrorKind::Timeout, "error sending request for url (http://s.test/): client error (Connect): operation timed out", Some(RetireReason::Timeout)),
            (FetchErrorKind::Timeout, "no complete response in 60s", None),
            (FetchErrorKind::Body, "error decoding response body", None),
            (FetchErrorKind::Refused, "127.0.0.1 is not a public address", None),
        ];
        for (kind, detail, want) in cases {
            assert_eq!(RetireReason::of(&fe(kind, detail)), want, "{detail}");
        }
    }

    #[test]
    fn three_failures_in_a_row_retire_a_host_for_a_while() {
        let t0 = Instant::now();
        let mut r = Retirements::new(RetireConfig { after_failures: 3, retire_for: Duration::from_secs(60) });
        assert!(!r.on_failure("a", RetireReason::Connect, "refused", t0));
        assert!(!r.on_failure("a", RetireReason::Connect, "refused", t0));
        // A response in between starts the count again.
        r.on_response("a");
        assert!(!r.on_failure("a", RetireReason::Connect, "refused", t0));
        assert!(!r.on_failure("a", RetireReason::Connect, "refused", t0));
        assert!(r.get("a").is_none());
        assert!(r.on_failure("a", RetireReason::Dns, "no such name", t0));
        let got = r.get("a").expect("retired");
        assert_eq!((got.reason, got.until), (RetireReason::Dns, t0 + Duration::from_secs(60)));
        assert!(got.detail.starts_with("3 failures in a row, the last: no such name"), "{}", got.detail);
        assert_eq!(r.count(), 1);
        // Bounded: over after retire_for, and forgotten.
        assert!(r.expire(t0 + Duration::from_secs(59)).is_empty());
        assert_eq!(r.expire(t0 + Duration::from_secs(60)), vec!["a".to_string()]);
        assert!(r.get("a").is_none());
        assert_eq!(r.count(), 0);
    }

    #[test]
    fn a_second_retirement_outlives_the_first_ones_end() {
        let t0 = Instant::now();
        let mut r = Retirements::new(RetireConfig { after_failures: 1, retire_for: Duration::from_secs(10) });
        r.retire("a", RetireReason::RobotsUnreachable, "HTTP status 503".into(), t0);
        assert_eq!(r.expire(t0 + Duration::from_secs(10)), vec!["a".to_string()]);
        r.retire("a", RetireReason::Connect, "refused".into(), t0 + Duration::from_secs(10));
        assert!(r.expire(t0 + Duration::from_secs(15)).is_empty());
        assert_eq!(r.get("a").map(|x| x.reason), Some(RetireReason::Connect));
    }

    #[test]
    fn zero_never_retires_on_connection_failures() {
        let t0 = Instant::now();
        let mut r = Retirements::new(RetireConfig { after_failures: 0, retire_for: Duration::from_secs(10) });
        for _ in 0..10 {
            assert!(!r.on_failure("a", RetireReason::Connect, "refused", t0));
        }
        assert!(r.get("a").is_none());
    }
}
