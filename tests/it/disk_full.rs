//! A full disk during a scan (issue 40): the scan stops with exit 1 and a message that names
//! the store and gives the OS's reason in words (no `Os { code: 28, … }`) with what to do;
//! no temporary file is left in the store directory; the store is intact (`ditto store
//! check`); and once there is space, the same command resumes to the totals and report of a
//! scan that never ran out.
//!
//! The disk is a small tmpfs mounted in a private mount namespace (`unshare --mount`, as root;
//! otherwise in a user namespace, `unshare --user --map-root-user --mount`), so nothing is
//! mounted outside this test's processes. Where neither can mount (a container without the
//! rights), the test says so and checks nothing.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;

/// Stats (less the size on disk) and the page- and neighborhood-level reports of a store.
fn summary(db: &str) -> (serde_json::Value, String) {
    let stats = run_ok(&["stats", "--store", db, "--json"]).stdout;
    let mut stats: serde_json::Value = serde_json::from_slice(&stats).unwrap();
    stats.as_object_mut().unwrap().remove("size_on_disk_bytes");
    let pages = run_ok(&["report", "--store", db, "--format", "jsonl", "--level", "page"]).stdout;
    let hoods = run_ok(&["report", "--store", db, "--format", "jsonl"]).stdout;
    (stats, String::from_utf8(pages).unwrap() + &String::from_utf8(hoods).unwrap())
}

/// Scan into a store on a tmpfs of `size`, then grow the tmpfs, check the store and scan
/// again, all in one private mount namespace; each step's exit code and output land in `out`,
/// and the store is copied there at the end. `None` when no tmpfs could be mounted here.
const STEPS: &str = r#"
set -u
mount -t tmpfs -o size="$SIZE" ditto-disk-full "$MNT" || exit 77
scan() { "$DITTO" scan --store "$MNT/s.db" --labelset "$LABELSET" --progress none --threads 1 "$INPUT"; }
scan >"$OUT/scan1.out" 2>"$OUT/scan1.err"; echo $? >"$OUT/scan1.rc"
ls -A "$MNT/s.db" >"$OUT/files1" 2>&1
mount -o remount,size=1g "$MNT" || exit 78
"$DITTO" store check --store "$MNT/s.db" >"$OUT/check.out" 2>"$OUT/check.err"; echo $? >"$OUT/check.rc"
scan >"$OUT/scan2.out" 2>"$OUT/scan2.err"; echo $? >"$OUT/scan2.rc"
ls -A "$MNT/s.db" >"$OUT/files2" 2>&1
cp -a "$MNT/s.db" "$OUT/s.db"
"#;

fn run_on_small_disk(size: &str, labelset: &Path, input: &Path, out: &Path) -> Option<()> {
    let mnt = out.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let ways: [&[&str]; 2] = [&["--mount"], &["--user", "--map-root-user", "--mount"]];
    for way in ways {
        let status = Command::new("unshare")
            .args(way)
            .args(["--propagation", "private", "bash", "-c", STEPS])
            .env("SIZE", size)
            .env("MNT", &mnt)
            .env("OUT", out)
            .env("DITTO", env!("CARGO_BIN_EXE_ditto"))
            .env("LABELSET", labelset)
            .env("INPUT", input)
            .stderr(std::process::Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => return Some(()),
            Ok(s) => assert_ne!(s.code(), Some(78), "the tmpfs could not be grown"),
            Err(_) => {}
        }
    }
    None
}

#[test]
fn a_full_disk_says_so_in_words_keeps_the_store_and_the_rerun_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let input = shared_data().join("warc/big/debian-docs-html.warc.gz");
    let reference = tmp.path().join("ref.db");
    let reference = reference.to_str().unwrap();
    run_ok(&[
        "scan",
        "--store",
        reference,
        "--labelset",
        labelset.to_str().unwrap(),
        "--progress",
        "none",
        "--threads",
        "1",
        input.to_str().unwrap(),
    ]);
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    if run_on_small_disk("1m", &labelset, &input, &out).is_none() {
        eprintln!("disk_full: skipped: no tmpfs could be mounted here (needs root or user namespaces)");
        return;
    }
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    let rc = |name: &str| read(name).trim().parse::<i32>().unwrap();

    // The scan ran out of space: exit 1, the store and the reason named, what to do said.
    let err = read("scan1.err");
    assert_eq!(rc("scan1.rc"), 1, "{err}");
    let store = out.join("mnt/s.db");
    assert!(err.contains(&format!("store {}", store.display())), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("free space") && err.contains("run the same command again"), "{err}");
    assert!(!err.contains("Os {") && !err.contains("code:") && !err.contains("kind:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // No temporary file left beside the store's own files.
    let files = read("files1");
    assert!(files.lines().any(|f| f == "ditto-store.json"), "{files}");
    assert!(!files.lines().any(|f| f.contains(".tmp")), "a temporary file was left: {files}");

    // The store is intact, and the same command resumes to a clean scan's totals.
    assert_eq!(rc("check.rc"), 0, "{}{}", read("check.out"), read("check.err"));
    assert_eq!(rc("scan2.rc"), 0, "{}", read("scan2.err"));
    assert!(!read("files2").lines().any(|f| f.contains(".tmp")), "{}", read("files2"));
    let (stats, report) = summary(out.join("s.db").to_str().unwrap());
    let (ref_stats, ref_report) = summary(reference);
    assert!(stats["pages"].as_u64().unwrap() > 1000, "{stats}");
    assert_eq!(stats, ref_stats);
    assert_eq!(report, ref_report);
}
