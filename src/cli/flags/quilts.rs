//! `ditto quilts` flags.

use std::path::PathBuf;

use super::parse_bytes;
use crate::analysis::quilts::{QuiltFormat, QuiltsConfig};

/// `ditto quilts` options.
#[derive(Debug, Clone, clap::Args)]
pub struct QuiltsArgs {
    /// Store written by `ditto scan` or `ditto crawl`.
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    /// Words per k-gram.
    #[arg(long, default_value_t = 5)]
    pub k: usize,
    /// A patch gram is in more than one and at most m documents.
    #[arg(long, default_value_t = 50)]
    pub m: u64,
    /// Fewest sources (greedy set cover) of a quilted page.
    #[arg(long, default_value_t = 4)]
    pub c: usize,
    /// Smallest patch fraction of a quilted page.
    #[arg(long, default_value_t = 0.5)]
    pub theta: f64,
    /// Only sources on another registrable domain count (foreign-sourced quilts).
    #[arg(long)]
    pub foreign: bool,
    /// Memory for the sorts (docs_k(g), postings, replica groups; e.g. 256MB); past it, sorted
    /// runs spill to --tmp-dir.
    #[arg(long, default_value = "256MB", value_parser = parse_bytes)]
    pub memory: u64,
    /// Where spilled runs go (default: the system temporary directory).
    #[arg(long)]
    pub tmp_dir: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: QuiltFormat,
    /// Extra stop-chunk lists (text or .dls). May repeat.
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Do not use the built-in stop-chunk list.
    #[arg(long)]
    pub no_default_stop_chunks: bool,
    /// Keep template blocks and stop chunks in the k-grams.
    #[arg(long)]
    pub keep_templates: bool,
    /// A block on at least this share of its host's pages is template (navigation, footers,
    /// rotating related-link lists).
    #[arg(long, default_value_t = 0.3)]
    pub template_fraction: f64,
    /// ... and on at least this many of them.
    #[arg(long, default_value_t = 4)]
    pub template_min_pages: u64,
    /// Sources per page given a sample patch (all sources are listed).
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
}

impl QuiltsArgs {
    pub fn to_config(&self) -> QuiltsConfig {
        QuiltsConfig {
            store: self.store.clone(),
            k: self.k,
            m: self.m,
            c: self.c,
            theta: self.theta,
            foreign: self.foreign,
            memory: self.memory,
            tmp_dir: self.tmp_dir.clone(),
            format: self.format,
            stop_chunks: self.stop_chunks.clone(),
            no_default_stop_chunks: self.no_default_stop_chunks,
            keep_templates: self.keep_templates,
            template_fraction: self.template_fraction,
            template_min_pages: self.template_min_pages,
            samples: self.samples,
        }
    }
}
