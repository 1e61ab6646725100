//! Crash safety: a scan killed with SIGKILL at random moments, then re-run to completion,
//! ends with exactly the totals and report of one uninterrupted run (issue: pipeline, store).

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use rand::{Rng, SeedableRng};

fn scan_args<'a>(db: &'a str, labelset: &'a str, inputs: &'a [String]) -> Vec<&'a str> {
    let mut a = vec![
        "scan",
        "--store",
        db,
        "--labelset",
        labelset,
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        // Three readers: several inputs in flight when the kill comes (issue 39).
        "--threads",
        "3",
    ];
    a.extend(inputs.iter().map(|s| s.as_str()));
    a
}

fn stored_pages(db: &str) -> u64 {
    let stats = run_ok(&["stats", "--store", db, "--json"]).stdout;
    let stats: serde_json::Value = serde_json::from_slice(&stats).unwrap();
    stats["pages"].as_u64().unwrap()
}

fn summary(db: &str) -> (String, String) {
    let stats = run_ok(&["stats", "--store", db, "--json"]).stdout;
    let mut stats: serde_json::Value = serde_json::from_slice(&stats).unwrap();
    // Everything but the on-disk size must be identical.
    stats.as_object_mut().unwrap().remove("size_on_disk_bytes");
    let report = run_ok(&["report", "--store", db, "--format", "jsonl", "--level", "page"]).stdout;
    let hoods = run_ok(&["report", "--store", db, "--format", "jsonl"]).stdout;
    (stats.to_string(), String::from_utf8(report).unwrap() + &String::from_utf8(hoods).unwrap())
}

#[test]
fn twenty_random_kills_then_resume_give_the_uninterrupted_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let labelset = labelset.to_str().unwrap();
    let data = shared_data();
    let inputs: Vec<String> = [
        "warc/big/debian-docs-html.warc.gz",
        "wikipedia/articles",
        "reuse/site/debian-faq.en.docs.test",
        "reuse/site/archive-mirror.docs.test",
    ]
    .iter()
    .map(|p| data.join(p).to_str().unwrap().to_string())
    .collect();

    // Reference: one uninterrupted run.
    let reference_db = tmp.path().join("reference.db");
    let reference_db = reference_db.to_str().unwrap();
    let t = Instant::now();
    run_ok(&scan_args(reference_db, labelset, &inputs));
    let full = t.elapsed();
    let reference = summary(reference_db);
    assert!(reference.0.contains("\"pages\":"), "{}", reference.0);

    // The same scan, killed with SIGKILL at random moments and resumed. A round ends when a
    // run completes on its own; its store must then equal the reference, and the next round
    // starts from an empty store. We go on until 20 kills have hit a running scan.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xd1770);
    let (mut kills, mut attempts, mut rounds, mut partial) = (0, 0, 0, 0);
    let reference_pages = stored_pages(reference_db);
    while kills < 20 {
        rounds += 1;
        let db = tmp.path().join(format!("killed-{rounds}.db"));
        let db = db.to_str().unwrap();
        loop {
            attempts += 1;
            assert!(attempts <= 80, "only {kills} kills hit a running scan in 80 attempts");
            let mut child = ditto()
                .args(scan_args(db, labelset, &inputs))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let wait = Duration::from_millis(rng.gen_range(10..full.as_millis().max(20) as u64));
            std::thread::sleep(wait);
            if child.try_wait().unwrap().is_some() {
                break; // finished by itself: this round's resumed store is complete
            }
            child.kill().unwrap(); // SIGKILL on Unix
            child.wait().unwrap();
            kills += 1;
            // The killed store reopens cleanly; note how far it had got.
            let pages = stored_pages(db);
            if pages > 0 && pages < reference_pages {
                partial += 1;
            }
        }
        let resumed = summary(db);
        assert_eq!(resumed.0, reference.0, "store totals differ after kills (round {rounds})");
        assert!(resumed.1 == reference.1, "reports differ after kills (round {rounds})");
    }
    eprintln!(
        "{kills} kills in {attempts} runs over {rounds} rounds ({partial} left a partly written store), \
         all rounds equal the reference"
    );
    assert!(partial >= 5, "only {partial} kills interrupted the store half way");
}
