//! Review page: a neighborhood labeled `false-positive` adds its copied chunks to the store's
//! reviewed stop list with one POST (CSRF token required), shown on `/stopchunks` with a
//! remove button per entry; `ditto stopchunks export` writes them as a stop list, and a later
//! scan into the store leaves them out of matching and says so.

use crate::common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use common::*;
use detector::{Normalization, StopList};
use labelsets::StopChunks;

struct Server(Child, String);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(db: &Path) -> Server {
    let mut child = ditto()
        .args(["review", "--store", db.to_str().unwrap(), "--listen", "127.0.0.1:0", "--reviewer", "tester"])
        .args(["--threshold", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("server prints its URL");
    Server(child, url.trim_end_matches('/').to_string())
}

fn pct(s: &str) -> String {
    s.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

fn csrf_of(body: &str) -> String {
    let key = "name=\"csrf\" value=\"";
    let i = body.find(key).expect("a form with a CSRF token") + key.len();
    body[i..].split('"').next().unwrap().to_string()
}

/// The SHA-1s of the remove buttons on `/stopchunks`.
fn listed(body: &str) -> Vec<String> {
    body.split("name=\"sha1\" value=\"").skip(1).map(|s| s.split('"').next().unwrap().to_string()).collect()
}

fn page_rows(db: &Path) -> Vec<serde_json::Value> {
    let out =
        run_ok(&["report", "--store", db.to_str().unwrap(), "--level", "page", "--threshold", "0", "--all"]);
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn labeled_of(rows: &[serde_json::Value], url: &str) -> u64 {
    rows.iter().find(|r| r["neighborhood"] == url).map(|r| r["labeled_chunks"].as_u64().unwrap()).unwrap_or(0)
}

fn write_site(site: &Path, pages: &[(&str, String)]) {
    for (rel, body) in pages {
        let p = site.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }
}

fn scan(db: &Path, labelset: &Path, site: &Path) -> String {
    String::from_utf8(scan_site(db, labelset, site).stderr).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn false_positive_chunks_join_the_stop_list_reversibly_and_later_scans_skip_them() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let copied = article_paragraphs("Albedo", 100)[..4].concat();
    let other = article_paragraphs("Aardvark", 100)[..2].concat();
    let site = tmp.path().join("site");
    write_site(
        &site,
        &[
            ("farm.test/a/one.html", format!("<p>Our own introduction.</p>{copied}")),
            ("zoo.test/b.html", format!("<p>Zoo notes.</p>{other}")),
            ("clean.test/c.html", "<p>Entirely original text, nothing copied at all.</p>".into()),
        ],
    );
    let db: PathBuf = tmp.path().join("site.db");
    let first = scan(&db, &labelset, &site);
    assert!(!first.contains("reviewed stop chunks"), "{first}");
    let rows = page_rows(&db);
    assert_eq!(labeled_of(&rows, "http://farm.test/a/one.html"), 4, "{rows:?}");

    let server = serve(&db);
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let get = |path: String| {
        let (client, url) = (client.clone(), format!("{}{path}", server.1));
        async move {
            let r = client.get(url).send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let post = |path: &str, body: String| {
        let (client, url) = (client.clone(), format!("{}{path}", server.1));
        async move {
            let r = client
                .post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body)
                .send()
                .await
                .unwrap();
            let to = r.headers().get("location").map(|v| v.to_str().unwrap().to_string());
            (r.status().as_u16(), to)
        }
    };
    let farm = "http://farm.test/";
    let (_, list) = get("/".into()).await;
    let csrf = csrf_of(&list);

    // Not offered, and refused, before the neighborhood is labeled false-positive.
    let (st, hood) = get(format!("/n?name={}", pct(farm))).await;
    assert_eq!(st, 200);
    assert!(!hood.contains("add its copied chunks to the stop list"));
    let add = |csrf: &str, n: &str| format!("csrf={csrf}&neighborhood={}", pct(n));
    assert_eq!(post("/stopchunks/add", add(&csrf, farm)).await.0, 409);
    let (st, _) =
        post("/label", format!("csrf={csrf}&neighborhood={}&label=false-positive&back=%2F", pct(farm))).await;
    assert_eq!(st, 303);

    // Offered now; the POST needs the CSRF token; GET does nothing.
    let (_, hood) = get(format!("/n?name={}", pct(farm))).await;
    assert!(hood.contains("add its copied chunks to the stop list"), "{hood}");
    assert!(hood.contains("action=\"/stopchunks/add\""));
    assert_eq!(post("/stopchunks/add", format!("neighborhood={}", pct(farm))).await.0, 403);
    assert_eq!(post("/stopchunks/add", add(&"0".repeat(32), farm)).await.0, 403);
    assert_eq!(get(format!("/stopchunks/add?neighborhood={}", pct(farm))).await.0, 405);
    let (_, empty) = get("/stopchunks".into()).await;
    assert!(empty.contains("No reviewed stop chunks yet"), "{empty}");
    // Another neighborhood, not dismissed, gives nothing.
    assert_eq!(post("/stopchunks/add", add(&csrf, "http://zoo.test/")).await.0, 409);

    let (st, to) = post("/stopchunks/add", add(&csrf, farm)).await;
    assert_eq!((st, to.as_deref()), (303, Some("/stopchunks")));
    let (st, shown) = get("/stopchunks".into()).await;
    assert_eq!(st, 200);
    let shas = listed(&shown);
    assert_eq!(shas.len(), 4, "{shown}");
    assert!(shown.contains("http://farm.test/") && shown.contains("tester"));
    // Adding again changes nothing.
    assert_eq!(post("/stopchunks/add", add(&csrf, farm)).await.0, 303);
    assert_eq!(listed(&get("/stopchunks".into()).await.1), shas);

    // Reversible: remove one (token required).
    let removed = shas[0].clone();
    assert_eq!(post("/stopchunks/remove", format!("sha1={removed}")).await.0, 403);
    assert_eq!(post("/stopchunks/remove", format!("csrf={csrf}&sha1=zz")).await.0, 400);
    let (st, to) = post("/stopchunks/remove", format!("csrf={}&sha1={removed}", csrf_of(&shown))).await;
    assert_eq!((st, to.as_deref()), (303, Some("/stopchunks")));
    let left = listed(&get("/stopchunks".into()).await.1);
    assert_eq!(left.len(), 3);
    assert!(!left.contains(&removed));
    drop(server);

    // Export: a stop list that loads back as exactly the three chunks.
    let out = run_ok(&["stopchunks", "export", "--store", db.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let stops = StopChunks::from_text(&text, Normalization::default());
    assert_eq!(stops.len(), 3, "{text}");
    for h in &left {
        assert!(stops.is_stop(&detector::fingerprint::parse_hex(h).unwrap()), "{h} not in\n{text}");
    }
    let path = tmp.path().join("stop.txt");
    fs::write(&path, &text).unwrap();

    // A later scan into the store leaves the reviewed chunks out and says so: the copy of
    // the farm page has one labeled chunk left (the removed one).
    let site2 = tmp.path().join("site2");
    write_site(&site2, &[("farm.test/a/two.html", format!("<p>Second page.</p>{copied}"))]);
    let second = scan(&db, &labelset, &site2);
    assert!(second.contains("3 reviewed stop chunks from the store"), "{second}");
    let rows = page_rows(&db);
    assert_eq!(labeled_of(&rows, "http://farm.test/a/two.html"), 1, "{rows:?}");
    assert_eq!(labeled_of(&rows, "http://farm.test/a/one.html"), 4);

    // The exported list does the same for another store.
    let db2 = tmp.path().join("other.db");
    run_ok(&[
        "scan",
        "--store",
        db2.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        "--stop-chunks",
        path.to_str().unwrap(),
        site2.to_str().unwrap(),
    ]);
    assert_eq!(labeled_of(&page_rows(&db2), "http://farm.test/a/two.html"), 1);
}
