//! `ditto labelset import` flags.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::Args;

use crate::analysis::discover::ImportConfig;

/// `ditto labelset import`.
#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// The hash list, as `examples/spark/discover.py` writes it: one line per hash,
    /// SHA1-HEX<TAB>COUNT<TAB>SAMPLE_URL; lines starting with `#` are comments, and
    /// `# kind=`, `# min_count=`, `# normalization=` lines give the defaults below.
    pub input: PathBuf,
    /// The label set to write (.dls).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Name recorded in the label set.
    #[arg(long, default_value = "blind")]
    pub name: String,
    /// `chunks` (L_c) or `files` (L_f). Default: the list's `# kind=` line, else chunks.
    #[arg(long, value_parser = ["chunks", "files"])]
    pub kind: Option<String>,
    /// Normalization the hashes were made with (recorded in the label set; a scan uses it).
    /// Default: the list's `# normalization=` line, else nfkc,lower,collapse-ws,trim.
    #[arg(long)]
    pub normalization: Option<String>,
    /// Check that every count is MORE than this (§3.2: duplicates(o) > threshold). Default:
    /// the list's `# min_count=` line, if any.
    #[arg(long)]
    pub min_count: Option<u64>,
}

impl ImportArgs {
    pub fn to_config(&self) -> Result<ImportConfig> {
        Ok(ImportConfig {
            input: self.input.clone(),
            output: self.output.clone(),
            name: self.name.clone(),
            kind: self
                .kind
                .as_deref()
                .map(|k| k.parse().map_err(|e| anyhow!("kind {k:?}: {e}")))
                .transpose()?,
            normalization: self
                .normalization
                .as_deref()
                .map(|n| n.parse().map_err(|e| anyhow!("normalization {n:?}: {e}")))
                .transpose()?,
            min_count: self.min_count,
        })
    }
}
