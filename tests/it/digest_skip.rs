//! The fingerprint stage computes a chunk's SHA-1 only when the match stage can use it
//! (`stages::DigestNeed`: long enough for the label set, or possibly a stop chunk). This
//! test runs the per-page stages on real pages twice — every chunk hashed, and hashes
//! skipped as the pipeline does — and checks that every stored record is the same.

use std::path::{Path, PathBuf};

use crawler::warc::WarcPages;
use detector::{CleanOptions, Normalization, Page, PageOrigin, TrapRules};
use ditto::pipeline::metrics::Skips;
use ditto::pipeline::stages::{self, DigestNeed, FilterSettings, Input, Matcher};
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
    let settings = FilterSettings { traps: TrapRules::default(), store: None, skip_stored: false };
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
    let loaded = ditto::labelset::load_for_scan(&dls, None, &[], true).expect("load");
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

/// The fingerprint stage's fast paths (ASCII folding, the common-symbol path, the cached
/// long-word SimHash scan, the streamed text hash) against the definitions written plainly:
/// `Normalization::apply` then SHA-1 per chunk, Khan & Ali's `page_simhash` of the visible
/// text, SHA-1 of the normalized visible text. On real pages, where a fifth of the Debian
/// blocks carry `&nbsp;`, curly quotes or arrows.
#[test]
fn fast_fingerprint_paths_equal_the_definitions_on_real_pages() {
    use detector::fingerprint::scan::fingerprint_for_scan;
    use detector::fingerprint::sha1;
    use detector::shingles::visible_text;
    let norm = Normalization::default();
    let (mut blocks_seen, mut non_ascii_blocks) = (0usize, 0usize);
    for p in pages() {
        let doc =
            detector::clean(&p.body, p.content_type.as_deref(), None, &CleanOptions { extract_links: false });
        let (fp, features) = fingerprint_for_scan([0; 20], &doc.blocks, &norm, |_| true);
        let want: Vec<(u32, [u8; 20])> = doc
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let n = norm.apply(b);
                (!n.is_empty()).then(|| (i as u32, sha1(n.as_bytes())))
            })
            .collect();
        let got: Vec<(u32, [u8; 20])> = fp.chunks.iter().map(|c| (c.block, c.hash)).collect();
        assert_eq!(got, want, "{}", p.url);
        let text = visible_text(&doc.blocks);
        assert_eq!(features.simhash, detector::simhash::page_simhash(&text), "{}", p.url);
        let normalized = norm.apply(&text);
        let text_hash = (!normalized.trim().is_empty()).then(|| sha1(normalized.trim().as_bytes()));
        assert_eq!(features.text_hash, text_hash, "{}", p.url);
        blocks_seen += doc.blocks.len();
        non_ascii_blocks += doc.blocks.iter().filter(|b| !b.is_ascii()).count();
    }
    assert!(
        blocks_seen > 30_000 && non_ascii_blocks > 5_000,
        "{blocks_seen} blocks, {non_ascii_blocks} not ASCII"
    );
}
