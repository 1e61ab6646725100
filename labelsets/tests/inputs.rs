//! Inputs told by content, the parallel build equal to the sequential one, spills, tar
//! archives and merges (issue 23), over the real dumps in `shared/data/wikipedia/dumps`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use detector::{Normalization, Sha1Digest, SourceId};
use labelsets::inputs::{read_input, InputOptions, InputReport};
use labelsets::merge::{merge, MergeOptions};
use labelsets::{Counts, Kind, LabelSet, LabelSetBuilder};

fn dumps() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/wikipedia/dumps")).to_path_buf()
}

fn builder() -> LabelSetBuilder {
    LabelSetBuilder::new("w", Kind::Chunks, Normalization::default(), 100, "test")
}

fn opts(threads: usize) -> InputOptions {
    InputOptions { threads, ..InputOptions::default() }
}

/// Everything a label set holds that a build decides: entries, sources, counts.
#[derive(Debug, PartialEq)]
struct Built {
    entries: Vec<(Sha1Digest, SourceId)>,
    sources: Vec<(String, String)>,
    counts: Counts,
}

fn built(path: &Path) -> Built {
    let ls = LabelSet::open_verified(path).unwrap();
    Built {
        entries: ls.iter().collect(),
        sources: (0..ls.source_count() as u32)
            .map(|i| ls.source(i).map(|s| (s.title.to_string(), s.url.to_string())).unwrap())
            .collect(),
        counts: ls.header().counts.clone(),
    }
}

/// Build `inputs` with `threads` (and an optional memory budget) into `out`.
fn build(inputs: &[&Path], threads: usize, memory: Option<u64>, out: &Path) -> (Vec<InputReport>, usize) {
    let mut b = builder();
    if let Some(m) = memory {
        b = b.memory(m, out.parent().unwrap());
    }
    let reports = inputs.iter().map(|p| read_input(&mut b, p, &opts(threads), None).unwrap()).collect();
    let runs = b.spilled_runs();
    b.write(out).unwrap();
    (reports, runs)
}

fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            all_files(&p, out)
        } else {
            out.push(p)
        }
    }
}

/// Must show: every file under `dumps/` builds, whatever its name. Each is copied under a
/// name that says nothing (and under a misleading one) and gives the same articles and
/// chunks as under its own; the table is printed.
#[test]
fn every_dump_file_builds_whatever_its_name() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    all_files(&dumps(), &mut files);
    assert!(files.len() >= 5);
    println!("{:<90} {:<48} {:>9} {:>7} {:>7}", "file", "read as", "articles", "skipped", "chunks");
    let (mut total_chunks, mut no_chunk) = (0, 0);
    for (i, f) in files.iter().enumerate() {
        let out = tmp.path().join(format!("own-{i}.dls"));
        let (own, _) = build(&[f], 1, None, &out);
        let own = &own[0];
        let rel = f.strip_prefix(dumps()).unwrap().display().to_string();
        println!("{rel:<90} {:<48} {:>9} {:>7} {:>7}", own.read_as, own.documents, own.skipped, own.kept);
        assert!(own.documents > 0, "{rel}: {own:?}");
        if own.kept == 0 {
            // A few wtf_wikipedia pages are infobox and table only (the MANIFEST: 43 of 52
            // have at least 2 long paragraphs); the report says so.
            let why = own.why_nothing_kept(100).unwrap();
            println!("    {why}");
            assert!(why.contains("characters or fewer") && rel.starts_with("wtf_wikipedia"), "{rel}: {why}");
            no_chunk += 1;
        }
        total_chunks += own.kept;
        for name in [format!("input-{i}"), format!("input-{i}.warc.gz"), format!("input-{i}.json")] {
            let copy = tmp.path().join(name);
            std::fs::copy(f, &copy).unwrap();
            let out2 = tmp.path().join(format!("renamed-{i}.dls"));
            let (renamed, _) = build(&[&copy], 2, None, &out2);
            let mut renamed = renamed[0].clone();
            renamed.parallel_streams = own.parallel_streams;
            renamed.streams_parsed_on_pool = own.streams_parsed_on_pool;
            assert_eq!(&renamed, own, "{rel} as {}", copy.display());
            let (mut a, mut b) = (built(&out), built(&out2));
            // Single documents take their title from the file name.
            if own.documents == 1 {
                a.sources.clear();
                b.sources.clear();
            }
            assert_eq!(a, b, "{rel}");
            std::fs::remove_file(&copy).unwrap();
        }
    }
    println!(
        "{} files, total chunks kept: {total_chunks}; {no_chunk} single pages without a long paragraph",
        files.len()
    );
    assert!(no_chunk <= 9, "{no_chunk}");
    // The example: the split dump named as Wikimedia names it gives its 5,472 chunks.
    let split = dumps().join("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2");
    let out = tmp.path().join("split.dls");
    let (r, _) = build(&[&split], 1, None, &out);
    assert_eq!((r[0].documents, built(&out).counts.entries), (106, 5472));
    assert_eq!(r[0].read_as, "a MediaWiki XML dump (bzip2)");
}

fn bz2(data: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn decompressed(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    labelsets::readers::open_maybe_compressed(path).unwrap().read_to_end(&mut out).unwrap();
    out
}

/// Split `xml` into Wikimedia-style streams: the head, `per` pages each, the tail.
fn wikimedia_streams(xml: &[u8], per: usize) -> Vec<&[u8]> {
    let text = std::str::from_utf8(xml).unwrap();
    let starts: Vec<usize> = text.match_indices("  <page>").map(|(i, _)| i).collect();
    let end = text.rfind("</mediawiki>").unwrap();
    let mut cuts = vec![0];
    cuts.extend(starts.iter().step_by(per));
    cuts.push(end);
    cuts.push(xml.len());
    cuts.windows(2).map(|w| &xml[w[0]..w[1]]).collect()
}

/// Arbitrary cuts (what `pbzip2` makes): streams end in the middle of pages and of UTF-8.
fn arbitrary_streams(xml: &[u8], size: usize) -> Vec<&[u8]> {
    xml.chunks(size).collect()
}

/// How the pages of a multistream XML dump are read in a parallel build.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pages {
    /// Every stream's pages by the worker that decoded it.
    OnPool,
    /// The first this many streams' by their workers, the rest in order.
    OnPoolUntil(u64),
    /// Not a multistream XML dump.
    NotXmlStreams,
}

/// Must work 3: the parallel build (streams decoded on the pool, documents digested on it)
/// gives the sequential build's entries, sources and counts, for Wikimedia multistream bzip2,
/// pbzip2-style bzip2 cut anywhere, multi-member gzip, and NDJSON. Issue 39: a Wikimedia
/// dump's pages are parsed by the workers that decode them; a stream cut inside a page (in
/// the first stream, or after whole-page streams) sends the rest to the sequential parse.
#[test]
fn parallel_build_equals_sequential() {
    let tmp = tempfile::tempdir().unwrap();
    let xml =
        decompressed(&dumps().join("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"));
    let ndjson = std::fs::read(dumps().join("enterprise-html-sample.ndjson")).unwrap();
    // Wikimedia's streams, but the fourth cut in two inside a page.
    let mut cut_later: Vec<&[u8]> = wikimedia_streams(&xml, 10);
    let fourth = cut_later.remove(3);
    let at = fourth.len() / 2;
    cut_later.insert(3, &fourth[at..]);
    cut_later.insert(3, &fourth[..at]);
    // The last stream (`</mediawiki>`) alone, and the head with the first pages.
    let mut tail_alone = wikimedia_streams(&xml, 25);
    let head = [tail_alone[0], tail_alone[1]].concat();
    tail_alone.splice(0..2, [&head[..]]);
    // The head stream cut in two: inside the text of `<sitename>` (between pages: both
    // halves parse alone as they do together), and inside a tag (the first half does not).
    let head_cut = |at: usize| -> Vec<u8> {
        let mut streams = wikimedia_streams(&xml, 10);
        let head = streams.remove(0);
        streams.insert(0, &head[at..]);
        streams.insert(0, &head[..at]);
        streams.iter().flat_map(|s| bz2(s)).collect()
    };
    let find = |what: &str| xml.windows(what.len()).position(|w| w == what.as_bytes()).unwrap();
    let cases: Vec<(&str, Vec<u8>, bool, Pages)> = vec![
        (
            "multistream bz2, the head cut inside <sitename>'s text",
            head_cut(find("<sitename>Wiki") + "<sitename>Wiki".len()),
            true,
            Pages::OnPool,
        ),
        (
            "multistream bz2, the head cut inside a tag",
            head_cut(find("<namespace key=\"2\"") + 6),
            true,
            Pages::OnPoolUntil(0),
        ),
        (
            "multistream bz2, 10 pages a stream",
            wikimedia_streams(&xml, 10).iter().flat_map(|s| bz2(s)).collect(),
            true,
            Pages::OnPool,
        ),
        (
            "multistream gzip, 25 pages a stream, the head with the first pages",
            tail_alone.iter().flat_map(|s| gz(s)).collect(),
            true,
            Pages::OnPool,
        ),
        (
            "multistream bz2, the fourth stream cut inside a page",
            cut_later.iter().flat_map(|s| bz2(s)).collect(),
            true,
            Pages::OnPoolUntil(3),
        ),
        (
            "bz2 cut every 50,001 bytes",
            arbitrary_streams(&xml, 50_001).iter().flat_map(|s| bz2(s)).collect(),
            true,
            Pages::OnPoolUntil(0),
        ),
        (
            "gzip members every 30,000 bytes",
            arbitrary_streams(&xml, 30_000).iter().flat_map(|s| gz(s)).collect(),
            true,
            Pages::OnPoolUntil(0),
        ),
        ("single-stream bz2", bz2(&xml), false, Pages::NotXmlStreams),
        (
            "NDJSON, gzip members of 3 lines",
            ndjson
                .split_inclusive(|&c| c == b'\n')
                .collect::<Vec<_>>()
                .chunks(3)
                .flat_map(|c| gz(&c.concat()))
                .collect(),
            true,
            Pages::NotXmlStreams,
        ),
        ("NDJSON, plain", ndjson.clone(), false, Pages::NotXmlStreams),
    ];
    for (i, (what, bytes, multi, pages)) in cases.iter().enumerate() {
        let input = tmp.path().join(format!("case-{i}"));
        std::fs::write(&input, bytes).unwrap();
        let seq_out = tmp.path().join(format!("seq-{i}.dls"));
        let (seq, _) = build(&[&input], 1, None, &seq_out);
        assert!(seq[0].kept > 100, "{what}: {:?}", seq[0]);
        for threads in [2, 4] {
            let par_out = tmp.path().join(format!("par-{i}-{threads}.dls"));
            let (par, _) = build(&[&input], threads, None, &par_out);
            println!(
                "{what}, {threads} threads: {} streams decoded on the pool, {:?}",
                par[0].parallel_streams, par[0]
            );
            assert_eq!(par[0].parallel_streams > 1, *multi, "{what}");
            let parsed = par[0].streams_parsed_on_pool;
            match *pages {
                Pages::OnPool => assert_eq!(parsed, par[0].parallel_streams, "{what}"),
                Pages::OnPoolUntil(n) => assert_eq!(parsed, n, "{what}"),
                Pages::NotXmlStreams => assert_eq!(parsed, 0, "{what}"),
            }
            assert_eq!(built(&seq_out), built(&par_out), "{what}, {threads} threads");
            assert_eq!(
                (par[0].documents, par[0].skipped, par[0].kept),
                (seq[0].documents, seq[0].skipped, seq[0].kept),
                "{what}"
            );
        }
    }
    // Same file bytes, but for the creation time in the header.
    let input = tmp.path().join("case-0");
    let (a, b) = (tmp.path().join("a.dls"), tmp.path().join("b.dls"));
    build(&[&input], 1, None, &a);
    build(&[&input], 4, None, &b);
    let strip = |p: &Path| {
        let s = std::fs::read(p).unwrap();
        let text = String::from_utf8_lossy(&s).into_owned();
        let at = text.find("\"created\":").unwrap();
        let end = at + text[at..].find(',').unwrap();
        (s[..at].to_vec(), s[end..].to_vec(), s.len())
    };
    let (sa, sb) = (strip(&a), strip(&b));
    assert_eq!(sa.0, sb.0);
    assert_eq!(sa.2, sb.2);
    // After the timestamp only the header checksum (8 bytes after the JSON) may differ.
    let diff = sa.1.iter().zip(&sb.1).filter(|(x, y)| x != y).count();
    assert!(diff <= 8, "{diff} bytes differ past the timestamp");
}

/// A label set file's bytes but for its creation time (and so the header's checksum): the
/// header JSON with `created` set to 0, and every byte after the header's checksum.
fn bytes_but_created(path: &Path) -> (serde_json::Value, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let h = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[16..16 + h]).unwrap();
    assert!(header["created"].as_u64().unwrap() > 0);
    header["created"] = 0.into();
    (header, bytes[16 + h + 8..].to_vec())
}

/// A folder of pages: host folders (one a symbolic link to another folder), a file that is
/// not a page, and the shared Wikipedia articles.
fn pages_folder(root: &Path) -> PathBuf {
    let articles = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/wikipedia/articles"));
    let dir = root.join("pages");
    let mut names: Vec<PathBuf> = std::fs::read_dir(articles).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for (i, p) in names.iter().enumerate() {
        let host = dir.join(format!("h{}.test", i % 3)).join("wiki");
        std::fs::create_dir_all(&host).unwrap();
        std::fs::copy(p, host.join(p.file_name().unwrap())).unwrap();
    }
    std::os::unix::fs::symlink(articles, dir.join("linked.test")).unwrap();
    std::fs::write(dir.join("h0.test/notes.md"), "not a page").unwrap();
    dir
}

/// Issue 39: with the folder's files read by the pool's workers and a multistream dump's
/// pages parsed by the workers that decode them, the file written at `--threads 3` is the
/// one written at 1, byte for byte but for its creation time.
#[test]
fn label_set_files_are_the_same_at_1_and_3_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let xml =
        decompressed(&dumps().join("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"));
    let dump = tmp.path().join("multistream.xml.bz2");
    std::fs::write(&dump, wikimedia_streams(&xml, 10).iter().flat_map(|s| bz2(s)).collect::<Vec<u8>>())
        .unwrap();
    let folder = pages_folder(tmp.path());
    for (what, input) in [("folder", &folder), ("multistream dump", &dump)] {
        let (one, three) = (tmp.path().join("one.dls"), tmp.path().join("three.dls"));
        let (r1, _) = build(&[input], 1, None, &one);
        let (r3, _) = build(&[input], 3, None, &three);
        println!("{what}: {:?}", r3[0]);
        assert!(r1[0].documents > 100 && r1[0].kept > 1000, "{what}: {:?}", r1[0]);
        assert_eq!(bytes_but_created(&one), bytes_but_created(&three), "{what}");
        assert_eq!(std::fs::metadata(&one).unwrap().len(), std::fs::metadata(&three).unwrap().len());
    }
    // Both at once, the folder first: one label set, sources in reading order.
    let (one, three) = (tmp.path().join("one.dls"), tmp.path().join("three.dls"));
    build(&[&folder, &dump], 1, None, &one);
    build(&[&folder, &dump], 3, None, &three);
    assert_eq!(bytes_but_created(&one), bytes_but_created(&three), "folder and dump");
}

/// A page of a folder that cannot be read is an error naming it, at any thread count (its
/// worker reads it), and the pages before it do not hide it.
#[test]
fn unreadable_folder_page_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = pages_folder(tmp.path());
    let missing = folder.join("h1.test/wiki/Zz_missing.html");
    std::os::unix::fs::symlink(tmp.path().join("nowhere.html"), &missing).unwrap();
    for threads in [1, 3] {
        let e = read_input(&mut builder(), &folder, &opts(threads), None).unwrap_err().to_string();
        assert!(e.contains("Zz_missing.html"), "{threads} threads: {e}");
    }
}

/// A damaged stream in a multistream file is an error naming it, not a panic or a silent
/// skip; bytes after the last stream that start no stream are an error too.
#[test]
fn damaged_multistream_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let xml =
        decompressed(&dumps().join("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"));
    let streams: Vec<Vec<u8>> = wikimedia_streams(&xml, 10).iter().map(|s| bz2(s)).collect();
    let mut damaged = streams.concat();
    let at = streams[0].len() + streams[1].len() + streams[2].len() / 2;
    damaged[at] ^= 0x55;
    let input = tmp.path().join("damaged");
    std::fs::write(&input, &damaged).unwrap();
    for threads in [1, 2] {
        let mut b = builder();
        let e = read_input(&mut b, &input, &opts(threads), None).unwrap_err().to_string();
        assert!(e.contains("damaged"), "{threads} threads: {e}");
    }
    let mut trailing = streams.concat();
    trailing.extend_from_slice(b"garbage after the streams");
    std::fs::write(&input, &trailing).unwrap();
    let mut b = builder();
    let e = read_input(&mut b, &input, &opts(2), None).unwrap_err().to_string();
    assert!(e.contains("does not start one"), "{e}");
}

/// Must work 4: a memory budget far below the chunk table spills sorted runs and merges them
/// into the same entries.
#[test]
fn spilled_build_equals_in_memory_build() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = [
        dumps().join("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"),
        dumps().join("wikibrain/en_test.xml"),
        // Repeats: every chunk of the first input again, from later sources.
        dumps().join("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"),
    ];
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let whole = tmp.path().join("whole.dls");
    build(&inputs, 1, None, &whole);
    for (threads, memory) in [(1, 256 * 24), (2, 1000 * 24), (3, 4096 * 24)] {
        let out = tmp.path().join(format!("spilled-{threads}.dls"));
        let (_, runs) = build(&inputs, threads, Some(memory), &out);
        assert!(runs >= 2, "{runs} runs");
        assert_eq!(built(&whole), built(&out), "{memory} bytes, {threads} threads");
    }
    let c = built(&whole).counts;
    assert!(c.duplicate_chunks >= 5472, "{c:?}");
    // The spill directory is gone with the builder.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ditto-labelset-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A ustar header (as `tar` writes), for archives made here.
fn tar_header(name: &str, size: usize) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..107].copy_from_slice(b"0000644");
    h[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&c| c as u32).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    h
}

fn tar(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, body) in members {
        out.extend_from_slice(&tar_header(name, body.len()));
        out.extend_from_slice(body);
        out.resize(out.len().next_multiple_of(512), 0);
    }
    out.extend_from_slice(&[0u8; 1024]);
    out
}

/// Must work 2: an Enterprise `.json.tar.gz` (and `.tar`) is streamed member by member and
/// gives what its NDJSON gives, read as one file.
#[test]
fn enterprise_tar_gz_streams_members() {
    let tmp = tempfile::tempdir().unwrap();
    let ndjson_path = dumps().join("enterprise-html-sample.ndjson");
    let ndjson = std::fs::read(&ndjson_path).unwrap();
    let lines: Vec<&[u8]> = ndjson.split_inclusive(|&c| c == b'\n').collect();
    let (a, b) = lines.split_at(lines.len() / 2);
    let (a, b) = (a.concat(), b.concat());
    let a_gz = gz(&a);
    let archive = tar(&[
        ("enwiki_namespace_0_0.ndjson", &a),
        ("notes/readme", b"\x00\x01binary"),
        ("enwiki_namespace_0_1.ndjson.gz", &a_gz[..0]),
        ("enwiki_namespace_0_1.ndjson", &b),
    ]);
    let plain_out = tmp.path().join("plain.dls");
    let (plain, _) = build(&[&ndjson_path], 1, None, &plain_out);
    for (i, bytes) in [archive.clone(), gz(&archive), bz2(&archive)].iter().enumerate() {
        let input = tmp.path().join(format!("enwiki_namespace_0-{i}.json.tar.gz"));
        std::fs::write(&input, bytes).unwrap();
        for threads in [1, 2] {
            let out = tmp.path().join(format!("tar-{i}-{threads}.dls"));
            let (r, _) = build(&[&input], threads, None, &out);
            assert!(r[0].read_as.starts_with("a tar archive"), "{}", r[0].read_as);
            assert_eq!(r[0].documents, plain[0].documents);
            // The binary member and the empty one are skipped and counted.
            assert_eq!(r[0].skipped, plain[0].skipped + 2);
            assert_eq!(built(&out), built(&plain_out));
        }
    }
}

/// Must work 1: an input that yields no chunk says what it was read as and why.
#[test]
fn no_chunk_inputs_say_why() {
    let tmp = tempfile::tempdir().unwrap();
    let redirects = "<mediawiki><page><title>A</title><ns>0</ns><revision><text>#REDIRECT [[B]]</text>\
                     </revision></page><page><title>Talk:A</title><ns>1</ns><revision><text>x</text>\
                     </revision></page></mediawiki>";
    let short = "<!DOCTYPE html><p>A short paragraph.</p>";
    let json = "{\"id\": 1}\n{\"id\": 2}\n";
    let cases: [(&str, &[u8], &str); 3] = [
        ("redirects.ndjson", redirects.as_bytes(), "read as a MediaWiki XML dump: no documents (2 records skipped: pages outside namespace 0, and redirects)"),
        ("short.xml", short.as_bytes(), "read as one HTML document: 1 documents, all 1 of their text blocks have 100 characters or fewer"),
        ("other.xml.bz2", json.as_bytes(), "read as JSON lines without Wikimedia Enterprise fields (name, article_body): no documents (2 records skipped"),
    ];
    for (name, body, want) in cases {
        let p = tmp.path().join(name);
        std::fs::write(&p, body).unwrap();
        let mut b = builder();
        let r = read_input(&mut b, &p, &opts(2), None).unwrap();
        let why = r.why_nothing_kept(100).unwrap();
        assert!(why.starts_with(want), "{name}: {why}");
    }
    let p = tmp.path().join("blob.xml");
    std::fs::write(&p, [0u8, 1, 2, 3, 255, 0]).unwrap();
    let e = read_input(&mut builder(), &p, &opts(1), None).unwrap_err().to_string();
    assert!(e.contains("read as binary data of no known kind"), "{e}");
}

/// Must work 6: label sets built apart and merged hold what one build over all their inputs
/// holds.
#[test]
fn merge_equals_one_build() {
    let tmp = tempfile::tempdir().unwrap();
    let parts = [
        dumps().join("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"),
        dumps().join("wikibrain/en_test.xml"),
        dumps().join("enterprise-html-sample.ndjson"),
        // The first again: every chunk a repeat, kept with the first part's sources.
        dumps().join("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"),
    ];
    let mut part_files = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let out = tmp.path().join(format!("part-{i}.dls"));
        build(&[p], 1, None, &out);
        part_files.push(out);
    }
    let all: Vec<&Path> = parts.iter().map(PathBuf::as_path).collect();
    let one = tmp.path().join("one.dls");
    build(&all, 2, None, &one);
    let merged = tmp.path().join("merged.dls");
    let refs: Vec<&Path> = part_files.iter().map(PathBuf::as_path).collect();
    let spill_dir = tmp.path().join("spill");
    std::fs::create_dir(&spill_dir).unwrap();
    let mut files = Vec::new();
    for memory in [None, Some((500 * 24, spill_dir.as_path()))] {
        merge(&refs, &merged, &MergeOptions { name: None, description: None, memory }).unwrap();
        assert_eq!(built(&one), built(&merged), "memory {memory:?}");
        files.push(bytes_but_created(&merged));
    }
    // Issue 36: the merged passage tables too, spilled or not, give the same file.
    assert!(files[0].0["passages"]["entries"].as_u64().unwrap() > 10_000);
    assert_eq!(files[0], files[1]);
    // Unlike label sets are refused.
    let other = tmp.path().join("other.dls");
    let mut b = LabelSetBuilder::new("x", Kind::Chunks, Normalization::default(), 50, "t");
    read_input(&mut b, &parts[1], &opts(1), None).unwrap();
    b.write(&other).unwrap();
    let e = merge(
        &[&part_files[0], &other],
        &merged,
        &MergeOptions { name: None, description: None, memory: None },
    );
    assert!(e.unwrap_err().to_string().contains("min_chars"));
}

/// Issue 36: with `--memory` the passage pairs spill too. A budget far below them (a few
/// hundred pairs a run) writes the file the unbounded build writes, byte for byte but for its
/// creation time, at 1 and 3 threads; stop passages are judged across runs (a low
/// `max_documents` and a repeated input make many); the spill directories are removed.
#[test]
fn passages_spilled_build_is_the_unbounded_build() {
    let tmp = tempfile::tempdir().unwrap();
    let first = dumps().join("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2");
    let inputs = [first.clone(), dumps().join("wikibrain/en_test.xml"), first];
    let spill_dir = tmp.path().join("spill");
    std::fs::create_dir(&spill_dir).unwrap();
    let run = |threads: usize, memory: Option<u64>, out: &Path| {
        let mut b = builder().passage_max_documents(2);
        if let Some(m) = memory {
            b = b.memory(m, &spill_dir);
        }
        for p in &inputs {
            read_input(&mut b, p, &opts(threads), None).unwrap();
        }
        // Counted before `write`, which merges the runs into one.
        let runs = b.spilled_passage_runs();
        let h = b.write(out).unwrap();
        drop(b);
        (h, runs)
    };
    let whole = tmp.path().join("whole.dls");
    let (h, runs) = run(1, None, &whole);
    assert_eq!(runs, 0);
    let ph = h.passages.unwrap();
    println!("{ph:?}");
    assert!(ph.entries > 10_000 && ph.stop_passages > 100, "{ph:?}");
    for (threads, memory) in [(1, 2 * 512 * 16), (3, 2 * 4096 * 16)] {
        let out = tmp.path().join(format!("spilled-{threads}.dls"));
        let (_, runs) = run(threads, Some(memory), &out);
        assert!(runs >= 5, "{runs} passage runs");
        assert_eq!(bytes_but_created(&whole), bytes_but_created(&out), "{memory} bytes, {threads} threads");
        LabelSet::open_verified(&out).unwrap();
        let left: Vec<_> = std::fs::read_dir(&spill_dir).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
