//! Issue 10, host-partitioned crawls, with the file exchange and with Redis: three `ditto
//! crawl --partition i/3` processes (`--exchange-dir DIR`, or `--coordinator redis://…` with
//! a `redis-server` the test starts on a loopback port) over a loopback web of 200 hosts (one
//! registrable domain each, cross-host links, some hosts copying Wikipedia) fetch every page
//! exactly once between them, each only the hosts it owns, and `ditto report` over their
//! three stores equals the report of one process crawling the same web. Then the same with
//! one partition killed with SIGKILL mid-crawl and restarted while the others run: no link
//! lost, no page fetched twice except what the kill caught in flight. With Redis, also a
//! Redis killed mid-crawl and restarted on the same port and directory: the crawlers wait,
//! say so, reconnect, and every page is still fetched exactly once.
//!
//! The Redis tests need `redis-server` (Debian package; `scripts/install_redis.sh`, run by
//! `.ci/run`) and fail with that message without it.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::*;
use crawler::urls::partition_of;
use testweb::LocalRedis;
use testweb::{RequestLog, Resource, Site, TestWeb, WebSpec};

const UA: &str = "ditto-test/0.1 (+http://w0.test/contact)";
const HOSTS: usize = 200;
/// Pages per host besides `/`.
const PAGES: usize = 3;
/// Seeds: the first few hosts' `/`; the rest is found through links.
const SEEDS: usize = 10;
const PARTS: u32 = 3;
/// `--max-in-flight` and pipeline buffers (`--threads 1`), as in tests/crawl_resume.rs.
const MAX_IN_FLIGHT: usize = 16;
const PIPELINE_BUFFER: usize = 4 * 16 + 64 + 64 + 4;

/// Host `i`'s `/` links its pages, the next host and another host's first page; each page
/// links the next page and the next host. Every tenth host copies Wikipedia paragraphs into
/// its pages, every tenth + 5 copies one paragraph among its own text.
fn web(paragraphs: Arc<Vec<String>>) -> WebSpec {
    let site = Site::with_robots("User-agent: *\nDisallow: /private/\n").page(
        "/",
        Resource::generated(move |host, path| {
            let i: usize = host.strip_prefix('w')?.strip_suffix(".test")?.parse().ok()?;
            if i >= HOSTS {
                return None;
            }
            let next = format!("http://w{}.test/", (i + 1) % HOSTS);
            let other = format!("http://w{}.test/p/0", (i * 7 + 3) % HOSTS);
            if path == "/" {
                let mut body = format!("<html><body><h1>Host {i}</h1><ul>");
                for k in 0..PAGES {
                    body.push_str(&format!("<li><a href=\"/p/{k}\">page {k}</a></li>"));
                }
                body.push_str(&format!(
                    "</ul><p><a href=\"{next}\">next</a> <a href=\"{other}\">other</a> \
                     <a href=\"/private/x\">private</a></p></body></html>"
                ));
                return Some(Resource::html(body));
            }
            let k: usize = path.strip_prefix("/p/")?.parse().ok()?;
            if k >= PAGES {
                return None;
            }
            let own = format!(
                "<p>Host {i} page {k} says something of its own: {i} times {k} is {}, and {i} plus {k} \
                 is {}; nothing in this paragraph was copied from anywhere else at all.</p>",
                i * k,
                i + k
            );
            let para = |n: usize| paragraphs[(i + k + n) % paragraphs.len()].clone();
            let text = match i % 10 {
                0 => format!("{}{}{}", para(0), para(1), para(2)),
                5 => format!("{own}{}", para(0)),
                _ => own,
            };
            Some(Resource::html(format!(
                "<html><body><h1>Host {i} page {k}</h1>{text}<p><a href=\"/p/{}\">next page</a> \
                 <a href=\"{next}\">next host</a></p></body></html>",
                (k + 1) % PAGES
            )))
        }),
    );
    WebSpec::default().host("*.test", site)
}

fn web_urls() -> Vec<String> {
    let mut v = Vec::new();
    for h in 0..HOSTS {
        v.push(format!("http://w{h}.test/"));
        for k in 0..PAGES {
            v.push(format!("http://w{h}.test/p/{k}"));
        }
    }
    v
}

/// Requests per URL, robots.txt included.
fn fetches(log: &RequestLog) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for r in log.all() {
        *m.entry(format!("http://{}{}", r.host, r.path)).or_default() += 1;
    }
    m
}

struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    labelset: PathBuf,
    seeds: PathBuf,
    web: TestWeb,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let labelset = wikipedia_labelset(&dir);
    let seeds = dir.join("seeds.txt");
    let list: Vec<String> = (0..SEEDS).map(|i| format!("http://w{i}.test/")).collect();
    std::fs::write(&seeds, list.join("\n")).unwrap();
    let mut paragraphs = Vec::new();
    for a in ["Aardvark", "Abacus", "Abraham_Lincoln", "ASCII"] {
        paragraphs.extend(article_paragraphs(a, 300));
    }
    assert!(paragraphs.len() >= 10);
    let web = TestWeb::start_blocking(web(Arc::new(paragraphs))).unwrap();
    Setup { _tmp: tmp, dir, labelset, seeds, web }
}

/// How the partitions of a run exchange links.
#[derive(Clone)]
enum Exchange {
    Files(PathBuf),
    Redis(String),
}

fn crawl_cmd(s: &Setup, db: &Path, part: Option<(u32, &Exchange)>, stats: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ditto"));
    cmd.args(["crawl", "--store", db.to_str().unwrap(), "--labelset", s.labelset.to_str().unwrap()])
        .args(["--seeds", s.seeds.to_str().unwrap(), "--user-agent", UA])
        .args([
            "--resolve",
            &s.web.resolve_arg("*.test"),
            "--scope",
            "seeds",
            "--allow-host",
            "*.test",
            "--max-depth",
            "1000",
        ])
        .args(["--min-delay-ms", "20", "--timeout", "10", "--threads", "1", "--progress", "none"])
        .args(["--max-in-flight", &MAX_IN_FLIGHT.to_string(), "--stats-json", stats.to_str().unwrap()])
        .stdout(Stdio::null());
    if let Some((i, x)) = part {
        cmd.args(["--partition", &format!("{i}/{PARTS}"), "--exchange-grace-ms", "1000"]);
        match x {
            Exchange::Files(dir) => cmd.args(["--exchange-dir", dir.to_str().unwrap()]),
            Exchange::Redis(url) => cmd.args(["--coordinator", url]),
        };
    }
    cmd
}

fn spawn(s: &Setup, db: &Path, part: Option<(u32, &Exchange)>, tag: &str) -> (Child, PathBuf, PathBuf) {
    let stats = s.dir.join(format!("{tag}.json"));
    let err = s.dir.join(format!("{tag}.stderr"));
    let child = crawl_cmd(s, db, part, &stats).stderr(std::fs::File::create(&err).unwrap()).spawn().unwrap();
    (child, stats, err)
}

/// Waits for `child` at most until `deadline`; kills it and fails the test past that.
fn wait_until(child: &mut Child, deadline: Instant, what: &str) -> std::process::ExitStatus {
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running at its deadline");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn finish(mut run: (Child, PathBuf, PathBuf), deadline: Instant, what: &str) -> serde_json::Value {
    let status = wait_until(&mut run.0, deadline, what);
    let stderr = std::fs::read_to_string(&run.2).unwrap_or_default();
    assert!(status.success(), "{what} failed: {stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&run.1).unwrap()).unwrap();
    assert_eq!(v["crawl"]["stopped_by"], "frontier_exhausted", "{what}: {v}: {stderr}");
    v
}

fn report(stores: &[PathBuf], extra: &[&str]) -> String {
    let mut args = vec!["report".to_string()];
    for s in stores {
        args.extend(["--store".to_string(), s.display().to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    String::from_utf8(run_ok(&args).stdout).unwrap()
}

/// Every stored page URL over the stores, with how often; each store holds only its hosts.
fn stored(stores: &[PathBuf], partitioned: bool) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for (i, db) in stores.iter().enumerate() {
        let st = store::Store::open(db).unwrap();
        for p in st.pages() {
            let p = p.unwrap();
            if partitioned {
                let host = url::Url::parse(&p.url).unwrap().host_str().unwrap().to_string();
                assert_eq!(partition_of(&host, PARTS), i as u32, "{} stored by partition {i}", p.url);
            }
            *m.entry(p.url).or_default() += 1;
        }
    }
    m
}

fn assert_all_stored_once(stores: &[PathBuf], partitioned: bool) {
    let m = stored(stores, partitioned);
    for u in web_urls() {
        assert_eq!(m.get(&u).copied().unwrap_or(0), 1, "{u} stored {:?} times", m.get(&u));
    }
    assert_eq!(m.len(), web_urls().len());
}

const REPORTS: [&[&str]; 3] =
    [&["--format", "jsonl"], &["--format", "jsonl", "--level", "page"], &["--format", "table"]];

/// The single-process crawl of the web and its reports, run once for all the tests here.
fn single_reports() -> &'static Vec<String> {
    static ONE: OnceLock<Vec<String>> = OnceLock::new();
    ONE.get_or_init(|| {
        let s = setup();
        let single = vec![s.dir.join("single.db")];
        let t = Instant::now();
        let v = finish(
            spawn(&s, &single[0], None, "single"),
            Instant::now() + Duration::from_secs(240),
            "single crawl",
        );
        assert_all_stored_once(&single, false);
        let f = fetches(&s.web.log);
        assert!(f.values().all(|&n| n == 1), "single crawl fetched a URL twice");
        let reports: Vec<String> = REPORTS.iter().map(|r| report(&single, r)).collect();
        assert!(reports[0].lines().count() >= 20, "flagged: {}", reports[0]);
        eprintln!("single process: {} pages in {:.1}s", v["crawl"]["pages"], t.elapsed().as_secs_f64());
        reports
    })
}

/// Unacknowledged messages left in the exchange, over all partitions.
fn left_in_exchange(x: &Exchange) -> u64 {
    use crawler::partition::{FileExchange, LinkExchange, Partition, RedisExchange};
    let me = Partition { index: 0, count: PARTS };
    let ex: Box<dyn LinkExchange> = match x {
        Exchange::Files(dir) => Box::new(FileExchange::open(dir, me).unwrap()),
        Exchange::Redis(url) => Box::new(RedisExchange::open(url, me).unwrap()),
    };
    (0..PARTS).map(|p| ex.pending(p).unwrap()).sum()
}

fn assert_each_url_fetched_once(log: &RequestLog, what: &str) {
    let f = fetches(log);
    for u in web_urls() {
        assert_eq!(
            f.get(&u).copied().unwrap_or(0),
            1,
            "{what}: {u} fetched {:?} times across partitions",
            f.get(&u)
        );
    }
    for h in 0..HOSTS {
        assert_eq!(
            f.get(&format!("http://w{h}.test/robots.txt")).copied(),
            Some(1),
            "{what}: robots.txt of w{h}"
        );
    }
    // The sitemaps of the hosts whose pages showed copies (`--sitemaps auto`): each asked
    // once at most, by the host's owner, and nothing else outside the web.
    let sitemaps = (0..HOSTS).filter(|h| f.contains_key(&format!("http://w{h}.test/sitemap.xml"))).count();
    for h in 0..HOSTS {
        let n = f.get(&format!("http://w{h}.test/sitemap.xml")).copied().unwrap_or(0);
        assert!(n <= 1, "{what}: the sitemap of w{h} asked {n} times");
    }
    assert_eq!(f.len(), HOSTS * (PAGES + 2) + sitemaps, "{what}: requests outside the web");
}

/// Three partitions, same seeds for all: each URL fetched once, merged reports equal to one
/// process's, nothing left in the exchange.
fn three_partitions(s: &Setup, x: &Exchange, tag: &str) {
    let single_reports = single_reports();
    s.web.log.clear();
    let parts: Vec<PathBuf> = (0..PARTS).map(|i| s.dir.join(format!("{tag}-p{i}.db"))).collect();
    let t = Instant::now();
    let runs: Vec<_> =
        (0..PARTS).map(|i| spawn(s, &parts[i as usize], Some((i, x)), &format!("{tag}-p{i}"))).collect();
    let deadline = Instant::now() + Duration::from_secs(240);
    let stats: Vec<serde_json::Value> = runs
        .into_iter()
        .enumerate()
        .map(|(i, r)| finish(r, deadline, &format!("{tag} partition {i}")))
        .collect();
    let parts_secs = t.elapsed().as_secs_f64();
    assert_each_url_fetched_once(&s.web.log, tag);
    assert_all_stored_once(&parts, true);
    let sent: u64 = stats.iter().map(|v| v["exchange"]["links_sent"].as_u64().unwrap()).sum();
    let queued: u64 = stats.iter().map(|v| v["exchange"]["links_queued"].as_u64().unwrap()).sum();
    let messages: u64 = stats.iter().map(|v| v["exchange"]["messages_sent"].as_u64().unwrap()).sum();
    assert!(queued > 100, "{tag}: links through the exchange: {sent} sent, {queued} new to their owner");
    for (r, one) in REPORTS.iter().zip(single_reports) {
        assert_eq!(&report(&parts, r), one, "{tag}: merged report differs for {r:?}");
    }
    assert_eq!(left_in_exchange(x), 0, "{tag}: unacknowledged messages left");
    eprintln!(
        "{tag}: 3 partitions: {:?} pages, {sent} links sent in {messages} messages, {queued} new to their owner, in {parts_secs:.1}s",
        stats.iter().map(|v| v["crawl"]["pages"].as_u64().unwrap()).collect::<Vec<_>>()
    );
}

/// Again, with partition 1 killed (SIGKILL) mid-crawl and restarted while the others run.
fn three_partitions_one_killed(s: &Setup, x: &Exchange, tag: &str) {
    let single_reports = single_reports();
    s.web.log.clear();
    let parts: Vec<PathBuf> = (0..PARTS).map(|i| s.dir.join(format!("{tag}-k{i}.db"))).collect();
    let mut runs: Vec<_> =
        (0..PARTS).map(|i| spawn(s, &parts[i as usize], Some((i, x)), &format!("{tag}-k{i}"))).collect();
    let owned_by_1 = |log: &RequestLog| {
        log.all().iter().filter(|r| partition_of(&r.host, PARTS) == 1 && r.path != "/robots.txt").count()
    };
    let start = Instant::now();
    while owned_by_1(&s.web.log) < 60 {
        assert!(start.elapsed() < Duration::from_secs(120), "{tag}: partition 1 did not get going");
        assert!(runs[1].0.try_wait().unwrap().is_none(), "{tag}: partition 1 ended before the kill");
        std::thread::sleep(Duration::from_millis(5));
    }
    runs[1].0.kill().unwrap(); // SIGKILL
    runs[1].0.wait().unwrap();
    let at_kill = owned_by_1(&s.web.log);
    std::thread::sleep(Duration::from_millis(500));
    runs[1] = spawn(s, &parts[1], Some((1, x)), &format!("{tag}-k1-resumed"));
    let deadline = Instant::now() + Duration::from_secs(240);
    let stats: Vec<serde_json::Value> = runs
        .into_iter()
        .enumerate()
        .map(|(i, r)| finish(r, deadline, &format!("{tag} partition {i} (kill run)")))
        .collect();
    assert_all_stored_once(&parts, true);
    let f = fetches(&s.web.log);
    let dups: usize = web_urls().iter().map(|u| f.get(u).copied().unwrap_or(0).saturating_sub(1)).sum();
    for u in web_urls() {
        assert!(f.get(&u).copied().unwrap_or(0) >= 1, "{tag}: {u} never fetched");
    }
    // Only partition 1's URLs can be fetched twice, and only those the kill caught.
    for (u, n) in &f {
        let host = url::Url::parse(u).unwrap().host_str().unwrap().to_string();
        if *n > 1 && !u.ends_with("/robots.txt") {
            assert_eq!(partition_of(&host, PARTS), 1, "{tag}: {u} fetched {n} times");
        }
    }
    assert!(dups <= MAX_IN_FLIGHT + PIPELINE_BUFFER, "{tag}: {dups} duplicate fetches");
    for (r, one) in REPORTS.iter().zip(single_reports) {
        assert_eq!(&report(&parts, r), one, "{tag}: merged report after the kill differs for {r:?}");
    }
    assert_eq!(left_in_exchange(x), 0, "{tag}: unacknowledged messages left after the kill run");
    eprintln!(
        "{tag}: kill -9 of partition 1 after {at_kill} of its fetches: resumed (requeued {}), {dups} duplicate fetches",
        stats[1]["crawl"]["requeued_from_last_run"]
    );
}

fn check_hosts_spread() {
    // Every host's registrable domain is its own: the partitions all get hosts.
    let per_part: Vec<usize> = (0..PARTS)
        .map(|p| (0..HOSTS).filter(|i| partition_of(&format!("w{i}.test"), PARTS) == p).count())
        .collect();
    assert!(per_part.iter().all(|&n| n > 40), "{per_part:?}");
}

/// Heavy tests (each runs three crawlers) take turns on the 2-core machines.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn start_redis(s: &Setup) -> LocalRedis {
    LocalRedis::start(&s.dir.join("redis")).unwrap_or_else(|e| panic!("{e:#}"))
}

#[test]
fn three_partitions_with_file_exchange_crawl_like_one_process_also_with_one_killed() {
    check_hosts_spread();
    single_reports();
    let _turn = one_at_a_time();
    let s = setup();
    three_partitions(&s, &Exchange::Files(s.dir.join("exchange")), "files");
    three_partitions_one_killed(&s, &Exchange::Files(s.dir.join("exchange-kill")), "files");
}

#[test]
fn three_partitions_with_redis_crawl_like_one_process_also_with_one_killed() {
    single_reports();
    let _turn = one_at_a_time();
    let s = setup();
    let redis = start_redis(&s);
    // One Redis database per crawl.
    three_partitions(&s, &Exchange::Redis(redis.url(1)), "redis");
    three_partitions_one_killed(&s, &Exchange::Redis(redis.url(2)), "redis");
}

#[test]
fn redis_killed_and_restarted_mid_crawl_loses_no_link() {
    let single_reports = single_reports();
    let _turn = one_at_a_time();
    let s = setup();
    let mut redis = start_redis(&s);
    let x = Exchange::Redis(redis.url(0));
    let parts: Vec<PathBuf> = (0..PARTS).map(|i| s.dir.join(format!("r{i}.db"))).collect();
    let mut runs: Vec<_> =
        (0..PARTS).map(|i| spawn(&s, &parts[i as usize], Some((i, &x)), &format!("r{i}"))).collect();
    let start = Instant::now();
    while s.web.log.all().len() < 250 {
        assert!(start.elapsed() < Duration::from_secs(120), "the crawl did not get going");
        for (i, r) in runs.iter_mut().enumerate() {
            assert!(r.0.try_wait().unwrap().is_none(), "partition {i} ended before Redis was stopped");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    redis.kill(); // SIGKILL: only the append-only file survives
    let at_kill = s.web.log.all().len();
    std::thread::sleep(Duration::from_secs(3));
    redis.restart().unwrap_or_else(|e| panic!("{e:#}"));
    let stderrs: Vec<PathBuf> = runs.iter().map(|r| r.2.clone()).collect();
    let deadline = Instant::now() + Duration::from_secs(240);
    let stats: Vec<serde_json::Value> = runs
        .drain(..)
        .enumerate()
        .map(|(i, r)| finish(r, deadline, &format!("partition {i} (Redis restart)")))
        .collect();
    assert_each_url_fetched_once(&s.web.log, "redis restart");
    assert_all_stored_once(&parts, true);
    for (r, one) in REPORTS.iter().zip(single_reports) {
        assert_eq!(&report(&parts, r), one, "merged report after the Redis restart differs for {r:?}");
    }
    assert_eq!(left_in_exchange(&x), 0, "unacknowledged messages left after the Redis restart");
    let logs: Vec<String> = stderrs.iter().map(|p| std::fs::read_to_string(p).unwrap_or_default()).collect();
    let waited =
        logs.iter().filter(|l| l.contains("redis coordinator unreachable at redis://127.0.0.1:")).count();
    let back = logs.iter().filter(|l| l.contains("redis coordinator reconnected at")).count();
    assert!(waited >= 1 && back >= waited, "log lines: {logs:#?}");
    let line = logs.iter().flat_map(|l| l.lines()).find(|l| l.contains("unreachable")).unwrap_or_default();
    eprintln!(
        "Redis killed after {at_kill} requests, restarted 3 s later: {waited} partitions waited and reconnected \
         (e.g. {line:?}); reconnects {:?}",
        stats.iter().map(|v| v["exchange"]["redis_reconnects"].as_u64().unwrap_or(0)).collect::<Vec<_>>()
    );
}

/// The Redis exchange alone: a message received and not acknowledged (a crash before the
/// owner's store batch) is delivered again to the partition's next process, from its pending
/// entries; acknowledged, it is gone; a partition count that differs is refused.
#[test]
fn redis_exchange_redelivers_what_a_crashed_owner_did_not_acknowledge() {
    use crawler::partition::{LinkExchange, Partition, RedisExchange};
    let tmp = tempfile::tempdir().unwrap();
    let redis = LocalRedis::start(&tmp.path().join("redis")).unwrap_or_else(|e| panic!("{e:#}"));
    let url = redis.url(3);
    let p = |index| Partition { index, count: 2 };
    let sender = RedisExchange::open(&url, p(1)).unwrap();
    let entry = |u: &str| store::FrontierEntry {
        url: u.into(),
        host_key: String::new(),
        depth: 1,
        priority: 5,
        hops: 0,
        sitemap: false,
    };
    sender.send(0, &[entry("http://a.test/1"), entry("http://a.test/2")]).unwrap();
    sender.send(0, &[entry("http://a.test/3")]).unwrap();
    assert_eq!(sender.pending(0).unwrap(), 2);
    {
        let owner = RedisExchange::open(&url, p(0)).unwrap();
        let got = owner.receive(1).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].entries.len(), 2);
        // Dropped without an acknowledgement: the process died.
    }
    let owner = RedisExchange::open(&url, p(0)).unwrap();
    let again = owner.receive(10).unwrap();
    assert_eq!(again.len(), 1, "the unacknowledged message first");
    assert_eq!(again[0].entries[0].url, "http://a.test/1");
    owner.ack(&again[0]).unwrap();
    let rest = owner.receive(10).unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].entries[0].url, "http://a.test/3");
    owner.ack(&rest[0]).unwrap();
    assert!(owner.receive(10).unwrap().is_empty());
    assert_eq!(owner.pending(0).unwrap(), 0);
    let err = RedisExchange::open(&url, Partition { index: 0, count: 3 }).err().map(|e| e.to_string());
    assert!(err.as_deref().is_some_and(|e| e.contains("for 2 partitions")), "{err:?}");
}
