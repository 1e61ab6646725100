//! The code under test, one function per [`crate::Target`]: bytes in, a signature of the
//! result out (so the harness can tell new outcomes apart).

use std::hash::{Hash, Hasher};
use std::path::Path;

fn sig(parts: impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

/// Small numbers kept, larger ones bucketed (so lengths do not make every input "new").
fn bucket(n: usize) -> usize {
    if n < 8 {
        n
    } else {
        8 + (usize::BITS - n.leading_zeros()) as usize
    }
}

/// Every record read, converted to a page, and its error or issues noted.
pub fn warc(data: &[u8]) -> u64 {
    use crawler::warc::{convert_record, WarcReader};
    let mut outcomes = Vec::new();
    let mut reader = WarcReader::new(data).with_max_record(4 << 20);
    for item in reader.by_ref().take(10_000) {
        match item {
            Ok(rec) => {
                let c = convert_record(&rec, "fuzz.warc", 4 << 20);
                outcomes.push((
                    0u8,
                    rec.issues.iter().map(|k| k.name()).collect::<Vec<_>>(),
                    c.page.is_some(),
                    c.decode_failed,
                    c.dechunk_failed,
                ));
            }
            Err(e) => {
                // The message must format (it escapes input bytes).
                let msg = e.to_string();
                assert!(!msg.chars().any(|c| c.is_control()), "raw control bytes in {msg:?}");
                outcomes.push((1u8, vec![e.kind.name()], false, false, false));
            }
        }
    }
    sig(outcomes)
}

/// `clean` as HTML with links, and as the body sniffs; the guard's stripping of what the
/// cleaner does not read changes none of its output (`detector/src/clean/guard.rs`). The
/// crawler's directive prescan of the same bytes (`crawler/src/directives.rs`), and its
/// sitemap reader (`crawler/src/sitemap.rs`: markup too, within its bounds).
pub fn html(data: &[u8]) -> u64 {
    let dir = crawler::directives::directives(["ditto: noindex"], Some(data), "ditto");
    assert!(dir.noindex, "the header's noindex was lost");
    let sm = crawler::sitemap::parse_sitemap(data);
    assert!(sm.locs.len() <= crawler::sitemap::MAX_SITEMAP_URLS);
    assert!(sm.locs.iter().all(|l| !l.is_empty() && l.len() <= 4096), "a loc out of bounds");
    use detector::{clean, CleanOptions};
    let d = clean(data, Some("text/html"), Some("http://fuzz.test/a/b.html"), &CleanOptions::default());
    let sniffed = clean(data, None, None, &CleanOptions { extract_links: false });
    assert!(d.blocks.len() <= detector::clean::MAX_BLOCKS && d.links.len() <= detector::clean::MAX_LINKS);
    assert!(
        detector::clean::baseline::stripping_agrees(data, "http://fuzz.test/a/b.html"),
        "the guard's stripping changed the cleaner's output"
    );
    sig((
        bucket(d.blocks.len()),
        bucket(d.links.len()),
        d.block_tags.first().copied(),
        d.encoding,
        d.truncated,
        d.attributes_dropped > 0,
        sniffed.kind.map(|k| k as u8),
        (dir.nofollow, dir.refresh.is_some(), dir.canonical.is_some()),
        (sm.kind as u8, bucket(sm.locs.len()), sm.unreadable),
    ))
}

/// robots.txt parsed and asked about a few URLs.
pub fn robots(data: &[u8]) -> u64 {
    use crawler::robots::{Robots, RobotsState};
    let r = Robots::parse(data);
    let answers: Vec<bool> = ["/", "/a/b?c=d", "/%41%2f", "/*$", "/forbidden/x.html"]
        .iter()
        .map(|p| r.is_allowed("ditto", &format!("http://h.test{p}")))
        .collect();
    let delay = r.crawl_delay("ditto").map(|d| d.is_finite());
    let state = RobotsState::from_status(200, data);
    sig((answers, delay, bucket(r.sitemaps().len()), state.is_allowed("other", "http://h.test/x")))
}

/// A URL canonicalized, its SURT, and resolved as a link against a base.
pub fn url(data: &[u8]) -> u64 {
    use crawler::urls::{canonicalize, canonicalize_with_base, surt_str};
    let s = String::from_utf8_lossy(data);
    let (first, rest) = s.split_once('\n').unwrap_or((&s, "http://base.test/dir/page.html"));
    let c = canonicalize(first);
    if let Ok(u) = &c {
        // Canonical form is a fixed point.
        assert_eq!(
            canonicalize(u).as_deref().ok(),
            Some(u.as_str()),
            "canonicalize not idempotent on {first:?}"
        );
    }
    let j = canonicalize_with_base(rest, first);
    let surt = surt_str(first).is_ok();
    sig((c.is_ok(), j.is_ok(), surt))
}

/// The bytes as a `.dls` file: opened (checksums on open), then, if it opens, lookups,
/// sources and the full structural check.
pub fn labelset(data: &[u8], scratch: &Path) -> u64 {
    let path = scratch.join(format!("fuzz-{}.dls", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return 0;
    }
    let out = match labelsets::LabelSet::open(&path) {
        Err(e) => {
            let msg = e.to_string();
            sig((0u8, msg.split(':').next().map(str::to_string)))
        }
        Ok(set) => {
            let mut found = 0usize;
            for (d, id) in set.iter().take(64) {
                found += set.lookup(&d).is_some() as usize;
                let _ = set.source(id).map(|s| s.title.len());
            }
            let verified = set.verify().is_ok();
            let _ = set.lookup_text("A paragraph that is not in any label set, surely.");
            sig((1u8, bucket(found), verified, bucket(set.source_count())))
        }
    };
    let _ = std::fs::remove_file(&path);
    out
}

/// The store's value decoders: the first byte picks page record (the binary record of
/// `store/src/record.rs`), frontier entry or stored text; the rest is the value.
pub fn store(data: &[u8]) -> u64 {
    let (kind, v) = data.split_first().map(|(k, v)| (*k % 3, v)).unwrap_or((0, &[][..]));
    match kind {
        0 => sig((
            0u8,
            store::record::decode_record("http://fuzz.test/", &[0u8; 20], v)
                .map(|r| bucket(r.sources.len()))
                .ok(),
        )),
        1 => sig((1u8, serde_json::from_slice::<store::FrontierEntry>(v).map(|e| e.hops.min(8)).ok())),
        _ => sig((2u8, store::record::decode_text(v).map(|t| bucket(t.len())).ok())),
    }
}
