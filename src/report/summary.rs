//! Human summaries: the end of a scan and `ditto stats`.

use anyhow::Result;
use detector::MeanStd;
use serde::Serialize;
use store::Store;

use crate::pipeline::ScanStats;

/// What `ditto stats` prints.
#[derive(Debug, Serialize)]
pub struct StoreSummary {
    pub pages: u64,
    pub chunks: u64,
    pub labeled_chunks: u64,
    pub pages_with_labeled_chunks: u64,
    pub neighborhoods: u64,
    pub page_contains_mean: f64,
    pub page_contains_sd: f64,
    pub page_threshold: f64,
    pub pages_above_threshold: u64,
    pub neighborhood_badness_mean: f64,
    pub neighborhood_badness_sd: f64,
    pub neighborhood_threshold: f64,
    pub neighborhoods_above_threshold: u64,
    pub labelset: Option<store::LabelSetIdentity>,
    pub size_on_disk_bytes: u64,
    /// The highest few neighborhoods with any badness (name, badness), best first: named
    /// when none is above the threshold, so a crawl or scan that flags nothing shows where
    /// the nearest sit.
    #[serde(skip)]
    pub highest_neighborhoods: Vec<(String, f64)>,
}

impl StoreSummary {
    /// A line for when no neighborhood is above the threshold but some have badness.
    pub fn nothing_above_hint(&self) -> Option<String> {
        hint_when_none_above(
            self.neighborhoods_above_threshold,
            self.neighborhood_threshold,
            &self.highest_neighborhoods,
        )
    }
}

pub fn store_summary(store: &Store) -> Result<StoreSummary> {
    // One pass over the pages' counts and one over the neighborhoods.
    let mut t = store::StoreTotals::default();
    let mut pages = MeanStd::default();
    let mut contains = Vec::new();
    for p in store.page_counts() {
        let p = p?;
        t.add_page(&p);
        pages.push(p.contains);
        contains.push(p.contains);
    }
    let hoods = HoodStats::of(store)?;
    t.neighborhoods = hoods.count;
    let pt = pages.mean_plus_std();
    Ok(StoreSummary {
        pages: t.pages,
        chunks: t.chunks,
        labeled_chunks: t.labeled_chunks,
        pages_with_labeled_chunks: t.pages_with_labeled_chunks,
        neighborhoods: t.neighborhoods,
        page_contains_mean: pages.mean(),
        page_contains_sd: pages.std_dev(),
        page_threshold: pt,
        pages_above_threshold: contains.iter().filter(|&&c| c > pt).count() as u64,
        neighborhood_badness_mean: hoods.badness.mean(),
        neighborhood_badness_sd: hoods.badness.std_dev(),
        neighborhood_threshold: hoods.threshold,
        neighborhoods_above_threshold: hoods.above,
        labelset: store.label_set()?,
        size_on_disk_bytes: store.size_on_disk()?,
        highest_neighborhoods: hoods.highest,
    })
}

/// The neighborhoods' badness: one pass over them (there are far fewer than pages).
struct HoodStats {
    count: u64,
    badness: MeanStd,
    /// Mean + one standard deviation.
    threshold: f64,
    above: u64,
    /// The highest few with any badness, best first.
    highest: Vec<(String, f64)>,
}

impl HoodStats {
    fn of(store: &Store) -> Result<HoodStats> {
        let (mut count, mut stats, mut all, mut highest) = (0, MeanStd::default(), Vec::new(), Vec::new());
        for n in store.neighborhoods() {
            let (name, acc) = n?;
            count += 1;
            let b = acc.badness();
            stats.push(b);
            all.push(b);
            if b > 0.0 {
                crate::report::keep_nearest(&mut highest, &name, b);
            }
        }
        let threshold = stats.mean_plus_std();
        let above = all.iter().filter(|&&b| b > threshold).count() as u64;
        Ok(HoodStats { count, badness: stats, threshold, above, highest })
    }

    /// A line for when no neighborhood is above the threshold but some have badness.
    fn nothing_above_hint(&self) -> Option<String> {
        hint_when_none_above(self.above, self.threshold, &self.highest)
    }
}

/// "nothing is above the threshold …" naming the highest below it, when none is above.
fn hint_when_none_above(above: u64, threshold: f64, highest: &[(String, f64)]) -> Option<String> {
    if above > 0 {
        return None;
    }
    crate::report::nearest_below_hint(threshold, highest).map(|h| format!("{h} with ditto report"))
}

pub fn print_store(store: &Store, json: bool) -> Result<()> {
    let s = store_summary(store)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(());
    }
    if let Some(l) = s.labelset.as_ref().filter(|l| l.is_none()) {
        println!(
            "label set:      none (scanned without --labelset, normalization {}): {} work on this store, \
             report and review need a label set",
            l.normalization,
            crate::labelset::WITHOUT_LABELSET
        );
    } else if let Some(l) = &s.labelset {
        println!(
            "label set:      {} ({} entries, normalization {}, chunks > {} chars)",
            l.name, l.entries, l.normalization, l.min_chars
        );
    }
    println!("pages:          {} ({} with labeled chunks)", s.pages, s.pages_with_labeled_chunks);
    println!("chunks:         {} ({} labeled)", s.chunks, s.labeled_chunks);
    println!(
        "page contains:  mean {:.4}, sd {:.4}, threshold {:.4}: {} pages above",
        s.page_contains_mean, s.page_contains_sd, s.page_threshold, s.pages_above_threshold
    );
    println!("neighborhoods:  {}", s.neighborhoods);
    println!(
        "badness:        mean {:.4}, sd {:.4}, threshold {:.4}: {} neighborhoods above",
        s.neighborhood_badness_mean,
        s.neighborhood_badness_sd,
        s.neighborhood_threshold,
        s.neighborhoods_above_threshold
    );
    println!("store size:     {:.1} MB", s.size_on_disk_bytes as f64 / 1e6);
    if let Some(hint) = s.nothing_above_hint() {
        println!("hint:           {hint}");
    }
    Ok(())
}

pub fn print_scan(st: &ScanStats, store: &Store) -> Result<()> {
    eprintln!(
        "scanned {} pages ({:.1} MB payload) in {:.2}s: {:.1} MB/s; {} new pages stored",
        st.pages_read,
        st.payload_bytes as f64 / 1e6,
        st.seconds,
        st.payload_bytes as f64 / 1e6 / st.seconds.max(1e-9),
        st.pages_written
    );
    if !st.skipped.is_empty() {
        let parts: Vec<String> = st.skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!("skipped: {}", parts.join(", "));
    }
    let r = &st.remote;
    if r.files_read + r.files_finished_before + r.files_failed > 0 {
        eprintln!(
            "remote files: {} read, {} passed over (finished by an earlier run), {} failed{}; {} transfers resumed, {} retries",
            r.files_read,
            r.files_finished_before,
            r.files_failed,
            if r.files_failed > 0 { " (run the same command again to retry them)" } else { "" },
            r.resumes,
            r.retries
        );
    }
    if st.errors > 0 {
        eprintln!("{} read errors, e.g.:", st.errors);
        for e in st.error_samples.iter().take(5) {
            eprintln!("  {e}");
        }
    }
    for s in &st.stages {
        eprintln!(
            "  stage {:<12} workers {:>2}  in {:>8}  out {:>8}  busy {:>7.2}s  cpu {:>7.2}s",
            s.stage, s.workers, s.items_in, s.items_out, s.busy_seconds, s.cpu_seconds
        );
    }
    // The pages' totals from the store's recorded counts (a pass over every page record
    // would grow with the store: a store made before they were kept gets that pass), the
    // neighborhoods' badness from a pass over them.
    let t = store.totals_as_recorded()?;
    let h = HoodStats::of(store)?;
    eprintln!(
        "store: {} pages, {} chunks, {} labeled; {} of {} neighborhoods above badness threshold {:.4} (mean {:.4} + sd {:.4})",
        t.pages,
        t.chunks,
        t.labeled_chunks,
        h.above,
        h.count,
        h.threshold,
        h.badness.mean(),
        h.badness.std_dev()
    );
    if let Some(hint) = h.nothing_above_hint() {
        eprintln!("{hint}");
    }
    let reviewed = store.reviewed_stop_chunks().count();
    if reviewed > 0 {
        eprintln!(
            "stop chunks: {reviewed} reviewed stop chunks from the store (ditto review) left out of matching, \
             besides the stop lists given"
        );
    }
    Ok(())
}
