//! `ditto store` flags.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum StoreCommand {
    /// Verify a store completely: every sled tree walked, every record decoded. Exit status 0
    /// when sound, 1 when damaged (or when it cannot be opened).
    Check(CheckArgs),
}

#[derive(Args)]
pub struct CheckArgs {
    /// The store to check.
    #[arg(long)]
    pub store: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}
