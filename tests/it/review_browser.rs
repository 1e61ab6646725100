//! The review page as a person uses it, in headless Chromium driven over WebDriver
//! (Debian's chromium + chromium-driver, installed by scripts/install_browser.sh): label a
//! neighborhood `false-positive` by clicking its button, then `ditto report` no longer lists
//! it. Hostile page content must not execute: no JavaScript dialog may open on any view.
//! The pictures are drawn: the list's badness histogram, the page text with its copied blocks
//! highlighted (as many as the scan counted), two pages side by side; each view screenshots.
//! Loopback only.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, body).unwrap();
}

async fn wait_up(client: &reqwest::Client, url: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if client.get(url).send().await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{url} did not come up");
}

/// One WebDriver command; returns its `value`.
async fn wd(client: &reqwest::Client, method: &str, url: String, body: Value) -> Value {
    let req = match method {
        "GET" => client.get(&url),
        "DELETE" => client.delete(&url),
        _ => client.post(&url).header("content-type", "application/json").body(body.to_string()),
    };
    let text = req.send().await.unwrap().text().await.unwrap();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("WebDriver answer {text:?}: {e}"));
    v["value"].clone()
}

/// WebDriver ids of the elements matching a CSS selector.
async fn find_all(client: &reqwest::Client, session: &str, css: &str) -> Vec<String> {
    let v = wd(client, "POST", format!("{session}/elements"), json!({"using": "css selector", "value": css}))
        .await;
    v.as_array()
        .map(|a| {
            a.iter().filter_map(|e| e.as_object()?.values().next()?.as_str().map(String::from)).collect()
        })
        .unwrap_or_default()
}

async fn assert_no_dialog(client: &reqwest::Client, session: &str, where_: &str) {
    let v = wd(client, "GET", format!("{session}/alert/text"), json!({})).await;
    assert_eq!(v["error"], "no such alert", "a JavaScript dialog opened on {where_}: {v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_through_the_page_then_report_leaves_it_out() {
    let install =
        Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/install_browser.sh")).status().unwrap();
    assert!(install.success(), "could not install chromium and chromium-driver");

    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let site = tmp.path().join("site");
    let hostile = "<p onmouseover=alert(1)>Hostile <script>alert(2)</script> text <img src=x onerror=alert(3)> \
                   <a href=\"javascript:alert(4)\">link</a> <svg onload=alert(5)></svg> and it goes on long enough</p>";
    for a in ["Albedo", "Aardvark", "ASCII"] {
        let mut body = format!("<html><body>{hostile}");
        body.extend(article_paragraphs(a, 100).into_iter().take(5));
        write(&site, &format!("farm.test/wiki/{a}.html"), &(body + "</body></html>"));
    }
    for i in 0..6 {
        write(
            &site,
            &format!("blog{i}.test/post.html"),
            &format!("<html><body><p>Original post {i}, about gardens and weather, written by hand.</p>{hostile}</body></html>"),
        );
    }
    let db = tmp.path().join("r.db");
    let (db_s, ls_s) = (db.to_str().unwrap(), labelset.to_str().unwrap());
    run_ok(&[
        "scan",
        "--store",
        db_s,
        "--labelset",
        ls_s,
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        site.to_str().unwrap(),
    ]);
    let before = String::from_utf8(run_ok(&["report", "--store", db_s, "--format", "jsonl"]).stdout).unwrap();
    assert!(before.contains("\"http://farm.test/wiki/\""), "{before}");

    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let review_port = free_port();
    let review = Kill(
        ditto()
            .args([
                "review",
                "--store",
                db_s,
                "--listen",
                &format!("127.0.0.1:{review_port}"),
                "--reviewer",
                "browser-test",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let base = format!("http://127.0.0.1:{review_port}");
    wait_up(&client, &format!("{base}/")).await;

    let wd_port = free_port();
    let driver = Kill(
        Command::new("/usr/bin/chromedriver")
            .arg(format!("--port={wd_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let wd_base = format!("http://127.0.0.1:{wd_port}");
    wait_up(&client, &format!("{wd_base}/status")).await;
    let profile = tmp.path().join("chrome-profile");
    let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
        "binary": "/usr/bin/chromium",
        "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 format!("--user-data-dir={}", profile.display())]
    }}}});
    let v = wd(&client, "POST", format!("{wd_base}/session"), caps).await;
    let session =
        format!("{wd_base}/session/{}", v["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {v}")));

    // Every view renders, and nothing in the hostile content runs. The pictures are drawn:
    // the list's histogram (one bar a bin, the threshold line, a marker per listed row), the
    // page's copied blocks highlighted beside their sources, two pages side by side.
    let side_by_side =
        "/d?a=http%3A%2F%2Ffarm.test%2Fwiki%2FAlbedo.html&b=http%3A%2F%2Ffarm.test%2Fwiki%2FAardvark.html";
    for (path, pictures) in [
        ("/", &[("svg.hist rect.bar", 20), ("svg.hist line.threshold", 1), ("svg.hist path.listed", 1)][..]),
        ("/n?name=http%3A%2F%2Ffarm.test%2Fwiki%2F", &[][..]),
        (
            "/p?url=http%3A%2F%2Ffarm.test%2Fwiki%2FAlbedo.html",
            &[(".pagetext mark", 1), ("aside.sources li", 1)][..],
        ),
        (
            side_by_side,
            &[("table.sbs tr.change td.del", 1), ("table.sbs tr.change td.ins", 1), ("table.sbs tr.same", 1)]
                [..],
        ),
    ] {
        wd(&client, "POST", format!("{session}/url"), json!({"url": format!("{base}{path}")})).await;
        assert_no_dialog(&client, &session, path).await;
        let title = wd(&client, "GET", format!("{session}/title"), json!({})).await;
        assert!(title.as_str().unwrap_or("").contains("ditto review"), "{path}: title {title}");
        for &(css, at_least) in pictures {
            let found = find_all(&client, &session, css).await;
            assert!(found.len() >= at_least, "{path}: {} of {css}, wanted at least {at_least}", found.len());
            // Laid out with a size (the style sheet applies under the page's CSP).
            if let Some(id) = found.first() {
                let rect = wd(&client, "GET", format!("{session}/element/{id}/rect"), json!({})).await;
                let size = rect["width"].as_f64().unwrap_or(0.0) + rect["height"].as_f64().unwrap_or(0.0);
                assert!(size > 0.0, "{path}: {css} not drawn: {rect}");
            }
        }
        if path.starts_with("/p?") {
            // As many highlighted blocks as the scan counted labeled chunks on the page.
            let source = wd(&client, "GET", format!("{session}/source"), json!({})).await;
            let source = source.as_str().unwrap_or("");
            let labeled: usize = source
                .split(" labeled of ")
                .next()
                .and_then(|h| h.rsplit('(').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no labeled count on {path}"));
            assert_eq!(find_all(&client, &session, ".pagetext mark").await.len(), labeled, "{path}");
        }
        let shot = wd(&client, "GET", format!("{session}/screenshot"), json!({})).await;
        assert!(shot.as_str().is_some_and(|b| b.len() > 10_000), "{path}: empty screenshot");
    }
    let heading =
        wd(&client, "POST", format!("{session}/element"), json!({"using": "css selector", "value": "h1"}))
            .await;
    assert!(
        heading.as_object().is_some_and(|o| !o.contains_key("error")),
        "page view has no heading: {heading}"
    );

    // Label the farm false-positive by clicking its button on the neighborhood view.
    wd(
        &client,
        "POST",
        format!("{session}/url"),
        json!({"url": format!("{base}/n?name=http%3A%2F%2Ffarm.test%2Fwiki%2F")}),
    )
    .await;
    let button = wd(
        &client,
        "POST",
        format!("{session}/element"),
        json!({"using": "css selector", "value": "button[value='false-positive']"}),
    )
    .await;
    let id = button
        .as_object()
        .and_then(|o| o.values().next())
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no button: {button}"));
    // The button's own value says `false-positive`; only the state cell's class shows the label.
    const LABELED: &str = "class=\"st false-positive\"";
    let source = wd(&client, "GET", format!("{session}/source"), json!({})).await;
    assert!(!source.as_str().unwrap_or("").contains(LABELED), "labeled before the click");
    wd(&client, "POST", format!("{session}/element/{id}/click"), json!({})).await;
    // The click can return before the form's POST and its redirect are done: wait (bounded)
    // until the page shows the label, so the server has stored it before it is stopped.
    let start = Instant::now();
    loop {
        let source = wd(&client, "GET", format!("{session}/source"), json!({})).await;
        if source.as_str().unwrap_or("").contains(LABELED) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "label not shown 20 s after the click");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_no_dialog(&client, &session, "after labeling").await;
    wd(&client, "DELETE", session.clone(), json!({})).await;
    drop(driver);
    drop(review); // the store is opened by one process at a time

    let after = String::from_utf8(run_ok(&["report", "--store", db_s, "--format", "jsonl"]).stdout).unwrap();
    assert!(!after.contains("\"http://farm.test/wiki/\""), "still reported after labeling: {after}");
    let all =
        String::from_utf8(run_ok(&["report", "--store", db_s, "--format", "jsonl", "--all"]).stdout).unwrap();
    assert!(all.contains("\"http://farm.test/wiki/\""));
    let labels = String::from_utf8(run_ok(&["labels", "export", "--store", db_s]).stdout).unwrap();
    assert!(labels.contains("false-positive") && labels.contains("browser-test"), "{labels}");
}
