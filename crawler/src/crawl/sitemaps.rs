//! Which sitemaps a crawl reads, and its bounds per host (issue 38). A host's sitemaps are
//! read once per run when they are wanted: for the hosts the caller's ranker names
//! ([`super::HostRanker::take_sitemap_hosts`]: a focused crawl's copying hosts) and, when
//! asked, for the seeds' hosts ([`super::SitemapPolicy`]). They are the `Sitemap:` lines of
//! the host's robots.txt that name the host itself, else `/sitemap.xml` of each of its
//! origins whose robots.txt is known; they enter the frontier as entries marked `sitemap`,
//! fetched under the host's politeness and robots.txt like its pages, never counted as pages.
//! What they list enters the frontier as links do (scope, traps, depth, the seen set, the
//! frontier's cap), at the priority the host had when its sitemaps were wanted, up to the
//! host's page budget; an index's sitemaps, up to [`MAX_SITEMAP_FILES_PER_HOST`].

use std::collections::{HashMap, HashSet};

use crate::robots::RobotsState;

/// Most sitemap files read per host and run (an index may list 50,000).
pub const MAX_SITEMAP_FILES_PER_HOST: u32 = 100;

/// Where a host's sitemap URLs go: the priority they are queued at, and the depth of the
/// page (or seed) the host was wanted from; listed URLs are one deeper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SitemapJob {
    pub(super) priority: u32,
    pub(super) depth: u32,
}

/// The hosts whose sitemaps are wanted or read, and what each has taken.
#[derive(Default)]
pub(super) struct SitemapJobs {
    /// Wanted, waiting for a robots.txt of the host.
    pending: HashMap<String, SitemapJob>,
    /// Queued (once per host and run).
    started: HashSet<String>,
    /// Sitemap files queued per host.
    files: HashMap<String, u32>,
    /// Page URLs taken from sitemaps per host.
    urls: HashMap<String, u64>,
}

impl SitemapJobs {
    /// Want `host`'s sitemaps; false when they were wanted before.
    pub(super) fn want(&mut self, host: &str, job: SitemapJob) -> bool {
        if self.started.contains(host) || self.pending.contains_key(host) {
            return false;
        }
        self.pending.insert(host.to_string(), job);
        true
    }

    /// The job of `host`, if it waits: now started.
    pub(super) fn start(&mut self, host: &str) -> Option<SitemapJob> {
        let job = self.pending.remove(host)?;
        self.started.insert(host.to_string());
        Some(job)
    }

    /// One more sitemap file of `host` may be queued (counted), or not.
    pub(super) fn take_file(&mut self, host: &str) -> bool {
        let n = self.files.entry(host.to_string()).or_default();
        if *n >= MAX_SITEMAP_FILES_PER_HOST {
            return false;
        }
        *n += 1;
        true
    }

    /// One more page URL of `host` may be taken within `budget` (counted), or not.
    pub(super) fn take_url(&mut self, host: &str, budget: u64) -> bool {
        let n = self.urls.entry(host.to_string()).or_default();
        if *n >= budget {
            return false;
        }
        *n += 1;
        true
    }
}

/// The sitemaps to read for `origin` (`scheme://host:port`) by its robots.txt: the
/// `Sitemap:` lines (the caller keeps those of the host), else `/sitemap.xml`. None when the
/// robots.txt was unavailable (nothing there may be fetched).
pub(super) fn sitemap_urls(origin: &str, robots: &RobotsState) -> Vec<String> {
    match robots {
        RobotsState::Rules(r) if !r.sitemaps().is_empty() => r.sitemaps().to_vec(),
        RobotsState::Rules(_) | RobotsState::AllowAll => vec![format!("{origin}/sitemap.xml")],
        RobotsState::DisallowAll => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_once_per_host_and_bounded() {
        let mut j = SitemapJobs::default();
        let job = SitemapJob { priority: 7, depth: 2 };
        assert!(j.want("h", job));
        assert!(!j.want("h", SitemapJob { priority: 9, depth: 0 }), "wanted twice");
        assert_eq!(j.start("h"), Some(job));
        assert_eq!(j.start("h"), None);
        assert!(!j.want("h", job), "read once per run");
        for _ in 0..MAX_SITEMAP_FILES_PER_HOST {
            assert!(j.take_file("h"));
        }
        assert!(!j.take_file("h") && j.take_file("g"));
        assert!(j.take_url("h", 2) && j.take_url("h", 2) && !j.take_url("h", 2));
    }

    #[test]
    fn robots_sitemap_lines_else_sitemap_xml() {
        let listed =
            RobotsState::from_status(200, b"Sitemap: http://h.test/a.xml\nUser-agent: *\nDisallow:\n");
        assert_eq!(sitemap_urls("http://h.test:80", &listed), ["http://h.test/a.xml"]);
        let none = RobotsState::from_status(200, b"User-agent: *\nDisallow: /x\n");
        assert_eq!(sitemap_urls("http://h.test:80", &none), ["http://h.test:80/sitemap.xml"]);
        assert_eq!(
            sitemap_urls("https://h.test:443", &RobotsState::AllowAll),
            ["https://h.test:443/sitemap.xml"]
        );
        assert!(sitemap_urls("http://h.test:80", &RobotsState::DisallowAll).is_empty());
    }
}
