//! The passage table (issue 36): built from the shared Wikipedia articles, every document's
//! anchors found again; a label set without passages still opens (exact only); a merge of two
//! halves holds the passages of one build over both.

use std::path::{Path, PathBuf};

use detector::passages::{document_anchors, PassageLookup};
use detector::Normalization;
use labelsets::readers::{self, ENWIKI_URL_PREFIX};
use labelsets::{Kind, LabelSet, LabelSetBuilder};

fn articles() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/wikipedia/articles")).to_path_buf()
}

fn build(dir: &Path, name: &str, files: Option<&[PathBuf]>, passages: bool) -> PathBuf {
    let path = dir.join(format!("{name}.dls"));
    let mut b = LabelSetBuilder::new(name, Kind::Chunks, Normalization::default(), 100, "articles");
    if !passages {
        b = b.passages(None);
    }
    match files {
        None => {
            readers::read_directory(&articles(), Some(ENWIKI_URL_PREFIX), &mut b).unwrap();
        }
        Some(fs) => {
            let sub = dir.join(format!("{name}-in"));
            std::fs::create_dir_all(&sub).unwrap();
            for f in fs {
                std::fs::copy(f, sub.join(f.file_name().unwrap())).unwrap();
            }
            readers::read_directory(&sub, Some(ENWIKI_URL_PREFIX), &mut b).unwrap();
        }
    }
    b.write(&path).unwrap();
    path
}

#[test]
fn every_document_finds_its_own_anchors() {
    let dir = tempfile::tempdir().unwrap();
    let set = LabelSet::open_verified(build(dir.path(), "all", None, true)).unwrap();
    set.verify().unwrap();
    let ph = set.passage_header().expect("passages").clone();
    assert!(ph.entries > 50_000, "{ph:?}");
    let params = set.params();
    let mut found = 0usize;
    let mut total = 0usize;
    for id in 0..set.source_count() as u32 {
        let src = set.source(id).unwrap();
        let file = articles().join(format!("{}.html", src.title.replace([' ', '/'], "_")));
        let Ok(body) = std::fs::read(&file) else { continue };
        let doc = detector::clean(&body, Some("text/html"), None, &detector::CleanOptions::default());
        for h in document_anchors(doc.blocks.iter(), params) {
            total += 1;
            // Its own source, or a lower one holding the same passage; never a miss unless it
            // was a stop passage.
            if let Some(s) = set.lookup_passage(h) {
                assert!(s <= id, "anchor of {id} answered {s}");
                found += 1;
            }
        }
    }
    assert!(total > 50_000, "{total}");
    assert!(found as f64 > 0.99 * total as f64, "{found} of {total}");
}

#[test]
fn without_passages_a_label_set_is_exact_only() {
    let dir = tempfile::tempdir().unwrap();
    let with = LabelSet::open_verified(build(dir.path(), "with", None, true)).unwrap();
    let without = LabelSet::open_verified(build(dir.path(), "without", None, false)).unwrap();
    assert!(without.passage_header().is_none() && without.passages().is_none());
    assert_eq!(without.lookup_passage(12345 << 3), None);
    // The exact part is the same, byte for byte in its entries.
    assert_eq!(with.iter().collect::<Vec<_>>(), without.iter().collect::<Vec<_>>());
    assert_eq!(without.checksums().len(), 6);
    let info = labelsets::info::render_text(&without);
    assert!(info.contains("passages:        none"), "{info}");
}

#[test]
fn a_merge_holds_the_passages_of_one_build() {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(articles()).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let (a, b) = files.split_at(files.len() / 2);
    let pa = build(dir.path(), "a", Some(a), true);
    let pb = build(dir.path(), "b", Some(b), true);
    let merged = dir.path().join("m.dls");
    let opts = labelsets::merge::MergeOptions { name: Some("m"), description: None, memory: None };
    labelsets::merge::merge(&[&pa, &pb], &merged, &opts).unwrap();
    let m = LabelSet::open_verified(&merged).unwrap();
    m.verify().unwrap();
    let one = LabelSet::open_verified(build(dir.path(), "one", Some(&files), true)).unwrap();
    let mv: Vec<_> = m.passages().unwrap().iter().collect();
    let ov: Vec<_> = one.passages().unwrap().iter().collect();
    // Stop passages are judged per part: the merge may keep an anchor one build dropped.
    let ov_set: std::collections::HashSet<_> = ov.iter().collect();
    assert!(ov.len() <= mv.len());
    assert!(mv.len() - ov.len() <= ov.len() / 100, "{} vs {}", mv.len(), ov.len());
    assert!(mv.iter().filter(|e| ov_set.contains(e)).count() == ov.len());
}

/// A table of the first passage format (no `word_hash` in its header: words hashed one byte
/// at a time) or of another word hash holds anchors this ditto never computes: it is shown by
/// `info`, but not matched against, and a merge leaves it out.
#[test]
fn a_table_of_another_word_hash_is_not_matched() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(build(dir.path(), "now", None, true)).unwrap();
    let field = format!("\"word_hash\":{},", detector::passages::WORD_HASH_VERSION);
    for replacement in
        [" ".repeat(field.len()), field.replace(&detector::passages::WORD_HASH_VERSION.to_string(), "1")]
    {
        let at =
            good.windows(field.len()).position(|w| w == field.as_bytes()).expect("word_hash in the header");
        let mut b = good.clone();
        b[at..at + field.len()].copy_from_slice(replacement.as_bytes());
        // The header checksum covers bytes 0..16+H.
        let hend = 16 + u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
        let sum = labelsets::Checksum::of(&b[..hend]);
        b[hend..hend + 8].copy_from_slice(&sum.0.to_le_bytes());
        let path = dir.path().join("old.dls");
        std::fs::write(&path, &b).unwrap();
        let old = LabelSet::open_verified(&path).unwrap();
        assert_eq!(old.passage_header().map(|h| h.word_hash), Some(1));
        assert!(old.passages().is_none());
        let now = LabelSet::open_verified(build(dir.path(), "again", None, true)).unwrap();
        let found = |set: &LabelSet| -> usize {
            let mut n = 0;
            for id in 0..set.source_count() as u32 {
                let src = set.source(id).unwrap();
                let file = articles().join(format!("{}.html", src.title.replace([' ', '/'], "_")));
                let Ok(body) = std::fs::read(&file) else { continue };
                let doc = detector::clean(&body, Some("text/html"), None, &detector::CleanOptions::default());
                let anchors = document_anchors(doc.blocks.iter(), now.params());
                n += anchors.into_iter().filter(|&h| set.lookup_passage(h).is_some()).count();
                if id > 20 {
                    break;
                }
            }
            n
        };
        assert!(found(&now) > 100);
        assert_eq!(found(&old), 0);
        let info = labelsets::info::render_text(&old);
        assert!(info.contains("word hash 1, not this ditto's 2"), "{info}");
    }
}
