//! Crawl memory and time per page on a hostile loopback web, beside an ordinary one (issue
//! 26, item 1). A benchmark, not a test: it prints a table and exits 1 when a bound is broken.
//!
//! `cargo build --release --bin ditto --example bench_hostile_crawl &&
//!  target/release/examples/bench_hostile_crawl [--hosts N] [--max-pages N] [--link-caps 10000,100000]`
//!
//! Each row is one `ditto crawl` (the release binary beside this one, or `$DITTO_BIN`) run
//! under `/usr/bin/time -f %M` (peak RSS of the crawl process; the webs are served by this
//! process). The hostile web: hosts `h0.big.test` … whose `/` is a page of 100,000 links to
//! its own host (2.2 MB), `/attrs` one tag of 500,000 attributes (5 MB), `/trap/…` an endless
//! chain of ever deeper paths; every other page is small and links the next host. The
//! ordinary web: `testweb::many_hosts_web`. Every crawl: `--max-pages` (300), `--threads 2`,
//! `--min-delay-ms 20`, `--scope any`, the Wikipedia label set from `../shared/data`.
//!
//! Bounds checked (`docs/GUIDE.md`, "Limits on hostile input"), on the rows at the default link cap
//! (a raised cap lets every page held in the pipeline carry that many links on top): peak RSS ≤
//! [`RSS_BASE_MIB`] + [`RSS_PER_URL_BYTES`] × the URLs the frontier has seen (what is left
//! growing with the crawl: sled's in-memory metadata of its on-disk tree; `--max-queued`, passed
//! through to every crawl, caps the URLs seen at that plus the pages fetched); and the slowest
//! page in any CPU stage of detection (`max_ms` of the stats JSON, wall-clock, so waits for a
//! core count) ≤ [`PAGE_MS_BOUND`] (with a raised cap a 100,000-link page spends 1–2 s admitting
//! its links in the match stage); and each hostile page cleaned alone in this process ≤ [`PAGE_ALONE_MS_BOUND`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use testweb::{Resource, Site, TestWeb, WebSpec};

/// The documented memory bound of these crawls (default settings, `--threads 2`): a base…
const RSS_BASE_MIB: f64 = 256.0;
/// …plus this much per URL the frontier has seen.
const RSS_PER_URL_BYTES: f64 = 1024.0;
/// Longest any one page may spend in one CPU stage of detection at the default link cap,
/// wall-clock ms inside the crawl (so it includes waiting for a core on a loaded machine).
const PAGE_MS_BOUND: f64 = 5000.0;
/// Longest cleaning of one hostile page alone, on one thread, ms.
const PAGE_ALONE_MS_BOUND: f64 = 500.0;

const UA: &str = "ditto-bench/0.1 (+http://bench.test/contact)";

fn hostile_web(hosts: usize) -> WebSpec {
    let site = Site::with_robots("User-agent: *\nDisallow:\n").page(
        "/",
        Resource::generated(move |host, path| {
            let i: usize = host.strip_prefix('h')?.strip_suffix(".big.test")?.parse().ok()?;
            if i >= hosts {
                return None;
            }
            let next = format!("http://h{}.big.test/", (i + 1) % hosts);
            let body = hostile_page(i, path, &next);
            Some(Resource::html(body))
        }),
    );
    WebSpec::default().host("*.big.test", site)
}

/// The body of `path` on host `i` of the hostile web (`next`: the next host's root).
fn hostile_page(i: usize, path: &str, next: &str) -> String {
    match path {
        "/" => {
            let mut b = format!(
                "<h1>Host {i}</h1><p><a href=\"/attrs\">attrs</a> <a href=\"/trap/x/\">trap</a> <a href=\"{next}\">next</a></p><ul>"
            );
            for k in 0..100_000 {
                b.push_str(&format!("<li><a href=\"/p/{k}\">{k}</a>"));
            }
            b
        }
        "/attrs" => {
            let mut b = String::from("<p>before</p><div");
            for k in 0..500_000 {
                b.push_str(&format!(" a{k:08}"));
            }
            b.push_str("><p>after</p>");
            b
        }
        p if p.starts_with("/trap/") => format!("<p>deeper</p><a href=\"{p}x/\">deeper</a>"),
        p => format!("<p>Page {p} of host {i}.</p><a href=\"{next}\">next</a>"),
    }
}

/// Seconds to clean `page` (links on, as in a crawl), best of three, on this thread alone.
fn clean_alone(page: &str) -> f64 {
    (0..3)
        .map(|_| {
            let t = std::time::Instant::now();
            let d = detector::clean(
                page.as_bytes(),
                Some("text/html"),
                Some("http://h0.big.test/"),
                &detector::CleanOptions::default(),
            );
            std::hint::black_box(d.links.len());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// `x` is a figure (not NaN) at most `bound`.
fn within(x: f64, bound: f64) -> bool {
    x <= bound
}

fn ditto_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("DITTO_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    // target/release/examples/bench_hostile_crawl → target/release/ditto
    exe.parent().and_then(Path::parent).map(|d| d.join("ditto")).unwrap_or_else(|| PathBuf::from("ditto"))
}

fn fail(msg: String) -> ! {
    eprintln!("bench_hostile_crawl: {msg}");
    std::process::exit(2)
}

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd.stdout(Stdio::null()).output().unwrap_or_else(|e| fail(format!("{cmd:?}: {e}")));
    if !out.status.success() {
        fail(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    out
}

/// One measured crawl.
struct Row {
    web: &'static str,
    cap: Option<u64>,
    rss_mib: f64,
    secs: f64,
    pages: u64,
    /// URLs the frontier took in (queued, in flight or fetched).
    queued: u64,
    over_cap: u64,
    /// Links dropped because the frontier held `--max-queued` URLs.
    frontier_full: u64,
    /// (stage, p99 ms, max ms) of the CPU stages.
    stages: Vec<(String, f64, f64)>,
}

fn crawl(
    dir: &Path,
    labelset: &Path,
    seeds: &[String],
    resolve: &str,
    max_pages: u64,
    cap: Option<u64>,
    max_queued: Option<u64>,
) -> Row {
    let db = dir.join("crawl.db");
    let _ = std::fs::remove_dir_all(&db);
    let stats = dir.join("stats.json");
    let timing = dir.join("time.txt");
    let mut cmd = Command::new("/usr/bin/time");
    cmd.args(["-f", "%M %e", "-o"]).arg(&timing).arg(ditto_bin()).arg("crawl");
    cmd.arg("--store").arg(&db).arg("--labelset").arg(labelset);
    cmd.args(["--resolve", resolve, "--scope", "any", "--min-delay-ms", "20", "--threads", "2"]);
    // One loopback server stands in for every host's: no per-address bound (issue 37).
    cmd.args(["--per-ip-in-flight", "0", "--per-ip-min-delay-ms", "0"]);
    cmd.args(["--user-agent", UA, "--max-pages", &max_pages.to_string(), "--progress", "none"]);
    cmd.arg("--stats-json").arg(&stats);
    if let Some(c) = cap {
        cmd.args(["--max-links-per-page", &c.to_string()]);
    }
    if let Some(q) = max_queued {
        cmd.args(["--max-queued", &q.to_string()]);
    }
    for s in seeds {
        cmd.args(["--seed", s]);
    }
    run(&mut cmd);
    let t = std::fs::read_to_string(&timing).unwrap_or_default();
    // The last line is "%M %e" (earlier lines, if any, are the command's own notes).
    let last = t.lines().last().unwrap_or("");
    let mut f = last.split_whitespace().map(|x| x.parse::<f64>().unwrap_or(f64::NAN));
    let (kib, secs) = (f.next().unwrap_or(f64::NAN), f.next().unwrap_or(f64::NAN));
    let json: serde_json::Value = std::fs::read(&stats)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| fail(format!("no stats JSON at {}", stats.display())));
    let c = &json["crawl"];
    let stages = json["detection"]["stages"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|s| !matches!(s["stage"].as_str(), Some("source" | "store")))
                .map(|s| {
                    (
                        s["stage"].as_str().unwrap_or("?").to_string(),
                        s["p99_ms"].as_f64().unwrap_or(f64::NAN),
                        s["max_ms"].as_f64().unwrap_or(f64::NAN),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Row {
        web: "",
        cap,
        rss_mib: kib / 1024.0,
        secs,
        pages: c["pages"].as_u64().unwrap_or(0),
        queued: seen_urls(&db),
        over_cap: c["links_rejected"]["page_link_cap"].as_u64().unwrap_or(0),
        frontier_full: c["links_rejected"]["frontier_full"].as_u64().unwrap_or(0),
        stages,
    }
}

/// URLs the crawl's frontier has seen (queued, in flight or fetched), from its store.
fn seen_urls(db: &Path) -> u64 {
    store::Store::open_existing(db).and_then(|s| s.frontier_load_seen()).map_or(0, |n| n as u64)
}

fn main() {
    let mut hosts = 6usize;
    let mut max_pages = 300u64;
    let mut caps: Vec<Option<u64>> = vec![None, Some(100_000)];
    let mut max_queued: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = || {
            args.next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or_else(|| fail(format!("{a} needs a number")))
        };
        match a.as_str() {
            "--hosts" => hosts = num() as usize,
            "--max-pages" => max_pages = num(),
            "--max-queued" => max_queued = Some(num()),
            "--link-caps" => {
                caps = args
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .map(|c| if c == "default" { None } else { c.parse().ok() })
                    .collect()
            }
            _ => fail(
                "usage: bench_hostile_crawl [--hosts N] [--max-pages N] [--link-caps default,100000] [--max-queued N]"
                    .into(),
            ),
        }
    }
    let tmp = tempfile::tempdir().unwrap_or_else(|e| fail(format!("temp dir: {e}")));
    let labelset = tmp.path().join("wikipedia.dls");
    let articles = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/wikipedia/articles");
    run(Command::new(ditto_bin())
        .args(["labelset", "build", "--name", "wikipedia", "--min-chars", "100"])
        .args(["--url-prefix", "https://en.wikipedia.org/wiki/", "-o"])
        .arg(&labelset)
        .arg(&articles));

    // Each hostile page cleaned alone, in this process: its cost without the machine's load.
    let mut alone = Vec::new();
    for (what, path) in
        [("100,000-link page", "/"), ("500,000-attribute tag", "/attrs"), ("trap page", "/trap/x/x/")]
    {
        let page = hostile_page(0, path, "http://h1.big.test/");
        alone.push((what, page.len(), clean_alone(&page) * 1000.0));
    }

    let mut rows = Vec::new();
    let hostile =
        TestWeb::start_blocking(hostile_web(hosts)).unwrap_or_else(|e| fail(format!("test web: {e}")));
    let seeds: Vec<String> = (0..hosts).map(|i| format!("http://h{i}.big.test/")).collect();
    for &cap in &caps {
        let mut r = crawl(
            tmp.path(),
            &labelset,
            &seeds,
            &format!("*.big.test={}", hostile.addr),
            max_pages,
            cap,
            max_queued,
        );
        r.web = "hostile";
        rows.push(r);
    }
    let ordinary = TestWeb::start_blocking(testweb::many_hosts_web(hosts, 60))
        .unwrap_or_else(|e| fail(format!("test web: {e}")));
    let mut r = crawl(
        tmp.path(),
        &labelset,
        &testweb::many_hosts_seeds(hosts),
        &format!("*.bench.test={}", ordinary.addr),
        max_pages,
        None,
        max_queued,
    );
    r.web = "ordinary";
    rows.push(r);

    println!("--max-queued {}", max_queued.map_or("1000000 (default)".to_string(), |q| q.to_string()));
    println!("| web | --max-links-per-page | pages | URLs seen (frontier) | links over the cap | links dropped, frontier full | peak RSS | wall | slowest page per stage: p99 / max (ms) |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut broken = Vec::new();
    for r in &rows {
        let st: Vec<String> = r.stages.iter().map(|(s, p, m)| format!("{s} {p:.1} / {m:.1}")).collect();
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.0} MiB | {:.1} s | {} |",
            r.web,
            r.cap.map_or("10,000 (default)".to_string(), |c| c.to_string()),
            r.pages,
            r.queued,
            r.over_cap,
            r.frontier_full,
            r.rss_mib,
            r.secs,
            st.join(", ")
        );
        // A NaN (no figure) breaks the bound too: `within` is false for it.
        // Checked at the default link cap: a raised cap lets each page held in the pipeline
        // carry up to that many links on top (a comparison row, as for the page time).
        let bound = RSS_BASE_MIB + RSS_PER_URL_BYTES * r.queued as f64 / (1 << 20) as f64;
        if r.cap.is_none() && !within(r.rss_mib, bound) {
            broken.push(format!(
                "{} web, cap {:?}: peak RSS {:.0} MiB > {bound:.0} MiB",
                r.web, r.cap, r.rss_mib
            ));
        }
        for (s, _, m) in r.stages.iter().filter(|_| r.cap.is_none()) {
            if !within(*m, PAGE_MS_BOUND) {
                broken.push(format!(
                    "{} web, cap {:?}: a page took {m:.0} ms in {s} > {PAGE_MS_BOUND} ms",
                    r.web, r.cap
                ));
            }
        }
        if r.pages == 0 {
            broken.push(format!("{} web, cap {:?}: no pages crawled", r.web, r.cap));
        }
    }
    println!();
    println!("| hostile page, cleaned alone (links on, best of 3) | bytes | ms |");
    println!("| --- | --- | --- |");
    for (what, bytes, ms) in &alone {
        println!("| {what} | {bytes} | {ms:.1} |");
        if !within(*ms, PAGE_ALONE_MS_BOUND) {
            broken.push(format!("cleaning the {what} alone took {ms:.0} ms > {PAGE_ALONE_MS_BOUND} ms"));
        }
    }
    println!(
        "bounds: page alone ≤ {PAGE_ALONE_MS_BOUND} ms; peak RSS ≤ {RSS_BASE_MIB} MiB + {RSS_PER_URL_BYTES} B × URLs seen (URLs seen ≤ --max-queued + pages) and slowest page in a stage ≤ {PAGE_MS_BOUND} ms, both at the default link cap"
    );
    if broken.is_empty() {
        println!("all bounds held");
    } else {
        for b in &broken {
            println!("BOUND BROKEN: {b}");
        }
        std::process::exit(1);
    }
}
