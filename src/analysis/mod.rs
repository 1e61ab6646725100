//! Analyses over a finished store: near-replicas and recrawl plans, novel text, quilts,
//! origins, discovery of frequent chunks, and the bounded-memory counting they share.

pub mod counting;
pub mod discover;
pub mod novel;
pub mod origins;
pub mod quilts;
pub mod recrawl;
pub mod replicas;

use std::path::Path;

/// Open an existing store to read it (every command but `scan`, `crawl` and `demo`): a
/// missing path or one that is not a ditto store is an error; while another ditto holds the
/// store, a consistent snapshot it serves is read instead, and stderr says so
/// (`store::lifecycle`).
pub fn open_store_for_reading(path: &Path) -> anyhow::Result<store::Store> {
    let store = store::Store::open_for_reading(path)?;
    if let Some(h) = store.snapshot_of() {
        eprintln!("store in use by {h}: reading a consistent snapshot it served of {}", path.display());
    }
    Ok(store)
}

/// Write `value` as pretty JSON to `path` (`--stats-json` and the like), through a buffer:
/// serde_json writes each token on its own, one system call apiece on a bare file.
pub fn write_json_file(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let f = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = std::io::BufWriter::new(f);
    serde_json::to_writer_pretty(&mut w, value)?;
    w.flush().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
