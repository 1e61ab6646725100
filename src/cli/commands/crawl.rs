//! `ditto crawl`.

use std::sync::Arc;

use anyhow::{bail, Result};

use crate::cli::exit;
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
    eprintln!("{}", a.bounds_line());
    let store =
        labelset::open_store_for_writing(&a.store, a.labelset()?, &mut loaded, store::CRAWL_CACHE_BYTES)?;
    store.set_frontier_cap(a.max_queued)?;
    // `ditto report`/`stats`/`labels export` read consistent snapshots of it meanwhile.
    store.serve_snapshots()?;
    if settings.seeds.is_empty() && a.partition.is_none() && store.frontier_counts()? == (0, 0) {
        bail!("no seeds: give --seeds FILE or --seed URL (or resume a store with a frontier)");
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // SIGINT: stop scheduling, let fetches in flight finish and be stored, exit 130; a second
    // ^C exits at once (the next run resumes either way).
    let _ = exit::on_interrupt(exit::OnInterrupt::Flag {
        flag: stop.clone(),
        first: "finishing fetches in flight (^C again to quit now; the next run resumes)",
        resume: RESUME,
    });
    let grace = std::time::Duration::from_millis(a.exchange_grace_ms);
    let router = match (a.partition, &a.exchange_dir, &a.coordinator) {
        (Some(p), Some(dir), None) => Some(crate::crawl::partition::file_router(dir, p, grace)?),
        (Some(p), None, Some(url)) => Some(crate::crawl::partition::redis_router(url, p, grace)?),
        (Some(_), _, _) => bail!("--partition needs --coordinator redis://… or --exchange-dir DIR"),
        _ => None,
    };
    loaded.matcher.origins = a.origins.map(|m| Arc::new(crate::live::origins::LiveOrigins::new(m)));
    loaded.matcher.keep_text = a.keep_text;
    loaded.set_match_mode(a.match_mode);
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
        crate::analysis::write_json_file(path, &summary)?;
    }
    outcome(c)
}

/// How to resume an interrupted crawl.
const RESUME: &str = "run the same command again to resume (the frontier is in the store)";

/// The crawl's exit: interrupted (130) after ^C; finished with failures (3) when nothing
/// could be fetched and fetches failed (every seed unreachable, refused or parked). URLs
/// refused for their address get a hint either way.
fn outcome(c: &crawler::crawl::CrawlReport) -> Result<()> {
    if c.stopped_by == "signal" {
        return Err(exit::Outcome::Interrupted(RESUME.into()).into());
    }
    let refused = c.events.get("error_refused_address").copied().unwrap_or(0);
    if refused > 0 {
        eprintln!(
            "note: {refused} URLs were not fetched because their address is private, loopback or \
             link-local; --allow-private (or --resolve HOST=ADDR:PORT) allows them, and the next run \
             of this store retries them"
        );
    }
    let failed: u64 = c
        .events
        .iter()
        .filter(|(k, _)| {
            k.starts_with("error_")
                || ["robots_refused_address", "robots_unavailable_disallow_all", "host_parked"]
                    .contains(&k.as_str())
        })
        .map(|(_, v)| v)
        .sum();
    if c.pages == 0 && failed > 0 {
        return Err(exit::Outcome::Partial(format!(
            "no page could be fetched ({failed} failures, see events above)"
        ))
        .into());
    }
    Ok(())
}
