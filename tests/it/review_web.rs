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

/// The paragraph the near replica `farm.test/wiki/c.html` adds (before the unclosed tail).
const NEAR_EXTRA: &str =
    "<p>Changed paragraph &lt;script&gt;alert(14)&lt;/script&gt; of the near copy, \u{1} with a control \
                          character</p><div><p>unclosed";

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
    // A near replica of the farm page: one more (hostile) paragraph.
    put("farm.test/wiki/c.html", &farm.replacen("<div><p>unclosed", NEAR_EXTRA, 1));
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
    for bad in ["<img", "<iframe", "href=\"javascript", "href='javascript"] {
        assert!(!lower.contains(bad), "{what}: found {bad:?} in\n{body}");
    }
    // The only SVG is the list view's histogram.
    assert_eq!(lower.matches("<svg").count(), lower.matches("<svg class=\"hist\"").count(), "{what}: {body}");
    assert!(lower.matches("<svg").count() <= 1, "{what}");
    assert!(
        !body.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{what}: a raw control character"
    );
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
    neighborhoods(&run_ok(&args).stdout)
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
    // The histogram: a bar count for every neighborhood of the store, the threshold, and a
    // marker for each listed neighborhood (its name escaped in the marker's title).
    let population: u64 = list
        .split("neighborhoods above threshold")
        .next()
        .and_then(|h| h.rsplit(" of ").next())
        .and_then(|n| n.trim().parse().ok())
        .expect("the list says how many neighborhoods there are");
    let bars: u64 = list
        .split("data-count=\"")
        .skip(1)
        .map(|x| x.split('"').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(bars, population, "bars sum to every neighborhood");
    assert!(list.contains("<line class=\"threshold\"") && list.contains("threshold 0.1000"), "{list}");
    assert_eq!(list.matches("<path class=\"listed\"").count(), list.matches("<tr data-row>").count());
    assert!(list.contains("<title>#1 http://"), "{list}");
    assert!(list.contains("farm.test/wiki/"), "{list}");
    assert!(
        list.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "hostile source title shown as text: {list}"
    );
    let mut pages = Vec::new();
    let mut hood_near = 0;
    for n in &before {
        let (st, body) = get(format!("/n?name={}", pct(n))).await;
        assert_eq!(st, 200, "{n}");
        assert_inert(&body, n);
        for part in body.split("href=\"/p?url=").skip(1) {
            pages.push(part.split('"').next().unwrap().replace("&amp;", "&"));
        }
        hood_near += body.matches("<a class=\"cmp\" href=\"/d?").count();
    }
    // A neighborhood's pages marked near replicas link to their side-by-side too.
    assert!(hood_near > 0, "no near-replica link on any neighborhood view");
    assert!(pages.len() >= 4, "{pages:?}");
    let mut near = Vec::new();
    let mut saw_warc = false;
    let mut saw_passage = false;
    let mut saw_text = false;
    for p in &pages {
        let (st, body) = get(format!("/p?url={p}")).await;
        assert_eq!(st, 200, "{p}");
        assert_inert(&body, p);
        saw_warc |= body.contains("WARC record at offset 0 of") && body.contains("evil.warc");
        saw_passage |= body.contains("Hostile &lt;script&gt;alert(2)&lt;/script&gt; text");
        // The page's text read back: copied blocks highlighted in place with a reference to
        // their source in the list beside, the rest greyed; the hostile copied block escaped
        // inside its mark.
        saw_text |= body.contains("<h2>Page text</h2>")
            && body.contains("<aside class=\"sources\">")
            && body.contains("<li id=\"src-")
            && body.contains("<p class=\"other\" id=\"b")
            && body.split("<mark id=\"b").skip(1).any(|m| {
                m.split_once('>')
                    .is_some_and(|(_, t)| t.starts_with("Hostile &lt;script&gt;alert(2)&lt;/script&gt; text"))
            });
        for part in body.split("href=\"/d?").skip(1) {
            near.push(part.split('"').next().unwrap().replace("&amp;", "&"));
        }
    }
    assert!(saw_warc && saw_passage && saw_text);
    // Near replicas (marked live by the scan) link to their side-by-side view.
    assert!(!near.is_empty(), "no page links to a near replica");
    for q in &near {
        let (st, body) = get(format!("/d?{q}")).await;
        assert_eq!(st, 200, "{q}");
        assert_inert(&body, q);
        assert!(body.contains("<table class=\"sbs\">"), "{body}");
    }
    // The earlier page of each pair links back to the later one once the server has indexed
    // the marks (a pass over the pages beside the server: poll, bounded).
    for q in &near {
        let a = q.split('&').next().unwrap().trim_start_matches("a=");
        let link = format!("href=\"/d?{}\"", q.replace('&', "&amp;"));
        let start = std::time::Instant::now();
        loop {
            let (st, body) = get(format!("/p?url={a}")).await;
            assert_eq!(st, 200);
            assert_inert(&body, a);
            if !body.contains("near-pending") {
                assert!(
                    body.contains("<h2>Near replicas of this page</h2>") && body.contains(&link),
                    "{link}: {body}"
                );
                break;
            }
            assert!(start.elapsed().as_secs() < 20, "near replicas not indexed after 20 s");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    // The near copy beside the farm page: its extra paragraph shown on its side only, escaped.
    let (st, body) = get(format!(
        "/d?a={}&b={}",
        pct("http://farm.test/wiki/a.html"),
        pct("http://farm.test/wiki/c.html")
    ))
    .await;
    assert_eq!(st, 200);
    assert_inert(&body, "side by side");
    assert!(body.contains("<b>0</b> only in A · <b>1</b> only in B"), "{body}");
    assert!(
        body.contains("<td class=\"gap\"></td><td class=\"ins\">Changed paragraph &lt;script&gt;alert(14)&lt;/script&gt; of the near copy"),
        "{body}"
    );
    assert!(body.contains("blocks the same in both</summary>"), "{body}");
    // Filters and paging answer too.
    for q in [
        "/?state=unreviewed",
        "/?host=%3Csvg",
        "/?state=copied-for-profit&page=3",
        "/n?name=nope",
        "/p?url=x",
        "/d?a=x&b=y",
        "/d?a=%3Cscript%3E&b=%3Cscript%3E",
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

/// A page whose source is gone (file deleted) or changed (other bytes) after the scan: its
/// view says so plainly and still renders with what the store keeps; the side-by-side of the
/// two says it for each side; a page still at hand shows its highlighted text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_whose_source_is_gone_say_so_and_still_render() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let site = tmp.path().join("site");
    let dir = site.join("copy.test/wiki");
    fs::create_dir_all(&dir).unwrap();
    let paras: String = article_paragraphs("Albedo", 100).into_iter().take(4).collect();
    let page = |extra: &str| format!("<html><body><p>Menu of the copy site</p>{paras}{extra}</body></html>");
    for name in ["gone", "changed", "kept"] {
        fs::write(dir.join(format!("{name}.html")), page(&format!("<p>{name} page's own footer</p>")))
            .unwrap();
    }
    let db = tmp.path().join("s.db");
    scan_site(&db, &labelset, &site);
    fs::remove_file(dir.join("gone.html")).unwrap();
    fs::write(dir.join("changed.html"), page("<p>edited after the scan</p>")).unwrap();

    let server = serve(&db, &["--threshold", "0.1"]);
    let client = reqwest::Client::new();
    let get = |path: String| {
        let client = client.clone();
        let url = format!("{}{path}", server.1);
        async move {
            let r = client.get(&url).send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let url = |n: &str| pct(&format!("http://copy.test/wiki/{n}.html"));
    for name in ["gone", "changed"] {
        let (st, body) = get(format!("/p?url={}", url(name))).await;
        assert_eq!(st, 200, "{name}");
        assert_inert(&body, name);
        assert!(body.contains("<p class=\"muted gone\">The page's text cannot be shown: "), "{name}: {body}");
        assert!(!body.contains("<mark "), "{name}");
        // What the store keeps is still there: counts and sources.
        assert!(body.contains("labeled of") && body.contains("Albedo"), "{name}: {body}");
    }
    let (st, body) = get(format!("/d?a={}&b={}", url("gone"), url("changed"))).await;
    assert_eq!(st, 200);
    assert!(
        body.contains("The text of A cannot be shown: ") && body.contains("The text of B cannot be shown: ")
    );
    assert!(!body.contains("<table class=\"sbs\">"));
    let (st, body) = get(format!("/p?url={}", url("kept"))).await;
    assert_eq!(st, 200);
    assert_eq!(body.matches("<mark id=\"b").count(), 4, "the four copied paragraphs highlighted: {body}");
    assert!(body.contains("<p class=\"other\" id=\"b0\">Menu of the copy site</p>"), "{body}");
    let (st, body) = get(format!("/d?a={}&b={}", url("kept"), url("changed"))).await;
    assert_eq!(st, 200);
    assert!(body.contains("The text of B cannot be shown: ") && !body.contains("The text of A"), "{body}");
    drop(server);

    // Without the label set, the blocks the store's evidence names are the highlighted ones.
    let server =
        serve(&db, &["--threshold", "0.1", "--labelset", tmp.path().join("gone.dls").to_str().unwrap()]);
    let r = client.get(format!("{}/p?url={}", server.1, url("kept"))).send().await.unwrap();
    let body = r.text().await.unwrap();
    assert_inert(&body, "no label set");
    let marks = body.matches("<mark id=\"b").count();
    assert!((1..=4).contains(&marks), "{marks} marks: {body}");
    // Sources by id (no titles without the label set).
    assert!(
        body.split("<li id=\"src-")
            .skip(1)
            .any(|li| li.split_once("\">").is_some_and(|(_, t)| t.starts_with('#'))),
        "{body}"
    );
}
