//! `ditto labelset build`, `merge` and `check` flags.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use crate::labelset::{BuildConfig, MergeConfig};
use crate::pipeline::progress::ProgressMode;

#[derive(Args)]
pub struct BuildArgs {
    /// Name recorded in the file (e.g. `wikipedia`).
    #[arg(long)]
    pub name: String,
    /// Output file.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Keep only chunks LONGER than this many characters after normalization (the paper
    /// labels Wikipedia chunks of length > 100, §7).
    #[arg(long, default_value_t = 100)]
    pub min_chars: usize,
    /// `chunks` for a chunk label set (L_c), `files` for whole-body hashes (L_f).
    #[arg(long, default_value = "chunks", value_parser = ["chunks", "files"])]
    pub kind: String,
    /// Normalization steps, comma-separated: nfkc, lower, collapse-ws, trim, or none.
    /// Recorded in the file; scans use the same.
    #[arg(long, default_value = "nfkc,lower,collapse-ws,trim")]
    pub normalization: String,
    /// URL prefix for files in directory inputs; a source's URL is prefix + file stem
    /// (e.g. `https://en.wikipedia.org/wiki/`).
    #[arg(long)]
    pub url_prefix: Option<String>,
    /// Free-text description of where the content came from.
    #[arg(long, default_value = "")]
    pub description: String,
    /// Worker threads (default: every core). 1 builds sequentially; more decode multistream
    /// bzip2 / multi-member gzip and digest documents in parallel, with the same result.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Memory for the chunk table and the passage pairs (24 bytes a kept chunk, 16 a passage
    /// anchor; with passages each gets half; e.g. 2GB, 512MB). Past it, sorted runs spill to
    /// --tmp-dir and are merged at the end; the result is the same.
    #[arg(long, default_value = "2GB", value_parser = super::parse_bytes)]
    pub memory: u64,
    /// Where spilled runs go (default: the output's directory). Removed afterwards.
    #[arg(long)]
    pub tmp_dir: Option<PathBuf>,
    /// Progress lines on stderr (input bytes, documents, chunks kept, rate) every 5 s;
    /// `none` for none.
    #[arg(long, value_enum, default_value = "auto")]
    pub progress: ProgressMode,
    /// Keep the sources' passages (5-word k-grams of their word stream, one in 8 chosen by
    /// hash) so that scans find edited copies too; `off` builds an exact-chunks-only label
    /// set, as ditto before passages did.
    #[arg(long, value_enum, default_value = "on")]
    pub passages: OnOff,
    /// One k-gram in this many (a power of two, 1–1024) is kept as a passage anchor: larger
    /// makes the label set smaller and finds fewer heavily edited copies.
    #[arg(long, default_value_t = detector::passages::PassageParams::default().modulus)]
    pub passage_modulus: u32,
    /// Directories, WARC files, Wikipedia dumps (MediaWiki XML, Enterprise NDJSON or its
    /// tar archives), HTML or text files; plain, gzip or bzip2. Told by content, not name.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
}

/// A switch flag's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

/// `ditto labelset merge` flags.
#[derive(Args)]
pub struct MergeArgs {
    /// Output file.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Name recorded (default: the first input's).
    #[arg(long)]
    pub name: Option<String>,
    /// Description recorded (default: the inputs' descriptions joined with "; ").
    #[arg(long)]
    pub description: Option<String>,
    /// Memory for the chunk table and the passage pairs, as for `build`.
    #[arg(long, default_value = "2GB", value_parser = super::parse_bytes)]
    pub memory: u64,
    /// Where spilled runs go (default: the output's directory).
    #[arg(long)]
    pub tmp_dir: Option<PathBuf>,
    /// Label sets to merge, in source order. Kind, normalization and --min-chars must agree.
    #[arg(required = true, num_args = 2..)]
    pub inputs: Vec<PathBuf>,
}

impl MergeArgs {
    pub fn to_config(&self) -> MergeConfig {
        MergeConfig {
            inputs: self.inputs.clone(),
            output: self.output.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            memory: self.memory,
            tmp_dir: self.tmp_dir.clone(),
        }
    }
}

/// `ditto labelset check` flags.
#[derive(Args)]
pub struct CheckArgs {
    /// The label-set file (.dls).
    pub file: PathBuf,
}

impl BuildArgs {
    pub fn to_config(&self) -> Result<BuildConfig> {
        Ok(BuildConfig {
            name: self.name.clone(),
            kind: self.kind.clone(),
            normalization: self.normalization.parse().context("--normalization")?,
            min_chars: self.min_chars,
            url_prefix: self.url_prefix.clone(),
            description: self.description.clone(),
            inputs: self.inputs.clone(),
            output: self.output.clone(),
            threads: crate::pipeline::pool::worker_count(self.threads)?,
            memory: self.memory,
            tmp_dir: self.tmp_dir.clone(),
            progress: self.progress != ProgressMode::None,
            passages: match self.passages {
                OnOff::Off => None,
                OnOff::On => {
                    let p = detector::passages::PassageParams {
                        modulus: self.passage_modulus,
                        ..Default::default()
                    };
                    anyhow::ensure!(
                        p.is_valid(),
                        "--passage-modulus {}: a power of two from 1 to 1024",
                        self.passage_modulus
                    );
                    Some(p)
                }
            },
        })
    }
}
