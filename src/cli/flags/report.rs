//! `ditto report` flags, and their translation into a [`ReportConfig`].

use std::path::PathBuf;

use clap::Args;

use crate::report::{Format, Level, ReportConfig, ReviewFilter, ThresholdChoice};

#[derive(Args)]
pub struct ReportArgs {
    /// The store; repeat to report over several stores as one (partitioned crawls and
    /// scans): thresholds over their union, the verdicts of a single store holding it all.
    #[arg(long, required = true, env = "DITTO_STORE")]
    pub store: Vec<PathBuf>,
    /// `parquet` needs `-o FILE` and a build with `--features parquet`.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: Format,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Report neighborhoods (URL prefixes) or single pages.
    #[arg(long, value_enum, default_value = "neighborhood")]
    pub level: Level,
    /// `auto` = mean + one standard deviation over all neighborhoods/pages of the store
    /// (the paper's default), or a fixed value in [0, 1].
    #[arg(long, default_value = "auto")]
    pub threshold: ThresholdChoice,
    /// At most this many rows.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Leave out neighborhoods with fewer pages.
    #[arg(long, default_value_t = 1)]
    pub min_pages: u64,
    /// Copied passages shown per row.
    #[arg(long, default_value_t = 3)]
    pub evidence: usize,
    /// Sources shown per row.
    #[arg(long, default_value_t = 5)]
    pub sources: usize,
    /// Label set for source titles (default: the one the store was scanned with).
    #[arg(long, env = "DITTO_LABELSET")]
    pub labelset: Option<PathBuf>,
    /// The pages the label set was built from (the directory, or files, given to `ditto
    /// labelset build`; repeatable): each evidence row then also carries `source_passage`, the
    /// source paragraph it was copied from, and `differs`, the words that differ (JSONL).
    #[arg(long = "source-pages", value_name = "DIR")]
    pub source_pages: Vec<PathBuf>,
    /// Only neighborhoods nobody has labeled yet (`ditto review`).
    #[arg(long, conflicts_with = "all")]
    pub unreviewed: bool,
    /// Also neighborhoods labeled `false-positive` or `legitimate-mirror` (left out by default).
    #[arg(long)]
    pub all: bool,
    /// Pages: add `near_duplicate_of` (the earlier page of the scan or crawl whose SimHash is
    /// within 3 bits, marked live). Off by default: which of two near duplicates is "earlier"
    /// depends on the order pages were matched (threads, partitions, resumes), and the report
    /// is otherwise the same however the store was written.
    #[arg(long)]
    pub near_dups: bool,
}

impl ReportArgs {
    pub fn to_config(&self) -> ReportConfig {
        ReportConfig {
            level: self.level,
            threshold: self.threshold,
            limit: self.limit,
            min_pages: self.min_pages,
            evidence: self.evidence,
            sources: self.sources,
        }
    }

    /// Which neighborhoods the review labels leave in.
    pub fn review_filter(&self) -> ReviewFilter {
        match (self.unreviewed, self.all) {
            (true, _) => ReviewFilter::Unreviewed,
            (_, true) => ReviewFilter::All,
            _ => ReviewFilter::HideDismissed,
        }
    }
}
