//! Output files that appear whole or not at all: reports, exports, suggestion lists.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use anyhow::{Context, Result};

/// Write through a temporary file beside `path`, synced and renamed into place when
/// complete; the temporary file is removed on error, so `path` is never left half written.
pub fn write_atomically(path: &Path, f: impl FnOnce(File) -> Result<()>) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> Result<()> {
        f(File::create(&tmp)?)?;
        File::open(&tmp)?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}

/// [`write_atomically`] through a buffer.
pub fn write_buffered_atomically(
    path: &Path,
    f: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<()> {
    write_atomically(path, |file| {
        let mut w = BufWriter::new(file);
        f(&mut w)?;
        w.into_inner().map_err(|e| e.into_error())?;
        Ok(())
    })
}
