//! Parquet exports (`--features parquet`): `ditto report --format parquet` and `ditto export
//! chunks --format parquet` read back with the `parquet` crate's Arrow reader equal the JSONL
//! and CSV outputs row by row, and pyarrow (scripts/read_parquet.py, its own venv under
//! target/) reads the same row counts, columns and first rows.
#![cfg(feature = "parquet")]

mod common;

use std::fs;
use std::path::Path;

use arrow_array::{Array, BooleanArray, Float64Array, ListArray, RecordBatch, StringArray, StructArray};
use arrow_array::{UInt32Array, UInt64Array};
use common::*;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{json, Value};

fn read_batches(path: &Path) -> Vec<RecordBatch> {
    let f = fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap().map(|b| b.unwrap()).collect()
}

/// Cell `i` of an Arrow column as JSON (the types ditto writes).
fn cell(a: &dyn Array, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    let any = a.as_any();
    if let Some(s) = any.downcast_ref::<StringArray>() {
        json!(s.value(i))
    } else if let Some(x) = any.downcast_ref::<Float64Array>() {
        json!(x.value(i))
    } else if let Some(x) = any.downcast_ref::<UInt64Array>() {
        json!(x.value(i))
    } else if let Some(x) = any.downcast_ref::<UInt32Array>() {
        json!(x.value(i))
    } else if let Some(x) = any.downcast_ref::<BooleanArray>() {
        json!(x.value(i))
    } else if let Some(l) = any.downcast_ref::<ListArray>() {
        let v = l.value(i);
        Value::Array((0..v.len()).map(|j| cell(v.as_ref(), j)).collect())
    } else if let Some(s) = any.downcast_ref::<StructArray>() {
        let names = s.column_names();
        Value::Object(
            names.iter().zip(s.columns()).map(|(n, c)| (n.to_string(), cell(c.as_ref(), i))).collect(),
        )
    } else {
        panic!("unexpected type {:?}", a.data_type())
    }
}

/// Equal JSON, numbers within 1e-12 (serde_json's float parsing need not round-trip exactly).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_u64(), y.as_u64()) {
            (Some(x), Some(y)) => x == y,
            _ => (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() <= 1e-12,
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        // A field the JSONL leaves out is a null column.
        (Value::Object(x), Value::Object(y)) => x
            .keys()
            .chain(y.keys())
            .all(|k| same(x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null))),
        _ => a == b,
    }
}

fn rows_as_json(batches: &[RecordBatch]) -> Vec<Value> {
    let mut out = Vec::new();
    for b in batches {
        let schema = b.schema();
        for i in 0..b.num_rows() {
            out.push(Value::Object(
                schema
                    .fields()
                    .iter()
                    .zip(b.columns())
                    .map(|(f, c)| (f.name().clone(), cell(c.as_ref(), i)))
                    .collect(),
            ));
        }
    }
    out
}

/// RFC 4180 records (quoted fields may hold commas, quotes and line breaks).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    rows
}

/// pyarrow's view of `files`: one JSON object per file.
fn pyarrow_read(files: &[&Path]) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/read_parquet.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .args(files)
        .output()
        .expect("running python3 scripts/read_parquet.py");
    assert!(out.status.success(), "read_parquet.py failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Two hosts copying Wikipedia paragraphs (one with a comma and quotes in its file name) and a
/// host of its own text, scanned with the Wikipedia label set.
fn store(tmp: &Path) -> std::path::PathBuf {
    let site = tmp.join("site");
    let put = |rel: &str, body: String| {
        let p = site.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    };
    let albedo = article_paragraphs("Albedo", 100);
    let aardvark = article_paragraphs("Aardvark", 100);
    put("farm.test/a/one.html", format!("<p>Our own intro.</p>{}", albedo[..3].concat()));
    put("farm.test/a/two,\"q\".html", aardvark[..2].concat());
    put("farm.test/b/three.html", format!("{}<p>own words here</p>", albedo[3..5].concat()));
    put("mixed.test/x.html", format!("<p>Independent writing about birds.</p>{}", aardvark[2]));
    for i in 0..6 {
        put(
            &format!("clean.test/p{i}.html"),
            format!("<p>Entirely original page number {i}, nothing copied.</p>"),
        );
    }
    let labelset = wikipedia_labelset(tmp);
    let db = tmp.join("site.db");
    scan_site(&db, &labelset, &site);
    db
}

#[test]
fn parquet_exports_equal_jsonl_and_csv_and_pyarrow_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let db = store(tmp.path());
    let dbs = db.to_str().unwrap();
    let mut pyfiles = Vec::new();

    // Reports, neighborhood and page level, everything above 0.
    for level in ["neighborhood", "page"] {
        let base = ["report", "--store", dbs, "--level", level, "--threshold", "0", "--all"];
        let jsonl = run_ok(&[&base[..], &["--format", "jsonl"]].concat()).stdout;
        let want: Vec<Value> =
            String::from_utf8(jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert!(want.len() >= 2, "{level}: {} rows", want.len());
        assert!(want.iter().any(|r| !r["evidence"].as_array().unwrap().is_empty()));
        let pq = tmp.path().join(format!("report-{level}.parquet"));
        run_ok(&[&base[..], &["--format", "parquet", "-o", pq.to_str().unwrap()]].concat());
        let got = rows_as_json(&read_batches(&pq));
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!(same(g, w), "{level}:\n{g}\n{w}");
        }
        pyfiles.push((pq, want.len(), got[0].clone()));
    }

    // Chunk occurrences: CSV and Parquet (into a directory).
    let csv = tmp.path().join("chunks.csv");
    run_ok(&["export", "chunks", "--store", dbs, "-o", csv.to_str().unwrap()]);
    let records = parse_csv(&fs::read_to_string(&csv).unwrap());
    let header = &records[0];
    assert_eq!(header, &["chunk_sha1", "url", "host", "neighborhood", "stop"]);
    let dir = tmp.path().join("chunks");
    fs::create_dir_all(&dir).unwrap();
    run_ok(&["export", "chunks", "--store", dbs, "--format", "parquet", "-o", dir.to_str().unwrap()]);
    let pq = dir.join("part-00000.parquet");
    let got = rows_as_json(&read_batches(&pq));
    assert_eq!(got.len(), records.len() - 1);
    assert!(got.len() > 10);
    assert!(got.iter().any(|r| r["url"].as_str().unwrap().contains("/a/two")));
    for (g, r) in got.iter().zip(&records[1..]) {
        let want = json!({
            "chunk_sha1": r[0], "url": r[1], "host": r[2], "neighborhood": r[3], "stop": r[4] == "true",
        });
        assert_eq!(g, &want);
    }
    let first = got[0].clone();
    pyfiles.push((pq, got.len(), first));

    // An independent reader.
    let paths: Vec<&Path> = pyfiles.iter().map(|(p, _, _)| p.as_path()).collect();
    let seen = pyarrow_read(&paths);
    assert_eq!(seen.len(), 3);
    for ((_, rows, first), s) in pyfiles.iter().zip(&seen) {
        assert_eq!(s["rows"], json!(rows));
        let mut cols: Vec<&str> = first.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        cols.sort();
        let mut py_cols: Vec<&str> =
            s["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        py_cols.sort();
        assert_eq!(py_cols, cols);
        assert!(same(&s["first"], first), "{}\n{first}", s["first"]);
    }
    let report_cols: Vec<&str> =
        seen[0]["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(
        report_cols,
        [
            "level",
            "neighborhood",
            "badness",
            "threshold",
            "threshold_kind",
            "pages",
            "chunks",
            "labeled_chunks",
            "sources",
            "evidence",
            "near_duplicate_of",
            "words",
            "covered_words",
            "noindex",
            "canonical"
        ]
    );
    assert_eq!(seen[2]["columns"], json!(["chunk_sha1", "url", "host", "neighborhood", "stop"]));
    assert_eq!(seen[2]["types"], json!(["string", "string", "string", "string", "bool"]));
}
