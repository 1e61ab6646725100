//! `ditto discover` flags, and the counter's memory options it shares with `ditto stopchunks
//! suggest`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use detector::TrapRules;

use crate::analysis::counting::CountingConfig;
use crate::analysis::discover::{Corpus, DiscoverConfig, InputsConfig};

/// `ditto discover`.
#[derive(Args, Debug, Clone)]
pub struct DiscoverArgs {
    /// Count the pages of this store (a finished scan or crawl). Or give INPUTS instead.
    #[arg(long, conflicts_with = "inputs")]
    pub store: Option<PathBuf>,
    /// Label objects seen MORE than this many times (§3.2: duplicates(o) > threshold; the
    /// paper used 10^5 for chunks and 10^3 for files on Common Crawl). Not needed with
    /// --histogram.
    #[arg(long, required_unless_present = "histogram")]
    pub min_count: Option<u64>,
    /// The blind label set to write (.dls).
    #[arg(short = 'o', long = "output", required_unless_present = "histogram")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub counting: CountingArgs,
    /// Extra stop-chunk lists (text, one chunk per line, or .dls); stop chunks never enter
    /// the blind label set (§3.4.2). May repeat.
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Do not use the built-in list of benign idioms.
    #[arg(long)]
    pub no_default_stop_chunks: bool,
    /// Count whole-file hashes (L_f) instead of chunks (L_c).
    #[arg(long)]
    pub files: bool,
    /// Also label passages (issue 36): 5-word sequences (one in 8, chosen by hash, as label
    /// sets keep them) seen on more than --min-count pages, stop passages left out. A scan
    /// with the label set then finds edited copies of the discovered text too. Not with
    /// --files.
    #[arg(long, conflicts_with = "files")]
    pub passages: bool,
    /// Only print the count distribution (log-binned histogram and knee candidates).
    #[arg(long)]
    pub histogram: bool,
    /// Name recorded in the label set.
    #[arg(long, default_value = "blind")]
    pub name: String,
    /// Normalization for INPUTS (a store uses the one it was scanned with).
    #[arg(long, default_value = "nfkc,lower,collapse-ws,trim")]
    pub normalization: String,
    /// URL prefix for directory inputs (as `ditto scan --url-prefix`).
    #[arg(long)]
    pub url_prefix: Option<String>,
    /// Workers cleaning and hashing INPUTS. Default: number of cores.
    #[arg(long, value_parser = super::parse_threads)]
    pub threads: Option<usize>,
    /// As `ditto scan --max-path-repeats`.
    #[arg(long, default_value_t = 3)]
    pub max_path_repeats: usize,
    /// As `ditto scan --max-depth`.
    #[arg(long, default_value_t = 96)]
    pub max_depth: usize,
    /// As `ditto scan --max-body-bytes`.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_body_bytes: u64,
    /// WARC files, directories of pages or files (instead of --store).
    pub inputs: Vec<PathBuf>,
}

impl DiscoverArgs {
    /// The discovery's settings: pages from `--store` or from INPUTS (exactly one), and with
    /// `--histogram` neither threshold nor output, so nothing is written.
    pub fn to_config(&self) -> Result<DiscoverConfig> {
        let corpus = match (&self.store, self.inputs.is_empty()) {
            (Some(s), true) => Corpus::Store(s.clone()),
            (None, false) => Corpus::Inputs(InputsConfig {
                inputs: self.inputs.clone(),
                url_prefix: self.url_prefix.clone(),
                normalization: self.normalization.parse().context("--normalization")?,
                traps: TrapRules {
                    max_repeats: self.max_path_repeats,
                    max_depth: self.max_depth,
                    ..TrapRules::default()
                },
                threads: crate::pipeline::pool::worker_count(self.threads)?,
                max_body_bytes: self.max_body_bytes,
            }),
            (Some(_), false) => bail!("give --store or inputs, not both"),
            (None, true) => bail!("give --store DB or inputs (WARC files, directories)"),
        };
        Ok(DiscoverConfig {
            corpus,
            files: self.files,
            passages: self.passages,
            min_count: if self.histogram { None } else { self.min_count },
            output: if self.histogram { None } else { self.output.clone() },
            name: self.name.clone(),
            counting: self.counting.to_config(),
            stop_paths: self.stop_chunks.clone(),
            no_default_stops: self.no_default_stop_chunks,
        })
    }
}

/// The exact counter's memory options ([`CountingConfig`]), shared by the commands that count
/// chunk occurrences (`discover`, `stopchunks suggest`).
#[derive(Args, Debug, Clone)]
pub struct CountingArgs {
    /// Memory for counting (e.g. 512MB, 2GiB; K/M/G are powers of 1024). Past it, sorted
    /// runs spill to --tmp-dir and are merged; the result is the same, exactly.
    #[arg(long, default_value = "512MB", value_parser = super::parse_bytes)]
    pub memory: u64,
    /// Where spilled runs go (default: the system temporary directory). Removed afterwards.
    #[arg(long)]
    pub tmp_dir: Option<PathBuf>,
}

impl CountingArgs {
    /// The counter's options; `--tmp-dir` defaults to the system temporary directory.
    pub fn to_config(&self) -> CountingConfig {
        CountingConfig {
            memory: self.memory,
            tmp_dir: self.tmp_dir.clone().unwrap_or_else(std::env::temp_dir),
        }
    }
}
