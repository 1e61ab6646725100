//! Per-host politeness: one request in flight by default, a delay between requests that
//! grows with the host's response time (as Heritrix's `delayFactor`), robots.txt
//! `Crawl-delay` honored up to a cap, backoff on 429/503 (Retry-After first, else
//! exponential with jitter, capped), and hosts parked after repeated failures.

use std::time::{Duration, Instant};

use rand::Rng;

/// Politeness settings.
#[derive(Debug, Clone)]
pub struct PolitenessConfig {
    /// Minimum gap between the end of one request to a host and the start of the next.
    pub min_delay: Duration,
    /// Delay = this × the last response time, when larger than `min_delay` (Heritrix's
    /// delay factor); capped at `max_delay`.
    pub delay_factor: f64,
    pub max_delay: Duration,
    /// Longest robots.txt `Crawl-delay` honored; longer values are cut to this.
    pub max_crawl_delay: Duration,
    /// Requests in flight per host.
    pub per_host_concurrency: usize,
    /// First backoff after a 429/503 without Retry-After; doubles each time.
    pub backoff_base: Duration,
    /// Longest backoff, also the cap for Retry-After.
    pub backoff_cap: Duration,
    /// Consecutive failures (429/503/5xx/network) after which a host is parked.
    pub park_after_failures: u32,
    /// How long a parked host rests.
    pub park_for: Duration,
}

impl Default for PolitenessConfig {
    fn default() -> Self {
        PolitenessConfig {
            min_delay: Duration::from_secs(1),
            delay_factor: 2.0,
            max_delay: Duration::from_secs(30),
            max_crawl_delay: Duration::from_secs(30),
            per_host_concurrency: 1,
            backoff_base: Duration::from_secs(2),
            backoff_cap: Duration::from_secs(600),
            park_after_failures: 5,
            park_for: Duration::from_secs(3600),
        }
    }
}

/// What happened to one request, as far as politeness cares.
#[derive(Debug, Clone, Copy)]
pub enum Outcome {
    /// Any response that is not a throttle or server error.
    Ok { elapsed: Duration },
    /// 429 or 503: back off, honoring Retry-After when given.
    Throttled { retry_after: Option<Duration> },
    /// Other 5xx, timeouts, connection failures.
    Failed,
}

/// The politeness state of one host.
#[derive(Debug, Clone)]
pub struct HostState {
    pub next_allowed: Instant,
    pub in_flight: usize,
    pub consecutive_failures: u32,
    pub parked_until: Option<Instant>,
    pub crawl_delay: Option<Duration>,
    /// Backoffs applied (for reporting).
    pub backoffs: u64,
}

impl HostState {
    pub fn new(now: Instant) -> Self {
        HostState {
            next_allowed: now,
            in_flight: 0,
            consecutive_failures: 0,
            parked_until: None,
            crawl_delay: None,
            backoffs: 0,
        }
    }

    /// May a request start now?
    pub fn is_due(&self, now: Instant, cfg: &PolitenessConfig) -> bool {
        self.in_flight < cfg.per_host_concurrency.max(1)
            && now >= self.next_allowed
            && self.parked_until.is_none_or_past(now)
    }

    /// When this host can next start a request (ignoring in-flight limits).
    pub fn due_at(&self) -> Instant {
        match self.parked_until {
            Some(p) if p > self.next_allowed => p,
            _ => self.next_allowed,
        }
    }

    pub fn on_start(&mut self, now: Instant, cfg: &PolitenessConfig) {
        self.in_flight += 1;
        // With more than one request in flight allowed, still space their starts.
        self.next_allowed = self.next_allowed.max(now + self.base_delay(cfg, Duration::ZERO));
    }

    /// Record a finished request; returns the backoff applied, if any.
    pub fn on_finish(&mut self, now: Instant, outcome: Outcome, cfg: &PolitenessConfig) -> Option<Duration> {
        self.in_flight = self.in_flight.saturating_sub(1);
        match outcome {
            Outcome::Ok { elapsed } => {
                self.consecutive_failures = 0;
                self.next_allowed = self.next_allowed.max(now + self.base_delay(cfg, elapsed));
                None
            }
            Outcome::Throttled { retry_after } => {
                self.consecutive_failures += 1;
                let wait = match retry_after {
                    Some(d) => d.min(cfg.backoff_cap),
                    None => self.exponential_backoff(cfg),
                };
                let wait = wait.max(self.base_delay(cfg, Duration::ZERO));
                self.backoffs += 1;
                self.next_allowed = self.next_allowed.max(now + wait);
                self.maybe_park(now, cfg);
                Some(wait)
            }
            Outcome::Failed => {
                self.consecutive_failures += 1;
                let wait = self.exponential_backoff(cfg).max(self.base_delay(cfg, Duration::ZERO));
                self.next_allowed = self.next_allowed.max(now + wait);
                self.maybe_park(now, cfg);
                Some(wait)
            }
        }
    }

    fn maybe_park(&mut self, now: Instant, cfg: &PolitenessConfig) {
        if self.consecutive_failures >= cfg.park_after_failures {
            self.parked_until = Some(now + cfg.park_for);
        }
    }

    pub fn is_parked(&self, now: Instant) -> bool {
        self.parked_until.is_some_and(|p| p > now)
    }

    /// The delay after a normal response: max(min delay, factor × response time capped,
    /// Crawl-delay capped).
    fn base_delay(&self, cfg: &PolitenessConfig, elapsed: Duration) -> Duration {
        let scaled = elapsed.mul_f64(cfg.delay_factor.max(0.0)).min(cfg.max_delay);
        let crawl_delay = self.crawl_delay.map(|d| d.min(cfg.max_crawl_delay)).unwrap_or(Duration::ZERO);
        cfg.min_delay.max(scaled).max(crawl_delay)
    }

    /// base × 2^(failures−1), ±25 % jitter, capped.
    fn exponential_backoff(&self, cfg: &PolitenessConfig) -> Duration {
        let exp = self.consecutive_failures.saturating_sub(1).min(20);
        let raw = cfg.backoff_base.saturating_mul(1u32 << exp).min(cfg.backoff_cap);
        let jitter = rand::rng().random_range(0.75..1.25);
        raw.mul_f64(jitter).min(cfg.backoff_cap)
    }
}

trait ParkedExt {
    fn is_none_or_past(&self, now: Instant) -> bool;
}
impl ParkedExt for Option<Instant> {
    fn is_none_or_past(&self, now: Instant) -> bool {
        match self {
            None => true,
            Some(t) => *t <= now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> PolitenessConfig {
        PolitenessConfig { min_delay: Duration::from_millis(100), ..Default::default() }
    }

    #[test]
    fn spacing_follows_min_delay_response_time_and_crawl_delay() {
        let c = cfg();
        let t0 = Instant::now();
        let mut h = HostState::new(t0);
        assert!(h.is_due(t0, &c));
        h.on_start(t0, &c);
        assert!(!h.is_due(t0, &c), "one in flight");
        h.on_finish(t0, Outcome::Ok { elapsed: Duration::from_millis(10) }, &c);
        assert_eq!(h.next_allowed, t0 + Duration::from_millis(100));
        h.on_start(h.next_allowed, &c);
        // A slow response (300 ms) stretches the delay to 2 × 300 ms.
        let t1 = t0 + Duration::from_millis(400);
        h.on_finish(t1, Outcome::Ok { elapsed: Duration::from_millis(300) }, &c);
        assert_eq!(h.next_allowed, t1 + Duration::from_millis(600));
        // Crawl-delay 5 s, capped at 2 s.
        let c2 = PolitenessConfig { max_crawl_delay: Duration::from_secs(2), ..cfg() };
        h.crawl_delay = Some(Duration::from_secs(5));
        h.on_start(h.next_allowed, &c2);
        let t2 = t1 + Duration::from_secs(1);
        h.on_finish(t2, Outcome::Ok { elapsed: Duration::ZERO }, &c2);
        assert_eq!(h.next_allowed, t2 + Duration::from_secs(2));
    }

    #[test]
    fn throttling_backs_off_and_parks() {
        let c = PolitenessConfig { park_after_failures: 3, ..cfg() };
        let t0 = Instant::now();
        let mut h = HostState::new(t0);
        h.on_start(t0, &c);
        assert_eq!(
            h.on_finish(t0, Outcome::Throttled { retry_after: Some(Duration::from_secs(7)) }, &c),
            Some(Duration::from_secs(7))
        );
        assert_eq!(h.next_allowed, t0 + Duration::from_secs(7));
        h.on_start(t0, &c);
        let w = h.on_finish(t0, Outcome::Throttled { retry_after: None }, &c).unwrap();
        // Second failure: base 2 s × 2 = 4 s, ±25 %.
        assert!(w >= Duration::from_secs(3) && w <= Duration::from_secs(5), "{w:?}");
        assert!(!h.is_parked(t0));
        h.on_start(t0, &c);
        h.on_finish(t0, Outcome::Failed, &c);
        assert!(h.is_parked(t0));
        assert!(!h.is_due(t0 + Duration::from_secs(100), &c));
        // Retry-After is capped.
        let mut h2 = HostState::new(t0);
        h2.on_start(t0, &c);
        let capped =
            h2.on_finish(t0, Outcome::Throttled { retry_after: Some(Duration::from_secs(86_400)) }, &c);
        assert_eq!(capped, Some(c.backoff_cap));
        // Success resets the failure count.
        h2.on_start(t0, &c);
        h2.on_finish(t0, Outcome::Ok { elapsed: Duration::ZERO }, &c);
        assert_eq!(h2.consecutive_failures, 0);
    }
}
