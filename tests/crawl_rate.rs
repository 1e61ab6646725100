//! The global rate cap (`--rate`, governor) holds over many hosts, measured from the test
//! web's own arrival timestamps; robots.txt `Crawl-delay` is capped by `--max-crawl-delay`.
//! Loopback only.

mod common;

use std::time::Duration;

use common::*;
use testweb::{many_hosts_seeds, many_hosts_web, Resource, Site, TestWeb, WebSpec};

#[test]
fn global_rate_cap_holds_across_hosts() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = TestWeb::start_blocking(many_hosts_web(20, 2)).unwrap();
    let mut args: Vec<String> = [
        "crawl",
        "--store",
        tmp.path().join("r.db").to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--resolve",
        &format!("*.bench.test={}", web.addr),
        "--min-delay-ms",
        "10",
        "--rate",
        "10",
        "--max-pages",
        "40",
        "--scope",
        "any",
        "--user-agent",
        "ditto-test/0.1 (+http://localhost/)",
        "--progress",
        "none",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in many_hosts_seeds(20) {
        args.push("--seed".into());
        args.push(s);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_ok(&args);
    let mut times: Vec<_> = web.log.all().iter().map(|r| r.at).collect();
    times.sort();
    assert!(times.len() >= 40, "{} requests", times.len());
    // With 20 hosts and a 10 ms per-host delay, only the global cap (10/s, governor's
    // burst of 10) limits: any 2-second window holds at most 10 × 2 + 10 requests.
    for (i, t) in times.iter().enumerate() {
        let in_window =
            times[i..].iter().take_while(|u| u.duration_since(*t) < Duration::from_secs(2)).count();
        assert!(in_window <= 30, "{in_window} requests within 2 s from request {i}");
    }
    let span = times.last().unwrap().duration_since(times[0]);
    assert!(span >= Duration::from_secs(2), "{} requests in {span:?}", times.len());
}

#[test]
fn crawl_delay_is_capped() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let mut site = Site::with_robots("User-agent: *\nCrawl-delay: 3600\n");
    let mut index = String::from("<html><body>");
    for i in 0..3 {
        site = site.page(&format!("/p{i}"), Resource::html(format!("<p>page {i}</p>")));
        index.push_str(&format!("<a href=\"/p{i}\">p{i}</a>"));
    }
    let site = site.page("/", Resource::html(index + "</body></html>"));
    let web = TestWeb::start_blocking(WebSpec::default().host("slowpoke.test", site)).unwrap();
    let started = std::time::Instant::now();
    run_ok(&[
        "crawl",
        "--store",
        tmp.path().join("d.db").to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--resolve",
        &format!("slowpoke.test={}", web.addr),
        "--seed",
        "http://slowpoke.test/",
        "--min-delay-ms",
        "10",
        "--max-crawl-delay",
        "0.5",
        "--user-agent",
        "ditto-test/0.1 (+http://localhost/)",
        "--progress",
        "none",
    ]);
    let gaps = web.log.min_gap("slowpoke.test").unwrap();
    assert!(gaps >= Duration::from_millis(500), "Crawl-delay (capped at 0.5 s) not honored: {gaps:?}");
    assert_eq!(web.log.count_for("slowpoke.test"), 5, "robots.txt + 4 pages");
    assert!(started.elapsed() < Duration::from_secs(30), "a 1-hour Crawl-delay was not capped");
}
