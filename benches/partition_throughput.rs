//! Aggregate throughput of host-partitioned crawls (issue 10): N `ditto crawl --partition
//! i/N` processes over one loopback test web (the shape of `testweb::many_hosts_web`, but
//! hosts `b0.test`, `b1.test`, … are separate registrable domains, so they spread over the
//! partitions; every page links the next host, so links cross partitions), with the file exchange and with Redis (a
//! `redis-server` started here on a loopback port, append-only file fsynced at every write,
//! as the tests run it), and one unpartitioned `ditto crawl` for reference.
//!
//! `cargo bench --bench partition_throughput` (env: HOSTS, PAGES, DELAY_MS, PARTS="1,2,4",
//! MODES="files,redis", THREADS = detection threads per process, default max(1, cores / N),
//! REPEAT = rounds of every configuration, interleaved)
//!
//! Per run: pages stored, process wall time (spawn of the first to exit of the last
//! process; includes start-up and the exchange's 300 ms termination grace), aggregate
//! pages/s, exchange messages (sent, acknowledged) and Redis commands by kind with their
//! rate, and duplicate fetches (must be 0). Also the on-disk bytes per page of the stores
//! and the frontier's on-disk bytes per queued URL (sled, 200,000 synthetic URLs queued).

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use labelsets::{Kind, LabelSetBuilder};
use testweb::LocalRedis;
use testweb::{Resource, Site, TestWeb, WebSpec};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// `hosts` hosts `b<i>.test`, each `/` linking `/p/0`… and every page linking the next page
/// and the next host's `/`; distinct text per page.
fn web(hosts: usize, pages: usize) -> WebSpec {
    let site = Site::with_robots("User-agent: *\nDisallow:\n").page(
        "/",
        Resource::generated(move |host, path| {
            let i: usize = host.strip_prefix('b')?.strip_suffix(".test")?.parse().ok()?;
            if i >= hosts {
                return None;
            }
            let next_host = format!("http://b{}.test/", (i + 1) % hosts);
            if path == "/" {
                let mut body = format!("<html><body><h1>Host {i}</h1><ul>");
                for k in 0..pages {
                    body.push_str(&format!("<li><a href=\"/p/{k}\">page {k}</a></li>"));
                }
                body.push_str(&format!("</ul><p><a href=\"{next_host}\">next host</a></p></body></html>"));
                return Some(Resource::html(body));
            }
            let k: usize = path.strip_prefix("/p/")?.parse().ok()?;
            if k >= pages {
                return None;
            }
            Some(Resource::html(format!(
                "<html><body><h1>Host {i}, page {k}</h1><p>This is page {k} of benchmark host {i}. Its text \
                 differs from every other page so that nothing here looks copied: {i} times {k} is {}, \
                 and {i} plus {k} is {}.</p><p><a href=\"/p/{}\">next page</a> \
                 <a href=\"{next_host}\">next host</a></p></body></html>",
                i * k,
                i + k,
                (k + 1) % pages.max(1)
            )))
        }),
    );
    WebSpec::default().host("*.test", site)
}

fn dir_bytes(p: &Path) -> u64 {
    let mut n = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => n += dir_bytes(&e.path()),
                Ok(m) => n += m.len(),
                Err(_) => {}
            }
        }
    }
    n
}

struct Run {
    label: String,
    parts: u32,
    pages: u64,
    wall: f64,
    stats: Vec<serde_json::Value>,
    dups: usize,
    store_bytes: u64,
}

fn sum(stats: &[serde_json::Value], key: &str) -> u64 {
    stats.iter().map(|v| v["exchange"][key].as_u64().unwrap_or(0)).sum()
}

#[allow(clippy::too_many_arguments)]
fn run(
    web: &TestWeb,
    tmp: &Path,
    labelset: &Path,
    seeds: &Path,
    delay_ms: usize,
    parts: Option<u32>,
    exchange: Option<(&str, String)>,
    label: &str,
) -> Run {
    web.log.clear();
    let n = parts.unwrap_or(1);
    let cores = std::thread::available_parallelism().map(|c| c.get()).unwrap_or(2);
    let threads = env_or("THREADS", (cores / n as usize).max(1));
    let dir = tmp.join(label);
    std::fs::create_dir_all(&dir).unwrap();
    let start = Instant::now();
    let mut children = Vec::new();
    for i in 0..n {
        let db = dir.join(format!("p{i}.db"));
        let stats = dir.join(format!("p{i}.json"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ditto"));
        cmd.args(["crawl", "--store", db.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()])
            .args([
                "--seeds",
                seeds.to_str().unwrap(),
                "--user-agent",
                "ditto-bench/0.1 (+http://localhost/bench)",
            ])
            .args(["--resolve", &format!("*.test={}", web.addr), "--allow-host", "*.test"])
            .args(["--focus", "bfs", "--min-delay-ms", &delay_ms.to_string(), "--delay-factor", "0"])
            // One loopback server stands in for every host's: no per-address bound (issue 37).
            .args(["--per-ip-in-flight", "0", "--per-ip-min-delay-ms", "0"])
            .args(["--max-in-flight", "256", "--threads", &threads.to_string(), "--progress", "none"])
            .args(["--stats-json", stats.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join(format!("p{i}.stderr"))).unwrap());
        if let Some(n) = parts {
            cmd.args(["--partition", &format!("{i}/{n}"), "--exchange-grace-ms", "300"]);
            match &exchange {
                Some(("files", d)) => cmd.args(["--exchange-dir", d]),
                Some((_, url)) => cmd.args(["--coordinator", url]),
                None => panic!("a partitioned run needs an exchange"),
            };
        }
        children.push((cmd.spawn().unwrap(), stats, db));
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut stats = Vec::new();
    let mut store_bytes = 0;
    for (i, (mut c, s, db)) in children.into_iter().enumerate() {
        let status = loop {
            if let Some(st) = c.try_wait().unwrap() {
                break st;
            }
            if Instant::now() > deadline {
                let _ = c.kill();
                panic!("{label}: partition {i} still running after 600 s");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let err = std::fs::read_to_string(dir.join(format!("p{i}.stderr"))).unwrap_or_default();
        assert!(status.success(), "{label}: partition {i} failed: {err}");
        stats.push(serde_json::from_slice::<serde_json::Value>(&std::fs::read(&s).unwrap()).unwrap());
        store_bytes += dir_bytes(&db);
    }
    let wall = start.elapsed().as_secs_f64();
    let mut per_url: HashMap<String, usize> = HashMap::new();
    for r in web.log.all() {
        *per_url.entry(format!("{}{}", r.host, r.path)).or_default() += 1;
    }
    let dups = per_url.values().map(|&k| k.saturating_sub(1)).sum();
    let pages = stats.iter().map(|v| v["crawl"]["pages"].as_u64().unwrap_or(0)).sum();
    Run { label: label.to_string(), parts: n, pages, wall, stats, dups, store_bytes }
}

/// On-disk bytes per queued frontier URL: a fresh store, `n` synthetic URLs (1,000 hosts)
/// queued in batches of 1,000 and flushed.
fn frontier_bytes_per_url(tmp: &Path, n: usize) -> (f64, f64) {
    let st = store::Store::open(&tmp.join("frontier.db")).unwrap();
    st.frontier_load_seen().unwrap();
    st.flush().unwrap();
    let before = dir_bytes(&tmp.join("frontier.db"));
    let mut batch = Vec::with_capacity(1000);
    for i in 0..n {
        let host = format!("h{}.example.org", i % 1000);
        batch.push(store::FrontierEntry {
            url: format!("http://{host}/section/{}/page-{i}.html", i % 37),
            host_key: String::new(),
            depth: 3,
            priority: 5,
            hops: 0,
            sitemap: false,
        });
        if batch.len() == 1000 {
            st.frontier_add(&batch).unwrap();
            batch.clear();
        }
    }
    st.frontier_add(&batch).unwrap();
    st.flush().unwrap();
    let disk = dir_bytes(&tmp.join("frontier.db")).saturating_sub(before);
    let sled = st.size_on_disk().unwrap_or(0);
    (disk as f64 / n as f64, sled as f64 / n as f64)
}

fn main() {
    let hosts = env_or("HOSTS", 1000);
    let pages = env_or("PAGES", 20);
    let delay_ms = env_or("DELAY_MS", 250);
    let parts: Vec<u32> = std::env::var("PARTS")
        .unwrap_or_else(|_| "1,2,4".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let modes: Vec<String> = std::env::var("MODES")
        .unwrap_or_else(|_| "files,redis".into())
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let tmp = tempfile::tempdir().unwrap();

    let labelset = tmp.path().join("w.dls");
    let mut b = LabelSetBuilder::new("wikipedia", Kind::Chunks, Default::default(), 100, "bench");
    let articles = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/wikipedia/articles");
    labelsets::readers::read_directory(&articles, Some("https://en.wikipedia.org/wiki/"), &mut b).unwrap();
    b.write(&labelset).unwrap();
    let seeds = tmp.path().join("seeds.txt");
    let seed_list: Vec<String> = (0..hosts).map(|i| format!("http://b{i}.test/")).collect();
    std::fs::write(&seeds, seed_list.join("\n")).unwrap();
    let web = TestWeb::start_blocking(web(hosts, pages)).unwrap();
    let redis = if modes.iter().any(|m| m == "redis") {
        Some(LocalRedis::start(&tmp.path().join("redis")).unwrap_or_else(|e| panic!("{e:#}")))
    } else {
        None
    };

    // Rounds of every configuration, interleaved, so that load from elsewhere on the machine
    // spreads over all of them.
    let mut runs = Vec::new();
    let mut db = 0;
    for round in 0..env_or("REPEAT", 1) {
        let label = format!("unpartitioned#{round}");
        runs.push(run(&web, tmp.path(), &labelset, &seeds, delay_ms, None, None, &label));
        for &n in &parts {
            for m in &modes {
                db += 1;
                let x = if m == "files" {
                    tmp.path().join(format!("exchange-{db}")).display().to_string()
                } else {
                    // One Redis database per crawl (16 by default: start over after 15).
                    redis.as_ref().map(|r| r.url(db % 15 + 1)).unwrap_or_default()
                };
                if m != "files" {
                    if let Some(r) = &redis {
                        r.flush_db(db % 15 + 1).unwrap_or_else(|e| panic!("{e:#}"));
                    }
                }
                let label = format!("{m}-{n}#{round}");
                runs.push(run(&web, tmp.path(), &labelset, &seeds, delay_ms, Some(n), Some((m, x)), &label));
            }
        }
    }
    let cores = std::thread::available_parallelism().map(|c| c.get()).unwrap_or(2);
    println!(
        "partition_throughput: {hosts} hosts × {} pages, per-host delay {delay_ms} ms, {cores} cores",
        pages + 1
    );
    println!(
        "{:<14} {:>5} {:>7} {:>7} {:>8} {:>6} {:>6} {:>7} {:>7} {:>7} {:>9} {:>5} {:>8}",
        "run",
        "parts",
        "pages",
        "wall_s",
        "pages/s",
        "sent",
        "acked",
        "xadd",
        "xack",
        "xread",
        "redis/s",
        "dups",
        "B/page"
    );
    for r in &runs {
        let (sent, acked) = (sum(&r.stats, "messages_sent"), sum(&r.stats, "messages_received"));
        let (xadd, xack, xread, other) = (
            sum(&r.stats, "redis_xadd"),
            sum(&r.stats, "redis_xack"),
            sum(&r.stats, "redis_xreadgroup"),
            sum(&r.stats, "redis_other"),
        );
        println!(
            "{:<14} {:>5} {:>7} {:>7.2} {:>8.0} {:>6} {:>6} {:>7} {:>7} {:>7} {:>9.0} {:>5} {:>8.0}",
            r.label,
            r.parts,
            r.pages,
            r.wall,
            r.pages as f64 / r.wall,
            sent,
            acked,
            xadd,
            xack,
            xread,
            (xadd + xack + xread + other) as f64 / r.wall,
            r.dups,
            r.store_bytes as f64 / r.pages.max(1) as f64,
        );
    }
    println!(
        "  redis/s: all Redis commands (XADD, XACK+XDEL, XREADGROUP, SET/MGET/XLEN) per second of wall time"
    );
    let (disk, sled) = frontier_bytes_per_url(tmp.path(), 200_000);
    println!("frontier on disk: {disk:.1} B per queued URL (files), {sled:.1} B (sled size_on_disk)");
}
