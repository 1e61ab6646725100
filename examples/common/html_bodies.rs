//! The HTML bodies a scan cleans as HTML, for the examples and the bench that compare stages
//! with the bare tokenizer on the same bytes (`scan_vs_tokenizer`, `sketch_word_pass`,
//! `benches/scan_throughput.rs`).

use std::path::Path;

use crawler::warc::WarcPages;

/// The `text/html` 2xx records of a WARC (read as a scan reads them), or every `.html` /
/// `.htm` file under a directory, in sorted path order.
pub fn html_bodies(input: &Path) -> Vec<Vec<u8>> {
    if input.is_dir() {
        let mut paths = Vec::new();
        let mut stack = vec![input.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read input directory").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "html" || x == "htm") {
                    paths.push(p);
                }
            }
        }
        paths.sort();
        paths.iter().map(|p| std::fs::read(p).expect("read page")).collect()
    } else {
        warc_html_pages(input).into_iter().map(|p| p.body).collect()
    }
}

/// The `text/html` 2xx pages of a WARC file, in file order, as a scan reads them.
pub fn warc_html_pages(path: &Path) -> Vec<detector::Page> {
    WarcPages::open(path)
        .expect("open WARC")
        .filter_map(Result::ok)
        .filter(|p| {
            (200..300).contains(&p.status)
                && p.content_type.as_deref().is_some_and(|c| {
                    c.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("text/html")
                })
        })
        .collect()
}
