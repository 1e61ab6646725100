//! `ditto review` over a store holding hostile pages: every response escapes page content,
//! links only http(s) URLs, refuses label posts without the right CSRF token, and labels
//! change what `ditto report` lists. `ditto labels export|import` round-trips labels.

use crate::common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use common::*;

/// Kills the review server when the test ends, pass or fail.
struct Server(Child, String);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(db: &Path, extra: &[&str]) -> Server {
    let mut child = ditto()
        .args(["review", "--store", db.to_str().unwrap(), "--listen", "127.0.0.1:0", "--reviewer", "tester"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("server prints its URL");
    Server(child, url.trim_end_matches('/').to_string())
}

const HOSTILE_TEXT: &str =
    "Hostile <script>alert(2)</script> text with <img src=x onerror=alert(6)> inside, \
    a long enough paragraph for the label set to keep it as a chunk of more than one hundred characters.";

/// A label set whose source has a hostile title and a `javascript:` URL, and a scan of a
/// site (directory) plus a WARC file with hostile URLs and markup.
fn hostile_store(tmp: &Path) -> std::path::PathBuf {
    let ls_dir = tmp.join("ls");
    fs::create_dir_all(&ls_dir).unwrap();
    let escaped = HOSTILE_TEXT.replace('<', "&lt;").replace('>', "&gt;");
    fs::write(ls_dir.join("<img src=x onerror=alert(1)>.html"), format!("<p>{escaped}</p>")).unwrap();
    for a in ["Albedo", "Aardvark"] {
        fs::copy(
            shared_data().join(format!("wikipedia/articles/{a}.html")),
            ls_dir.join(format!("{a}.html")),
        )
        .unwrap();
    }
    let ls = tmp.join("hostile.dls");
    run_ok(&[
        "labelset",
        "build",
        "--name",
        "hostile",
        "--url-prefix",
        "javascript:alert(3)//",
        "-o",
        ls.to_str().unwrap(),
        ls_dir.to_str().unwrap(),
    ]);

    let site = tmp.join("site");
    let put = |rel: &str, body: &str| {
        let p = site.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    };
    let para = article_paragraphs("Albedo", 100);
    let farm = format!(
        "<html><head><title><script>alert(7)</script></title></head><body onload=alert(8)>\
         <a href=\"javascript:alert(5)\">click</a><p>{escaped}</p>{}<div><p>unclosed <b>bold <i>broken\
         <img src=x onerror=alert(9)><svg onload=alert(10)>",
        para.iter().take(3).cloned().collect::<String>()
    );
    put("farm.test/wiki/a.html", &farm);
    put("farm.test/wiki/\"><svg onload=alert(11)>.html", &farm);
    // Originals, so the farm stands out from a population.
    let debian = shared_data().join("reuse/site/debian-faq.en.docs.test");
    let mut originals: Vec<_> = fs::read_dir(&debian)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    originals.sort();
    for (i, p) in originals.iter().take(6).enumerate() {
        put(&format!("docs{i}.test/faq/page.html"), &fs::read_to_string(p).unwrap());
    }
    put("copy.test/wiki/x.html", &format!("<p>{}</p>", para.iter().take(4).cloned().collect::<String>()));

    // A WARC whose target URIs are hostile (WARC URIs are not re-encoded).
    let mut warc = Vec::new();
    for uri in [
        "http://evil.test/x\"><svg/onload=alert(12)>/a.html",
        "http://evil.test/'onmouseover='alert(13)'/b.html",
    ] {
        warc.extend_from_slice(
            format!(
                "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:x>\r\nWARC-Date: 2024-05-01T10:00:00Z\r\n\
                 WARC-Target-URI: {uri}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{farm}\r\n\r\n",
                farm.len()
            )
            .as_bytes(),
        );
    }
    let warc_path = tmp.join("evil.warc");
    fs::write(&warc_path, warc).unwrap();

    let db = tmp.join("crawl.db");
    run_ok(&[
        "scan",
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        ls.to_str().unwrap(),
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        site.to_str().unwrap(),
        warc_path.to_str().unwrap(),
    ]);
    db
}

/// No payload survives unescaped: the only elements are ours, the only script is the nonce'd
/// one, no link has a non-http scheme.
fn assert_inert(body: &str, what: &str) {
    let lower = body.to_ascii_lowercase();
    for bad in ["<svg", "<img", "<iframe", "href=\"javascript", "href='javascript"] {
        assert!(!lower.contains(bad), "{what}: found {bad:?} in\n{body}");
    }
    assert_eq!(lower.matches("<script").count(), lower.matches("<script nonce=").count(), "{what}: {body}");
    assert!(lower.matches("<script").count() <= 1, "{what}");
    // Escaped content holds no '<', so every '<' opens one of our tags; outside its quoted
    // values a tag must hold no event handler and no javascript: URL.
    let ours = |s: &str, open: &str, close: &str| -> String {
        match (s.find(open), s.find(close)) {
            (Some(a), Some(b)) if a < b => format!("{}{}", &s[..a], &s[b..]),
            _ => s.to_string(),
        }
    };
    let markup = ours(&ours(&lower, "<script nonce=", "</script>"), "<style nonce=", "</style>");
    for tag in markup.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap_or("");
        let mut outside = String::new();
        let mut quoted = false;
        for c in tag.chars() {
            if c == '"' {
                quoted = !quoted;
            } else if !quoted {
                outside.push(c);
            }
        }
        assert!(!quoted, "{what}: unbalanced quotes in <{tag}>");
        assert!(!outside.contains(" on") && !outside.contains("javascript:"), "{what}: tag <{tag}>");
        assert!(!outside.contains('\''), "{what}: tag <{tag}>");
    }
}

fn csrf_of(body: &str) -> String {
    let i = body.find("name=\"csrf\" value=\"").expect("a label form") + "name=\"csrf\" value=\"".len();
    body[i..].split('"').next().unwrap().to_string()
}

fn report_hoods(db: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["report", "--store", db.to_str().unwrap(), "--threshold", "0.1"];
    args.extend_from_slice(extra);
    let out = run_ok(&args);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["neighborhood"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn pct(s: &str) -> String {
    s.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pages_render_inert_and_labels_need_csrf_and_change_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let db = hostile_store(tmp.path());
    let before = report_hoods(&db, &[]);
    assert!(before.contains(&"http://farm.test/wiki/".to_string()), "{before:?}");
    assert!(before.iter().any(|n| n.starts_with("http://evil.test/")), "{before:?}");

    let server = serve(&db, &["--threshold", "0.1"]);
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let get = |path: String| {
        let client = client.clone();
        let url = format!("{}{path}", server.1);
        async move {
            let r = client.get(&url).send().await.unwrap();
            let status = r.status().as_u16();
            (status, r.text().await.unwrap())
        }
    };

    // The list, every neighborhood view, every page view: inert.
    let (st, list) = get("/".into()).await;
    assert_eq!(st, 200);
    assert_inert(&list, "list");
    assert!(list.contains("farm.test/wiki/"), "{list}");
    assert!(
        list.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "hostile source title shown as text: {list}"
    );
    let mut pages = Vec::new();
    for n in &before {
        let (st, body) = get(format!("/n?name={}", pct(n))).await;
        assert_eq!(st, 200, "{n}");
        assert_inert(&body, n);
        for part in body.split("href=\"/p?url=").skip(1) {
            pages.push(part.split('"').next().unwrap().replace("&amp;", "&"));
        }
    }
    assert!(pages.len() >= 4, "{pages:?}");
    let mut saw_warc = false;
    let mut saw_passage = false;
    let mut saw_text = false;
    for p in &pages {
        let (st, body) = get(format!("/p?url={p}")).await;
        assert_eq!(st, 200, "{p}");
        assert_inert(&body, p);
        saw_warc |= body.contains("WARC record at offset 0 of") && body.contains("evil.warc");
        saw_passage |= body.contains("Hostile &lt;script&gt;alert(2)&lt;/script&gt; text");
        // The whole stored text: copied blocks marked with their source, the rest greyed.
        saw_text |= body.contains("<h2>Page text</h2>")
            && body.contains("<p class=\"copied\">")
            && body.contains("<p class=\"other\">");
    }
    assert!(saw_warc && saw_passage && saw_text);
    // Filters and paging answer too.
    for q in [
        "/?state=unreviewed",
        "/?host=%3Csvg",
        "/?state=copied-for-profit&page=3",
        "/n?name=nope",
        "/p?url=x",
    ] {
        let (st, body) = get(q.into()).await;
        assert!(st == 200 || st == 404, "{q}: {st}");
        assert_inert(&body, q);
    }
    // A request addressed to another host name (DNS rebinding) is refused.
    let r = client.get(format!("{}/", server.1)).header("Host", "evil.test").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 421);

    // Label posts: no token, a wrong token, then the right one.
    let target = "http://farm.test/wiki/";
    let post = |csrf: Option<String>| {
        let client = client.clone();
        let url = format!("{}/label", server.1);
        let mut body = format!("neighborhood={}&label=false-positive&note=boilerplate&back=%2F", pct(target));
        if let Some(c) = csrf {
            body.push_str(&format!("&csrf={c}"));
        }
        async move {
            client
                .post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(post(None).await, 403);
    assert_eq!(post(Some("0".repeat(32))).await, 403);
    let (_, list) = get("/?state=false-positive".into()).await;
    assert!(!list.contains("<a class=\"go\" href=\"/n?name=http%3A%2F%2Ffarm.test%2Fwiki%2F\""));
    let (_, all) = get("/".into()).await;
    assert_eq!(post(Some(csrf_of(&all))).await, 303);
    let (_, list) = get("/?state=false-positive".into()).await;
    assert!(list.contains("<a class=\"go\" href=\"/n?name=http%3A%2F%2Ffarm.test%2Fwiki%2F\""), "{list}");
    // GET never changes state.
    let (st, _) = get(format!("/label?neighborhood={}&label=unsure", pct(target))).await;
    assert_eq!(st, 405);
    drop(server);

    // Reports honor the label; --all and --unreviewed.
    let after = report_hoods(&db, &[]);
    assert!(!after.contains(&target.to_string()), "{after:?}");
    assert_eq!(after.len() + 1, before.len());
    assert_eq!(report_hoods(&db, &["--all"]), before);
    assert_eq!(report_hoods(&db, &["--unreviewed"]), after);

    // Export, import into another store, export again: the same labels.
    let out = run_ok(&["labels", "export", "--store", db.to_str().unwrap()]);
    let exported = String::from_utf8(out.stdout).unwrap();
    let row: serde_json::Value = serde_json::from_str(exported.lines().next().unwrap()).unwrap();
    assert_eq!(row["neighborhood"], target);
    assert_eq!(row["label"], "false-positive");
    assert_eq!(row["reviewer"], "tester");
    assert_eq!(row["note"], "boilerplate");
    assert!(row["time"].as_i64().unwrap() > 1_600_000_000);
    let file = tmp.path().join("labels.jsonl");
    fs::write(&file, &exported).unwrap();
    // Labels go into an existing store (only scan, crawl and demo create one): a second scan.
    let other_dir = tmp.path().join("other");
    fs::create_dir_all(&other_dir).unwrap();
    let other = hostile_store(&other_dir);
    let missing = tmp.path().join("other.db");
    let o = ditto()
        .args(["labels", "import", "--store", missing.to_str().unwrap(), file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "labels import creates no store");
    assert!(!missing.exists());
    run_ok(&["labels", "import", "--store", other.to_str().unwrap(), file.to_str().unwrap()]);
    let again = run_ok(&["labels", "export", "--store", other.to_str().unwrap()]);
    assert_eq!(String::from_utf8(again.stdout).unwrap(), exported);
}
