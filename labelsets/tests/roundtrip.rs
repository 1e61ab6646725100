//! Build → write → open → lookup, min_chars strictness, normalization, corrupt files.

use std::path::{Path, PathBuf};

use detector::fingerprint::{chunk_hash, sha1};
use detector::{ChunkLookup, Normalization, StopList};
use labelsets::{Error, Kind, LabelSet, LabelSetBuilder, StopChunks};

fn para(i: usize) -> String {
    format!(
        "Paragraph number {i} of the test corpus, long enough to pass the minimum chunk length \
         that the paper uses for its Wikipedia label set."
    )
}

fn build_sample(dir: &Path) -> PathBuf {
    let mut b = LabelSetBuilder::new("sample", Kind::Chunks, Normalization::default(), 100, "unit test");
    for s in 0..20 {
        let id = b.add_source(&format!("Article {s}"), &format!("https://en.wikipedia.org/wiki/Article_{s}"));
        for i in 0..10 {
            b.add_text_block(id, &para(s * 10 + i)).unwrap();
        }
        b.add_text_block(id, "short").unwrap();
    }
    let path = dir.join("sample.dls");
    b.write(&path).unwrap();
    path
}

#[test]
fn round_trip_present_absent_and_sources() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_sample(dir.path());
    let set = LabelSet::open(&path).unwrap();
    assert_eq!(set.len(), 200);
    assert_eq!(set.source_count(), 20);
    let h = set.header();
    assert_eq!(h.name, "sample");
    assert_eq!(h.kind, Kind::Chunks);
    assert_eq!(h.min_chars, 100);
    assert_eq!(h.counts.chunks_seen, 220);
    assert_eq!(h.counts.chunks_too_short, 20);
    assert_eq!(h.counts.duplicate_chunks, 0);
    assert_eq!(h.sections.filter.offset % 64, 0);
    assert_eq!(h.sections.entries.offset % 64, 0);
    for n in 0..200 {
        let d = chunk_hash(&Normalization::default().apply(&para(n)));
        let id = set.lookup(&d).expect("present");
        assert_eq!(id as usize, n / 10);
        assert_eq!(ChunkLookup::lookup(&set, &d), Some(id));
        // Raw text goes through the recorded normalization.
        assert_eq!(set.lookup_text(&para(n).to_uppercase()), Some(id));
    }
    for n in 200..2200 {
        assert_eq!(set.lookup_exact(&chunk_hash(&para(n))), None);
        assert_eq!(set.lookup(&chunk_hash(&para(n))), None);
    }
    let s = set.source(3).unwrap();
    assert_eq!(s.title, "Article 3");
    assert_eq!(s.url, "https://en.wikipedia.org/wiki/Article_3");
    assert!(set.source(20).is_none());
    set.verify().unwrap();
    let text = labelsets::info::render_text(&set);
    assert!(text.contains("entries:         200 distinct"), "{text}");
    let json = labelsets::info::render_json(&set);
    assert_eq!(json["header"]["counts"]["entries"], 200);
    assert_eq!(json["header"]["kind"], "chunks");
}

#[test]
fn min_chars_is_strictly_greater() {
    let mut b = LabelSetBuilder::new("m", Kind::Chunks, Normalization::default(), 100, "");
    let id = b.add_source("t", "u");
    let hundred = "a".repeat(100);
    let hundred_one = "a".repeat(101);
    assert!(!b.add_text_block(id, &hundred).unwrap());
    assert!(b.add_text_block(id, &hundred_one).unwrap());
    // Length is counted after normalization, in chars: collapsed spaces and trimmed edges
    // do not count, and multi-byte characters count once.
    assert!(!b.add_text_block(id, &format!("  {}   {}  ", "b".repeat(50), "b".repeat(49))).unwrap());
    assert!(b.add_text_block(id, &"é".repeat(101)).unwrap());
    assert!(!b.add_text_block(id, &"é".repeat(100)).unwrap());
    assert!(!b.add_text_block(id, "").unwrap());
    let dir = tempfile::tempdir().unwrap();
    let h = b.write(dir.path().join("m.dls")).unwrap();
    assert_eq!(h.counts.entries, 2);
    assert_eq!(h.counts.chunks_too_short, 4);
    let set = LabelSet::open(dir.path().join("m.dls")).unwrap();
    assert!(set.lookup(&chunk_hash(&hundred_one)).is_some());
    assert!(set.lookup(&chunk_hash(&hundred)).is_none());
}

#[test]
fn duplicates_keep_the_first_source() {
    let mut b = LabelSetBuilder::new("d", Kind::Chunks, Normalization::default(), 0, "");
    let a = b.add_source("A", "a");
    let c = b.add_source("B", "b");
    b.add_text_block(a, "Shared paragraph").unwrap();
    b.add_text_block(c, "shared   PARAGRAPH").unwrap();
    b.add_text_block(c, "only b").unwrap();
    b.add_text_block(a, "only b").unwrap(); // a lower source id added later still wins
    assert!(matches!(b.add_text_block(9, "x"), Err(Error::UnknownSource(9))));
    assert!(matches!(b.add_file(a, b"x"), Err(Error::WrongKind { .. })));
    let dir = tempfile::tempdir().unwrap();
    let h = b.write(dir.path().join("d.dls")).unwrap();
    assert_eq!((h.counts.entries, h.counts.duplicate_chunks), (2, 2));
    let set = LabelSet::open(dir.path().join("d.dls")).unwrap();
    assert_eq!(set.lookup_text("shared paragraph"), Some(a));
    assert_eq!(set.lookup_text("only b"), Some(a));
}

#[test]
fn normalization_is_recorded_and_checked() {
    let norm: Normalization = "lower,trim".parse().unwrap();
    let mut b = LabelSetBuilder::new("n", Kind::Chunks, norm, 0, "");
    let id = b.add_source("t", "u");
    b.add_text_block(id, "  Two  Spaces ").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("n.dls");
    b.write(&p).unwrap();
    let set = LabelSet::open(&p).unwrap();
    assert_eq!(set.header().normalization, "lower,trim");
    assert_eq!(set.normalization(), norm);
    // No whitespace collapsing under this normalization.
    assert!(set.lookup(&chunk_hash("two  spaces")).is_some());
    assert!(set.lookup(&chunk_hash("two spaces")).is_none());
    assert!(set.check_normalization(&norm).is_ok());
    assert!(matches!(
        set.check_normalization(&Normalization::default()),
        Err(Error::NormalizationMismatch { .. })
    ));
}

#[test]
fn files_kind_and_empty_set() {
    let mut b = LabelSetBuilder::new("f", Kind::Files, Normalization::default(), 0, "");
    let id = b.add_source("robots", "https://example.com/robots.txt");
    b.add_file(id, b"User-agent: *\nDisallow: /\n").unwrap();
    assert!(matches!(b.add_text_block(id, "x"), Err(Error::WrongKind { .. })));
    let dir = tempfile::tempdir().unwrap();
    b.write(dir.path().join("f.dls")).unwrap();
    let set = LabelSet::open(dir.path().join("f.dls")).unwrap();
    assert_eq!(set.kind(), Kind::Files);
    assert_eq!(set.lookup(&sha1(b"User-agent: *\nDisallow: /\n")), Some(0));

    let mut e = LabelSetBuilder::new("e", Kind::Chunks, Normalization::default(), 100, "");
    e.write(dir.path().join("e.dls")).unwrap();
    let set = LabelSet::open(dir.path().join("e.dls")).unwrap();
    assert!(set.is_empty());
    assert_eq!(set.lookup(&[0u8; 20]), None);
    assert_eq!(set.lookup(&[0xffu8; 20]), None);
    set.verify().unwrap();
    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn larger_set_exercises_the_prefix_index() {
    let mut b = LabelSetBuilder::new("big", Kind::Chunks, Normalization::NONE, 0, "");
    let id = b.add_source("t", "u");
    for i in 0..50_000u32 {
        b.add_digest(id, sha1(&i.to_le_bytes())).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let h = b.write(dir.path().join("b.dls")).unwrap();
    assert_eq!(h.sections.index_bits, 12);
    let set = LabelSet::open(dir.path().join("b.dls")).unwrap();
    set.verify().unwrap();
    assert!((0..50_000u32).all(|i| set.lookup(&sha1(&i.to_le_bytes())) == Some(id)));
    let fp = (50_000..150_000u32).filter(|i| set.may_contain(&sha1(&i.to_le_bytes()))).count();
    assert!(fp < 2_000, "filter false positives {fp} / 100000");
    assert!((50_000..150_000u32).all(|i| set.lookup(&sha1(&i.to_le_bytes())).is_none()));
}

fn exercise(set: &LabelSet) {
    for i in 0..300usize {
        let _ = set.lookup(&chunk_hash(&Normalization::default().apply(&para(i))));
    }
    for id in 0..30 {
        let _ = set.source(id);
    }
    let _ = set.verify();
    let _ = set.iter().count();
    let _ = labelsets::info::render_text(set);
}

#[test]
fn corrupt_truncated_and_wrong_magic_files_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_sample(dir.path());
    let good = std::fs::read(&path).unwrap();
    let bad = dir.path().join("bad.dls");

    // Every truncation point is an error (the source blob is the last section, non-empty).
    for cut in (0..good.len()).step_by(7).chain([good.len() - 1]) {
        std::fs::write(&bad, &good[..cut]).unwrap();
        assert!(LabelSet::open(&bad).is_err(), "truncated at {cut} opened");
    }
    std::fs::write(&bad, b"").unwrap();
    assert!(matches!(LabelSet::open(&bad), Err(Error::Truncated { .. })));

    let mut wrong = good.clone();
    wrong[0] = b'X';
    std::fs::write(&bad, &wrong).unwrap();
    assert!(matches!(LabelSet::open(&bad), Err(Error::BadMagic { .. })));
    let mut v3 = good.clone();
    v3[8] = 3;
    std::fs::write(&bad, &v3).unwrap();
    assert!(matches!(LabelSet::open(&bad), Err(Error::UnsupportedVersion { found: 3, .. })));
    // Version 1 had no checksums: refused with what to do.
    let mut v1 = good.clone();
    v1[8] = 1;
    std::fs::write(&bad, &v1).unwrap();
    let e = LabelSet::open(&bad).unwrap_err();
    assert!(matches!(e, Error::NoChecksums { .. }), "{e}");
    assert!(e.to_string().contains("version 1 has no checksums: rebuild it"), "{e}");
    let mut hlen = good.clone();
    hlen[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&bad, &hlen).unwrap();
    assert!(matches!(LabelSet::open(&bad), Err(Error::Corrupt { .. })));

    // Flip every header byte (prefix, JSON, its checksum): the checksum refuses them all
    // but a version change, which is refused as such.
    let header_end = 16 + u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize + 8;
    for i in 0..header_end {
        for mask in [0xffu8, 0x01, 0x10] {
            let mut b = good.clone();
            b[i] ^= mask;
            std::fs::write(&bad, &b).unwrap();
            assert!(LabelSet::open(&bad).is_err(), "flip {mask:#x} at {i} opened");
        }
    }
    // Digit edits in the JSON with the header checksum recomputed (plausible but wrong
    // numbers, as a buggy writer could make): caught by the structural checks or harmless.
    let json = String::from_utf8_lossy(&good[16..header_end - 8]).into_owned();
    for (i, c) in json.char_indices().filter(|(_, c)| c.is_ascii_digit()) {
        for repl in ['0', '9'] {
            if repl == c {
                continue;
            }
            let mut b = good.clone();
            b[16 + i] = repl as u8;
            std::fs::write(&bad, reseal_header(b)).unwrap();
            if let Ok(set) = LabelSet::open(&bad) {
                exercise(&set);
            }
        }
    }
    // Flip bytes in the sections, checksums recomputed (the structure is damaged, the
    // checksums match): lookups never panic.
    for i in (header_end..good.len()).step_by(5) {
        let mut b = good.clone();
        b[i] ^= 0x5a;
        std::fs::write(&bad, reseal(&b)).unwrap();
        if let Ok(set) = LabelSet::open(&bad) {
            exercise(&set);
        }
    }
    // ... and verify() reports the damage.
    let mut idx = good.clone();
    let h = LabelSet::open(&path).unwrap().header().clone();
    let at = h.sections.index.offset as usize;
    idx[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&bad, &idx).unwrap();
    let e = LabelSet::open(&bad).unwrap_err();
    assert!(matches!(e, Error::Checksum { section: "index", .. }), "{e}");
    std::fs::write(&bad, reseal(&idx)).unwrap();
    let set = LabelSet::open(&bad).unwrap();
    exercise(&set);
    assert!(matches!(set.verify(), Err(Error::Corrupt { .. })));
    let so = h.sections.source_offsets.offset as usize;
    let mut src = good.clone();
    src[so + 8..so + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(&bad, reseal(&src)).unwrap();
    let set = LabelSet::open(&bad).unwrap();
    assert!(set.source(0).is_none());
    assert!(set.verify().is_err());
}

#[test]
fn a_dls_file_serves_as_a_stop_list() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = LabelSetBuilder::new("stops", Kind::Chunks, Normalization::default(), 0, "");
    let id = b.add_source("stop chunks", "");
    b.add_text_block(id, "Powered by Example CMS").unwrap();
    let p = dir.path().join("stops.dls");
    b.write(&p).unwrap();
    let s = StopChunks::load(&p, Normalization::default()).unwrap();
    assert!(s.is_stop(&chunk_hash("powered by example cms")));
    assert!(!s.is_stop(&chunk_hash("home")));
    assert!(StopChunks::load(&p, Normalization::NONE).is_err());
    let txt = dir.path().join("stops.txt");
    std::fs::write(&txt, "# list\nHome\n<empty>\n").unwrap();
    let s = StopChunks::load(&txt, Normalization::default()).unwrap();
    assert_eq!(s.len(), 2);
    assert!(s.is_stop(&chunk_hash("home")));
}

/// `good` with its JSON header rewritten by `edit`, padded with spaces to the same length (JSON
/// allows trailing whitespace), so the sections stay where they are; the header checksum is
/// recomputed, so what is tested is the check after it.
fn rewrite_header(good: &[u8], edit: impl FnOnce(&mut labelsets::Header)) -> Vec<u8> {
    let hlen = u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize;
    let mut h: labelsets::Header = serde_json::from_slice(&good[16..16 + hlen]).unwrap();
    edit(&mut h);
    let mut json = serde_json::to_vec(&h).unwrap();
    assert!(json.len() <= hlen, "edited header is longer than the original");
    json.resize(hlen, b' ');
    let mut out = good.to_vec();
    out[16..16 + hlen].copy_from_slice(&json);
    reseal_header(out)
}

/// Recompute the header checksum (after bytes 0..16+H).
fn reseal_header(mut b: Vec<u8>) -> Vec<u8> {
    let hend = 16 + u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let sum = labelsets::Checksum::of(&b[..hend]);
    b[hend..hend + 8].copy_from_slice(&sum.0.to_le_bytes());
    b
}

/// Recompute every checksum, as if the damage had been written by the writer.
fn reseal(b: &[u8]) -> Vec<u8> {
    let of =
        |s: labelsets::Section| labelsets::Checksum::of(&b[s.offset as usize..(s.offset + s.len) as usize]);
    rewrite_header(b, |h| {
        let s = h.sections.clone();
        let c = &mut h.checksums;
        (c.filter, c.index, c.entries) = (of(s.filter), of(s.index), of(s.entries));
        (c.source_offsets, c.source_blob) = (of(s.source_offsets), of(s.source_blob));
    })
}

#[test]
fn sections_overlapping_the_header_or_each_other_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_sample(dir.path());
    let good = std::fs::read(&path).unwrap();
    let bad = dir.path().join("bad.dls");
    // Unchanged, the rewrite opens (the helper itself is sound).
    std::fs::write(&bad, rewrite_header(&good, |_| {})).unwrap();
    LabelSet::open(&bad).unwrap();
    // Issue 26: an index offset inside the header loaded. Aligned offsets, right lengths.
    for at in [0u64, 64] {
        std::fs::write(&bad, rewrite_header(&good, |h| h.sections.index.offset = at)).unwrap();
        let e = LabelSet::open(&bad).unwrap_err().to_string();
        assert!(e.contains("index section") && e.contains("overlaps the header"), "{e}");
    }
    // One section inside another.
    std::fs::write(&bad, rewrite_header(&good, |h| h.sections.entries.offset = h.sections.filter.offset))
        .unwrap();
    let e = LabelSet::open(&bad).unwrap_err().to_string();
    assert!(e.contains("entries section") && e.contains("overlaps the index"), "{e}");
    std::fs::write(&bad, rewrite_header(&good, |h| h.sections.source_blob.offset = h.sections.index.offset))
        .unwrap();
    assert!(LabelSet::open(&bad).is_err());
}

#[test]
fn checksums_name_the_damaged_section_and_open_verified_covers_the_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_sample(dir.path());
    let good = std::fs::read(&path).unwrap();
    let set = LabelSet::open_verified(&path).unwrap();
    set.verify_checksums().unwrap();
    let checks = set.checksums();
    // The header, the five sections and the passage table's three.
    assert_eq!(checks.len(), 9);
    assert!(checks.iter().all(|c| c.ok()));
    assert_eq!(checks[0].name(), "header");
    let h = set.header().clone();
    assert_eq!(h.checksums.algorithm, "xxh3-64");
    let bad = dir.path().join("bad.dls");
    let p = h.passages.clone().expect("a passage table");
    for (sec, s) in [
        ("filter", h.sections.filter),
        ("index", h.sections.index),
        ("entries", h.sections.entries),
        ("source offsets", h.sections.source_offsets),
        ("source blob", h.sections.source_blob),
        ("passage filter", p.filter),
        ("passage index", p.index),
        ("passage table", p.table),
    ] {
        if s.len == 0 {
            continue; // the sample's passage table may be empty
        }
        let mut b = good.clone();
        b[(s.offset + s.len / 2) as usize] ^= 0x04;
        std::fs::write(&bad, &b).unwrap();
        let e = match LabelSet::open(&bad) {
            // Only the entries and the passage table are left to `open_verified`.
            Ok(set) => {
                assert!(sec == "entries" || sec == "passage table", "{sec}");
                assert!(set.verify_checksums().is_err());
                LabelSet::open_verified(&bad).unwrap_err()
            }
            Err(e) => e,
        };
        assert!(matches!(&e, Error::Checksum { section, .. } if *section == sec), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(&bad.display().to_string()), "{msg}");
        assert!(msg.contains(&format!("{sec} checksum mismatch")), "{msg}");
        assert!(msg.contains(&format!("bytes {}..+{}", s.offset, s.len)), "{msg}");
        if let Error::Checksum { expected, found, .. } = e {
            assert_ne!(expected, found);
            assert!(msg.contains(&expected.to_string()) && msg.contains(&found.to_string()), "{msg}");
        }
    }
    // A damaged header: named as such.
    let mut b = good.clone();
    b[20] ^= 0x01;
    std::fs::write(&bad, &b).unwrap();
    let e = LabelSet::open(&bad).unwrap_err();
    assert!(matches!(e, Error::Checksum { section: "header", .. }), "{e}");
}
