//! `ditto labelset merge`: label sets built apart (per part of a dump, on several machines)
//! combined into one, with the entries one build over all their inputs gives.
//!
//! The sources of the second file follow those of the first, and so on; a digest found in
//! several files keeps the lowest source id, the first file's, as the single build keeps the
//! first source that gave it. Counts add up; `duplicate_chunks` is recounted over the whole.
//! Kind, normalization and `min_chars` must agree.

use std::path::Path;

use crate::builder::LabelSetBuilder;
use crate::format::{Header, LabelSet};
use crate::{Error, Result};

/// What a merge writes.
pub struct MergeOptions<'a> {
    /// Name recorded (default: the first file's).
    pub name: Option<&'a str>,
    /// Description recorded (default: the inputs' descriptions joined with `; `).
    pub description: Option<&'a str>,
    /// Memory for the chunk table and the passage pairs, and where spilled runs go
    /// ([`LabelSetBuilder::memory`]).
    pub memory: Option<(u64, &'a Path)>,
}

/// Merge `inputs` (in this order) into `output`. Each input's checksums are verified first.
pub fn merge(inputs: &[&Path], output: &Path, opts: &MergeOptions<'_>) -> Result<Header> {
    let Some(first) = inputs.first() else {
        return Err(Error::Input {
            path: output.into(),
            reason: "nothing to merge: no input label sets".into(),
        });
    };
    let first = LabelSet::open_verified(first)?;
    let h = first.header().clone();
    let description = match opts.description {
        Some(d) => d.to_string(),
        None => {
            let mut all = vec![h.description.clone()];
            for p in &inputs[1..] {
                all.push(LabelSet::open(p)?.header().description.clone());
            }
            all.join("; ")
        }
    };
    let mut b = LabelSetBuilder::new(
        opts.name.unwrap_or(&h.name),
        first.kind(),
        first.normalization(),
        h.min_chars,
        &description,
    )
    .bits_per_key(h.filter.bits_per_key)
    // The first part's passage parameters; a part without passages makes the merge exact-only.
    .passages(h.passages.as_ref().map(|p| p.params()))
    .passage_max_documents(
        h.passages.as_ref().map_or(crate::passages::DEFAULT_MAX_DOCUMENTS, |p| p.max_documents),
    );
    if let Some((bytes, tmp)) = opts.memory {
        b = b.memory(bytes, tmp);
    }
    b.merge_from(&first)?;
    drop(first);
    for p in &inputs[1..] {
        let ls = LabelSet::open_verified(p)?;
        b.merge_from(&ls)?;
    }
    b.write(output)
}
