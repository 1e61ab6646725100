//! `ditto crawl`: the crawler's pages flow into the same pipeline stages as `ditto scan`;
//! the match stage turns each page's links into prioritized frontier entries, and the store
//! writer queues them with the page in one atomic batch.

pub mod metrics_http;
pub mod partition;
pub mod progress;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use crawler::crawl::{
    crawl, CrawlConfig, CrawlCounters, CrawlIo, CrawlReport, CrawledPage, FetchRecorder, LinkPolicy, PageSink,
};
use crawler::fetch::{FetchConfig, FetchResponse, Fetcher, ResolveMap};
use crawler::partition::PartitionRouter;
use crawler::urls::{canonical_url, HostPattern, Scope, ScopeRules, TrapGuard, TrapLimits};
use crawler::warc::{WarcInfo, WarcWriter};
use crossbeam_channel::Sender;
use detector::{Normalization, TrapRules};
use serde::Serialize;
use store::Store;

use crate::pipeline::focus::{FocusState, TitleIndex};
use crate::pipeline::progress::ProgressMode;
use crate::pipeline::source_stage::SourceCounters;
use crate::pipeline::stages::{Focus, Input, LinkSettings, Matcher};
use crate::pipeline::{run_pipeline, PipelineSettings, ScanStats};

/// Everything `ditto crawl` needs.
pub struct CrawlSettings {
    pub seeds: Vec<String>,
    pub user_agent: String,
    pub focus: Focus,
    pub scope: Scope,
    pub allow_hosts: Vec<String>,
    pub block_hosts: Vec<String>,
    pub resolve: Vec<String>,
    pub allow_private: bool,
    pub warc_dir: Option<PathBuf>,
    pub warc_max_bytes: u64,
    pub crawl: CrawlConfig,
    pub fetch: FetchConfig,
    pub traps: TrapRules,
    pub threads: usize,
    pub progress: ProgressMode,
    pub normalization: Normalization,
    /// Serve Prometheus metrics here while crawling (loopback unless `metrics_remote`).
    pub metrics: Option<std::net::SocketAddr>,
    pub metrics_remote: bool,
    /// `--focus labeled`: titles, log, hosts fetched from at a time.
    pub focus_opts: FocusOptions,
}

/// A focused crawl's inputs (`--focus labeled`; `crate::pipeline::focus`).
#[derive(Debug, Clone)]
pub struct FocusOptions {
    /// The label set's source titles, matched against anchors and URLs.
    pub titles: Vec<String>,
    /// Where to append the explanation of each queued link and page fetch.
    pub log: Option<PathBuf>,
    /// How many of the best-ranked hosts are served first (the focus set).
    pub hosts: usize,
    /// Beyond the best `--focus-min-hosts` hosts, only hosts ranked at least this share of the
    /// best are in the focus set (`crawler::crawl::CrawlConfig::focus_rank_span`).
    pub rank_span: f64,
}

impl Default for FocusOptions {
    fn default() -> Self {
        FocusOptions { titles: Vec::new(), log: None, hosts: 64, rank_span: 0.1 }
    }
}

/// What a crawl did: the crawler's side and the detection side.
#[derive(Debug, Serialize)]
pub struct CrawlSummary {
    pub crawl: CrawlReport,
    pub detection: ScanStats,
    pub warc_files: Vec<String>,
    /// Labeled chunks found per page fetched.
    pub harvest_rate: f64,
    /// Partitioned crawls: links sent to and received from other partitions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<std::collections::BTreeMap<&'static str, u64>>,
}

/// An honest User-Agent names a contact: a URL or an e-mail address.
pub fn check_user_agent(ua: &str) -> Result<()> {
    let token = crawler::robots::product_token(ua);
    if token.is_empty() {
        bail!("--user-agent {ua:?} must start with a product token, e.g. \"ditto/0.1 (+https://example.org/bot)\"");
    }
    if !(ua.contains("http://") || ua.contains("https://") || ua.contains('@')) {
        bail!("--user-agent {ua:?} must carry a contact URL or e-mail, e.g. \"ditto/0.1 (+https://example.org/bot)\"");
    }
    Ok(())
}

/// Writes every fetch to rotating WARC files.
struct WarcRecorder {
    writer: Mutex<WarcWriter>,
}

impl FetchRecorder for WarcRecorder {
    fn record(&self, url: &str, fetch_time: i64, resp: &FetchResponse) -> Option<(String, u64)> {
        let rec = resp.warc_record(url, fetch_time);
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        match w.write_fetch(&rec) {
            Ok(loc) => Some((loc.file, loc.offset)),
            Err(e) => {
                eprintln!("warning: writing WARC record for {url}: {e}");
                None
            }
        }
    }

    fn close(&self) {
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = w.close() {
            eprintln!("warning: closing WARC output: {e}");
        }
    }
}

/// Hands crawled pages to the pipeline's source channel (blocking: back-pressure).
struct ChannelSink {
    tx: Sender<Input>,
    counters: Arc<SourceCounters>,
    /// The store writer's [`PipelineSettings::source_waiting`].
    waiting: Arc<AtomicBool>,
}

impl PageSink for ChannelSink {
    fn send(&self, p: CrawledPage) -> bool {
        self.counters.pages_read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.counters.payload_bytes.fetch_add(p.page.body.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let input = Input { page: p.page, ticket: Some(p.entry) };
        tokio::task::block_in_place(|| self.tx.send(input).is_ok())
    }

    fn set_waiting(&self, waiting: bool) {
        self.waiting.store(waiting, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Raise the soft limit on open files to the hard limit (Unix), so that requests in flight
/// and idle connections fit under it (issue 37, item 3); returns (before, after), None where
/// it cannot be read.
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not everywhere
pub fn raise_nofile_limit() -> Option<(u64, u64)> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    let before = lim.rlim_cur as u64;
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return Some((before, raised.rlim_cur as u64));
        }
    }
    Some((before, before))
}

/// Not on this platform: nothing to raise.
#[cfg(not(unix))]
pub fn raise_nofile_limit() -> Option<(u64, u64)> {
    None
}

/// Run a crawl with detection inside it.
pub fn run(
    s: CrawlSettings,
    store: Arc<Store>,
    matcher: Matcher,
    stop: Arc<AtomicBool>,
) -> Result<CrawlSummary> {
    run_partition(s, store, matcher, stop, None)
}

/// Run a crawl, or with `router` one partition of a host-partitioned crawl
/// (`crate::report::merged`).
pub fn run_partition(
    s: CrawlSettings,
    store: Arc<Store>,
    mut matcher: Matcher,
    stop: Arc<AtomicBool>,
    router: Option<Arc<PartitionRouter>>,
) -> Result<CrawlSummary> {
    check_user_agent(&s.user_agent)?;
    match raise_nofile_limit() {
        Some((before, after)) if after < (s.crawl.max_in_flight as u64) * 2 + 256 => tracing::warn!(
            before,
            after,
            "the open-file limit is low for --max-in-flight {}: requests will wait for descriptors (raise `ulimit -n`)",
            s.crawl.max_in_flight
        ),
        Some((before, after)) => tracing::debug!(before, after, "open-file limit"),
        None => {}
    }
    let mut resolve = ResolveMap::default();
    for r in &s.resolve {
        resolve.add(r)?;
    }
    let fetch_cfg = FetchConfig {
        user_agent: s.user_agent.clone(),
        allow_private: s.allow_private,
        resolve: Arc::new(resolve),
        ..s.fetch.clone()
    };
    let fetcher = Fetcher::new(fetch_cfg)?;
    let policy = Arc::new(link_policy(&s, router.as_ref())?);
    let focused = focus_state(&s)?;
    let mut crawl_cfg = s.crawl.clone();
    if let Some(f) = &focused {
        crawl_cfg.ranker = Some(f.clone());
        crawl_cfg.focus_hosts = s.focus_opts.hosts.max(1);
        crawl_cfg.focus_rank_span = s.focus_opts.rank_span.clamp(0.0, 1.0);
    }
    matcher.links = Some(LinkSettings {
        policy: policy.clone(),
        focus: s.focus,
        store: store.clone(),
        focused: focused.clone(),
    });

    let recorder = warc_recorder(&s, &store)?;
    if recorder.is_none() {
        // No WARC: the store is the only copy of what the crawl saw.
        matcher.keep_text = true;
    }

    let counters = Arc::new(CrawlCounters::default());
    let _metrics = match s.metrics {
        Some(addr) => {
            let m =
                crate::crawl::metrics_http::MetricsServer::start(addr, counters.clone(), s.metrics_remote)?;
            eprintln!("metrics on http://{}/metrics", m.addr);
            Some(m)
        }
        None => None,
    };
    let waiting = Arc::new(AtomicBool::new(false));
    let settings = PipelineSettings {
        normalization: s.normalization,
        traps: s.traps,
        threads: s.threads,
        batch_size: 64,
        progress: ProgressMode::None,
        extract_links: true,
        progress_total_bytes: 0,
        durable_batches: true,
        max_batch_age: crate::pipeline::CRAWL_BATCH_AGE,
        source_waiting: Some(waiting.clone()),
    };
    let report_slot: Arc<Mutex<Option<CrawlReport>>> = Arc::new(Mutex::new(None));
    let progress = crate::crawl::progress::CrawlProgress::start(s.progress, counters.clone());
    let detection = {
        let (store2, rec2, counters2, slot, stop2) =
            (store.clone(), recorder.clone(), counters.clone(), report_slot.clone(), stop.clone());
        let seeds = s.seeds.clone();
        run_pipeline(&settings, store.clone(), matcher, move |tx, _skips, c| {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .context("starting the crawler's runtime")?;
            let sink: Arc<dyn PageSink> = Arc::new(ChannelSink { tx, counters: c, waiting });
            let io = CrawlIo { sink, recorder: rec2, counters: counters2, stop: stop2 };
            let report = rt.block_on(crawl(store2, fetcher, crawl_cfg, policy, seeds, io))?;
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
            rt.shutdown_timeout(Duration::from_secs(5));
            Ok(())
        })?
    };
    progress.finish();
    if let Some(f) = &focused {
        f.flush();
    }
    if let Some(r) = &recorder {
        r.close();
    }
    let warc_files = s.warc_dir.as_deref().map(files_in).unwrap_or_default();
    let crawl =
        report_slot.lock().unwrap_or_else(|e| e.into_inner()).take().context("the crawl did not report")?;
    // From the recorded counts: a full pass over every page record would grow with the store.
    let totals = store.totals_as_recorded()?;
    let harvest_rate = if crawl.pages > 0 { totals.labeled_chunks as f64 / crawl.pages as f64 } else { 0.0 };
    let exchange = router.map(|r| r.stats());
    Ok(CrawlSummary { crawl, detection, warc_files, harvest_rate, exchange })
}

/// Where the crawl may go: the seeds' scope widened or narrowed by host patterns, the trap
/// rules, the depth and link caps, and the partition's share of the hosts.
fn link_policy(s: &CrawlSettings, router: Option<&Arc<PartitionRouter>>) -> Result<LinkPolicy> {
    let mut seed_urls = Vec::new();
    for seed in &s.seeds {
        let mut url = canonical_url(seed).with_context(|| format!("seed {seed:?}"))?;
        if crawler::urls::strip_credentials(&mut url) {
            // The link policy removes them too (and counts them): they are never sent.
            tracing::warn!(seed = %url, "the seed's credentials (user:password@) are removed: a crawl never sends them");
        }
        seed_urls.push(url);
    }
    let mut scope = ScopeRules::new(s.scope).with_seeds(seed_urls.iter());
    let parse_patterns = |v: &[String]| -> Result<Vec<HostPattern>> {
        v.iter().map(|p| HostPattern::parse(p).with_context(|| format!("host pattern {p:?}"))).collect()
    };
    scope = scope.with_allowed(parse_patterns(&s.allow_hosts)?).with_blocked(parse_patterns(&s.block_hosts)?);
    let traps = TrapGuard::new(TrapLimits { rules: s.traps, ..TrapLimits::default() });
    let mut policy = LinkPolicy::new(scope, traps, s.crawl.max_depth);
    policy.max_links_per_page = s.crawl.max_links_per_page;
    policy.key_by_domain = s.crawl.servers.key == crawler::crawl::PolitenessKey::Domain;
    if let Some(r) = router {
        policy = policy.with_partition(r.clone());
    }
    Ok(policy)
}

/// The focused crawl's state (`--focus labeled`), with its log when one is asked for.
fn focus_state(s: &CrawlSettings) -> Result<Option<Arc<FocusState>>> {
    Ok(match s.focus {
        Focus::Bfs => None,
        Focus::Labeled => {
            let titles = TitleIndex::new(s.focus_opts.titles.iter().map(String::as_str));
            let mut state = FocusState::new(titles);
            if let Some(path) = &s.focus_opts.log {
                state = state
                    .with_log(path)
                    .with_context(|| format!("opening the focus log {}", path.display()))?;
            }
            Some(Arc::new(state))
        }
    })
}

/// The WARC writer of `--warc-dir`, if any; its directory is recorded in the store, since
/// evidence is read back from these files (`crate::source::text`).
fn warc_recorder(s: &CrawlSettings, store: &Store) -> Result<Option<Arc<dyn FetchRecorder>>> {
    let Some(dir) = &s.warc_dir else { return Ok(None) };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let abs = std::fs::canonicalize(dir).with_context(|| format!("resolving {}", dir.display()))?;
    store.set_meta(crate::source::text::WARC_DIR_META, &abs.to_string_lossy())?;
    let info = WarcInfo {
        software: format!("ditto/{}", env!("CARGO_PKG_VERSION")),
        user_agent: Some(s.user_agent.clone()),
        robots: Some("obey".into()),
        ..WarcInfo::default()
    };
    let w = WarcWriter::new(dir, "ditto", s.warc_max_bytes)
        .with_context(|| format!("opening WARC output in {}", dir.display()))?
        .with_info(info);
    Ok(Some(Arc::new(WarcRecorder { writer: Mutex::new(w) })))
}

/// The files of `dir`, sorted (none if it cannot be read).
fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut files: Vec<String> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.flatten().map(|e| e.path().display().to_string()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}
