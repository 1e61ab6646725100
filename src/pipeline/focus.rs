//! Focused crawling (`--focus labeled`): which URL is worth fetching next, from what a
//! crawler knows before fetching it, and why.
//!
//! A best-first crawler in the line of Chakrabarti, van den Berg & Dom 1999 ("Focused
//! crawling: a new approach to topic-specific Web resource discovery", WWW8): the frontier is
//! ordered by the expected yield of each URL, estimated from
//!
//! 1. **the link's context**: its anchor text and URL tokens looked up in the label set's own
//!    source titles (a `.dls` records each source's title; an anchor or a path naming a
//!    Wikipedia article is a strong sign). Titles are matched as whole token sequences; a
//!    title of one word counts less than one of several (one-word titles are common words).
//!    The label set holds only hashes of its text, so the text itself speaks through the
//!    parent page's verdict (3).
//! 2. **tunnelling** (Shark-search, Hersovici et al. 1998; Bergmark, Lagoze & Sbityakov
//!    2002, "Focused crawls, tunneling, and digital libraries"): a link inherits
//!    [`TUNNEL_DECAY`] × its parent's score when the parent itself holds no labeled text, so
//!    a crawl passes through a few unpromising pages (a site's home and menu pages) behind
//!    a promising link, and the inheritance fades after a few hops.
//! 3. **the parent page**: `contains(page)` and the badness of its deepest neighborhood as
//!    stored so far (Ardi & Heidemann 2014 §3.3): links from copying pages go first.
//! 4. **per-host learning**, at scheduling time ([`FocusState`] as the crawler's
//!    [`HostRanker`]): a host is ranked by the probability that it copies, from the score of
//!    its best queued URL (the prior, at least [`PRIOR_SCORE`]) and the long chunks its pages
//!    showed, labeled or not ([`HostStats::rank`], Bayes' rule over two kinds of host): hosts
//!    whose pages carry labeled chunks get their other URLs sooner, hosts whose pages carry
//!    text but no labeled chunk fall behind within a page or two (a per-host budget that
//!    adapts, like a Bayesian bandit's posterior), and pages without long text (menus,
//!    indexes) cost a host nothing, which is what lets tunnelling work; a host entered through
//!    such pages is followed a few pages before hosts not entered yet ([`TUNNEL_PAGES`]).
//!    The best
//!    `--focus-hosts` hosts are fetched from first (`crawler::crawl::HostRanker`), the
//!    request slots they leave free go to the next-best hosts (`--focus-spare`);
//!    politeness is the crawler's, unchanged. A host whose rank reaches [`SITEMAP_RANK`] from
//!    what its pages showed is named, once, for the crawler to read its sitemaps
//!    (`--sitemaps auto`): its other pages are queued whatever their link depth.
//!
//! URLs without any evidence score 0; their hosts rank by the prior alone, so hosts not yet
//! looked at come before hosts whose text showed nothing, and among equals the
//! breadth-first order holds (priority ties are broken by depth).
//!
//! Per-host statistics live in memory (a few dozen bytes per host fetched from): a resumed
//! crawl keeps its frontier and the link scores in it, and learns about hosts again.
//!
//! Every decision is explainable: with a log, each queued link with evidence (`"t":"link"`)
//! and each page fetch (`"t":"take"`: its ordinal, the host's rank and statistics) is a JSON
//! line; [`explain`] reads them back for `ditto crawl --explain-priority URL`.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use crawler::crawl::HostRanker;
use serde::{Deserialize, Serialize};
use store::FrontierEntry;

/// A link from a page without labeled text inherits this share of its parent's score.
pub const TUNNEL_DECAY: f64 = 0.5;
/// Tunnelling into a host: while its first pages are menus alone (no long chunk: no evidence
/// either way), up to this many, its rank is raised by [`TUNNEL_BONUS`], so a crawl follows a
/// site it has entered through its menus before it enters another of the same rank; what is
/// left to learn about it costs fewer pages (Bergmark et al. 2002 bound tunnels the same way).
pub const TUNNEL_PAGES: u64 = 4;
/// The factor (1 + this) on a tunnelled host's rank: a tie-break, below any link evidence.
pub const TUNNEL_BONUS: f64 = 0.5;
/// Share of a copying host's long chunks that are labeled, as [`HostStats::rank`] assumes.
pub const COPIER_SHARE: f64 = 0.5;
/// Share of another host's long chunks that are labeled (quotes, coincidences).
pub const OTHER_SHARE: f64 = 0.01;
/// The prior of a URL without any evidence: that it leads to labeled text at all. It keeps
/// hosts nobody has looked at (rank = this) ahead of hosts whose pages showed text and no
/// labeled chunk (rank < this), as a bandit explores arms it has not tried.
pub const PRIOR_SCORE: f64 = 0.02;
/// Evidence from a title of several words in the anchor text, and of one word.
pub const ANCHOR_TITLE: f64 = 0.6;
pub const ANCHOR_WORD_TITLE: f64 = 0.25;
/// Evidence from a title in the URL (host and path tokens), of several words and of one.
pub const URL_TITLE: f64 = 0.5;
pub const URL_WORD_TITLE: f64 = 0.2;
/// A host whose rank, from what its pages showed and the least prior ([`PRIOR_SCORE`]), reaches
/// this has its sitemaps read (`--sitemaps`): it more likely copies than not, which takes
/// labeled chunks (one labeled chunk alone brings it to about 0.5).
pub const SITEMAP_RANK: f64 = 0.5;
/// Longest title matched, in tokens.
const MAX_TITLE_TOKENS: usize = 8;
/// One-word titles shorter than this (in bytes) are ignored ("A", "Go", "US").
const MIN_WORD_TITLE_BYTES: usize = 4;

/// Words that make no title on their own.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "from", "this", "that", "about", "more", "page", "home", "here", "click",
    "read", "next", "previous", "index", "html", "http", "https", "www", "main", "list", "news", "blog",
    "article", "articles", "wiki", "category", "search", "contact", "links", "site", "view", "other",
];

fn is_stop_word(t: &str) -> bool {
    STOP_WORDS.contains(&t)
}

/// Lower-cased alphanumeric tokens of `text`.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

/// Tokens of a URL: its host without the last label (the TLD), then its path and query,
/// percent-decoded (`_`, `-`, `/`, `.` and `+` separate words).
pub fn url_tokens(url: &str) -> Vec<String> {
    let rest = url.find("://").map_or(url, |i| &url[i + 3..]);
    let (host, path) = rest.find('/').map_or((rest, ""), |i| (&rest[..i], &rest[i..]));
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = host.split(':').next().unwrap_or("");
    let host = host.rsplit_once('.').map_or(host, |(h, _)| h);
    let mut out = tokens(host);
    out.extend(tokens(&percent_decode(path)));
    out
}

/// `%XX` escapes decoded (invalid UTF-8 replaced); malformed escapes kept as they are.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |x: u8| (x as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn gram_hash(tokens: &[String]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for t in tokens {
        t.hash(&mut h);
    }
    h.finish()
}

/// A title found in a token sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TitleHit {
    /// The matched tokens, joined by spaces.
    pub title: String,
    pub words: usize,
}

/// The label set's source titles as token sequences (8 bytes each, hashed).
#[derive(Default)]
pub struct TitleIndex {
    grams: HashSet<u64>,
    max_tokens: usize,
}

impl TitleIndex {
    /// Index `titles`; titles that could never count (stop words, one short word, longer
    /// than 8 tokens) are left out, and so are URLs (a blind label set's sources are sample
    /// URLs, not titles).
    pub fn new<'a>(titles: impl IntoIterator<Item = &'a str>) -> Self {
        let mut idx = TitleIndex::default();
        for t in titles {
            if t.contains("://") {
                continue;
            }
            let toks = tokens(t);
            if toks.is_empty() || toks.len() > MAX_TITLE_TOKENS || !Self::significant(&toks) {
                continue;
            }
            idx.max_tokens = idx.max_tokens.max(toks.len());
            idx.grams.insert(gram_hash(&toks));
        }
        idx
    }

    fn significant(toks: &[String]) -> bool {
        match toks {
            [one] => {
                one.len() >= MIN_WORD_TITLE_BYTES
                    && !is_stop_word(one)
                    && !one.chars().all(|c| c.is_numeric())
            }
            _ => toks.iter().any(|t| !is_stop_word(t)),
        }
    }

    /// Titles indexed.
    pub fn len(&self) -> usize {
        self.grams.len()
    }

    pub fn is_empty(&self) -> bool {
        self.grams.is_empty()
    }

    /// The longest title (most tokens) occurring as a run of `toks`.
    pub fn find(&self, toks: &[String]) -> Option<TitleHit> {
        for n in (1..=self.max_tokens.min(toks.len())).rev() {
            for w in toks.windows(n) {
                if self.grams.contains(&gram_hash(w)) {
                    return Some(TitleHit { title: w.join(" "), words: n });
                }
            }
        }
        None
    }
}

/// Why a link got its score.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkEvidence {
    /// A label-set title named by the anchor text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor_title: Option<TitleHit>,
    /// A label-set title named by the URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_title: Option<TitleHit>,
    /// Evidence of the link's context (anchor, URL): 1 − (1 − anchor)(1 − url).
    pub context: f64,
    /// max(contains(parent), badness of the parent's deepest neighborhood).
    pub parent_relevance: f64,
    /// What the link inherits: the parent's relevance when it has any, else
    /// [`TUNNEL_DECAY`] × the parent's own score (tunnelling).
    pub inherited: f64,
    /// The link's score: 1 − (1 − inherited)(1 − context), in [0, 1].
    pub score: f64,
}

/// Score a link found on a page whose relevance (contains, badness) is `parent_relevance`
/// and whose own score was `parent_score` (0 for seeds).
pub fn link_evidence(
    titles: &TitleIndex,
    anchor: &str,
    url: &str,
    parent_relevance: f64,
    parent_score: f64,
) -> LinkEvidence {
    let anchor_title = titles.find(&tokens(anchor));
    let url_title = titles.find(&url_tokens(url));
    let a = anchor_title.as_ref().map_or(0.0, |h| if h.words > 1 { ANCHOR_TITLE } else { ANCHOR_WORD_TITLE });
    let u = url_title.as_ref().map_or(0.0, |h| if h.words > 1 { URL_TITLE } else { URL_WORD_TITLE });
    let context = 1.0 - (1.0 - a) * (1.0 - u);
    let r = clamp01(parent_relevance);
    let inherited = if r > 0.0 { r } else { TUNNEL_DECAY * clamp01(parent_score) };
    let score = clamp01(1.0 - (1.0 - inherited) * (1.0 - context));
    LinkEvidence { anchor_title, url_title, context, parent_relevance: r, inherited, score }
}

fn clamp01(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// The frontier priority of a link with `score` at `depth`: ⌊score × 10^6⌋ × 1000 +
/// (999 − depth), so higher scores go first and, among equals, shallower links.
pub fn score_priority(score: f64, depth: u32) -> u32 {
    ((clamp01(score) * 1e6).floor() as u32) * 1000 + (999 - depth.min(999))
}

/// The score a priority from [`score_priority`] stands for (seeds' `u32::MAX`: 1).
pub fn priority_score(priority: u32) -> f64 {
    ((priority / 1000) as f64 / 1e6).min(1.0)
}

/// What a host's fetched pages showed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct HostStats {
    pub pages: u64,
    /// Chunks long enough to be labeled (at least the label set's shortest member).
    pub long_chunks: u64,
    pub labeled_chunks: u64,
}

impl HostStats {
    /// The probability that the host copies labeled content, given the score of its best
    /// queued URL as the prior (at least [`PRIOR_SCORE`]) and what its pages showed: two
    /// kinds of host, a copier whose long chunks are labeled with probability
    /// [`COPIER_SHARE`] and another whose are with probability [`OTHER_SHARE`], weighed by
    /// Bayes' rule. Text without labeled chunks lowers it fast (a host yielding nothing gets
    /// little of the budget), pages without long text (menus, indexes) leave it as it is (so a
    /// crawl tunnels through them), and labeled chunks raise it to near 1 (the host's other
    /// URLs go first). A host being tunnelled gets (1 + [`TUNNEL_BONUS`]) × that.
    pub fn rank(&self, score: f64) -> f64 {
        let prior = clamp01(score).clamp(PRIOR_SCORE, 1.0 - 1e-9);
        let labeled = self.labeled_chunks as f64;
        let other = self.long_chunks.saturating_sub(self.labeled_chunks) as f64;
        let llr = labeled * (COPIER_SHARE / OTHER_SHARE).ln()
            + other * ((1.0 - COPIER_SHARE) / (1.0 - OTHER_SHARE)).ln();
        let log_odds = (prior / (1.0 - prior)).ln() + llr;
        let p = 1.0 / (1.0 + (-log_odds).exp());
        if self.tunnelling() {
            p * (1.0 + TUNNEL_BONUS)
        } else {
            p
        }
    }

    /// Entered, and every page so far a menu ([`TUNNEL_PAGES`]).
    pub fn tunnelling(&self) -> bool {
        self.long_chunks == 0 && (1..=TUNNEL_PAGES).contains(&self.pages)
    }
}

/// One line of the focus log.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
pub enum LogLine {
    /// A link with evidence, when it was queued.
    Link {
        url: String,
        from: String,
        depth: u32,
        #[serde(default)]
        anchor: String,
        priority: u32,
        #[serde(flatten)]
        evidence: LinkEvidence,
    },
    /// A page fetch started.
    Take {
        n: u64,
        url: String,
        host: String,
        depth: u32,
        priority: u32,
        score: f64,
        rank: f64,
        position: usize,
        #[serde(flatten)]
        stats: HostStats,
    },
}

/// What each host showed, and which hosts' statistics changed since the scheduler last
/// asked ([`HostRanker::take_changed`]): it ranks those again and no others.
#[derive(Default)]
struct Hosts {
    stats: HashMap<String, HostStats>,
    changed: HashSet<String>,
    /// Hosts that reached [`SITEMAP_RANK`] (each once), and those not yet told.
    sitemap_named: HashSet<String>,
    sitemap_new: Vec<String>,
}

/// A focused crawl's shared state: the title index, what each host showed, the log.
pub struct FocusState {
    pub titles: TitleIndex,
    hosts: Mutex<Hosts>,
    log: Option<Mutex<BufWriter<File>>>,
    log_path: Option<PathBuf>,
    takes: AtomicU64,
}

impl FocusState {
    pub fn new(titles: TitleIndex) -> Self {
        FocusState {
            titles,
            hosts: Mutex::new(Hosts::default()),
            log: None,
            log_path: None,
            takes: AtomicU64::new(0),
        }
    }

    /// Append explanations to `path` (created if missing; a resumed crawl appends).
    pub fn with_log(mut self, path: &Path) -> std::io::Result<Self> {
        let f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        self.log = Some(Mutex::new(BufWriter::new(f)));
        self.log_path = Some(path.to_path_buf());
        Ok(self)
    }

    pub fn log_path(&self) -> Option<&Path> {
        self.log_path.as_deref()
    }

    /// A fetched page of `host_key` had `long_chunks` chunks long enough to be labeled and
    /// `labeled_chunks` labeled ones.
    pub fn observe(&self, host_key: &str, long_chunks: u32, labeled_chunks: u32) {
        let mut h = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let s = h.stats.entry(host_key.to_string()).or_default();
        s.pages += 1;
        s.long_chunks += long_chunks as u64;
        s.labeled_chunks += labeled_chunks as u64;
        let promising = s.labeled_chunks > 0 && s.rank(PRIOR_SCORE) >= SITEMAP_RANK;
        if !h.changed.contains(host_key) {
            h.changed.insert(host_key.to_string());
        }
        if promising && !h.sitemap_named.contains(host_key) {
            h.sitemap_named.insert(host_key.to_string());
            h.sitemap_new.push(host_key.to_string());
        }
    }

    /// What `host_key`'s pages showed so far in this run.
    pub fn host(&self, host_key: &str) -> HostStats {
        self.hosts.lock().unwrap_or_else(|e| e.into_inner()).stats.get(host_key).copied().unwrap_or_default()
    }

    /// Log a queued link's evidence.
    pub fn log_link(&self, entry: &FrontierEntry, from: &str, anchor: &str, evidence: &LinkEvidence) {
        self.write(&LogLine::Link {
            url: entry.url.clone(),
            from: from.to_string(),
            depth: entry.depth,
            anchor: anchor.to_string(),
            priority: entry.priority,
            evidence: evidence.clone(),
        });
    }

    fn write(&self, line: &LogLine) {
        let Some(log) = &self.log else { return };
        let Ok(mut text) = serde_json::to_string(line) else { return };
        text.push('\n');
        let mut w = log.lock().unwrap_or_else(|e| e.into_inner());
        // The log explains; a failed write must not stop the crawl.
        let _ = w.write_all(text.as_bytes());
    }

    /// Write buffered log lines out.
    pub fn flush(&self) {
        if let Some(log) = &self.log {
            let _ = log.lock().unwrap_or_else(|e| e.into_inner()).flush();
        }
    }
}

impl HostRanker for FocusState {
    fn rank(&self, host_key: &str, best_priority: u32) -> f64 {
        self.host(host_key).rank(priority_score(best_priority))
    }

    fn take_changed(&self) -> Vec<String> {
        self.hosts.lock().unwrap_or_else(|e| e.into_inner()).changed.drain().collect()
    }

    fn take_sitemap_hosts(&self) -> Vec<String> {
        std::mem::take(&mut self.hosts.lock().unwrap_or_else(|e| e.into_inner()).sitemap_new)
    }

    fn taken(&self, entry: &FrontierEntry, n: u64, rank: f64, position: usize) {
        if self.log.is_none() {
            return;
        }
        let stats = self.host(&entry.host_key);
        self.write(&LogLine::Take {
            n,
            url: entry.url.clone(),
            host: entry.host_key.clone(),
            depth: entry.depth,
            priority: entry.priority,
            score: priority_score(entry.priority),
            rank,
            position,
            stats,
        });
        if self.takes.fetch_add(1, Relaxed) % 256 == 255 {
            self.flush();
        }
    }
}

impl Drop for FocusState {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The focus log of the store at `store_path`.
pub fn log_path_for(store_path: &Path) -> PathBuf {
    store_path.join("focus-log.jsonl")
}

/// Why `url` was taken when it was: the evidence of the link that queued it and the fetch
/// that took it, read from the focus log at `log`. Lines that do not parse are counted.
pub fn explain(log: &Path, url: &str) -> anyhow::Result<String> {
    use anyhow::Context;
    let f = File::open(log).with_context(|| format!("opening the focus log {}", log.display()))?;
    let (mut links, mut takes, mut bad, mut total_takes) = (Vec::new(), Vec::new(), 0u64, 0u64);
    for line in BufReader::new(f).lines() {
        let line = line.with_context(|| format!("reading {}", log.display()))?;
        match serde_json::from_str::<LogLine>(&line) {
            Ok(l @ LogLine::Link { .. }) => {
                if matches!(&l, LogLine::Link { url: u, .. } if u == url) {
                    links.push(l);
                }
            }
            Ok(l @ LogLine::Take { .. }) => {
                total_takes += 1;
                if matches!(&l, LogLine::Take { url: u, .. } if u == url) {
                    takes.push(l);
                }
            }
            Err(_) => bad += 1,
        }
    }
    let mut out = String::new();
    let w = &mut out;
    use std::fmt::Write as _;
    let _ = writeln!(w, "{url:?}");
    let queued_priority = takes.iter().find_map(|t| match t {
        LogLine::Take { priority, .. } => Some(*priority),
        _ => None,
    });
    // The link that queued it: the logged one with the priority it was taken at (the first
    // sighting), else the first logged.
    let link = links
        .iter()
        .find(|l| matches!(l, LogLine::Link { priority, .. } if Some(*priority) == queued_priority))
        .or(links.first());
    match link {
        Some(LogLine::Link { from, depth, anchor, priority, evidence: e, .. }) => {
            let _ = writeln!(
                w,
                "  queued from {from:?} at depth {depth} with score {:.3} (priority {priority})",
                e.score
            );
            let _ = writeln!(w, "    anchor text {anchor:?}: {}", hit_text(&e.anchor_title));
            let _ = writeln!(w, "    URL tokens: {}", hit_text(&e.url_title));
            let _ = writeln!(w, "    link context evidence {:.3} = 1 - (1 - anchor)(1 - URL)", e.context);
            if e.parent_relevance > 0.0 {
                let _ = writeln!(
                    w,
                    "    the parent page holds labeled text: relevance {:.3} (max of contains and its neighborhood's badness), inherited as is",
                    e.parent_relevance
                );
            } else {
                let _ = writeln!(
                    w,
                    "    the parent page holds no labeled text: tunnelling, inherits {TUNNEL_DECAY} x its score = {:.3}",
                    e.inherited
                );
            }
            let _ = writeln!(w, "    score = 1 - (1 - inherited)(1 - context) = {:.3}", e.score);
        }
        _ => {
            let _ = writeln!(
                w,
                "  no evidence logged for it: score 0 (no title in anchor or URL, nothing inherited), or a seed; \
                 such URLs keep breadth-first order by depth"
            );
        }
    }
    if takes.is_empty() {
        let _ = writeln!(w, "  not fetched (yet) in the {total_takes} page fetches logged");
    }
    for t in &takes {
        if let LogLine::Take { n, host, rank, position, stats, score, .. } = t {
            let _ = writeln!(
                w,
                "  fetched as page {n} of {total_takes}: host {host:?} ranked {rank:.4} (position {position} among the eligible hosts)"
            );
            let _ = writeln!(
                w,
                "    host so far: {} pages, {} long chunks, {} labeled chunks; rank = P(the host copies), prior max({score:.3}, {PRIOR_SCORE}), labeled share {COPIER_SHARE} if it copies, {OTHER_SHARE} if not{}",
                stats.pages,
                stats.long_chunks,
                stats.labeled_chunks,
                if stats.tunnelling() {
                    format!("; x {} while tunnelling (menus only so far)", 1.0 + TUNNEL_BONUS)
                } else {
                    String::new()
                }
            );
        }
    }
    if bad > 0 {
        let _ = writeln!(w, "  ({bad} log lines did not parse and were skipped)");
    }
    Ok(out)
}

fn hit_text(h: &Option<TitleHit>) -> String {
    match h {
        Some(h) if h.words > 1 => format!("names the title {:?} ({} words)", h.title, h.words),
        Some(h) => format!("names the one-word title {:?}", h.title),
        None => "names no label-set title".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx() -> TitleIndex {
        TitleIndex::new([
            "Abraham Lincoln",
            "A",
            "Albedo",
            "The",
            "Go",
            "United States Army",
            "1999",
            "http://blind.example/sample/page",
        ])
    }

    #[test]
    fn titles_match_as_whole_token_runs() {
        let i = idx();
        assert_eq!(i.len(), 3); // "A", "The", "Go" and "1999" never count alone, URLs never
        let hit = i.find(&tokens("More on President Abraham Lincoln's life")).unwrap();
        assert_eq!((hit.title.as_str(), hit.words), ("abraham lincoln", 2));
        assert_eq!(i.find(&tokens("Lincoln, Abraham")), None);
        assert_eq!(i.find(&tokens("a go at the albedo")).unwrap().words, 1);
        assert_eq!(i.find(&tokens("a go at the")), None);
        // The longest title wins.
        let i2 = TitleIndex::new(["United States", "United States Army"]);
        assert_eq!(i2.find(&tokens("the united states army band")).unwrap().words, 3);
    }

    #[test]
    fn url_tokens_read_host_and_decoded_path() {
        assert_eq!(
            url_tokens("http://lincoln-facts.example.org:8080/wiki/Abraham_Lincoln%27s.html?x=1"),
            ["lincoln", "facts", "example", "wiki", "abraham", "lincoln", "s", "html", "x", "1"]
        );
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("a%20b%"), "a b%");
        let i = idx();
        assert!(i.find(&url_tokens("http://h.test/a/Abraham_Lincoln")).is_some());
    }

    #[test]
    fn evidence_combines_context_inheritance_and_parent() {
        let i = idx();
        // Anchor and URL both name a title: 1 - 0.4 × 0.5.
        let e = link_evidence(&i, "Abraham Lincoln", "http://x.test/Abraham_Lincoln.html", 0.0, 0.0);
        assert!((e.score - 0.8).abs() < 1e-9, "{e:?}");
        // Nothing at all: 0, so breadth-first order decides.
        let e = link_evidence(&i, "click here", "http://x.test/p/7", 0.0, 0.0);
        assert_eq!(e.score, 0.0);
        // Tunnelling: half the parent's score, fading hop by hop.
        let s1 = link_evidence(&i, "more", "http://x.test/c", 0.0, 0.8).score;
        let s2 = link_evidence(&i, "more", "http://x.test/d", 0.0, s1).score;
        assert!((s1 - 0.4).abs() < 1e-9 && (s2 - 0.2).abs() < 1e-9);
        // A copying parent passes its relevance on, whatever its score.
        let e = link_evidence(&i, "more", "http://x.test/e", 0.7, 0.1);
        assert!((e.score - 0.7).abs() < 1e-9 && e.inherited == 0.7);
        // Garbage in, [0, 1] out.
        assert_eq!(link_evidence(&i, "", "", f64::NAN, 7.0).score, TUNNEL_DECAY);
    }

    #[test]
    fn priorities_carry_scores_and_depth() {
        assert!(score_priority(0.5, 9) > score_priority(0.4, 1));
        assert!(score_priority(0.5, 1) > score_priority(0.5, 2));
        assert!((priority_score(score_priority(0.437, 3)) - 0.437).abs() < 1e-6);
        assert_eq!(priority_score(u32::MAX), 1.0);
        assert_eq!(score_priority(1.0, 0), 1_000_000_999);
    }

    #[test]
    fn hosts_rank_by_what_they_showed() {
        let fresh = HostStats::default();
        assert!((fresh.rank(0.6) - 0.6).abs() < 1e-9); // no pages yet: the link's own score
        let copying = HostStats { pages: 3, long_chunks: 20, labeled_chunks: 15 };
        let decoy = HostStats { pages: 3, long_chunks: 24, labeled_chunks: 0 };
        let one_text_page = HostStats { pages: 1, long_chunks: 5, labeled_chunks: 0 };
        let menus = HostStats { pages: 3, long_chunks: 0, labeled_chunks: 0 };
        // A copying host's plain links beat a decoy's title-named ones, and go near 1.
        assert!(copying.rank(0.0) > 0.99 && decoy.rank(0.8) < 1e-3);
        // One page of text without labeled chunks is enough to fall well behind.
        assert!(one_text_page.rank(0.8) < 0.2 * fresh.rank(0.8));
        // Menu pages count as no evidence, and a host entered through them is followed a few
        // pages before others of its rank (tunnelling), yet behind any link evidence.
        assert!((menus.rank(0.4) - 0.4 * (1.0 + TUNNEL_BONUS)).abs() < 1e-9);
        assert!(menus.rank(0.0) > fresh.rank(0.0) && menus.rank(0.0) < fresh.rank(0.2));
        let long_tunnel = HostStats { pages: TUNNEL_PAGES + 1, ..menus };
        assert!((long_tunnel.rank(0.0) - PRIOR_SCORE).abs() < 1e-9);
        // No evidence at all: hosts nobody looked at and hosts of menus alone come before
        // hosts whose text had no labeled chunk.
        assert!((fresh.rank(0.0) - PRIOR_SCORE).abs() < 1e-9);
        assert!(menus.rank(0.0) > decoy.rank(0.0) && decoy.rank(0.0) > 0.0);
        assert!(fresh.rank(f64::NAN).is_finite() && fresh.rank(1.0) < 1.0);
    }

    #[test]
    fn copying_hosts_are_named_for_their_sitemaps_once() {
        let st = FocusState::new(idx());
        st.observe("test,menus,", 0, 0);
        st.observe("test,text,", 6, 0);
        st.observe("test,quotes,", 20, 1); // one labeled chunk among much other text
        st.observe("test,copier,", 6, 5);
        assert_eq!(st.take_sitemap_hosts(), ["test,copier,"]);
        st.observe("test,copier,", 6, 5);
        assert!(st.take_sitemap_hosts().is_empty(), "named once");
        // One labeled chunk and nothing else is just enough.
        st.observe("test,one,", 1, 1);
        assert_eq!(st.take_sitemap_hosts(), ["test,one,"]);
    }

    #[test]
    fn log_explains_a_url() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("focus-log.jsonl");
        let st = FocusState::new(idx()).with_log(&path).unwrap();
        let ev = link_evidence(&st.titles, "Abraham Lincoln", "http://c.test/p/1", 0.0, 0.0);
        let entry = FrontierEntry {
            url: "http://c.test/p/1".into(),
            host_key: "test,c,".into(),
            depth: 2,
            priority: score_priority(ev.score, 2),
            hops: 0,
            sitemap: false,
        };
        st.log_link(&entry, "http://o.test/", "Abraham Lincoln", &ev);
        st.observe("test,c,", 4, 3);
        st.taken(&entry, 17, st.rank("test,c,", entry.priority), 2);
        st.flush();
        std::fs::write(dir.path().join("x"), "").unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        writeln!(f, "not json").unwrap();
        let text = explain(&path, "http://c.test/p/1").unwrap();
        assert!(text.contains("queued from \"http://o.test/\" at depth 2 with score 0.600"), "{text}");
        assert!(text.contains("names the title \"abraham lincoln\""), "{text}");
        assert!(text.contains("fetched as page 17 of 1"), "{text}");
        assert!(text.contains("1 pages, 4 long chunks, 3 labeled chunks"), "{text}");
        assert!(text.contains("1 log lines did not parse"), "{text}");
        let none = explain(&path, "http://elsewhere.test/").unwrap();
        assert!(none.contains("no evidence logged") && none.contains("not fetched"), "{none}");
        assert!(explain(&dir.path().join("missing"), "u").is_err());
    }
}
