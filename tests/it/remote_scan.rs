//! `ditto scan` of WARC files over HTTP (issue 24): URLs and `--input-list` listings read as
//! streams from a loopback server, broken transfers resumed with `Range`, finished files
//! recorded so that a rerun passes over them, and the same store contents as a local scan.

use std::io::Write;
use std::path::{Path, PathBuf};

use testweb::{FileServer, Transfers};

use crate::common::{ditto, read_stats, run_ok, scan_with_stats, shared_data, wikipedia_labelset};

/// The WARC files served: the Debian docs (9 MB, 1,388 pages) and two small ones.
fn warc_files(dir: &Path) -> Vec<&'static str> {
    let data = shared_data().join("warc");
    let files = [
        ("debian-docs-html.warc.gz", data.join("big/debian-docs-html.warc.gz")),
        ("iana.warc.gz", data.join("valid/pywb/iana.warc.gz")),
        ("cc.warc.gz", data.join("valid/jwarc/cc.warc.gz")),
    ];
    for (name, src) in &files {
        std::fs::copy(src, dir.join(name)).expect("copy a shared WARC");
    }
    files.iter().map(|(n, _)| *n).collect()
}

fn gzipped_listing(path: &Path, lines: &[&str]) {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for l in lines {
        writeln!(enc, "crawl-data/{l}").expect("gzip");
    }
    std::fs::write(path, enc.finish().expect("gzip")).expect("write listing");
}

/// What a store holds, as `ditto export chunks` (every chunk occurrence of every page),
/// `ditto export files` (every page's file hash) and `ditto stats` give it.
fn contents(store: &Path) -> String {
    let mut all = String::new();
    for what in ["chunks", "files"] {
        let csv = store.with_extension(format!("{what}.csv"));
        run_ok(&["export", what, "--store", store.to_str().unwrap(), "--output", csv.to_str().unwrap()]);
        all += &std::fs::read_to_string(&csv).expect("export");
    }
    let stats = run_ok(&["stats", "--store", store.to_str().unwrap()]);
    let stats = String::from_utf8_lossy(&stats.stdout);
    all + &stats.lines().filter(|l| !l.starts_with("store size")).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_listing_over_http_gives_the_local_scan_resumes_cut_transfers_and_passes_over_finished_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let served = tmp.path().join("served/crawl-data");
    std::fs::create_dir_all(&served).expect("mkdir");
    let names = warc_files(&served);
    let labelset = wikipedia_labelset(tmp.path());
    let server =
        FileServer::start(tmp.path().join("served"), Transfers::CutFirstHalfway).expect("file server");

    // Local scan, the reference.
    let local = tmp.path().join("local.db");
    let local_inputs: Vec<PathBuf> = names.iter().map(|n| served.join(n)).collect();
    let local_args: Vec<&str> = local_inputs.iter().map(|p| p.to_str().unwrap()).collect();
    scan_with_stats(&local, &labelset, &tmp.path().join("local.json"), &local_args, 0);

    // The same files over HTTP, from a gzipped listing joined to --base-url.
    let listing = tmp.path().join("warc.paths.gz");
    gzipped_listing(&listing, &names);
    let remote = tmp.path().join("remote.db");
    let remote_json = tmp.path().join("remote.json");
    let base = server.base_url();
    let list_args = ["--input-list", listing.to_str().unwrap(), "--base-url", base.as_str()];
    let stderr = scan_with_stats(&remote, &labelset, &remote_json, &list_args, 0);
    let st = read_stats(&remote_json);
    assert_eq!(st["remote"]["files_read"], 3, "{stderr}");
    assert_eq!(st["remote"]["files_failed"], 0, "{stderr}");
    assert!(st["remote"]["resumes"].as_u64().unwrap_or(0) >= 3, "every first transfer was cut: {st}");
    assert!(server.ranged_requests() >= 3, "the resumes asked for ranges");
    assert_eq!(st["pages_read"], read_stats(&tmp.path().join("local.json"))["pages_read"]);
    assert!(st["pages_read"].as_u64().unwrap_or(0) > 1_000);

    let (lc, rc) = (contents(&local), contents(&remote));
    assert!(lc.lines().count() > 100_000, "every chunk occurrence is listed");
    assert_eq!(lc, rc, "remote and local scans store the same pages, chunks and totals");

    // Rerun: every file was recorded as finished, nothing is fetched again.
    let before = server.requests();
    let stderr = scan_with_stats(&remote, &labelset, &remote_json, &list_args, 0);
    let st = read_stats(&remote_json);
    assert_eq!(st["remote"]["files_finished_before"], 3, "{stderr}");
    assert_eq!(st["pages_read"], 0);
    assert_eq!(server.requests(), before, "no request for finished files");
    assert!(stderr.contains("3 passed over"), "{stderr}");
}

#[test]
fn a_missing_remote_file_is_reported_and_counted_and_the_others_are_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let served = tmp.path().join("served");
    std::fs::create_dir_all(&served).expect("mkdir");
    std::fs::copy(shared_data().join("warc/valid/pywb/iana.warc.gz"), served.join("iana.warc.gz"))
        .expect("copy");
    let labelset = wikipedia_labelset(tmp.path());
    let server = FileServer::start(served, Transfers::Whole).expect("file server");
    let store = tmp.path().join("s.db");
    let json = tmp.path().join("s.json");
    let (gone, there) =
        (format!("{}gone.warc.gz", server.base_url()), format!("{}iana.warc.gz", server.base_url()));
    let out = ditto()
        .args(["scan", "--store", store.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()])
        .args(["--progress", "none", "--retries", "1", "--stats-json", json.to_str().unwrap(), &gone, &there])
        .output()
        .expect("run ditto");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let st = read_stats(&json);
    assert_eq!(st["remote"]["files_failed"], 1, "{stderr}");
    assert_eq!(st["remote"]["files_read"], 1, "{stderr}");
    assert!(
        stderr.contains("gone.warc.gz") && stderr.contains("HTTP 404"),
        "names the file and why: {stderr}"
    );
    assert!(st["pages_read"].as_u64().unwrap_or(0) > 0, "the other file was read");

    // Rerun: the file read to its end is passed over, the missing one tried again.
    let out = ditto()
        .args(["scan", "--store", store.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()])
        .args(["--progress", "none", "--retries", "0", "--stats-json", json.to_str().unwrap(), &gone, &there])
        .output()
        .expect("run ditto");
    let st = read_stats(&json);
    assert_eq!(st["remote"]["files_finished_before"], 1, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(st["remote"]["files_failed"], 1);
}

#[test]
fn copied_passages_of_a_remote_scan_are_read_back_over_http() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // A crawl of the demo web (loopback): WARC files with copied Wikipedia articles.
    let demo = tmp.path().join("demo");
    run_ok(&["demo", "--out", demo.to_str().unwrap()]);
    let labelset = demo.join("wikipedia-demo.dls");
    let server = FileServer::start(demo.join("warcs"), Transfers::Whole).expect("file server");
    let mut urls: Vec<String> = std::fs::read_dir(demo.join("warcs"))
        .expect("demo warcs")
        .flatten()
        .map(|e| format!("{}{}", server.base_url(), e.file_name().to_string_lossy()))
        .collect();
    urls.sort();
    assert!(!urls.is_empty(), "the demo wrote WARC files");
    let store = tmp.path().join("s.db");
    let mut args = vec!["scan", "--store", store.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()];
    args.extend(["--progress", "none"]);
    args.extend(urls.iter().map(String::as_str));
    run_ok(&args);
    let requests_after_scan = server.requests();
    let out = run_ok(&["report", "--store", store.to_str().unwrap(), "--format", "jsonl"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.lines().count() >= 1, "the demo's copiers are flagged: {report}");
    assert!(report.contains("\"passage\""), "{report}");
    assert!(!report.contains("passage not available"), "passages read back over HTTP: {report}");
    assert!(
        server.ranged_requests() >= 1 && server.requests() > requests_after_scan,
        "read with Range requests"
    );
}
