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
    /// Chunk label set (.dls, kind chunks). Without it nothing is labeled: the store holds
    /// what replicas, quilts, origins, discover, stopchunks suggest and export chunks read,
    /// and `report` and `review` refuse it (they judge neighborhoods by labeled chunks).
    #[arg(long, env = "DITTO_LABELSET")]
    pub labelset: Option<PathBuf>,
    /// Optional file label set (.dls, kind files) for whole-body matches (L_f).
    #[arg(long, requires = "labelset")]
    pub file_labelset: Option<PathBuf>,
    /// Extra stop-chunk lists: text files (one chunk per line) or .dls files. May repeat.
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Do not use the built-in list of benign idioms (see `labelsets/data/default-stopchunks.txt`).
    #[arg(long)]
    pub no_default_stop_chunks: bool,
    /// What to match: `passage` (default) finds labeled passages in edited copies (words
    /// changed, paragraphs split or joined) as well as exact chunks, where the label set has a
    /// passage table; `exact` matches whole normalized paragraphs only (Ardi & Heidemann's
    /// method as published: the same figures as ditto before passages).
    #[arg(long = "match", value_enum, default_value = "passage")]
    pub match_mode: crate::labelset::MatchMode,
    /// URL prefix for directory inputs: a file's URL is prefix + relative path. Default: a
    /// folder whose subfolders are all host names (DIR/HOST/PATH) is read as
    /// http://HOST/PATH; any other gets file://<absolute directory>/ URLs, which have no host
    /// and so form no neighborhoods (the scan warns: give e.g. `--url-prefix http://HOST/`).
    #[arg(long)]
    pub url_prefix: Option<String>,
    /// Workers per CPU stage (clean, fingerprint, match). Default: number of cores.
    #[arg(long, value_parser = super::parse_threads)]
    pub threads: Option<usize>,
    /// Inputs read at once: WARC files (each inflated and parsed by one reader), and the
    /// folders and files of directory walks (shared by every reader). Default: --threads.
    #[arg(long, value_parser = super::parse_threads)]
    pub readers: Option<usize>,
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
    /// with `ditto report --store A --store B …`. Remote (http/https) inputs are numbered
    /// among themselves: this one reads the remote files numbered ≡ i (mod N).
    #[arg(long)]
    pub partition: Option<crawler::partition::Partition>,
    /// Live origins of text segments (Abdel-Hamid et al. 2009) in a table of this size (e.g.
    /// 64MB), in arrival order; `ditto origins --live` prints them. Off by default.
    #[arg(long, value_parser = super::parse_bytes)]
    pub origins: Option<u64>,
    /// Keep each page's cleaned text in the store, for inputs that will not stay (WARC files
    /// or directories to be moved or deleted). Without it the store keeps verdicts only, and
    /// evidence (passages, differences, patches, origins) is read back from each page's WARC
    /// record or file, its SHA-1 checked.
    #[arg(long)]
    pub keep_text: bool,
    /// A listing of inputs, one a line (plain or gzipped, e.g. Common Crawl's
    /// `warc.paths.gz`); read after the inputs given as arguments. Relative lines are joined
    /// to --base-url when given, and are local paths otherwise.
    #[arg(long, value_name = "FILE")]
    pub input_list: Option<PathBuf>,
    /// Base URL for the relative lines of --input-list (e.g. https://data.commoncrawl.org/).
    #[arg(long, value_name = "URL", requires = "input_list")]
    pub base_url: Option<String>,
    /// Remote files fetched at once (the one being read and the next ones), each through a
    /// 4 MiB buffer: memory stays bounded however large the files.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub in_flight: u16,
    /// Attempts after a failure (connection error, 5xx, a transfer cut short, which is
    /// resumed with an HTTP Range request) before a remote file is given up and counted;
    /// waits 0.5 s, then twice as long each time.
    #[arg(long, default_value_t = 5)]
    pub retries: u32,
    /// WARC files (local paths, or http:// and https:// URLs, read as a stream), directories
    /// of pages, or single HTML/text files. A remote file read to its end is recorded in the
    /// store: running the same command again passes over it and retries the others.
    #[arg(required_unless_present = "input_list")]
    pub inputs: Vec<PathBuf>,
}

impl ScanArgs {
    /// The scan's settings; `normalization` is the label set's.
    pub fn to_config(&self, normalization: Normalization) -> Result<ScanConfig> {
        let mut inputs = self.inputs.clone();
        if let Some(list) = &self.input_list {
            inputs.extend(crate::source::listing::read_listing(list, self.base_url.as_deref())?);
        }
        Ok(ScanConfig {
            inputs,
            url_prefix: self.url_prefix.clone(),
            normalization,
            traps: TrapRules {
                max_repeats: self.max_path_repeats,
                max_depth: self.max_depth,
                ..TrapRules::default()
            },
            threads: worker_count(self.threads)?,
            readers: self.readers.unwrap_or(0),
            batch_size: 256,
            max_body_bytes: self.max_body_bytes,
            progress: self.progress,
            remote: crate::pipeline::source_remote::RemoteInputs {
                in_flight: usize::from(self.in_flight),
                retries: self.retries,
                ..Default::default()
            },
        })
    }
}
