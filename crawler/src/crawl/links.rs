//! Which links enter the frontier: canonical, in scope, not a trap, not too deep, and (in a
//! partitioned crawl) owned by this partition.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use store::FrontierEntry;

use crate::partition::PartitionRouter;
use url::Url;

use crate::urls::{
    canonical_url, registrable_domain, resolve, strip_credentials, surt_host_key, OutOfScope, ScopeRules,
    TrapGuard, UrlError,
};

/// Links taken from one page by default (`ditto crawl --max-links-per-page`). Pages with
/// more are rare (sitemaps-as-HTML, directory listings) or hostile (issue 26: one page of
/// 100,000 links).
pub const DEFAULT_MAX_LINKS_PER_PAGE: usize = 10_000;

/// Pages marked `nofollow` kept until their links are admitted: the crawler marks a page
/// when it hands it on, and the caller admits its links a moment later (the pipeline
/// between them is bounded far below this); the oldest marks go first.
const NOFOLLOW_KEPT: usize = 4096;

/// Pages whose links are not to be followed (`nofollow`), oldest first.
#[derive(Default)]
struct NofollowPages {
    urls: HashSet<String>,
    order: VecDeque<String>,
}

/// Admits links into the frontier: canonicalization, scope, traps, depth. Shared by the
/// crawler (redirect targets) and the caller (links found on pages).
pub struct LinkPolicy {
    pub scope: ScopeRules,
    pub traps: Mutex<TrapGuard>,
    pub max_depth: u32,
    /// Most links taken from one page ([`DEFAULT_MAX_LINKS_PER_PAGE`]); the rest are counted
    /// as rejected (`page_link_cap`) and dropped, so one page cannot flood the frontier.
    pub max_links_per_page: usize,
    rejected: Mutex<BTreeMap<&'static str, u64>>,
    /// Links, seeds and redirect targets admitted without the credentials they carried.
    credentials_stripped: AtomicU64,
    /// Pages that said `nofollow` (meta robots, `X-Robots-Tag`), marked by the crawler.
    nofollow: Mutex<NofollowPages>,
    /// How many pages `nofollow` holds: a crawl without any reads no lock per link.
    nofollow_len: AtomicUsize,
    /// Partitioned crawls: links to hosts another partition owns go to it
    /// (`crate::partition`).
    pub partition: Option<Arc<PartitionRouter>>,
    /// Queue URLs by registrable domain rather than host (`--politeness-key domain`): the
    /// hosts of a domain share one queue, and so its politeness and page cap.
    pub key_by_domain: bool,
}

impl LinkPolicy {
    pub fn new(scope: ScopeRules, traps: TrapGuard, max_depth: u32) -> Self {
        LinkPolicy {
            scope,
            traps: Mutex::new(traps),
            max_depth,
            max_links_per_page: DEFAULT_MAX_LINKS_PER_PAGE,
            rejected: Mutex::new(BTreeMap::new()),
            credentials_stripped: AtomicU64::new(0),
            nofollow: Mutex::new(NofollowPages::default()),
            nofollow_len: AtomicUsize::new(0),
            partition: None,
            key_by_domain: false,
        }
    }

    /// Crawl one partition: see [`PartitionRouter`].
    pub fn with_partition(mut self, router: Arc<PartitionRouter>) -> Self {
        self.partition = Some(router);
        self
    }

    /// Admitted entries this partition owns; the others are sent to their owners now
    /// (before the caller commits the page that found them). All of them without partitions.
    pub fn route(&self, entries: Vec<FrontierEntry>) -> Vec<FrontierEntry> {
        match &self.partition {
            Some(r) => r.route(entries),
            None => entries,
        }
    }

    /// A frontier entry for `href` found at `depth` with `priority`, or None (counted).
    pub fn admit(&self, base: Option<&str>, href: &str, depth: u32, priority: u32) -> Option<FrontierEntry> {
        let url = match base {
            Some(b) => Url::parse(b).map_err(UrlError::from).and_then(|b| resolve(&b, href)),
            None => canonical_url(href),
        };
        self.admit_canonical(url, depth, priority)
    }

    /// [`Self::admit`] for a link on the page at `base`, already parsed: a page's links
    /// share it, and each link is parsed once (it was parsed three times, the base included).
    /// `None` (the page's URL did not parse) rejects the link as a bad URL, as `admit` does.
    pub fn admit_on_page(
        &self,
        base: Option<&Url>,
        href: &str,
        depth: u32,
        priority: u32,
    ) -> Option<FrontierEntry> {
        if base.is_some_and(|b| self.is_nofollow(b.as_str())) {
            self.reject("nofollow");
            return None;
        }
        // No base: the link cannot be resolved, a bad URL as for `admit`.
        let url = base
            .ok_or(UrlError::Parse(url::ParseError::RelativeUrlWithoutBase))
            .and_then(|b| resolve(b, href));
        self.admit_canonical(url, depth, priority)
    }

    /// The entry for a canonical URL (or None, counted: not one, too deep, out of scope, a trap).
    /// Credentials in it (`user:secret@`) are removed and counted: they are never sent.
    fn admit_canonical(
        &self,
        url: Result<Url, UrlError>,
        depth: u32,
        priority: u32,
    ) -> Option<FrontierEntry> {
        let Ok(mut parsed) = url else {
            self.reject("bad_url");
            return None;
        };
        if strip_credentials(&mut parsed) {
            self.credentials_stripped.fetch_add(1, Relaxed);
        }
        if depth > self.max_depth {
            self.reject("max_depth");
            return None;
        }
        if let Err(e) = self.scope.allows(&parsed) {
            self.reject(scope_reason(&e));
            return None;
        }
        if let Some(t) = self.traps.lock().unwrap_or_else(|e| e.into_inner()).check(&parsed) {
            self.reject(t.as_str());
            return None;
        }
        let host = parsed.host_str().unwrap_or("");
        let host_key = match self.key_by_domain.then(|| registrable_domain(host)).flatten() {
            Some(domain) => surt_host_key(&domain),
            None => surt_host_key(host),
        };
        Some(FrontierEntry { url: parsed.into(), host_key, depth, priority, hops: 0, sitemap: false })
    }

    /// Entries for a page's links (`hrefs`, found at `base`): each admitted as by
    /// [`Self::admit`], at most [`Self::max_links_per_page`] of them; the links past the cap
    /// are counted as `page_link_cap` and pages that hit it as `pages_over_link_cap`.
    pub fn admit_page_links<'a>(
        &self,
        base: &str,
        hrefs: impl IntoIterator<Item = &'a String>,
        depth: u32,
        priority: u32,
    ) -> Vec<FrontierEntry> {
        if self.is_nofollow(base) {
            let n = hrefs.into_iter().count() as u64;
            if n > 0 {
                *self.rejected.lock().unwrap_or_else(|e| e.into_inner()).entry("nofollow").or_default() += n;
            }
            self.forget_nofollow(base);
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut dropped = 0u64;
        let base = Url::parse(base).ok();
        for href in hrefs {
            if out.len() >= self.max_links_per_page {
                dropped += 1;
                continue;
            }
            out.extend(self.admit_on_page(base.as_ref(), href, depth, priority));
        }
        self.count_over_cap(dropped);
        out
    }

    /// The page at `page_url` said `nofollow`: its links (admitted by the caller later,
    /// with this URL as their base) are refused and counted as `nofollow`.
    pub fn mark_nofollow(&self, page_url: &str) {
        let mut n = self.nofollow.lock().unwrap_or_else(|e| e.into_inner());
        if n.urls.insert(page_url.to_string()) {
            n.order.push_back(page_url.to_string());
        }
        while n.order.len() > NOFOLLOW_KEPT {
            if let Some(old) = n.order.pop_front() {
                n.urls.remove(&old);
            }
        }
        self.nofollow_len.store(n.urls.len(), Relaxed);
    }

    fn is_nofollow(&self, page_url: &str) -> bool {
        self.nofollow_len.load(Relaxed) > 0
            && self.nofollow.lock().unwrap_or_else(|e| e.into_inner()).urls.contains(page_url)
    }

    fn forget_nofollow(&self, page_url: &str) {
        let mut n = self.nofollow.lock().unwrap_or_else(|e| e.into_inner());
        if n.urls.remove(page_url) {
            n.order.retain(|u| u != page_url);
        }
        self.nofollow_len.store(n.urls.len(), Relaxed);
    }

    /// Count `dropped` links of one page passed over at [`Self::max_links_per_page`].
    pub fn count_over_cap(&self, dropped: u64) {
        if dropped > 0 {
            let mut r = self.rejected.lock().unwrap_or_else(|e| e.into_inner());
            *r.entry("page_link_cap").or_default() += dropped;
            *r.entry("pages_over_link_cap").or_default() += 1;
        }
    }

    fn reject(&self, why: &'static str) {
        *self.rejected.lock().unwrap_or_else(|e| e.into_inner()).entry(why).or_default() += 1;
    }

    /// Links, seeds and redirect targets whose credentials were removed before admission
    /// (the report's `credentials_stripped` event).
    pub fn credentials_stripped(&self) -> u64 {
        self.credentials_stripped.load(Relaxed)
    }

    /// Links refused, by reason.
    pub fn rejected(&self) -> BTreeMap<&'static str, u64> {
        self.rejected.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn scope_reason(e: &OutOfScope) -> &'static str {
    e.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::urls::{Scope, TrapLimits};

    fn policy() -> LinkPolicy {
        LinkPolicy::new(ScopeRules::new(Scope::Any), TrapGuard::new(TrapLimits::default()), 10)
    }

    /// `--politeness-key domain`: the hosts of a registrable domain share one queue key.
    #[test]
    fn domain_keys_join_the_hosts_of_a_registrable_domain() {
        let mut p = policy();
        let key = |p: &LinkPolicy, u: &str| p.admit(None, u, 0, 1).map(|e| e.host_key);
        assert_eq!(key(&p, "http://a.example.co.uk/x").as_deref(), Some("uk,co,example,a,"));
        p.key_by_domain = true;
        assert_eq!(key(&p, "http://a.example.co.uk/y").as_deref(), Some("uk,co,example,"));
        assert_eq!(key(&p, "http://b.example.co.uk/y").as_deref(), Some("uk,co,example,"));
        assert_eq!(key(&p, "http://example.co.uk/z").as_deref(), Some("uk,co,example,"));
        // No registrable domain (an address): its host, as before.
        assert_eq!(key(&p, "http://192.0.2.1/").as_deref(), Some("192.0.2.1"));
    }

    /// A page's links parsed once against its parsed URL give the entries (and the
    /// rejections) that each link admitted on its own gave.
    #[test]
    fn links_on_a_parsed_page_are_admitted_as_one_by_one() {
        let base = "HTTP://Example.COM.:80/a/b/../c/index.html?x=1#top";
        let hrefs: Vec<String> = [
            "d.html",
            "../e/./f.html?b=2&a=1#frag",
            "/g%7eh/%41",
            "//Other.Example.org:8080/x",
            "https://example.com:443/",
            "?q=only",
            "#only-fragment",
            "mailto:a@b.c",
            "javascript:void(0)",
            "http://[::1]/v6",
            "http:///nohost",
            "HTTP://EXAMPLE.com/%7Euser/ä ö",
            "a b c",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (one, many) = (policy(), policy());
        let each: Vec<FrontierEntry> = hrefs.iter().filter_map(|h| one.admit(Some(base), h, 1, 7)).collect();
        let page = many.admit_page_links(base, &hrefs, 1, 7);
        assert_eq!(page, each);
        assert_eq!(many.rejected(), one.rejected());
        assert!(page.len() >= 8, "{page:?}");
        // Each entry's URL is already canonical: canonicalizing it again changes nothing.
        for e in &page {
            assert_eq!(canonical_url(&e.url).map(String::from).as_deref(), Ok(e.url.as_str()));
        }
        // A page whose URL does not parse: each of its links is rejected as a bad URL.
        let (one, many) = (policy(), policy());
        assert!(hrefs.iter().all(|h| one.admit(Some("http://[bad"), h, 1, 7).is_none()));
        assert!(many.admit_page_links("http://[bad", &hrefs, 1, 7).is_empty());
        assert_eq!(many.rejected(), one.rejected());
        assert_eq!(many.rejected().get("bad_url"), Some(&(hrefs.len() as u64)));
    }

    /// Credentials in links, seeds and redirect targets are removed, and counted.
    #[test]
    fn credentials_are_stripped_and_counted() {
        let p = policy();
        let e = p.admit(Some("http://a.test/"), "http://user:secret@b.test/private", 1, 1).unwrap();
        assert_eq!(e.url, "http://b.test/private");
        let e = p.admit(None, "https://u@c.test:8443/x", 0, 1).unwrap();
        assert_eq!(e.url, "https://c.test:8443/x");
        let base = Url::parse("http://a.test/").unwrap();
        let e = p.admit_on_page(Some(&base), "//:pw@d.test/", 1, 1).unwrap();
        assert_eq!(e.url, "http://d.test/");
        // A relative link on a page whose own URL had credentials inherits none.
        let e = p.admit(Some("http://u:p@a.test/dir/"), "next", 1, 1).unwrap();
        assert_eq!(e.url, "http://a.test/dir/next");
        assert_eq!(p.admit(None, "http://a.test/clean", 0, 1).unwrap().url, "http://a.test/clean");
        assert_eq!(p.credentials_stripped(), 4);
        assert!(p.rejected().is_empty(), "{:?}", p.rejected());
    }

    /// A page marked `nofollow` gives no links, by either way of admitting them; others do.
    #[test]
    fn nofollow_pages_give_no_links() {
        let p = policy();
        let hrefs: Vec<String> = vec!["/a".into(), "/b".into(), "http://other.test/".into()];
        p.mark_nofollow("http://a.test/nf");
        assert_eq!(p.admit_page_links("http://a.test/ok", &hrefs, 1, 1).len(), 3);
        let base = Url::parse("http://a.test/nf").unwrap();
        assert!(p.admit_on_page(Some(&base), "/a", 1, 1).is_none());
        assert!(p.admit_page_links("http://a.test/nf", &hrefs, 1, 1).is_empty());
        assert_eq!(p.rejected().get("nofollow"), Some(&4));
        // Forgotten once its links were admitted; the marks stay bounded.
        assert_eq!(p.admit_page_links("http://a.test/nf", &hrefs, 1, 1).len(), 3);
        for i in 0..NOFOLLOW_KEPT + 10 {
            p.mark_nofollow(&format!("http://a.test/{i}"));
        }
        assert_eq!(p.nofollow_len.load(Relaxed), NOFOLLOW_KEPT);
        assert!(p.admit_on_page(Some(&Url::parse("http://a.test/1").unwrap()), "/x", 1, 1).is_some());
        let last = Url::parse(&format!("http://a.test/{}", NOFOLLOW_KEPT + 9)).unwrap();
        assert!(p.admit_on_page(Some(&last), "/x", 1, 1).is_none());
    }
}
