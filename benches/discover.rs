//! `cargo bench --bench discover`: exact chunk-hash counting for blind discovery
//! (`ditto::analysis::counting::Counter`, §3.2 step 3b) over ≥ 10 M synthetic occurrences, in memory
//! and with the memory budget at a tenth of the data, beside DuckDB's
//! `GROUP BY hash HAVING count(*) > T` over the same hashes (scripts/duckdb_groupby.py, which
//! makes its own venv under target/ and pip-installs duckdb), in the same run.
//!
//! Keys: 20-byte pseudo-random digests. Skew: 45 % of occurrences are chunks seen once (most
//! web text is unique), the rest are drawn log-uniformly (Zipf with s = 1) from 2 M popular
//! chunks, so the most common chunk is seen ~10^5 times and a few thousand pass T = 100.
//! Each measurement runs in its own process so its peak RSS (VmHWM) is its own.
//!
//! Environment: DITTO_BENCH_OCCURRENCES (default 10 000 000), DITTO_BENCH_SKIP_DUCKDB=1.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use ditto::analysis::counting::Counter;

const THRESHOLD: u64 = 100;
const POPULAR: f64 = 2_000_000.0;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn digest_of(id: u64) -> [u8; 20] {
    let mut s = id.wrapping_mul(0xd134_2543_de82_ef95);
    let mut d = [0u8; 20];
    d[..8].copy_from_slice(&splitmix(&mut s).to_le_bytes());
    d[8..16].copy_from_slice(&splitmix(&mut s).to_le_bytes());
    d[16..].copy_from_slice(&splitmix(&mut s).to_le_bytes()[..4]);
    d
}

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/discover-bench")
}

/// keys.bin (20 bytes per occurrence) and keys.csv (hex, header `hash`).
fn generate(n: u64, dir: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir)?;
    let bin = dir.join(format!("keys-{n}.bin"));
    let csv = dir.join(format!("keys-{n}.csv"));
    if std::fs::metadata(&bin).map(|m| m.len() == n * 20).unwrap_or(false) && csv.exists() {
        return Ok((bin, csv));
    }
    let t = Instant::now();
    let mut wb = BufWriter::with_capacity(1 << 20, File::create(&bin)?);
    let mut wc = BufWriter::with_capacity(1 << 20, File::create(&csv)?);
    writeln!(wc, "hash")?;
    let mut rng = 42u64;
    let mut unique = 1u64 << 40;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut line = [b'\n'; 41];
    for _ in 0..n {
        let u = (splitmix(&mut rng) >> 11) as f64 / (1u64 << 53) as f64;
        let id = if u < 0.45 {
            unique += 1;
            unique
        } else {
            let v = (splitmix(&mut rng) >> 11) as f64 / (1u64 << 53) as f64;
            (v * POPULAR.ln()).exp() as u64
        };
        let d = digest_of(id);
        wb.write_all(&d)?;
        for (i, b) in d.iter().enumerate() {
            line[2 * i] = HEX[(b >> 4) as usize];
            line[2 * i + 1] = HEX[(b & 15) as usize];
        }
        wc.write_all(&line)?;
    }
    wb.flush()?;
    wc.flush()?;
    eprintln!("generated {n} occurrences in {:.1}s", t.elapsed().as_secs_f64());
    Ok((bin, csv))
}

fn vmhwm_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(-1.0)
}

/// Child: count keys.bin with a budget; one JSON line.
fn child(mode: &str, bin: &Path, budget: u64) {
    let tmp = bench_dir().join("spill");
    let t = Instant::now();
    let mut c: Counter<[u8; 20]> = Counter::new(budget, &tmp);
    let mut r = BufReader::with_capacity(1 << 20, File::open(bin).expect("keys file"));
    let mut rec = [0u8; 20];
    loop {
        match r.read_exact(&mut rec) {
            Ok(()) => c.add(rec).expect("counting"),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => panic!("reading keys: {e}"),
        }
    }
    let counted = t.elapsed().as_secs_f64();
    let stats = c.stats();
    let threads = c.threads();
    let (mut distinct, mut groups, mut occ) = (0u64, 0u64, 0u64);
    let mut counts = c.finish().expect("merging");
    let spill = counts.stats();
    for item in counts.by_ref() {
        let (_, n) = item.expect("merged run");
        distinct += 1;
        if n > THRESHOLD {
            groups += 1;
            occ += n;
        }
    }
    drop(counts);
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{{\"tool\": \"ditto\", \"mode\": \"{mode}\", \"threads\": {threads}, \"secs\": {secs:.3}, \"count_secs\": {counted:.3}, \
         \"vmhwm_mb\": {:.1}, \"budget_mb\": {:.1}, \"distinct\": {distinct}, \"groups_above\": {groups}, \
         \"occurrences_above\": {occ}, \"occurrences\": {}, \"runs\": {}, \"memory_runs\": {}, \"spilled_mb\": {:.1}}}",
        vmhwm_mb(),
        budget as f64 / 1048576.0,
        stats.occurrences,
        spill.runs_written,
        spill.runs_in_memory,
        spill.bytes_spilled as f64 / 1048576.0
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        let budget: u64 = args[4].parse().expect("budget");
        child(&args[2], Path::new(&args[3]), budget);
        return;
    }
    let n: u64 =
        std::env::var("DITTO_BENCH_OCCURRENCES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let dir = bench_dir();
    let (bin, csv) = generate(n, &dir).expect("generating keys");
    let data = n * 20;
    let me = std::env::current_exe().expect("bench binary");
    let mut lines = Vec::new();
    for (mode, budget) in [("in-memory", 16u64 << 30), ("memory=data/10", data / 10)] {
        let out = Command::new(&me)
            .args(["child", mode, bin.to_str().unwrap_or_default(), &budget.to_string()])
            .output()
            .expect("running a child");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        println!("{line}");
        lines.push(line);
    }
    if std::env::var("DITTO_BENCH_SKIP_DUCKDB").is_err() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/duckdb_groupby.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .args(["--csv", csv.to_str().unwrap_or_default(), "--threshold", &THRESHOLD.to_string()])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("running scripts/duckdb_groupby.py");
        if let Some(out) = child.stdout.take() {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                println!("{line}");
                lines.push(line);
            }
        }
        let st = child.wait().expect("duckdb script");
        assert!(st.success(), "scripts/duckdb_groupby.py failed");
    }
    // Same groups above T everywhere: the counts are exact.
    let groups: Vec<&str> =
        lines.iter().filter_map(|l| l.split("\"groups_above\": ").nth(1)?.split([',', '}']).next()).collect();
    println!("groups above {THRESHOLD}: {groups:?} (data: {n} occurrences, {} MB of digests)", data >> 20);
    assert!(groups.windows(2).all(|w| w[0] == w[1]), "tools disagree: {groups:?}");
}
