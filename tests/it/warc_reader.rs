//! The WARC reader against `shared/data/warc` (see its MANIFEST.md): record counts, HTML
//! responses and decoded HTML payload bytes for valid files; the "robust reader should"
//! behaviour for broken ones; no panics anywhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crawler::warc::{record_to_page, WarcErrorKind, WarcPages, WarcReader, WarcRecord};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/warc");

#[derive(Debug, Default)]
struct Summary {
    types: BTreeMap<String, u64>,
    html: u64,
    html_bytes: u64,
    errors: Vec<(WarcErrorKind, u64)>,
    records: Vec<WarcRecord>,
}

fn read(rel: &str) -> Summary {
    let path = Path::new(DATA).join(rel);
    let reader = WarcReader::open(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut s = Summary::default();
    for item in reader {
        match item {
            Ok(rec) => {
                *s.types.entry(rec.warc_type.clone()).or_insert(0) += 1;
                if let Some(p) = record_to_page(&rec, rel) {
                    let html = rec.warc_type == "response"
                        && p.content_type.as_deref().is_some_and(|c| c.starts_with("text/html"));
                    if html {
                        s.html += 1;
                        s.html_bytes += p.body.len() as u64;
                    }
                }
                let mut rec = rec;
                rec.block = Vec::new(); // keep memory low; tests look at metadata only
                s.records.push(rec);
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                s.errors.push((e.kind, e.offset));
            }
        }
    }
    s
}

fn types(spec: &[(&str, u64)]) -> BTreeMap<String, u64> {
    spec.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("data dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            all_files(&p, out);
        } else if !p.to_string_lossy().ends_with(".md") && !p.to_string_lossy().ends_with(".json") {
            out.push(p);
        }
    }
}

#[test]
fn every_file_reads_without_panic() {
    let mut files = Vec::new();
    all_files(Path::new(DATA), &mut files);
    assert!(files.len() >= 43, "found {} files", files.len());
    for f in files {
        let mut pages = WarcPages::open(&f).expect("open");
        let size = pages.file_size();
        for _ in pages.by_ref() {}
        assert!(pages.input_offset() <= size, "{}", f.display());
    }
}

/// (file, records by type, HTML responses, HTML payload bytes) from MANIFEST.md.
type Expected = (&'static str, &'static [(&'static str, u64)], u64, u64);
const VALID: &[Expected] = &[
    (
        "big/debian-docs-html.warc.gz",
        &[("warcinfo", 1), ("request", 1388), ("response", 1388)],
        1388,
        38631542,
    ),
    ("valid/jwarc/cc.warc.gz", &[("response", 1)], 1, 20289),
    ("valid/jwarc/gzip_extra_sl.warc.gz", &[("warcinfo", 1)], 0, 0),
    (
        "valid/pywb/dupes.warc.gz",
        &[("warcinfo", 1), ("request", 12), ("response", 3), ("revisit", 9)],
        1,
        1270,
    ),
    (
        "valid/pywb/example-wget-1-14.warc.gz",
        &[("warcinfo", 1), ("request", 1), ("response", 1), ("resource", 3)],
        1,
        1270,
    ),
    (
        "valid/pywb/example-wpull.warc.gz",
        &[("warcinfo", 1), ("request", 1), ("response", 1), ("resource", 1)],
        1,
        1270,
    ),
    (
        "valid/pywb/iana.warc.gz",
        &[("warcinfo", 1), ("request", 171), ("response", 48), ("revisit", 123)],
        20,
        1010462,
    ),
    ("valid/pywb/missing-status-text.warc", &[("response", 1)], 0, 0),
    ("valid/resiliparse/block-sized-records.warc", &[("unknown", 3)], 0, 0),
    ("valid/resiliparse/block-sized-records.warc.gz", &[("unknown", 3)], 0, 0),
    ("valid/resiliparse/clueweb-quirk.warc.gz", &[("warcinfo", 1), ("response", 29)], 29, 911605),
    (
        "valid/resiliparse/warcfile.warc",
        &[("warcinfo", 1), ("request", 17), ("response", 16), ("metadata", 16)],
        16,
        513225,
    ),
    (
        "valid/resiliparse/warcfile.warc.gz",
        &[("warcinfo", 1), ("request", 17), ("response", 16), ("metadata", 16)],
        16,
        513225,
    ),
    ("valid/warcio.js/example-url-agnostic-revisit.warc.gz", &[("warcinfo", 1), ("revisit", 1)], 0, 0),
    ("valid/warcio.js/post-test-more.warc", &[("request", 3), ("response", 3)], 0, 0),
    ("valid/warcio.js/redirect.warc", &[("request", 1), ("response", 1)], 1, 245),
    ("valid/warcio/example-digest.warc", &[("request", 4)], 0, 0),
    (
        "valid/warcio/example-iana.org-chunked.warc",
        &[("warcinfo", 1), ("request", 1), ("response", 1)],
        1,
        7223,
    ),
    ("valid/warcio/example-resource.warc.gz", &[("warcinfo", 2), ("resource", 1)], 0, 0),
    ("valid/warcio/example-space-in-target-uri.warc.gz", &[("warcinfo", 1), ("resource", 1)], 0, 0),
    (
        "valid/warcio/example-wget-bad-target-uri.warc.gz",
        &[("warcinfo", 1), ("request", 1), ("response", 1), ("resource", 2), ("metadata", 1)],
        1,
        1270,
    ),
    (
        "valid/warcio/example.warc",
        &[("warcinfo", 2), ("request", 2), ("response", 1), ("revisit", 1)],
        1,
        1270,
    ),
    (
        "valid/warcio/example.warc.gz",
        &[("warcinfo", 2), ("request", 2), ("response", 1), ("revisit", 1)],
        1,
        1270,
    ),
    ("valid/warcio/post-test.warc.gz", &[("request", 3), ("response", 3)], 0, 0),
    (
        "valid/warcio/standard-torture-validate-record.warc",
        &[
            ("warcinfo", 3),
            ("request", 2),
            ("response", 1),
            ("resource", 3),
            ("metadata", 2),
            ("revisit", 3),
            ("conversion", 1),
            ("continuation", 2),
        ],
        0,
        0,
    ),
    (
        "valid/webarchive-commons/IAH-urls-wget.warc",
        &[("warcinfo", 1), ("request", 16), ("response", 16), ("resource", 3)],
        11,
        62136,
    ),
    (
        "valid/webarchive-commons/IAH-urls-wget.warc.gz",
        &[("warcinfo", 1), ("request", 16), ("response", 16), ("resource", 3)],
        11,
        62136,
    ),
    ("valid/webarchive-commons/mutliple-headers.warc", &[("response", 1)], 1, 108),
];

#[test]
fn valid_files_match_manifest() {
    for &(file, spec, html, html_bytes) in VALID {
        let s = read(file);
        assert_eq!(s.types, types(spec), "{file}: record types");
        assert_eq!((s.html, s.html_bytes), (html, html_bytes), "{file}: HTML responses / bytes");
        assert!(s.errors.is_empty(), "{file}: errors {:?}", s.errors);
        for r in &s.records {
            assert!(
                !r.issues.contains(&WarcErrorKind::LengthMismatch),
                "{file}: record at {} flagged {:?}",
                r.offset,
                r.issues
            );
        }
    }
}

#[test]
fn valid_quirks() {
    // `<...>` around the URI (wget 1.x) and a space inside it.
    let s = read("valid/warcio/example-wget-bad-target-uri.warc.gz");
    assert!(s.records.iter().filter_map(|r| r.target_uri.as_deref()).all(|u| !u.contains('<')));
    let s = read("valid/warcio/example-space-in-target-uri.warc.gz");
    let res = s.records.iter().find(|r| r.warc_type == "resource").expect("resource");
    assert!(res.target_uri.as_deref().expect("uri").contains(' '));
    // Invalid WARC-Date → 0, flagged; other dates parsed.
    let s = read("valid/resiliparse/clueweb-quirk.warc.gz");
    assert!(s.records.iter().all(|r| r.date == 0 && r.issues.contains(&WarcErrorKind::BadDate)));
    let s = read("valid/warcio/example.warc.gz");
    assert!(s.records.iter().all(|r| r.date > 1_000_000_000));
    // Gzip despite the name: offsets are member offsets, strictly increasing.
    let s = read("valid/warcio.js/post-test-more.warc");
    assert!(s.records.windows(2).all(|w| w[0].offset < w[1].offset));
    // Missing reason phrase.
    let path = Path::new(DATA).join("valid/pywb/missing-status-text.warc");
    let pages: Vec<_> = WarcPages::open(&path).expect("open").collect();
    assert_eq!(pages.len(), 1);
    assert_eq!(pages[0].as_ref().expect("page").status, 302);
}

#[test]
fn big_truncated() {
    let s = read("big/debian-docs-html.truncated.warc.gz");
    assert_eq!(s.types, types(&[("warcinfo", 1), ("request", 761), ("response", 760)]));
    assert_eq!(s.errors, [(WarcErrorKind::TruncatedGzip, 3603464)]);
}

#[test]
fn big_corrupt() {
    let s = read("big/debian-docs-html.corrupt.warc.gz");
    assert_eq!(s.types, types(&[("warcinfo", 1), ("request", 1388), ("response", 1387)]));
    assert_eq!(s.errors, [(WarcErrorKind::CorruptGzip, 5404973)]);
    assert!(s.records.iter().any(|r| r.offset == 5411400));
    assert_eq!(s.records.iter().filter(|r| r.offset > 5404973).count(), 396);
}

#[test]
fn garbage_between_records() {
    for (file, at) in [
        ("broken/derived/derived-garbage-between-records.warc.gz", 5852),
        ("broken/derived/derived-garbage-between-records.warc", 24255),
    ] {
        let s = read(file);
        assert_eq!(s.types, types(&[("warcinfo", 1), ("request", 3), ("response", 3)]), "{file}");
        assert_eq!(s.errors, [(WarcErrorKind::Garbage, at)], "{file}");
        assert!(s.records.iter().all(|r| r.issues.is_empty()), "{file}");
    }
    let s = read("broken/derived/derived-garbage-between-records.warc.gz");
    assert!(s.records.iter().any(|r| r.offset == 5903));
    let s = read("broken/derived/derived-garbage-between-records.warc");
    assert!(s.records.iter().any(|r| r.offset == 24306));
}

#[test]
fn missing_content_length() {
    let s = read("broken/derived/derived-missing-content-length.warc");
    assert_eq!(s.errors, [(WarcErrorKind::MissingContentLength, 24255)]);
    assert_eq!(s.types, types(&[("warcinfo", 1), ("request", 3), ("response", 2)]));
    let offsets: Vec<u64> = s.records.iter().map(|r| r.offset).collect();
    assert_eq!(&offsets[4..], [42663, 43452]);
}

#[test]
fn plain_record_in_gzip() {
    let s = read("broken/derived/derived-plain-record-in-gzip.warc.gz");
    assert!(s.errors.is_empty());
    assert_eq!(s.types, types(&[("warcinfo", 1), ("request", 3), ("response", 3)]));
    let plain = s.records.iter().find(|r| r.offset == 5330).expect("record at 5330");
    assert_eq!(plain.issues, [WarcErrorKind::MixedCompression]);
    assert!(s.records.iter().any(|r| r.offset == 6111));
}

#[test]
fn clipped_member() {
    let s = read("broken/resiliparse/clipped.warc.gz");
    assert!(s.records.is_empty());
    assert_eq!(s.errors, [(WarcErrorKind::TruncatedGzip, 0)]);
}

#[test]
fn bad_lengths() {
    let s = read("broken/warcio/example-trunc.warc");
    assert_eq!(s.types, types(&[("warcinfo", 2), ("request", 1), ("response", 1)]));
    assert!(s.errors.is_empty());
    let flagged: Vec<u64> = s
        .records
        .iter()
        .filter(|r| r.issues.contains(&WarcErrorKind::LengthMismatch))
        .map(|r| r.offset)
        .collect();
    assert_eq!(flagged, [1197]);

    let s = read("broken/warcio.js/example-bad-length.warc");
    assert_eq!(s.types, types(&[("warcinfo", 2), ("request", 2), ("response", 1), ("revisit", 1)]));
    let flagged: Vec<u64> = s
        .records
        .iter()
        .filter(|r| r.issues.contains(&WarcErrorKind::LengthMismatch))
        .map(|r| r.offset)
        .collect();
    assert_eq!(flagged, [1197, 3370]);

    // The record at 2807 runs 10 bytes into the one at 3595, which must still be read.
    let s = read("broken/webarchive-commons/link-extraction-test.warc");
    let offsets: Vec<u64> = s.records.iter().map(|r| r.offset).collect();
    assert_eq!(offsets, [0, 258, 1696, 2807, 3595, 5119, 8486, 10562]);
    let r = &s.records[3];
    assert!(r.issues.contains(&WarcErrorKind::LengthMismatch));
    assert!(s.records[..3].iter().all(|r| !r.issues.contains(&WarcErrorKind::LengthMismatch)));
    assert!(s.errors.is_empty());
}

#[test]
fn one_gzip_stream_and_unaligned_members() {
    let s = read("broken/warcio/example-bad-non-chunked.warc.gz");
    assert_eq!(s.types, types(&[("warcinfo", 2), ("request", 2), ("response", 1), ("revisit", 1)]));
    assert_eq!(s.html, 1);
    assert!(s.records.iter().all(|r| r.issues.contains(&WarcErrorKind::SharedGzipMember)));

    let s = read("broken/warcio/example-wrong-chunks.warc.gz");
    assert_eq!(s.records.len(), 2);
    assert!(s.errors.is_empty());
    assert!(s.records.iter().any(|r| r.issues.contains(&WarcErrorKind::UnalignedGzipMember)));
}

#[test]
fn torture_files() {
    let s = read("broken/warcio/standard-torture-missing.warc");
    assert_eq!(s.records.len(), 1);
    assert!(s.records[0].issues.contains(&WarcErrorKind::MissingField));

    let s = read("broken/warcio/standard-torture-validate-field.warc");
    assert_eq!(s.records.len(), 3);
    assert_eq!(s.errors, [(WarcErrorKind::UnknownVersion, 1465)]);
}

#[test]
fn not_a_warc() {
    let s = read("broken/webarchive-commons/double-single-inflate-error.gz");
    assert!(s.records.is_empty());
    assert_eq!(s.errors.len(), 1);
    let (kind, offset) = s.errors[0];
    assert!(matches!(kind, WarcErrorKind::CorruptGzip | WarcErrorKind::Inflate), "{kind:?}");
    assert_eq!(offset, 0);
}

/// Issue 26: gzip failures said only "deflate decompression error: repeated call with bad
/// state" (zlib-rs overwrites its reason); the message now gives zlib's reason (the
/// MANIFEST's "invalid distance too far back") and how far decoding got.
#[test]
fn inflate_errors_give_zlibs_reason() {
    let path = Path::new(DATA).join("broken/webarchive-commons/double-single-inflate-error.gz");
    let e = WarcReader::open(&path).unwrap().find_map(Result::err).expect("an error");
    assert_eq!(e.kind, WarcErrorKind::Inflate);
    let msg = e.to_string();
    assert!(msg.contains("invalid distance too far back"), "{msg}");
    assert!(!msg.contains("bad state"), "{msg}");
    assert!(msg.contains("269 decompressed"), "{msg}");
}

#[test]
fn pages_from_big_file() {
    let path = Path::new(DATA).join("big/debian-docs-html.warc.gz");
    let mut pages = WarcPages::open(&path).expect("open");
    let first = pages.next().expect("a page").expect("ok");
    assert!(first.url.starts_with("http://") && first.url.contains(".docs.test/"), "{}", first.url);
    assert_eq!(first.status, 200);
    assert!(first.content_type.as_deref().is_some_and(|c| c.contains("charset=")));
    assert!(first.fetch_time > 0);
    assert!(matches!(first.origin, detector::PageOrigin::Warc { offset, .. } if offset > 0));
    let rest = pages.by_ref().filter(|p| p.is_ok()).count();
    assert_eq!(rest + 1, 1388);
    assert_eq!(pages.input_offset(), pages.file_size());
    let st = pages.stats();
    assert_eq!(st.pages, 1388);
    assert_eq!(st.warc.records, 2777);
}
