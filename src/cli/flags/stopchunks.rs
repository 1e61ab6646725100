//! `ditto stopchunks suggest|export` flags.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::discover::CountingArgs;
use crate::analysis::discover::{StopchunksConfig, SuggestConfig};

/// `ditto stopchunks …`.
#[derive(Subcommand, Debug, Clone)]
pub enum StopchunksCommand {
    /// List a store's most frequent chunks (count, a sample URL, the text) as a stop-chunk
    /// list for a person to review: delete the lines that are NOT benign, then pass the file
    /// to `--stop-chunks`.
    Suggest(SuggestArgs),
    /// Write the store's reviewed stop chunks (added on the review page from `false-positive`
    /// evidence) in the stop-list text format, for `--stop-chunks` elsewhere.
    Export(StopchunksExportArgs),
}

impl StopchunksCommand {
    pub fn to_config(&self) -> StopchunksConfig {
        match self {
            StopchunksCommand::Suggest(a) => StopchunksConfig::Suggest(SuggestConfig {
                store: a.store.clone(),
                top: a.top,
                output: a.output.clone(),
                counting: a.counting.to_config(),
                stop_paths: a.stop_chunks.clone(),
                no_default_stops: a.no_default_stop_chunks,
                min_letters: a.min_letters,
                passages: a.passages,
            }),
            StopchunksCommand::Export(a) => StopchunksConfig::ExportReviewed(a.store.clone()),
        }
    }
}

/// `ditto stopchunks export`.
#[derive(Args, Debug, Clone)]
pub struct StopchunksExportArgs {
    /// The store whose reviewed stop chunks to write.
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
}

/// `ditto stopchunks suggest`.
#[derive(Args, Debug, Clone)]
pub struct SuggestArgs {
    /// The store to count (a finished scan or crawl).
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    /// How many chunks to list (the paper reviewed the top 500, §6.1).
    #[arg(long, default_value_t = 500)]
    pub top: usize,
    /// Write here instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub counting: CountingArgs,
    /// Stop-chunk lists already reviewed; their chunks are not suggested again.
    #[arg(long = "stop-chunks")]
    pub stop_chunks: Vec<PathBuf>,
    /// Also suggest chunks of the built-in list (left out by default).
    #[arg(long)]
    pub no_default_stop_chunks: bool,
    /// Leave out chunks with fewer letters than this (`1`, `0`, `100%`: numbers and symbols
    /// that are no idiom to review). 0 keeps every chunk.
    #[arg(long, default_value_t = 3)]
    pub min_letters: usize,
    /// Also list this many of the most frequent passages (5-word sequences, counted once per
    /// page) that lie inside no stop chunk and no chunk listed: template text whose words vary
    /// from page to page. Kept in the list, they stop counting as passage evidence. 0: none.
    #[arg(long, default_value_t = 100)]
    pub passages: usize,
}
