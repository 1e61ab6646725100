//! Input listings (`ditto scan --input-list warc.paths.gz --base-url URL`): one path a line,
//! plain or gzipped (by content), as Common Crawl publishes its `warc.paths.gz`.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Whether an input names a remote file (`http://` or `https://`).
pub fn is_url(input: &str) -> bool {
    let lower = input.get(..8).unwrap_or(input).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// The inputs a listing names, in order. Blank lines and `#` comments are passed over. A line
/// that is a URL is taken as it is; another is joined to `base_url` when one is given, and is
/// a local path otherwise.
pub fn read_listing(path: &Path, base_url: Option<&str>) -> Result<Vec<PathBuf>> {
    let file = std::fs::File::open(path).with_context(|| format!("input list {}", path.display()))?;
    let mut reader = BufReader::new(file);
    let gzipped = reader.fill_buf().map(|b| b.starts_with(&[0x1f, 0x8b])).unwrap_or(false);
    let text: Box<dyn Read> =
        if gzipped { Box::new(flate2::bufread::MultiGzDecoder::new(reader)) } else { Box::new(reader) };
    let mut out = Vec::new();
    for (n, line) in BufReader::new(text).lines().enumerate() {
        let line = line.with_context(|| format!("input list {}, line {}", path.display(), n + 1))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.chars().any(char::is_control) {
            bail!("input list {}, line {}: control characters in a path", path.display(), n + 1);
        }
        out.push(PathBuf::from(join(base_url, line)));
    }
    if out.is_empty() {
        bail!("input list {} names no inputs", path.display());
    }
    Ok(out)
}

fn join(base_url: Option<&str>, line: &str) -> String {
    match base_url {
        Some(base) if !is_url(line) => {
            format!("{}/{}", base.trim_end_matches('/'), line.trim_start_matches('/'))
        }
        _ => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn plain_and_gzipped_listings_join_the_base_url() {
        let dir = tempfile::tempdir().expect("tempdir");
        let body = "# Common Crawl style\ncrawl-data/a.warc.gz\n\n/crawl-data/b.warc.gz\nhttps://other.example/c.warc.gz\n";
        let plain = dir.path().join("paths.txt");
        std::fs::write(&plain, body).expect("write");
        let gz = dir.path().join("paths.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(body.as_bytes()).expect("gzip");
        std::fs::write(&gz, enc.finish().expect("gzip")).expect("write");
        for p in [&plain, &gz] {
            let got = read_listing(p, Some("http://127.0.0.1:8080/")).expect("listing");
            let got: Vec<_> = got.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            assert_eq!(
                got,
                [
                    "http://127.0.0.1:8080/crawl-data/a.warc.gz",
                    "http://127.0.0.1:8080/crawl-data/b.warc.gz",
                    "https://other.example/c.warc.gz"
                ]
            );
        }
        let local = read_listing(&plain, None).expect("listing");
        assert_eq!(local[0], PathBuf::from("crawl-data/a.warc.gz"));
    }

    #[test]
    fn an_empty_listing_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("empty.txt");
        std::fs::write(&p, "# nothing\n\n").expect("write");
        let err = read_listing(&p, None).expect_err("empty");
        assert!(err.to_string().contains("names no inputs"), "{err}");
    }
}
