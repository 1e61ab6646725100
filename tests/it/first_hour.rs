//! What a new user hits following the README literally (issue 25, items 1, 7, 8): each test
//! reproduces one surprise, run as the README writes the command.

use crate::common;

use std::fs;
use std::path::Path;

use common::*;

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, body).unwrap();
}

/// A folder of HOST/PATH pages: a content farm copying Wikipedia and three hosts of original
/// documentation (from the shared Debian docs).
fn host_path_web(web: &Path) {
    for a in ["Albedo", "Aardvark", "ASCII", "Anarchism"] {
        let body = format!(
            "<html><body><p>Cheap watches!</p>{}</body></html>",
            article_paragraphs(a, 100).join("\n")
        );
        write(web, &format!("farm.test/wiki/{a}.html"), &body);
    }
    let debian = shared_data().join("reuse/site/debian-faq.en.docs.test");
    let mut docs: Vec<_> = fs::read_dir(&debian)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    docs.sort();
    for (i, p) in docs.iter().take(6).enumerate() {
        let name = p.file_name().unwrap().to_str().unwrap();
        write(web, &format!("docs{}.test/faq/{name}", i % 3), &fs::read_to_string(p).unwrap());
    }
}

#[test]
fn a_host_path_folder_scanned_without_a_flag_finds_the_copier() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = tmp.path().join("web");
    host_path_web(&web);
    let db = tmp.path().join("d.db");
    // As the README writes it: no --url-prefix.
    let out = scan_plain(&db, &labelset, &web);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("subfolders are host names, read as http://HOST/PATH"), "{err}");
    let out = run_ok(&["report", "--store", db.to_str().unwrap(), "--format", "jsonl"]);
    let flagged = neighborhoods(&out.stdout);
    assert!(
        flagged.iter().any(|n| n.starts_with("http://farm.test/")),
        "the farm is not flagged: {flagged:?}"
    );
    assert!(flagged.iter().all(|n| n.starts_with("http://farm.test/")), "only the farm: {flagged:?}");
}

#[test]
fn a_folder_whose_urls_have_no_host_is_warned_about_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let flat = tmp.path().join("pages");
    for a in ["Albedo", "Aardvark"] {
        write(
            &flat,
            &format!("{a}.html"),
            &format!("<html><body>{}</body></html>", article_paragraphs(a, 100).join("\n")),
        );
    }
    let db = tmp.path().join("flat.db");
    let out = scan_plain(&db, &labelset, &flat);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning:") && err.contains("no host") && err.contains("--url-prefix http://HOST/"),
        "{err}"
    );
    // The fix the warning names works.
    let db2 = tmp.path().join("fixed.db");
    run_ok(&[
        "scan",
        "--progress",
        "none",
        "--store",
        db2.to_str().unwrap(),
        "--labelset",
        labelset.to_str().unwrap(),
        "--url-prefix",
        "http://pages.test/",
        flat.to_str().unwrap(),
    ]);
    let out =
        run_ok(&["report", "--store", db2.to_str().unwrap(), "--format", "jsonl", "--threshold", "0.1"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("pages.test/"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The `sources[].url` of every report row.
fn source_urls(db: &Path) -> Vec<String> {
    let out = run_ok(&["report", "--store", db.to_str().unwrap(), "--format", "jsonl", "--threshold", "0.1"]);
    let mut urls = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        for s in row["sources"].as_array().unwrap() {
            urls.push(s["url"].as_str().unwrap_or("").to_string());
        }
    }
    urls
}

#[test]
fn label_set_sources_from_a_folder_are_linkable_or_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let web = tmp.path().join("web");
    host_path_web(&web);
    // Label sources saved as HOST/PATH: their URLs are http://HOST/PATH, no flag needed.
    let saved = tmp.path().join("saved");
    for a in ["Albedo", "Aardvark", "ASCII", "Anarchism"] {
        let src = shared_data().join(format!("wikipedia/articles/{a}.html"));
        write(&saved, &format!("en.wikipedia.org/wiki/{a}.html"), &fs::read_to_string(src).unwrap());
    }
    let dls = tmp.path().join("hosts.dls");
    let out =
        run_ok(&["labelset", "build", "--name", "w", "-o", dls.to_str().unwrap(), saved.to_str().unwrap()]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = tmp.path().join("h.db");
    scan_plain(&db, &dls, &web);
    let urls = source_urls(&db);
    assert!(
        !urls.is_empty() && urls.iter().all(|u| u.starts_with("http://en.wikipedia.org/wiki/")),
        "{urls:?}"
    );

    // A flat folder of articles (the shared sample's layout): warned, with the flag that fixes it.
    let articles = shared_data().join("wikipedia/articles");
    let flat = tmp.path().join("flat.dls");
    let out = run_ok(&[
        "labelset",
        "build",
        "--name",
        "w",
        "-o",
        flat.to_str().unwrap(),
        articles.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning:") && err.contains("--url-prefix https://en.wikipedia.org/wiki/"), "{err}");
}

fn ditto_out(args: &[&str]) -> (Option<i32>, String, String) {
    let o = ditto().args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn messages_say_what_is_wrong_and_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = tmp.path().join("web");
    host_path_web(&web);
    let db = tmp.path().join("d.db");
    let dbs = db.to_str().unwrap();
    scan_plain(&db, &labelset, &web);

    // Bad JSON given to `labels import` is the input's fault, not the store's.
    let bad = tmp.path().join("labels.jsonl");
    fs::write(&bad, "this is not json\n").unwrap();
    let (code, _, err) = ditto_out(&["labels", "import", "--store", dbs, bad.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("labels to import, line 1") && !err.contains("corrupt store"), "{err}");

    // Without the parquet feature the error names every format this build writes.
    if !cfg!(feature = "parquet") {
        let (_, _, err) = ditto_out(&["report", "--store", dbs, "--format", "parquet", "-o", "x.parquet"]);
        assert!(err.contains("jsonl, csv or table"), "{err}");
    }

    // --help is for people: no rustdoc link syntax.
    let (_, help, _) = ditto_out(&["labelset", "import", "--help"]);
    assert!(!help.contains("[`") && !help.contains("parse_hash_list"), "{help}");

    // Reviewed neighborhoods left out by --unreviewed are counted, not hidden.
    let (_, rows, _) = ditto_out(&["report", "--store", dbs, "--format", "jsonl"]);
    let names = neighborhoods(rows.as_bytes());
    assert!(names.len() >= 2, "{names:?}");
    let labels: String = names
        .iter()
        .map(|n| format!("{{\"neighborhood\":\"{n}\",\"label\":\"copied-for-profit\",\"reviewer\":\"t\",\"time\":1}}\n"))
        .collect();
    let lf = tmp.path().join("good.jsonl");
    fs::write(&lf, labels).unwrap();
    run_ok(&["labels", "import", "--store", dbs, lf.to_str().unwrap()]);
    let (_, table, _) = ditto_out(&["report", "--store", dbs, "--unreviewed", "--format", "table"]);
    let want = format!("{} above it, 0 listed ({} left out as reviewed", names.len(), names.len());
    assert!(table.lines().next().is_some_and(|l| l.contains(&want)), "{table}");

    // Nothing above a threshold: where the nearest sit and the --threshold that lists them.
    let (_, out, err) = ditto_out(&["report", "--store", dbs, "--format", "jsonl", "--threshold", "0.99"]);
    assert!(out.is_empty());
    assert!(
        err.contains("the highest below it: http://farm.test/") && err.contains("try --threshold 0."),
        "{err}"
    );
    let suggested: String = err.split("try --threshold ").nth(1).unwrap().chars().take(4).collect();
    let (_, out, _) = ditto_out(&["report", "--store", dbs, "--format", "jsonl", "--threshold", &suggested]);
    assert!(out.contains("http://farm.test/"), "--threshold {suggested} lists nothing");
}

#[test]
fn stop_chunk_suggestions_leave_out_numbers_and_symbols() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = tmp.path().join("web");
    // Blocks every page repeats: numbers and symbols ("1", "0", "100%"), a boilerplate paragraph.
    let boiler = "This page is part of our documentation archive; content is provided as is, without warranty of any kind, and may be outdated.";
    for i in 0..30 {
        write(
            &web,
            &format!("docs.test/p{i}.html"),
            &format!("<html><body><p>1</p><p>0</p><p>100%</p><p>{boiler}</p><p>Page {i} has its own words here.</p></body></html>"),
        );
    }
    let db = tmp.path().join("s.db");
    scan_plain(&db, &labelset, &web);
    let out = run_ok(&["stopchunks", "suggest", "--store", db.to_str().unwrap(), "--top", "5"]);
    let list = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = list.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).collect();
    assert!(lines.iter().any(|l| l.contains("documentation archive")), "{list}");
    for noise in ["1", "0", "100%"] {
        assert!(!lines.contains(&noise), "{noise:?} suggested: {lines:?}");
    }
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("3 with fewer than 3 letters left out"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // --min-letters 0 keeps them.
    let out = run_ok(&[
        "stopchunks",
        "suggest",
        "--store",
        db.to_str().unwrap(),
        "--top",
        "5",
        "--min-letters",
        "0",
    ]);
    assert!(String::from_utf8(out.stdout).unwrap().lines().any(|l| l == "100%"));
}

#[test]
fn options_come_from_flags_then_environment_then_config_file() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = tmp.path().join("web");
    host_path_web(&web);
    let db = tmp.path().join("d.db");
    scan_plain(&db, &labelset, &web);
    let cfg = tmp.path().join("report.toml");
    fs::write(&cfg, format!("store = {:?}\nformat = \"jsonl\"\nthreshold = 0.99\n", db.to_str().unwrap()))
        .unwrap();
    let rows = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).lines().count();
    // The file alone: its store, format and threshold (nothing that high).
    let o = ditto().args(["report", "--config", cfg.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(rows(&o), 0);
    assert!(String::from_utf8_lossy(&o.stderr).contains("above threshold 0.9900"));
    // A flag beats the file.
    let o =
        ditto().args(["report", "--config", cfg.to_str().unwrap(), "--threshold", "0.1"]).output().unwrap();
    assert!(rows(&o) >= 2, "{}", String::from_utf8_lossy(&o.stderr));
    // The environment beats the file: DITTO_STORE names another (empty) store.
    let empty = tmp.path().join("empty.db");
    let plain = tmp.path().join("plain/x.test");
    fs::create_dir_all(&plain).unwrap();
    fs::write(plain.join("index.html"), "<html><body><p>Nothing copied here.</p></body></html>").unwrap();
    let plain = tmp.path().join("plain");
    let (e, l, p) = (empty.to_str().unwrap(), labelset.to_str().unwrap(), plain.to_str().unwrap());
    run_ok(&["scan", "--progress", "none", "--store", e, "--labelset", l, p]);
    let o = ditto()
        .env("DITTO_STORE", &empty)
        .args(["report", "--config", cfg.to_str().unwrap(), "--threshold", "0.1"])
        .output()
        .unwrap();
    assert_eq!(rows(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // And the environment alone works without the file.
    let o = ditto()
        .env("DITTO_STORE", &db)
        .args(["report", "--format", "jsonl", "--threshold", "0.1"])
        .output()
        .unwrap();
    assert!(rows(&o) >= 2, "{}", String::from_utf8_lossy(&o.stderr));
    // A key that is no option of the command is a usage error naming it.
    fs::write(&cfg, "stor = \"x\"\n").unwrap();
    let o = ditto().args(["stats", "--config", cfg.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`stor` is not an option of `ditto stats`"));
}

#[test]
fn completions_and_man_pages_come_from_the_clap_definitions() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run_ok(&["completions", shell]);
        let script = String::from_utf8(out.stdout).unwrap();
        for word in ["crawl", "max-pages", "labelset"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    run_ok(&["man", tmp.path().to_str().unwrap()]);
    let crawl = fs::read_to_string(tmp.path().join("ditto-crawl.1")).unwrap();
    assert!(crawl.contains(".TH") && crawl.contains("max\\-pages"), "{}", &crawl[..crawl.len().min(400)]);
    assert!(tmp.path().join("ditto.1").exists() && tmp.path().join("ditto-labelset-build.1").exists());
}

/// `ditto COMMAND ARGS… --store DB`: its exit code, stdout and stderr.
fn on_store(db: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--store", db.to_str().unwrap()]);
    ditto_out(&all)
}

#[test]
fn a_scan_without_a_labelset_serves_the_analyses_that_need_none() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = tmp.path().join("web");
    host_path_web(&web);
    // An exact mirror of one docs host, and a page quilted from the farm's four copies.
    for e in fs::read_dir(web.join("docs0.test/faq")).unwrap() {
        let p = e.unwrap().path();
        write(
            &web,
            &format!("mirror.test/faq/{}", p.file_name().unwrap().to_str().unwrap()),
            &fs::read_to_string(&p).unwrap(),
        );
    }
    let quilt: Vec<String> = ["Albedo", "Aardvark", "ASCII", "Anarchism"]
        .iter()
        .flat_map(|a| article_paragraphs(a, 100).into_iter().take(4))
        .collect();
    write(&web, "quilt.test/q.html", &format!("<html><body>{}</body></html>", quilt.join("\n")));
    let pages = walkdir_count(&web);

    let scan = |db: &Path, with: Option<&Path>| {
        let mut args = vec!["scan", "--progress", "none", "--threads", "1", "--store", db.to_str().unwrap()];
        if let Some(l) = with {
            args.extend(["--labelset", l.to_str().unwrap()]);
        }
        args.push(web.to_str().unwrap());
        ditto_out(&args)
    };
    let bare = tmp.path().join("bare.db");
    let (code, _, err) = scan(&bare, None);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("no label set") && err.contains("replicas, quilts, origins, discover"), "{err}");
    let labeled = tmp.path().join("labeled.db");
    let (code, _, err) = scan(&labeled, Some(&labelset));
    assert_eq!(code, Some(0), "{err}");

    // The analyses that need no label set answer on it as on a store scanned with one.
    let sorted = |s: String| {
        let mut l: Vec<String> = s.lines().map(String::from).collect();
        l.sort();
        l
    };
    for args in [
        &["replicas", "--format", "jsonl"][..],
        &["quilts", "--format", "jsonl"],
        &["origins", "--format", "jsonl"],
        &["stopchunks", "suggest", "--top", "20"],
    ] {
        let (code, out, err) = on_store(&bare, args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        let (_, want, _) = on_store(&labeled, args);
        assert_eq!(sorted(out.replace("bare.db", "X")), sorted(want.replace("labeled.db", "X")), "{args:?}");
    }
    let (_, replicas, _) = on_store(&bare, &["replicas", "--format", "jsonl"]);
    assert!(replicas.contains("http://mirror.test/faq/"), "the mirror's pages are replicas: {replicas}");
    let (_, quilts, _) = on_store(&bare, &["quilts", "--format", "jsonl"]);
    assert!(quilts.contains("http://quilt.test/q.html"), "the quilt: {quilts}");
    let (_, origins, _) = on_store(&bare, &["origins", "--format", "jsonl"]);
    assert_eq!(origins.lines().count(), pages, "one origin row per page");
    let dls = tmp.path().join("blind.dls");
    let (code, _, err) = on_store(&bare, &["discover", "--min-count", "1", "-o", dls.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let wrote = |e: &str| e.lines().find(|l| l.contains("wrote")).map(String::from);
    let dls2 = tmp.path().join("blind2.dls");
    let (_, _, err2) = on_store(&labeled, &["discover", "--min-count", "1", "-o", dls2.to_str().unwrap()]);
    assert!(wrote(&err).is_some());
    assert_eq!(
        wrote(&err).map(|l| l.replace("blind.dls", "X")),
        wrote(&err2).map(|l| l.replace("blind2.dls", "X"))
    );
    let (code, out, _) = on_store(&bare, &["stats"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("label set:      none (scanned without --labelset"), "{out}");

    // The commands that judge neighborhoods say why not, and what works: an error (1).
    for args in [&["report"][..], &["report", "--labelset", labelset.to_str().unwrap()], &["review"]] {
        let (code, out, err) = on_store(&bare, args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.contains(&format!(
                "`ditto {}` needs a label set, and this store was scanned without one",
                args[0]
            )) && err.contains("--labelset FILE.dls")
                && err.contains("replicas, quilts, origins, discover"),
            "{args:?}: {err}"
        );
    }
    // A store holds one label set's verdicts, or none: scanning it again with one is refused.
    let (code, _, err) = scan(&bare, Some(&labelset));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("this store was scanned with no label set, not label set"), "{err}");
}

/// Files under `dir`.
fn walkdir_count(dir: &Path) -> usize {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            if p.is_dir() {
                walkdir_count(&p)
            } else {
                1
            }
        })
        .sum()
}

/// A scan (or crawl) that flags nothing while some neighborhood has badness says where the
/// highest sit and which `--threshold` lists them, and that threshold does list them.
#[test]
fn a_scan_that_flags_nothing_shows_the_nearest_and_a_threshold() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let web = tmp.path().join("web");
    // One farm alone: its neighborhoods all have the same badness, so none is above
    // mean + sd.
    for a in ["Albedo", "Aardvark"] {
        let body = format!(
            "<html><body><p>Cheap watches!</p>{}</body></html>",
            article_paragraphs(a, 100).join("\n")
        );
        write(&web, &format!("farm.test/wiki/{a}.html"), &body);
    }
    let db = tmp.path().join("d.db");
    let db_s = db.to_str().unwrap();
    let out = scan_plain(&db, &labelset, &web);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing is above the threshold"), "{err}");
    assert!(err.contains("http://farm.test/"), "{err}");
    let suggested = err
        .split("try --threshold ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no threshold suggested: {err}"))
        .to_string();
    let (_, stats, _) = ditto_out(&["stats", "--store", db_s]);
    assert!(stats.contains("hint:") && stats.contains("try --threshold"), "{stats}");
    let out = run_ok(&["report", "--store", db_s, "--format", "jsonl", "--threshold", &suggested]);
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(listed.contains("http://farm.test/"), "--threshold {suggested} lists nothing: {listed}");
}
