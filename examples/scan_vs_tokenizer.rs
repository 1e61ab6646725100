//! `ditto scan` as a process beside html5ever's bare tokenizer over the same HTML, on the
//! same core, in the same run (issue 22's figure).
//!
//! ```text
//! cargo build --release --bin ditto --example scan_vs_tokenizer
//! taskset -c 1 target/release/examples/scan_vs_tokenizer \
//!     --ditto target/release/ditto --labelset wikipedia.dls [--rounds 3] INPUT
//! ```
//!
//! INPUT is a WARC file or a directory of `.html` files. The pages the tokenizer reads are
//! those a scan cleans as HTML: `text/html` 2xx records of the WARC (read with
//! `crawler::warc::WarcPages`, as a scan reads them), or every `.html` file of the directory.
//! Each round: (a) the bare tokenizer (`detector::clean::baseline::tokenize_only`) over
//! those bodies in memory, in this process; then (b) `ditto scan --threads 1 --progress none
//! --stats-json` into a fresh store, as a child process (which inherits this process' CPU
//! set), timed from spawn to exit. Both MB/s use the same bytes (the HTML bodies), so
//! (b) / (a) is how close the whole scan comes to tokenizing alone. The store writer's busy
//! time comes from the scan's `--stats-json`.
//!
//! On a machine shared with other work, wall times move with the load of the moment, so the
//! CPU time of both is printed too: the tokenizer thread's (`/proc/thread-self/schedstat`)
//! and the scan process' user + system time (run under `/usr/bin/time`), and their ratio.
//!
//! `scan_vs_tokenizer --check-strip INPUT…` instead checks, page by page, that the cleaner's
//! guard stripping the attributes and inline tags it does not read changes nothing in its
//! output, with links collected and without.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[path = "common/html_bodies.rs"]
mod html_bodies;
use html_bodies::html_bodies;

struct Args {
    ditto: PathBuf,
    labelset: PathBuf,
    rounds: usize,
    input: PathBuf,
    extra: Vec<String>,
}

fn args() -> Args {
    let mut a = std::env::args().skip(1);
    let (mut ditto, mut labelset, mut rounds, mut input, mut extra) = (None, None, 3, None, Vec::new());
    while let Some(x) = a.next() {
        match x.as_str() {
            "--ditto" => ditto = a.next().map(PathBuf::from),
            "--labelset" => labelset = a.next().map(PathBuf::from),
            "--rounds" => rounds = a.next().and_then(|n| n.parse().ok()).expect("--rounds N"),
            "--scan-arg" => extra.push(a.next().expect("--scan-arg VALUE")),
            _ => input = Some(PathBuf::from(x)),
        }
    }
    let usage = "usage: scan_vs_tokenizer --ditto BIN --labelset L.dls [--rounds N] [--scan-arg A]… INPUT";
    Args {
        ditto: ditto.expect(usage),
        labelset: labelset.expect(usage),
        rounds,
        input: input.expect(usage),
        extra,
    }
}

/// (store busy seconds, Σ busy seconds of every stage, the scan's own seconds, store CPU
/// seconds, Σ CPU seconds of every stage)
fn stage_times(stats: &Path) -> (f64, f64, f64, f64, f64) {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(stats).expect("read --stats-json")).expect("stats JSON");
    let stages = v["stages"].as_array().cloned().unwrap_or_default();
    let sum = |field: &str, only_store: bool| -> f64 {
        stages
            .iter()
            .filter(|s| !only_store || s["stage"] == "store")
            .map(|s| s[field].as_f64().unwrap_or(0.0))
            .sum()
    };
    let (store, all) = (sum("busy_seconds", true), sum("busy_seconds", false));
    let (store_cpu, all_cpu) = (sum("cpu_seconds", true), sum("cpu_seconds", false));
    (store, all, v["seconds"].as_f64().unwrap_or(0.0), store_cpu, all_cpu)
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--check-strip") {
        check_strip();
        return;
    }
    let a = args();
    let bodies = html_bodies(&a.input);
    let bytes: usize = bodies.iter().map(Vec::len).sum();
    let mb = bytes as f64 / 1e6;
    println!("{}: {} HTML pages, {:.2} MB", a.input.display(), bodies.len(), mb);
    let tmp = std::env::temp_dir().join(format!("scan_vs_tokenizer.{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let (mut best_tok, mut best_scan) = (f64::MAX, f64::MAX);
    let mut cpu_ratios = Vec::new();
    for round in 1..=a.rounds {
        let t = Instant::now();
        let cpu0 = thread_cpu_secs();
        let tokens: usize = bodies.iter().map(|b| detector::clean::baseline::tokenize_only(b)).sum();
        let tok_cpu = thread_cpu_secs() - cpu0;
        let tok = t.elapsed().as_secs_f64();
        std::hint::black_box(tokens);
        let store = tmp.join(format!("round{round}.db"));
        let stats = tmp.join(format!("round{round}.json"));
        let t = Instant::now();
        let out = Command::new("/usr/bin/time")
            .args(["-f", "cpu %U %S"])
            .arg(&a.ditto)
            .args(["scan", "--threads", "1", "--progress", "none", "--store"])
            .arg(&store)
            .arg("--labelset")
            .arg(&a.labelset)
            .arg("--stats-json")
            .arg(&stats)
            .args(&a.extra)
            .arg(&a.input)
            .output()
            .expect("run ditto scan");
        let scan = t.elapsed().as_secs_f64();
        assert!(out.status.success(), "ditto scan failed: {}", String::from_utf8_lossy(&out.stderr));
        let (store_busy, all_busy, scan_secs, store_cpu, all_cpu) = stage_times(&stats);
        let scan_cpu = String::from_utf8_lossy(&out.stderr)
            .lines()
            .rev()
            .find_map(|l| {
                let mut f = l.strip_prefix("cpu ")?.split(' ').map(|x| x.parse::<f64>().ok());
                Some(f.next()?? + f.next()??)
            })
            .unwrap_or(f64::NAN);
        let store_bytes = dir_bytes(&store);
        let pages = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&stats).expect("stats"))
            .ok()
            .and_then(|v| v["pages_written"].as_u64())
            .unwrap_or(0);
        println!(
            "round {round}: tokenizer {:.1} MB/s ({tok:.3} s, CPU {tok_cpu:.3} s); ditto scan process {:.1} MB/s \
             ({scan:.3} s, CPU {scan_cpu:.2} s); ratio {:.3}, CPU ratio {:.3}; store writer busy {store_busy:.3} s = {:.1} % of stage busy time, {:.1} % of the \
             scan's {scan_secs:.3} s; store writer CPU {store_cpu:.3} s = {:.1} % of the stages' CPU; store {} bytes, {} pages, {:.0} bytes/page",
            mb / tok,
            mb / scan,
            tok / scan,
            tok_cpu / scan_cpu,
            100.0 * store_busy / all_busy.max(1e-9),
            100.0 * store_busy / scan_secs.max(1e-9),
            100.0 * store_cpu / all_cpu.max(1e-9),
            store_bytes,
            pages,
            store_bytes as f64 / pages.max(1) as f64,
        );
        best_tok = best_tok.min(tok);
        best_scan = best_scan.min(scan);
        cpu_ratios.push(tok_cpu / scan_cpu);
        let _ = std::fs::remove_dir_all(&store);
    }
    println!(
        "best of {}: tokenizer {:.1} MB/s, ditto scan {:.1} MB/s, ratio {:.3}",
        a.rounds,
        mb / best_tok,
        mb / best_scan,
        best_tok / best_scan
    );
    cpu_ratios.sort_by(f64::total_cmp);
    println!("CPU ratio, median of {}: {:.3}", cpu_ratios.len(), cpu_ratios[cpu_ratios.len() / 2]);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `scan_vs_tokenizer --check-strip INPUT…`: over the HTML pages of each input, whether the
/// cleaner's output is the same with the guard's stripping of unread attributes as without.
fn check_strip() {
    for input in std::env::args().skip(2) {
        let bodies = html_bodies(Path::new(&input));
        let differ = bodies
            .iter()
            .filter(|b| !detector::clean::baseline::stripping_agrees(b, "http://host.test/dir/page.html"))
            .count();
        println!("{input}: {} HTML pages, {differ} differ with stripping", bodies.len());
    }
}

/// CPU time of this thread so far (the first field of `/proc/thread-self/schedstat`, ns).
fn thread_cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns / 1e9)
}

fn dir_bytes(p: &Path) -> u64 {
    let mut n = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let path = e.path();
            n += if path.is_dir() { dir_bytes(&path) } else { e.metadata().map(|m| m.len()).unwrap_or(0) };
        }
    }
    n
}
