//! The review server: server-rendered pages over one store (axum). The store is read once at
//! start (every neighborhood, the flagged ones sorted by badness), so the list renders from
//! memory; pages and evidence are read from the store on demand; labels are written through.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use anyhow::Result;
use axum::extract::{Form, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use detector::{MeanStd, NeighborhoodAccumulator, PageOrigin};
use labelsets::LabelSet;
use serde::Deserialize;
use store::labels::{LabelIndex, ReviewLabel, Verdict};
use store::{PageRecord, Store};

use super::diff::{word_diff, BlockDiff};
use super::html::{self, esc, ext_link, pct};
use super::marked;
use super::svg::Histogram;
use crate::report::{ThresholdChoice, ThresholdInfo};
use crate::source::labeled::{source_passage, SourceTexts};

/// Writing into a `String` cannot fail.
macro_rules! w {
    ($($t:tt)*) => { let _ = write!($($t)*); };
}

/// Rows per list page.
pub const LIST_PAGE: usize = 50;
/// Pages per neighborhood-view page.
const HOOD_PAGE: usize = 100;
/// Pages read to find a neighborhood's top sources (a host may hold millions).
const SOURCE_SCAN: usize = 500;
/// Sub-neighborhoods shown in a neighborhood view.
const MAX_CHILDREN: usize = 500;

/// Source titles and URLs from the label set, when it can be opened.
pub struct Names(Option<LabelSet>);

impl Names {
    /// The given label set, or the one the store was scanned with.
    pub fn open(store: &Store, labelset: Option<&std::path::Path>) -> Names {
        let path = match labelset {
            Some(p) => Some(p.to_path_buf()),
            None => store.meta("labelset_path").ok().flatten().map(PathBuf::from),
        };
        Names(path.and_then(|p| match LabelSet::open(&p) {
            Ok(ls) => Some(ls),
            Err(e) => {
                eprintln!("warning: cannot open label set {} ({e}); showing source ids", p.display());
                None
            }
        }))
    }

    pub fn none() -> Names {
        Names(None)
    }

    fn name(&self, id: u32) -> Option<(&str, &str)> {
        self.0.as_ref()?.source(id).map(|s| (s.title, s.url))
    }

    /// The source of a raw text block when the label set has it (normalized as the label
    /// set records).
    fn source_of_text(&self, raw: &str) -> Option<u32> {
        self.0.as_ref()?.lookup_text(raw)
    }

    /// The chunk hash of a raw text block under the label set's normalization.
    fn chunk_hash(&self, raw: &str) -> Option<detector::Sha1Digest> {
        let ls = self.0.as_ref()?;
        Some(detector::fingerprint::chunk_hash(&ls.normalization().apply(raw)))
    }

    /// The source as a link to where the label set has it from (title, or `#id`).
    fn link(&self, id: u32) -> String {
        match self.name(id) {
            Some((title, url)) => ext_link(url, title),
            None => format!("#{id}"),
        }
    }
}

/// Which flagged neighborhoods the list shows.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ListQuery {
    /// `unreviewed`, `reviewed`, or a label (`copied-for-profit`, …); empty: all.
    #[serde(default)]
    pub state: String,
    /// Host substring.
    #[serde(default)]
    pub host: String,
    /// 0-based page.
    #[serde(default)]
    pub page: usize,
}

#[derive(Debug, Deserialize)]
pub struct HoodQuery {
    pub name: String,
    #[serde(default)]
    pub page: usize,
}

#[derive(Debug, Deserialize)]
pub struct PageQuery {
    pub url: String,
}

/// `GET /d?a=URL&b=URL`: two pages (near replicas) side by side.
#[derive(Debug, Deserialize)]
pub struct DiffQuery {
    pub a: String,
    pub b: String,
}

#[derive(Debug, Deserialize)]
pub struct LabelForm {
    #[serde(default)]
    pub csrf: String,
    pub neighborhood: String,
    /// A verdict, or `clear` to remove the label.
    pub label: String,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub back: String,
}

/// `POST /stopchunks/add`: a `false-positive` neighborhood's copied chunks become reviewed
/// stop chunks.
#[derive(Debug, Deserialize)]
pub struct StopAddForm {
    #[serde(default)]
    pub csrf: String,
    pub neighborhood: String,
}

/// `POST /stopchunks/remove`: take one chunk off the reviewed stop list.
#[derive(Debug, Deserialize)]
pub struct StopRemoveForm {
    #[serde(default)]
    pub csrf: String,
    pub sha1: String,
}

/// Pages read when collecting a neighborhood's copied chunks for the stop list.
const STOP_SCAN: usize = 10_000;

/// (source id, labeled chunks), most first.
type TopSources = Arc<Vec<(u32, u64)>>;

/// Everything the server knows; shared by all requests.
pub struct Review {
    store: Arc<Store>,
    names: Names,
    /// Every neighborhood, in name order (sub-neighborhoods are a range of it).
    all: Vec<(String, NeighborhoodAccumulator)>,
    /// Indices into `all` of the neighborhoods above the threshold, worst first.
    flagged: Vec<u32>,
    pub threshold: ThresholdInfo,
    /// Badness over every neighborhood, for the list view's picture.
    hist: Histogram,
    labels: RwLock<LabelIndex>,
    csrf: String,
    /// Script/style nonce for the Content-Security-Policy.
    nonce: String,
    reviewer: String,
    /// When false (an explicit non-loopback --listen), any Host header is accepted.
    pub check_host: bool,
    top_sources: Mutex<HashMap<String, TopSources>>,
    /// URL → the later pages the scan marked near replicas of it (`near_duplicate_of` points
    /// one way: to the earlier page); built once, beside the server ([`Review::index_near_replicas`]).
    near_of: std::sync::OnceLock<HashMap<String, Vec<String>>>,
    /// The pages the label set was built from (`--source-pages`), for copied blocks beside their
    /// source paragraphs.
    pub sources: Option<SourceTexts>,
}

/// Copied blocks shown beside their source paragraphs at most, per page.
const MAX_BESIDE: usize = 100;

/// Later near replicas listed per page at most.
const NEAR_LISTED: usize = 20;

/// Random hex from the OS (a CSRF token must not be guessable).
pub fn random_token() -> String {
    use std::io::Read;
    let mut b = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_ok();
    if !from_os {
        // No /dev/urandom: std's hasher keys are seeded from the OS's randomness too.
        use std::hash::{BuildHasher, Hasher};
        for chunk in b.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_nanos(),
            );
            chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn host_of(name: &str) -> &str {
    detector::page::host_of(name)
}

impl Review {
    /// Read the store's neighborhoods and labels; flag those above the threshold.
    pub fn build(
        store: Arc<Store>,
        names: Names,
        threshold: ThresholdChoice,
        reviewer: &str,
    ) -> Result<Review> {
        let mut all = Vec::new();
        let mut stats = MeanStd::default();
        for n in store.neighborhoods() {
            let (name, acc) = n?;
            stats.push(acc.badness());
            all.push((name, acc));
        }
        let (kind, value) = match threshold {
            ThresholdChoice::MeanPlusStd => ("mean+sd", stats.mean_plus_std()),
            ThresholdChoice::Fixed(v) => ("fixed", v),
        };
        let threshold = ThresholdInfo {
            kind,
            value,
            mean: stats.mean(),
            sd: stats.std_dev(),
            population: stats.count,
            ..Default::default()
        };
        let mut flagged: Vec<u32> =
            (0..all.len() as u32).filter(|&i| all[i as usize].1.badness() > value).collect();
        // Same order as `ditto report`: badness, then labeled chunks, then name.
        flagged.sort_by(|&a, &b| {
            let (na, a) = &all[a as usize];
            let (nb, b) = &all[b as usize];
            b.badness().total_cmp(&a.badness()).then(b.labeled_chunks.cmp(&a.labeled_chunks)).then(na.cmp(nb))
        });
        let labels = store.label_index()?;
        let hist = Histogram::new(all.iter().map(|(_, a)| a.badness()), value);
        Ok(Review {
            store,
            names,
            all,
            flagged,
            threshold,
            hist,
            labels: RwLock::new(labels),
            csrf: random_token(),
            nonce: random_token(),
            reviewer: reviewer.to_string(),
            check_host: true,
            top_sources: Mutex::new(HashMap::new()),
            near_of: std::sync::OnceLock::new(),
            sources: None,
        })
    }

    /// One pass over the stored pages: which pages were marked near replicas of which (the
    /// page view of the earlier page links to them). `ditto review` runs it on a thread of its
    /// own so the list is served at once.
    pub fn index_near_replicas(&self) {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for p in self.store.pages().flatten() {
            if let Some(o) = p.near_duplicate_of {
                let v = map.entry(o).or_default();
                if v.len() < NEAR_LISTED && !v.contains(&p.url) {
                    v.push(p.url);
                }
            }
        }
        let _ = self.near_of.set(map);
    }

    pub fn flagged_count(&self) -> usize {
        self.flagged.len()
    }

    /// The CSRF token forms carry (tests read it from the page like a browser would).
    pub fn csrf_token(&self) -> &str {
        &self.csrf
    }

    fn hood(&self, name: &str) -> Option<&NeighborhoodAccumulator> {
        self.all.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok().map(|i| &self.all[i].1)
    }

    fn labels(&self) -> std::sync::RwLockReadGuard<'_, LabelIndex> {
        self.labels.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Top sources over (at most SOURCE_SCAN of) a neighborhood's pages, cached.
    fn sources_of(&self, name: &str) -> TopSources {
        let mut cache = self.top_sources.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = cache.get(name) {
            return v.clone();
        }
        let mut per: HashMap<u32, u64> = HashMap::new();
        for p in self.store.pages_under(name).take(SOURCE_SCAN).flatten() {
            for s in &p.sources {
                *per.entry(s.source).or_default() += s.chunks as u64;
            }
        }
        let mut v: Vec<(u32, u64)> = per.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(5);
        let v = Arc::new(v);
        cache.insert(name.to_string(), v.clone());
        v
    }

    fn state_cell(&self, labels: &LabelIndex, name: &str) -> String {
        match labels.effective(name) {
            None => "<span class=\"st none\">unreviewed</span>".into(),
            Some(l) => {
                let via = if l.neighborhood == name {
                    String::new()
                } else {
                    format!(" <small>via {}</small>", esc(&html::ellipsize(&l.neighborhood, 40)))
                };
                let note = if l.note.is_empty() {
                    String::new()
                } else {
                    format!(" <small>“{}”</small>", esc(&html::ellipsize(&l.note, 60)))
                };
                format!(
                    "<span class=\"st {}\">{}</span>{via}{note} <small>{} {}</small>",
                    l.label.as_str(),
                    l.label.as_str(),
                    esc(&l.reviewer),
                    esc(&html::time(l.time))
                )
            }
        }
    }

    /// The label buttons for one neighborhood (a POST form with the CSRF token).
    fn label_form(&self, name: &str, back: &str, with_note: bool) -> String {
        let mut s = String::new();
        w!(
            s,
            "<form class=\"lab\" method=\"post\" action=\"/label\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <input type=\"hidden\" name=\"neighborhood\" value=\"{}\"><input type=\"hidden\" name=\"back\" value=\"{}\">",
            esc(&self.csrf),
            esc(name),
            esc(back)
        );
        if with_note {
            s.push_str("<input name=\"note\" placeholder=\"note (optional)\" maxlength=\"500\"> ");
        }
        for (i, v) in Verdict::ALL.iter().enumerate() {
            w!(
                s,
                "<button name=\"label\" value=\"{0}\" class=\"{0}\" title=\"key {1}\">{1} {0}</button>",
                v.as_str(),
                i + 1
            );
        }
        if with_note {
            s.push_str("<button name=\"label\" value=\"clear\" class=\"clear\">clear</button>");
        }
        s.push_str("</form>");
        s
    }

    fn keeps(&self, q: &ListQuery, labels: &LabelIndex, name: &str) -> bool {
        if !q.host.is_empty() && !host_of(name).to_ascii_lowercase().contains(&q.host.to_ascii_lowercase()) {
            return false;
        }
        let l = labels.effective(name);
        match q.state.as_str() {
            "" | "all" => true,
            "unreviewed" => l.is_none(),
            "reviewed" => l.is_some(),
            v => l.is_some_and(|l| l.label.as_str() == v),
        }
    }

    /// The list of flagged neighborhoods (one page of it).
    pub fn render_list(&self, q: &ListQuery) -> String {
        let labels = self.labels();
        let start = q.page.saturating_mul(LIST_PAGE);
        // Unfiltered: a slice of the sorted list. Filtered: one pass to count and pick.
        let (total, rows): (usize, Vec<u32>) = if q.state.is_empty() && q.host.is_empty() {
            (self.flagged.len(), self.flagged.iter().skip(start).take(LIST_PAGE).copied().collect())
        } else {
            let mut total = 0;
            let mut rows = Vec::new();
            for &i in &self.flagged {
                if self.keeps(q, &labels, &self.all[i as usize].0) {
                    if total >= start && rows.len() < LIST_PAGE {
                        rows.push(i);
                    }
                    total += 1;
                }
            }
            (total, rows)
        };
        let mut counts: HashMap<Verdict, usize> = HashMap::new();
        for l in labels.0.values() {
            *counts.entry(l.label).or_default() += 1;
        }
        let back = format!("/?state={}&host={}&page={}", pct(&q.state), pct(&q.host), q.page);
        let th = &self.threshold;
        let mut s = String::with_capacity(64 * 1024);
        w!(
            s,
            "<h1>Suspicious neighborhoods</h1><p class=\"sum\">{} of {} neighborhoods above threshold <b>{:.4}</b> \
             ({}; mean {:.4}, σ {:.4}). Labels: ",
            self.flagged.len(),
            th.population,
            th.value,
            th.kind,
            th.mean,
            th.sd
        );
        for v in Verdict::ALL {
            w!(s, "<span class=\"st {0}\">{0}</span> {1} ", v.as_str(), counts.get(&v).copied().unwrap_or(0));
        }
        s.push_str("</p>");
        let listed: Vec<(f64, usize, &str)> = rows
            .iter()
            .enumerate()
            .map(|(k, &i)| (self.all[i as usize].1.badness(), start + k + 1, self.all[i as usize].0.as_str()))
            .collect();
        s.push_str(&self.hist.svg(&listed));
        w!(
            s,
            "<p class=\"histkey\">Badness of all {} neighborhoods (bar heights on a log scale, counts above): \
             <span class=\"k above\"></span>above the threshold <span class=\"k mixed\"></span>bin holding the \
             threshold <span class=\"k bar\"></span>at or below it <span class=\"k listed\"></span>▲ the {} listed \
             below</p>",
            self.hist.total(),
            listed.len()
        );
        s.push_str("<form class=\"filters\" method=\"get\" action=\"/\"><label>show <select name=\"state\">");
        for (v, text) in [
            ("", "all"),
            ("unreviewed", "unreviewed"),
            ("reviewed", "reviewed"),
            ("copied-for-profit", "copied-for-profit"),
            ("legitimate-mirror", "legitimate-mirror"),
            ("false-positive", "false-positive"),
            ("unsure", "unsure"),
        ] {
            let sel = if q.state == v { " selected" } else { "" };
            w!(s, "<option value=\"{v}\"{sel}>{text}</option>");
        }
        w!(
            s,
            "</select></label> <label>host <input name=\"host\" value=\"{}\" size=\"24\"></label> \
             <button>filter</button></form>",
            esc(&q.host)
        );
        w!(
            s,
            "<table><thead><tr><th>#</th><th>badness</th><th>pages</th><th>labeled / chunks</th><th>neighborhood</th>\
             <th>top sources</th><th>review</th><th>label</th></tr></thead><tbody>"
        );
        for (k, &i) in rows.iter().enumerate() {
            let (name, acc) = &self.all[i as usize];
            let sources = self.sources_of(name);
            let src = sources
                .iter()
                .take(3)
                .map(|&(id, n)| format!("{} ({n})", self.names.link(id)))
                .collect::<Vec<_>>()
                .join(", ");
            w!(
                s,
                "<tr data-row><td>{}</td><td>{:.4}</td><td>{}</td><td>{} / {}</td>\
                 <td><a class=\"go\" href=\"/n?name={}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                start + k + 1,
                acc.badness(),
                acc.pages,
                acc.labeled_chunks,
                acc.chunks,
                pct(name),
                esc(&html::ellipsize(name, 80)),
                src,
                self.state_cell(&labels, name),
                self.label_form(name, &back, false)
            );
        }
        s.push_str("</tbody></table>");
        let pages = total.div_ceil(LIST_PAGE).max(1);
        w!(
            s,
            "<p class=\"pager\">rows {}–{} of {total} · page {} of {pages} ",
            start.min(total) + usize::from(total > start),
            (start + rows.len()).min(total),
            q.page + 1
        );
        let link = |p: usize| format!("/?state={}&amp;host={}&amp;page={p}", pct(&q.state), pct(&q.host));
        if q.page > 0 {
            w!(s, "<a href=\"{}\">← previous</a> ", link(q.page - 1));
        }
        if start + LIST_PAGE < total {
            w!(s, "<a href=\"{}\">next →</a>", link(q.page + 1));
        }
        s.push_str("</p>");
        self.layout("ditto review", &s)
    }

    /// One neighborhood: its numbers, label form, parents, sub-neighborhoods and pages.
    pub fn render_hood(&self, q: &HoodQuery) -> Option<String> {
        let acc = self.hood(&q.name)?;
        let name = q.name.as_str();
        let labels = self.labels();
        let mut s = String::with_capacity(32 * 1024);
        w!(s, "<p class=\"crumbs\"><a href=\"/\">all</a>");
        for parent in detector::neighborhoods(name).iter().filter(|p| p.len() < name.len()) {
            if self.hood(parent).is_some() {
                w!(s, " › <a href=\"/n?name={}\">{}</a>", pct(parent), esc(parent));
            }
        }
        w!(s, "</p><h1>{}</h1>", esc(name));
        let above = acc.badness() > self.threshold.value;
        w!(
            s,
            "<p class=\"sum\">badness <b>{:.4}</b> ({} threshold {:.4}) · {} pages · {} labeled of {} chunks · \
             site: {}</p>",
            acc.badness(),
            if above { "above" } else { "not above" },
            self.threshold.value,
            acc.pages,
            acc.labeled_chunks,
            acc.chunks,
            ext_link(name, name)
        );
        w!(s, "<p>review: {}</p>", self.state_cell(&labels, name));
        let back = format!("/n?name={}", pct(name));
        s.push_str(&self.label_form(name, &back, true));
        if labels.effective(name).is_some_and(|l| l.label == Verdict::FalsePositive) {
            w!(
                s,
                "<form class=\"stopadd\" method=\"post\" action=\"/stopchunks/add\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
                 <input type=\"hidden\" name=\"neighborhood\" value=\"{}\"><button>add its copied chunks to the stop list</button> \
                 <small class=\"muted\">false positive: its labeled chunks become reviewed stop chunks, left out of later \
                 scans and crawls of this store (<a href=\"/stopchunks\">stop list</a>, each removable)</small></form>",
                esc(&self.csrf),
                esc(name)
            );
        }
        let src = self.sources_of(name);
        if !src.is_empty() {
            s.push_str("<h2>Top sources</h2><ul>");
            for &(id, n) in src.iter() {
                w!(s, "<li>{} — {n} labeled chunks</li>", self.names.link(id));
            }
            s.push_str("</ul>");
        }
        // Direct children: one more path segment than this prefix.
        let from = self.all.partition_point(|(n, _)| n.as_str() <= name);
        let children: Vec<&(String, NeighborhoodAccumulator)> = self.all[from..]
            .iter()
            .take_while(|(n, _)| n.starts_with(name))
            .filter(|(n, _)| n[name.len()..].trim_end_matches('/').find('/').is_none())
            .take(MAX_CHILDREN)
            .collect();
        if !children.is_empty() {
            w!(s, "<h2>Sub-neighborhoods ({})</h2><table><thead><tr><th>badness</th><th>pages</th><th>labeled / chunks</th><th>neighborhood</th><th>review</th></tr></thead><tbody>", children.len());
            for (n, a) in children {
                let flag = if a.badness() > self.threshold.value { " class=\"hot\"" } else { "" };
                w!(
                    s,
                    "<tr{flag}><td>{:.4}</td><td>{}</td><td>{} / {}</td><td><a href=\"/n?name={}\">{}</a></td><td>{}</td></tr>",
                    a.badness(),
                    a.pages,
                    a.labeled_chunks,
                    a.chunks,
                    pct(n),
                    esc(&html::ellipsize(n, 90)),
                    self.state_cell(&labels, n)
                );
            }
            s.push_str("</tbody></table>");
        }
        let start = q.page.saturating_mul(HOOD_PAGE);
        w!(s, "<h2>Pages</h2><table><thead><tr><th>contains</th><th>labeled / chunks</th><th>page</th><th>top source</th></tr></thead><tbody>");
        let mut shown = 0;
        let mut more = false;
        for (k, p) in self.store.pages_under(name).skip(start).enumerate() {
            if k >= HOOD_PAGE {
                more = true;
                break;
            }
            let p = match p {
                Ok(p) => p,
                Err(e) => {
                    w!(s, "<tr><td colspan=\"4\">unreadable record: {}</td></tr>", esc(&e.to_string()));
                    continue;
                }
            };
            let top = p.sources.first().map(|sc| self.names.link(sc.source)).unwrap_or_default();
            let near = match &p.near_duplicate_of {
                Some(o) => format!(
                    " <a class=\"cmp\" href=\"/d?a={}&amp;b={}\" title=\"near replica of {}\">≈ side by side</a>",
                    pct(o),
                    pct(&p.url),
                    esc(o)
                ),
                None => String::new(),
            };
            w!(
                s,
                "<tr data-row><td>{:.4}</td><td>{} / {}</td><td><a class=\"go\" href=\"/p?url={}\">{}</a>{near}</td><td>{}</td></tr>",
                p.contains,
                p.labeled_chunks,
                p.chunks,
                pct(&p.url),
                esc(&html::ellipsize(&p.url, 100)),
                top
            );
            shown += 1;
        }
        s.push_str("</tbody></table><p class=\"pager\">");
        if q.page > 0 {
            w!(s, "<a href=\"/n?name={}&amp;page={}\">← previous</a> ", pct(name), q.page - 1);
        }
        w!(s, "pages {}–{} ", start + usize::from(shown > 0), start + shown);
        if more {
            w!(s, "<a href=\"/n?name={}&amp;page={}\">next →</a>", pct(name), q.page + 1);
        }
        s.push_str("</p>");
        Some(self.layout(&format!("{} — ditto review", html::ellipsize(name, 60)), &s))
    }

    /// Every stored capture of exactly this URL.
    fn captures(&self, url: &str) -> Vec<PageRecord> {
        self.store
            .pages_under(url)
            .flatten()
            .take_while(|p| p.url.starts_with(url))
            .filter(|p| p.url == url)
            .collect()
    }

    /// One page: each capture with its copied passages beside their sources.
    pub fn render_page(&self, q: &PageQuery) -> Option<String> {
        let mut captures = self.captures(&q.url);
        if captures.is_empty() {
            return None;
        }
        // Copied passages are read back from the page's text (the store keeps block numbers);
        // a passage whose source is gone says so.
        if let Ok(texts) = crate::source::text::TextSource::new(&self.store) {
            for p in &mut captures {
                let _ = texts.fill_passages(p);
            }
        }
        let mut s = String::new();
        w!(s, "<p class=\"crumbs\"><a href=\"/\">all</a>");
        for n in detector::neighborhoods(&q.url) {
            w!(s, " › <a href=\"/n?name={}\">{}</a>", pct(&n), esc(&n));
        }
        w!(s, "</p><h1>{}</h1>", esc(&q.url));
        for p in &captures {
            let origin = match &p.origin {
                PageOrigin::Warc { file, offset } => {
                    format!("WARC record at offset {offset} of <code>{}</code>", esc(file))
                }
                PageOrigin::File { path } => format!("file <code>{}</code>", esc(path)),
                PageOrigin::Fetch => "fetched by the crawler".into(),
                PageOrigin::Unknown => "unknown".into(),
            };
            w!(
                s,
                "<section class=\"capture\"><table class=\"kv\"><tr><th>URL</th><td>{}</td></tr>\
                 <tr><th>fetched</th><td>{}</td></tr><tr><th>status</th><td>{}</td></tr>\
                 <tr><th>body SHA-1</th><td><code>{}</code></td></tr><tr><th>origin</th><td>{origin}</td></tr>\
                 <tr><th>contains</th><td>{:.4} ({} labeled of {} chunks; {} stop chunks)</td></tr>",
                ext_link(&p.url, &p.url),
                esc(&html::time(p.fetch_time)),
                p.status,
                esc(&p.file_hash),
                p.contains,
                p.labeled_chunks,
                p.chunks,
                p.stop_chunks
            );
            if let Some(f) = p.file_match {
                w!(s, "<tr><th>whole file</th><td>identical to {}</td></tr>", self.names.link(f));
            }
            if !p.sources.is_empty() {
                let src = p
                    .sources
                    .iter()
                    .map(|sc| format!("{} ({})", self.names.link(sc.source), sc.chunks))
                    .collect::<Vec<_>>()
                    .join(", ");
                w!(s, "<tr><th>sources</th><td>{src}</td></tr>");
            }
            if let Some(other) = &p.near_duplicate_of {
                w!(
                    s,
                    "<tr><th>near replica of</th><td><a href=\"/p?url={}\">{}</a> · <a class=\"cmp\" \
                     href=\"/d?a={}&amp;b={}\">compare side by side</a></td></tr>",
                    pct(other),
                    esc(&html::ellipsize(other, 100)),
                    pct(other),
                    pct(&p.url)
                );
            }
            // What the page told the crawl of itself (issue 38).
            if let Ok(Some(d)) = self.store.page_directives(&p.url) {
                if let Some(c) = &d.canonical {
                    w!(
                        s,
                        "<tr><th>canonical</th><td>{} <span class=\"muted\">(the page names this URL as \
                         its original: syndication rather than a content farm)</span></td></tr>",
                        ext_link(c, c)
                    );
                }
                if d.noindex {
                    w!(s, "<tr><th>noindex</th><td>its site asks search engines not to index it</td></tr>");
                }
            }
            s.push_str("</table>");
            // The page's text with the copied blocks highlighted beside their sources; the
            // table of stored passages only when the text cannot be had.
            if self.render_text(&mut s, p) {
                s.push_str("</section>");
                continue;
            }
            if p.evidence.is_empty() {
                s.push_str("<p class=\"muted\">No copied passages stored for this page.</p>");
            } else {
                s.push_str("<h2>Copied passages</h2><table class=\"ev\"><thead><tr><th>passage on this page</th><th>source</th></tr></thead><tbody>");
                for e in &p.evidence {
                    let source = match self.names.name(e.source) {
                        Some((title, url)) => {
                            format!("<b>{}</b><br>{}", esc(title), ext_link(url, url))
                        }
                        None => format!("source #{}", e.source),
                    };
                    w!(s, "<tr><td class=\"passage\">{}</td><td>{source}</td></tr>", esc(&e.passage));
                }
                s.push_str("</tbody></table>");
            }
            s.push_str("</section>");
        }
        match self.near_of.get() {
            Some(m) => {
                if let Some(later) = m.get(&q.url) {
                    s.push_str("<h2>Near replicas of this page</h2><ul>");
                    for u in later {
                        w!(
                            s,
                            "<li><a href=\"/p?url={}\">{}</a> · <a class=\"cmp\" href=\"/d?a={}&amp;b={}\">compare side by side</a></li>",
                            pct(u),
                            esc(&html::ellipsize(u, 100)),
                            pct(&q.url),
                            pct(u)
                        );
                    }
                    s.push_str("</ul>");
                }
            }
            None => s.push_str("<p class=\"muted near-pending\">Pages marked near replicas of this one: still being indexed; reload to see them.</p>"),
        }
        Some(self.layout(&format!("{} — ditto review", html::ellipsize(&q.url, 60)), &s))
    }

    /// The page's text as the scan saw it (kept in the store or read back from its source,
    /// `crate::source::text`), each copied block highlighted in place with a reference to its
    /// source, beside the list of sources (`marked`); when the source is gone or changed, a
    /// line saying so. Whether the text was shown.
    fn render_text(&self, s: &mut String, p: &PageRecord) -> bool {
        let blocks = match self.page_text(p) {
            Ok(b) => b,
            Err(why) => {
                w!(s, "<p class=\"muted gone\">The page's text cannot be shown: {}.</p>", esc(&why));
                return false;
            }
        };
        // A block is copied when the label set holds it; without the label set, the blocks
        // the store's evidence names.
        let copied: Vec<Option<u32>> = if self.names.0.is_some() {
            blocks.iter().take(marked::MAX_BLOCKS).map(|b| self.names.source_of_text(b)).collect()
        } else {
            let mut c = vec![None; blocks.len().min(marked::MAX_BLOCKS)];
            for e in &p.evidence {
                if let Some(slot) = c.get_mut(e.block as usize) {
                    *slot = Some(e.source);
                }
            }
            c
        };
        // Blocks counted through passages (edited copies) are copied too: the label set does
        // not hold their text, the record names them.
        let mut copied = copied;
        if let Some(ps) = &p.passages {
            let fallback = p.sources.first().map(|sc| sc.source);
            for &b in &ps.blocks {
                let source = p.evidence.iter().find(|e| e.block == b).map(|e| e.source).or(fallback);
                if let (Some(slot), Some(src)) = (copied.get_mut(b as usize), source) {
                    slot.get_or_insert(src);
                }
            }
        }
        let counted: Vec<(u32, u32)> = p.sources.iter().map(|sc| (sc.source, sc.chunks)).collect();
        let m = marked::marked_text(&blocks, &copied, &counted, &|id| self.names.link(id));
        s.push_str("<h2>Page text</h2>");
        s.push_str(&m.html());
        self.render_beside_sources(s, &blocks, &copied);
        true
    }

    /// Each copied block beside the source paragraph it came from, the words that differ
    /// marked (issue 36: an edited copy a reviewer can check word by word). The label set
    /// keeps no text: the sources are read from `--source-pages`; without it, a line says so.
    fn render_beside_sources(&self, s: &mut String, blocks: &[String], copied: &[Option<u32>]) {
        let rows: Vec<(usize, u32)> =
            copied.iter().enumerate().filter_map(|(b, c)| c.map(|src| (b, src))).take(MAX_BESIDE).collect();
        if rows.is_empty() {
            return;
        }
        let Some(texts) = &self.sources else {
            s.push_str(
                "<p class=\"muted beside-hint\">To see each copied block beside the source paragraph it came from, \
                 with the words that differ marked, start <code>ditto review --source-pages DIR</code> with the pages \
                 the label set was built from.</p>",
            );
            return;
        };
        s.push_str(
            "<h2>Copied blocks beside their sources</h2><table class=\"sbs beside\"><thead><tr>\
             <th>source paragraph (words the page dropped or changed struck)</th>\
             <th>on this page (words it added or changed marked)</th></tr></thead><tbody>",
        );
        for (b, src) in rows {
            let Some(page) = blocks.get(b) else { continue };
            let Some((title, url)) = self.names.name(src) else {
                w!(
                    s,
                    "<tr><td class=\"gap\">source #{src}: not in the label set</td><td>{}</td></tr>",
                    esc(page)
                );
                continue;
            };
            let source = texts.blocks(url).map(|doc| source_passage(page, &doc));
            match source {
                Ok(Some(orig)) => {
                    let (a, p) = word_diff(&orig, page);
                    w!(
                        s,
                        "<tr><td class=\"del\"><small>{}</small><br>{a}</td><td class=\"ins\">{p}</td></tr>",
                        self.names.link(src)
                    );
                }
                Ok(None) => {
                    w!(
                        s,
                        "<tr><td class=\"gap\">{}: no paragraph of it shares this block's words</td><td>{}</td></tr>",
                        esc(title),
                        esc(page)
                    );
                }
                Err(why) => {
                    w!(
                        s,
                        "<tr><td class=\"gap\">{} ({}): {}</td><td>{}</td></tr>",
                        esc(title),
                        esc(url),
                        esc(&why),
                        esc(page)
                    );
                }
            }
        }
        s.push_str("</tbody></table>");
    }

    /// A page's cleaned blocks, or why they cannot be had (a plain sentence).
    fn page_text(&self, p: &PageRecord) -> std::result::Result<Vec<String>, String> {
        match crate::source::text::TextSource::new(&self.store).and_then(|t| t.text_of(p)) {
            Ok(crate::source::text::PageText::Text(blocks)) => Ok(blocks),
            Ok(crate::source::text::PageText::Unavailable(why)) => Err(why),
            Err(_) => Err("store error".into()),
        }
    }

    /// Two pages side by side: the blocks they share collapsed, the ones that differ paired.
    pub fn render_diff(&self, q: &DiffQuery) -> Option<String> {
        // The latest capture of each.
        let latest = |u: &str| self.captures(u).into_iter().max_by_key(|p| p.fetch_time);
        let (a, b) = (latest(&q.a)?, latest(&q.b)?);
        let mut s = String::with_capacity(32 * 1024);
        w!(s, "<p class=\"crumbs\"><a href=\"/\">all</a></p><h1>Side by side</h1><table class=\"kv\">");
        for (side, p) in [("A", &a), ("B", &b)] {
            w!(
                s,
                "<tr><th>{side}</th><td><a href=\"/p?url={}\">{}</a> <small>({} · contains {:.4})</small></td></tr>",
                pct(&p.url),
                esc(&p.url),
                esc(&html::time(p.fetch_time)),
                p.contains
            );
        }
        if let (Some(x), Some(y)) = (a.simhash, b.simhash) {
            w!(s, "<tr><th>SimHash distance</th><td>{} of 64 bits</td></tr>", (x ^ y).count_ones());
        }
        s.push_str("</table>");
        let (ta, tb) = (self.page_text(&a), self.page_text(&b));
        match (ta, tb) {
            (Ok(ta), Ok(tb)) => {
                let d = BlockDiff::new(&ta, &tb);
                let (same, only_a, only_b) = d.counts();
                w!(
                    s,
                    "<p class=\"sum\"><b>{same}</b> blocks the same in both · <b>{only_a}</b> only in A · \
                     <b>{only_b}</b> only in B</p>"
                );
                if d.unaligned {
                    s.push_str(
                        "<p class=\"muted\">Too many differing blocks to align: the middle is shown as one change.</p>",
                    );
                }
                let title =
                    |side: &str, p: &PageRecord| format!("{side}: {}", esc(&html::ellipsize(&p.url, 80)));
                s.push_str(&d.table(&title("A", &a), &title("B", &b)));
            }
            (ta, tb) => {
                for (side, t) in [("A", ta), ("B", tb)] {
                    if let Err(why) = t {
                        w!(
                            s,
                            "<p class=\"muted gone\">The text of {side} cannot be shown: {}.</p>",
                            esc(&why)
                        );
                    }
                }
            }
        }
        Some(self.layout("side by side — ditto review", &s))
    }

    fn layout(&self, title: &str, body: &str) -> String {
        format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
             <meta name=\"referrer\" content=\"no-referrer\"><style nonce=\"{n}\">{STYLE}{svg_style}{marked_style}{diff_style}</style></head>\
             <body><header><a href=\"/\">ditto review</a> <a href=\"/stopchunks\">stop chunks</a> <span class=\"muted\">reviewer: {} · keys: j/k move, \
             Enter open, 1–4 label</span></header><main>{body}</main><script nonce=\"{n}\">{SCRIPT}</script></body></html>",
            esc(title),
            esc(&self.reviewer),
            svg_style = super::svg::STYLE,
            marked_style = marked::STYLE,
            diff_style = super::diff::STYLE,
            n = self.nonce
        )
    }

    /// Apply a label form; the status and the page to go back to.
    pub fn apply_label(&self, f: &LabelForm) -> std::result::Result<String, (StatusCode, &'static str)> {
        if !constant_time_eq(f.csrf.as_bytes(), self.csrf.as_bytes()) {
            return Err((StatusCode::FORBIDDEN, "missing or wrong CSRF token"));
        }
        if self.hood(&f.neighborhood).is_none() {
            return Err((StatusCode::NOT_FOUND, "no such neighborhood"));
        }
        let back = html::local_path(&f.back).unwrap_or("/").to_string();
        let mut labels = self.labels.write().unwrap_or_else(|e| e.into_inner());
        if f.label == "clear" {
            self.store
                .remove_label(&f.neighborhood)
                .map_err(|_| (StatusCode::INTERNAL_SERVER_ERROR, "store error"))?;
            labels.remove(&f.neighborhood);
            return Ok(back);
        }
        let verdict: Verdict = f.label.parse().map_err(|_| (StatusCode::BAD_REQUEST, "unknown label"))?;
        let l = ReviewLabel {
            neighborhood: f.neighborhood.clone(),
            label: verdict,
            note: html::ellipsize(f.note.trim(), 2000),
            reviewer: self.reviewer.clone(),
            time: now(),
        };
        self.store.set_label(&l).map_err(|_| (StatusCode::INTERNAL_SERVER_ERROR, "store error"))?;
        labels.set(l);
        Ok(back)
    }

    /// Add the copied (labeled) chunks of a `false-positive` neighborhood's pages to the
    /// store's reviewed stop list; returns how many were new.
    pub fn add_stop_chunks(&self, f: &StopAddForm) -> std::result::Result<u64, (StatusCode, &'static str)> {
        if !constant_time_eq(f.csrf.as_bytes(), self.csrf.as_bytes()) {
            return Err((StatusCode::FORBIDDEN, "missing or wrong CSRF token"));
        }
        if self.hood(&f.neighborhood).is_none() {
            return Err((StatusCode::NOT_FOUND, "no such neighborhood"));
        }
        if self.labels().effective(&f.neighborhood).is_none_or(|l| l.label != Verdict::FalsePositive) {
            return Err((
                StatusCode::CONFLICT,
                "only a neighborhood labeled false-positive gives stop chunks",
            ));
        }
        if self.names.0.is_none() {
            return Err((
                StatusCode::CONFLICT,
                "the label set is not at hand: cannot tell which chunks are copied",
            ));
        }
        let store_err = |_| (StatusCode::INTERNAL_SERVER_ERROR, "store error");
        let time = now();
        let mut found = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let texts = crate::source::text::TextSource::new(&self.store)
            .map_err(|_| (StatusCode::INTERNAL_SERVER_ERROR, "store error"))?;
        for p in self.store.pages_under(&f.neighborhood).take(STOP_SCAN) {
            let p = p.map_err(store_err)?;
            // A page whose source is gone or changed gives no stop chunks.
            let text = texts.text_of(&p).map_err(|_| (StatusCode::INTERNAL_SERVER_ERROR, "store error"))?;
            let Some(blocks) = text.blocks() else { continue };
            for b in blocks {
                if self.names.source_of_text(&b).is_none() {
                    continue;
                }
                let Some(h) = self.names.chunk_hash(&b) else { continue };
                if seen.insert(h) {
                    let rec = store::labels::ReviewedStopChunk {
                        chunk_sha1: detector::fingerprint::hex(&h),
                        text: b,
                        neighborhood: f.neighborhood.clone(),
                        reviewer: self.reviewer.clone(),
                        time,
                    };
                    found.push((h, rec));
                }
            }
        }
        self.store.add_stop_chunks(&found).map_err(store_err)
    }

    /// Take one chunk off the reviewed stop list.
    pub fn remove_stop_chunk(
        &self,
        f: &StopRemoveForm,
    ) -> std::result::Result<bool, (StatusCode, &'static str)> {
        if !constant_time_eq(f.csrf.as_bytes(), self.csrf.as_bytes()) {
            return Err((StatusCode::FORBIDDEN, "missing or wrong CSRF token"));
        }
        let h = detector::fingerprint::parse_hex(&f.sha1).ok_or((StatusCode::BAD_REQUEST, "bad SHA-1"))?;
        self.store.remove_stop_chunk(&h).map_err(|_| (StatusCode::INTERNAL_SERVER_ERROR, "store error"))
    }

    /// The reviewed stop list, each entry with a remove button.
    pub fn render_stopchunks(&self) -> String {
        let mut s = String::from(
            "<h1>Reviewed stop chunks</h1><p class=\"muted\">Copied chunks of neighborhoods labeled \
             false-positive, left out of later scans and crawls of this store besides the built-in list. \
             <code>ditto stopchunks export --store DB</code> writes them as a stop list.</p>",
        );
        let mut rows = String::new();
        let mut n = 0usize;
        for r in self.store.reviewed_stop_chunks() {
            match r {
                Ok((h, c)) => {
                    n += 1;
                    let sha = detector::fingerprint::hex(&h);
                    w!(
                        rows,
                        "<tr data-row><td class=\"passage\">{}</td><td><a class=\"go\" href=\"/n?name={}\">{}</a></td>\
                         <td>{} {}</td><td><code>{}</code></td><td><form method=\"post\" action=\"/stopchunks/remove\">\
                         <input type=\"hidden\" name=\"csrf\" value=\"{}\"><input type=\"hidden\" name=\"sha1\" value=\"{}\">\
                         <button>remove</button></form></td></tr>",
                        esc(&html::ellipsize(&c.text, 300)),
                        pct(&c.neighborhood),
                        esc(&html::ellipsize(&c.neighborhood, 60)),
                        esc(&c.reviewer),
                        esc(&html::time(c.time)),
                        sha,
                        esc(&self.csrf),
                        sha
                    );
                }
                Err(e) => {
                    w!(rows, "<tr><td colspan=\"5\">unreadable record: {}</td></tr>", esc(&e.to_string()));
                }
            }
        }
        if n == 0 {
            s.push_str("<p>No reviewed stop chunks yet.</p>");
        } else {
            w!(
                s,
                "<p>{n} chunks</p><table class=\"ev\"><thead><tr><th>chunk</th><th>from</th><th>added by</th>\
                 <th>SHA-1</th><th></th></tr></thead><tbody>{rows}</tbody></table>"
            );
        }
        self.layout("stop chunks — ditto review", &s)
    }

    /// Loopback servers answer only requests addressed to a loopback name, so a hostile web
    /// page cannot reach them through DNS rebinding.
    fn host_ok(&self, headers: &HeaderMap) -> bool {
        if !self.check_host {
            return true;
        }
        let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        let name = match host.rfind(':') {
            Some(i) if !host[i..].contains(']') => &host[..i],
            _ => host,
        };
        matches!(name, "localhost" | "127.0.0.1" | "[::1]") || name.starts_with("127.")
    }

    fn html_response(&self, status: StatusCode, body: String) -> Response {
        let csp = format!(
            "default-src 'none'; style-src 'nonce-{n}'; script-src 'nonce-{n}'; form-action 'self'; \
             base-uri 'none'; frame-ancestors 'none'",
            n = self.nonce
        );
        let mut r = (status, body).into_response();
        let h = r.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        if let Ok(v) = HeaderValue::from_str(&csp) {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
        }
        h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        r
    }

    fn not_found(&self) -> Response {
        self.html_response(
            StatusCode::NOT_FOUND,
            self.layout("not found", "<h1>Not found</h1><p><a href=\"/\">back to the list</a></p>"),
        )
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn forbidden_host() -> Response {
    (StatusCode::MISDIRECTED_REQUEST, "this review server answers only on a loopback host name\n")
        .into_response()
}

async fn list(State(r): State<Arc<Review>>, headers: HeaderMap, Query(q): Query<ListQuery>) -> Response {
    if !r.host_ok(&headers) {
        return forbidden_host();
    }
    let body = r.render_list(&q);
    r.html_response(StatusCode::OK, body)
}

async fn hood(State(r): State<Arc<Review>>, headers: HeaderMap, Query(q): Query<HoodQuery>) -> Response {
    if !r.host_ok(&headers) {
        return forbidden_host();
    }
    let rr = r.clone();
    // Reads pages from the store: off the async workers.
    match tokio::task::spawn_blocking(move || rr.render_hood(&q)).await {
        Ok(Some(body)) => r.html_response(StatusCode::OK, body),
        _ => r.not_found(),
    }
}

async fn page(State(r): State<Arc<Review>>, headers: HeaderMap, Query(q): Query<PageQuery>) -> Response {
    if !r.host_ok(&headers) {
        return forbidden_host();
    }
    let rr = r.clone();
    match tokio::task::spawn_blocking(move || rr.render_page(&q)).await {
        Ok(Some(body)) => r.html_response(StatusCode::OK, body),
        _ => r.not_found(),
    }
}

async fn side_by_side(
    State(r): State<Arc<Review>>,
    headers: HeaderMap,
    Query(q): Query<DiffQuery>,
) -> Response {
    if !r.host_ok(&headers) {
        return forbidden_host();
    }
    let rr = r.clone();
    match tokio::task::spawn_blocking(move || rr.render_diff(&q)).await {
        Ok(Some(body)) => r.html_response(StatusCode::OK, body),
        _ => r.not_found(),
    }
}

fn redirect(to: &'static str) -> Response {
    let mut resp = StatusCode::SEE_OTHER.into_response();
    resp.headers_mut().insert(header::LOCATION, HeaderValue::from_static(to));
    resp
}

fn refused(r: &Review, code: StatusCode, why: &str) -> Response {
    r.html_response(code, r.layout("refused", &format!("<h1>{}</h1><p><a href=\"/\">back</a></p>", esc(why))))
}

async fn stopchunks(State(r): State<Arc<Review>>, headers: HeaderMap) -> Response {
    if !r.host_ok(&headers) {
        return forbidden_host();
    }
    let rr = r.clone();
    match tokio::task::spawn_blocking(move || rr.render_stopchunks()).await {
        Ok(body) => r.html_response(StatusCode::OK, body),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn stop_add(State(r): State<Arc<Review>>, headers: HeaderMap, Form(f): Form<StopAddForm>) -> Response {
    if !r.host_ok(&headers) {
        return forbidden_host();
    }
    let rr = r.clone();
    match tokio::task::spawn_blocking(move || rr.add_stop_chunks(&f)).await {
        Ok(Ok(_)) => redirect("/stopchunks"),
        Ok(Err((code, why))) => refused(&r, code, why),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn stop_remove(
    State(r): State<Arc<Review>>,
    headers: HeaderMap,
    Form(f): Form<StopRemoveForm>,
) -> Response {
    if !r.host_ok(&headers) {
        return forbidden_host();
    }
    let rr = r.clone();
    match tokio::task::spawn_blocking(move || rr.remove_stop_chunk(&f)).await {
        Ok(Ok(_)) => redirect("/stopchunks"),
        Ok(Err((code, why))) => refused(&r, code, why),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn label(State(r): State<Arc<Review>>, headers: HeaderMap, Form(f): Form<LabelForm>) -> Response {
    if !r.host_ok(&headers) {
        return forbidden_host();
    }
    let rr = r.clone();
    match tokio::task::spawn_blocking(move || rr.apply_label(&f)).await {
        Ok(Ok(back)) => {
            let mut resp = StatusCode::SEE_OTHER.into_response();
            if let Ok(v) = HeaderValue::from_str(&back) {
                resp.headers_mut().insert(header::LOCATION, v);
            }
            resp
        }
        Ok(Err((code, why))) => r.html_response(
            code,
            r.layout("refused", &format!("<h1>{}</h1><p><a href=\"/\">back</a></p>", esc(why))),
        ),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// The routes.
pub fn router(review: Arc<Review>) -> Router {
    Router::new()
        .route("/", get(list))
        .route("/n", get(hood))
        .route("/p", get(page))
        .route("/d", get(side_by_side))
        .route("/label", post(label))
        .route("/stopchunks", get(stopchunks))
        .route("/stopchunks/add", post(stop_add))
        .route("/stopchunks/remove", post(stop_remove))
        .with_state(review)
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222}header{background:#263238;color:#eee;padding:6px 12px}\
header a{color:#fff;font-weight:bold;text-decoration:none}main{padding:8px 16px}h1{font-size:20px;word-break:break-all}\
h2{font-size:16px;margin-top:18px}table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:3px 6px;\
text-align:left;vertical-align:top}td{word-break:break-word}tr.sel{background:#fff3c4;outline:2px solid #f0b400}tr.hot td:first-child{color:#b00020;font-weight:bold}\
.muted{color:#888}.st{padding:1px 5px;border-radius:3px;background:#eee;white-space:nowrap}.st.copied-for-profit{background:#ffcdd2}\
.st.legitimate-mirror{background:#c8e6c9}.st.false-positive{background:#bbdefb}.st.unsure{background:#fff9c4}.st.none{color:#777}\
form.lab{display:inline-flex;gap:3px;flex-wrap:wrap}form.lab button{font-size:11px;padding:1px 4px;cursor:pointer}\
button.copied-for-profit{border-color:#e57373}button.legitimate-mirror{border-color:#81c784}button.false-positive{border-color:#64b5f6}\
.filters{margin:8px 0}.pager{margin:10px 0}.capture{border:1px solid #ccc;padding:8px;margin:10px 0}.kv th{width:140px;color:#555}\
.ev td.passage{width:60%;background:#fff8e1;font-family:Georgia,serif}\
.pagetext p{margin:.3em 0;font-family:Georgia,serif}.pagetext p.other{color:#888}.gone{border-left:3px solid #b00020;padding-left:8px}a.cmp{font-size:12px;white-space:nowrap}code{font-size:12px}.crumbs{color:#666;word-break:break-all}";

/// Keyboard shortcuts (progressive enhancement: every action is also a link or a button).
const SCRIPT: &str = "(function(){var rows=[].slice.call(document.querySelectorAll('tr[data-row]'));var i=-1;\
function sel(n){if(!rows.length)return;if(i>=0)rows[i].classList.remove('sel');i=Math.max(0,Math.min(rows.length-1,n));\
rows[i].classList.add('sel');rows[i].scrollIntoView({block:'nearest'});}\
var m=/sel=(\\d+)/.exec(location.hash);if(m)sel(+m[1]);\
document.addEventListener('keydown',function(e){var t=e.target.tagName;if(t==='INPUT'||t==='TEXTAREA'||t==='SELECT'||e.ctrlKey||e.metaKey||e.altKey)return;\
if(e.key==='j')sel(i+1);else if(e.key==='k')sel(i-1);\
else if(e.key==='Enter'&&i>=0){var a=rows[i].querySelector('a.go');if(a)location.href=a.getAttribute('href');}\
else if(e.key>='1'&&e.key<='4'){var f=(i>=0&&rows[i].querySelector('form.lab'))||document.querySelector('form.lab');\
if(f){var b=f.querySelectorAll('button[name=label]')[e.key-1];var bk=f.querySelector('input[name=back]');\
if(bk&&i>=0&&rows[i].contains(f))bk.value=bk.value.split('#')[0]+'#sel='+i;if(b)b.click();}}});})();";
