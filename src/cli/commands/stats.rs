//! `ditto stats`.

use anyhow::Result;
use store::Store;

use crate::cli::flags::stats::StatsArgs;
use crate::report::summary;

pub fn run(a: &StatsArgs) -> Result<()> {
    let store = Store::open(&a.store)?;
    summary::print_store(&store, a.json)
}
