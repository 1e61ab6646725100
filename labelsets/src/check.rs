//! `ditto labelset check FILE`: every checksum and [`LabelSet::verify`]'s structural checks,
//! reported section by section (a scan stops at the first damage; a check says all of it).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::format::{LabelSet, SectionCheck, CHECKSUM_ALGORITHM, VERSION};
use crate::{Error, Result};

/// What `check` found.
#[derive(Debug)]
pub struct CheckReport {
    pub path: PathBuf,
    pub file_size: u64,
    pub entries: usize,
    pub sources: usize,
    /// The header's checksum, then every section's in file order.
    pub checksums: Vec<SectionCheck>,
    /// [`LabelSet::verify`]: order, source ids, filter membership, index, source strings.
    pub structure: Result<()>,
}

impl CheckReport {
    /// No checksum mismatch and the structure is sound.
    pub fn is_ok(&self) -> bool {
        self.checksums.iter().all(SectionCheck::ok) && self.structure.is_ok()
    }

    /// The damaged parts, e.g. `["entries checksum", "structure"]`.
    pub fn damaged(&self) -> Vec<String> {
        let mut d: Vec<String> =
            self.checksums.iter().filter(|c| !c.ok()).map(|c| format!("{} checksum", c.name())).collect();
        if self.structure.is_err() {
            d.push("structure".into());
        }
        d
    }

    /// One line per thing checked, then `result: ok` or `result: DAMAGED (…)`.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "file:            {}", self.path.display());
        let _ = writeln!(
            s,
            "size:            {} bytes, format version {VERSION}, checksums {CHECKSUM_ALGORITHM}",
            self.file_size
        );
        for c in &self.checksums {
            let what = format!("{}:", c.name());
            let verdict = if c.ok() {
                "ok".to_string()
            } else {
                format!("DAMAGED (the file records {}, the bytes hash to {})", c.expected, c.found)
            };
            let _ =
                writeln!(s, "{what:<16} bytes {}..+{}, checksum {}: {verdict}", c.offset, c.len, c.expected);
        }
        let verdict = match &self.structure {
            Ok(()) => "ok".to_string(),
            Err(Error::Corrupt { reason, .. }) => format!("DAMAGED ({reason})"),
            Err(e) => format!("DAMAGED ({e})"),
        };
        let _ = writeln!(
            s,
            "structure:       {} entries sorted, each in the filter and found through the index, \
             source ids in range; {} sources with valid offsets and UTF-8: {verdict}",
            self.entries, self.sources
        );
        if self.is_ok() {
            let _ = writeln!(s, "result:          ok");
        } else {
            let _ = writeln!(s, "result:          DAMAGED ({})", self.damaged().join(", "));
        }
        s
    }
}

/// Check `path` completely (O(file size)). `Err` when not even the header can be trusted
/// (bad magic, another version, truncated, header checksum mismatch, bad bounds): the error
/// says what, and nothing else can be checked.
pub fn check(path: impl AsRef<Path>) -> Result<CheckReport> {
    let set = LabelSet::open_unverified(path.as_ref())?;
    Ok(CheckReport {
        path: set.path().to_path_buf(),
        file_size: set.file_size(),
        entries: set.len(),
        sources: set.source_count(),
        checksums: set.checksums(),
        structure: set.verify(),
    })
}
