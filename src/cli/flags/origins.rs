//! `ditto origins` flags.

use std::path::PathBuf;

use detector::origins::K;

use super::parse_bytes;
use crate::analysis::origins::{
    EstimationArg, EvictionArg, OrderArg, OriginFormat, OriginsConfig, SelectionArg,
};

/// `ditto origins` options.
#[derive(Debug, Clone, clap::Args)]
pub struct OriginsArgs {
    /// Store written by `ditto scan` or `ditto crawl`.
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    /// Size of the shingle table (e.g. 64MB).
    #[arg(long, default_value = "64MB", value_parser = parse_bytes)]
    pub memory: u64,
    /// Keep every shingle (unbounded memory): the reference answer.
    #[arg(long)]
    pub exact: bool,
    #[arg(long, value_enum, default_value = "nhs")]
    pub selection: SelectionArg,
    #[arg(long, value_enum, default_value = "lucky")]
    pub eviction: EvictionArg,
    #[arg(long, value_enum, default_value = "be")]
    pub estimation: EstimationArg,
    /// Tokens per shingle.
    #[arg(long, default_value_t = K)]
    pub k: usize,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: OriginFormat,
    /// Print the rows `ditto scan --origins` / `ditto crawl --origins` computed live, in
    /// arrival order, instead of computing them now.
    #[arg(long)]
    pub live: bool,
    /// Processing order: fetch time then URL, or the arrival order a live run
    /// (`--origins`) recorded (pages without a live row after them, by fetch time).
    #[arg(long, value_enum, default_value = "fetch-time")]
    pub order: OrderArg,
}

impl OriginsArgs {
    pub fn to_config(&self) -> OriginsConfig {
        OriginsConfig {
            store: self.store.clone(),
            memory: self.memory,
            exact: self.exact,
            selection: self.selection,
            eviction: self.eviction,
            estimation: self.estimation,
            k: self.k,
            format: self.format,
            live: self.live,
            order: self.order,
        }
    }
}
