//! `ditto replicas` on ../shared/data/reuse, scored against its truth.tsv as
//! ../shared/research/peer-dedup.md scores the peers: exact + near pairs are positives, a
//! predicted pair the truth calls `partial` counts neither as TP nor FP. The datasketch
//! MinHashLSH peer (scripts/peer_minhash.py) runs in the same test when Python can set up
//! its virtual environment; it is printed beside ditto, not asserted on.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use common::{run_ok, shared_data, wikipedia_labelset};

/// Measured 2026-11-23 on whole shingle sets: P 1.000, R 0.997, F1 0.9985; 2026-11-24 on the
/// stored 160-hash sketches of all words' shingles (store format 4): P 1.000, R 0.984, F1
/// 0.992; then on sketches of the long words' shingles from the SimHash's word pass (format
/// 5, threshold 0.75): P 0.985, R 0.998, F1 0.9916 (BENCHMARKS.md, "Sketch in the word
/// pass"). Every false positive there is a Clang page against its own reST source (or the
/// other version's), pairs the truth's all-words measure puts just under 0.8. The floors
/// leave a little room, and stay above the MinHashLSH peer's 0.957 (the goal: 0.97).
const F1_FLOOR: f64 = 0.985;
const PRECISION_FLOOR: f64 = 0.98;

struct Score {
    pred: usize,
    tp: usize,
    fp: usize,
    part: usize,
    p: f64,
    r: f64,
    f1: f64,
    r_exact: f64,
    r_near: f64,
}

fn score(pred: &HashSet<(String, String)>, truth: &HashMap<(String, String), String>) -> Score {
    let positive = |k: &str| k == "exact" || k == "near";
    let pos = truth.values().filter(|k| positive(k)).count();
    let tp = pred.iter().filter(|p| truth.get(*p).is_some_and(|k| positive(k))).count();
    let part = pred.iter().filter(|p| truth.get(*p).is_some_and(|k| k == "partial")).count();
    let fp = pred.len() - tp - part;
    let p = if tp + fp > 0 { tp as f64 / (tp + fp) as f64 } else { 0.0 };
    let r = tp as f64 / pos as f64;
    let f1 = if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 };
    let rk = |kind: &str| {
        let want: Vec<_> = truth.iter().filter(|(_, k)| *k == kind).map(|(p, _)| p).collect();
        want.iter().filter(|p| pred.contains(**p)).count() as f64 / want.len().max(1) as f64
    };
    Score { pred: pred.len(), tp, fp, part, p, r, f1, r_exact: rk("exact"), r_near: rk("near") }
}

fn print(name: &str, s: &Score, secs: f64) {
    println!(
        "{name:<36} pred {:>5} TP {:>5} FP {:>3} part {:>3}  P {:.3} R {:.3} F1 {:.4}  R-ex {:.3} R-near {:.3}  {secs:.1}s",
        s.pred, s.tp, s.fp, s.part, s.p, s.r, s.f1, s.r_exact, s.r_near
    );
}

#[test]
fn replicas_on_reuse_beat_minhash_lsh() {
    let data = shared_data().join("reuse");
    let tmp = tempfile::tempdir().unwrap();
    let (stdout, scan_s, replicas_s) = scan_and_find_replicas(&data, tmp.path());

    let truth = read_truth(&data);
    let r = parse_replicas(stdout);
    let s = score(&r.pred, &truth);
    println!("\nreuse: {} clusters, pairs by kind {:?}", r.clusters, r.by_kind);
    println!("scan {scan_s:.1}s (all stages), replicas {replicas_s:.1}s");
    print("ditto replicas (J>=0.75, templates out)", &s, replicas_s);

    // The peer, same pages, same run.
    run_peer(&data);

    check_mirrors(&data, &r);

    assert_eq!(s.r_exact, 1.0, "every exact pair (bytes or visible text) must be found");
    assert!(s.p >= PRECISION_FLOOR, "precision {:.4} below {PRECISION_FLOOR}", s.p);
    assert!(s.f1 >= F1_FLOOR, "F1 {:.4} below {F1_FLOOR}", s.f1);
}

/// Scans `data`/site into a store under `tmp` and runs `ditto replicas --format jsonl` on it
/// (its stderr printed): the JSONL, and the seconds the scan and replicas took.
fn scan_and_find_replicas(data: &Path, tmp: &Path) -> (Vec<u8>, f64, f64) {
    let labels = wikipedia_labelset(tmp);
    let store = tmp.join("reuse.db");
    let (store_s, labels_s) = (store.to_str().unwrap(), labels.to_str().unwrap());
    let t = Instant::now();
    run_ok(&[
        "scan",
        "--store",
        store_s,
        "--labelset",
        labels_s,
        "--url-prefix",
        "http://",
        "--progress",
        "none",
        data.join("site").to_str().unwrap(),
    ]);
    let scan_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let out = run_ok(&["replicas", "--store", store_s, "--format", "jsonl"]);
    let replicas_s = t.elapsed().as_secs_f64();
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    (out.stdout, scan_s, replicas_s)
}

/// truth.tsv: (url a, url b) → kind.
fn read_truth(data: &Path) -> HashMap<(String, String), String> {
    let mut truth = HashMap::new();
    let text = std::fs::read_to_string(data.join("truth.tsv")).unwrap();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        truth.insert((f[0].to_string(), f[1].to_string()), f[2].to_string());
    }
    truth
}

/// What `ditto replicas --format jsonl` reported.
struct Replicas {
    /// Predicted pairs, each as (smaller URL, larger URL).
    pred: HashSet<(String, String)>,
    by_kind: HashMap<String, usize>,
    clusters: usize,
    mirrors: Vec<serde_json::Value>,
    near_members: usize,
    with_differs: usize,
}

/// Reads the JSONL, checking each cluster's shape (representative first, near members in near
/// clusters with short differing-passage samples, size, near pairs' Jaccard) on the way.
fn parse_replicas(stdout: Vec<u8>) -> Replicas {
    let mut r = Replicas {
        pred: HashSet::new(),
        by_kind: HashMap::new(),
        clusters: 0,
        mirrors: Vec::new(),
        near_members: 0,
        with_differs: 0,
    };
    for line in String::from_utf8(stdout).unwrap().lines() {
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        if c["kind"] == "mirror" {
            r.mirrors.push(c);
            continue;
        }
        r.clusters += 1;
        assert_eq!(c["members"][0]["kind"], "representative");
        check_near_members(&c, &mut r);
        assert_eq!(c["size"].as_u64().unwrap() as usize, c["members"].as_array().unwrap().len());
        for p in c["pairs"].as_array().unwrap() {
            let (a, b) = (p["a"].as_str().unwrap().to_string(), p["b"].as_str().unwrap().to_string());
            let kind = p["kind"].as_str().unwrap().to_string();
            if kind == "near" {
                assert!(p["jaccard"].as_f64().unwrap() >= detector::shingles::SKETCH_NEAR_THRESHOLD);
            }
            *r.by_kind.entry(kind).or_default() += 1;
            r.pred.insert(if a < b { (a, b) } else { (b, a) });
        }
    }
    r
}

/// Counts cluster `c`'s near members (and those with a differing-passage sample) into `r`;
/// a near member only in a near cluster, samples of at most 3 passages of ≤ 201 characters.
fn check_near_members(c: &serde_json::Value, r: &mut Replicas) {
    for m in c["members"].as_array().unwrap() {
        if m["kind"] == "near" {
            r.near_members += 1;
            assert_eq!(c["kind"], "near");
            if let Some(d) = m.get("differs") {
                r.with_differs += 1;
                for side in ["member_sample", "representative_sample"] {
                    let sample = d[side].as_array().unwrap();
                    assert!(sample.len() <= 3);
                    assert!(sample.iter().all(|b| b.as_str().unwrap().chars().count() <= 201));
                }
            }
        }
    }
}

/// Runs the datasketch MinHashLSH peer (scripts/peer_minhash.py) on the same pages and prints
/// its score, or why it did not run.
fn run_peer(data: &Path) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/peer_minhash.py");
    let t = Instant::now();
    match std::process::Command::new("python3")
        .arg(&script)
        .args(["--data", data.to_str().unwrap(), "--json"])
        .output()
    {
        Ok(o) if o.status.success() => {
            let line = String::from_utf8_lossy(&o.stdout);
            match serde_json::from_str::<serde_json::Value>(line.trim().lines().last().unwrap_or("")) {
                Ok(v) => println!(
                    "{:<36} pred {:>5} TP {:>5} FP {:>3} part {:>3}  P {:.3} R {:.3} F1 {:.4}  R-ex {:.3} R-near {:.3}  {:.1}s (+{:.1}s text extraction, {:.0} MB)",
                    "datasketch MinHashLSH (0.8, 128)",
                    v["pred"], v["tp"], v["fp"], v["part"],
                    v["precision"].as_f64().unwrap_or(0.0),
                    v["recall"].as_f64().unwrap_or(0.0),
                    v["f1"].as_f64().unwrap_or(0.0),
                    v["recall_exact"].as_f64().unwrap_or(0.0),
                    v["recall_near"].as_f64().unwrap_or(0.0),
                    v["seconds"].as_f64().unwrap_or(0.0),
                    v["extract_seconds"].as_f64().unwrap_or(0.0),
                    v["peak_rss_mb"].as_f64().unwrap_or(0.0),
                ),
                Err(e) => println!("peer output unreadable ({e}): {line}"),
            }
        }
        Ok(o) => println!(
            "peer baseline not run (scripts/peer_minhash.py failed after {:.0}s): {}",
            t.elapsed().as_secs_f64(),
            String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("")
        ),
        Err(e) => println!("peer baseline not run (python3: {e})"),
    }
}

/// The reported mirrors with `m["mirror"] == kind`, each as (smaller prefix, larger prefix).
fn mirror_pairs(mirrors: &[serde_json::Value], kind: &str) -> HashSet<(String, String)> {
    mirrors
        .iter()
        .filter(|m| m["mirror"] == kind)
        .map(|m| {
            let (a, b) = (m["prefixes"][0].as_str().unwrap(), m["prefixes"][1].as_str().unwrap());
            if a < b {
                (a.to_string(), b.to_string())
            } else {
                (b.to_string(), a.to_string())
            }
        })
        .collect()
}

/// Mirrors (S&G's replicated collections) against mirrors.tsv, and every near member's
/// differing-passage sample.
fn check_mirrors(data: &Path, r: &Replicas) {
    let (mirrors, near_members, with_differs) = (&r.mirrors, r.near_members, r.with_differs);
    // Mirrors (S&G's replicated collections) against mirrors.tsv: whole subtrees with the same
    // relative paths and byte-identical files, nothing extra, maximal.
    let truth_mirrors: HashSet<(String, String)> = std::fs::read_to_string(data.join("mirrors.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].to_string())
        })
        .collect();
    let found = |kind: &str| mirror_pairs(mirrors, kind);
    let exact_mirrors = found("exact");
    let hit = exact_mirrors.intersection(&truth_mirrors).count();
    println!(
        "mirrors: {} exact found, {hit} of {} in mirrors.tsv, {} extra; {} near mirrors: {:?}",
        exact_mirrors.len(),
        truth_mirrors.len(),
        exact_mirrors.len() - hit,
        found("near").len(),
        found("near")
    );
    println!("near members: {near_members}, with a differing-passage sample: {with_differs}");
    for m in mirrors {
        let (pages, matched) = (&m["pages"], m["matched"].as_u64().unwrap());
        assert!(
            matched >= 2 && matched <= pages[0].as_u64().unwrap() && matched <= pages[1].as_u64().unwrap()
        );
        assert_eq!(m["members"].as_array().unwrap().len() as u64, matched);
    }
    let missing: Vec<_> = truth_mirrors.difference(&exact_mirrors).collect();
    assert!(missing.is_empty(), "mirrors.tsv rows not found: {missing:?}");
    assert_eq!(
        exact_mirrors.len(),
        hit,
        "exact mirrors not in mirrors.tsv: {:?}",
        exact_mirrors.difference(&truth_mirrors)
    );
    assert_eq!(with_differs, near_members, "every near member carries a differing-passage sample");
}
