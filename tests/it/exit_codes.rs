//! One table of exit codes for every command (`docs/GUIDE.md`, "Exit codes"; `src/cli/exit.rs`) and a
//! quiet broken pipe (issue 25, items 5 and 6): usage errors 2 before anything runs, 3 when a
//! command finished but some inputs failed (unreadable WARC records, every seed unreachable),
//! 130 with a resume line after ^C, 0 and no message when stdout is closed early. A seed
//! refused for its address is retried by the next run with `--allow-private` (item 4). And
//! the log events (`-q`/`-v`, `--log-format json`) carry host and URL fields. Loopback only.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use testweb::{Resource, Site, TestWeb, WebSpec};

const UA: &str = "ditto-test/0.1 (+http://example.org/bot)";

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_thread_counts_are_usage_errors_for_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("s.db");
    let db = db.to_str().unwrap();
    let runs: [&[&str]; 4] = [
        &["scan", "--store", db, "--labelset", "none.dls", "--threads", "100000", "x"],
        &["scan", "--store", db, "--labelset", "none.dls", "--threads", "0", "x"],
        &["crawl", "--store", db, "--labelset", "none.dls", "--threads", "0", "--seed", "http://a.test/"],
        &["discover", "--min-count", "2", "-o", "b.dls", "--threads", "0", "x"],
    ];
    for args in runs {
        let out = ditto().args(args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "ditto {args:?}: {err}");
        assert!(err.contains("--threads") && err.contains("1 to 1024"), "ditto {args:?}: {err}");
        assert!(!Path::new(db).exists(), "a usage error must come before the store is created");
    }
}

/// A store with a content farm copying Wikipedia, so that reports have rows.
fn farm_store(dir: &Path) -> std::path::PathBuf {
    let labelset = wikipedia_labelset(dir);
    let site = dir.join("site");
    for a in ["Albedo", "Aardvark", "ASCII"] {
        let p = site.join(format!("farm.test/wiki/{a}.html"));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, format!("<html><body>{}</body></html>", article_paragraphs(a, 100).join("\n")))
            .unwrap();
    }
    let db = dir.join("farm.db");
    scan_site(&db, &labelset, &site);
    db
}

/// Run ditto with its stdout a pipe whose reading end is already closed.
fn with_closed_stdout(args: &[&str]) -> Output {
    let mut child = ditto().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_pipe_ends_quietly_with_0() {
    let tmp = tempfile::tempdir().unwrap();
    let db = farm_store(tmp.path());
    let db = db.to_str().unwrap();
    // Streamed with `?` (report), printed with println! (stats): both end quietly.
    for args in [
        &["report", "--store", db, "--format", "table", "--all"][..],
        &["report", "--store", db, "--format", "jsonl", "--level", "page", "--all"],
        &["stats", "--store", db],
    ] {
        let out = with_closed_stdout(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "ditto {args:?} | (closed): {err}");
        for bad in ["error", "Broken pipe", "panicked"] {
            assert!(!err.contains(bad), "ditto {args:?} | (closed) said {bad:?}: {err}");
        }
    }
}

#[test]
fn warc_read_errors_finish_with_the_partial_failure_code() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let scan = |db: &str, warc: &str| {
        ditto()
            .args(["scan", "--progress", "none", "--store", db, "--labelset", labelset.to_str().unwrap()])
            .arg(shared_data().join("warc").join(warc))
            .output()
            .unwrap()
    };
    let good = scan(tmp.path().join("good.db").to_str().unwrap(), "valid/warcio/example.warc.gz");
    assert_eq!(good.status.code(), Some(0), "{}", stderr(&good));
    let bad = scan(tmp.path().join("bad.db").to_str().unwrap(), "broken/resiliparse/clipped.warc.gz");
    let err = stderr(&bad);
    assert_eq!(bad.status.code(), Some(3), "{err}");
    assert!(err.contains("finished with failures") && err.contains("read errors"), "{err}");
}

fn crawl(db: &Path, labelset: &Path, seed: &str, extra: &[&str]) -> Output {
    ditto()
        .env_remove("RUST_LOG")
        .args(["crawl", "--progress", "none", "--user-agent", UA, "--min-delay-ms", "10", "--seed", seed])
        .arg("--store")
        .arg(db)
        .arg("--labelset")
        .arg(labelset)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn refused_seeds_hint_at_allow_private_and_are_retried_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let body = format!("<html><body>{}</body></html>", article_paragraphs("Albedo", 100).join("\n"));
    let web =
        TestWeb::start_blocking(WebSpec::default().host(
            "127.0.0.1",
            Site::with_robots("User-agent: *\nAllow: /\n").page("/", Resource::html(body)),
        ))
        .unwrap();
    let seed = format!("http://127.0.0.1:{}/", web.addr.port());
    let db = tmp.path().join("c.db");

    let first = crawl(&db, &labelset, &seed, &[]);
    let err = stderr(&first);
    assert_eq!(first.status.code(), Some(3), "every seed refused: {err}");
    assert!(err.contains("--allow-private"), "no hint at --allow-private: {err}");
    assert_eq!(web.log.count(), 0, "a refused address must get no request");

    let stats = tmp.path().join("stats.json");
    let second = crawl(&db, &labelset, &seed, &["--allow-private", "--stats-json", stats.to_str().unwrap()]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let st: serde_json::Value = serde_json::from_slice(&fs::read(&stats).unwrap()).unwrap();
    assert_eq!(st["crawl"]["pages"], 1, "the refused seed is fetched on the retry: {st}");
    assert!(web.log.count() >= 2, "robots.txt and the page");
}

#[test]
fn every_seed_unreachable_finishes_with_the_partial_failure_code() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    // A loopback port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = crawl(
        &tmp.path().join("c.db"),
        &labelset,
        &format!("http://127.0.0.1:{port}/"),
        &["--allow-private"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("no page could be fetched"), "{err}");
}

/// Linux: whether the process has a thread named `name` yet.
fn has_thread(pid: u32, name: &str) -> bool {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks.flatten().any(|t| fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
}

#[test]
fn scan_interrupted_exits_130_saying_how_to_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    // A FIFO nobody writes to: the scan waits on it until ^C.
    let fifo = tmp.path().join("never.warc");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let child = ditto()
        .args(["scan", "--progress", "none", "--labelset", labelset.to_str().unwrap(), "--store"])
        .arg(tmp.path().join("s.db"))
        .arg(&fifo)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !has_thread(child.id(), "sigint") {
        assert!(start.elapsed() < Duration::from_secs(30), "the scan never installed its ^C handler");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted: run the same command again to resume"), "{err}");
}

#[test]
fn log_events_carry_host_and_url_as_json_or_lines_by_level() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    // A refused seed: a warning event with host and url fields, as JSON.
    let out = crawl(&tmp.path().join("c.db"), &labelset, "http://127.0.0.1:1/", &["--log-format", "json"]);
    let events: Vec<serde_json::Value> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let refused = events.iter().find(|e| e["level"] == "WARN").unwrap_or_else(|| panic!("{}", stderr(&out)));
    assert_eq!(refused["host"], "127.0.0.1");
    assert_eq!(refused["url"], "http://127.0.0.1:1/");
    // -q: errors only, so no warning line; the command's own summary still prints.
    let out = crawl(&tmp.path().join("q.db"), &labelset, "http://127.0.0.1:1/", &["-q"]);
    assert!(!stderr(&out).contains("WARN") && stderr(&out).contains("crawl stopped"), "{}", stderr(&out));
    // A scan with -vv: one debug line per page, with its host and URL.
    let site = tmp.path().join("site");
    fs::create_dir_all(site.join("farm.test")).unwrap();
    fs::write(site.join("farm.test/a.html"), article_paragraphs("Albedo", 100).join("\n")).unwrap();
    let out = ditto()
        .env_remove("RUST_LOG")
        .args(["scan", "-vv", "--progress", "none", "--labelset", labelset.to_str().unwrap(), "--store"])
        .arg(tmp.path().join("s.db"))
        .arg(&site)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.lines().any(|l| l.contains("DEBUG")
            && l.contains("host=\"farm.test\"")
            && l.contains("url=http://farm.test/a.html")),
        "{err}"
    );
    // Without -v: no debug lines.
    let out = ditto()
        .env_remove("RUST_LOG")
        .args(["scan", "--progress", "none", "--labelset", labelset.to_str().unwrap(), "--store"])
        .arg(tmp.path().join("s2.db"))
        .arg(&site)
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("DEBUG"));
}
