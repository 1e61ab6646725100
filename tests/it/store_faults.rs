//! Fault injection (issue 22 item 4, issue 26 item 4): every file of a store truncated or
//! bit-flipped at fixed offsets; `stats`, `report`, `store check` and `scan` on each damaged
//! copy either fail with a clear error (exit 1, `error: …` on stderr) or, when the damage
//! missed everything they read, give exactly the undamaged store's answer. None panics (exit
//! 101, "panicked"), is killed by a signal, hangs, or answers with less than the store held.
//! `scripts/store_damage_table.sh` runs the larger table recorded in BENCHMARKS.md.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Where in each file the damage goes, as fractions of its length.
/// A store has three files or more (`conf`, `db`, the marker; sled snapshots, blobs): 60+
/// damaged copies.
const AT: [f64; 10] = [0.03, 0.12, 0.23, 0.34, 0.45, 0.5, 0.61, 0.72, 0.83, 0.97];

#[derive(Clone, Copy, Debug)]
enum Damage {
    Truncate,
    /// 8 bytes XOR 0xFF.
    Flip,
}

fn damage(file: &Path, at: f64, how: Damage) {
    let mut bytes = std::fs::read(file).unwrap();
    let off = ((bytes.len() as f64) * at) as usize;
    match how {
        Damage::Truncate => bytes.truncate(off),
        Damage::Flip => {
            let start = off.min(bytes.len().saturating_sub(8));
            let end = (start + 8).min(bytes.len());
            for b in &mut bytes[start..end] {
                *b ^= 0xFF;
            }
        }
    }
    std::fs::write(file, bytes).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn files_of(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            files_of(&e.path(), out);
        } else if e.metadata().unwrap().len() > 0 {
            out.push(e.path());
        }
    }
    out.sort();
}

/// Run ditto with a time limit (a hang is a failure, not a stuck test).
fn run_limited(args: &[&str]) -> Result<Output, String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ditto"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let t = Instant::now();
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            return child.wait_with_output().map_err(|e| e.to_string());
        }
        if t.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("hung for 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What a command's answer is compared by: stats without the on-disk size, the check's
/// counts without its time, the scan's store line.
fn answer(cmd: &str, o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    match cmd {
        "stats" => {
            let mut v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
            if let Some(m) = v.as_object_mut() {
                m.remove("size_on_disk_bytes");
            }
            v.to_string()
        }
        "check" => out.lines().filter(|l| !l.starts_with("checked in")).collect::<Vec<_>>().join("\n"),
        "scan" => {
            let all = out + &String::from_utf8_lossy(&o.stderr);
            all.lines().filter(|l| l.starts_with("store: ")).collect::<Vec<_>>().join("\n")
        }
        _ => out,
    }
}

#[test]
fn damaged_stores_give_errors_never_panics_or_silent_empty_results() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let labelset = labelset.to_str().unwrap().to_string();
    let site = shared_data().join("reuse/site/debian-faq.en.docs.test");
    let site = site.to_str().unwrap().to_string();
    let good = tmp.path().join("good.db");
    let good_s = good.to_str().unwrap().to_string();
    let commands = |db: &str| -> Vec<(&'static str, Vec<String>)> {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        vec![
            ("stats", v(&["stats", "--store", db, "--json"])),
            ("report", v(&["report", "--store", db, "--format", "jsonl", "--level", "page"])),
            ("check", v(&["store", "check", "--store", db])),
            ("scan", v(&["scan", "--store", db, "--labelset", &labelset, "--progress", "none", &site])),
        ]
    };
    run_ok(&commands(&good_s)[3].1.iter().map(String::as_str).collect::<Vec<_>>());
    // The reference answers, from an undamaged copy (the scan again: every page already stored).
    let reference_copy = tmp.path().join("reference.db");
    copy_dir(&good, &reference_copy);
    let reference: Vec<String> = commands(reference_copy.to_str().unwrap())
        .iter()
        .map(|(name, a)| {
            let o = run_ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
            answer(name, &o)
        })
        .collect();
    assert!(reference[0].contains("\"pages\":18"), "{}", reference[0]);
    assert!(reference[3].contains("store: 18 pages"), "{}", reference[3]);

    let mut files = Vec::new();
    files_of(&good, &mut files);
    let names: Vec<String> =
        files.iter().map(|f| f.strip_prefix(&good).unwrap().to_str().unwrap().to_string()).collect();
    assert!(names.iter().any(|n| n == "db") && names.iter().any(|n| n == "ditto-store.json"), "{names:?}");

    let (mut cases, mut runs, mut errors, mut same) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for name in &names {
        for at in AT {
            for how in [Damage::Truncate, Damage::Flip] {
                cases += 1;
                let db = tmp.path().join(format!("case-{cases}.db"));
                copy_dir(&good, &db);
                damage(&db.join(name), at, how);
                let case = format!("{name} {how:?} at {:.0}%", at * 100.0);
                for (i, (cmd, args)) in commands(db.to_str().unwrap()).into_iter().enumerate() {
                    runs += 1;
                    let a: Vec<&str> = args.iter().map(String::as_str).collect();
                    let o = match run_limited(&a) {
                        Ok(o) => o,
                        Err(e) => {
                            failures.push(format!("{case}: {cmd}: {e}"));
                            continue;
                        }
                    };
                    let err = String::from_utf8_lossy(&o.stderr);
                    match o.status.code() {
                        None => failures.push(format!("{case}: {cmd}: killed by a signal: {err}")),
                        Some(101) => failures.push(format!("{case}: {cmd}: panicked: {err}")),
                        _ if err.contains("panicked") => failures.push(format!("{case}: {cmd}: {err}")),
                        Some(0) if answer(cmd, &o) == reference[i] => same += 1,
                        Some(0) => failures.push(format!(
                            "{case}: {cmd}: exit 0 with another answer (silent damage): {}",
                            answer(cmd, &o)
                        )),
                        Some(1) if err.starts_with("error: ") => errors += 1,
                        Some(c) => failures.push(format!("{case}: {cmd}: exit {c}: {err}")),
                    }
                }
                let _ = std::fs::remove_dir_all(&db);
            }
        }
    }
    eprintln!(
        "{cases} damaged copies of {} files, {runs} runs: {errors} clear errors, {same} answers equal to \
         the undamaged store's, {} failures",
        names.len(),
        failures.len()
    );
    assert!(cases >= 50, "only {cases} offsets");
    assert!(errors > runs / 4, "most damage must be noticed: {errors} errors of {runs}");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
