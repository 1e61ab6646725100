//! CI's brief fuzz run: every target for a few seconds (`FUZZ_SECONDS`, default 3) from its
//! seeds in `../shared/data`; no crash, no hang (1 s per input), peak RSS under 2 GiB.

use std::time::Duration;

use ditto_fuzz::{run, seeds::seeds, Settings, Target};

#[test]
fn every_target_runs_briefly_without_a_crash_or_hang() {
    let secs = std::env::var("FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let tmp = std::env::temp_dir().join(format!("ditto-fuzz-test-{}", std::process::id()));
    let s = Settings {
        duration: Duration::from_secs(secs),
        max_execs: u64::MAX,
        per_input: Duration::from_secs(1),
        rss_cap: 2 << 30,
        seed: 26,
        artifacts: tmp.join("artifacts"),
        scratch: tmp.join("scratch"),
        max_corpus: 1024,
        max_len: 0,
    };
    let mut failed = Vec::new();
    for t in Target::ALL {
        let seeds = seeds(t, &s.scratch);
        assert!(
            !seeds.is_empty(),
            "{}: no seeds under {}",
            t.name(),
            ditto_fuzz::seeds::shared_data().display()
        );
        let r = run(t, seeds, &s);
        eprintln!("{}", r.line());
        assert!(r.execs > r.seeds as u64, "{}: no mutants ran", t.name());
        if r.crashes + r.hangs + r.over_memory > 0 {
            failed.push(format!("{}: {:?}", r.line(), r.saved));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(failed.is_empty(), "{failed:#?}");
}
