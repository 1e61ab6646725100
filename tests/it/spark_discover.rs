//! The cluster path of blind discovery (Ardi & Heidemann 2014, §3.2 step 3b): `ditto export
//! chunks` → `examples/spark/discover.py` on local Spark (`local[2]`) → `ditto labelset
//! import` gives exactly the label set `ditto discover --store` writes (same chunk hashes,
//! same sample-URL sources), and the hash list's counts are the store's counts; likewise for
//! file hashes (`ditto export files` → `--files-from` → import ≡ `ditto discover --files`).
//!
//! Needs Java (`scripts/install_java.sh` installs Debian's openjdk-17-jre-headless; .ci/run
//! calls it) and PySpark, which this test pip-installs into target/spark-venv (kept between
//! runs). Fails with a message saying what is missing; it never skips.

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run_ok, scan_site, shared_data, wikipedia_labelset};
use detector::fingerprint::{fingerprint_with_file_hash, hex};
use detector::{Normalization, Sha1Digest, StopList};
use labelsets::{LabelSet, StopChunks};

const HOSTS: &[&str] = &[
    "debian-faq.en.docs.test",
    "archive-mirror.docs.test",
    "maint-guide.en.docs.test",
    "mirror-of-maint-guide.en.docs.test",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// target/spark-venv's python with pyspark importable (created and installed on first use).
pub(crate) fn spark_python() -> PathBuf {
    let java = Command::new("java").arg("-version").output();
    assert!(
        java.as_ref().is_ok_and(|o| o.status.success()),
        "no working `java` (needed by Spark): run scripts/install_java.sh (installs Debian's \
         openjdk-17-jre-headless) or put a Java 17 runtime on PATH ({java:?})"
    );
    let venv = root().join("target/spark-venv");
    let py = venv.join("bin/python");
    let ready =
        || Command::new(&py).args(["-c", "import pyspark"]).output().is_ok_and(|o| o.status.success());
    locked_venv(&venv, &ready, &["pyspark"]);
    py
}

/// Makes `venv` a virtualenv in which `ready()` holds, pip-installing `packages` when it does
/// not. Tests running side by side (and `bindings/python/tests/test_scrapy.sh`, which takes
/// the same lock with flock(1)) share venvs under target/: an exclusive lock on
/// `<venv>.lock` keeps one from using a venv another is half-way through creating, and a
/// venv left without pip (an interrupted run) is created again.
pub(crate) fn locked_venv(venv: &Path, ready: &dyn Fn() -> bool, packages: &[&str]) {
    let lock_path = venv.with_extension("lock");
    if let Some(parent) = lock_path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    let lock = std::fs::File::create(&lock_path).unwrap();
    lock.lock().unwrap_or_else(|e| panic!("locking {}: {e}", lock_path.display()));
    if ready() {
        return;
    }
    let py = venv.join("bin/python");
    let has_pip =
        Command::new(&py).args(["-m", "pip", "--version"]).output().is_ok_and(|o| o.status.success());
    if !has_pip {
        let base = std::env::var("DITTO_PYTHON").unwrap_or_else(|_| "python3".into());
        let out = Command::new(&base).args(["-m", "venv", "--clear"]).arg(venv).output();
        assert!(
            out.as_ref().is_ok_and(|o| o.status.success()),
            "cannot create a venv with {base} -m venv {} (needs Python 3.9+ with venv): {out:?}",
            venv.display()
        );
    }
    let out = Command::new(&py).args(["-m", "pip", "install", "-q"]).args(packages).output();
    assert!(
        out.as_ref().is_ok_and(|o| o.status.success()),
        "pip install {} into {} failed (network to PyPI needed once): {}",
        packages.join(" "),
        venv.display(),
        out.as_ref().map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default()
    );
    assert!(ready(), "{} is still not usable after pip install {}", venv.display(), packages.join(" "));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// (hash, source title, source URL) of each entry.
type Entries = Vec<(Sha1Digest, String, String)>;

/// Every entry as (hash, source title, source URL), and the source table.
fn contents(path: &Path) -> (Entries, Vec<(String, String)>) {
    let ls = LabelSet::open(path).unwrap();
    let entries = ls
        .iter()
        .map(|(d, s)| {
            let src = ls.source(s).unwrap();
            (d, src.title.to_string(), src.url.to_string())
        })
        .collect();
    let sources = (0..ls.source_count() as u32)
        .map(|i| {
            let s = ls.source(i).unwrap();
            (s.title.to_string(), s.url.to_string())
        })
        .collect();
    (entries, sources)
}

fn run_spark(py: &Path, input: &Path, min: u64, out: &Path, extra: &[&str]) {
    let t = std::time::Instant::now();
    let res = Command::new(py)
        .arg(root().join("examples/spark/discover.py"))
        .args(["--master", "local[2]", "--min-count", &min.to_string(), "-o"])
        .arg(out)
        .arg(input)
        .args(extra)
        .output()
        .expect("running examples/spark/discover.py");
    assert!(
        res.status.success(),
        "examples/spark/discover.py failed:\n{}\n{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    eprintln!("spark job over {} took {:.1}s", input.display(), t.elapsed().as_secs_f64());
}

#[test]
fn spark_hash_list_imports_to_the_label_set_discover_writes() {
    let py = spark_python();
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let db = scan_reuse_hosts(tmp);
    let dbs = db.to_str().unwrap();
    let norm = Normalization::default();

    // The store's counts, computed here without ditto's counting.
    let (counts, first_url) = store_counts(&db, norm);

    // A reviewed stop list with a frequent chunk, given to both paths (§3.4.2).
    let (stop_file, stops) = reviewed_stop_list(tmp, norm);
    let toc = detector::fingerprint::chunk_hash(&norm.apply("Table of Contents"));
    let min = 3u64;
    assert!(counts.get(&toc).is_some_and(|&n| n > min), "the stop chunk should pass the threshold");

    let sf = stop_file.to_str().unwrap();
    let out = discover_and_export(tmp, dbs, sf);
    let (imported, imported_files) = spark_and_import(&py, tmp, min, &out);
    check_file_hashes(&out.blind_files, &imported_files);

    // The hash list: exactly the chunks seen more than 3 times minus stop chunks, with the
    // store's counts and the smallest URL as sample, sorted by hash.
    let text = std::fs::read_to_string(&out.list).unwrap();
    let want = expected_hash_list(&counts, &first_url, &stops, min);
    check_hash_list(&text, &want, &toc);

    // The label sets: same entries, same sources (same ids, titles and URLs).
    check_label_sets(&out.blind, &imported, &want);

    // Parquet exports give the same list (with the `parquet` feature only).
    if cfg!(feature = "parquet") {
        check_parquet_list(&py, tmp, dbs, sf, min, &text);
    }

    // Malformed hash lists: clear errors with the line number.
    check_malformed_lists(tmp, &toc);
}

/// Copies the reuse data's `HOSTS` under `tmp`/site and scans them into `tmp`/site.db.
fn scan_reuse_hosts(tmp: &Path) -> PathBuf {
    let site = tmp.join("site");
    for h in HOSTS {
        copy_dir(&shared_data().join("reuse/site").join(h), &site.join(h));
    }
    let db = tmp.join("site.db");
    scan_site(&db, &wikipedia_labelset(tmp), &site);
    db
}

/// Every chunk hash's count over the store's texts, and the smallest URL it occurs on.
fn store_counts(db: &Path, norm: Normalization) -> (HashMap<Sha1Digest, u64>, HashMap<Sha1Digest, String>) {
    let store = store::Store::open(db).unwrap();
    let mut counts: HashMap<Sha1Digest, u64> = HashMap::new();
    let mut first_url: HashMap<Sha1Digest, String> = HashMap::new();
    // The pages' text, read back from the site's files (the store keeps none).
    let texts = ditto::source::text::TextSource::new(&store).unwrap();
    for item in texts.texts() {
        let (url, file_hash, blocks) = item.unwrap();
        for c in fingerprint_with_file_hash(file_hash, &blocks, &norm).chunks {
            *counts.entry(c.hash).or_default() += 1;
            let e = first_url.entry(c.hash).or_insert_with(|| url.clone());
            if url.as_bytes() < e.as_bytes() {
                *e = url.clone();
            }
        }
    }
    drop(texts);
    drop(store);
    (counts, first_url)
}

/// `tmp`/reviewed.txt (stopping "Table of Contents") and the default stop list plus it.
fn reviewed_stop_list(tmp: &Path, norm: Normalization) -> (PathBuf, StopChunks) {
    let stop_file = tmp.join("reviewed.txt");
    std::fs::write(&stop_file, "# reviewed\nTable of Contents\n").unwrap();
    let mut stops = StopChunks::default_list(norm);
    stops.add_file(&stop_file).unwrap();
    (stop_file, stops)
}

/// The files of one run: what `ditto discover` and `ditto export` wrote, and where the Spark
/// job writes its lists.
struct Outputs {
    blind: PathBuf,
    csv: PathBuf,
    blind_files: PathBuf,
    files_csv: PathBuf,
    files_list: PathBuf,
    list: PathBuf,
}

/// `ditto discover` (chunks and files) and `ditto export` (chunks and files) on the store.
fn discover_and_export(tmp: &Path, dbs: &str, sf: &str) -> Outputs {
    let blind = tmp.join("blind.dls");
    run_ok(&[
        "discover",
        "--store",
        dbs,
        "--min-count",
        "3",
        "--stop-chunks",
        sf,
        "-o",
        blind.to_str().unwrap(),
    ]);
    let csv = tmp.join("chunks.csv");
    run_ok(&["export", "chunks", "--store", dbs, "--stop-chunks", sf, "-o", csv.to_str().unwrap()]);

    // File hashes (L_f) in the same Spark session: pages seen more than once (mirrors).
    let blind_files = tmp.join("blind-files.dls");
    run_ok(&["discover", "--store", dbs, "--files", "--min-count", "1", "-o", blind_files.to_str().unwrap()]);
    let files_csv = tmp.join("files.csv");
    run_ok(&["export", "files", "--store", dbs, "-o", files_csv.to_str().unwrap()]);
    let files_list = tmp.join("files.tsv");

    let list = tmp.join("hashes.tsv");
    Outputs { blind, csv, blind_files, files_csv, files_list, list }
}

/// Runs the Spark job over the chunk and file exports, then imports both hash lists: the
/// imported chunk and file label sets.
fn spark_and_import(py: &Path, tmp: &Path, min: u64, out: &Outputs) -> (PathBuf, PathBuf) {
    run_spark(
        py,
        &out.csv,
        min,
        &out.list,
        &[
            "--files-from",
            out.files_csv.to_str().unwrap(),
            "--files-min-count",
            "1",
            "--files-output",
            out.files_list.to_str().unwrap(),
        ],
    );
    let imported = tmp.join("imported.dls");
    run_ok(&["labelset", "import", "-o", imported.to_str().unwrap(), out.list.to_str().unwrap()]);
    let imported_files = tmp.join("imported-files.dls");
    run_ok(&["labelset", "import", "-o", imported_files.to_str().unwrap(), out.files_list.to_str().unwrap()]);
    (imported, imported_files)
}

/// The imported file hashes are `ditto discover --files`'s, in a files label set.
fn check_file_hashes(blind_files: &Path, imported_files: &Path) {
    let (df, dfs) = contents(blind_files);
    assert!(!df.is_empty(), "no file seen more than once");
    assert_eq!(
        contents(imported_files),
        (df, dfs),
        "imported file hashes differ from ditto discover --files"
    );
    assert_eq!(LabelSet::open(imported_files).unwrap().kind(), labelsets::Kind::Files);
}

/// (hex hash, count, smallest URL) of every chunk seen more than `min` times and not a stop
/// chunk, sorted.
fn expected_hash_list(
    counts: &HashMap<Sha1Digest, u64>,
    first_url: &HashMap<Sha1Digest, String>,
    stops: &StopChunks,
    min: u64,
) -> Vec<(String, u64, String)> {
    let mut want: Vec<(String, u64, String)> = counts
        .iter()
        .filter(|(h, &n)| n > min && !stops.is_stop(h))
        .map(|(h, &n)| (hex(h), n, first_url[h].clone()))
        .collect();
    want.sort();
    want
}

/// The Spark job's hash list (`text`) is `want`, without the stop chunk `toc`.
fn check_hash_list(text: &str, want: &[(String, u64, String)], toc: &Sha1Digest) {
    let rows: Vec<(String, u64, String)> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.splitn(3, '\t').collect();
            (f[0].to_string(), f[1].parse().unwrap(), f[2].to_string())
        })
        .collect();
    assert!(want.len() > 100, "{} chunks above the threshold", want.len());
    assert_eq!(rows, want, "hash list differs from the store's own counts");
    assert!(!rows.iter().any(|r| r.0 == hex(toc)), "a stop chunk entered the hash list");
}

/// The imported label set has `ditto discover`'s entries, sources and header, and the
/// entries are `want`'s hashes.
fn check_label_sets(blind: &Path, imported: &Path, want: &[(String, u64, String)]) {
    let (d_entries, d_sources) = contents(blind);
    let (i_entries, i_sources) = contents(imported);
    assert_eq!(d_entries.len(), want.len());
    assert_eq!(i_entries, d_entries, "imported entries differ from ditto discover's");
    assert_eq!(i_sources, d_sources, "imported sources differ from ditto discover's");
    let (d, i) = (LabelSet::open(blind).unwrap(), LabelSet::open(imported).unwrap());
    assert_eq!(d.header().kind, i.header().kind);
    assert_eq!(d.header().normalization, i.header().normalization);
    assert_eq!(d.header().counts, i.header().counts);
    let got: BTreeSet<String> = d_entries.iter().map(|e| hex(&e.0)).collect();
    assert_eq!(got, want.iter().map(|w| w.0.clone()).collect());
}

/// A Parquet chunk export run through the Spark job gives the hash list `text` (comments aside).
fn check_parquet_list(py: &Path, tmp: &Path, dbs: &str, sf: &str, min: u64, text: &str) {
    let pq = tmp.join("chunks.parquet");
    run_ok(
        &["export", "chunks", "--store", dbs, "--format", "parquet", "--stop-chunks", sf, "-o"]
            .iter()
            .copied()
            .chain([pq.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    let list2 = tmp.join("hashes-parquet.tsv");
    run_spark(py, &pq, min, &list2, &[]);
    let strip = |t: &str| t.lines().filter(|l| !l.starts_with('#')).map(String::from).collect::<Vec<_>>();
    assert_eq!(strip(&std::fs::read_to_string(&list2).unwrap()), strip(text));
}

/// `ditto labelset import` of malformed hash lists fails with the line number in the error.
fn check_malformed_lists(tmp: &Path, toc: &Sha1Digest) {
    for (body, needle) in [
        ("# c\nzz\t4\thttp://a/\n", "line 2: \"zz\" is not a SHA-1"),
        (&format!("{}\tmany\thttp://a/\n", hex(toc)), "line 1: count \"many\""),
        (&format!("{}\n", hex(toc)), "line 1: expected HASH<TAB>COUNT<TAB>URL"),
        (&format!("{h}\t5\thttp://a/\n{h}\t6\thttp://b/\n", h = hex(toc)), "line 2: hash"),
        (&format!("# min_count=5\n{}\t5\thttp://a/\n", hex(toc)), "not more than the threshold 5"),
    ] {
        let bad = tmp.join("bad.tsv");
        std::fs::write(&bad, body).unwrap();
        let out = common::ditto()
            .args(["labelset", "import", "-o", tmp.join("bad.dls").to_str().unwrap(), bad.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(needle), "{needle:?} not in: {err}");
    }
}
