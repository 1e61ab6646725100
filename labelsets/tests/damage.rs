//! Fault injection (issue 26, item 3: "every damaged `.dls` refused or verdicts unchanged, 0
//! silent changes"). A label set built from the shared Wikipedia articles is damaged in
//! hundreds of ways (bit flips spread over every part of the file, overwritten bytes, zeroed
//! sections, truncations, inserted and appended bytes). Each copy must be refused by
//! `LabelSet::open` (what `info`, reports and review use) or by `LabelSet::open_verified`
//! (what a scan or crawl opens its label set with, `ditto::labelset::load_for_scan`), or else
//! answer every lookup of the original's entries, of absent digests, and every source, exactly
//! as the original does. The table is printed (`--nocapture`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use detector::fingerprint::sha1;
use detector::Normalization;
use labelsets::readers::{self, ENWIKI_URL_PREFIX};
use labelsets::{Error, Kind, LabelSet, LabelSetBuilder, Sha1Digest, SourceId};

fn articles() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/wikipedia/articles")).to_path_buf()
}

/// Everything a scan or a report can ask a label set.
#[derive(PartialEq, Debug)]
struct Answers {
    header: (String, Kind, String, u32, usize, usize),
    present: Vec<Option<SourceId>>,
    present_batched: Vec<Option<SourceId>>,
    absent: Vec<Option<SourceId>>,
    sources: Vec<Option<(String, String)>>,
    /// Passage lookups (issue 36): the original's passages, then absent hashes.
    passages: Vec<Option<SourceId>>,
}

/// The original's passage hashes, then hashes it does not hold.
static PASSAGE_QUERIES: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();

fn answers(set: &LabelSet, present: &[Sha1Digest], absent: &[Sha1Digest], sources: u32) -> Answers {
    use detector::passages::PassageLookup;
    let h = set.header();
    let mut present_batched = Vec::new();
    set.lookup_many(present, &mut present_batched);
    Answers {
        header: (
            h.name.clone(),
            h.kind,
            set.normalization().to_string(),
            h.min_chars,
            set.len(),
            set.source_count(),
        ),
        present: present.iter().map(|d| set.lookup(d)).collect(),
        present_batched,
        absent: absent.iter().map(|d| set.lookup(d)).collect(),
        sources: (0..sources + 2).map(|i| set.source(i).map(|s| (s.title.into(), s.url.into()))).collect(),
        passages: PASSAGE_QUERIES
            .get()
            .map_or(Vec::new(), |q| q.iter().map(|&h| set.lookup_passage(h)).collect()),
    }
}

/// Deterministic spread of positions and bits.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[derive(Default)]
struct Tally {
    refused_open: usize,
    refused_scan: usize,
    identical: usize,
    silent: Vec<String>,
}

#[test]
fn every_damaged_copy_is_refused_or_answers_as_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wikipedia.dls");
    let mut b = LabelSetBuilder::new("wikipedia", Kind::Chunks, Normalization::default(), 100, "articles");
    readers::read_directory(&articles(), Some(ENWIKI_URL_PREFIX), &mut b).unwrap();
    b.write(&path).unwrap();
    let good = std::fs::read(&path).unwrap();
    let set = LabelSet::open_verified(&path).unwrap();
    set.verify().unwrap();
    let present: Vec<Sha1Digest> = set.iter().map(|(d, _)| d).collect();
    assert!(present.len() > 7000, "{}", present.len());
    let absent: Vec<Sha1Digest> = (0..5000u32).map(|i| sha1(format!("absent {i}").as_bytes())).collect();
    let sources = set.source_count() as u32;
    let mut passage_queries: Vec<u64> =
        set.passages().expect("a passage table").iter().map(|(k, _)| k << 24).collect(); // as anchor hashes
    assert!(passage_queries.len() > 10_000, "{}", passage_queries.len());
    passage_queries.extend((0..5000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) << 3));
    PASSAGE_QUERIES.set(passage_queries).unwrap();
    let want = answers(&set, &present, &absent, sources);
    assert!(want.passages.iter().filter(|p| p.is_some()).count() > 10_000);
    let h = set.header().clone();
    drop(set);

    // The file's parts, in order: name, start, end.
    let hend = 16 + u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize;
    let s = &h.sections;
    let sec = |x: labelsets::Section| (x.offset as usize, (x.offset + x.len) as usize);
    let mut parts: Vec<(&str, usize, usize)> = vec![
        ("prefix", 0, 16),
        ("header JSON", 16, hend),
        ("header checksum", hend, hend + 8),
        ("padding after header", hend + 8, s.filter.offset as usize),
    ];
    for (name, x) in [
        ("filter", s.filter),
        ("index", s.index),
        ("entries", s.entries),
        ("source offsets", s.source_offsets),
        ("source blob", s.source_blob),
    ] {
        let (a, b) = sec(x);
        parts.push((name, a, b));
    }
    let ph = h.passages.as_ref().expect("passages in the header");
    for (name, x) in [("passage filter", ph.filter), ("passage index", ph.index), ("passage table", ph.table)]
    {
        let (a, b) = sec(x);
        parts.push((name, a, b));
    }
    assert_eq!(parts.last().unwrap().2, good.len());

    let mut rng = Rng(26);
    let mut copies: Vec<(String, String, Vec<u8>)> = Vec::new(); // (kind, part, bytes)
    for &(name, a, b) in &parts {
        if b <= a {
            continue;
        }
        // Single bit flips, spread evenly over the part (first and last byte included).
        let n = if b - a < 64 { 8 } else { 40 };
        for i in 0..n {
            let at = a + (b - a - 1) * i / (n - 1).max(1);
            let mut c = good.clone();
            c[at] ^= 1 << rng.below(8);
            copies.push(("bit flip".into(), name.into(), c));
        }
        // 8 random bytes overwritten at random places.
        for _ in 0..8 {
            let at = a + rng.below(b - a);
            let mut c = good.clone();
            for x in c.iter_mut().skip(at).take(8.min(b - at)) {
                *x = rng.next() as u8;
            }
            copies.push(("8 bytes overwritten".into(), name.into(), c));
        }
        // The whole part zeroed, and its first 64 bytes.
        let mut c = good.clone();
        c[a..b].fill(0);
        copies.push(("zeroed".into(), name.into(), c));
        let mut c = good.clone();
        c[a..b.min(a + 64)].fill(0);
        copies.push(("first 64 bytes zeroed".into(), name.into(), c));
        // Truncated at its start, middle and one byte before its end.
        for cut in [a, a + (b - a) / 2, b - 1] {
            copies.push(("truncated".into(), name.into(), good[..cut].to_vec()));
        }
        // 64 zero bytes inserted in the middle (everything after shifts by one cache line).
        let mut c = good[..a + (b - a) / 2].to_vec();
        c.extend_from_slice(&[0u8; 64]);
        c.extend_from_slice(&good[a + (b - a) / 2..]);
        copies.push(("64 bytes inserted".into(), name.into(), c));
    }
    // Bytes appended after the last section.
    let mut c = good.clone();
    c.extend_from_slice(&[0xa5; 100]);
    copies.push(("100 bytes appended".into(), "end".into(), c));
    assert!(copies.len() >= 100, "{}", copies.len());

    let bad = dir.path().join("damaged.dls");
    let bad_s = bad.display().to_string();
    let mut by_part: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_kind: BTreeMap<String, Tally> = BTreeMap::new();
    let mut total = Tally::default();
    for (kind, part, bytes) in &copies {
        std::fs::write(&bad, bytes).unwrap();
        let outcome = match LabelSet::open(&bad) {
            Err(e) => Err(("open", e)),
            Ok(_) => match LabelSet::open_verified(&bad) {
                Err(e) => Err(("scan", e)),
                Ok(set) => Ok(answers(&set, &present, &absent, sources) == want),
            },
        };
        if let Err((_, e)) = &outcome {
            // Every refusal names the file; a checksum refusal names a part of it.
            let msg = e.to_string();
            assert!(msg.contains(&bad_s), "{kind} in {part}: {msg}");
            if let Error::Checksum { section, .. } = e {
                assert!(msg.contains(&format!("{section} checksum mismatch")), "{msg}");
            }
        }
        for t in
            [by_part.entry(part.clone()).or_default(), by_kind.entry(kind.clone()).or_default(), &mut total]
        {
            match &outcome {
                Err(("open", _)) => t.refused_open += 1,
                Err(_) => t.refused_scan += 1,
                Ok(true) => t.identical += 1,
                Ok(false) => t.silent.push(format!("{kind} in {part}")),
            }
        }
    }

    let row = |name: &str, t: &Tally| {
        let n = t.refused_open + t.refused_scan + t.identical + t.silent.len();
        println!(
            "| {name} | {n} | {} | {} | {} | {} |",
            t.refused_open,
            t.refused_scan,
            t.identical,
            t.silent.len()
        );
    };
    println!("| damaged part | copies | refused at open | refused at scan-time check | identical answers | silently changed |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (name, _, _) in &parts {
        row(name, &by_part[*name]);
    }
    row("end", &by_part["end"]);
    println!("| damage | copies | refused at open | refused at scan-time check | identical answers | silently changed |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (name, t) in &by_kind {
        row(name, t);
    }
    row("**all**", &total);
    assert!(total.silent.is_empty(), "silently changed answers: {:?}", total.silent);
    // The entries and the passage table are left to the scan-time check; nothing else is.
    assert!(by_part["entries"].refused_scan > 0);
    assert!(by_part["passage table"].refused_scan > 0);
    assert_eq!(total.refused_scan, by_part["entries"].refused_scan + by_part["passage table"].refused_scan);
}
