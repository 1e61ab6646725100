//! Issue 10, global thresholds: `ditto scan --partition i/3` into three stores, then
//! `ditto report --store p0 --store p1 --store p2` prints exactly the report of one store
//! holding everything (neighborhood and page level, JSON Lines and table), since the merged
//! walk adds up the same integer accumulators in the same order (src/partitions.rs).

use crate::common;

use std::path::{Path, PathBuf};

use common::{run_ok, shared_data};

fn site() -> PathBuf {
    shared_data().join("reuse/site")
}

/// A label set from two documentation hosts of the reuse tree: their copies elsewhere in
/// the tree make the reports non-trivial.
fn docs_labelset(dir: &Path) -> PathBuf {
    let out = dir.join("docs.dls");
    let a = site().join("debian-reference.en.docs.test");
    let b = site().join("clang-16.docs.test");
    run_ok(&[
        "labelset",
        "build",
        "--name",
        "docs",
        "--min-chars",
        "100",
        "-o",
        out.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    out
}

fn scan(store: &Path, labels: &Path, partition: Option<&str>) {
    let mut args = vec!["scan", "--store", store.to_str().unwrap(), "--labelset", labels.to_str().unwrap()];
    args.extend(["--url-prefix", "http://", "--progress", "none", "--threads", "2"]);
    if let Some(p) = partition {
        args.extend(["--partition", p]);
    }
    let site = site();
    args.push(site.to_str().unwrap());
    run_ok(&args);
}

fn report(stores: &[&Path], extra: &[&str]) -> String {
    let mut args = vec!["report"];
    for s in stores {
        args.extend(["--store", s.to_str().unwrap()]);
    }
    args.extend(extra);
    String::from_utf8(run_ok(&args).stdout).unwrap()
}

fn pages(store: &Path) -> u64 {
    let out = run_ok(&["stats", "--store", store.to_str().unwrap(), "--json"]).stdout;
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    v["pages"].as_u64().unwrap()
}

#[test]
fn merged_report_of_partitioned_scans_equals_the_single_store_report() {
    let tmp = tempfile::tempdir().unwrap();
    let labels = docs_labelset(tmp.path());
    let single = tmp.path().join("single.db");
    scan(&single, &labels, None);
    let parts: Vec<PathBuf> = (0..3).map(|i| tmp.path().join(format!("p{i}.db"))).collect();
    for (i, p) in parts.iter().enumerate() {
        scan(p, &labels, Some(&format!("{i}/3")));
    }
    // The partitions split the pages: none lost, none twice.
    let split: Vec<u64> = parts.iter().map(|p| pages(p)).collect();
    assert!(split.iter().all(|&n| n > 0), "every partition got pages: {split:?}");
    assert_eq!(split.iter().sum::<u64>(), pages(&single));
    let parts: Vec<&Path> = parts.iter().map(PathBuf::as_path).collect();

    let cases: [&[&str]; 4] = [
        &["--format", "jsonl"],
        &["--format", "jsonl", "--level", "page"],
        &["--format", "table"],
        &["--format", "csv", "--level", "page", "--threshold", "0.2"],
    ];
    for extra in cases {
        let one = report(&[&single], extra);
        let merged = report(&parts, extra);
        assert!(one.lines().count() > 2, "non-trivial report for {extra:?}:\n{one}");
        assert_eq!(merged, one, "merged report differs for {extra:?}");
        // A single partition alone judges differently (its own thresholds): the merge matters.
        if extra == ["--format", "jsonl"] {
            assert_ne!(report(&parts[..1], extra), one);
        }
    }
}

#[test]
fn stores_of_different_label_sets_are_not_merged() {
    let tmp = tempfile::tempdir().unwrap();
    let labels = docs_labelset(tmp.path());
    let other = tmp.path().join("other.dls");
    let src = site().join("clang-15.docs.test");
    run_ok(&["labelset", "build", "--name", "other", "-o", other.to_str().unwrap(), src.to_str().unwrap()]);
    let (a, b) = (tmp.path().join("a.db"), tmp.path().join("b.db"));
    let one = shared_data().join("reuse/site/clang-15.docs.test");
    for (db, l) in [(&a, &labels), (&b, &other)] {
        run_ok(&[
            "scan",
            "--store",
            db.to_str().unwrap(),
            "--labelset",
            l.to_str().unwrap(),
            "--progress",
            "none",
            one.to_str().unwrap(),
        ]);
    }
    let out = common::ditto()
        .args(["report", "--store", a.to_str().unwrap(), "--store", b.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be merged"));
}
