//! `ditto demo`: with no arguments and no network, start the built-in web on loopback (see
//! `testweb::demo`), build the label set from the bundled Wikipedia sample, crawl the web
//! politely with detection inside the crawl, and print what was found.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crawler::crawl::{CrawlConfig, CrawlEvent};
use crawler::fetch::FetchConfig;
use crawler::politeness::PolitenessConfig;
use crawler::urls::Scope;
use detector::{Normalization, TrapRules};
use labelsets::{Kind, LabelSetBuilder};

use crate::crawl::{run, CrawlSettings, CrawlSummary};
use crate::pipeline::progress::ProgressMode;
use crate::pipeline::stages::Focus;
use crate::report::{self, Format, Level, ReportConfig, ThresholdChoice};
use testweb::TestWeb;
use testweb::{demo_articles, demo_seeds, demo_web, DEMO_SUFFIX};

/// What the demo found, for its printout and its test.
pub struct DemoOutcome {
    pub out_dir: PathBuf,
    pub summary: CrawlSummary,
    pub flagged: Vec<report::ReportRow>,
    pub threshold: report::ThresholdInfo,
    pub requests: usize,
    pub min_gap_ms: Option<u128>,
}

/// Serve the demo web on `addr` until ^C (for crawling it by hand), after writing its label
/// set to `out_dir/wikipedia-demo.dls`.
pub fn serve_demo(out_dir: &Path, addr: std::net::SocketAddr) -> Result<()> {
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let labelset = out_dir.join("wikipedia-demo.dls");
    build_labelset(&labelset)?;
    let web = TestWeb::start_blocking_on(demo_web(), addr).with_context(|| format!("serving on {addr}"))?;
    println!("demo web on http://{} — label set {}", web.addr, labelset.display());
    println!(
        "crawl it: ditto crawl --store demo.db --labelset {} --resolve '*.{DEMO_SUFFIX}={}' --seed http://wiki.demo.test/ --seed http://blog.demo.test/ --min-delay-ms 20 --user-agent 'ditto/0.1 (+https://example.org/bot)'",
        labelset.display(),
        web.addr
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(tokio::signal::ctrl_c())?;
    Ok(())
}

/// Build the demo label set from the bundled articles.
fn build_labelset(path: &Path) -> Result<()> {
    let mut b = LabelSetBuilder::new(
        "wikipedia-demo",
        Kind::Chunks,
        Normalization::default(),
        100,
        "ditto demo: 10 bundled English Wikipedia articles (CC BY-SA, see demo/wikipedia/ATTRIBUTION.md)",
    );
    for (title, html) in demo_articles() {
        let url = format!("https://en.wikipedia.org/wiki/{}", title.replace(' ', "_"));
        let id = b.add_source(title, &url);
        b.add_document(id, html.as_bytes(), Some("text/html; charset=utf-8"))?;
    }
    b.write(path)?;
    Ok(())
}

/// Run the demo into `out_dir` (created; an earlier demo's output there is replaced).
pub fn run_demo(out_dir: &Path, quiet: bool) -> Result<DemoOutcome> {
    let start = Instant::now();
    if out_dir.exists() {
        for name in ["crawl.db", "warcs", "wikipedia-demo.dls", "report.jsonl"] {
            let p = out_dir.join(name);
            if p.is_dir() {
                std::fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
            } else if p.exists() {
                std::fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
            }
        }
    }
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let web = TestWeb::start_blocking(demo_web()).context("starting the demo web on loopback")?;
    let say = |s: String| {
        if !quiet {
            eprintln!("{s}");
        }
    };
    say(format!("demo web on http://{} (hosts *.{DEMO_SUFFIX}, loopback only)", web.addr));

    let labelset = out_dir.join("wikipedia-demo.dls");
    build_labelset(&labelset)?;
    let mut loaded = crate::labelset::load_for_scan(&labelset, None, &[], true)?;
    let store = crate::labelset::open_store_for_writing(
        &out_dir.join("crawl.db"),
        &labelset,
        &mut loaded,
        store::CRAWL_CACHE_BYTES,
    )?;

    let settings = CrawlSettings {
        seeds: demo_seeds(),
        user_agent: format!("ditto/{} (demo; +http://wiki.demo.test/about-ditto)", env!("CARGO_PKG_VERSION")),
        focus: Focus::Labeled,
        scope: Scope::SameDomain,
        allow_hosts: vec![],
        block_hosts: vec![],
        resolve: vec![format!("*.{DEMO_SUFFIX}={}", web.addr)],
        allow_private: false,
        warc_dir: Some(out_dir.join("warcs")),
        warc_max_bytes: 64 << 20,
        crawl: CrawlConfig {
            // Short delays: it is loopback. Still one request per host at a time.
            polite: PolitenessConfig {
                min_delay: Duration::from_millis(20),
                backoff_base: Duration::from_millis(500),
                ..PolitenessConfig::default()
            },
            max_pages: 400,
            per_host_max_pages: 100,
            max_depth: 8,
            idle_grace: Duration::from_secs(10),
            ..CrawlConfig::default()
        },
        fetch: FetchConfig { total_timeout: Duration::from_secs(10), ..FetchConfig::default() },
        traps: TrapRules::default(),
        threads: 2,
        progress: if quiet { ProgressMode::None } else { ProgressMode::Auto },
        normalization: loaded.normalization,
        metrics: None,
        metrics_remote: false,
        focus_opts: crate::crawl::FocusOptions {
            titles: crate::labelset::source_titles(&labelset)?,
            log: Some(crate::pipeline::focus::log_path_for(&out_dir.join("crawl.db"))),
            ..Default::default()
        },
    };
    let summary = run(settings, store.clone(), loaded.matcher, Arc::new(AtomicBool::new(false)))?;

    let names = crate::labelset::source_names(&store, Some(&labelset));
    let cfg = ReportConfig {
        level: Level::Neighborhood,
        threshold: ThresholdChoice::MeanPlusStd,
        limit: None,
        min_pages: 1,
        evidence: 2,
        sources: 5,
    };
    let (threshold, flagged) = report::build(&store, names.as_ref(), &cfg)?;
    let mut f = std::fs::File::create(out_dir.join("report.jsonl"))?;
    report::write(&mut f, Format::Jsonl, &threshold, &flagged)?;
    let requests = web.log.count();
    // Politeness as the server saw it: the smallest gap between two requests to one host.
    let min_gap_ms = web.log.hosts().iter().filter_map(|h| web.log.min_gap(h)).min().map(|d| d.as_millis());
    if !quiet {
        print_outcome(min_gap_ms, out_dir, &summary, &threshold, &flagged, start.elapsed());
    }
    drop(web);
    Ok(DemoOutcome { out_dir: out_dir.to_path_buf(), summary, flagged, threshold, requests, min_gap_ms })
}

fn print_outcome(
    min_gap_ms: Option<u128>,
    out_dir: &Path,
    s: &CrawlSummary,
    th: &report::ThresholdInfo,
    flagged: &[report::ReportRow],
    elapsed: Duration,
) {
    let c = &s.crawl;
    println!();
    println!(
        "ditto demo: crawled {} pages ({} requests, {} robots.txt) in {:.1}s",
        c.pages,
        c.requests,
        c.robots_fetches,
        elapsed.as_secs_f64()
    );
    println!();
    println!(
        "Bad neighborhoods (badness above {:.3} = mean {:.3} + sd {:.3} over {} neighborhoods):",
        th.value, th.mean, th.sd, th.population
    );
    for r in flagged {
        let sources: Vec<String> = r
            .sources
            .iter()
            .take(4)
            .map(|s| format!("{} ({})", s.title.as_deref().unwrap_or("?"), s.chunks))
            .collect();
        let note =
            if r.neighborhood.contains("wiki.demo.test") { "  [the labeled source itself]" } else { "" };
        println!(
            "  {:.3}  {:<38} {:>3} pages  {}{note}",
            r.badness,
            r.neighborhood,
            r.pages,
            sources.join(", ")
        );
    }
    if let Some(e) =
        flagged.iter().find(|r| !r.neighborhood.contains("wiki.demo.test")).and_then(|r| r.evidence.first())
    {
        println!();
        println!("Evidence, e.g. {}:", e.url);
        println!("  \"{}\"", e.passage);
        println!(
            "  = {} ({})",
            e.source_title.as_deref().unwrap_or("?"),
            e.source_url.as_deref().unwrap_or("?")
        );
    }
    println!();
    let traps: Vec<String> = c
        .links_rejected
        .iter()
        .filter(|(k, _)| !k.starts_with("not_"))
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!(
        "Traps avoided (links not followed): {}",
        if traps.is_empty() { "none".into() } else { traps.join(", ") }
    );
    println!(
        "Politeness: robots.txt disallowed {} URLs; backoffs honored: {} with Retry-After, {} exponential; 429 answers {}",
        c.event(CrawlEvent::RobotsDisallowed),
        c.event(CrawlEvent::BackoffRetryAfter),
        c.event(CrawlEvent::BackoffExponential),
        c.event(CrawlEvent::HttpStatus(429))
    );
    println!("Harvest rate: {:.2} labeled chunks per page fetched", s.harvest_rate);
    if let Some(gap) = min_gap_ms {
        println!("Smallest gap between two requests to one host, as the demo web saw it: {gap} ms");
    }
    println!();
    println!("WARC files:  {}", out_dir.join("warcs").display());
    println!("Report:      {}", out_dir.join("report.jsonl").display());
    println!(
        "Store:       {}  (try: ditto report --store {} --format table)",
        out_dir.join("crawl.db").display(),
        out_dir.join("crawl.db").display()
    );
}
