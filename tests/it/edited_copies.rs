//! Edited copies (issue 36): on a small edited-copy web per row (`testweb::edited`, scale
//! `small`: 11 hosts, 4 of them content farms copying labeled Wikipedia articles with one kind
//! of edit, the others innocent), `ditto labelset build` + `ditto scan` + `ditto report` with
//! default settings must find the copying hosts and directories with precision and recall
//! ≥ 0.95, and flag no innocent host.
//!
//! Scoring (as `scripts/eval_edited_web.sh`): a host is flagged when some reported neighborhood
//! lies under `http://HOST/`; a directory when a reported neighborhood is `http://HOST/DIR/` or
//! lies under it. With exact chunk matching only, the rows that change words or block
//! boundaries fail: that is issue 36. The scan's flags come from [`SCAN_FLAGS`].

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::*;
use testweb::edited::{generate, Edit, Scale, Spec, Truth};

/// Flags added to every `ditto scan` of these tests (e.g. `&["--match", "passage"]`).
const SCAN_FLAGS: &[&str] = &[];

/// Seed of the webs (the tune split; holdout variants are for `scripts/eval_edited_web.sh`).
const SEED: u64 = 1;

/// Precision and recall floor (issue 36: "≥ 0.95/0.95 on every row").
const FLOOR: f64 = 0.95;

#[derive(Debug)]
struct Scores {
    host_precision: f64,
    host_recall: f64,
    dir_precision: f64,
    dir_recall: f64,
    innocent_flagged: Vec<String>,
    reported: Vec<String>,
}

fn root_of(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    format!("{scheme}://{}/", rest.split('/').next().unwrap_or(""))
}

/// `http://host/dir/` for a prefix at or under a directory; `None` for the root.
fn dir_of(prefix: &str) -> Option<String> {
    let (scheme, rest) = prefix.split_once("://")?;
    let mut parts = rest.split('/');
    let host = parts.next()?;
    let dir = parts.next().filter(|d| !d.is_empty())?;
    parts.next()?;
    Some(format!("{scheme}://{host}/{dir}/"))
}

/// Precision (1 when nothing is flagged) and recall (1 when nothing is to find).
fn pr(flagged: &BTreeSet<String>, truth: &BTreeSet<String>) -> (f64, f64) {
    let tp = flagged.intersection(truth).count() as f64;
    let p = if flagged.is_empty() { 1.0 } else { tp / flagged.len() as f64 };
    let r = if truth.is_empty() { 1.0 } else { tp / truth.len() as f64 };
    (p, r)
}

fn score(truth: &Truth, reported: &[String]) -> Scores {
    let hosts: BTreeSet<String> = reported.iter().map(|n| root_of(n)).collect();
    let dirs: BTreeSet<String> = reported.iter().filter_map(|n| dir_of(n)).collect();
    let (host_precision, host_recall) = pr(&hosts, &truth.copying_hosts());
    let (dir_precision, dir_recall) = pr(&dirs, &truth.copying_dirs());
    Scores {
        host_precision,
        host_recall,
        dir_precision,
        dir_recall,
        innocent_flagged: hosts.intersection(&truth.innocent_hosts()).cloned().collect(),
        reported: reported.to_vec(),
    }
}

/// Generate the row's web in `dir`, build its label set, scan and report it: the truth, the
/// reported neighborhoods and the pages `--level page` reports.
fn run_row(edit: Edit, dir: &Path) -> (Truth, Vec<String>, Vec<String>) {
    run_row_with(edit, dir, SCAN_FLAGS)
}

fn run_row_with(edit: Edit, dir: &Path, flags: &[&str]) -> (Truth, Vec<String>, Vec<String>) {
    let spec = Spec { edit, seed: SEED, holdout: false, scale: Scale::small() };
    let g = generate(&shared_data().join("wikipedia/articles"), &dir.join("gen"), &spec).expect("generating");
    let dls = dir.join("labels.dls");
    run_ok(&[
        "labelset",
        "build",
        "--name",
        "wikipedia",
        "--min-chars",
        "100",
        "-o",
        dls.to_str().unwrap(),
        g.labelset_dir.to_str().unwrap(),
    ]);
    let store = dir.join("store");
    let mut args = vec![
        "scan",
        "--progress",
        "none",
        "--store",
        store.to_str().unwrap(),
        "--labelset",
        dls.to_str().unwrap(),
        "--url-prefix",
        &g.truth.url_prefix,
    ];
    args.extend_from_slice(flags);
    args.push(g.web_dir.to_str().unwrap());
    run_ok(&args);
    let rep = run_ok(&["report", "--store", store.to_str().unwrap(), "--format", "jsonl"]);
    let pages =
        run_ok(&["report", "--store", store.to_str().unwrap(), "--format", "jsonl", "--level", "page"]);
    (g.truth, neighborhoods(&rep.stdout), neighborhoods(&pages.stdout))
}

fn assert_row(edit: Edit) {
    let tmp = tempfile::tempdir().unwrap();
    let (truth, reported, _) = run_row(edit, tmp.path());
    let s = score(&truth, &reported);
    eprintln!(
        "{} ({}): host P/R {:.2}/{:.2}, dir P/R {:.2}/{:.2}",
        edit.name(),
        edit.describe(),
        s.host_precision,
        s.host_recall,
        s.dir_precision,
        s.dir_recall
    );
    assert!(
        s.innocent_flagged.is_empty(),
        "{}: innocent hosts flagged: {:?}",
        edit.name(),
        s.innocent_flagged
    );
    let ok = s.host_precision >= FLOOR
        && s.host_recall >= FLOOR
        && s.dir_precision >= FLOOR
        && s.dir_recall >= FLOOR;
    assert!(
        ok,
        "{} ({}): below {FLOOR}: {s:?}\nreported {:?}\ncopying hosts {:?}\ncopying dirs {:?}",
        edit.name(),
        edit.describe(),
        s.reported,
        truth.copying_hosts(),
        truth.copying_dirs()
    );
}

/// `--match exact` is Ardi & Heidemann's method as published: one word changed per paragraph
/// hides every copy from it (recall 0), where the default (passages) finds them all.
#[test]
fn match_exact_finds_no_edited_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let (truth, reported, _) = run_row_with(Edit::Synonym, tmp.path(), &["--match", "exact"]);
    let s = score(&truth, &reported);
    assert_eq!(s.host_recall, 0.0, "{s:?}");

    // The store's pages were judged without passages: a run with them is refused (its pages'
    // `contains` would not compare), one with the same `--match` goes on.
    let rescan = |flags: &[&str]| {
        let (store, dls) = (tmp.path().join("store"), tmp.path().join("labels.dls"));
        let mut cmd = ditto();
        cmd.args(["scan", "--progress", "none", "--store"]).arg(&store).arg("--labelset").arg(&dls);
        cmd.args(flags).arg(tmp.path().join("gen/web"));
        cmd.output().unwrap()
    };
    let refused = rescan(&[]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{err}");
    assert!(err.contains("--match exact") && err.contains("use a new store"), "{err}");
    let same = rescan(&["--match", "exact"]);
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stderr));
}

#[test]
fn row_none() {
    assert_row(Edit::None);
}

#[test]
fn row_synonym() {
    assert_row(Edit::Synonym);
}

#[test]
fn row_light() {
    assert_row(Edit::Light);
}

#[test]
fn row_heavy() {
    assert_row(Edit::Heavy);
}

#[test]
fn row_split() {
    assert_row(Edit::Split);
}

#[test]
fn row_join() {
    assert_row(Edit::Join);
}

#[test]
fn row_insert() {
    assert_row(Edit::Insert);
}

#[test]
fn row_tailcut() {
    assert_row(Edit::TailCut);
}

#[test]
fn row_homoglyph() {
    assert_row(Edit::Homoglyph);
}

#[test]
fn row_spelling() {
    assert_row(Edit::Spelling);
}

#[test]
fn row_brbr() {
    assert_row(Edit::BrBr);
}

/// Innocent hosts (independent pages on labeled topics, one-sentence quotes, shared
/// boilerplate and templates, copies of unlabeled articles) are never flagged, neither as
/// neighborhoods nor as pages, on the unedited web and on the most edited one.
#[test]
fn innocent_hosts_never_flagged() {
    for edit in [Edit::None, Edit::Heavy] {
        let tmp = tempfile::tempdir().unwrap();
        let (truth, reported, pages) = run_row(edit, tmp.path());
        let innocent = truth.innocent_hosts();
        assert!(innocent.len() >= 5, "{innocent:?}");
        let bad: Vec<&String> = reported.iter().filter(|n| innocent.contains(&root_of(n))).collect();
        assert!(bad.is_empty(), "{}: innocent neighborhoods reported: {bad:?}", edit.name());
        let bad: Vec<&String> = pages.iter().filter(|p| innocent.contains(&root_of(p))).collect();
        assert!(bad.is_empty(), "{}: innocent pages reported: {bad:?}", edit.name());
    }
    // The scoring itself: a reported directory flags its host and itself, the root only the host.
    assert_eq!(dir_of("http://a.test/d/"), Some("http://a.test/d/".into()));
    assert_eq!(dir_of("http://a.test/d/e/"), Some("http://a.test/d/".into()));
    assert_eq!(dir_of("http://a.test/"), None);
    assert_eq!(root_of("http://a.test/d/x.html"), "http://a.test/");
}

/// Kills the review server when the test ends, pass or fail.
struct Review(std::process::Child);
impl Drop for Review {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `ditto review` on `store` (with `extra` flags): the server and its base URL.
fn review(store: &Path, extra: &[&str]) -> (Review, String) {
    use std::io::BufRead;
    let mut child = ditto()
        .args(["review", "--store", store.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("server prints its URL");
    (Review(child), url.trim_end_matches('/').to_string())
}

/// Evidence a reviewer can check (issue 36, item 4): with `--source-pages` (the articles the label
/// set was built from), the page view of an edited copy shows its copied blocks beside the
/// source paragraphs, the replaced words marked on both sides; without it, a line says how.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_shows_edited_blocks_beside_their_source_paragraphs() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = Spec { edit: Edit::Synonym, seed: SEED, holdout: false, scale: Scale::small() };
    let g = generate(&shared_data().join("wikipedia/articles"), &tmp.path().join("gen"), &spec).unwrap();
    let dls = tmp.path().join("labels.dls");
    run_ok(&[
        "labelset",
        "build",
        "-q",
        "--name",
        "w",
        "--min-chars",
        "100",
        "-o",
        dls.to_str().unwrap(),
        g.labelset_dir.to_str().unwrap(),
    ]);
    let store = tmp.path().join("store");
    let (s, d) = (store.to_str().unwrap(), dls.to_str().unwrap());
    run_ok(&[
        "scan",
        "--progress",
        "none",
        "--store",
        s,
        "--labelset",
        d,
        "--url-prefix",
        &g.truth.url_prefix,
        g.web_dir.to_str().unwrap(),
    ]);
    let copied: Vec<&str> = g
        .truth
        .hosts
        .iter()
        .flat_map(|h| &h.dirs)
        .flat_map(|d| &d.pages)
        .filter(|p| p.labeled && p.copies.is_some())
        .map(|p| p.url.as_str())
        .take(3)
        .collect();
    assert!(!copied.is_empty());
    let client = reqwest::Client::new();
    let view = |base: String, url: &str| {
        let q = format!("{base}/p?url={}", url.replace(':', "%3A").replace('/', "%2F"));
        let client = client.clone();
        async move { client.get(q).send().await.unwrap().text().await.unwrap() }
    };
    let (_plain, base) = review(&store, &[]);
    let body = view(base, copied[0]).await;
    assert!(body.contains("beside-hint") && !body.contains("sbs beside"), "{body}");
    drop(_plain);
    let (_with, base) = review(&store, &["--source-pages", g.labelset_dir.to_str().unwrap()]);
    let mut marked_rows = 0;
    for url in &copied {
        let body = view(base.clone(), url).await;
        let table = body
            .split("<table class=\"sbs beside\">")
            .nth(1)
            .unwrap_or_else(|| panic!("no beside table for {url}: {body}"));
        let table = table.split("</table>").next().unwrap();
        let (mut beside, mut unmatched) = (0, 0);
        for row in table.split("<tr>").skip(2) {
            // The source cell names its source and holds its words; a changed word is
            // marked in both cells. A block counted only because it lies between copied
            // ones (an ad inside the copy) has no source paragraph, and says so.
            let Some((src, page)) = row.split_once("<td class=\"ins\">") else {
                assert!(row.contains("no paragraph of it shares this block's words"), "{row}");
                unmatched += 1;
                continue;
            };
            assert!(src.contains("<td class=\"del\">"), "{row}");
            beside += 1;
            if src.contains("<span class=\"wd\">") && page.contains("<span class=\"wd\">") {
                marked_rows += 1;
            }
        }
        assert!(beside > 2 * unmatched, "{beside} beside their source, {unmatched} without");
    }
    // One word per paragraph was replaced by a synonym: most rows show it.
    assert!(marked_rows >= copied.len(), "{marked_rows} rows with marked words");
    // The report's evidence with --source-pages: each passage row beside its source
    // paragraph, the synonym among the page's words that differ.
    let out = run_ok(&[
        "report",
        "--store",
        s,
        "--level",
        "page",
        "--format",
        "jsonl",
        "--source-pages",
        g.labelset_dir.to_str().unwrap(),
    ]);
    let (mut with_source, mut passage_rows) = (0, 0);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        for e in row["evidence"].as_array().unwrap() {
            if e["match"] == "passage" {
                passage_rows += 1;
                let differs = &e["differs"]["page_only"];
                if e["source_passage"].is_string() && differs.as_array().is_some_and(|d| !d.is_empty()) {
                    with_source += 1;
                }
            }
        }
    }
    assert!(passage_rows > 0 && with_source * 10 >= passage_rows * 9, "{with_source} of {passage_rows}");
    // Without it, no such fields.
    let out = run_ok(&["report", "--store", s, "--level", "page", "--format", "jsonl"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("source_passage"));
}
