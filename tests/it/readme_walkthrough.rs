//! The guide's Use section (`docs/GUIDE.md`), run line by line as a new user would (issues 25,
//! 40): every command line of its sh blocks runs offline against `../shared/data` with this
//! build's `ditto`, except those marked "needs the network", and every line of README.md's
//! short tour is one of them (`scripts/readme_walkthrough.sh`).

use crate::common::*;

use std::path::Path;
use std::process::Command;

#[test]
fn every_line_of_the_guide_use_section_and_the_readme_tour_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("scripts/readme_walkthrough.sh"))
        .env("DITTO", env!("CARGO_BIN_EXE_ditto"))
        .env("DATA", shared_data())
        .output()
        .expect("running scripts/readme_walkthrough.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("tour lines are all in the guide's Use section"), "{stdout}");
    let summary = stdout.lines().last().unwrap_or("");
    // The lines that need the network are the Common Crawl scan and the crawl of the web.
    assert!(summary.contains("lines run, 2 not run"), "{summary}");
    let ran: usize =
        summary.trim_start_matches("readme_walkthrough: ").split(' ').next().unwrap().parse().unwrap();
    assert!(ran >= 10, "{summary}");
    // The lines ran for real: the scan without a label set fed `ditto replicas`.
    assert!(stdout.contains("+ ditto replicas --store plain.db"), "{stdout}");
    assert!(stderr.contains("clusters holding") || stdout.contains("clusters holding"), "{stdout}\n{stderr}");
}
