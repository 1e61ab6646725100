//! `ditto labelset build` and `check` flags.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use crate::labelset::BuildConfig;

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
    /// Directories, WARC files, NDJSON or XML dumps.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
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
        })
    }
}
