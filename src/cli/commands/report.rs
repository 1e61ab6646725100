//! `ditto report`.

use std::io::Write;

use anyhow::{Context, Result};
use store::Store;

use crate::cli::flags::report::ReportArgs;
use crate::report::{self, Format, Level};

pub fn run(a: &ReportArgs) -> Result<()> {
    let stores =
        a.store.iter().map(|p| crate::analysis::open_store_for_reading(p)).collect::<Result<Vec<_>>>()?;
    let stores: Vec<&Store> = stores.iter().collect();
    crate::labelset::require_label_set(&stores, "report")?;
    let mut names = crate::labelset::source_names_checked(&stores, a.labelset.as_deref())?;
    if !a.source_pages.is_empty() {
        let texts = crate::source::labeled::SourceTexts::new(a.source_pages.clone())?;
        names = Box::new(report::WithSourcePages { names, texts });
    }
    let (th, mut rows) = report::build_merged(&stores, names.as_ref(), &a.to_config(), a.review_filter())?;
    if !a.near_dups {
        for r in &mut rows {
            r.near_duplicate_of = None;
        }
    }
    match (a.format, &a.output) {
        (Format::Parquet, Some(path)) => report::write_parquet(path, &th, &rows)?,
        (_, Some(path)) => {
            let f = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
            let mut out = std::io::BufWriter::new(f);
            report::write(&mut out, a.format, &th, &rows)?;
            out.flush()?;
        }
        (_, None) => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            report::write(&mut out, a.format, &th, &rows)?;
            out.flush()?;
        }
    }
    if a.format != Format::Table {
        eprintln!(
            "{} {} above threshold {:.4} ({}: mean {:.4}, sd {:.4}, over {}){}",
            th.above,
            if a.level == Level::Page { "pages" } else { "neighborhoods" },
            th.value,
            th.kind,
            th.mean,
            th.sd,
            th.population,
            report::listed_note(&th, rows.len())
        );
    }
    if let Some(hint) = report::nothing_above_hint(&th) {
        eprintln!("{hint}");
    }
    Ok(())
}
