//! `ditto labelset build` and `check`.

use anyhow::Result;

use crate::cli::flags::labelset::{BuildArgs, CheckArgs};

pub fn build(a: &BuildArgs) -> Result<()> {
    crate::labelset::build(&a.to_config()?)
}

pub fn check(a: &CheckArgs) -> Result<()> {
    crate::labelset::check(&a.file)
}
