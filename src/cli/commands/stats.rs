//! `ditto stats`.

use anyhow::Result;

use crate::cli::flags::stats::StatsArgs;
use crate::report::summary;

pub fn run(a: &StatsArgs) -> Result<()> {
    let store = crate::analysis::open_store_for_reading(&a.store)?;
    summary::print_store(&store, a.json)
}
