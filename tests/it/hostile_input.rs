//! Hostile input that used to pass silently (issue 26, items 5 and 6), through `ditto scan`:
//! a WARC record cut by its own Content-Length, FIFOs in a scanned folder, file names that
//! are not UTF-8. Each is counted in `--stats-json` and named on stderr.

use std::path::Path;

use crate::common::*;

/// `ditto scan` of `inputs` into a new store, exit `code` expected (0, or 3 when some input
/// could not be read); returns the stats JSON and stderr.
fn scan(dir: &Path, extra: &[&str], inputs: &[&Path], code: i32) -> (serde_json::Value, String) {
    let labelset = wikipedia_labelset(dir);
    let stats = dir.join("stats.json");
    let mut args = extra.to_vec();
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    let stderr = scan_with_stats(&dir.join("scan.db"), &labelset, &stats, &args, code);
    (read_stats(&stats), stderr)
}

fn stored_urls(db: &Path) -> Vec<String> {
    let store = store::Store::open(db).unwrap();
    let mut urls: Vec<String> = store.pages().map(|p| p.unwrap().url).collect();
    urls.sort();
    urls
}

/// A `response` record for `url` with `body`, whose Content-Length says `declared` (the
/// real length when None).
fn response(url: &str, body: &str, declared: Option<usize>) -> Vec<u8> {
    let block = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{url}>\r\nWARC-Date: 2014-01-27T17:12:38Z\r\n\
         WARC-Target-URI: {url}\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
        declared.unwrap_or(block.len())
    )
    .into_bytes()
}

/// Issue 26, item 5: a record whose Content-Length is half its real length was stored cut
/// (18 chunks instead of 36), exit 0, nothing said. Now the page is skipped, counted under
/// `warc_length_mismatch`, and the error names the file and the record's offset.
#[test]
fn a_record_cut_by_its_content_length_is_skipped_counted_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let paragraphs: String = (0..36).map(|i| format!("<p>Paragraph {i} of a page whose record lies about its length, long enough to be a chunk of its own.</p>\n")).collect();
    let body = format!("<html><body>{paragraphs}</body></html>");
    let good = response(
        "http://a.test/good.html",
        "<html><body><p>A good page after the bad one.</p></body></html>",
        None,
    );
    // The record's block is its HTTP head and body; Content-Length claims half of it.
    let whole = response("http://a.test/cut.html", &body, None);
    let block_len = whole.len() - whole.windows(4).position(|w| w == b"\r\n\r\n").unwrap() - 4 - 4;
    let cut = response("http://a.test/cut.html", &body, Some(block_len / 2));
    let mut warc = response("http://a.test/first.html", "<html><body><p>First.</p></body></html>", None);
    let offset = warc.len();
    warc.extend(&cut);
    warc.extend(&good);
    let path = tmp.path().join("lying-length.warc");
    std::fs::write(&path, &warc).unwrap();

    let (stats, stderr) = scan(tmp.path(), &[], &[&path], 3);
    eprintln!("{stderr}");
    assert_eq!(stats["skipped"]["warc_length_mismatch"], 1, "{stats}");
    assert_eq!(
        stored_urls(&tmp.path().join("scan.db")),
        ["http://a.test/first.html", "http://a.test/good.html"]
    );
    let expected =
        format!("lying-length.warc: Content-Length does not match the record block at offset {offset}");
    assert!(stderr.contains(&expected), "stderr lacks {expected:?}:\n{stderr}");
    let samples = stats["error_samples"].to_string();
    assert!(samples.contains(&format!("at offset {offset}")), "{samples}");
}

/// Issue 26, item 6: FIFOs in a scanned folder were skipped without a count; file names
/// that are not UTF-8 became U+FFFD, so two files could share a URL.
#[cfg(unix)]
#[test]
fn fifos_are_counted_and_non_utf8_names_keep_their_own_urls() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site").join("b.test");
    std::fs::create_dir_all(&site).unwrap();
    let page = |t: &str| {
        format!("<html><body><p>{t}: a page of its own, with a paragraph long enough.</p></body></html>")
    };
    std::fs::write(site.join(std::ffi::OsStr::from_bytes(b"r\xe9sum\xe9.html")), page("Latin-1 name"))
        .unwrap();
    std::fs::write(
        site.join(std::ffi::OsStr::from_bytes(b"r\xe8sum\xe8.html")),
        page("another Latin-1 name"),
    )
    .unwrap();
    let made = std::process::Command::new("mkfifo").arg(site.join("pipe.html")).status();
    let fifo = made.is_ok_and(|s| s.success());

    let (stats, _) = scan(tmp.path(), &["--url-prefix", "http://"], &[&tmp.path().join("site")], 0);
    let urls = stored_urls(&tmp.path().join("scan.db"));
    assert_eq!(urls, ["http://b.test/r%E8sum%E8.html", "http://b.test/r%E9sum%E9.html"]);
    if fifo {
        assert_eq!(stats["skipped"]["not_regular_file"], 1, "{stats}");
    }
}

/// A capture repeated in one WARC (same URL, same body) is stored once, whether the repeat
/// falls in the same store batch or a later one, and a store that held no page when the scan
/// began (the filter then skips its per-page lookup) counts the repeat like any other
/// already-stored page. Scanning the same WARC again stores nothing new.
#[test]
fn a_capture_repeated_in_one_scan_is_stored_once() {
    let tmp = tempfile::tempdir().unwrap();
    let page = |t: &str| {
        format!(
            "<html><body><p>{t}: a paragraph long enough to be a chunk of its own here.</p></body></html>"
        )
    };
    let mut warc = response("http://r.test/a.html", &page("first"), None);
    // More pages than one store batch (256) between the repeats.
    for i in 0..300 {
        warc.extend(response(&format!("http://r.test/f{i}.html"), &page(&format!("filler {i}")), None));
    }
    warc.extend(response("http://r.test/a.html", &page("first"), None));
    warc.extend(response("http://r.test/a.html", &page("first"), None));
    warc.extend(response("http://r.test/a.html", &page("changed"), None));
    let path = tmp.path().join("repeats.warc");
    std::fs::write(&path, &warc).unwrap();

    let (stats, stderr) = scan(tmp.path(), &[], &[&path], 0);
    assert_eq!(stats["pages_written"], 302, "{stats}\n{stderr}");
    assert_eq!(stats["skipped"]["already_stored"], 2, "{stats}");
    let urls = stored_urls(&tmp.path().join("scan.db"));
    assert_eq!(urls.len(), 302);
    assert_eq!(urls.iter().filter(|u| *u == "http://r.test/a.html").count(), 2, "two captures of a.html");

    let (again, _) = scan(tmp.path(), &[], &[&path], 0);
    assert_eq!(again["pages_written"], 0, "{again}");
    assert_eq!(again["skipped"]["already_stored"], 304, "{again}");
    assert_eq!(stored_urls(&tmp.path().join("scan.db")).len(), 302);
}
