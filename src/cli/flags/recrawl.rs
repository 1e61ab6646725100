//! `ditto recrawl` flags.

use std::path::PathBuf;

use super::replicas::KChoice;
use crate::analysis::recrawl::RecrawlConfig;

/// `ditto recrawl` options.
#[derive(Debug, clap::Args)]
pub struct RecrawlArgs {
    /// Store of the earlier crawl (or scan) whose URLs are refreshed.
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    /// Store the recrawl writes (resumable like any crawl store).
    #[arg(long)]
    pub new_store: PathBuf,
    /// Chunk label set (.dls) to detect while crawling.
    #[arg(long, env = "DITTO_LABELSET")]
    pub labelset: PathBuf,
    /// Write every fetch to WARC files here.
    #[arg(long)]
    pub warc_dir: PathBuf,
    /// Write the skipped URLs here, one `url<TAB>representative` a line.
    #[arg(long)]
    pub skipped_out: Option<PathBuf>,
    /// Jaccard of the pages' long-word shingle sketches at or above which a cluster member
    /// is skipped with its representative. Stricter than `ditto replicas`' default (0.75): a
    /// skip that should not have been is a change missed, and a 160-hash sketch's estimate
    /// varies by about ±0.03 (at 0.75 and 0.8 a Clang page's reST source, changed, was skipped
    /// with its HTML page: exact long-word Jaccard 0.784, estimated above 0.8).
    #[arg(long, default_value_t = 0.85)]
    pub threshold: f64,
    /// SimHash candidate distance (as `ditto replicas`); `none` turns it off.
    #[arg(long, default_value = "3")]
    pub simhash_k: KChoice,
    /// Write the recrawl's counts as JSON here.
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
    /// Flags for the crawl passes (`ditto crawl`'s, e.g. `--user-agent`, `--resolve`,
    /// `--min-delay-ms`), after the options above. Not: --store, --labelset, --warc-dir,
    /// --seeds, --seed, --max-depth (the recrawl sets them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "CRAWL FLAGS")]
    pub crawl_args: Vec<String>,
}

impl RecrawlArgs {
    pub fn to_config(&self) -> RecrawlConfig {
        RecrawlConfig {
            store: self.store.clone(),
            new_store: self.new_store.clone(),
            labelset: self.labelset.clone(),
            warc_dir: self.warc_dir.clone(),
            skipped_out: self.skipped_out.clone(),
            threshold: self.threshold,
            simhash_k: self.simhash_k.0,
            stats_json: self.stats_json.clone(),
            crawl_args: self.crawl_args.clone(),
        }
    }
}
