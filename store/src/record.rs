//! The binary form of a stored page record (`p/` values) and of kept text (`t/` values).
//!
//! A record is encoded by the worker that matched the page (`PageWrite::encode`), so the one
//! store writer only applies batches. The URL and the file SHA-1 are in the key and are not
//! repeated. Layout (little-endian; `v` = LEB128 varint; `s` = `v` byte length + UTF-8):
//!
//! | field | bytes |
//! |---|---|
//! | layout version ([`RECORD_LAYOUT`]) | u8 |
//! | flags: 1 file match, 2 SimHash, 4 text hash, 8 near duplicate, 16 shingle sketch, 32 passages | u8 |
//! | fetch time | i64 |
//! | status | u16 |
//! | chunks, labeled chunks, stop chunks, shingles | v × 4 |
//! | contains | f64 |
//! | file match (flag 1) | v |
//! | SimHash (flag 2) | u64 |
//! | text SHA-1 (flag 4) | 20 |
//! | origin: 0 unknown, 1 fetch, 2 file (`s` path), 3 WARC (`s` file, `v` offset) | u8 … |
//! | sources: `v` count, then (`v` source, `v` chunks) each | |
//! | evidence: `v` count, then (`v` source, `v` text block) each (the passage is read back from the page's text) | |
//! | near duplicate of (flag 8) | s |
//! | shingle sketch (flag 16): complete (u8 0/1), `v` count, Rice parameter b (u8), `v` byte length, then the sorted hashes' gaps (the first from 0) Rice-coded | |
//! | passages (flag 32, issue 36): `v` words, `v` covered words, `v` passage chunks, `v` count, then `v` block each | |
//!
//! The sketch ([`detector::shingles::ShingleSketch`], at most [`MAX_SKETCH`] 24-bit hashes)
//! is the page's smallest hashes, so its gaps are about 2^24 / (the page's shingles) and
//! nearly geometric: Rice coding (quotient `gap >> b` in unary, then the low b bits, b =
//! ⌊log2 of the mean gap⌋) takes about b + 1.5 bits a hash, 1.3–2.1 bytes for pages of
//! 300–10,000 shingles.
//!
//! Kept text (`--keep-text`): `v` block count, then each block as `s`, deflated.

use detector::fingerprint::{hex, parse_hex, Sha1Digest};
use detector::PageOrigin;

use crate::{Evidence, PageRecord, SourceCount};

/// Version of the record layout, first byte of every record.
pub const RECORD_LAYOUT: u8 = 2;

/// Most hashes a stored sketch may hold (a damaged count must not make us allocate).
pub const MAX_SKETCH: usize = 4096;

const F_FILE_MATCH: u8 = 1;
const F_SIMHASH: u8 = 2;
const F_TEXT_HASH: u8 = 4;
const F_NEAR_DUP: u8 = 8;
const F_SKETCH: u8 = 16;
const F_PASSAGES: u8 = 32;

pub(crate) fn put_v(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push((x as u8) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

fn put_s(out: &mut Vec<u8>, s: &str) {
    put_v(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Encode a record (its URL and file hash are the key's).
pub fn encode_record(r: &PageRecord) -> Result<Vec<u8>, String> {
    let text_hash = match &r.text_hash {
        None => None,
        Some(h) => Some(parse_hex(h).ok_or("the text hash is not 40 hex digits")?),
    };
    let origin_bytes = match &r.origin {
        PageOrigin::File { path } => path.len(),
        PageOrigin::Warc { file, .. } => file.len() + 10,
        _ => 0,
    };
    // The fixed fields, varints and strings, and the sketch at up to 5 bytes a hash.
    let mut out = Vec::with_capacity(
        96 + origin_bytes
            + 8 * (r.sources.len() + r.evidence.len())
            + r.near_duplicate_of.as_ref().map_or(0, String::len)
            + 5 * r.sketch.hashes.len(),
    );
    out.push(RECORD_LAYOUT);
    let flags = (r.file_match.is_some() as u8 * F_FILE_MATCH)
        | (r.simhash.is_some() as u8 * F_SIMHASH)
        | (text_hash.is_some() as u8 * F_TEXT_HASH)
        | (r.near_duplicate_of.is_some() as u8 * F_NEAR_DUP)
        | (!r.sketch.hashes.is_empty() as u8 * F_SKETCH)
        | (r.passages.is_some() as u8 * F_PASSAGES);
    out.push(flags);
    out.extend_from_slice(&r.fetch_time.to_le_bytes());
    out.extend_from_slice(&r.status.to_le_bytes());
    for x in [r.chunks, r.labeled_chunks, r.stop_chunks, r.shingles] {
        put_v(&mut out, u64::from(x));
    }
    out.extend_from_slice(&r.contains.to_le_bytes());
    if let Some(f) = r.file_match {
        put_v(&mut out, u64::from(f));
    }
    if let Some(s) = r.simhash {
        out.extend_from_slice(&s.to_le_bytes());
    }
    if let Some(h) = text_hash {
        out.extend_from_slice(&h);
    }
    match &r.origin {
        PageOrigin::Unknown => out.push(0),
        PageOrigin::Fetch => out.push(1),
        PageOrigin::File { path } => {
            out.push(2);
            put_s(&mut out, path);
        }
        PageOrigin::Warc { file, offset } => {
            out.push(3);
            put_s(&mut out, file);
            put_v(&mut out, *offset);
        }
    }
    put_v(&mut out, r.sources.len() as u64);
    for s in &r.sources {
        put_v(&mut out, u64::from(s.source));
        put_v(&mut out, u64::from(s.chunks));
    }
    put_v(&mut out, r.evidence.len() as u64);
    for e in &r.evidence {
        put_v(&mut out, u64::from(e.source));
        put_v(&mut out, u64::from(e.block));
    }
    if let Some(n) = &r.near_duplicate_of {
        put_s(&mut out, n);
    }
    if !r.sketch.hashes.is_empty() {
        if r.sketch.hashes.len() > MAX_SKETCH {
            return Err(format!(
                "a shingle sketch of {} hashes (at most {MAX_SKETCH})",
                r.sketch.hashes.len()
            ));
        }
        let h = &r.sketch.hashes;
        if h.windows(2).any(|w| w[1] <= w[0]) {
            return Err("the shingle sketch is not sorted and distinct".into());
        }
        out.push(u8::from(r.sketch.complete));
        put_v(&mut out, h.len() as u64);
        let mean = (u64::from(h[h.len() - 1]) + 1) / h.len() as u64;
        let b = 63 - mean.max(1).leading_zeros();
        out.push(b as u8);
        // Rice codes average about b + 2 bits.
        let mut bits = BitWriter::with_capacity(h.len() * (b as usize + 2) / 8 + 8);
        let mut prev = 0u32;
        for (i, &x) in h.iter().enumerate() {
            let gap = u64::from(x - if i > 0 { prev } else { 0 });
            bits.unary(gap >> b);
            bits.put(gap & ((1u64 << b) - 1), b);
            prev = x;
        }
        let bytes = bits.finish();
        put_v(&mut out, bytes.len() as u64);
        out.extend_from_slice(&bytes);
    }
    if let Some(p) = &r.passages {
        for x in [p.words, p.covered_words, p.chunks] {
            put_v(&mut out, u64::from(x));
        }
        let blocks = &p.blocks[..p.blocks.len().min(crate::MAX_PASSAGE_BLOCKS)];
        put_v(&mut out, blocks.len() as u64);
        for &b in blocks {
            put_v(&mut out, u64::from(b));
        }
    }
    Ok(out)
}

/// Bits written first-in, lowest bit of each byte first.
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    /// About `bytes` bytes will be written.
    fn with_capacity(bytes: usize) -> Self {
        BitWriter { out: Vec::with_capacity(bytes), acc: 0, n: 0 }
    }

    /// The low `k` bits of `x` (k ≤ 32).
    fn put(&mut self, x: u64, k: u32) {
        self.acc |= x << self.n;
        self.n += k;
        // Fewer than 32 bits were pending, so at most 63 are now: flush whole 32-bit words
        // (the same bytes, low first, as byte by byte).
        if self.n >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.n -= 32;
        }
    }

    /// `q` one bits, then a zero.
    fn unary(&mut self, mut q: u64) {
        while q >= 16 {
            self.put(0xffff, 16);
            q -= 16;
        }
        self.put((1u64 << q) - 1, q as u32 + 1);
    }

    fn finish(mut self) -> Vec<u8> {
        let bytes = self.n.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
        self.out
    }
}

/// Reading what [`BitWriter`] wrote, bounds-checked.
struct BitReader<'a> {
    b: &'a [u8],
    /// Bits read.
    pos: usize,
}

impl BitReader<'_> {
    /// Bits not read yet.
    fn left(&self) -> usize {
        (self.b.len() * 8).saturating_sub(self.pos)
    }

    /// The next up to 57 bits, low bit first (zeros past the end).
    fn peek(&self) -> u64 {
        let at = self.pos / 8;
        let mut a = [0u8; 8];
        let rest = self.b.get(at..).unwrap_or_default();
        let n = rest.len().min(8);
        a[..n].copy_from_slice(&rest[..n]);
        u64::from_le_bytes(a) >> (self.pos % 8)
    }

    /// The next `k` bits (k ≤ 32).
    fn get(&mut self, k: u32) -> Result<u64, String> {
        if k as usize > self.left() {
            return Err("the sketch's bits end early".into());
        }
        let x = if k == 0 { 0 } else { self.peek() & (u64::MAX >> (64 - k)) };
        self.pos += k as usize;
        Ok(x)
    }

    /// A unary number (ones ended by a zero); a 24-bit gap's quotient is never above 2^32.
    fn unary(&mut self) -> Result<u64, String> {
        let mut q = 0u64;
        loop {
            let avail = self.left().min(57);
            if avail == 0 {
                return Err("the sketch's bits end early".into());
            }
            let ones = (!self.peek()).trailing_zeros() as usize;
            if ones < avail {
                self.pos += ones + 1;
                return Ok(q + ones as u64);
            }
            q += avail as u64;
            self.pos += avail;
            if q > 1 << 32 {
                return Err("a unary run is too long".into());
            }
        }
    }
}

/// Bounds-checked reading of an encoded value.
pub(crate) struct Reader<'a> {
    pub(crate) b: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.b.len() < n {
            return Err("record ends early".into());
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn v(&mut self) -> Result<u64, String> {
        let mut x = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            x |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(x);
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    pub(crate) fn v32(&mut self) -> Result<u32, String> {
        u32::try_from(self.v()?).map_err(|_| "a 32-bit field is out of range".to_string())
    }

    fn len(&mut self) -> Result<usize, String> {
        let n = self.v()?;
        // A count or length can never exceed what is left (every item takes a byte).
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.b.len())
            .ok_or_else(|| "a length runs past the end".into())
    }

    fn s(&mut self) -> Result<String, String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "a string is not UTF-8".into())
    }
}

/// A record's page counts alone (chunks, labeled chunks, `contains`): the fields at its
/// start, read without decoding the rest (origin, sources, evidence), for passes over every
/// page that need only them (the summaries' totals and thresholds).
pub fn decode_counts(value: &[u8]) -> Result<(u32, u32, f64), String> {
    let h = read_head(&mut Reader { b: value })?;
    Ok((h.chunks, h.labeled_chunks, h.contains))
}

/// The fixed fields every record starts with (after its layout byte, checked here).
struct Head {
    flags: u8,
    fetch_time: i64,
    status: u16,
    chunks: u32,
    labeled_chunks: u32,
    stop_chunks: u32,
    shingles: u32,
    contains: f64,
}

fn read_head(r: &mut Reader) -> Result<Head, String> {
    let layout = r.u8()?;
    if layout != RECORD_LAYOUT {
        return Err(format!("record layout {layout} is not {RECORD_LAYOUT}"));
    }
    Ok(Head {
        flags: r.u8()?,
        fetch_time: i64::from_le_bytes(r.array()?),
        status: u16::from_le_bytes(r.array()?),
        chunks: r.v32()?,
        labeled_chunks: r.v32()?,
        stop_chunks: r.v32()?,
        shingles: r.v32()?,
        contains: f64::from_le_bytes(r.array()?),
    })
}

/// Decode a record stored under the page key of `url` and `file_hash`.
pub fn decode_record(url: &str, file_hash: &Sha1Digest, value: &[u8]) -> Result<PageRecord, String> {
    let mut r = Reader { b: value };
    let Head { flags, fetch_time, status, chunks, labeled_chunks, stop_chunks, shingles, contains } =
        read_head(&mut r)?;
    let file_match = if flags & F_FILE_MATCH != 0 { Some(r.v32()?) } else { None };
    let simhash = if flags & F_SIMHASH != 0 { Some(u64::from_le_bytes(r.array()?)) } else { None };
    let text_hash = if flags & F_TEXT_HASH != 0 { Some(hex(&r.array::<20>()?)) } else { None };
    let origin = match r.u8()? {
        0 => PageOrigin::Unknown,
        1 => PageOrigin::Fetch,
        2 => PageOrigin::File { path: r.s()? },
        3 => PageOrigin::Warc { file: r.s()?, offset: r.v()? },
        t => return Err(format!("unknown origin kind {t}")),
    };
    let n = r.len()?;
    let mut sources = Vec::with_capacity(n);
    for _ in 0..n {
        sources.push(SourceCount { source: r.v32()?, chunks: r.v32()? });
    }
    let n = r.len()?;
    let mut evidence = Vec::with_capacity(n);
    for _ in 0..n {
        evidence.push(Evidence { source: r.v32()?, block: r.v32()?, passage: String::new() });
    }
    let near_duplicate_of = if flags & F_NEAR_DUP != 0 { Some(r.s()?) } else { None };
    let mut sketch = detector::shingles::ShingleSketch::default();
    if flags & F_SKETCH != 0 {
        sketch.complete = match r.u8()? {
            0 => false,
            1 => true,
            x => return Err(format!("sketch completeness byte {x}")),
        };
        let n = r.len()?;
        if n == 0 || n > MAX_SKETCH {
            return Err(format!("a shingle sketch of {n} hashes"));
        }
        let b = u32::from(r.u8()?);
        if b > 32 {
            return Err(format!("sketch Rice parameter {b}"));
        }
        let len = r.len()?;
        let mut bits = BitReader { b: r.take(len)?, pos: 0 };
        sketch.hashes.reserve(n);
        let mut prev = 0u64;
        for i in 0..n {
            let gap = (bits.unary()? << b) | bits.get(b)?;
            if i > 0 && gap == 0 {
                return Err("the shingle sketch is not sorted and distinct".into());
            }
            prev = prev
                .checked_add(gap)
                .filter(|&h| h <= u64::from(u32::MAX))
                .ok_or("a sketch hash is out of range")?;
            sketch.hashes.push(prev as u32);
        }
    }
    let passages = if flags & F_PASSAGES != 0 {
        let (words, covered_words, chunks) = (r.v32()?, r.v32()?, r.v32()?);
        let n = r.len()?;
        let blocks = (0..n).map(|_| r.v32()).collect::<Result<Vec<u32>, String>>()?;
        Some(crate::PassageSummary { words, covered_words, chunks, blocks })
    } else {
        None
    };
    if !r.b.is_empty() {
        return Err(format!("{} bytes left after the record", r.b.len()));
    }
    Ok(PageRecord {
        url: url.to_string(),
        fetch_time,
        status,
        file_hash: hex(file_hash),
        chunks,
        labeled_chunks,
        stop_chunks,
        contains,
        file_match,
        sources,
        evidence,
        origin,
        simhash,
        text_hash,
        shingles,
        near_duplicate_of,
        sketch,
        passages,
    })
}

/// Kept text blocks, deflated.
pub fn encode_text<'a>(blocks: impl ExactSizeIterator<Item = &'a str>) -> Result<Vec<u8>, String> {
    let mut raw = Vec::new();
    put_v(&mut raw, blocks.len() as u64);
    for b in blocks {
        put_s(&mut raw, b);
    }
    deflate(&raw)
}

thread_local! {
    /// One deflate state per thread, reset for each page: setting up a fresh one per page
    /// (its window and hash tables) cost 6–8 % of a crawl's CPU (BENCHMARKS.md, crawl round 2).
    static DEFLATE: std::cell::RefCell<Option<flate2::Compress>> = const { std::cell::RefCell::new(None) };
}

/// Raw deflate of `raw` at the fast level: the same bytes as `flate2::write::DeflateEncoder`.
fn deflate(raw: &[u8]) -> Result<Vec<u8>, String> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    DEFLATE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let z = cell.get_or_insert_with(|| Compress::new(Compression::fast(), false));
        z.reset();
        let mut out = Vec::with_capacity(raw.len() / 2 + 64);
        loop {
            let read = usize::try_from(z.total_in()).map_err(|e| e.to_string())?;
            let rest = raw.get(read..).unwrap_or_default();
            match z.compress_vec(rest, &mut out, FlushCompress::Finish).map_err(|e| e.to_string())? {
                Status::StreamEnd => return Ok(out),
                Status::Ok | Status::BufError => out.reserve(out.capacity().max(1024)),
            }
        }
    })
}

/// Largest inflated text accepted (a damaged value must not make us allocate without bound).
const MAX_TEXT_BYTES: u64 = 256 << 20;

pub fn decode_text(v: &[u8]) -> Result<Vec<String>, String> {
    use std::io::Read;
    let mut raw = Vec::new();
    flate2::read::DeflateDecoder::new(v)
        .take(MAX_TEXT_BYTES)
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())?;
    let mut r = Reader { b: &raw };
    let n = r.len()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(r.s()?);
    }
    if !r.b.is_empty() {
        return Err("bytes left after the text".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PageRecord {
        PageRecord {
            url: "http://h/a".into(),
            fetch_time: -5,
            status: 200,
            file_hash: hex(&[7u8; 20]),
            chunks: 300,
            labeled_chunks: 2,
            stop_chunks: 1,
            contains: 2.0 / 300.0,
            file_match: Some(9),
            sources: vec![SourceCount { source: 4, chunks: 2 }, SourceCount { source: 1 << 30, chunks: 1 }],
            evidence: vec![Evidence { source: 4, block: 300, passage: String::new() }],
            origin: PageOrigin::Warc { file: "/data/x.warc.gz".into(), offset: 1 << 40 },
            simhash: Some(u64::MAX),
            text_hash: Some(hex(&[0xab; 20])),
            shingles: 17,
            near_duplicate_of: Some("http://h/b".into()),
            passages: Some(crate::PassageSummary {
                words: 300,
                covered_words: 120,
                chunks: 2,
                blocks: vec![4, 9],
            }),
            sketch: detector::shingles::ShingleSketch {
                hashes: vec![0, 3, 1 << 20, u32::MAX],
                complete: false,
            },
        }
    }

    #[test]
    fn records_round_trip() {
        let r = sample();
        let v = encode_record(&r).unwrap();
        assert_eq!(decode_record(&r.url, &[7u8; 20], &v).unwrap(), r);
        // Passages are not stored: they are read back from the page's text.
        let mut with_passage = sample();
        with_passage.evidence[0].passage = "copied “text” …".into();
        assert_eq!(encode_record(&with_passage).unwrap(), v);
        let bare = PageRecord {
            file_match: None,
            simhash: None,
            text_hash: None,
            near_duplicate_of: None,
            passages: None,
            sketch: Default::default(),
            sources: vec![],
            evidence: vec![],
            origin: PageOrigin::File { path: "/d/f.html".into() },
            ..sample()
        };
        let v = encode_record(&bare).unwrap();
        assert_eq!(decode_record(&bare.url, &[7u8; 20], &v).unwrap(), bare);
        assert!(v.len() < 50, "{} bytes", v.len());
    }

    #[test]
    fn counts_read_alone_equal_the_whole_record_s() {
        for r in [sample(), PageRecord { chunks: 300, labeled_chunks: 0, contains: 0.0, ..sample() }] {
            let v = encode_record(&r).unwrap();
            assert_eq!(decode_counts(&v).unwrap(), (r.chunks, r.labeled_chunks, r.contains));
            assert!(decode_counts(&v[..3]).is_err());
        }
        assert!(decode_counts(&[RECORD_LAYOUT + 1; 40]).is_err());
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let v = encode_record(&sample()).unwrap();
        for cut in 0..v.len() {
            assert!(decode_record("u", &[0; 20], &v[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = v.clone();
        longer.push(0);
        assert!(decode_record("u", &[0; 20], &longer).is_err());
        // Every single-byte change decodes to an error or to some record: never a panic.
        for i in 0..v.len() {
            for x in [0u8, 0x7f, 0x80, 0xff] {
                let mut w = v.clone();
                w[i] = x;
                let _ = decode_record("u", &[0; 20], &w);
            }
        }
        let mut bad_hash = sample();
        bad_hash.text_hash = Some("zz".into());
        assert!(encode_record(&bad_hash).is_err());
        let mut unsorted = sample();
        unsorted.sketch.hashes = vec![5, 5];
        assert!(encode_record(&unsorted).is_err());
    }

    #[test]
    fn sketches_round_trip_in_about_two_bytes_a_hash() {
        let mut x = 3u64;
        for (n, k) in [(1usize, 256usize), (5, 256), (300, 256), (2_000, 256), (50_000, 256), (2_000, 1)] {
            let mut set: Vec<u32> = (0..n)
                .map(|_| {
                    x = detector::shingles::fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
                    x as u32
                })
                .collect();
            set.sort_unstable();
            set.dedup();
            let r = PageRecord { sketch: detector::shingles::ShingleSketch::of_set(&set, k), ..sample() };
            let v = encode_record(&r).unwrap();
            assert_eq!(decode_record(&r.url, &[7u8; 20], &v).unwrap(), r, "n {n}");
            let bare = encode_record(&PageRecord { sketch: Default::default(), ..sample() }).unwrap();
            let per_hash = (v.len() - bare.len()) as f64 / r.sketch.hashes.len() as f64;
            if r.sketch.hashes.len() >= 100 {
                assert!(per_hash < 2.3, "n {n}: {per_hash} bytes a hash");
            }
        }
    }

    #[test]
    fn sketches_with_long_unary_runs_round_trip() {
        // 100 small hashes and one huge: the mean gap is small, so the last gap's quotient
        // is a unary run of hundreds of bits, read across several 57-bit windows.
        let mut hashes: Vec<u32> = (1..=100).collect();
        hashes.push(u32::MAX);
        for complete in [false, true] {
            let r = PageRecord {
                sketch: detector::shingles::ShingleSketch { hashes: hashes.clone(), complete },
                ..sample()
            };
            let v = encode_record(&r).unwrap();
            assert_eq!(decode_record(&r.url, &[7u8; 20], &v).unwrap(), r);
            for cut in 0..v.len() {
                assert!(decode_record("u", &[0; 20], &v[..cut]).is_err(), "cut at {cut}");
            }
        }
    }

    #[test]
    fn reused_deflate_state_inflates_back_page_after_page() {
        use std::io::Read;
        let mut x = 1u64;
        for len in [0usize, 1, 100, 5_000, 200_000, 1_000] {
            let raw: Vec<u8> = (0..len)
                .map(|i| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    if i % 7 == 0 {
                        (x >> 56) as u8
                    } else {
                        b"the quick brown fox "[i % 20]
                    }
                })
                .collect();
            let packed = deflate(&raw).unwrap();
            let mut back = Vec::new();
            flate2::read::DeflateDecoder::new(packed.as_slice()).read_to_end(&mut back).unwrap();
            assert_eq!(back, raw, "{len} bytes");
            assert!(len < 5_000 || packed.len() < len, "{len} bytes deflated to {}", packed.len());
        }
    }

    #[test]
    fn kept_text_round_trips() {
        let blocks = ["first block", "", "second — block"];
        let v = encode_text(blocks.iter().copied()).unwrap();
        assert_eq!(decode_text(&v).unwrap(), blocks.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(decode_text(&v[..v.len() / 2]).is_err());
    }
}
