//! `ditto scan` flags, and their translation into a [`ScanConfig`].

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use detector::{Normalization, TrapRules};

use crate::pipeline::pool::worker_count;
use crate::pipeline::progress::ProgressMode;
use crate::pipeline::ScanConfig;

#[derive(Args)]
pub struct ScanArgs {
    /// Store to write (created if missing; re-running skips pages already stored).
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    /// Chunk label set (.dls, kind chunks).
    #[arg(long, env = "DITTO_LABELSET")]
    pub labelset: PathBuf,
    /// Optional file label set (.dls, kind files) for whole-body matches (L_f).
    #[arg(long)]
    pub file_labelset: Option<PathBuf>,
    /// Extra stop-chunk lists: text files (one chunk per line) or .dls files. May repeat.
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Do not use the built-in list of benign idioms (see `labelsets/data/default-stopchunks.txt`).
    #[arg(long)]
    pub no_default_stop_chunks: bool,
    /// URL prefix for directory inputs: a file's URL is prefix + relative path. Default: a
    /// folder whose subfolders are all host names (DIR/HOST/PATH) is read as
    /// http://HOST/PATH; any other gets file://<absolute directory>/ URLs, which have no host
    /// and so form no neighborhoods (the scan warns: give e.g. `--url-prefix http://HOST/`).
    #[arg(long)]
    pub url_prefix: Option<String>,
    /// Workers per CPU stage (clean, fingerprint, match). Default: number of cores.
    #[arg(long, value_parser = super::parse_threads)]
    pub threads: Option<usize>,
    /// Skip URLs whose path repeats a segment sequence this many times back to back
    /// (recursion errors, §3.4.1); 0 turns the check off.
    #[arg(long, default_value_t = 3)]
    pub max_path_repeats: usize,
    /// Skip URLs whose neighborhood prefix is deeper than this (appendix A: 96).
    #[arg(long, default_value_t = 96)]
    pub max_depth: usize,
    /// Largest body read, in bytes; larger records/files are skipped and counted.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_body_bytes: u64,
    /// Write run statistics (stage timings, counts, skips by reason) as JSON to this file.
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
    /// Progress display.
    #[arg(long, value_enum, default_value = "auto")]
    pub progress: ProgressMode,
    /// Scan one partition `i/N` of the inputs (several processes or machines, one store
    /// each): inputs are numbered in order — each WARC file, each single file, and each file
    /// of a directory walk — and this one reads those numbered ≡ i (mod N). Merge the stores
    /// with `ditto report --store A --store B …`.
    #[arg(long)]
    pub partition: Option<crawler::partition::Partition>,
    /// Live origins of text segments (Abdel-Hamid et al. 2009) in a table of this size (e.g.
    /// 64MB), in arrival order; `ditto origins --live` prints them. Off by default.
    #[arg(long, value_parser = super::parse_bytes)]
    pub origins: Option<u64>,
    /// WARC files, directories of pages, or single HTML/text files.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
}

impl ScanArgs {
    /// The scan's settings; `normalization` is the label set's.
    pub fn to_config(&self, normalization: Normalization) -> Result<ScanConfig> {
        Ok(ScanConfig {
            inputs: self.inputs.clone(),
            url_prefix: self.url_prefix.clone(),
            normalization,
            traps: TrapRules {
                max_repeats: self.max_path_repeats,
                max_depth: self.max_depth,
                ..TrapRules::default()
            },
            threads: worker_count(self.threads)?,
            batch_size: 256,
            max_body_bytes: self.max_body_bytes,
            progress: self.progress,
        })
    }
}
