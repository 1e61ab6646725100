//! `ditto-fuzz [--seconds N] [--execs N] [--target NAME]... [--max-len BYTES] [--artifacts DIR]`:
//! fuzz each target (all by default) for N seconds or N executions, and print one line per
//! target. `--max-len` overrides the target's input length limit (`Target::max_len`).
//! Exit status 1 when anything crashed, hung or went over the memory cap.
//! `ditto-fuzz --target NAME --replay FILE` runs one saved input and prints its time.

use std::path::PathBuf;
use std::time::Duration;

use ditto_fuzz::{run, seeds::seeds, Settings, Target};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut targets = Vec::new();
    let mut s = Settings {
        duration: Duration::from_secs(10),
        max_execs: u64::MAX,
        per_input: Duration::from_secs(1),
        rss_cap: 2 << 30,
        seed: 1,
        artifacts: PathBuf::from("target/fuzz/artifacts"),
        scratch: std::env::temp_dir().join(format!("ditto-fuzz-{}", std::process::id())),
        max_corpus: 4096,
        max_len: 0,
    };
    let num = |v: Option<String>, what: &str| -> u64 {
        v.and_then(|v| v.parse().ok()).unwrap_or_else(|| {
            eprintln!("{what} needs a number");
            std::process::exit(2)
        })
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => s.duration = Duration::from_secs(num(args.next(), "--seconds")),
            "--execs" => s.max_execs = num(args.next(), "--execs"),
            "--max-len" => s.max_len = num(args.next(), "--max-len") as usize,
            "--seed" => s.seed = num(args.next(), "--seed"),
            "--rss-mb" => s.rss_cap = num(args.next(), "--rss-mb") << 20,
            "--per-input-ms" => s.per_input = Duration::from_millis(num(args.next(), "--per-input-ms")),
            "--artifacts" => s.artifacts = PathBuf::from(args.next().unwrap_or_default()),
            "--replay" => {
                // `--replay FILE` (after `--target`): run one saved input, print its time.
                let file = PathBuf::from(args.next().unwrap_or_default());
                let data = std::fs::read(&file).unwrap_or_else(|e| {
                    eprintln!("{}: {e}", file.display());
                    std::process::exit(2)
                });
                let t = targets.first().copied().unwrap_or(Target::Warc);
                let _ = std::fs::create_dir_all(&s.scratch);
                let start = std::time::Instant::now();
                let sig = t.run(&data, &s.scratch);
                println!(
                    "{} {}: signature {sig:016x}, {:.3} s, peak RSS {} MB",
                    t.name(),
                    file.display(),
                    start.elapsed().as_secs_f64(),
                    ditto_fuzz::peak_rss() >> 20
                );
                let _ = std::fs::remove_dir_all(&s.scratch);
                std::process::exit(0);
            }
            "--target" => match args.next().as_deref().and_then(Target::from_name) {
                Some(t) => targets.push(t),
                None => {
                    let names: Vec<_> = Target::ALL.iter().map(|t| t.name()).collect();
                    eprintln!("--target: one of {}", names.join(", "));
                    std::process::exit(2);
                }
            },
            "--help" | "-h" => {
                println!("usage: ditto-fuzz [--seconds N] [--execs N] [--target NAME]... [--seed N] [--rss-mb N] [--per-input-ms N] [--max-len BYTES] [--artifacts DIR]");
                println!("input length limit per target (--max-len overrides; seeds are cut to it):");
                for t in Target::ALL {
                    println!("  {:<9} {} bytes", t.name(), t.max_len());
                }
                std::process::exit(0);
            }
            _ => {
                eprintln!("usage: ditto-fuzz [--seconds N] [--execs N] [--target NAME]... [--seed N] [--rss-mb N] [--per-input-ms N] [--max-len BYTES] [--artifacts DIR]");
                std::process::exit(2);
            }
        }
    }
    if targets.is_empty() {
        targets = Target::ALL.to_vec();
    }
    let mut bad = false;
    for t in targets {
        let seeds = seeds(t, &s.scratch);
        let r = run(t, seeds, &s);
        println!("{}", r.line());
        for p in &r.saved {
            println!("  saved {}", p.display());
        }
        bad |= r.crashes + r.hangs + r.over_memory > 0;
    }
    let _ = std::fs::remove_dir_all(&s.scratch);
    std::process::exit(i32::from(bad));
}
