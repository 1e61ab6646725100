//! The per-page work of each pipeline stage, as plain functions with typed input and output
//! so they can be tested without threads: trap filter → clean → fingerprint → match.

use std::collections::HashMap;
use std::sync::Arc;

use crawler::crawl::LinkPolicy;
use detector::clean::{sniff_kind, CleanedDoc};
use detector::fingerprint::{sha1, Sha1Digest};
use detector::matching::{add_passages, match_page, ChunkLookup, StopList};
use detector::passages::PassageLookup;
use detector::{CleanOptions, NeighborhoodAccumulator, Normalization, Page, TrapReason, TrapRules};
use store::{Evidence, FrontierEntry, PageRecord, PageWrite, SourceCount, Store};

use super::focus::{link_evidence, priority_score, score_priority, FocusState};
use super::metrics::{SkipReason, Skips};
use crate::live::neardups::LiveNearDups;

/// What a source sends: a page, and for crawled pages the frontier ticket it completes.
pub struct Input {
    pub page: Page,
    pub ticket: Option<FrontierEntry>,
}

impl From<Page> for Input {
    fn from(page: Page) -> Self {
        Input { page, ticket: None }
    }
}

/// A page that passed the trap filter.
pub struct FilteredPage {
    pub page: Page,
    pub ticket: Option<FrontierEntry>,
    /// The body's digest (the file hash, §3.1 step 1) when the filter needed it: only to
    /// look up a URL the store already has. Otherwise the fingerprint stage computes it,
    /// its SHA-1 blocks beside those of the text hashes
    /// (`detector::fingerprint::scan::fingerprint_for_scan_of_body`), which costs less.
    pub file_hash: Option<Sha1Digest>,
}

impl FilteredPage {
    /// The file hash: the filter's, or computed now.
    pub fn file_hash(&self) -> Sha1Digest {
        self.file_hash.unwrap_or_else(|| sha1(&self.page.body))
    }
}

/// A cleaned page: its text blocks (and links, when asked for).
pub struct CleanedPage {
    pub page: Page,
    pub ticket: Option<FrontierEntry>,
    /// As [`FilteredPage::file_hash`].
    pub file_hash: Option<Sha1Digest>,
    pub doc: CleanedDoc,
}

impl CleanedPage {
    /// The file hash: the filter's, or computed now.
    pub fn file_hash(&self) -> Sha1Digest {
        self.file_hash.unwrap_or_else(|| sha1(&self.page.body))
    }
}

/// A fingerprinted page: chunk hash vector and file hash; the body is no longer needed.
pub struct FingerprintedPage {
    pub page: Page,
    pub ticket: Option<FrontierEntry>,
    pub doc: CleanedDoc,
    pub fp: detector::Fingerprints,
    /// SimHash, visible-text hash and the bounded shingle sketch stored with the record
    /// (near-replicas: `ditto replicas` compares the sketches); no shingle set.
    pub replica: detector::shingles::ReplicaFeatures,
}

/// Settings of the trap filter stage.
pub struct FilterSettings {
    pub traps: TrapRules,
    /// The store: crawled pages skipped here complete their frontier tickets in it.
    pub store: Option<Arc<Store>>,
    /// Skip pages the store already has (URL + digest) before any work is done. Off for a
    /// store that held no page when the scan began (a fresh store: a per-page lookup there
    /// only finds this scan's own repeats, which the writer skips anyway).
    pub skip_stored: bool,
}

/// Trap filter (§3.4.1): recursion errors, non-2xx statuses, non-text payloads and pages
/// already stored are skipped and counted. A skipped crawled page completes its frontier
/// ticket here, so it is not fetched again on resume.
pub fn filter(input: Input, s: &FilterSettings, skips: &Skips) -> Option<FilteredPage> {
    let Input { page, ticket } = input;
    match filter_page(page, s, skips) {
        Some((page, file_hash)) => Some(FilteredPage { page, ticket, file_hash }),
        None => {
            if let (Some(t), Some(store)) = (ticket, &s.store) {
                if let Err(e) = store.frontier_finish(&t.url, &[]) {
                    skips.error(format!("{}: completing its frontier ticket failed: {e}", t.url));
                }
            }
            None
        }
    }
}

fn filter_page(mut page: Page, s: &FilterSettings, skips: &Skips) -> Option<(Page, Option<Sha1Digest>)> {
    if !(200..300).contains(&page.status) {
        skips.add(SkipReason::StatusNot2xx, 1);
        return None;
    }
    if is_robots_txt(&page.url) {
        // Crawl records hold robots.txt fetches; they are rules, not content.
        skips.add(SkipReason::RobotsTxt, 1);
        return None;
    }
    if let Some(reason) = s.traps.check(&page.url) {
        skips.add(
            match reason {
                TrapReason::RepeatedPath => SkipReason::TrapRepeatedPath,
                TrapReason::TooDeep => SkipReason::TrapTooDeep,
            },
            1,
        );
        return None;
    }
    if sniff_kind(page.content_type.as_deref(), &page.body).is_none() {
        skips.add(SkipReason::NotText, 1);
        return None;
    }
    // A capture (URL + digest) already stored is skipped before any work. The digest is
    // needed for that only when the store has the URL at all; new URLs leave it to the
    // fingerprint stage.
    let mut file_hash = None;
    if let (Some(store), true) = (&s.store, s.skip_stored) {
        match store.has_url(&page.url) {
            Ok(false) => {}
            Ok(true) => {
                let h = sha1(&page.body);
                file_hash = Some(h);
                match store.has_page(&page.url, &h) {
                    Ok(true) => {
                        skips.add(SkipReason::AlreadyStored, 1);
                        return None;
                    }
                    Ok(false) => {}
                    Err(e) => skips.error(format!("{}: store lookup failed: {e}", page.url)),
                }
            }
            Err(e) => skips.error(format!("{}: store lookup failed: {e}", page.url)),
        }
    }
    page.url.shrink_to_fit();
    Some((page, file_hash))
}

/// True for `scheme://host/robots.txt` (query ignored).
fn is_robots_txt(url: &str) -> bool {
    let Some(rest) = url.find("://").map(|i| &url[i + 3..]) else { return false };
    let path = rest.find('/').map(|i| &rest[i..]).unwrap_or("/");
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    path == "/robots.txt"
}

/// Clean stage (§3.1 step 2): HTML or text → blocks.
pub fn clean(p: FilteredPage, opts: &CleanOptions) -> CleanedPage {
    let doc = detector::clean(&p.page.body, p.page.content_type.as_deref(), Some(&p.page.url), opts);
    CleanedPage { page: p.page, ticket: p.ticket, file_hash: p.file_hash, doc }
}

/// Fingerprint stage (§3.1 steps 1–2): normalized chunk SHA-1s; the body is dropped. Also
/// the page's Khan & Ali SimHash and visible-text SHA-1, each block normalized once for both
/// (`detector::fingerprint::scan::fingerprint_for_scan`), and the page's bounded sketch of its
/// long-word 4-shingles (`detector::shingles::long_word_sketch_of_blocks`, at most
/// `SKETCH_SIZE` hashes) from the SimHash's word pass, stored with the record for `ditto
/// replicas` (`replicas::load`); the whole set is not computed.
///
/// A chunk's SHA-1 is computed only when the match stage can use it ([`DigestNeed`]).
pub fn fingerprint(mut p: CleanedPage, norm: &Normalization, need: &DigestNeed) -> FingerprintedPage {
    let needs = |n: &[u8]| need.needs(n);
    let (fp, replica) = match p.file_hash {
        Some(h) => detector::fingerprint::scan::fingerprint_for_scan(h, &p.doc.blocks, norm, needs),
        None => detector::fingerprint::scan::fingerprint_for_scan_of_body(
            &p.page.body,
            &p.doc.blocks,
            norm,
            needs,
        ),
    };
    p.page.body = Vec::new();
    FingerprintedPage { page: p.page, ticket: p.ticket, doc: p.doc, fp, replica }
}

/// Which chunk SHA-1s the match stage can use: those of chunks long enough to be in the
/// label set or that may be stop chunks (`detector::matching::digest_needed`). Built from
/// the [`Matcher`] the match stage gets.
#[derive(Clone)]
pub struct DigestNeed {
    labels_min_bytes: usize,
    stops: Arc<dyn StopList + Send + Sync>,
}

impl DigestNeed {
    pub fn of(m: &Matcher) -> Self {
        DigestNeed { labels_min_bytes: m.chunks.min_member_bytes(), stops: m.stops.clone() }
    }

    /// Every chunk gets its SHA-1.
    pub fn every_chunk() -> Self {
        DigestNeed { labels_min_bytes: 0, stops: Arc::new(detector::matching::NoStops) }
    }

    /// Whether the chunk whose normalized text is `normalized` needs its SHA-1.
    pub fn needs(&self, normalized: &[u8]) -> bool {
        detector::matching::digest_needed(self.labels_min_bytes, self.stops.as_ref(), normalized)
    }
}

/// What the match stage needs: the label sets and the stop list.
pub struct Matcher {
    pub chunks: Arc<dyn ChunkLookup + Send + Sync>,
    pub files: Option<Arc<dyn ChunkLookup + Send + Sync>>,
    pub stops: Arc<dyn StopList + Send + Sync>,
    /// How many copied passages to keep per page as evidence.
    pub evidence_per_page: usize,
    /// Longest passage kept, in chars; 0 leaves each evidence passage empty (the store keeps
    /// only each passage's source and block, and reports read the passage back).
    pub passage_chars: usize,
    /// Passage matching (issue 36): the label set's passage table, or `None` for exact
    /// chunks only (`--match exact`, or a label set without passages).
    pub passages: Option<Arc<dyn PassageLookup + Send + Sync>>,
    /// Crawl only: how links found on pages enter the frontier.
    pub links: Option<LinkSettings>,
    /// Keep each page's cleaned text in the store (`--keep-text`, for inputs that will not
    /// stay); otherwise evidence and analyses read pages back from their sources.
    pub keep_text: bool,
    /// Live near-duplicate marking (issue 12): each page's SimHash is looked up among the
    /// pages matched before it; `None` turns it off.
    pub near_dups: Option<Arc<LiveNearDups>>,
    /// Live origins (`--origins SIZE`, issue 9): run in the store writer in arrival order
    /// (`crate::live::origins`); `None` (the default) turns it off.
    pub origins: Option<Arc<crate::live::origins::LiveOrigins>>,
}

/// How a crawl orders the links it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Focus {
    /// Links from pages and neighborhoods with high contains/badness first.
    Labeled,
    /// Breadth first: shallow links first.
    Bfs,
}

/// Link admission for crawls: the crawler's policy (scope, traps, depth) and the focus.
pub struct LinkSettings {
    pub policy: Arc<LinkPolicy>,
    pub focus: Focus,
    /// For the badness of the page's neighborhoods (read as stored so far).
    pub store: Arc<Store>,
    /// `--focus labeled`: link context, tunnelling and per-host learning
    /// ([`super::focus`]); without it labeled links are ordered by [`link_priority`] alone.
    pub focused: Option<Arc<FocusState>>,
}

/// The priority of links found on a page (higher is fetched first).
///
/// `--focus labeled`: score = max(contains(page), badness of the page's deepest
/// neighborhood as stored so far), priority = ⌊score × 10^6⌋ × 1000 + (999 − depth), so
/// links from copying pages and bad neighborhoods go first and, among equals, shallow links.
/// `--focus bfs`: priority = u32::MAX − depth (plain breadth first).
pub fn link_priority(focus: Focus, contains: f64, badness: f64, depth: u32) -> u32 {
    match focus {
        Focus::Bfs => u32::MAX - depth,
        Focus::Labeled => {
            let score = contains.max(badness).clamp(0.0, 1.0);
            ((score * 1e6).floor() as u32) * 1000 + (999 - depth.min(999))
        }
    }
}

/// Match stage (§3.1 steps 4–6): stop-chunk removal, `contains`, and the page's
/// neighborhoods and accumulator contribution.
pub fn match_stage(p: FingerprintedPage, m: &Matcher) -> PageWrite {
    let mut v = match_page(
        &p.fp,
        m.chunks.as_ref(),
        m.files.as_deref().map(|f| f as &dyn ChunkLookup),
        m.stops.as_ref(),
    );
    if let Some(table) = &m.passages {
        add_passages(&mut v, &p.fp, p.doc.blocks.iter(), table.as_ref(), m.stops.as_ref());
    }
    tracing::debug!(
        host = p.page.host(),
        url = %p.page.url,
        contains = v.contains,
        labeled_chunks = v.labeled_chunks,
        chunks = v.chunks,
        "page matched"
    );
    let mut per_source: HashMap<u32, u32> = HashMap::new();
    for cm in &v.matches {
        *per_source.entry(cm.source).or_default() += 1;
    }
    let mut sources: Vec<SourceCount> =
        per_source.into_iter().map(|(source, chunks)| SourceCount { source, chunks }).collect();
    sources.sort_by(|a, b| b.chunks.cmp(&a.chunks).then(a.source.cmp(&b.source)));
    sources.truncate(20);
    // Evidence: the first passage of each of the top sources, then more passages.
    let mut evidence: Vec<Evidence> = Vec::new();
    let mut used_blocks = Vec::new();
    for round in 0..2 {
        for cm in &v.matches {
            if evidence.len() >= m.evidence_per_page {
                break;
            }
            let new_source = !evidence.iter().any(|e| e.source == cm.source);
            if (round == 0 && !new_source) || used_blocks.contains(&cm.block) {
                continue;
            }
            if let Some(text) = p.doc.blocks.get(cm.block as usize) {
                used_blocks.push(cm.block);
                evidence.push(Evidence {
                    source: cm.source,
                    passage: match m.passage_chars {
                        0 => String::new(),
                        max => shorten(text, max),
                    },
                    block: cm.block,
                });
            }
        }
    }
    let file_hash = p.fp.file_hash;
    let neighborhoods = detector::neighborhoods(&p.page.url);
    let mut links = Vec::new();
    if let (Some(ls), Some(t)) = (&m.links, &p.ticket) {
        // Breadth first orders links by depth alone: no neighborhood to read.
        let badness = match ls.focus {
            Focus::Bfs => 0.0,
            Focus::Labeled => neighborhoods
                .last()
                .and_then(|n| ls.store.neighborhood(n).ok().flatten())
                .map(|a| a.badness())
                .unwrap_or(0.0),
        };
        let depth = t.depth + 1;
        match (&ls.focused, ls.focus) {
            (Some(f), Focus::Labeled) => {
                let long = long_chunks(&p.doc.blocks, m.chunks.min_member_bytes());
                f.observe(&t.host_key, long, v.labeled_chunks);
                focused_links(f, ls, &p, t, v.contains.max(badness), &mut links);
            }
            _ => {
                let priority = link_priority(ls.focus, v.contains, badness, depth);
                links = ls.policy.admit_page_links(&p.page.url, &p.doc.links, depth, priority);
            }
        }
        // Partitioned crawls: links to hosts another partition owns are sent to it now,
        // before this page's batch is committed (so a crash cannot lose them).
        links = ls.policy.route(links);
    }
    let near_duplicate_of = match (&m.near_dups, &p.replica.text_hash) {
        (Some(nd), Some(_)) => nd.check_insert(&p.page.url, p.replica.simhash),
        _ => None,
    };
    let fetched = p.ticket.map(|t| (t.url, t.host_key));
    // The text goes on only where it is stored or live origins reads it in the writer.
    let text = (m.keep_text || m.origins.is_some()).then_some(p.doc.blocks);
    PageWrite {
        neighborhoods,
        accumulator: NeighborhoodAccumulator::of_page(&v),
        record: PageRecord {
            url: p.page.url,
            fetch_time: p.page.fetch_time,
            status: p.page.status,
            file_hash: detector::fingerprint::hex(&file_hash),
            chunks: v.chunks,
            labeled_chunks: v.labeled_chunks,
            stop_chunks: v.stop_chunks,
            contains: v.contains,
            file_match: v.file_match,
            sources,
            evidence,
            origin: p.page.origin,
            simhash: Some(p.replica.simhash),
            text_hash: p.replica.text_hash.as_ref().map(|h| detector::fingerprint::hex(h)),
            shingles: p.replica.sketch.estimated_size() as u32,
            near_duplicate_of,
            sketch: p.replica.sketch,
            passages: v.passages_checked.then(|| store::PassageSummary {
                words: v.words,
                covered_words: v.passage_words,
                chunks: v.passage_chunks,
                blocks: v.matches.iter().filter(|m| m.passage).map(|m| m.block).collect(),
            }),
        },
        file_hash,
        fetched,
        links,
        shingles: p.replica.shingles,
        text,
        keep_text: m.keep_text,
        encoded: None,
    }
}

/// Blocks of at least `min_bytes` bytes (after trimming): the chunks that could be labeled.
fn long_chunks(blocks: &detector::TextBlocks, min_bytes: usize) -> u32 {
    blocks.iter().filter(|b| b.trim().len() >= min_bytes.max(1)).count() as u32
}

/// `--focus labeled`: each link scored by its anchor text and URL against the label set's
/// titles, the parent's relevance and tunnelling ([`super::focus::link_evidence`]); links
/// with evidence that are new to the frontier are logged.
fn focused_links(
    f: &FocusState,
    ls: &LinkSettings,
    p: &FingerprintedPage,
    ticket: &FrontierEntry,
    relevance: f64,
    links: &mut Vec<FrontierEntry>,
) {
    let depth = ticket.depth + 1;
    // Seeds are queued at the top priority: that is no evidence to pass on.
    let parent_score = if ticket.depth == 0 { 0.0 } else { priority_score(ticket.priority) };
    let cap = ls.policy.max_links_per_page;
    ls.policy.count_over_cap(p.doc.links.len().saturating_sub(cap) as u64);
    // The page's URL, parsed once for all its links.
    let base = url::Url::parse(&p.page.url).ok();
    for (i, href) in p.doc.links.iter().enumerate().take(cap) {
        let anchor = p.doc.anchors.get(i).map(String::as_str).unwrap_or("");
        let ev = link_evidence(&f.titles, anchor, href, relevance, parent_score);
        let priority = score_priority(ev.score, depth);
        if let Some(e) = ls.policy.admit_on_page(base.as_ref(), href, depth, priority) {
            if ev.score > 0.0 && !ls.store.frontier_seen(&e.url) {
                f.log_link(&e, &p.page.url, anchor, &ev);
            }
            links.push(e);
        }
    }
}

/// Collapse whitespace and cut to `max` chars, ending with "…" when cut.
pub fn shorten(text: &str, max: usize) -> String {
    crate::source::text::shorten_passage(text, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn focused_priorities_order_by_score_then_depth() {
        let p = |c, b, d| link_priority(Focus::Labeled, c, b, d);
        assert!(p(0.9, 0.0, 5) > p(0.5, 0.6, 1)); // 0.9 > 0.6
        assert!(p(0.0, 0.6, 1) > p(0.5, 0.0, 1)); // neighborhood badness counts
        assert!(p(0.5, 0.0, 1) > p(0.5, 0.0, 2)); // shallower first among equals
        assert_eq!(p(1.0, 0.0, 0), 1_000_000_999);
        assert!(link_priority(Focus::Bfs, 0.9, 0.9, 3) < link_priority(Focus::Bfs, 0.0, 0.0, 2));
    }

    #[test]
    fn robots_txt_urls() {
        assert!(is_robots_txt("http://h/robots.txt"));
        assert!(is_robots_txt("https://h:8080/robots.txt?x=1"));
        assert!(!is_robots_txt("http://h/a/robots.txt"));
        assert!(!is_robots_txt("http://h/"));
    }

    #[test]
    fn shorten_collapses_and_cuts() {
        assert_eq!(shorten("  a \n b  ", 10), "a b");
        assert_eq!(shorten("abcdef", 3), "abc…");
    }
}
