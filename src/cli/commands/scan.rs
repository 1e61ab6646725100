//! `ditto scan`.

use std::sync::Arc;

use anyhow::Result;

use crate::cli::exit;
use crate::cli::flags::scan::ScanArgs;
use crate::labelset;
use crate::pipeline;
use crate::report::summary;

pub fn run(a: &ScanArgs) -> Result<()> {
    // A scan's store is consistent at any moment: ^C exits at once, and the same command
    // skips what is stored and goes on.
    let _ = exit::on_interrupt(exit::OnInterrupt::ExitNow {
        resume: "run the same command again to resume (pages already stored are skipped)",
    });
    let mut loaded = match &a.labelset {
        Some(ls) => labelset::load_for_scan(
            ls,
            a.file_labelset.as_deref(),
            &a.stop_chunks,
            !a.no_default_stop_chunks,
        )?,
        None => labelset::load_without_labelset(&a.stop_chunks, !a.no_default_stop_chunks)?,
    };
    loaded.set_match_mode(a.match_mode);
    let cfg = a.to_config(loaded.normalization)?;
    let store = match &a.labelset {
        Some(ls) => labelset::open_store_for_writing(&a.store, ls, &mut loaded, store::DEFAULT_CACHE_BYTES)?,
        None => labelset::open_store_without_labelset(&a.store, &mut loaded)?,
    };
    // `ditto report`/`stats`/`labels export` read consistent snapshots of it meanwhile.
    store.serve_snapshots()?;
    let part = a.partition.unwrap_or(crawler::partition::Partition::SINGLE);
    loaded.matcher.origins = a.origins.map(|m| Arc::new(crate::live::origins::LiveOrigins::new(m)));
    loaded.matcher.keep_text = a.keep_text;
    let stats = pipeline::run_scan_partition(&cfg, store.clone(), loaded.matcher, part)?;
    summary::print_scan(&stats, &store)?;
    if a.labelset.is_none() {
        eprintln!(
            "no label set: nothing labeled, so `report` and `review` will not judge this store (scan into a \
             new store with --labelset FILE.dls for them); {} work on it",
            labelset::WITHOUT_LABELSET
        );
    }
    if let Some(path) = &a.stats_json {
        crate::analysis::write_json_file(path, &stats)?;
    }
    if stats.errors > 0 {
        return Err(exit::Outcome::Partial(format!(
            "{} read errors (listed above): what could be read is stored; the rest was skipped",
            stats.errors
        ))
        .into());
    }
    Ok(())
}
