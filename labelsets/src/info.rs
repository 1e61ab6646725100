//! `ditto labelset info FILE`: the header and counts as text or JSON.

use std::fmt::Write;

use serde_json::json;

use crate::format::LabelSet;
use crate::{filter, Header};

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Human-readable summary of an opened label set.
pub fn render_text(set: &LabelSet) -> String {
    let mut s =
        format!("file:            {}\nsize:            {} bytes\n", set.path().display(), set.file_size());
    s.push_str(&render_header_text(set.header()));
    s
}

/// Human-readable summary of a header.
pub fn render_header_text(h: &Header) -> String {
    let c = &h.counts;
    let f = &h.filter;
    let mut s = String::new();
    let _ = writeln!(s, "name:            {}", h.name);
    let what = match h.kind {
        crate::Kind::Chunks => "chunks (L_c)",
        crate::Kind::Files => "files (L_f)",
    };
    let _ = writeln!(s, "kind:            {what}");
    let _ = writeln!(s, "normalization:   {}", h.normalization);
    let _ = writeln!(s, "min chars:       > {}", h.min_chars);
    let _ = writeln!(s, "description:     {}", h.description);
    let _ = writeln!(s, "created:         {} (unix seconds)", h.created);
    let _ = writeln!(s, "entries:         {} distinct", c.entries);
    let _ = writeln!(s, "sources:         {}", c.sources);
    let _ = writeln!(s, "documents read:  {}", c.documents);
    let _ = writeln!(s, "chunks seen:     {}", c.chunks_seen);
    let _ = writeln!(
        s,
        "too short:       {} ({:.1} %)",
        c.chunks_too_short,
        100.0 * ratio(c.chunks_too_short, c.chunks_seen)
    );
    let _ = writeln!(s, "duplicates:      {}", c.duplicate_chunks);
    let _ = writeln!(
        s,
        "filter:          {}, {} blocks = {} bytes, {} bits/key, k = {}, expected false positives {:.2} %",
        f.kind,
        f.blocks,
        f.blocks * filter::BLOCK_BYTES as u64,
        f.bits_per_key,
        f.k,
        100.0 * f.expected_fp_rate
    );
    let _ = writeln!(
        s,
        "exact table:     {} bytes, prefix index 2^{} buckets",
        h.sections.entries.len, h.sections.index_bits
    );
    let _ =
        writeln!(s, "sources table:   {} bytes", h.sections.source_offsets.len + h.sections.source_blob.len);
    match &h.passages {
        Some(p) => {
            let _ = writeln!(
                s,
                "passages:        {} distinct anchors ({}-word k-grams, 1 in {} kept by hash), {} bytes; \
                 {} stop passages (in more than {} sources) dropped, {} anchors seen",
                p.entries,
                p.words,
                p.modulus,
                p.filter.len + p.index.len + p.table.len,
                p.stop_passages,
                p.max_documents,
                p.anchors_seen
            );
            if !p.word_hash_current() {
                let _ = writeln!(
                    s,
                    "                 built with word hash {}, not this ditto's {}: not matched (exact \
                     chunks only); rebuild the label set for passage evidence",
                    p.word_hash,
                    detector::passages::WORD_HASH_VERSION
                );
            }
        }
        None => {
            let _ = writeln!(s, "passages:        none (exact chunks only: edited copies are not found)");
        }
    }
    s
}

/// JSON summary: the header plus path and file size.
pub fn render_json(set: &LabelSet) -> serde_json::Value {
    json!({
        "path": set.path().display().to_string(),
        "file_size": set.file_size(),
        "header": set.header(),
    })
}
