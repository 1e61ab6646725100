//! Read WARC files and print record counts, errors and payload throughput.
//!
//! `cargo run --release --example warc_read [FILE...]` (default: the big test file).

use std::time::Instant;

use crawler::warc::{record_to_page, WarcReader};

fn main() {
    let mut files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        files.push(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/warc/big/debian-docs-html.warc.gz")
                .to_string(),
        );
    }
    for file in files {
        let t = Instant::now();
        let mut reader = match WarcReader::open(&file) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{file}: {e}");
                continue;
            }
        };
        let (mut html, mut html_bytes, mut payload) = (0u64, 0u64, 0u64);
        for item in reader.by_ref() {
            match item {
                Ok(rec) => {
                    if !rec.issues.is_empty() {
                        println!("  record at {} ({}): issues {:?}", rec.offset, rec.warc_type, rec.issues);
                    }
                    if let Some(p) = record_to_page(&rec, &file) {
                        payload += p.body.len() as u64;
                        let is_html = rec.warc_type == "response"
                            && p.content_type.as_deref().is_some_and(|c| c.starts_with("text/html"));
                        if is_html {
                            html += 1;
                            html_bytes += p.body.len() as u64;
                        }
                    }
                }
                Err(e) => println!("  error: {e}"),
            }
        }
        let secs = t.elapsed().as_secs_f64();
        let s = reader.stats();
        println!(
            "{file}: {} records {:?}, errors {:?}, html {html} / {html_bytes} B, payload {payload} B, skipped {} B, {:.3} s, {:.1} MB/s payload",
            s.records,
            s.records_by_type,
            s.errors_by_kind,
            s.bytes_skipped,
            secs,
            payload as f64 / 1e6 / secs
        );
    }
}
