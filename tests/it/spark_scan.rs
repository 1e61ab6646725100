//! `examples/spark/scan.py` (issue 24): the Spark job over WARC files served on loopback gives
//! the verdicts of `ditto scan` + `ditto report` over the same files — the same flagged
//! neighborhoods with the same badness, counts, top sources and passages, and the same
//! threshold, mean, σ and population, bit for bit.
//!
//! The files are served by `examples/spark/range_server.py` (a real HTTP server on loopback)
//! in its hostile mode: every answer is cut after 1 MB with the connection dropped (the job
//! must resume with Range requests) and the first request for each file gets a 503 (retried
//! with backoff). The listing is gzipped, names one file twice (scanned once) and one file
//! the server does not have (reported and counted, the rest go on); two files hold the same
//! captures (each counted once), and the first attempt of some tasks fails on purpose after
//! scanning (`DITTO_SPARK_TEST_FAIL_ONCE`; Spark runs them again, nothing is counted twice).
//! One more file holds edited copies of the labeled articles (one word changed in every
//! paragraph, issue 36): found through the label set's passages only, so the reports' evidence
//! carries `"match": "passage"` there, and the Spark job must say so as `ditto report` does.
//!
//! Needs Java and PySpark as `spark_discover` does (target/spark-venv), and builds the
//! `ditto_detect` wheel with maturin (target/python-plugin, as `python_plugin` does) into that
//! venv. Fails with a message saying what is missing; it never skips.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::common::{ditto, run_ok, shared_data};
use crate::spark_discover::{locked_venv, spark_python};
use ditto::report::{Level, NoSourceNames, ReportConfig, ReviewFilter, ThresholdChoice};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds the wheel with maturin (a tool venv under target/python-plugin) and installs it
/// into the Spark venv.
fn install_wheel(py: &Path, tmp: &Path) {
    let target = root().join("target/python-plugin");
    let tools = target.join("tools-venv");
    let maturin = tools.join("bin/maturin");
    let ready = || Command::new(&maturin).arg("--version").output().is_ok_and(|o| o.status.success());
    locked_venv(&tools, &ready, &["maturin>=1.5,<2"]);
    let wheels = tmp.join("wheels");
    let out = Command::new(&maturin)
        .args(["build", "--release", "--quiet", "-m"])
        .arg(root().join("bindings/python/Cargo.toml"))
        .arg("-o")
        .arg(&wheels)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("running maturin");
    assert!(out.status.success(), "maturin build failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"));
    let wheel = wheel.expect("maturin wrote no wheel");
    let out = Command::new(py)
        .args(["-m", "pip", "install", "-q", "--force-reinstall", "--no-deps"])
        .arg(&wheel)
        .output()
        .expect("pip");
    assert!(
        out.status.success(),
        "pip install {} failed: {}",
        wheel.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The range server on a free loopback port; killed when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(py: &Path, dir: &Path, log: &Path) -> Server {
        let mut child = Command::new(py)
            .arg(root().join("examples/spark/range_server.py"))
            .arg(dir)
            .args(["--port", "0", "--cut-after", "1000000", "--fail-first", "1", "--log"])
            .arg(log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting range_server.py");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        std::io::BufReader::new(stdout).read_line(&mut line).expect("server line");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("server said {line:?}"))
            .to_string();
        Server { child, base }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Host of the edited copies ([`write_edited_warc`]).
const SPUN: &str = "http://spun.demo.test/";

/// The words of one paragraph of text, the middle one of at least four letters replaced.
fn one_word_changed(text: &str) -> String {
    let mut words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    let n = words.len();
    let at = (0..n)
        .map(|k| (n / 2 + k) % n)
        .find(|&i| words[i].chars().filter(|c| c.is_alphabetic()).count() >= 4)
        .unwrap_or(n / 2);
    words[at] = "zanzibarish".to_string();
    words.join(" ")
}

/// A WARC file of edited copies of the demo's labeled articles, as a spinner makes them:
/// every paragraph with one word changed (no paragraph is an exact chunk any more), under a
/// heading and a line of their own, at `SPUN` + `articles/N.html`.
fn write_edited_warc(path: &Path) {
    let tmp = path.with_extension("d");
    let mut w = crawler::warc::WarcWriter::new(&tmp, "spun", 1 << 30).unwrap();
    for (i, (title, html)) in testweb::demo_articles().iter().enumerate() {
        let mut body = format!(
            "<html><head><title>{title}</title></head><body>\n<h1>{title}, rewritten</h1>\n\
             <p>Our take on it, updated daily.</p>\n"
        );
        for line in html.lines().map(str::trim).filter(|l| l.starts_with("<p>")) {
            let text = testweb::edited::plain_text(line);
            if text.split_whitespace().count() >= 4 {
                body.push_str(&format!("<p>{}</p>\n", testweb::edited::escape(&one_word_changed(&text))));
            }
        }
        body.push_str("</body></html>\n");
        let rec = crawler::warc::FetchRecord {
            url: format!("{SPUN}articles/{i}.html"),
            ip: None,
            fetch_time: 1_700_000_000,
            request_head: format!("GET /articles/{i}.html HTTP/1.1\r\nHost: spun.demo.test\r\n\r\n")
                .into_bytes(),
            status: 200,
            reason: "OK".into(),
            http_version: "HTTP/1.1".into(),
            response_headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
            payload: body.into_bytes(),
            truncated: false,
        };
        w.write_fetch(&rec).unwrap();
    }
    w.close().unwrap();
    let written: Vec<PathBuf> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(written.len(), 1, "{written:?}");
    std::fs::rename(&written[0], path).unwrap();
}

/// The served tree: the demo crawl's WARC files, the edited copies, a copy of the demo's
/// files elsewhere (the same captures twice), the big Debian WARC and its truncated prefix
/// (same captures again, and a read error). Returns the relative paths in listing order.
fn served_files(srv: &Path, demo_warcs: &Path) -> Vec<String> {
    let mut rel = Vec::new();
    for d in ["crawl", "copy", "big", "edited"] {
        std::fs::create_dir_all(srv.join(d)).unwrap();
    }
    let mut demo: Vec<PathBuf> = std::fs::read_dir(demo_warcs).unwrap().flatten().map(|e| e.path()).collect();
    demo.sort();
    assert!(!demo.is_empty(), "the demo wrote no WARC file");
    for (i, p) in demo.iter().enumerate() {
        for d in ["crawl", "copy"] {
            std::fs::copy(p, srv.join(d).join(format!("demo-{i}.warc.gz"))).unwrap();
        }
    }
    for i in 0..demo.len() {
        rel.push(format!("crawl/demo-{i}.warc.gz"));
    }
    write_edited_warc(&srv.join("edited/spun.warc.gz"));
    rel.push("edited/spun.warc.gz".into());
    for name in ["debian-docs-html.warc.gz", "debian-docs-html.truncated.warc.gz"] {
        std::fs::copy(shared_data().join("warc/big").join(name), srv.join("big").join(name)).unwrap();
        rel.push(format!("big/{name}"));
    }
    for i in 0..demo.len() {
        rel.push(format!("copy/demo-{i}.warc.gz"));
    }
    rel
}

fn write_listing(path: &Path, lines: &[String]) {
    let f = std::fs::File::create(path).unwrap();
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::default());
    for l in lines {
        writeln!(gz, "{l}").unwrap();
    }
    gz.finish().unwrap();
}

/// Every row's `badness` as Rust parses its text (correctly rounded), as bits.
fn badness_values(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.split_once("\"badness\":"))
        .map(|(_, rest)| {
            let num: String = rest.trim_start().chars().take_while(|c| !matches!(c, ',' | '}')).collect();
            num.trim().parse::<f64>().unwrap_or_else(|e| panic!("badness {num:?}: {e}")).to_bits()
        })
        .collect()
}

fn jsonl(text: &str) -> Vec<serde_json::Value> {
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The job's report.jsonl part files, in order.
fn spark_report(out: &Path) -> String {
    let dir = out.join("report.jsonl");
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("part-")))
        .collect();
    parts.sort();
    parts.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

#[test]
fn spark_scan_over_loopback_http_equals_ditto_scan_and_report() {
    let py = spark_python();
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    install_wheel(&py, tmp);

    // A crawl of the demo web (loopback): WARC files with copied Wikipedia articles.
    let demo = tmp.join("demo");
    run_ok(&["demo", "--out", demo.to_str().unwrap()]);
    let labelset = demo.join("wikipedia-demo.dls");
    let srv = tmp.join("srv");
    let rel = served_files(&srv, &demo.join("warcs"));
    check_python_api(&py, &labelset, &srv.join("edited/spun.warc.gz"));

    // ditto scan + ditto report over the local copies, in listing order.
    let db = tmp.join("scan.db");
    let mut args: Vec<String> =
        ["scan", "--store", db.to_str().unwrap(), "--labelset", labelset.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string())
            .collect();
    args.extend(["--progress".into(), "none".into()]);
    args.extend(rel.iter().map(|r| srv.join(r).to_string_lossy().into_owned()));
    // Exit 3: the truncated WARC cannot be read to its end (the rest is stored).
    let scanned = ditto().args(&args).output().expect("running ditto");
    assert_eq!(scanned.status.code(), Some(3), "{}", String::from_utf8_lossy(&scanned.stderr));
    let want_text =
        String::from_utf8(run_ok(&["report", "--store", db.to_str().unwrap(), "--format", "jsonl"]).stdout)
            .unwrap();
    let want = jsonl(&want_text);
    let (th, pages) = {
        let store = store::Store::open(&db).unwrap();
        let cfg = ReportConfig {
            level: Level::Neighborhood,
            threshold: ThresholdChoice::MeanPlusStd,
            limit: None,
            min_pages: 1,
            evidence: 3,
            sources: 5,
        };
        let (th, _) =
            ditto::report::build_merged(&[&store], &NoSourceNames, &cfg, ReviewFilter::All).unwrap();
        (th, store.pages_under("").count() as u64)
    };
    assert!(want.len() >= 3, "the demo should flag neighborhoods: {want_text}");
    assert!(want.iter().any(|r| r["neighborhood"] == "http://farm.demo.test/articles/"), "{want_text}");
    // The edited copies are flagged, with passage evidence (and the exact copies with exact).
    let matches = |hood: &str| -> Vec<String> {
        let row = want.iter().find(|r| r["neighborhood"] == hood);
        let row = row.unwrap_or_else(|| panic!("{hood} not flagged: {want_text}"));
        let ev = row["evidence"].as_array().unwrap();
        ev.iter().map(|e| e["match"].as_str().unwrap().to_string()).collect()
    };
    let spun = matches(&format!("{SPUN}articles/"));
    assert!(!spun.is_empty() && spun.iter().all(|m| m == "passage"), "{spun:?}: {want_text}");
    let farm = matches("http://farm.demo.test/articles/");
    assert!(!farm.is_empty() && farm.iter().all(|m| m == "exact"), "{farm:?}: {want_text}");

    // The same files over HTTP through a listing: one listed twice, one missing.
    let server_log = tmp.join("server.log");
    let server = Server::start(&py, &srv, &server_log);
    let mut listing = rel.clone();
    listing.insert(1, rel[0].clone());
    listing.push("missing/none.warc.gz".into());
    let list = tmp.join("warc.paths.gz");
    write_listing(&list, &listing);
    let out = tmp.join("out");
    let t = std::time::Instant::now();
    let res = Command::new(&py)
        .arg(root().join("examples/spark/scan.py"))
        .args(["--master", "local[2,4]", "--labelset", labelset.to_str().unwrap(), "--input-list"])
        .arg(&list)
        .args([
            "--base-url",
            &server.base,
            "--out",
            out.to_str().unwrap(),
            "--backoff",
            "0.05",
            "--partitions",
            "4",
        ])
        .env("DITTO_SPARK_TEST_FAIL_ONCE", "/crawl/demo-")
        .output()
        .expect("running examples/spark/scan.py");
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(res.status.success(), "scan.py failed:\n{}\n{stderr}", String::from_utf8_lossy(&res.stdout));
    eprintln!("spark scan took {:.1}s", t.elapsed().as_secs_f64());
    drop(server);

    // Same flagged neighborhoods, badness, counts, sources and passages, in the same order.
    let got_text = spark_report(&out);
    let got = jsonl(&got_text);
    assert_eq!(got, want, "spark report:\n{got_text}\nditto report:\n{want_text}");
    // Same threshold, mean, σ and population, bit for bit.
    let tj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("threshold.json")).unwrap()).unwrap();
    // (serde_json's default float parsing may miss the last bit: compare the IEEE bits.)
    for (k, v) in [("value", th.value), ("mean", th.mean), ("sd", th.sd)] {
        assert_eq!(tj["bits"][k].as_u64(), Some(v.to_bits()), "{k}: ditto {v:?}, spark {tj}");
    }
    assert_eq!(badness_values(&got_text), badness_values(&want_text));
    assert_eq!(tj["population"].as_u64(), Some(th.population), "{tj}");
    assert_eq!(tj["kind"], "mean+sd");

    // Each capture once; the missing file reported and counted; transfers resumed.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["captures_kept"].as_u64(), Some(pages), "{summary}");
    assert!(summary["duplicate_captures"].as_u64().unwrap_or(0) > 0, "{summary}");
    assert_eq!(summary["files"].as_u64(), Some(rel.len() as u64 + 1), "{summary}");
    assert_eq!(summary["files_failed"].as_u64(), Some(1), "{summary}");
    assert!(stderr.contains("failed: ") && stderr.contains("missing/none.warc.gz"), "{stderr}");
    assert!(
        summary["resumes"].as_u64().unwrap_or(0) >= 8,
        "the 9 MB file needs 8 resumes at 1 MB a cut: {summary}"
    );
    let log = std::fs::read_to_string(&server_log).unwrap();
    assert!(
        log.lines().any(|l| l.contains(" bytes=1000000- 206 ")),
        "no Range resume in the server log:\n{log}"
    );
    assert!(log.lines().any(|l| l.ends_with(" 503 10")), "no 503 answered:\n{log}");
    for f in ["pages.parquet", "neighborhoods.parquet", "report.parquet", "files.parquet"] {
        assert!(out.join(f).join("_SUCCESS").exists(), "{f} not written");
    }
}

/// `Detector.scan_warc` from Python: a path and a file-like object give the same rows, and an
/// exception raised by the file-like object's `read` comes back as itself. The edited copies
/// are found through passages by default, each passage saying so, and not at all with
/// `match="exact"`.
fn check_python_api(py: &Path, labelset: &Path, edited: &Path) {
    let script = r#"
import sys, ditto_detect
det = ditto_detect.Detector(sys.argv[1])
path = sys.argv[2]
a = det.scan_warc(path)
with open(path, "rb") as f:
    b = det.scan_warc(f)
assert a.pages == b.pages and a.accumulators == b.accumulators, "path and stream differ"
assert a.stats == b.stats, (a.stats, b.stats)
assert a.stats["pages"] == 1388 and not a.errors, a
class Broken:
    def __init__(self): self.f = open(path, "rb"); self.n = 0
    def read(self, n):
        self.n += 1
        if self.n > 3: raise ConnectionResetError("cut on purpose")
        return self.f.read(min(n, 65536))
try:
    det.scan_warc(Broken())
    raise SystemExit("no exception from a failing stream")
except ConnectionResetError as e:
    assert "cut on purpose" in str(e)
m = ditto_detect.MeanStd()
for x in (0.0, 0.0, 0.0, 1.0):
    m.push(x)
assert (m.count, m.mean()) == (4, 0.25) and abs(m.std_dev() ** 2 - 0.1875) < 1e-15
assert ditto_detect.badness(2, ditto_detect.contains_fixed(0.5)) == 0.25
# Edited copies: every page found through passages (the passage evidence says so, and the
# page's words are counted), none with exact chunks only.
assert det.passages and not ditto_detect.Detector(sys.argv[1], match="exact").passages
spun = det.scan_warc(sys.argv[3]).pages
assert len(spun) == int(sys.argv[4]) > 0, len(spun)
for p in spun:
    url, chunks, labeled, ev, ev_match, words, covered = p[0], p[5], p[6], p[12], p[13], p[14], p[15]
    assert labeled >= chunks // 2 and ev and len(ev_match) == len(ev), p
    assert set(ev_match) == {"passage"}, (url, ev_match)
    assert words and covered and covered * 2 >= words, (url, words, covered)
exact = ditto_detect.Detector(sys.argv[1], match="exact").scan_warc(sys.argv[3]).pages
assert [p[0] for p in exact] == [p[0] for p in spun]
for p in exact:
    assert p[6] == 0 and p[12] == [] and p[13] == [] and p[14] is None and p[15] is None, p
print("ok")
"#;
    let big = shared_data().join("warc/big/debian-docs-html.warc.gz");
    let pages = testweb::demo_articles().len().to_string();
    let mut cmd = Command::new(py);
    cmd.arg("-c").arg(script).arg(labelset).arg(&big).arg(edited).arg(&pages);
    let out = cmd.output().expect("python");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("ok"),
        "the Python API check failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
