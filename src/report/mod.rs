//! `ditto report`: suspicious neighborhoods (or pages) above the threshold, sorted by
//! badness, each with its top sources and copied passages — evidence a person can check.
//! The JSON Lines schema is documented in docs/report-schema.md; field names are stable.

pub mod merged;
pub mod output;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod rows;
pub mod summary;

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;
use detector::MeanStd;
use store::labels::LabelIndex;
use store::{PageRecord, Store};

pub use rows::{EvidenceRow, ReportRow, SourceRef, ThresholdInfo};

/// Resolves a label-set source id to its title and URL.
pub trait SourceNames {
    fn name(&self, id: u32) -> Option<(String, String)>;

    /// The passage of source `id` that the page passage `passage` was copied from, when the
    /// sources' text is at hand (`ditto report --source-pages`; a label set keeps none).
    fn source_passage(&self, _id: u32, _passage: &str) -> Option<String> {
        None
    }
}

/// Source names with the sources' text read from the pages a label set was built from.
pub struct WithSourcePages {
    pub names: Box<dyn SourceNames>,
    pub texts: crate::source::labeled::SourceTexts,
}

impl SourceNames for WithSourcePages {
    fn name(&self, id: u32) -> Option<(String, String)> {
        self.names.name(id)
    }
    fn source_passage(&self, id: u32, passage: &str) -> Option<String> {
        let (_, url) = self.names.name(id)?;
        let blocks = self.texts.blocks(&url).ok()?;
        crate::source::labeled::source_passage(passage, &blocks)
    }
}

/// No label set at hand: sources are shown by id.
pub struct NoSourceNames;
impl SourceNames for NoSourceNames {
    fn name(&self, _: u32) -> Option<(String, String)> {
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Level {
    Neighborhood,
    Page,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    Jsonl,
    Csv,
    Table,
    /// Needs `-o FILE` and ditto built with `--features parquet`.
    Parquet,
}

/// How the threshold is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThresholdChoice {
    /// μ + σ over the population (the paper's default, §3.1 and §6.3).
    MeanPlusStd,
    Fixed(f64),
}

impl std::str::FromStr for ThresholdChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" | "mean+sd" | "mean+std" => Ok(ThresholdChoice::MeanPlusStd),
            x => x
                .parse::<f64>()
                .ok()
                .filter(|v| (0.0..=1.0).contains(v))
                .map(ThresholdChoice::Fixed)
                .ok_or_else(|| format!("threshold must be `auto` or a number in [0, 1], not {x:?}")),
        }
    }
}

pub struct ReportConfig {
    pub level: Level,
    pub threshold: ThresholdChoice,
    pub limit: Option<usize>,
    /// Leave out neighborhoods with fewer pages.
    pub min_pages: u64,
    pub evidence: usize,
    pub sources: usize,
}

/// Which neighborhoods a report shows, given the review labels in the store
/// (`ditto review`). A label covers the neighborhoods under it (see `store::labels`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReviewFilter {
    /// Leave out neighborhoods labeled `false-positive` or `legitimate-mirror`.
    #[default]
    HideDismissed,
    /// Only neighborhoods nobody has labeled yet.
    Unreviewed,
    /// Everything above the threshold, labeled or not.
    All,
}

impl ReviewFilter {
    fn keeps(self, labels: &LabelIndex, neighborhood: &str) -> bool {
        match self {
            ReviewFilter::All => true,
            ReviewFilter::HideDismissed => {
                labels.effective(neighborhood).is_none_or(|l| !l.label.dismisses())
            }
            ReviewFilter::Unreviewed => labels.effective(neighborhood).is_none(),
        }
    }
}

/// Compute the report rows (leaving out neighborhoods reviewers dismissed).
pub fn build(
    store: &Store,
    names: &dyn SourceNames,
    cfg: &ReportConfig,
) -> Result<(ThresholdInfo, Vec<ReportRow>)> {
    build_reviewed(store, names, cfg, ReviewFilter::default())
}

/// Compute the report rows with a choice of reviewed neighborhoods. The threshold is still
/// computed over every neighborhood: labels change what is shown, not how it is judged.
pub fn build_reviewed(
    store: &Store,
    names: &dyn SourceNames,
    cfg: &ReportConfig,
    filter: ReviewFilter,
) -> Result<(ThresholdInfo, Vec<ReportRow>)> {
    build_merged(&[store], names, cfg, filter)
}

/// A report over several stores as if they were one (`ditto report --store A --store B`,
/// partitioned crawls and scans): thresholds over the union, equal verdicts
/// (`crate::report::merged`).
pub fn build_merged(
    stores: &[&Store],
    names: &dyn SourceNames,
    cfg: &ReportConfig,
    filter: ReviewFilter,
) -> Result<(ThresholdInfo, Vec<ReportRow>)> {
    crate::report::merged::check_same_label_set(stores)?;
    let labels = if filter == ReviewFilter::All {
        LabelIndex::default()
    } else {
        crate::report::merged::label_index(stores)?
    };
    match cfg.level {
        Level::Neighborhood => neighborhoods(stores, names, cfg, &labels, filter),
        Level::Page => pages(stores, names, cfg, &labels, filter),
    }
}

fn threshold_info(stats: &MeanStd, choice: ThresholdChoice) -> ThresholdInfo {
    let (kind, value) = match choice {
        ThresholdChoice::MeanPlusStd => ("mean+sd", stats.mean_plus_std()),
        ThresholdChoice::Fixed(v) => ("fixed", v),
    };
    ThresholdInfo {
        kind,
        value,
        mean: stats.mean(),
        sd: stats.std_dev(),
        population: stats.count,
        ..Default::default()
    }
}

/// How many of the highest below the threshold a report names when it lists few.
const NEAREST_BELOW: usize = 3;

/// Keep `(name, badness)` among the [`NEAREST_BELOW`] highest in `best` (sorted, best first).
pub(crate) fn keep_nearest(best: &mut Vec<(String, f64)>, name: &str, badness: f64) {
    if best.len() == NEAREST_BELOW && best.last().is_some_and(|l| l.1 >= badness) {
        return;
    }
    let at = best.partition_point(|b| b.1 >= badness);
    best.insert(at, (name.to_string(), badness));
    best.truncate(NEAREST_BELOW);
}

fn neighborhoods(
    stores: &[&Store],
    names: &dyn SourceNames,
    cfg: &ReportConfig,
    labels: &LabelIndex,
    filter: ReviewFilter,
) -> Result<(ThresholdInfo, Vec<ReportRow>)> {
    // Pass 1: μ and σ of badness over ALL neighborhoods (§6.3).
    let mut stats = MeanStd::default();
    for n in crate::report::merged::neighborhoods(stores) {
        stats.push(n?.1.badness());
    }
    let mut th = threshold_info(&stats, cfg.threshold);
    // Pass 2: those above it ("if badness(N) is greater than a threshold", §3.1 step 6).
    let mut flagged = Vec::new();
    for n in crate::report::merged::neighborhoods(stores) {
        let (name, acc) = n?;
        if acc.badness() > th.value && acc.pages >= cfg.min_pages {
            th.above += 1;
            if filter.keeps(labels, &name) {
                flagged.push((name, acc));
            } else {
                th.reviewed_left_out += 1;
            }
        } else if acc.badness() > 0.0 && acc.badness() <= th.value {
            keep_nearest(&mut th.nearest_below, &name, acc.badness());
        }
    }
    flagged.sort_by(|a, b| {
        b.1.badness()
            .total_cmp(&a.1.badness())
            .then(b.1.labeled_chunks.cmp(&a.1.labeled_chunks))
            .then(a.0.cmp(&b.0))
    });
    if let Some(l) = cfg.limit {
        flagged.truncate(l);
    }
    let mut rows = Vec::with_capacity(flagged.len());
    for (name, acc) in flagged {
        let (sources, evidence) = evidence_under(stores, &name, names, cfg)?;
        rows.push(ReportRow {
            level: "neighborhood",
            neighborhood: name,
            badness: acc.badness(),
            threshold: th.value,
            threshold_kind: th.kind,
            pages: acc.pages,
            chunks: acc.chunks,
            labeled_chunks: acc.labeled_chunks,
            sources,
            evidence,
            near_duplicate_of: None,
            words: None,
            covered_words: None,
            noindex: false,
            canonical: None,
        });
    }
    Ok((th, rows))
}

/// Top sources and a few passages over the pages under a prefix.
fn evidence_under(
    stores: &[&Store],
    prefix: &str,
    names: &dyn SourceNames,
    cfg: &ReportConfig,
) -> Result<(Vec<SourceRef>, Vec<EvidenceRow>)> {
    let mut per_source: HashMap<u32, u64> = HashMap::new();
    let mut evidence = Vec::new();
    for p in crate::report::merged::pages_under(stores, prefix) {
        let p = p?;
        for s in &p.sources {
            *per_source.entry(s.source).or_default() += s.chunks as u64;
        }
        if evidence.len() < cfg.evidence && !p.evidence.is_empty() {
            // Passages are read back from the page's text (the store keeps block numbers).
            let mut p = p;
            crate::source::text::fill_passages_from(stores, &mut p)?;
            collect_evidence(&p, names, cfg.evidence, &mut evidence);
        }
    }
    Ok((top_sources(per_source, names, cfg.sources), evidence))
}

fn collect_evidence(p: &PageRecord, names: &dyn SourceNames, max: usize, out: &mut Vec<EvidenceRow>) {
    // One passage per page first, so the evidence spans pages.
    if let Some(e) = p.evidence.first() {
        if out.len() < max {
            out.push(evidence_row(p, e, names));
        }
    }
}

/// The report row of evidence `e` of page `p`, its source named by `names`.
fn evidence_row(p: &PageRecord, e: &store::Evidence, names: &dyn SourceNames) -> EvidenceRow {
    EvidenceRow::of(p, e, names.name(e.source).unzip(), names.source_passage(e.source, &e.passage))
}

fn top_sources(per_source: HashMap<u32, u64>, names: &dyn SourceNames, max: usize) -> Vec<SourceRef> {
    let mut v: Vec<(u32, u64)> = per_source.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(max);
    v.into_iter()
        .map(|(id, chunks)| {
            let (title, url) = names.name(id).unzip();
            SourceRef { id, title, url, chunks }
        })
        .collect()
}

fn pages(
    stores: &[&Store],
    names: &dyn SourceNames,
    cfg: &ReportConfig,
    labels: &LabelIndex,
    filter: ReviewFilter,
) -> Result<(ThresholdInfo, Vec<ReportRow>)> {
    let mut stats = MeanStd::default();
    for p in crate::report::merged::pages_under(stores, "") {
        stats.push(p?.contains);
    }
    let mut th = threshold_info(&stats, cfg.threshold);
    let mut flagged = Vec::new();
    for p in crate::report::merged::pages_under(stores, "") {
        let p = p?;
        // A page goes with the label of its longest labeled neighborhood.
        if p.contains > th.value {
            th.above += 1;
            if filter.keeps(labels, &p.url) {
                flagged.push(p);
            } else {
                th.reviewed_left_out += 1;
            }
        } else if p.contains > 0.0 {
            keep_nearest(&mut th.nearest_below, &p.url, p.contains);
        }
    }
    flagged.sort_by(|a, b| {
        b.contains
            .total_cmp(&a.contains)
            .then(b.labeled_chunks.cmp(&a.labeled_chunks))
            .then(a.url.cmp(&b.url))
    });
    if let Some(l) = cfg.limit {
        flagged.truncate(l);
    }
    for p in &mut flagged {
        // Passages are read back from the page's text (the store keeps block numbers).
        crate::source::text::fill_passages_from(stores, p)?;
    }
    let rows = flagged
        .into_iter()
        .map(|p| {
            let directives = page_directives(stores, &p.url)?;
            let per_source = p.sources.iter().map(|s| (s.source, s.chunks as u64)).collect();
            let evidence = p.evidence.iter().take(cfg.evidence).map(|e| evidence_row(&p, e, names)).collect();
            Ok(ReportRow {
                level: "page",
                neighborhood: p.url.clone(),
                badness: p.contains,
                threshold: th.value,
                threshold_kind: th.kind,
                pages: 1,
                chunks: p.chunks as u64,
                labeled_chunks: p.labeled_chunks as u64,
                sources: top_sources(per_source, names, cfg.sources),
                evidence,
                near_duplicate_of: p.near_duplicate_of.clone(),
                words: p.passages.as_ref().map(|s| s.words),
                covered_words: p.passages.as_ref().map(|s| s.covered_words),
                noindex: directives.noindex,
                canonical: directives.canonical,
            })
        })
        .collect::<Result<_>>()?;
    Ok((th, rows))
}

/// What the page at `url` told the crawl of itself (`noindex`, a canonical URL elsewhere),
/// from the first store that recorded any.
fn page_directives(stores: &[&Store], url: &str) -> Result<store::PageDirectives> {
    for s in stores {
        if let Some(d) = s.page_directives(url)? {
            return Ok(d);
        }
    }
    Ok(store::PageDirectives::default())
}

/// After `N above …`: how many are listed when review labels or `--limit` left some out
/// (empty when all are listed).
pub fn listed_note(th: &ThresholdInfo, listed: usize) -> String {
    if listed as u64 == th.above {
        return String::new();
    }
    let mut s = format!(", {listed} listed");
    if th.reviewed_left_out > 0 {
        s.push_str(&format!(" ({} left out as reviewed; --all lists them)", th.reviewed_left_out));
    }
    s
}

/// When nothing is above the threshold: where the nearest sit and the `--threshold` that
/// would list them; `None` when something is listed or nothing has any badness.
pub fn nothing_above_hint(th: &ThresholdInfo) -> Option<String> {
    if th.above > 0 {
        return None;
    }
    nearest_below_hint(th.value, &th.nearest_below)
}

/// "nothing is above the threshold …; the highest below it: …; try --threshold X", naming the
/// highest few (escaped: names come from input) and a threshold just under the lowest named.
pub fn nearest_below_hint(threshold: f64, nearest: &[(String, f64)]) -> Option<String> {
    let lowest = nearest.last()?.1;
    let near: Vec<String> =
        nearest.iter().map(|(n, b)| format!("{} {b:.4}", crawler::warc::printable(n))).collect();
    // Just under the lowest named, rounded down to 2 decimals.
    let suggest = ((lowest * 100.0).floor() / 100.0 - 0.01).max(0.0);
    Some(format!(
        "nothing is above the threshold {threshold:.4}; the highest below it: {}; to list these, try --threshold {suggest:.2}",
        near.join(", ")
    ))
}

/// Write rows in the chosen format.
pub fn write(out: &mut dyn Write, format: Format, th: &ThresholdInfo, rows: &[ReportRow]) -> Result<()> {
    match format {
        Format::Jsonl => {
            for r in rows {
                serde_json::to_writer(&mut *out, r)?;
                out.write_all(b"\n")?;
            }
        }
        Format::Csv => {
            writeln!(out, "level,neighborhood,badness,threshold,threshold_kind,pages,chunks,labeled_chunks,top_sources,evidence_url,evidence_passage")?;
            for r in rows {
                let sources = r
                    .sources
                    .iter()
                    .map(|s| format!("{} ({})", source_label(s.id, &s.title), s.chunks))
                    .collect::<Vec<_>>()
                    .join("; ");
                let (eu, ep) =
                    r.evidence.first().map(|e| (e.url.as_str(), e.passage.as_str())).unwrap_or(("", ""));
                let fields = [
                    r.level.to_string(),
                    r.neighborhood.clone(),
                    format!("{:.6}", r.badness),
                    format!("{:.6}", r.threshold),
                    r.threshold_kind.to_string(),
                    r.pages.to_string(),
                    r.chunks.to_string(),
                    r.labeled_chunks.to_string(),
                    sources,
                    eu.to_string(),
                    ep.to_string(),
                ];
                let line = fields.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(",");
                writeln!(out, "{line}")?;
            }
        }
        Format::Parquet if cfg!(feature = "parquet") => {
            anyhow::bail!("--format parquet writes a file: give -o FILE")
        }
        Format::Parquet => anyhow::bail!("{PARQUET_MISSING}; this build writes --format jsonl, csv or table"),
        Format::Table => {
            writeln!(
                out,
                "threshold {:.4} ({}: mean {:.4}, sd {:.4}, over {} {}); {} above it{}",
                th.value,
                th.kind,
                th.mean,
                th.sd,
                th.population,
                if rows.first().map(|r| r.level) == Some("page") { "pages" } else { "neighborhoods" },
                th.above,
                listed_note(th, rows.len())
            )?;
            writeln!(
                out,
                "{:>8}  {:>6}  {:>8}  {:>8}  {:<48}  top sources",
                "badness", "pages", "chunks", "labeled", "neighborhood"
            )?;
            for r in rows {
                let sources = r
                    .sources
                    .iter()
                    .take(3)
                    .map(|s| format!("{} ({})", source_label(s.id, &s.title), s.chunks))
                    .collect::<Vec<_>>()
                    .join(", ");
                writeln!(
                    out,
                    "{:>8.4}  {:>6}  {:>8}  {:>8}  {:<48}  {}",
                    r.badness,
                    r.pages,
                    r.chunks,
                    r.labeled_chunks,
                    ellipsize(&r.neighborhood, 48),
                    sources
                )?;
            }
        }
    }
    Ok(())
}

/// Write rows as Parquet to `path` (schema in docs/report-schema.md).
#[cfg(feature = "parquet")]
pub fn write_parquet(path: &std::path::Path, th: &ThresholdInfo, rows: &[ReportRow]) -> Result<()> {
    crate::report::parquet::write_report(path, th, rows)
}

/// Without the `parquet` feature: an error saying how to get it.
#[cfg(not(feature = "parquet"))]
pub fn write_parquet(_: &std::path::Path, _: &ThresholdInfo, _: &[ReportRow]) -> Result<()> {
    anyhow::bail!("{PARQUET_MISSING}; this build writes --format jsonl, csv or table")
}

/// The error for `--format parquet` in a build without the `parquet` feature.
pub const PARQUET_MISSING: &str = "--format parquet needs ditto built with the `parquet` cargo feature \
     (cargo build --release --features parquet)";

fn source_label(id: u32, title: &Option<String>) -> String {
    title.clone().unwrap_or_else(|| format!("#{id}"))
}

/// RFC 4180 field: quoted when it holds a comma, quote or line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\"\n"), "\"say \"\"hi\"\"\n\"");
    }

    #[test]
    fn threshold_parses() {
        assert_eq!("auto".parse::<ThresholdChoice>(), Ok(ThresholdChoice::MeanPlusStd));
        assert_eq!("0.3".parse::<ThresholdChoice>(), Ok(ThresholdChoice::Fixed(0.3)));
        assert!("2".parse::<ThresholdChoice>().is_err());
        assert!("x".parse::<ThresholdChoice>().is_err());
    }
}
