//! `ditto labelset check` and damaged label sets at the command line (issue 26, item 3): a
//! sound file checks ok (exit 0); a damaged one is named, section and checksums, with a
//! non-zero exit; `ditto scan` refuses a label set whose entries are damaged; version 1 is
//! refused with what to do.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::*;
use labelsets::LabelSet;

fn run(args: &[&str]) -> (bool, String, String) {
    let out: Output = ditto().args(args).output().expect("running ditto");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn check(p: &Path) -> (bool, String, String) {
    run(&["labelset", "check", p.to_str().unwrap()])
}

#[test]
fn check_passes_a_sound_file_and_names_the_damage_in_a_broken_one() {
    let dir = tempfile::tempdir().unwrap();
    let good = wikipedia_labelset(dir.path());
    let (ok, stdout, stderr) = check(&good);
    assert!(ok, "{stdout}\n{stderr}");
    for what in ["header:", "filter:", "index:", "entries:", "source offsets:", "source blob:", "structure:"]
    {
        assert!(stdout.lines().any(|l| l.starts_with(what) && l.ends_with(": ok")), "{what}\n{stdout}");
    }
    assert!(stdout.contains("result:          ok"), "{stdout}");

    let bytes = std::fs::read(&good).unwrap();
    let h = LabelSet::open(&good).unwrap().header().clone();
    let bad = dir.path().join("bad.dls");
    let bad_s = bad.to_str().unwrap();

    // A flipped bit in the entries: `check` names the section; a scan refuses the file.
    let mut b = bytes.clone();
    b[(h.sections.entries.offset + h.sections.entries.len / 3) as usize] ^= 0x10;
    std::fs::write(&bad, &b).unwrap();
    let (ok, stdout, stderr) = check(&bad);
    assert!(!ok, "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("entries:") && l.contains("DAMAGED")), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("filter:") && l.ends_with(": ok")), "{stdout}");
    assert!(stderr.contains(bad_s) && stderr.contains("damaged label set: entries checksum"), "{stderr}");
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    std::fs::write(pages.join("a.html"), "<html><body><p>hello</p></body></html>").unwrap();
    let store = dir.path().join("store");
    let (ok, _, stderr) =
        run(&["scan", "--store", store.to_str().unwrap(), "--labelset", bad_s, pages.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains(bad_s) && stderr.contains("entries checksum mismatch"), "{stderr}");
    // The same scan with the sound file runs.
    run_ok(&[
        "scan",
        "--store",
        store.to_str().unwrap(),
        "--labelset",
        good.to_str().unwrap(),
        pages.to_str().unwrap(),
    ]);

    // A zeroed filter: refused by every command that opens the file.
    let mut b = bytes.clone();
    let f = h.sections.filter;
    b[f.offset as usize..(f.offset + f.len) as usize].fill(0);
    std::fs::write(&bad, &b).unwrap();
    let (ok, stdout, stderr) = check(&bad);
    assert!(!ok && stdout.lines().any(|l| l.starts_with("filter:") && l.contains("DAMAGED")), "{stdout}");
    assert!(stderr.contains("filter checksum"), "{stderr}");
    let (ok, _, stderr) = run(&["labelset", "info", bad_s]);
    assert!(!ok && stderr.contains("filter checksum mismatch"), "{stderr}");

    // A damaged header: nothing else can be trusted, the message says which part.
    let mut b = bytes.clone();
    b[40] ^= 0x01;
    std::fs::write(&bad, &b).unwrap();
    let (ok, _, stderr) = check(&bad);
    assert!(!ok && stderr.contains(bad_s) && stderr.contains("header checksum mismatch"), "{stderr}");

    // Version 1 (no checksums): refused with what to do.
    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&1u32.to_le_bytes());
    std::fs::write(&bad, &b).unwrap();
    let (ok, _, stderr) = check(&bad);
    assert!(!ok && stderr.contains("version 1 has no checksums: rebuild it"), "{stderr}");
}
