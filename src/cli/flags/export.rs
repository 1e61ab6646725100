//! `ditto export chunks|files` flags.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::analysis::discover::{ExportConfig, ExportFormat, ExportRows};

/// `ditto export …`.
#[derive(Subcommand, Debug, Clone)]
pub enum ExportCommand {
    /// Every chunk occurrence of a store: chunk SHA-1, URL, host, neighborhood (the page's
    /// deepest URL prefix) and whether it is a stop chunk, for counting elsewhere.
    Chunks(ExportChunksArgs),
    /// Every page of a store: file SHA-1 (of the body as received, the paper's L_f objects),
    /// URL, host, neighborhood and whether the hash is on the stop list, as CSV — for counting
    /// file duplicates elsewhere (`examples/spark/discover.py --files-from`).
    Files(ExportChunksArgs),
}

impl ExportCommand {
    pub fn to_config(&self) -> ExportConfig {
        let (rows, a) = match self {
            ExportCommand::Chunks(a) => (ExportRows::Chunks, a),
            ExportCommand::Files(a) => (ExportRows::Files, a),
        };
        ExportConfig {
            rows,
            store: a.store.clone(),
            format: a.format,
            output: a.output.clone(),
            stop_paths: a.stop_chunks.clone(),
            no_default_stops: a.no_default_stop_chunks,
        }
    }
}

/// `ditto export chunks`.
#[derive(Args, Debug, Clone)]
pub struct ExportChunksArgs {
    /// The store to export (a finished scan or crawl).
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    /// CSV, or Parquet (needs a build with `--features parquet`).
    #[arg(long, value_enum, default_value = "csv")]
    pub format: ExportFormat,
    /// The file to write; for Parquet also a directory (existing, or ending in `/`), which
    /// gets `part-00000.parquet`.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Stop-chunk lists for the `stop` column (besides the built-in list).
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Do not count the built-in list of benign idioms as stop chunks.
    #[arg(long)]
    pub no_default_stop_chunks: bool,
}
