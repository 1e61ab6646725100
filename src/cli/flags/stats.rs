//! `ditto stats` flags.

use std::path::PathBuf;

use clap::Args;

#[derive(Args)]
pub struct StatsArgs {
    /// The store to summarize (a scan or crawl, finished or not).
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}
