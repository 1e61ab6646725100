//! The scheduler's side of retiring hosts ([`super::retire`]): an unavailable robots.txt or
//! a failed connection counted towards a host's retirement, a retired host's URLs finished as
//! failed, and retirements ended when their time is up.

use std::time::{Duration, Instant};

use store::FrontierEntry;

use super::fetched::RobotsFailure;
use super::retire::{retired_url_reason, RetireReason};
use super::schedule::{host_state, Scheduler};
use super::CrawlEvent;
use crate::error::CrawlError;
use crate::fetch::FetchError;

/// Most URLs of one retired host finished per pass ([`Scheduler::drain_retired`]).
const DRAIN_URLS_PER_HOST: usize = 64;

impl Scheduler {
    /// The host's robots.txt was unavailable (`failure` says why): logged, and counted
    /// towards its retirement. Returns how long the "disallow all" answer holds: zero when
    /// the host retired (its URLs are finished) or will be asked again once its backoff is
    /// over (it waits like any host between requests, so it keeps the crawl going, where a
    /// resting host would not).
    pub(super) fn robots_unavailable(
        &mut self,
        host: &str,
        failure: Option<RobotsFailure>,
        now: Instant,
    ) -> Duration {
        if let (Some(log), Some(f)) = (&self.cfg.failure_log, &failure) {
            let reason =
                format!("robots.txt unavailable, nothing fetched from the host meanwhile: {}", f.reason);
            log.write(&f.url, CrawlEvent::RobotsUnavailableDisallowAll, &reason);
        }
        let counts = failure.as_ref().and_then(|f| Some((f.retire?, f)));
        match counts.filter(|_| self.cfg.retire.after_failures > 0) {
            Some((reason, f)) => {
                let detail = format!("robots.txt: {}", f.reason);
                if self.retired.on_failure(host, reason, &detail, now) {
                    self.host_retired(host, reason);
                }
                Duration::ZERO
            }
            None => {
                // A 429 (or retiring off): wait before asking again; the host's URLs stay
                // queued meanwhile.
                let st = host_state(&mut self.hosts, host, now);
                st.next_allowed = st.next_allowed.max(now + self.cfg.robots_retry);
                self.cfg.robots_retry
            }
        }
    }

    /// A page fetch failed: a failure to connect counts towards the host's retirement.
    /// True when the host is retired now (this URL is then finished as failed).
    pub(super) fn connection_failed(
        &mut self,
        host: &str,
        entry: &FrontierEntry,
        e: &FetchError,
        now: Instant,
    ) -> Result<bool, CrawlError> {
        let Some(reason) = RetireReason::of(e) else { return Ok(false) };
        if !self.retired.on_failure(host, reason, &e.to_string(), now) {
            return Ok(false);
        }
        self.host_retired(host, reason);
        self.retries.remove(&entry.url);
        self.finish_retired_url(host, entry, now)?;
        Ok(true)
    }

    /// Count and say that `host` retired.
    fn host_retired(&mut self, host: &str, reason: RetireReason) {
        self.counters.event(CrawlEvent::HostRetired(reason));
        if let Some(r) = self.retired.get(host) {
            tracing::info!(host, reason = reason.as_str(), detail = %r.detail, "host retired");
        }
    }

    /// Finish up to [`DRAIN_URLS_PER_HOST`] queued URLs of `host` if it is retired; None if
    /// it is not, else how many were finished.
    pub(super) fn drain_retired(&mut self, host: &str) -> Result<Option<usize>, CrawlError> {
        if self.retired.get(host).is_none() {
            return Ok(None);
        }
        let now = Instant::now();
        let mut n = 0;
        while n < DRAIN_URLS_PER_HOST {
            let Some(entry) = self.pop(host)? else { break };
            self.retries.remove(&entry.url);
            self.finish_retired_url(host, &entry, now)?;
            n += 1;
        }
        Ok(Some(n))
    }

    /// Finish a URL of a retired host as failed: counted and logged with the reason.
    fn finish_retired_url(
        &mut self,
        host: &str,
        entry: &FrontierEntry,
        now: Instant,
    ) -> Result<(), CrawlError> {
        let Some(r) = self.retired.get(host) else { return Ok(()) };
        let event = CrawlEvent::RetiredUrl(r.reason);
        self.counters.event(event);
        if let Some(log) = &self.cfg.failure_log {
            log.write(&entry.url, event, &retired_url_reason(host, r, now));
        }
        self.store.frontier_finish(&entry.url, &[])?;
        Ok(())
    }

    /// End the retirements that are over: those hosts start afresh (robots.txt first).
    pub(super) fn end_retirements(&mut self, now: Instant) {
        for host in self.retired.expire(now) {
            self.robots.remove(&host);
            self.update_host(&host, now);
        }
        self.counters.retired_hosts.store(self.retired.count() as u64, std::sync::atomic::Ordering::Relaxed);
    }
}
