//! What a new user hits following the README literally (issue 25, items 1, 7, 8): each test
//! reproduces one surprise, run as the README writes the command.

use crate::common;

use std::fs;
use std::path::Path;

use common::*;

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, body).unwrap();
}

/// A folder of HOST/PATH pages: a content farm copying Wikipedia and three hosts of original
/// documentation (from the shared Debian docs).
fn host_path_web(web: &Path) {
    for a in ["Albedo", "Aardvark", "ASCII", "Anarchism"] {
        let body = format!(
            "<html><body><p>Cheap watches!</p>{}</body></html>",
            article_paragraphs(a, 100).join("\n")
        );
        write(web, &format!("farm.test/wiki/{a}.html"), &body);
    }
    let debian = shared_data().join("reuse/site/debian-faq.en.docs.test");
    let mut docs: Vec<_> = fs::read_dir(&debian)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    docs.sort();
    for (i, p) in docs.iter().take(6).enumerate() {
        let name = p.file_name().unwrap().to_str().unwrap();
        write(web, &format!("docs{}.test/faq/{name}", i % 3), &fs::read_to_string(p).unwrap());
    }
}

#[test]
fn a_host_path_folder_scanned_without_a_flag_finds_the_copier() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = tmp.path().join("web");
    host_path_web(&web);
    let db = tmp.path().join("d.db");
    // As the README writes it: no --url-prefix.
    let out = run_ok(&[
        "scan",
        "--progress",
        "none",
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        web.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("subfolders are host names, read as http://HOST/PATH"), "{err}");
    let out = run_ok(&["report", "--store", db.to_str().unwrap(), "--format", "jsonl"]);
    let flagged: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["neighborhood"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(
        flagged.iter().any(|n| n.starts_with("http://farm.test/")),
        "the farm is not flagged: {flagged:?}"
    );
    assert!(flagged.iter().all(|n| n.starts_with("http://farm.test/")), "only the farm: {flagged:?}");
}

#[test]
fn a_folder_whose_urls_have_no_host_is_warned_about_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let flat = tmp.path().join("pages");
    for a in ["Albedo", "Aardvark"] {
        write(
            &flat,
            &format!("{a}.html"),
            &format!("<html><body>{}</body></html>", article_paragraphs(a, 100).join("\n")),
        );
    }
    let db = tmp.path().join("flat.db");
    let out = run_ok(&[
        "scan",
        "--progress",
        "none",
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        flat.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning:") && err.contains("no host") && err.contains("--url-prefix http://HOST/"),
        "{err}"
    );
    // The fix the warning names works.
    let db2 = tmp.path().join("fixed.db");
    run_ok(&[
        "scan",
        "--progress",
        "none",
        "--store",
        db2.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--url-prefix",
        "http://pages.test/",
        flat.to_str().unwrap(),
    ]);
    let out =
        run_ok(&["report", "--store", db2.to_str().unwrap(), "--format", "jsonl", "--threshold", "0.1"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("pages.test/"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The `sources[].url` of every report row.
fn source_urls(db: &Path) -> Vec<String> {
    let out = run_ok(&["report", "--store", db.to_str().unwrap(), "--format", "jsonl", "--threshold", "0.1"]);
    let mut urls = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        for s in row["sources"].as_array().unwrap() {
            urls.push(s["url"].as_str().unwrap_or("").to_string());
        }
    }
    urls
}

#[test]
fn label_set_sources_from_a_folder_are_linkable_or_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let web = tmp.path().join("web");
    host_path_web(&web);
    // Label sources saved as HOST/PATH: their URLs are http://HOST/PATH, no flag needed.
    let saved = tmp.path().join("saved");
    for a in ["Albedo", "Aardvark", "ASCII", "Anarchism"] {
        let src = shared_data().join(format!("wikipedia/articles/{a}.html"));
        write(&saved, &format!("en.wikipedia.org/wiki/{a}.html"), &fs::read_to_string(src).unwrap());
    }
    let dls = tmp.path().join("hosts.dls");
    let out =
        run_ok(&["labelset", "build", "--name", "w", "-o", dls.to_str().unwrap(), saved.to_str().unwrap()]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = tmp.path().join("h.db");
    run_ok(&[
        "scan",
        "--progress",
        "none",
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        dls.to_str().unwrap(),
        web.to_str().unwrap(),
    ]);
    let urls = source_urls(&db);
    assert!(
        !urls.is_empty() && urls.iter().all(|u| u.starts_with("http://en.wikipedia.org/wiki/")),
        "{urls:?}"
    );

    // A flat folder of articles (the shared sample's layout): warned, with the flag that fixes it.
    let articles = shared_data().join("wikipedia/articles");
    let flat = tmp.path().join("flat.dls");
    let out = run_ok(&[
        "labelset",
        "build",
        "--name",
        "w",
        "-o",
        flat.to_str().unwrap(),
        articles.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning:") && err.contains("--url-prefix https://en.wikipedia.org/wiki/"), "{err}");
}
