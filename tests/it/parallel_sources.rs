//! Issue 39, parallel sources: the same inputs (several WARC files and a folder walked by
//! every reader, with a WARC file met in the walk and folders reached through symlinks)
//! scanned with one thread and with four give the same store: chunk and file exports,
//! totals, reports and replica clusters; and every stage, the source's readers among them,
//! reports its busy and CPU time.

use crate::common;

use std::path::Path;

use common::{run_ok, shared_data};

/// A folder `DIR/HOST/PATH` of three hosts of the reuse tree (symlinks, followed), and a
/// small WARC file the walk meets, read as a WARC input.
fn tree(dir: &Path) -> std::path::PathBuf {
    let tree = dir.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let site = shared_data().join("reuse/site");
    for host in ["debian-faq.en.docs.test", "archive-mirror.docs.test", "debian-reference.en.docs.test"] {
        std::os::unix::fs::symlink(site.join(host), tree.join(host)).unwrap();
    }
    std::fs::copy(shared_data().join("warc/valid/resiliparse/warcfile.warc.gz"), tree.join("w.warc.gz"))
        .unwrap();
    tree
}

/// A label set of two documentation hosts of the reuse tree: their copies in the inputs
/// (the big WARC's Debian pages, the folder's mirror) make the reports non-trivial.
fn docs_labelset(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("docs.dls");
    let site = shared_data().join("reuse/site");
    let (a, b) = (site.join("debian-reference.en.docs.test"), site.join("clang-16.docs.test"));
    let args = ["labelset", "build", "--name", "docs", "--min-chars", "100", "-o", out.to_str().unwrap()];
    let mut args = args.to_vec();
    args.extend([a.to_str().unwrap(), b.to_str().unwrap()]);
    run_ok(&args);
    out
}

fn scan(db: &Path, labels: &Path, threads: &str, inputs: &[String]) -> serde_json::Value {
    let stats = db.with_extension("stats.json");
    let mut args = vec![
        "scan",
        "--store",
        db.to_str().unwrap(),
        "--labelset",
        labels.to_str().unwrap(),
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        "--threads",
        threads,
        "--stats-json",
        stats.to_str().unwrap(),
    ];
    args.extend(inputs.iter().map(String::as_str));
    run_ok(&args);
    serde_json::from_slice(&std::fs::read(stats).unwrap()).unwrap()
}

/// Everything a store gives that must not depend on the thread count.
fn outputs(db: &Path) -> Vec<(String, String)> {
    let db_s = db.to_str().unwrap();
    let mut out = Vec::new();
    for rows in ["chunks", "files"] {
        let csv = db.with_extension(format!("{rows}.csv"));
        run_ok(&["export", rows, "--store", db_s, "-o", csv.to_str().unwrap()]);
        out.push((format!("export {rows}"), std::fs::read_to_string(csv).unwrap()));
    }
    let stats = run_ok(&["stats", "--store", db_s, "--json"]).stdout;
    let mut stats: serde_json::Value = serde_json::from_slice(&stats).unwrap();
    stats.as_object_mut().unwrap().remove("size_on_disk_bytes");
    out.push(("stats".into(), stats.to_string()));
    for args in [
        &["report", "--store", db_s, "--format", "jsonl"][..],
        &["report", "--store", db_s, "--format", "jsonl", "--level", "page"],
        &["replicas", "--store", db_s, "--format", "jsonl"],
    ] {
        out.push((args.join(" "), String::from_utf8(run_ok(args).stdout).unwrap()));
    }
    out
}

#[test]
fn one_thread_and_four_give_the_same_store() {
    let tmp = tempfile::tempdir().unwrap();
    let labels = docs_labelset(tmp.path());
    let data = shared_data();
    let mut inputs: Vec<String> = [
        "warc/big/debian-docs-html.warc.gz",
        "warc/valid/pywb/iana.warc.gz",
        "warc/valid/warcio/example.warc.gz",
    ]
    .iter()
    .map(|p| data.join(p).to_str().unwrap().to_string())
    .collect();
    inputs.push(tree(tmp.path()).to_str().unwrap().to_string());

    let one = tmp.path().join("one.db");
    let four = tmp.path().join("four.db");
    let st1 = scan(&one, &labels, "1", &inputs);
    let st4 = scan(&four, &labels, "4", &inputs);

    for key in ["pages_read", "pages_written", "payload_bytes", "input_bytes", "skipped", "errors"] {
        assert_eq!(st1[key], st4[key], "--stats-json {key}");
    }
    // Pages from every input: the big WARC's 1,388 and the folder's.
    assert!(st4["pages_written"].as_u64().unwrap() > 1_400, "{}", st4["pages_written"]);
    let (o1, o4) = (outputs(&one), outputs(&four));
    for ((what, a), (_, b)) in o1.iter().zip(&o4) {
        // Reports: two neighborhoods and 29 pages above the thresholds; 36 replica clusters.
        assert!(a.lines().count() > 1 || what == "stats", "{what} is (nearly) empty: {a}");
        assert!(a == b, "{what} differs between --threads 1 and --threads 4");
    }
    assert!(
        o1[1].1.contains("/w.warc.gz") || o1[0].1.contains("example.com"),
        "the walk's WARC file was read"
    );

    // Every stage reports busy and CPU time; the source's readers, filter and writer too.
    let stages = st4["stages"].as_array().unwrap();
    let names: Vec<&str> = stages.iter().map(|s| s["stage"].as_str().unwrap()).collect();
    assert_eq!(names, ["source", "filter", "clean", "fingerprint", "match", "store"]);
    for s in stages {
        let name = s["stage"].as_str().unwrap();
        assert!(s["busy_seconds"].as_f64().unwrap() > 0.0, "{name}: {s}");
        assert!(s["cpu_seconds"].as_f64().unwrap() > 0.0, "{name}: {s}");
    }
    assert_eq!(stages[0]["workers"], 4);
    assert_eq!(stages[0]["items_out"], st4["pages_read"]);
    assert_eq!(st1["stages"][0]["workers"], 1);
}
