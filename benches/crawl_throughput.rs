//! Crawl throughput on loopback over many virtual hosts with per-host politeness on, with
//! detection inside the crawl (the full `ditto crawl` path: fetch → pipeline → store).
//!
//! `cargo bench --bench crawl_throughput` (env: HOSTS, PAGES, DELAY_MS, THREADS)
//! Prints pages/s, peak memory, and politeness violations measured from the test web's own
//! arrival timestamps (gaps between two requests to one host shorter than the delay).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawler::crawl::CrawlConfig;
use crawler::fetch::FetchConfig;
use crawler::politeness::PolitenessConfig;
use crawler::urls::Scope;
use detector::TrapRules;
use ditto::crawl::{run, CrawlSettings};
use ditto::pipeline::progress::ProgressMode;
use ditto::pipeline::stages::Focus;
use labelsets::{Kind, LabelSetBuilder};
use store::Store;
use testweb::{many_hosts_seeds, many_hosts_web, TestWeb};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let hosts = env_or("HOSTS", 500);
    let pages = env_or("PAGES", 20);
    let delay_ms = env_or("DELAY_MS", 250) as u64;
    let threads = env_or("THREADS", 2);
    let tmp = tempfile::tempdir().unwrap();

    // A label set from the shared Wikipedia articles (the usual detection work per page).
    let ls_path = tmp.path().join("w.dls");
    let mut b = LabelSetBuilder::new("wikipedia", Kind::Chunks, Default::default(), 100, "bench");
    let articles = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/wikipedia/articles");
    labelsets::readers::read_directory(&articles, Some("https://en.wikipedia.org/wiki/"), &mut b).unwrap();
    b.write(&ls_path).unwrap();

    let web = TestWeb::start_blocking(many_hosts_web(hosts, pages)).unwrap();
    let loaded = ditto::labelset::load_for_scan(&ls_path, None, &[], true).unwrap();
    let store = Arc::new(Store::open(&tmp.path().join("crawl.db")).unwrap());
    let settings = CrawlSettings {
        seeds: many_hosts_seeds(hosts),
        user_agent: "ditto-bench/0.1 (+http://localhost/bench)".into(),
        focus: Focus::Bfs,
        scope: Scope::Any,
        allow_hosts: vec![],
        block_hosts: vec![],
        resolve: vec![format!("*.bench.test={}", web.addr)],
        allow_private: false,
        warc_dir: None,
        warc_max_bytes: 1 << 30,
        crawl: CrawlConfig {
            polite: PolitenessConfig {
                min_delay: Duration::from_millis(delay_ms),
                delay_factor: 0.0,
                ..PolitenessConfig::default()
            },
            max_in_flight: 256,
            idle_grace: Duration::from_secs(10),
            ..CrawlConfig::default()
        },
        fetch: FetchConfig::default(),
        traps: TrapRules::default(),
        threads,
        progress: ProgressMode::None,
        normalization: loaded.normalization,
        metrics: None,
        metrics_remote: false,
        focus_opts: Default::default(),
    };
    let start = Instant::now();
    let summary = run(settings, store.clone(), loaded.matcher, Arc::new(AtomicBool::new(false))).unwrap();
    let secs = start.elapsed().as_secs_f64();
    let violations = web.log.total_gaps_below(Duration::from_millis(delay_ms));
    let max_in_flight = web.log.hosts().iter().map(|h| web.log.max_in_flight(h)).max().unwrap_or(0);
    let (seen_bytes, seen_urls) = store.seen_memory();
    let c = &summary.crawl;
    println!("crawl_throughput: {hosts} hosts × {} pages, per-host delay {delay_ms} ms, {threads} detection threads", pages + 1);
    println!("  pages fetched       {}", c.pages);
    println!("  requests            {} ({} robots.txt)", c.requests, c.robots_fetches);
    println!("  wall                {secs:.2} s");
    println!(
        "  throughput          {:.0} pages/s, {:.0} requests/s",
        c.pages as f64 / secs,
        c.requests as f64 / secs
    );
    println!("  stored pages        {}", summary.detection.pages_written);
    println!(
        "  peak RSS (VmHWM)    {:.1} MiB (process: crawler + detection + test web)",
        vm_hwm_kib() as f64 / 1024.0
    );
    println!(
        "  seen set            {seen_urls} URLs in {seen_bytes} heap bytes ({:.1} B/URL)",
        seen_bytes as f64 / seen_urls.max(1) as f64
    );
    println!(
        "  politeness          {violations} gaps below {delay_ms} ms; max in flight per host {max_in_flight}"
    );
    println!("  store on disk       {:.1} MB", store.size_on_disk().unwrap_or(0) as f64 / 1e6);
}
