//! Writes an edited-copy test web (issue 36; see `testweb::edited`):
//!
//! ```text
//! cargo run --release -p testweb --example gen_edited_web -- --edit synonym --seed 1 --out /tmp/ew
//! ditto labelset build --name wikipedia --min-chars 100 -o /tmp/ew.dls /tmp/ew/labelset
//! ditto scan --store /tmp/ew.db --labelset /tmp/ew.dls --url-prefix http:// /tmp/ew/web
//! ditto report --store /tmp/ew.db --format jsonl
//! ```
//!
//! Flags: `--edit ROW` (one of `none synonym light heavy split join insert tailcut homoglyph
//! spelling brbr`), `--seed N` (default 1), `--out DIR` (new or empty), `--scale full|small`
//! (default full), `--holdout` (the "never tune" variant: another article split and another
//! stream of random choices), `--articles DIR` (default: `../shared/data/wikipedia/articles`
//! from the repository root), `--list` (print the rows and exit).

use std::path::PathBuf;
use std::process::ExitCode;

use testweb::edited::{generate, Edit, Scale, Spec};

fn usage() -> String {
    let rows: Vec<&str> = Edit::ALL.iter().map(|e| e.name()).collect();
    format!(
        "usage: gen_edited_web --edit ROW --out DIR [--seed N] [--scale full|small] [--holdout] [--articles DIR] [--list]\n  rows: {}",
        rows.join(" ")
    )
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_edited_web: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<()> {
    let mut edit = None;
    let mut seed = 1u64;
    let mut out = None;
    let mut scale = Scale::full();
    let mut holdout = false;
    let mut articles = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/wikipedia/articles");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value =
            |name: &str| args.next().ok_or_else(|| anyhow::anyhow!("{name} needs a value\n{}", usage()));
        match a.as_str() {
            "--edit" => {
                let v = value("--edit")?;
                edit =
                    Some(Edit::parse(&v).ok_or_else(|| anyhow::anyhow!("unknown row {v:?}\n{}", usage()))?);
            }
            "--seed" => seed = value("--seed")?.parse()?,
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--scale" => {
                let v = value("--scale")?;
                scale =
                    Scale::parse(&v).ok_or_else(|| anyhow::anyhow!("--scale is full or small, not {v:?}"))?;
            }
            "--holdout" => holdout = true,
            "--articles" => articles = PathBuf::from(value("--articles")?),
            "--list" => {
                for e in Edit::ALL {
                    println!("{}\t{}", e.name(), e.describe());
                }
                return Ok(());
            }
            "-h" | "--help" => {
                println!("{}", usage());
                return Ok(());
            }
            x => anyhow::bail!("unknown argument {x:?}\n{}", usage()),
        }
    }
    let (Some(edit), Some(out)) = (edit, out) else { anyhow::bail!("{}", usage()) };
    let g = generate(&articles, &out, &Spec { edit, seed, holdout, scale })?;
    let t = &g.truth;
    println!("edit\t{} ({})", edit.name(), edit.describe());
    println!("labelset_sources\t{}", g.labelset_dir.display());
    println!("web\t{}", g.web_dir.display());
    println!("url_prefix\t{}", t.url_prefix);
    println!("truth\t{}", g.truth_path.display());
    println!(
        "counts\t{} hosts ({} copying), {} directories ({} copying), {} pages ({} copying labeled articles), {} labeled / {} unlabeled articles",
        t.hosts.len(),
        t.copying_hosts().len(),
        t.all_dirs().len(),
        t.copying_dirs().len(),
        t.pages(),
        t.copied_pages(),
        t.labeled_articles.len(),
        t.unlabeled_articles.len()
    );
    Ok(())
}
