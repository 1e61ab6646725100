//! Which hosts a crawl fetches from next, when the caller ranks them ([`HostRanker`]).
//!
//! The crawler knows nothing of detection: links come with priorities, and a caller that
//! learns something per host (a focused crawl: which hosts carry labeled content) ranks hosts
//! through this trait. With a ranker, the focus set comes first: the best
//! [`CrawlConfig::focus_hosts`] hosts that can fetch at all, and beyond the best
//! [`CrawlConfig::focus_min_hosts`] only those ranked at least
//! [`CrawlConfig::focus_rank_span`] × the best rank; a host of the set that must still wait
//! for its politeness delay keeps its place and a request slot. The slots the set leaves free
//! go to the best ready hosts beyond it, in rank order, up to [`CrawlConfig::focus_spare`] ×
//! `max_in_flight` (work-conserving: the crawl does not idle while hosts are due; with 0 the
//! set alone is fetched from and the page budget goes to its hosts). Politeness (delays, one
//! request per host, robots.txt, backoff) is exactly as without a ranker. Without a ranker
//! every queued host is eligible, best priority first, as before.
//!
//! [`CrawlConfig::focus_hosts`]: super::CrawlConfig::focus_hosts
//! [`CrawlConfig::focus_rank_span`]: super::CrawlConfig::focus_rank_span
//! [`CrawlConfig::focus_min_hosts`]: super::CrawlConfig::focus_min_hosts
//! [`CrawlConfig::focus_spare`]: super::CrawlConfig::focus_spare

use store::FrontierEntry;

/// Ranks hosts for the scheduler and hears which URL was taken when.
pub trait HostRanker: Send + Sync {
    /// The rank of `host_key` whose best queued URL has `best_priority` (higher is fetched
    /// first). Called when a host's best priority changes and for the hosts
    /// [`take_changed`](Self::take_changed) names, never for every host at once.
    fn rank(&self, host_key: &str, best_priority: u32) -> f64;

    /// The hosts whose rank may have changed since the last call for another reason than
    /// their best priority (e.g. what their pages showed), each once. The scheduler ranks
    /// these again and no others: a ranker whose ranks change must name the hosts here.
    fn take_changed(&self) -> Vec<String> {
        Vec::new()
    }

    /// Hosts ranked high enough that their sitemaps are worth reading (for a focused crawl:
    /// hosts whose pages showed copied content), each named once per run. The scheduler
    /// reads their sitemaps when [`super::SitemapPolicy::ranked`] is set.
    fn take_sitemap_hosts(&self) -> Vec<String> {
        Vec::new()
    }

    /// A page fetch of `entry` starts: the `n`th page fetch of this run (from 1), its host
    /// ranked `rank`, at `position` (0 = best) among the hosts eligible in that pass.
    fn taken(&self, entry: &FrontierEntry, n: u64, rank: f64, position: usize) {
        let _ = (entry, n, rank, position);
    }
}

/// A queued host with its best priority and rank.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedHost {
    pub host: String,
    pub best_priority: u32,
    pub rank: f64,
}

/// Order hosts best first: by rank (from `ranker`, or the best priority without one), then
/// best priority, then host key (so runs are repeatable).
pub fn rank_hosts(hosts: Vec<(String, u32)>, ranker: Option<&dyn HostRanker>) -> Vec<RankedHost> {
    let mut out: Vec<RankedHost> = hosts
        .into_iter()
        .map(|(host, best_priority)| {
            let rank = match ranker {
                Some(r) => {
                    let x = r.rank(&host, best_priority);
                    if x.is_finite() {
                        x
                    } else {
                        0.0
                    }
                }
                None => best_priority as f64,
            };
            RankedHost { host, best_priority, rank }
        })
        .collect();
    out.sort_by(|a, b| {
        b.rank.total_cmp(&a.rank).then(b.best_priority.cmp(&a.best_priority)).then(a.host.cmp(&b.host))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct ByName;
    impl HostRanker for ByName {
        fn rank(&self, host_key: &str, best_priority: u32) -> f64 {
            if host_key.starts_with("good") {
                1.0
            } else if host_key == "nan" {
                f64::NAN
            } else {
                best_priority as f64 / 1e9
            }
        }
    }

    #[test]
    fn ranker_decides_then_priority_then_name() {
        let hosts = vec![
            ("b".to_string(), 5),
            ("good2".to_string(), 1),
            ("a".to_string(), 5),
            ("good1".to_string(), 1),
            ("nan".to_string(), 9),
            ("c".to_string(), 7),
        ];
        let order: Vec<String> =
            rank_hosts(hosts.clone(), Some(&ByName)).into_iter().map(|h| h.host).collect();
        assert_eq!(order, ["good1", "good2", "c", "a", "b", "nan"]);
        // Without a ranker: best priority first, as the scheduler always did.
        let order: Vec<String> = rank_hosts(hosts, None).into_iter().map(|h| h.host).collect();
        assert_eq!(order, ["nan", "c", "a", "b", "good1", "good2"]);
    }
}
