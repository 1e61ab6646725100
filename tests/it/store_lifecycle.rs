//! The store's lifecycle (issue 22 item 4, 5; issue 25 item 3): only `scan`, `crawl` and
//! `demo` create a store; every other command refuses a missing path or one that is not a
//! ditto store, and writes nothing there; a store held by `ditto review` can still be read;
//! `report --labelset` must be the store's label set.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use common::*;

fn run(args: &[&str]) -> Output {
    ditto().args(args).output().expect("running ditto")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A small store: the Debian FAQ pages of the reuse web, scanned with the Wikipedia label set.
fn small_store(dir: &Path, name: &str) -> (String, String) {
    let labelset = wikipedia_labelset(dir);
    let db = dir.join(name);
    let site = shared_data().join("reuse/site/debian-faq.en.docs.test");
    scan_plain(&db, &labelset, &site);
    (db.to_str().unwrap().to_string(), labelset.to_str().unwrap().to_string())
}

/// Every command that reads a store, with the arguments it needs besides `--store`.
fn readers(tmp: &Path) -> Vec<Vec<String>> {
    let out = tmp.join("out.csv").to_str().unwrap().to_string();
    let empty = tmp.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        s(&["stats"]),
        s(&["report"]),
        s(&["review", "--listen", "127.0.0.1:0"]),
        s(&["labels", "export"]),
        s(&["labels", "import", empty.to_str().unwrap()]),
        s(&["replicas"]),
        s(&["quilts"]),
        s(&["origins"]),
        s(&["stopchunks", "export"]),
        s(&["export", "chunks", "--output", &out]),
        s(&["store", "check"]),
    ]
}

#[test]
fn every_command_but_scan_refuses_a_missing_store_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("typo.db");
    let missing = missing.to_str().unwrap();
    for args in readers(tmp.path()) {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.extend(["--store", missing]);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(1), "ditto {a:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("no ditto store at {missing}")),
            "ditto {a:?} must name the missing path: {}",
            stderr(&o)
        );
        assert!(!Path::new(missing).exists(), "ditto {a:?} created {missing}");
    }
}

#[test]
fn a_directory_that_is_not_a_store_is_refused_and_left_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let dir = tmp.path().join("photos");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("holiday.jpg"), b"not a store").unwrap();
    let dir_s = dir.to_str().unwrap();
    let listing = || {
        let mut v: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    };
    let site = shared_data().join("reuse/site/debian-faq.en.docs.test");
    let scan = [
        "scan",
        "--store",
        dir_s,
        "--labelset",
        labelset.to_str().unwrap(),
        "--progress",
        "none",
        site.to_str().unwrap(),
    ];
    let mut commands: Vec<Vec<String>> = readers(tmp.path());
    commands.push(scan.iter().map(|s| s.to_string()).collect());
    for args in commands {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        if a[0] != "scan" {
            a.extend(["--store", dir_s]);
        }
        let o = run(&a);
        assert_eq!(o.status.code(), Some(1), "ditto {a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("is not a ditto store"), "ditto {a:?}: {}", stderr(&o));
        assert_eq!(listing(), vec!["holiday.jpg".to_string()], "ditto {a:?} wrote into {dir_s}");
    }

    // An empty directory: refused by readers, adopted by scan (which marks it a store).
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = run(&["stats", "--store", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    let mut scan_empty = scan;
    scan_empty[2] = empty.to_str().unwrap();
    run_ok(&scan_empty);
    assert!(empty.join("ditto-store.json").exists());
    let stats = run_ok(&["stats", "--store", empty.to_str().unwrap(), "--json"]);
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["pages"].as_u64(), Some(18));
    // The owner file goes when the store is closed cleanly.
    assert!(!empty.join("ditto-store.owner").exists());
}

#[test]
fn report_with_another_label_set_is_refused_as_scan_refuses_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, labelset) = small_store(tmp.path(), "s.db");
    // The same articles with another minimum chunk length: another label set.
    let other = tmp.path().join("other.dls");
    run_ok(&[
        "labelset",
        "build",
        "--name",
        "wikipedia",
        "--min-chars",
        "200",
        "-o",
        other.to_str().unwrap(),
        shared_data().join("wikipedia/articles").to_str().unwrap(),
    ]);
    let o = run(&["report", "--store", &db, "--labelset", other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("this store was scanned with label set"), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "no report is written with the wrong label set");
    // Scan refuses it too (the same binding).
    let site = shared_data().join("reuse/site/debian-faq.en.docs.test");
    let o = run(&["scan", "--store", &db, "--labelset", other.to_str().unwrap(), site.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The store's own label set is accepted.
    run_ok(&["report", "--store", &db, "--labelset", &labelset, "--format", "jsonl"]);
}

/// `ditto review` on `db`, returned once it serves (its URL line is on stdout).
fn start_review(db: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ditto"))
        .args(["review", "--store", db, "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("serving http://"), "{line}");
    child
}

#[test]
fn a_store_held_by_review_is_still_read_by_report_stats_and_labels_export() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, _) = small_store(tmp.path(), "s.db");
    let stats_json = |o: &Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v.as_object_mut().unwrap().remove("size_on_disk_bytes");
        v
    };
    let stats_before = stats_json(&run_ok(&["stats", "--store", &db, "--json"]));
    let report_before = run_ok(&["report", "--store", &db, "--format", "jsonl", "--level", "page"]).stdout;
    let labels = tmp.path().join("labels.jsonl");
    std::fs::write(
        &labels,
        r#"{"neighborhood":"http://debian-faq.en.docs.test/","label":"unsure","note":"n","reviewer":"r","time":5}"#,
    )
    .unwrap();
    run_ok(&["labels", "import", "--store", &db, labels.to_str().unwrap()]);

    let mut review = start_review(&db);
    let pid = review.id();
    let held = format!("store in use by ditto review (pid {pid})");
    let o = run_ok(&["stats", "--store", &db, "--json"]);
    assert_eq!(stats_json(&o), stats_before);
    assert!(stderr(&o).contains(&held), "{}", stderr(&o));
    let o = run_ok(&["report", "--store", &db, "--format", "jsonl", "--level", "page"]);
    assert_eq!(o.stdout, report_before);
    let o = run_ok(&["labels", "export", "--store", &db]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"unsure\""), "{o:?}");
    // What needs the files themselves says who holds them, in one plain line.
    for args in [vec!["store", "check"], vec!["labels", "import", labels.to_str().unwrap()]] {
        let mut a = args.clone();
        a.extend(["--store", db.as_str()]);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert!(err.contains(&held), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains("WouldBlock") && !err.contains("acquire lock"), "{err}");
    }
    review.kill().unwrap();
    review.wait().unwrap();
    // Killed: the lock goes with the process; the store opens as before.
    assert_eq!(stats_json(&run_ok(&["stats", "--store", &db, "--json"])), stats_before);
    run_ok(&["store", "check", "--store", &db]);
}
