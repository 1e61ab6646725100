//! Parquet exports (cargo feature `parquet`): `ditto report --format parquet -o FILE` and
//! `ditto export chunks --format parquet -o DIR_OR_FILE`. Schemas are documented in
//! docs/report-schema.md; files are Snappy-compressed and readable by DuckDB, pandas/pyarrow
//! and Spark.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use arrow_array::builder::{BooleanBuilder, ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, ListArray, RecordBatch, StringArray, StructArray, UInt32Array,
    UInt64Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::report::rows::{ReportRow, ThresholdInfo};

fn props() -> WriterProperties {
    WriterProperties::builder().set_compression(Compression::SNAPPY).build()
}

fn source_fields() -> Fields {
    Fields::from(vec![
        Field::new("id", DataType::UInt32, false),
        Field::new("title", DataType::Utf8, true),
        Field::new("url", DataType::Utf8, true),
        Field::new("chunks", DataType::UInt64, false),
    ])
}

fn evidence_fields() -> Fields {
    Fields::from(vec![
        Field::new("url", DataType::Utf8, false),
        Field::new("passage", DataType::Utf8, false),
        Field::new("source_id", DataType::UInt32, false),
        Field::new("source_title", DataType::Utf8, true),
        Field::new("source_url", DataType::Utf8, true),
        Field::new("match", DataType::Utf8, false),
        Field::new("source_passage", DataType::Utf8, true),
        Field::new("differs", DataType::Struct(differs_fields()), true),
    ])
}

/// `evidence[].differs`: the words on the page only and in the source only.
fn differs_fields() -> Fields {
    Fields::from(vec![
        Field::new("page_only", words_list(), false),
        Field::new("source_only", words_list(), false),
    ])
}

fn words_list() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, false)))
}

/// One list of words per item (`None`: an empty list under a null parent).
fn word_lists<'a>(it: impl Iterator<Item = Option<&'a [String]>>) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new()).with_field(Arc::new(Field::new(
        "item",
        DataType::Utf8,
        false,
    )));
    for words in it {
        for w in words.unwrap_or_default() {
            b.values().append_value(w);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// The `differs` column of evidence items: null where the item has none.
fn differs_column(ev: &[&crate::report::rows::EvidenceRow]) -> Result<ArrayRef> {
    let page_only = word_lists(ev.iter().map(|e| e.differs.as_ref().map(|d| d.page_only.as_slice())));
    let source_only = word_lists(ev.iter().map(|e| e.differs.as_ref().map(|d| d.source_only.as_slice())));
    let valid = NullBuffer::from(ev.iter().map(|e| e.differs.is_some()).collect::<Vec<bool>>());
    Ok(Arc::new(StructArray::try_new(differs_fields(), vec![page_only, source_only], Some(valid))?))
}

fn list_of(fields: Fields) -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Struct(fields), false)))
}

/// The schema of `ditto report --format parquet`: the JSONL fields, `sources` and `evidence`
/// as `list<struct>`, `near_duplicate_of` null where the JSONL leaves it out.
pub fn report_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("level", DataType::Utf8, false),
        Field::new("neighborhood", DataType::Utf8, false),
        Field::new("badness", DataType::Float64, false),
        Field::new("threshold", DataType::Float64, false),
        Field::new("threshold_kind", DataType::Utf8, false),
        Field::new("pages", DataType::UInt64, false),
        Field::new("chunks", DataType::UInt64, false),
        Field::new("labeled_chunks", DataType::UInt64, false),
        Field::new("sources", list_of(source_fields()), false),
        Field::new("evidence", list_of(evidence_fields()), false),
        Field::new("near_duplicate_of", DataType::Utf8, true),
        Field::new("words", DataType::UInt32, true),
        Field::new("covered_words", DataType::UInt32, true),
        Field::new("noindex", DataType::Boolean, true),
        Field::new("canonical", DataType::Utf8, true),
    ]))
}

fn strings<'a>(it: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(it))
}

fn opt_strings<'a>(it: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(it.collect::<StringArray>())
}

fn list(fields: Fields, lengths: impl Iterator<Item = usize>, children: Vec<ArrayRef>) -> Result<ArrayRef> {
    let values = StructArray::try_new(fields.clone(), children, None)?;
    let item = Arc::new(Field::new("item", DataType::Struct(fields), false));
    let offsets = offsets(lengths)?;
    Ok(Arc::new(ListArray::try_new(item, offsets, Arc::new(values), None)?))
}

fn offsets(lengths: impl Iterator<Item = usize>) -> Result<OffsetBuffer<i32>> {
    let mut offs = Vec::new();
    let mut at = 0i32;
    offs.push(at);
    for n in lengths {
        at = at.checked_add(i32::try_from(n)?).context("list longer than 2^31 items")?;
        offs.push(at);
    }
    Ok(OffsetBuffer::new(offs.into()))
}

/// The report rows as one record batch.
pub fn report_batch(rows: &[ReportRow]) -> Result<RecordBatch> {
    let src: Vec<_> = rows.iter().flat_map(|r| r.sources.iter()).collect();
    let ev: Vec<_> = rows.iter().flat_map(|r| r.evidence.iter()).collect();
    let sources = list(
        source_fields(),
        rows.iter().map(|r| r.sources.len()),
        vec![
            Arc::new(UInt32Array::from_iter_values(src.iter().map(|s| s.id))),
            opt_strings(src.iter().map(|s| s.title.as_deref())),
            opt_strings(src.iter().map(|s| s.url.as_deref())),
            Arc::new(UInt64Array::from_iter_values(src.iter().map(|s| s.chunks))),
        ],
    )?;
    let evidence = list(
        evidence_fields(),
        rows.iter().map(|r| r.evidence.len()),
        vec![
            strings(ev.iter().map(|e| e.url.as_str())),
            strings(ev.iter().map(|e| e.passage.as_str())),
            Arc::new(UInt32Array::from_iter_values(ev.iter().map(|e| e.source_id))),
            opt_strings(ev.iter().map(|e| e.source_title.as_deref())),
            opt_strings(ev.iter().map(|e| e.source_url.as_deref())),
            strings(ev.iter().map(|e| e.match_kind)),
            opt_strings(ev.iter().map(|e| e.source_passage.as_deref())),
            differs_column(&ev)?,
        ],
    )?;
    let columns: Vec<ArrayRef> = vec![
        strings(rows.iter().map(|r| r.level)),
        strings(rows.iter().map(|r| r.neighborhood.as_str())),
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.badness))),
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.threshold))),
        strings(rows.iter().map(|r| r.threshold_kind)),
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.pages))),
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.chunks))),
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.labeled_chunks))),
        sources,
        evidence,
        opt_strings(rows.iter().map(|r| r.near_duplicate_of.as_deref())),
        Arc::new(UInt32Array::from(rows.iter().map(|r| r.words).collect::<Vec<_>>())),
        Arc::new(UInt32Array::from(rows.iter().map(|r| r.covered_words).collect::<Vec<_>>())),
        Arc::new(rows.iter().map(|r| r.noindex.then_some(true)).collect::<BooleanArray>()),
        opt_strings(rows.iter().map(|r| r.canonical.as_deref())),
    ];
    Ok(RecordBatch::try_new(report_schema(), columns)?)
}

/// Write report rows to `path` (replaced when complete). The threshold's population
/// (kind, mean, σ) is recorded in the file's key-value metadata as `ditto.threshold` (JSON).
pub fn write_report(path: &Path, th: &ThresholdInfo, rows: &[ReportRow]) -> Result<()> {
    let batch = report_batch(rows)?;
    crate::report::output::write_atomically(path, |f| {
        let mut w = ArrowWriter::try_new(f, report_schema(), Some(props()))?;
        w.append_key_value_metadata(parquet::file::metadata::KeyValue::new(
            "ditto.threshold".to_string(),
            serde_json::to_string(th)?,
        ));
        w.write(&batch)?;
        w.close()?;
        Ok(())
    })
}

/// The schema of `ditto export chunks --format parquet`.
pub fn chunks_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("chunk_sha1", DataType::Utf8, false),
        Field::new("url", DataType::Utf8, false),
        Field::new("host", DataType::Utf8, false),
        Field::new("neighborhood", DataType::Utf8, false),
        Field::new("stop", DataType::Boolean, false),
    ]))
}

/// Rows per record batch (and bound on memory while exporting).
const CHUNK_BATCH: usize = 64 * 1024;

/// Streams chunk occurrences into a Parquet file in batches of [`CHUNK_BATCH`] rows.
pub struct ChunkWriter {
    w: ArrowWriter<File>,
    cols: [StringBuilder; 4],
    stop: BooleanBuilder,
    pending: usize,
    pub rows: u64,
}

impl ChunkWriter {
    pub fn new(f: File) -> Result<ChunkWriter> {
        Ok(ChunkWriter {
            w: ArrowWriter::try_new(f, chunks_schema(), Some(props()))?,
            cols: std::array::from_fn(|_| StringBuilder::new()),
            stop: BooleanBuilder::new(),
            pending: 0,
            rows: 0,
        })
    }

    pub fn push(
        &mut self,
        chunk_sha1: &str,
        url: &str,
        host: &str,
        neighborhood: &str,
        stop: bool,
    ) -> Result<()> {
        for (b, v) in self.cols.iter_mut().zip([chunk_sha1, url, host, neighborhood]) {
            b.append_value(v);
        }
        self.stop.append_value(stop);
        self.pending += 1;
        self.rows += 1;
        if self.pending >= CHUNK_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        let mut columns: Vec<ArrayRef> =
            self.cols.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef).collect();
        columns.push(Arc::new(self.stop.finish()));
        self.w.write(&RecordBatch::try_new(chunks_schema(), columns)?)?;
        self.pending = 0;
        Ok(())
    }

    /// Write the remaining rows and the footer; returns the rows written.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        self.w.close()?;
        Ok(self.rows)
    }
}

/// `-o DIR_OR_FILE`: an existing directory, or a path ending in `/`, gets
/// `part-00000.parquet` inside it (the layout Spark and DuckDB read as one data set);
/// anything else is the file itself.
pub fn chunks_output_file(output: &Path) -> Result<PathBuf> {
    let s = output.as_os_str().to_string_lossy();
    if output.is_dir() || s.ends_with('/') || s.ends_with(std::path::MAIN_SEPARATOR) {
        std::fs::create_dir_all(output).with_context(|| format!("creating {}", output.display()))?;
        Ok(output.join("part-00000.parquet"))
    } else {
        Ok(output.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::rows::{EvidenceRow, SourceRef};
    use arrow_array::Array;

    #[test]
    fn report_batch_has_one_row_per_report_row_and_nested_lists() {
        let row = |n: &str, s: usize| ReportRow {
            level: "neighborhood",
            neighborhood: n.into(),
            badness: 0.5,
            threshold: 0.1,
            threshold_kind: "mean+sd",
            pages: 2,
            chunks: 10,
            labeled_chunks: 5,
            sources: (0..s)
                .map(|i| SourceRef { id: i as u32, title: None, url: Some("u".into()), chunks: 1 })
                .collect(),
            evidence: vec![EvidenceRow {
                url: n.into(),
                passage: "p".into(),
                source_id: 0,
                source_title: Some("t".into()),
                source_url: None,
                match_kind: "exact",
                source_passage: None,
                differs: None,
            }],
            near_duplicate_of: None,
            words: None,
            covered_words: None,
            noindex: false,
            canonical: None,
        };
        let mut syndicated = row("http://b/", 0);
        syndicated.noindex = true;
        syndicated.canonical = Some("http://original/".into());
        let b = report_batch(&[row("http://a/", 2), syndicated]).unwrap();
        assert_eq!(b.num_rows(), 2);
        let noindex = b.column(13).as_any().downcast_ref::<BooleanArray>().unwrap();
        assert!(noindex.is_null(0) && noindex.value(1));
        let canonical = b.column(14).as_any().downcast_ref::<StringArray>().unwrap();
        assert!(canonical.is_null(0));
        assert_eq!(canonical.value(1), "http://original/");
        let sources = b.column(8).as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(sources.value_length(0), 2);
        assert_eq!(sources.value_length(1), 0);
        assert_eq!(sources.values().len(), 2);
    }
}
