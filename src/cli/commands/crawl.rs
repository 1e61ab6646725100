//! `ditto crawl`.

use std::sync::Arc;

use anyhow::{bail, Result};

use crate::cli::flags::crawl::CrawlArgs;
use crate::labelset;
use crate::report::summary;

pub fn run(a: &CrawlArgs) -> Result<()> {
    if let Some(url) = &a.explain_priority {
        let log = crate::pipeline::focus::log_path_for(&a.store);
        print!("{}", crate::pipeline::focus::explain(&log, url)?);
        return Ok(());
    }
    // Checked before the store is created, and again by the engine for other callers.
    crate::crawl::check_user_agent(a.user_agent()?)?;
    let seeds = a.seed_urls()?;
    let mut loaded = labelset::load_for_scan(a.labelset()?, None, &[], true)?;
    let settings = a.to_settings(seeds, loaded.normalization)?;
    let store = labelset::open_store_for_writing(&a.store, a.labelset()?, &mut loaded)?;
    // `ditto report`/`stats`/`labels export` read consistent snapshots of it meanwhile.
    store.serve_snapshots()?;
    if settings.seeds.is_empty() && a.partition.is_none() && store.frontier_counts()? == (0, 0) {
        bail!("no seeds: give --seeds FILE or --seed URL (or resume a store with a frontier)");
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let stop = stop.clone();
        let _ = ctrlc_flag(stop);
    }
    let grace = std::time::Duration::from_millis(a.exchange_grace_ms);
    let router = match (a.partition, &a.exchange_dir, &a.coordinator) {
        (Some(p), Some(dir), None) => Some(crate::crawl::partition::file_router(dir, p, grace)?),
        (Some(p), None, Some(url)) => Some(crate::crawl::partition::redis_router(url, p, grace)?),
        (Some(_), _, _) => bail!("--partition needs --coordinator redis://… or --exchange-dir DIR"),
        _ => None,
    };
    loaded.matcher.origins = a.origins.map(|m| Arc::new(crate::live::origins::LiveOrigins::new(m)));
    loaded.matcher.keep_text = a.keep_text;
    let summary = crate::crawl::run_partition(settings, store.clone(), loaded.matcher, stop, router)?;
    let c = &summary.crawl;
    eprintln!(
        "crawl stopped ({}): {} pages, {} requests ({} robots.txt) in {:.1}s; harvest rate {:.2} labeled chunks/page",
        c.stopped_by, c.pages, c.requests, c.robots_fetches, c.seconds, summary.harvest_rate
    );
    if !c.events.is_empty() {
        let ev: Vec<String> = c.events.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!("events: {}", ev.join(", "));
    }
    if !c.links_rejected.is_empty() {
        let ev: Vec<String> = c.links_rejected.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!("links not followed: {}", ev.join(", "));
    }
    if let Some(x) = &summary.exchange {
        let ev: Vec<String> = x.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!("link exchange: {}", ev.join(", "));
    }
    summary::print_scan(&summary.detection, &store)?;
    if let Some(path) = &a.stats_json {
        super::write_json(path, &summary)?;
    }
    Ok(())
}

/// SIGINT sets `stop`: the crawl stops scheduling, lets fetches in flight finish and be
/// stored, and exits; a second SIGINT exits at once (the next run resumes either way).
fn ctrlc_flag(stop: Arc<std::sync::atomic::AtomicBool>) -> std::io::Result<()> {
    std::thread::Builder::new().name("sigint".into()).spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        rt.block_on(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!(
                    "stopping: finishing fetches in flight (^C again to quit now; the next run resumes)"
                );
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        });
    })?;
    Ok(())
}
