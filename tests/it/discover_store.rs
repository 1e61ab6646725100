//! Blind discovery, stop-chunk suggestions and chunk export over a store scanned from Debian
//! documentation hosts of the shared reuse corpus (`../shared/data/reuse/site`).

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use common::{run_ok, scan_site, shared_data, wikipedia_labelset};
use detector::fingerprint::fingerprint_with_file_hash;
use detector::passages::PassageLookup;
use detector::passages::{anchors, document_anchors, PassageParams, WordStream};
use detector::{Normalization, Sha1Digest, StopList};
use labelsets::{LabelSet, StopChunks};

const HOSTS: &[&str] = &[
    "debian-faq.en.docs.test",
    "archive-mirror.docs.test",
    "debian-reference.en.docs.test",
    "debian-reference.de.docs.test",
    "maint-guide.en.docs.test",
    "mirror-of-maint-guide.en.docs.test",
];

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

/// A site of a few Debian hosts, scanned into a store.
fn scanned(tmp: &Path) -> (PathBuf, PathBuf) {
    let site = tmp.join("site");
    for h in HOSTS {
        copy_dir(&shared_data().join("reuse/site").join(h), &site.join(h));
    }
    let labelset = wikipedia_labelset(tmp);
    let db = tmp.join("site.db");
    scan_site(&db, &labelset, &site);
    (db, site)
}

/// Chunk (or file) counts of the store, computed here without `ditto::analysis::counting`.
fn store_counts(db: &Path, files: bool) -> HashMap<Sha1Digest, u64> {
    let store = store::Store::open(db).unwrap();
    let norm = Normalization::default();
    let mut counts = HashMap::new();
    // The pages' text, read back from the site's files (the store keeps none).
    let texts = ditto::source::text::TextSource::new(&store).unwrap();
    for item in texts.texts() {
        let (_, file_hash, blocks) = item.unwrap();
        if files {
            *counts.entry(file_hash).or_default() += 1;
            continue;
        }
        for c in fingerprint_with_file_hash(file_hash, &blocks, &norm).chunks {
            *counts.entry(c.hash).or_default() += 1;
        }
    }
    counts
}

/// Passage anchors (the label sets' default parameters) counted once per page, computed here
/// from `detector::passages` without `ditto::analysis::counting`.
fn store_passage_counts(db: &Path) -> HashMap<u64, u64> {
    let store = store::Store::open(db).unwrap();
    let mut counts = HashMap::new();
    let texts = ditto::source::text::TextSource::new(&store).unwrap();
    for item in texts.texts() {
        let (_, _, blocks) = item.unwrap();
        let ws = WordStream::of_blocks(blocks.iter().map(String::as_str));
        let mut anc = Vec::new();
        anchors(&ws.words, PassageParams::default(), &mut anc);
        let distinct: BTreeSet<u64> = anc.iter().map(|a| a.hash).collect();
        for h in distinct {
            *counts.entry(h).or_default() += 1;
        }
    }
    counts
}

fn entries(path: &Path) -> Vec<(Sha1Digest, String)> {
    let ls = LabelSet::open(path).unwrap();
    ls.iter().map(|(d, s)| (d, ls.source(s).unwrap().url.to_string())).collect()
}

fn info_counts(path: &Path) -> serde_json::Value {
    let out = run_ok(&["labelset", "info", "--json", path.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["header"]["counts"].clone()
}

#[test]
fn discover_suggest_and_export_over_debian_docs() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, site) = scanned(tmp.path());
    let dbs = db.to_str().unwrap();
    let counts = store_counts(&db, false);
    let occurrences: u64 = counts.values().sum();
    let stops = StopChunks::default_list(Normalization::default());
    let min = 5u64;

    // 1. Exactly the chunks seen more than min-count times, minus stop chunks (§3.2).
    let blind = tmp.path().join("blind.dls");
    run_ok(&["discover", "--store", dbs, "--min-count", &min.to_string(), "-o", blind.to_str().unwrap()]);
    let want: BTreeSet<Sha1Digest> =
        counts.iter().filter(|(h, &n)| n > min && !stops.is_stop(h)).map(|(h, _)| *h).collect();
    let got = entries(&blind);
    assert!(want.len() > 50, "{} discovered", want.len());
    assert_eq!(got.iter().map(|e| e.0).collect::<BTreeSet<_>>(), want);
    for (h, url) in &got {
        assert!(counts[h] > min && !stops.is_stop(h));
        assert!(url.starts_with("http://") && HOSTS.iter().any(|host| url.contains(host)), "{url}");
    }
    // A chunk seen exactly min-count times is not discovered (strict >).
    assert!(counts.values().any(|&n| n == min));

    // 2. --memory at a tenth of the data (20 bytes per occurrence): same label set, spilled.
    let small = tmp.path().join("blind-small.dls");
    let mem = (occurrences * 20 / 10).to_string();
    let tmpdir = tmp.path().join("spill");
    let out = run_ok(&[
        "discover",
        "--store",
        dbs,
        "--min-count",
        &min.to_string(),
        "--memory",
        &mem,
        "--tmp-dir",
        tmpdir.to_str().unwrap(),
        "-o",
        small.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(" 0 runs spilled"), "{err}");
    assert_eq!(info_counts(&small), info_counts(&blind));
    assert_eq!(entries(&small), got);
    assert_eq!(std::fs::read_dir(&tmpdir).unwrap().count(), 0, "spill files left behind");

    // 3. Straight from the inputs: the same chunks.
    let direct = tmp.path().join("blind-direct.dls");
    run_ok(&[
        "discover",
        "--min-count",
        &min.to_string(),
        "--url-prefix",
        "http://",
        "-o",
        direct.to_str().unwrap(),
        site.to_str().unwrap(),
    ]);
    assert_eq!(entries(&direct).into_iter().map(|e| e.0).collect::<BTreeSet<_>>(), want);

    // 4. Files (L_f): the mirrored pages.
    let files = tmp.path().join("files.dls");
    run_ok(&["discover", "--store", dbs, "--files", "--min-count", "1", "-o", files.to_str().unwrap()]);
    let fcounts = store_counts(&db, true);
    let fwant: BTreeSet<Sha1Digest> =
        fcounts.iter().filter(|(h, &n)| n > 1 && !stops.is_stop(h)).map(|(h, _)| *h).collect();
    assert!(!fwant.is_empty());
    assert_eq!(entries(&files).into_iter().map(|e| e.0).collect::<BTreeSet<_>>(), fwant);
    assert_eq!(info_counts(&files)["entries"], fwant.len());

    // 5. The histogram alone.
    let out = run_ok(&["discover", "--store", dbs, "--histogram"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("distinct") && text.contains("knee candidate"), "{text}");

    // 6. Stop-chunk suggestions: Debian templates and boilerplate, most frequent first.
    let cand = tmp.path().join("cand.txt");
    run_ok(&["stopchunks", "suggest", "--store", dbs, "--top", "100", "-o", cand.to_str().unwrap()]);
    let text = std::fs::read_to_string(&cand).unwrap();
    let (chunk_part, passage_part) = text.split_once("\n# Passages:").expect("passage suggestions follow");
    let lines: Vec<&str> = chunk_part.lines().collect();
    for boiler in ["Table of Contents", "Caution", "Tip"] {
        assert!(lines.iter().any(|l| l.trim() == boiler), "{boiler:?} not suggested:\n{text}");
    }
    let listed: Vec<u64> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("# count "))
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(listed.len(), 100);
    assert!(listed.windows(2).all(|w| w[0] >= w[1]));
    // The file is a stop list: loaded back, its chunks are the ones listed, with those counts.
    let reviewed = StopChunks::from_text(chunk_part, Normalization::default());
    assert_eq!(reviewed.len(), 100);
    let mut top: Vec<u64> = counts.iter().filter(|(h, _)| reviewed.is_stop(h)).map(|(_, &n)| n).collect();
    top.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(top, listed);
    // Then passages (issue 36): each line holds a passage found on as many pages as listed,
    // most frequent first, inside no stop chunk and no chunk listed above.
    let pcounts = store_passage_counts(&db);
    let p = PassageParams::default();
    let mut covered: BTreeSet<u64> =
        StopChunks::default_list(Normalization::default()).stop_passages(p).into_iter().collect();
    covered.extend(reviewed.stop_passages(p));
    let plines: Vec<&str> = passage_part.lines().collect();
    let mut plisted = Vec::new();
    for (i, l) in plines.iter().enumerate() {
        let Some(count) = l.strip_prefix("# count ") else { continue };
        let count: u64 = count.split(',').next().unwrap().parse().unwrap();
        let line = plines[i + 1];
        let holds = document_anchors([line], p)
            .into_iter()
            .any(|h| pcounts.get(&h) == Some(&count) && !covered.contains(&h));
        assert!(holds, "no passage of {line:?} is on {count} pages outside the stop chunks");
        plisted.push(count);
    }
    assert!(!plisted.is_empty() && plisted.windows(2).all(|w| w[0] >= w[1]), "{plisted:?}");
    // Loaded as a stop list, the passage lines' word sequences are stop passages.
    let whole = StopChunks::from_text(&text, Normalization::default());
    let line_passages: BTreeSet<u64> = whole.stop_passages(p).into_iter().collect();
    assert!(line_passages.len() > reviewed.stop_passages(p).len());
    let reviewed = whole;
    // Passing it to discover leaves those chunks out.
    let discover_from_store = |name: &str, extra: &[&str]| {
        let out = tmp.path().join(name);
        let (min, path) = (min.to_string(), out.to_str().unwrap().to_string());
        let mut args = vec!["discover", "--store", dbs, "--min-count", &min];
        args.extend_from_slice(extra);
        args.extend(["-o", &path]);
        run_ok(&args);
        out
    };
    let reviewed_dls = discover_from_store("blind-reviewed.dls", &["--stop-chunks", cand.to_str().unwrap()]);
    let left: BTreeSet<Sha1Digest> = want.iter().filter(|h| !reviewed.is_stop(h)).copied().collect();
    assert_eq!(entries(&reviewed_dls).into_iter().map(|e| e.0).collect::<BTreeSet<_>>(), left);

    // 6b. Blind discovery of passages (issue 36): every anchor on more than `min` pages that
    // is no stop passage, as counted here, is in the label set's passage table, and nothing
    // else is.
    let blind_passages = discover_from_store("blind-passages.dls", &["--passages"]);
    let default_stops: BTreeSet<u64> =
        StopChunks::default_list(Normalization::default()).stop_passages(p).into_iter().collect();
    let frequent: Vec<u64> =
        pcounts.iter().filter(|(h, &n)| n > min && !default_stops.contains(h)).map(|(h, _)| *h).collect();
    assert!(!frequent.is_empty());
    let ls = LabelSet::open(&blind_passages).unwrap();
    assert_eq!(ls.passage_header().unwrap().entries as usize, frequent.len());
    assert!(frequent.iter().all(|&h| ls.lookup_passage(h).is_some()));
    let rare = pcounts.iter().filter(|(_, &n)| n <= min).take(1000);
    assert!(rare.clone().count() > 0 && rare.filter(|(&h, _)| ls.lookup_passage(h).is_some()).count() == 0);
    // Its chunks are the plain discovery's.
    assert_eq!(entries(&blind_passages), entries(&blind));

    // 7. Export: one row per chunk occurrence.
    let csv = tmp.path().join("chunks.csv");
    run_ok(&["export", "chunks", "--store", dbs, "--format", "csv", "-o", csv.to_str().unwrap()]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = text.lines();
    assert_eq!(rows.next(), Some("chunk_sha1,url,host,neighborhood,stop"));
    let mut n = 0u64;
    for row in rows {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f.len(), 5, "{row}");
        assert_eq!(f[0].len(), 40);
        assert!(f[1].starts_with(&format!("http://{}/", f[2])), "{row}");
        assert!(f[1].starts_with(f[3]) && f[3].ends_with('/'), "{row}");
        n += 1;
    }
    assert_eq!(n, occurrences);
    let out = common::ditto()
        .args(["export", "chunks", "--store", dbs, "--format", "parquet", "-o", "x.parquet"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("`parquet` cargo feature"));
}
