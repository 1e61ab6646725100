//! WARC writer: records read back member by member, digests recomputed, rotation by size,
//! and `.open` crash recovery.

use std::fs;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use crawler::warc::{
    complete_members_len, recover_open_file, sha1_base32, FetchRecord, WarcInfo, WarcWriter,
};
use flate2::bufread::GzDecoder;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

/// One parsed WARC record, with the offset of its gzip member.
#[derive(Debug)]
struct Rec {
    offset: u64,
    headers: Vec<(String, String)>,
    block: Vec<u8>,
}

impl Rec {
    fn get(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    fn field(&self, name: &str) -> &str {
        self.get(name).unwrap_or_else(|| panic!("missing {name} in {:?}", self.headers))
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Each gzip member must hold exactly one record: `WARC/1.1`, fields, blank line,
/// Content-Length bytes of block, CRLF CRLF.
fn read_members(path: &Path) -> Vec<Rec> {
    let data = fs::read(path).expect("read warc");
    let mut rest: &[u8] = &data;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let offset = (data.len() - rest.len()) as u64;
        let mut member = Vec::new();
        let mut dec = GzDecoder::new(rest);
        dec.read_to_end(&mut member).expect("complete gzip member");
        rest = dec.into_inner();
        let head_end = find(&member, b"\r\n\r\n").expect("header end") + 4;
        let head = std::str::from_utf8(&member[..head_end]).expect("utf-8 header");
        let mut lines = head.split("\r\n");
        assert_eq!(lines.next(), Some("WARC/1.1"));
        let headers: Vec<(String, String)> = lines
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (n, v) = l.split_once(": ").expect("field line");
                (n.to_string(), v.to_string())
            })
            .collect();
        let rec = Rec { offset, headers, block: Vec::new() };
        let len: usize = rec.field("Content-Length").parse().expect("length");
        assert_eq!(member.len(), head_end + len + 4, "one record per member, length matches");
        assert_eq!(&member[head_end + len..], b"\r\n\r\n");
        out.push(Rec { block: member[head_end..head_end + len].to_vec(), ..rec });
    }
    out
}

fn fetch(i: usize, body_len: usize) -> FetchRecord {
    // Poorly compressible body so a small size limit rotates files.
    let mut x: u32 = 2_463_534_242 ^ i as u32;
    let body: Vec<u8> = (0..body_len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            b'a' + (x % 26) as u8
        })
        .collect();
    let url = format!("http://site{}.test/page/{i}.html", i % 2);
    let host = format!("site{}.test", i % 2);
    FetchRecord {
        request_head: format!(
            "GET /page/{i}.html HTTP/1.1\r\nHost: {host}\r\nUser-Agent: ditto-test/1.0 (+http://example.org/bot)\r\nAccept: text/html,*/*;q=0.8\r\nAccept-Encoding: gzip, br\r\n\r\n"
        )
        .into_bytes(),
        url,
        ip: Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + i as u8))),
        fetch_time: 1_709_294_405 + i as i64,
        status: 200,
        reason: "OK".into(),
        http_version: "HTTP/1.1".into(),
        response_headers: vec![
            ("Content-Type".into(), "text/html; charset=utf-8".into()),
            ("Content-Encoding".into(), "gzip".into()),
            ("Transfer-Encoding".into(), "chunked".into()),
            ("Server".into(), "test".into()),
        ],
        payload: body,
        truncated: false,
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir).expect("dir").map(|e| e.expect("entry").path()).collect();
    v.sort();
    v
}

fn name_of(p: &Path) -> String {
    p.file_name().and_then(|n| n.to_str()).expect("name").to_string()
}

#[test]
fn writes_rotates_and_reads_back() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("warcs");
    let info = WarcInfo {
        operator: Some("ditto tests <ops@example.org>".into()),
        user_agent: Some("ditto-test/1.0 (+http://example.org/bot)".into()),
        ..WarcInfo::default()
    };
    let mut w = WarcWriter::new(&dir, "crawl", 3000).expect("writer").with_info(info);
    let fetches: Vec<FetchRecord> = (0..7).map(|i| fetch(i, 1200 + 100 * i)).collect();
    let mut locs = Vec::new();
    for f in &fetches {
        locs.push(w.write_fetch(f).expect("write"));
    }
    let open_name = format!("{}.open", w.current_file().expect("open file"));
    assert!(dir.join(&open_name).exists(), "written under .open");
    w.close().expect("close");
    assert_eq!(w.current_file(), None);

    let paths = files(&dir);
    assert!(paths.len() >= 3, "rotated by size: {paths:?}");
    let mut seen_fetches = 0;
    for (n, path) in paths.iter().enumerate() {
        let name = name_of(path);
        // {prefix}-{YYYYMMDDhhmmss}-{serial:05}.warc.gz, serials from 0
        let rest = name.strip_prefix("crawl-").and_then(|r| r.strip_suffix(".warc.gz")).expect("name form");
        let (stamp, serial) = rest.split_once('-').expect("stamp-serial");
        assert_eq!(stamp.len(), 14);
        assert!(stamp.bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(serial, format!("{n:05}"));

        let recs = read_members(path);
        let info = &recs[0];
        assert_eq!(info.offset, 0);
        assert_eq!(info.field("WARC-Type"), "warcinfo");
        assert_eq!(info.field("WARC-Filename"), name);
        assert_eq!(info.field("Content-Type"), "application/warc-fields");
        assert_eq!(info.field("WARC-Block-Digest"), sha1_base32(&info.block));
        let text = String::from_utf8(info.block.clone()).expect("utf-8");
        assert!(text.starts_with("software: ditto/"), "{text}");
        assert!(text.contains("format: WARC File Format 1.1\r\n"));
        assert!(text.contains("operator: ditto tests <ops@example.org>\r\n"));
        assert!(text.contains("http-header-user-agent: ditto-test/1.0 (+http://example.org/bot)\r\n"));

        assert_eq!((recs.len() - 1) % 2, 0, "request/response pairs");
        for pair in recs[1..].chunks(2) {
            let (req, resp) = (&pair[0], &pair[1]);
            let f = &fetches[seen_fetches];
            let loc = &locs[seen_fetches];
            seen_fetches += 1;
            for r in [req, resp] {
                let id = r.field("WARC-Record-ID");
                assert!(id.starts_with("<urn:uuid:") && id.ends_with('>') && id.len() == 47, "{id}");
                assert_eq!(r.field("WARC-Target-URI"), f.url);
                assert_eq!(r.field("WARC-Date"), format!("2024-03-01T12:00:{:02}Z", 5 + seen_fetches - 1));
                assert_eq!(r.field("WARC-IP-Address"), f.ip.map(|a| a.to_string()).unwrap_or_default());
                assert_eq!(r.field("WARC-Warcinfo-ID"), info.field("WARC-Record-ID"));
                assert_eq!(r.field("WARC-Block-Digest"), sha1_base32(&r.block));
            }
            assert_eq!(req.field("WARC-Type"), "request");
            assert_eq!(req.field("Content-Type"), "application/http; msgtype=request");
            assert_eq!(req.block, f.request_head);
            assert_eq!(resp.field("WARC-Type"), "response");
            assert_eq!(resp.field("Content-Type"), "application/http; msgtype=response");
            assert_eq!(req.field("WARC-Concurrent-To"), resp.field("WARC-Record-ID"));
            assert_eq!(resp.field("WARC-Concurrent-To"), req.field("WARC-Record-ID"));
            assert_ne!(req.field("WARC-Record-ID"), resp.field("WARC-Record-ID"));

            // HTTP message as sent: the payload byte for byte, its Content-Encoding kept; the
            // chunking (the client de-chunks) renamed.
            let split = find(&resp.block, b"\r\n\r\n").expect("http head") + 4;
            let head = std::str::from_utf8(&resp.block[..split]).expect("utf-8");
            let body = &resp.block[split..];
            assert_eq!(body, f.payload.as_slice());
            assert_eq!(
                head,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: gzip\r\n\
                 X-Ditto-Orig-Transfer-Encoding: chunked\r\nServer: test\r\n\r\n"
            );
            assert_eq!(resp.field("WARC-Payload-Digest"), sha1_base32(body));

            // The returned location points at the response member.
            assert_eq!(loc.file, name);
            assert_eq!(loc.offset, resp.offset);
            let data = fs::read(path).expect("read");
            let member_end =
                recs.iter().find(|r| r.offset > resp.offset).map_or(data.len() as u64, |r| r.offset);
            assert_eq!(loc.length, member_end - resp.offset);
        }
        // The whole file is also a valid multi-member gzip stream.
        let mut all = Vec::new();
        MultiGzDecoder::new(fs::File::open(path).expect("open"))
            .read_to_end(&mut all)
            .expect("multi-member gunzip");
        assert!(all.starts_with(b"WARC/1.1\r\nWARC-Type: warcinfo\r\n"));
    }
    assert_eq!(seen_fetches, fetches.len());
    // Debugging aid: keep the files to inspect them with other WARC tools.
    if let Some(keep) = std::env::var_os("DITTO_KEEP_WARCS") {
        fs::create_dir_all(&keep).expect("mkdir");
        for p in &paths {
            fs::copy(p, Path::new(&keep).join(name_of(p))).expect("copy");
        }
    }

    // A new writer continues the serials and starts a new file.
    let mut w2 = WarcWriter::new(&dir, "crawl", 3000).expect("writer");
    assert!(w2.recovered().is_empty());
    let loc = w2.write_fetch(&fetch(9, 10)).expect("write");
    assert!(loc.file.ends_with(&format!("-{:05}.warc.gz", paths.len())), "{}", loc.file);
    drop(w2); // Drop finishes the file too
    assert_eq!(files(&dir).len(), paths.len() + 1);
    assert!(files(&dir).iter().all(|p| !name_of(p).ends_with(".open")));
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(bytes).expect("gzip");
    gz.finish().expect("gzip")
}

#[test]
fn open_file_recovery_truncates_to_last_complete_member() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let live = tmp.path().join("live");
    let crashed = tmp.path().join("crashed");
    fs::create_dir_all(&crashed).expect("mkdir");

    // A "crash": copy the .open file of a live writer after two fetches, then append a torn
    // member (the start of a valid one) as if the process died mid-write.
    let mut w = WarcWriter::new(&live, "crawl", 1 << 30).expect("writer");
    w.write_fetch(&fetch(0, 500)).expect("write");
    w.write_fetch(&fetch(1, 700)).expect("write");
    w.flush().expect("flush");
    let open_name = format!("{}.open", w.current_file().expect("open"));
    let good = fs::read(live.join(&open_name)).expect("read .open");
    let complete = read_members(&live.join(&open_name)).len();
    assert_eq!(complete, 5);
    let torn = gzip(b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 5000\r\n\r\n");
    let mut crashed_bytes = good.clone();
    crashed_bytes.extend_from_slice(&torn[..torn.len() / 2]);
    let crashed_path = crashed.join(&open_name);
    fs::write(&crashed_path, &crashed_bytes).expect("write crashed copy");
    drop(w);

    assert_eq!(complete_members_len(&crashed_bytes[..]).expect("scan"), good.len() as u64);
    // A member with a corrupt trailer is not complete either.
    let mut bad_crc = good.clone();
    let mut whole = gzip(b"WARC/1.1\r\n\r\n");
    let n = whole.len();
    whole[n - 8] ^= 0xff;
    bad_crc.extend_from_slice(&whole);
    assert_eq!(complete_members_len(&bad_crc[..]).expect("scan"), good.len() as u64);

    // A file with nothing complete is removed.
    let junk = crashed.join("crawl-20200101000000-00042.warc.gz.open");
    fs::write(&junk, &torn[..10]).expect("write junk");
    // Files of other prefixes are left alone.
    let foreign = crashed.join("other-20200101000000-00001.warc.gz.open");
    fs::write(&foreign, b"x").expect("write foreign");

    let mut w = WarcWriter::new(&crashed, "crawl", 1 << 30).expect("writer recovers");
    let final_path = crashed_path.with_file_name(open_name.trim_end_matches(".open"));
    assert_eq!(w.recovered(), std::slice::from_ref(&final_path));
    assert!(!crashed_path.exists() && !junk.exists() && foreign.exists());
    assert_eq!(fs::read(&final_path).expect("recovered"), good);
    let recs = read_members(&final_path);
    let types: Vec<&str> = recs.iter().map(|r| r.field("WARC-Type")).collect();
    assert_eq!(types, ["warcinfo", "request", "response", "request", "response"]);
    // Serials continue after the highest seen, the removed junk file's included.
    let loc = w.write_fetch(&fetch(2, 10)).expect("write");
    assert!(loc.file.ends_with("-00043.warc.gz"), "{}", loc.file);
    w.close().expect("close");

    // recover_open_file directly reports what it kept and cut.
    let again = crashed.join("crawl-20200101000000-00050.warc.gz.open");
    fs::write(&again, &crashed_bytes).expect("write");
    let r = recover_open_file(&again).expect("recover");
    assert_eq!(r.kept, good.len() as u64);
    assert_eq!(r.dropped, (crashed_bytes.len() - good.len()) as u64);
    assert_eq!(r.finished.as_deref(), Some(crashed.join("crawl-20200101000000-00050.warc.gz").as_path()));

    // complete_members_len works from a buffered reader too.
    let reader = std::io::BufReader::new(&crashed_bytes[..]);
    assert!(reader.buffer().is_empty());
    assert_eq!(complete_members_len(reader).expect("scan"), good.len() as u64);
}
