//! A finished fetch back into the crawl: the host's politeness state, its robots.txt, the
//! frontier (URL finished, requeued, or redirected), the WARC recorder and the page sink.

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant, SystemTime};

use detector::{Page, PageOrigin};
use store::FrontierEntry;
use url::Url;

use super::fetched::{outcome_of, Done, DoneKind, RobotsFailure};
use super::schedule::{host_state, Scheduler};
use super::{CrawlEvent, CrawledPage};
use crate::directives::directives;
use crate::error::CrawlError;
use crate::fetch::{FetchError, FetchErrorKind, FetchResponse};
use crate::headers_first::BodyRefused;
use crate::politeness::Outcome;
use crate::robots::RobotsState;

/// Tries of one URL that fails for a reason that may pass (429, 5xx, timeouts, refused
/// connections) before it is finished as failed (`retries_exhausted`); each try waits out
/// the host's backoff.
pub(super) const MAX_TRIES: u32 = 3;

impl Scheduler {
    /// One finished fetch (page or robots.txt) back into host states and the frontier.
    pub(super) fn finish_fetch(&mut self, done: Done) -> Result<(), CrawlError> {
        let now = done.finished;
        match done.kind {
            DoneKind::Robots { refused: true, failure, .. } => {
                if let (Some(log), Some(f)) = (&self.cfg.failure_log, failure) {
                    log.write(&f.url, CrawlEvent::RobotsRefusedAddress, &f.reason);
                }
                self.finish_refused_robots(done.host, now)
            }
            DoneKind::Robots { origin, state, outcome, crawl_delay_token, refused: false, failure } => {
                let host = done.host.clone();
                self.finish_robots(done.host, origin, state, outcome, crawl_delay_token, failure, now);
                // Sitemaps wanted before any robots.txt of the host was known (the seeds').
                self.queue_sitemaps(&host)?;
            }
            DoneKind::Page { entry, result: Err(e), .. } => {
                self.finish_failed_fetch(&done.host, entry, &e, now)?
            }
            DoneKind::Page { entry, result: Ok(resp), fetch_time } => {
                self.finish_response(&done.host, entry, resp, fetch_time, now)?
            }
        }
        Ok(())
    }

    /// The guard refused the host's address: its URLs are finished without requests.
    fn finish_refused_robots(&mut self, host: String, now: Instant) {
        let st = host_state(&mut self.hosts, &host, now);
        // No request left the crawler: no politeness wait, no retry.
        st.in_flight = st.in_flight.saturating_sub(1);
        self.counters.event(CrawlEvent::RobotsRefusedAddress);
        self.robots.refuse(&host);
    }

    /// robots.txt fetched (or found unavailable): its Crawl-delay, backoff, and how long
    /// its rules hold. Unavailable, it counts towards retiring the host
    /// ([`Scheduler::robots_unavailable`]).
    #[allow(clippy::too_many_arguments)] // a robots.txt answer, field by field
    fn finish_robots(
        &mut self,
        host: String,
        origin: String,
        state: RobotsState,
        outcome: Outcome,
        crawl_delay_token: Option<f64>,
        failure: Option<RobotsFailure>,
        now: Instant,
    ) {
        let st = host_state(&mut self.hosts, &host, now);
        // Crawl-delay first, so that it already spaces the request after robots.txt.
        st.crawl_delay = crawl_delay_token.filter(|d| d.is_finite() && *d > 0.0).map(Duration::from_secs_f64);
        if st.crawl_delay.is_some() {
            self.counters.event(CrawlEvent::CrawlDelayHonored);
        }
        if st.on_finish(now, outcome, &self.cfg.polite).is_some() {
            self.counters.event(CrawlEvent::RobotsBackoff);
        }
        let ttl = match state {
            RobotsState::DisallowAll => {
                self.counters.event(CrawlEvent::RobotsUnavailableDisallowAll);
                self.robots_unavailable(&host, failure, now)
            }
            _ => {
                self.retired.on_response(&host);
                self.cfg.robots_ttl
            }
        };
        self.robots.ready(&host, origin, state, now + ttl);
    }

    /// No response: back off; a timeout or refused connection gets one more try later.
    fn finish_failed_fetch(
        &mut self,
        host: &str,
        entry: FrontierEntry,
        e: &FetchError,
        now: Instant,
    ) -> Result<(), CrawlError> {
        let st = host_state(&mut self.hosts, host, now);
        st.on_finish(now, Outcome::Failed, &self.cfg.polite);
        self.counters.event(CrawlEvent::FetchError(e.kind));
        if let Some(log) = &self.cfg.failure_log {
            log.write(&entry.url, CrawlEvent::FetchError(e.kind), &e.to_string());
        }
        if self.connection_failed(host, &entry, e, now)? {
            return Ok(()); // the host retired: this URL is finished with its others
        }
        let st = host_state(&mut self.hosts, host, now);
        tracing::info!(host, url = %entry.url, error = e.kind.as_str(), detail = %e.detail, "fetch failed");
        if st.is_parked(now) {
            self.counters.event(CrawlEvent::HostParked);
        }
        let tries = self.retries.remove(&entry.url).unwrap_or(0) + 1;
        if matches!(e.kind, FetchErrorKind::Timeout | FetchErrorKind::Connect) {
            // Tried again later (behind the host's other URLs), up to MAX_TRIES in all.
            let retry = FrontierEntry { priority: 0, ..entry };
            self.retry_or_give_up(retry, tries, &e.to_string())?;
        } else if e.kind == FetchErrorKind::Refused {
            // Kept aside: the next run retries it (e.g. with --allow-private).
            self.store.frontier_finish_refused(&entry)?;
        } else {
            self.store.frontier_finish(&entry.url, &[])?;
        }
        Ok(())
    }

    /// A response: politeness, the WARC record, then by status: requeued (throttled),
    /// redirected, handed on as a page, or finished.
    fn finish_response(
        &mut self,
        host: &str,
        entry: FrontierEntry,
        resp: FetchResponse,
        fetch_time: i64,
        now: Instant,
    ) -> Result<(), CrawlError> {
        self.apply_response_politeness(host, &resp, now);
        self.retired.on_response(host);
        let warc = self.recorder.as_ref().and_then(|r| r.record(&entry.url, fetch_time, &resp));
        self.counters.event(CrawlEvent::HttpStatus(resp.status));
        if !(200..400).contains(&resp.status) {
            tracing::info!(host, url = %entry.url, status = resp.status, "HTTP error status");
        }
        if resp.truncated {
            self.counters.event(CrawlEvent::BodyTruncated);
        }
        let tries = self.retries.remove(&entry.url).unwrap_or(0) + 1;
        if entry.sitemap {
            return self.finish_sitemap(entry, &resp, tries);
        }
        match resp.status {
            // Try again after the backoff, up to MAX_TRIES in all; the entry keeps its place.
            429 | 500..=599 => {
                self.retry_or_give_up(entry, tries, &format!("HTTP status {}", resp.status))?
            }
            // A conditional request's "unchanged" (a recrawl's): no body, nothing to hand on.
            304 => {
                self.counters.event(CrawlEvent::NotModified);
                if let Some(log) = &self.cfg.failure_log {
                    log.write(&entry.url, CrawlEvent::NotModified, "not modified since the stored capture");
                }
                self.store.frontier_finish(&entry.url, &[])?;
            }
            300..=399 => self.follow_redirect(&entry, &resp)?,
            200..=299 if resp.refused.is_some() => self.finish_refused_body(&entry, &resp)?,
            // A body cut at the cap is kept when it reads as a page (issue 37: HTML over the
            // cap is scanned up to the cap, its WARC record marked `WARC-Truncated: length`).
            200..=299 if (self.cfg.accept_content)(resp.header("content-type"), &resp.body) => {
                self.obey_directives(&entry, &resp)?;
                self.hand_on(entry, resp, fetch_time, warc)
            }
            200..=299 => {
                let why =
                    if resp.truncated { CrawlEvent::SkippedTooLarge } else { CrawlEvent::SkippedNotText };
                self.counters.event(why);
                if let Some(log) = &self.cfg.failure_log {
                    let ct = resp.header("content-type").unwrap_or("none");
                    let reason = if resp.truncated {
                        format!("body cut at the cap after {} bytes", resp.body.len())
                    } else {
                        format!("not a text type we read (Content-Type: {ct})")
                    };
                    log.write(&entry.url, why, &reason);
                }
                self.store.frontier_finish(&entry.url, &[])?;
            }
            status => {
                if let Some(log) = &self.cfg.failure_log {
                    log.write(&entry.url, CrawlEvent::HttpStatus(status), &format!("HTTP status {status}"));
                }
                self.store.frontier_finish(&entry.url, &[])?;
            }
        }
        Ok(())
    }

    /// A 2xx response whose body was refused after its headers ([`crate::headers_first`]):
    /// counted (`body_refused_after_headers`, and `skipped_not_text` or `skipped_too_large`
    /// as for a body read and dropped), logged, finished.
    fn finish_refused_body(&mut self, entry: &FrontierEntry, resp: &FetchResponse) -> Result<(), CrawlError> {
        let Some(why) = &resp.refused else { return Ok(()) };
        let event = match why {
            BodyRefused::NotText { .. } => CrawlEvent::SkippedNotText,
            BodyRefused::TooLong { .. } => CrawlEvent::SkippedTooLarge,
        };
        self.counters.event(CrawlEvent::BodyRefusedAfterHeaders);
        self.counters.event(event);
        if let Some(log) = &self.cfg.failure_log {
            log.write(&entry.url, event, &why.to_string());
        }
        self.store.frontier_finish(&entry.url, &[])?;
        Ok(())
    }

    /// A sitemap's response: retried, redirected (still a sitemap), read, or finished.
    fn finish_sitemap(
        &mut self,
        entry: FrontierEntry,
        resp: &FetchResponse,
        tries: u32,
    ) -> Result<(), CrawlError> {
        match resp.status {
            429 | 500..=599 => self.retry_or_give_up(entry, tries, &format!("HTTP status {}", resp.status)),
            300..=399 => self.follow_redirect(&entry, resp),
            200..=299 => self.read_sitemap(entry, resp),
            status => {
                if let Some(log) = &self.cfg.failure_log {
                    log.write(
                        &entry.url,
                        CrawlEvent::HttpStatus(status),
                        &format!("sitemap: HTTP status {status}"),
                    );
                }
                self.store.frontier_finish(&entry.url, &[])?;
                Ok(())
            }
        }
    }

    /// Read a fetched sitemap ([`crate::sitemap`]): an index's sitemaps queued (up to
    /// [`MAX_SITEMAP_FILES_PER_HOST`] per host), a urlset's or text file's URLs on the
    /// sitemap's own host admitted as links are, one deeper than the sitemap, at its priority
    /// (up to the host's page budget); queued with the sitemap's finishing, in one step.
    ///
    /// [`MAX_SITEMAP_FILES_PER_HOST`]: super::sitemaps::MAX_SITEMAP_FILES_PER_HOST
    fn read_sitemap(&mut self, entry: FrontierEntry, resp: &FetchResponse) -> Result<(), CrawlError> {
        let sm = crate::sitemap::parse_sitemap(&resp.body);
        self.counters.event(CrawlEvent::SitemapRead);
        if sm.unreadable {
            self.counters.event(CrawlEvent::SitemapUnreadable);
            if let Some(log) = &self.cfg.failure_log {
                log.write(&entry.url, CrawlEvent::SitemapUnreadable, "neither a sitemap's XML nor URL lines");
            }
        }
        if sm.truncated || resp.truncated {
            self.counters.event(CrawlEvent::SitemapTruncated);
        }
        self.counters.add(CrawlEvent::SitemapUrlCap, sm.over_cap);
        let host = entry.host_key.as_str();
        let index = sm.kind == crate::sitemap::SitemapKind::Index;
        let budget = self.cfg.per_host_max_pages;
        let mut next = Vec::new();
        for loc in &sm.locs {
            let depth = if index { entry.depth } else { entry.depth.saturating_add(1) };
            let Some(mut e) = self.links.admit(Some(&entry.url), loc, depth, entry.priority) else {
                continue;
            };
            if e.host_key != host {
                self.counters.event(CrawlEvent::SitemapOffsite);
            } else if index {
                if self.sitemaps.take_file(host) {
                    e.sitemap = true;
                    next.push(e);
                } else {
                    self.counters.event(CrawlEvent::SitemapFileCap);
                }
            } else if self.sitemaps.take_url(host, budget) {
                self.counters.event(CrawlEvent::SitemapUrls);
                next.push(e);
            } else {
                self.counters.event(CrawlEvent::SitemapHostBudget);
            }
        }
        let next = self.links.route(next);
        let added = self.store.frontier_finish(&entry.url, &next)?;
        let queued = if index { CrawlEvent::SitemapChildrenQueued } else { CrawlEvent::SitemapUrlsQueued };
        self.counters.add(queued, added.queued);
        Ok(())
    }

    /// A URL that failed for a reason that may pass (429, 5xx, timeout, refused connection)
    /// on its `tries`th try: queued again (the host backs off meanwhile), or, after
    /// [`MAX_TRIES`], finished as failed (`retries_exhausted`, with `why` in the failure log).
    fn retry_or_give_up(&mut self, entry: FrontierEntry, tries: u32, why: &str) -> Result<(), CrawlError> {
        if tries < MAX_TRIES {
            self.retries.insert(entry.url.clone(), tries);
            self.store.frontier_requeue(&entry)?;
            return Ok(());
        }
        self.counters.event(CrawlEvent::RetriesExhausted);
        if let Some(log) = &self.cfg.failure_log {
            log.write(
                &entry.url,
                CrawlEvent::RetriesExhausted,
                &format!("gave up after {tries} tries: {why}"),
            );
        }
        self.store.frontier_finish(&entry.url, &[])?;
        Ok(())
    }

    /// The host's next delay from the response: backoff on 429/503 (Retry-After or
    /// exponential), parking after repeated failures.
    fn apply_response_politeness(&mut self, host: &str, resp: &FetchResponse, now: Instant) {
        // The wall clock at `now` (when the fetch finished), not at this call.
        let since = Instant::now().saturating_duration_since(now);
        let received = SystemTime::now().checked_sub(since).unwrap_or_else(SystemTime::now);
        let outcome = outcome_of(resp, received);
        let st = host_state(&mut self.hosts, host, now);
        if st.on_finish(now, outcome, &self.cfg.polite).is_none() {
            return;
        }
        if matches!(outcome, Outcome::Throttled { .. }) {
            self.counters.event(if resp.header("retry-after").is_some() {
                CrawlEvent::BackoffRetryAfter
            } else {
                CrawlEvent::BackoffExponential
            });
        }
        if st.is_parked(now) {
            self.counters.event(CrawlEvent::HostParked);
        }
    }

    /// Queue the redirect's target (admitted like a link, within `max_redirects`) and
    /// finish the redirecting URL, in one step.
    fn follow_redirect(&mut self, entry: &FrontierEntry, resp: &FetchResponse) -> Result<(), CrawlError> {
        let next = resp.header("location").and_then(|target| {
            if entry.hops >= self.cfg.max_redirects {
                self.counters.event(CrawlEvent::RedirectLimit);
                if let Some(log) = &self.cfg.failure_log {
                    let why = format!("redirect not followed: {} redirects in a row already", entry.hops);
                    log.write(&entry.url, CrawlEvent::RedirectLimit, &why);
                }
                return None;
            }
            let mut e = self.links.admit(Some(&entry.url), target, entry.depth, entry.priority)?;
            e.hops = entry.hops + 1;
            e.sitemap = entry.sitemap;
            Some(e)
        });
        let next = self.links.route(next.into_iter().collect());
        self.store.frontier_finish(&entry.url, &next)?;
        Ok(())
    }

    /// What the page asks of crawlers ([`crate::directives`]): `nofollow` marks it for the
    /// link policy (its links are refused when the caller admits them), a meta refresh's
    /// target is queued as a redirect (within `max_redirects`), `noindex` and a canonical
    /// URL elsewhere are counted.
    fn obey_directives(&mut self, entry: &FrontierEntry, resp: &FetchResponse) -> Result<(), CrawlError> {
        let html = detector::clean::sniff_kind(resp.header("content-type"), &resp.body)
            == Some(detector::clean::DocKind::Html);
        let x_robots = resp
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("x-robots-tag"))
            .map(|(_, v)| v.as_str());
        let d = directives(x_robots, html.then_some(resp.body.as_slice()), &self.token);
        if d.is_empty() {
            return Ok(());
        }
        if d.nofollow {
            self.counters.event(CrawlEvent::PageNofollow);
            self.links.mark_nofollow(&entry.url);
        }
        if d.noindex {
            self.counters.event(CrawlEvent::PageNoindex);
        }
        let base = Url::parse(&entry.url).ok();
        let canonical = d.canonical.as_ref().and_then(|c| crate::urls::resolve(base.as_ref()?, c).ok());
        let canonical = canonical.map(String::from).filter(|c| *c != entry.url);
        if canonical.is_some() {
            self.counters.event(CrawlEvent::PageCanonicalElsewhere);
        }
        if d.noindex || canonical.is_some() {
            // Kept per URL for reports (the page's own batch comes later, downstream).
            let kept = store::PageDirectives { noindex: d.noindex, canonical };
            self.store.put_page_directives(&entry.url, &kept)?;
        }
        if let Some(target) = &d.refresh {
            if entry.hops >= self.cfg.max_redirects {
                self.counters.event(CrawlEvent::RedirectLimit);
                if let Some(log) = &self.cfg.failure_log {
                    let why = format!("meta refresh not followed: {} redirects in a row already", entry.hops);
                    log.write(&entry.url, CrawlEvent::RedirectLimit, &why);
                }
            } else if let Some(mut e) =
                self.links.admit(Some(&entry.url), target, entry.depth, entry.priority)
            {
                if e.url != entry.url {
                    e.hops = entry.hops + 1;
                    self.counters.event(CrawlEvent::MetaRefreshFollowed);
                    let next = self.links.route(vec![e]);
                    self.store.frontier_add(&next)?;
                }
            }
        }
        Ok(())
    }

    /// Hand a page to the sink; its ticket is completed downstream.
    fn hand_on(
        &mut self,
        entry: FrontierEntry,
        resp: FetchResponse,
        fetch_time: i64,
        warc: Option<(String, u64)>,
    ) {
        let page = Page {
            url: entry.url.clone(),
            fetch_time,
            status: resp.status,
            content_type: resp.header("content-type").map(str::to_string),
            body: resp.body,
            origin: match warc {
                Some((file, offset)) => PageOrigin::Warc { file, offset },
                None => PageOrigin::Fetch,
            },
        };
        self.counters.pages_out.fetch_add(1, Relaxed);
        tracing::debug!(host = %entry.host_key, url = %entry.url, status = page.status, bytes = page.body.len(), "fetched");
        if !self.sink.send(CrawledPage { page, entry }) {
            // Downstream stopped: leave the ticket in flight (fetched again on resume)
            // rather than lose the page.
            self.counters.event(CrawlEvent::SinkClosed);
        }
    }
}
