//! `ditto demo` end to end: the built-in web, the bundled label set, a polite crawl with
//! detection inside it. Loopback only.

use std::collections::BTreeSet;

use crawler::crawl::CrawlEvent;

#[test]
fn demo_finds_the_copies_avoids_traps_and_is_polite() {
    let tmp = tempfile::tempdir().unwrap();
    let out = ditto::cli::demo::run_demo(&tmp.path().join("demo"), true).unwrap();
    let flagged: BTreeSet<&str> = out.flagged.iter().map(|r| r.neighborhood.as_str()).collect();
    for copy in [
        "http://farm.demo.test/articles/",
        "http://mirror.demo.test/articles/",
        "http://near.demo.test/articles/",
    ] {
        assert!(flagged.contains(copy), "{copy} not flagged: {flagged:?}");
    }
    for clean in ["blog.demo.test", "busy.demo.test", "trap.demo.test"] {
        assert!(!flagged.iter().any(|n| n.contains(clean)), "{clean} flagged: {flagged:?}");
    }
    // Sources: the farm's pages copy six bundled articles.
    let farm = out.flagged.iter().find(|r| r.neighborhood == "http://farm.demo.test/articles/").unwrap();
    assert!(farm.sources.iter().any(|s| s.title.as_deref() == Some("Aardwolf")), "{:?}", farm.sources);
    let c = &out.summary.crawl;
    // robots.txt of blog.demo.test disallows /private/, which is linked.
    assert!(c.event(CrawlEvent::RobotsDisallowed) >= 1, "{:?}", c.events);
    // busy.demo.test answers 429 + Retry-After first: honored, then fetched.
    assert!(c.event(CrawlEvent::BackoffRetryAfter) >= 1, "{:?}", c.events);
    assert!(c.event(CrawlEvent::HttpStatus(429)) >= 1);
    // Traps: the repeated-path trap and the endless calendars are cut.
    assert!(!c.links_rejected.is_empty(), "no trap links rejected");
    // Politeness as the server measured it: never two requests to one host closer than the
    // configured 20 ms minimum delay.
    assert!(out.min_gap_ms.unwrap() >= 20, "min gap {:?} ms", out.min_gap_ms);
    assert!(out.requests < 1000, "request loop bounded: {}", out.requests);
    let warcs: Vec<_> = std::fs::read_dir(out.out_dir.join("warcs")).unwrap().flatten().collect();
    assert!(warcs.iter().any(|e| e.file_name().to_string_lossy().ends_with(".warc.gz")));
    assert!(out.out_dir.join("report.jsonl").exists());
}
