//! `ditto export chunks|files`: every chunk occurrence (or page) of a store with its URL,
//! host and neighborhood, for the cluster path to count.

#[cfg(feature = "parquet")]
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use detector::fingerprint::hex;
use detector::StopList;
use labelsets::StopChunks;

use super::corpus::{for_each_page, Corpus};
use crate::labelset::{load_stops, store_normalization};
use crate::report::output::write_buffered_atomically;

/// The file format of `ditto export chunks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ExportFormat {
    Csv,
    Parquet,
}

/// What `ditto export` writes: one row per chunk occurrence, or one per page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportRows {
    Chunks,
    Files,
}

/// Settings of `ditto export chunks|files`.
#[derive(Debug, Clone)]
pub struct ExportConfig {
    pub rows: ExportRows,
    /// The store to export.
    pub store: PathBuf,
    pub format: ExportFormat,
    /// The file to write (for Parquet also a directory).
    pub output: PathBuf,
    /// Stop-chunk lists for the `stop` column, besides the built-in one.
    pub stop_paths: Vec<PathBuf>,
    /// Leave the built-in list out of the `stop` column.
    pub no_default_stops: bool,
}

/// A CSV field (RFC 4180 quoting when needed).
fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

/// Rows written by [`export_chunks_csv`].
pub fn export_chunks_csv(store_path: &Path, stops: &StopChunks, w: &mut impl Write) -> Result<u64> {
    writeln!(w, "chunk_sha1,url,host,neighborhood,stop")?;
    let mut rows = 0u64;
    for_each_page(&Corpus::Store(store_path.to_path_buf()), false, |p| {
        let url = csv_field(&p.url).into_owned();
        let host = csv_field(detector::page::host_of(&p.url)).into_owned();
        let hood = detector::neighborhoods(&p.url).pop().unwrap_or_default();
        let hood = csv_field(&hood).into_owned();
        for h in &p.chunks {
            writeln!(w, "{},{url},{host},{hood},{}", hex(h), stops.is_stop(h))?;
            rows += 1;
        }
        Ok(())
    })?;
    Ok(rows)
}

/// The rows of [`export_chunks_csv`] as Parquet (schema in docs/report-schema.md).
#[cfg(feature = "parquet")]
pub fn export_chunks_parquet(store_path: &Path, stops: &StopChunks, f: File) -> Result<u64> {
    let mut w = crate::report::parquet::ChunkWriter::new(f)?;
    for_each_page(&Corpus::Store(store_path.to_path_buf()), false, |p| {
        let host = detector::page::host_of(&p.url);
        let hood = detector::neighborhoods(&p.url).pop().unwrap_or_default();
        for h in &p.chunks {
            w.push(&hex(h), &p.url, host, &hood, stops.is_stop(h))?;
        }
        Ok(())
    })?;
    w.finish()
}

/// One row per page of a store: file SHA-1, URL, host, neighborhood, stop (CSV); pages in
/// URL order, as `ditto discover --files` counts them. Returns the rows written.
pub fn export_files_csv(store_path: &Path, stops: &StopChunks, w: &mut impl Write) -> Result<u64> {
    writeln!(w, "file_sha1,url,host,neighborhood,stop")?;
    let mut rows = 0u64;
    let st = for_each_page(&Corpus::Store(store_path.to_path_buf()), true, |p| {
        let url = csv_field(&p.url).into_owned();
        let host = csv_field(detector::page::host_of(&p.url)).into_owned();
        let hood = detector::neighborhoods(&p.url).pop().unwrap_or_default();
        writeln!(
            w,
            "{},{url},{host},{},{}",
            hex(&p.file_hash),
            csv_field(&hood),
            stops.is_stop(&p.file_hash)
        )?;
        rows += 1;
        Ok(())
    })?;
    for e in st.errors.iter().take(5) {
        eprintln!("error: {e}");
    }
    Ok(rows)
}

/// `ditto export`.
pub fn export(cfg: &ExportConfig) -> Result<()> {
    let files = cfg.rows == ExportRows::Files;
    if files && cfg.format != ExportFormat::Csv {
        bail!("ditto export files writes CSV only; use --format csv");
    }
    if cfg.format == ExportFormat::Parquet && !cfg!(feature = "parquet") {
        bail!("{}; use --format csv", crate::report::PARQUET_MISSING);
    }
    let store = crate::analysis::open_store_for_reading(&cfg.store)?;
    let norm = store_normalization(&store)?;
    drop(store);
    let stops = load_stops(norm, &cfg.stop_paths, cfg.no_default_stops)?;
    let mut rows = 0;
    if files {
        write_buffered_atomically(&cfg.output, |w| {
            rows = export_files_csv(&cfg.store, &stops, w)?;
            Ok(())
        })?;
        eprintln!("{rows} pages written to {}", cfg.output.display());
        return Ok(());
    }
    #[cfg(feature = "parquet")]
    if cfg.format == ExportFormat::Parquet {
        let path = crate::report::parquet::chunks_output_file(&cfg.output)?;
        crate::report::output::write_atomically(&path, |f| {
            rows = export_chunks_parquet(&cfg.store, &stops, f)?;
            Ok(())
        })?;
        eprintln!("{rows} chunk occurrences written to {}", path.display());
        return Ok(());
    }
    write_buffered_atomically(&cfg.output, |w| {
        rows = export_chunks_csv(&cfg.store, &stops, w)?;
        Ok(())
    })?;
    eprintln!("{rows} chunk occurrences written to {}", cfg.output.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field("http://a/b"), "http://a/b");
        assert_eq!(csv_field("http://a/b,c"), "\"http://a/b,c\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
