//! `ditto store check`.

use anyhow::{bail, Result};
use store::Store;

use crate::cli::flags::store::CheckArgs;

pub fn check(a: &CheckArgs) -> Result<()> {
    let t = std::time::Instant::now();
    // Not through a holder's snapshot: the check is of the files.
    let store = Store::open_existing(&a.store)?;
    let report = store.check()?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for (kind, n) in &report.records {
            println!("{kind:<26} {n}");
        }
        for (tree, n) in &report.trees {
            println!("sled tree {tree:<16} {n} entries");
        }
        for p in &report.problems {
            println!("problem: {p}");
        }
        if report.more_problems > 0 {
            println!("problem: … and {} more", report.more_problems);
        }
        println!("checked in:                {:.2} s", t.elapsed().as_secs_f64());
    }
    if !report.is_sound() {
        bail!(
            "store damaged: {} problem(s) in {}, first: {}",
            report.problems.len() as u64 + report.more_problems,
            a.store.display(),
            report.problems.first().map_or("", String::as_str)
        );
    }
    Ok(())
}
