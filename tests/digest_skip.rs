//! The fingerprint stage computes a chunk's SHA-1 only when the match stage can use it
//! (`stages::DigestNeed`: long enough for the label set, or possibly a stop chunk). This
//! test runs the per-page stages on real pages twice — every chunk hashed, and hashes
//! skipped as the pipeline does — and checks that every stored record is the same.

use std::path::{Path, PathBuf};

use detector::{CleanOptions, Normalization, Page, PageOrigin, TrapRules};
use ditto::pipeline::metrics::Skips;
use ditto::pipeline::stages::{self, DigestNeed, FilterSettings, Input, Matcher};
use ditto::source::warc::WarcPages;
use labelsets::{Kind, LabelSetBuilder};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data")
}

fn pages() -> Vec<Page> {
    let mut pages: Vec<Page> = WarcPages::open(data().join("warc/big/debian-docs-html.warc.gz"))
        .expect("open WARC")
        .filter_map(Result::ok)
        .take(400)
        .collect();
    let mut articles: Vec<PathBuf> = std::fs::read_dir(data().join("wikipedia/articles"))
        .expect("articles")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    articles.sort();
    for p in articles.iter().take(60) {
        let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
        pages.push(Page {
            url: format!("http://copy.example/wiki/{name}"),
            fetch_time: 0,
            status: 200,
            content_type: Some("text/html".into()),
            body: std::fs::read(p).expect("read article"),
            origin: PageOrigin::File { path: p.to_string_lossy().into_owned() },
        });
    }
    pages
}

fn run(
    pages: &[Page],
    m: &Matcher,
    norm: &Normalization,
    need: &DigestNeed,
) -> (Vec<store::PageRecord>, u64) {
    let settings = FilterSettings { traps: TrapRules::default(), store: None };
    let skips = Skips::default();
    let mut unhashed = 0u64;
    let mut out = Vec::new();
    for p in pages {
        let Some(f) = stages::filter(Input::from(p.clone()), &settings, &skips) else { continue };
        let c = stages::clean(f, &CleanOptions { extract_links: false });
        let fp = stages::fingerprint(c, norm, need);
        unhashed += fp.fp.unhashed as u64;
        out.push(stages::match_stage(fp, m).record);
    }
    (out, unhashed)
}

#[test]
fn skipping_unusable_chunk_digests_changes_no_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dls = dir.path().join("wp.dls");
    let mut b = LabelSetBuilder::new("wp", Kind::Chunks, Normalization::default(), 100, "articles");
    labelsets::readers::read_directory(
        &data().join("wikipedia/articles"),
        Some(labelsets::readers::ENWIKI_URL_PREFIX),
        &mut b,
    )
    .expect("read articles");
    b.write(&dls).expect("write label set");
    let loaded = ditto::labels::load_for_scan(&dls, None, &[], true).expect("load");
    let pages = pages();

    let (all, none_skipped) = run(&pages, &loaded.matcher, &loaded.normalization, &DigestNeed::every_chunk());
    let (skipping, skipped) =
        run(&pages, &loaded.matcher, &loaded.normalization, &DigestNeed::of(&loaded.matcher));
    assert_eq!(none_skipped, 0);
    assert_eq!(all.len(), skipping.len());
    assert!(all.len() > 400, "{}", all.len());
    // The skip happened (most chunks of the Debian pages are short), and the pages have
    // labeled chunks and stop chunks, so both lookups were exercised.
    let chunks: u64 = all.iter().map(|r| r.chunks as u64).sum();
    assert!(skipped * 2 > chunks, "skipped {skipped} of {chunks}");
    assert!(all.iter().map(|r| r.labeled_chunks as u64).sum::<u64>() > 1000);
    assert!(all.iter().map(|r| r.stop_chunks as u64).sum::<u64>() > 100);
    for (a, s) in all.iter().zip(&skipping) {
        assert_eq!(a, s, "{}", a.url);
    }
}
