//! `ditto labelset build`, `merge` and `check`.

use anyhow::Result;

use crate::cli::flags::labelset::{BuildArgs, CheckArgs, MergeArgs};

pub fn build(a: &BuildArgs) -> Result<()> {
    crate::labelset::build(&a.to_config()?)
}

pub fn check(a: &CheckArgs) -> Result<()> {
    crate::labelset::check(&a.file)
}

pub fn merge(a: &MergeArgs) -> Result<()> {
    crate::labelset::merge(&a.to_config())
}
