//! A small web where some sites copy Wikipedia paragraphs (from the shared sample): exactly
//! those neighborhoods must be flagged, with the right sources.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use common::*;

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, body).unwrap();
}

fn page(title: &str, paragraphs: &[String]) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>{title}</title><script>var ads = '<p>not text</p>';</script></head>\
         <body><div class=nav><a href=/>Home</a></div>{}<div class=footer>Privacy policy</div></body></html>",
        paragraphs.join("\n")
    )
}

#[test]
fn exactly_the_copying_neighborhoods_are_flagged_with_their_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let labelset = wikipedia_labelset(tmp.path());
    let site = tmp.path().join("site");
    let debian = shared_data().join("reuse/site/debian-faq.en.docs.test");
    let mut originals: Vec<_> = fs::read_dir(&debian)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    originals.sort();
    assert!(originals.len() >= 16);

    // Ten hosts of original (non-Wikipedia) documentation pages, two per host.
    for (i, pair) in originals.chunks(2).take(8).enumerate() {
        for p in pair {
            let name = p.file_name().unwrap().to_str().unwrap();
            fs::create_dir_all(site.join(format!("docs{i}.test/faq"))).unwrap();
            fs::copy(p, site.join(format!("docs{i}.test/faq/{name}"))).unwrap();
        }
    }
    // A blog quoting one Wikipedia paragraph among much original text: not a bad neighborhood.
    let orig = fs::read_to_string(&originals[0]).unwrap();
    let quote = article_paragraphs("Albedo", 200)[0].clone();
    write(&site, "blog.test/2024/post.html", &orig.replacen("<body", &format!("<body>{quote}<div"), 1));
    write(&site, "blog.test/2024/other.html", &fs::read_to_string(&originals[1]).unwrap());

    // A content farm: Wikipedia paragraphs wrapped in ads under /wiki/, plus an original page.
    let copied = ["Albedo", "Aardvark", "ASCII", "A_Modest_Proposal"];
    for a in copied {
        let mut ps =
            vec!["<p>Buy cheap watches now! Best prices, free shipping worldwide on every order today.</p>"
                .to_string()];
        ps.extend(article_paragraphs(a, 100).into_iter().take(6));
        ps.push(format!("<p>Sponsored: {a} deals and coupons, updated daily by our editors for you.</p>"));
        write(&site, &format!("farm.test/wiki/{a}.html"), &page(a, &ps));
    }
    write(&site, "farm.test/about/contact.html", &fs::read_to_string(&originals[2]).unwrap());

    // An exact mirror of three articles.
    let mirrored = ["Anarchism", "Achilles", "Alabama"];
    for a in mirrored {
        let src = shared_data().join(format!("wikipedia/articles/{a}.html"));
        assert!(src.exists(), "{a} is in the shared sample");
        fs::create_dir_all(site.join("mirror.test")).unwrap();
        fs::copy(src, site.join(format!("mirror.test/{a}.html"))).unwrap();
    }

    let db = tmp.path().join("crawl.db");
    scan_site(&db, &labelset, &site);
    let out = run_ok(&["report", "--store", db.to_str().unwrap(), "--format", "jsonl", "--sources", "10"]);
    let rows: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let flagged: BTreeSet<&str> = rows.iter().map(|r| r["neighborhood"].as_str().unwrap()).collect();
    assert_eq!(
        flagged,
        ["http://farm.test/", "http://farm.test/wiki/", "http://mirror.test/"].into_iter().collect(),
        "rows: {rows:#?}"
    );
    let titles = |n: &str| -> BTreeSet<String> {
        let row = rows.iter().find(|r| r["neighborhood"] == n).unwrap();
        row["sources"].as_array().unwrap().iter().map(|s| s["title"].as_str().unwrap().to_string()).collect()
    };
    let want = |names: &[&str]| -> BTreeSet<String> { names.iter().map(|a| a.replace('_', " ")).collect() };
    assert_eq!(titles("http://farm.test/wiki/"), want(&copied));
    assert_eq!(titles("http://mirror.test/"), want(&mirrored));
    // The mirror copies whole articles. Its badness is below 1 because headings and
    // paragraphs of ≤ 100 chars are chunks of its pages but not in the label set (contains
    // counts every chunk of the page, §3.1 step 5).
    let mirror = rows.iter().find(|r| r["neighborhood"] == "http://mirror.test/").unwrap();
    assert!(mirror["badness"].as_f64().unwrap() > 0.6, "{mirror}");
    assert_eq!(mirror["pages"], 3);
    // Evidence: passages with their source URL, taken from the pages.
    let ev = &rows.iter().find(|r| r["neighborhood"] == "http://farm.test/wiki/").unwrap()["evidence"][0];
    assert!(ev["url"].as_str().unwrap().starts_with("http://farm.test/wiki/"));
    assert!(ev["source_url"].as_str().unwrap().starts_with("https://en.wikipedia.org/wiki/"));
    assert!(ev["passage"].as_str().unwrap().len() > 100);
    // Every row carries the threshold it was judged by.
    assert!(rows
        .iter()
        .all(|r| r["threshold_kind"] == "mean+sd" && r["badness"].as_f64() > r["threshold"].as_f64()));
}
