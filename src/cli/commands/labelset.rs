//! `ditto labelset build`.

use anyhow::Result;

use crate::cli::flags::labelset::BuildArgs;

pub fn build(a: &BuildArgs) -> Result<()> {
    crate::labelset::build(&a.to_config()?)
}
