//! Crawl resume (issue: crawler, "Resume"): `ditto crawl` killed with SIGKILL at random
//! moments, at least 20 times, then run to completion, has stored every page of the web
//! exactly once and fetched no URL twice except those in flight (or buffered in the
//! detection pipeline) at a kill — measured on the loopback test web's own request log.
//! And SIGINT: a graceful stop, exit 130 with a line saying how to resume, then the next run
//! resumes and completes.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;
use rand::{Rng, SeedableRng};
use testweb::{many_hosts_seeds, many_hosts_web, RequestLog, TestWeb};

const UA: &str = "ditto-test/0.1 (+http://h0.bench.test/contact)";
/// The web: HOSTS hosts × (PAGES + 1) pages, all reachable from the seeds.
const HOSTS: usize = 20;
const PAGES: usize = 100;
const MIN_DELAY_MS: u64 = 100;
/// Detection workers per stage (`--threads`): sizes the pipeline's buffers below.
const THREADS: usize = 1;

/// The tests here time kills; run them one at a time so they do not slow each other.
static SERIAL: Mutex<()> = Mutex::new(());

/// Pages the detection pipeline can hold between the crawler and the store: four channels
/// of 16 × threads, the store writer's channel and batch (64 each), one page in each
/// stage's hands, and the pages written but not yet durable (at most `SYNC_PAGES`, 256:
/// batches share a flush within 100 ms; src/pipeline/mod.rs).
const PIPELINE_BUFFER: usize = 4 * 16 * THREADS + 64 + 64 + 4 * THREADS + 256;
/// Requests in flight at most: one per host (`--per-host-concurrency 1`).
const MAX_IN_FLIGHT: usize = HOSTS;

struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    labelset: PathBuf,
    seeds: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let labelset = wikipedia_labelset(&dir);
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, many_hosts_seeds(HOSTS).join("\n")).unwrap();
    Setup { _tmp: tmp, dir, labelset, seeds }
}

fn crawl_cmd(s: &Setup, web: &TestWeb, db: &Path, stats: Option<&Path>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ditto"));
    cmd.args(["crawl", "--store", db.to_str().unwrap(), "--labelset", s.labelset.to_str().unwrap()])
        .args(["--seeds", s.seeds.to_str().unwrap(), "--user-agent", UA])
        .args(["--resolve", &web.resolve_arg("*.bench.test")])
        .args(["--min-delay-ms", &MIN_DELAY_MS.to_string(), "--timeout", "10"])
        .args(["--threads", &THREADS.to_string(), "--progress", "none"]);
    if let Some(p) = stats {
        cmd.args(["--stats-json", p.to_str().unwrap()]);
    }
    cmd
}

/// Waits for `child` at most `limit`; kills it and fails the test past that.
fn wait_bounded(child: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs a crawl to completion (bounded), returns its stats JSON and stderr.
fn crawl_to_end(s: &Setup, web: &TestWeb, db: &Path) -> (serde_json::Value, String) {
    let stats = s.dir.join("stats.json");
    let err = s.dir.join("final.stderr");
    let mut child = crawl_cmd(s, web, db, Some(&stats))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(180), "the final crawl");
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(status.success(), "final crawl failed: {stderr}");
    (serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap(), stderr)
}

fn stored_pages(db: &Path) -> u64 {
    let out = run_ok(&["stats", "--store", db.to_str().unwrap(), "--json"]).stdout;
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    v["pages"].as_u64().unwrap()
}

/// Every stored page's URL, with how often it is stored.
fn stored_urls(db: &Path) -> HashMap<String, usize> {
    let store = store::Store::open(db).unwrap();
    let mut m = HashMap::new();
    for p in store.pages() {
        *m.entry(p.unwrap().url).or_default() += 1;
    }
    m
}

/// Every URL of the web.
fn web_urls() -> Vec<String> {
    let mut v = Vec::new();
    for h in 0..HOSTS {
        v.push(format!("http://h{h}.bench.test/"));
        for k in 0..PAGES {
            v.push(format!("http://h{h}.bench.test/p/{k}"));
        }
    }
    v
}

/// Requests per URL (robots.txt left out: each run fetches it again by design).
fn fetches(log: &RequestLog) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for r in log.all() {
        if r.path != "/robots.txt" {
            *m.entry(format!("http://{}{}", r.host, r.path)).or_default() += 1;
        }
    }
    m
}

fn duplicates(log: &RequestLog) -> usize {
    fetches(log).values().map(|n| n - 1).sum()
}

/// The store holds every page of the web exactly once; the report works on it.
fn assert_complete(db: &Path) {
    let expected = HOSTS * (PAGES + 1);
    assert_eq!(stored_pages(db), expected as u64, "ditto stats pages");
    let stored = stored_urls(db);
    for url in web_urls() {
        assert_eq!(stored.get(&url).copied().unwrap_or(0), 1, "{url} stored {:?} times", stored.get(&url));
    }
    assert_eq!(stored.len(), expected);
    run_ok(&["report", "--store", db.to_str().unwrap(), "--format", "jsonl"]);
    run_ok(&["report", "--store", db.to_str().unwrap(), "--format", "table", "--level", "page"]);
}

#[test]
fn twenty_random_sigkills_then_resume_fetch_and_store_every_page_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = setup();
    let web = TestWeb::start_blocking(many_hosts_web(HOSTS, PAGES)).unwrap();
    let db = s.dir.join("killed.db");
    let expected = HOSTS * (PAGES + 1);

    let mut rng = rand::rngs::StdRng::seed_from_u64(0xc4a71);
    let (mut kills, mut attempts, mut mid_crawl) = (0usize, 0usize, 0usize);
    let mut progress = Vec::new();
    while kills < 20 {
        attempts += 1;
        assert!(attempts <= 60, "only {kills} kills hit a running crawl in 60 attempts");
        let mut child =
            crawl_cmd(&s, &web, &db, None).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        // Random moments, from start-up (label set loading, store opening) to mid-fetch.
        let wait = Duration::from_millis(rng.gen_range(30..800));
        std::thread::sleep(wait);
        if child.try_wait().unwrap().is_some() {
            // Finished on its own: nothing to kill. (The web is big enough that this should
            // be rare; the final run below completes the crawl either way.)
            eprintln!(
                "attempt {attempts}: finished on its own within {wait:?}, {} pages stored",
                stored_pages(&db)
            );
            continue;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        kills += 1;
        let pages = stored_pages(&db);
        if pages > 0 && (pages as usize) < expected {
            mid_crawl += 1;
        }
        progress.push(pages);
    }
    let requests_before_final = web.log.count();
    let dups_before_final = duplicates(&web.log);
    let (stats, stderr) = crawl_to_end(&s, &web, &db);
    eprintln!("final run: {}", stderr.lines().next().unwrap_or(""));
    assert_eq!(stats["crawl"]["stopped_by"], "frontier_exhausted", "{stats}");

    assert_complete(&db);
    // Every URL of the web was fetched; the number fetched more than once is bounded by
    // what a kill can catch in flight: requests on the wire plus pages in detection.
    let f = fetches(&web.log);
    for url in web_urls() {
        assert!(f.get(&url).copied().unwrap_or(0) >= 1, "{url} never fetched");
    }
    assert_eq!(
        f.len(),
        expected,
        "fetched URLs outside the web: {:?}",
        f.keys().filter(|u| !web_urls().contains(u))
    );
    let dups = duplicates(&web.log);
    let twice = f.values().filter(|n| **n > 1).count();
    let most = f.values().max().copied().unwrap_or(0);
    let robots = web.log.all().iter().filter(|r| r.path == "/robots.txt").count();
    let bound = kills * (MAX_IN_FLIGHT + PIPELINE_BUFFER);
    eprintln!(
        "{kills} SIGKILLs in {attempts} runs ({mid_crawl} left the store part-way; pages stored after each kill: \
         {progress:?}); {} requests in all ({requests_before_final} before the final run, {robots} robots.txt); \
         {expected} pages, {dups} duplicate fetches ({dups_before_final} before the final run) over {twice} URLs \
         (at most {most} fetches of one URL) = {:.1} per kill; bound {bound} = {kills} × ({MAX_IN_FLIGHT} in flight + \
         {PIPELINE_BUFFER} pipeline)",
        web.log.count(),
        dups as f64 / kills as f64
    );
    assert!(mid_crawl >= 10, "only {mid_crawl} kills interrupted the crawl part-way");
    assert!(dups <= bound, "{dups} duplicate fetches > {bound}");
    // Politeness held across runs: one request per host at a time.
    for h in 0..HOSTS {
        assert!(web.log.max_in_flight(&format!("h{h}.bench.test")) <= 1);
    }
}

#[test]
fn sigint_stops_gracefully_and_the_next_run_completes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = setup();
    let web = TestWeb::start_blocking(many_hosts_web(HOSTS, PAGES)).unwrap();
    let db = s.dir.join("sigint.db");
    let err = s.dir.join("sigint.stderr");
    let stats = s.dir.join("sigint-stats.json");
    let mut child = crawl_cmd(&s, &web, &db, Some(&stats))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    // Wait until the crawl is well under way (bounded), then ^C.
    let start = Instant::now();
    while web.log.count() < 100 {
        assert!(start.elapsed() < Duration::from_secs(60), "the crawl did not start");
        assert!(child.try_wait().unwrap().is_none(), "the crawl ended before SIGINT");
        std::thread::sleep(Duration::from_millis(10));
    }
    let sent = Instant::now();
    let ok = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(ok.success(), "kill -INT failed");
    let status = wait_bounded(&mut child, Duration::from_secs(60), "the crawl after SIGINT");
    let took = sent.elapsed();
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert_eq!(status.code(), Some(130), "exit after SIGINT: {status}: {stderr}");
    assert!(stderr.contains("stopping"), "no stopping message: {stderr}");
    assert!(stderr.contains("interrupted: run the same command again to resume"), "no resume line: {stderr}");
    let st: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(st["crawl"]["stopped_by"], "signal");
    let stopped_at = stored_pages(&db);
    let requests_at_stop = web.log.count();
    assert!((stopped_at as usize) < HOSTS * (PAGES + 1), "SIGINT came too late to test anything");

    let (stats, _) = crawl_to_end(&s, &web, &db);
    assert_eq!(stats["crawl"]["stopped_by"], "frontier_exhausted", "{stats}");
    assert_complete(&db);
    // A graceful stop finishes (stores) what was in flight: nothing is fetched twice.
    let dups = duplicates(&web.log);
    eprintln!(
        "SIGINT: exited 130 after {:.2}s with {stopped_at} pages stored ({requests_at_stop} requests); \
         the next run requeued {} and completed; duplicate fetches: {dups}",
        took.as_secs_f64(),
        stats["crawl"]["requeued_from_last_run"]
    );
    assert_eq!(dups, 0, "URLs fetched twice after a graceful stop");
}
