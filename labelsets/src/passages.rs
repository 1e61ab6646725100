//! The passage table of a label set (issue 36): the anchors of its sources' word streams
//! (`detector::passages`), hash → source, with stop passages (anchors found in more than
//! [`DEFAULT_MAX_DOCUMENTS`] sources) dropped. Three sections after the source blob, each
//! with its checksum in the header's `passages` object (`FORMAT.md`, "Passages"):
//!
//! - a blocked Bloom filter (the chunks' [`crate::filter`], keys widened from the 64-bit
//!   hash by [`filter_key`]), read first, so a page's anchors that are not labeled (most of
//!   them) cost one cache line each;
//! - a prefix index on the hash's top bits (u32 positions, as the chunks' index);
//! - the table: `n × 8` bytes, sorted by key, distinct: the key's low 32 bits (the bucket
//!   holds its top `b ≥ 8` bits, so the two cover all 40), then the u32 source, little-endian.
//!
//! The table's **key** is the anchor hash's top 40 bits ([`table_key`]): 8 bytes an entry
//! instead of 12. A chance match of 40 bits happens once in `2^40 / n` lookups (once in 4,400 at
//! 250 M anchors), on a random source; a source counts on a page only with 2 hits in one span
//! (`detector::passages::MIN_HITS`), so chance matches never make a copy.
//!
//! A label set without the `passages` object (built by an older ditto, or with
//! `--passages off`) matches exact chunks only.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use detector::passages::{PassageHash, PassageLookup, PassageParams};
use detector::{Sha1Digest, SourceId};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

use crate::filter;
use crate::layout::{le_u32, prefix_index};
use crate::spill::{Record, RunReader, Runs};
use crate::{Checksum, Result, Section};

/// Bytes per passage-table entry: the key's low 32 bits + u32 source id.
pub const PASSAGE_ENTRY_BYTES: usize = 8;
/// Bits of an anchor's hash the table keeps.
pub const KEY_BITS: u32 = 40;

/// The table key of an anchor hash: its top [`KEY_BITS`] bits.
#[inline]
pub fn table_key(h: PassageHash) -> u64 {
    h >> (64 - KEY_BITS)
}
/// An anchor found in more sources than this is a stop passage: common wording (set
/// phrases, templates, boilerplate) that says nothing about who copied whom.
pub const DEFAULT_MAX_DOCUMENTS: u32 = 8;
/// Filter bits per passage.
pub const PASSAGE_BITS_PER_KEY: u32 = 10;

/// The header's `passages` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassageHeader {
    /// The word hash the anchors were taken with (`detector::passages::WORD_HASH_VERSION`;
    /// absent, 1, in the files of the first passage format). A table with another version
    /// is not matched against ([`crate::LabelSet::passages`]).
    #[serde(default = "first_word_hash")]
    pub word_hash: u32,
    /// Words per k-gram.
    pub words: u32,
    /// Anchors: k-grams whose hash is 0 modulo this.
    pub modulus: u32,
    /// Anchors in more sources than this were dropped as stop passages.
    pub max_documents: u32,
    /// Distinct anchors in the table.
    pub entries: u64,
    /// Distinct anchors dropped as stop passages.
    pub stop_passages: u64,
    /// Anchors offered (distinct per document, summed over documents).
    pub anchors_seen: u64,
    pub filter_blocks: u64,
    pub filter_k: u32,
    /// Prefix-index width: `2^b` buckets on the hash's top bits.
    pub index_bits: u32,
    pub filter: Section,
    pub index: Section,
    pub table: Section,
    pub checksums: PassageChecksums,
}

fn first_word_hash() -> u32 {
    1
}

impl PassageHeader {
    /// Whether this ditto hashes words as the table's builder did.
    pub fn word_hash_current(&self) -> bool {
        self.word_hash == detector::passages::WORD_HASH_VERSION
    }

    pub fn params(&self) -> PassageParams {
        PassageParams { words: self.words, modulus: self.modulus }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassageChecksums {
    pub filter: Checksum,
    pub index: Checksum,
    pub table: Checksum,
}

/// The filter key of a table key: the key in the top bits of 8 bytes (the filter's block
/// choice) and 8 more mixed from it (the bits within the block).
pub fn filter_key(key: u64) -> Sha1Digest {
    let mut d = [0u8; 20];
    d[..8].copy_from_slice(&(key << (64 - KEY_BITS)).to_be_bytes());
    let mut z = key ^ 0x2545_f491_4f6c_dd1d;
    z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    d[8..16].copy_from_slice(&(z ^ (z >> 33)).to_be_bytes());
    d
}

/// Prefix-index width for `n` passages: at most 8 per bucket on average, at least 8 (so
/// bucket and stored bits cover the whole key), at most 26.
pub fn passage_index_bits(n: u64) -> u32 {
    let mut b = 8;
    while b < 26 && (n >> b) > 8 {
        b += 1;
    }
    b
}

fn bucket(key: u64, bits: u32) -> usize {
    (key >> (KEY_BITS - bits)) as usize
}

/// The bits of a key an entry keeps.
fn stored_bits(key: u64) -> u32 {
    key as u32
}

/// `(key, source)` pairs, each document's keys distinct → the table: sorted, stop passages
/// (in more than `max_documents` sources) dropped, the lowest source kept. Returns the table
/// and how many distinct keys were stop passages.
pub fn build_table(
    mut pairs: Vec<(PassageHash, SourceId)>,
    max_documents: u32,
) -> (Vec<(PassageHash, SourceId)>, u64) {
    pairs.sort_unstable();
    pairs.dedup();
    let mut out = Vec::with_capacity(pairs.len());
    let mut stop = 0u64;
    for group in pairs.chunk_by(|a, b| a.0 == b.0) {
        if group.len() > max_documents as usize {
            stop += 1;
        } else {
            out.push(group[0]);
        }
    }
    (out, stop)
}

/// The three sections of a built table: the filter and index in memory, the table in
/// memory or, for a spilled build, in a file of `(key, source)` pairs ([`merge_runs`]) the
/// writer converts as it streams them (the same bytes).
pub struct PassageSections {
    pub filter: filter::BlockedBloom,
    pub index: Vec<u8>,
    pub index_bits: u32,
    table: TableBytes,
    entries: u64,
    table_checksum: Checksum,
}

enum TableBytes {
    Memory(Vec<u8>),
    /// Records of [`PAIR_BYTES`]: u64 LE key, u32 LE source.
    Pairs(PathBuf),
}

/// Bytes of a `(key, source)` pair in a spilled run: u64 LE table key + u32 LE source.
pub(crate) const PAIR_BYTES: usize = 12;

/// The table bytes of one entry.
fn table_entry(key: u64, s: SourceId) -> [u8; PASSAGE_ENTRY_BYTES] {
    let mut e = [0u8; PASSAGE_ENTRY_BYTES];
    e[..4].copy_from_slice(&stored_bits(key).to_le_bytes());
    e[4..].copy_from_slice(&s.to_le_bytes());
    e
}

/// Filter, per-bucket counts and the table's checksum in one pass over the sorted table.
struct SectionsPass {
    bloom: filter::BlockedBloom,
    counts: Vec<u32>,
    bits: u32,
    sum: Xxh3,
    buf: Vec<u8>,
}

impl SectionsPass {
    fn new(n: u64) -> SectionsPass {
        let bits = passage_index_bits(n);
        SectionsPass {
            bloom: filter::BlockedBloom::with_capacity(n, PASSAGE_BITS_PER_KEY, filter::K),
            counts: vec![0u32; 1usize << bits],
            bits,
            sum: Xxh3::new(),
            buf: Vec::with_capacity(1 << 16),
        }
    }

    fn add(&mut self, key: u64, s: SourceId) {
        self.bloom.insert(&filter_key(key));
        self.counts[bucket(key, self.bits)] += 1;
        self.buf.extend_from_slice(&table_entry(key, s));
        if self.buf.len() >= 1 << 16 {
            self.sum.update(&self.buf);
            self.buf.clear();
        }
    }

    fn finish(mut self, n: u64, table: TableBytes) -> PassageSections {
        self.sum.update(&self.buf);
        PassageSections {
            filter: self.bloom,
            index: prefix_index(self.counts, n),
            index_bits: self.bits,
            table,
            entries: n,
            table_checksum: Checksum(self.sum.digest()),
        }
    }
}

impl PassageSections {
    pub fn of(table: &[(PassageHash, SourceId)]) -> PassageSections {
        let n = table.len() as u64;
        let mut pass = SectionsPass::new(n);
        let mut bytes = Vec::with_capacity(table.len() * PASSAGE_ENTRY_BYTES);
        for &(key, s) in table {
            pass.add(key, s);
            bytes.extend_from_slice(&table_entry(key, s));
        }
        pass.finish(n, TableBytes::Memory(bytes))
    }

    /// The sections of the table in `path` (`n` sorted, distinct pairs, as [`merge_runs`]
    /// writes them): one pass builds the filter and index; the table stays in the file.
    pub(crate) fn of_pairs(path: &Path, n: u64) -> Result<PassageSections> {
        let mut pass = SectionsPass::new(n);
        let mut r = RunReader::<(u64, SourceId)>::open(path)?;
        while let Some((key, s)) = r.next()? {
            pass.add(key, s);
        }
        Ok(pass.finish(n, TableBytes::Pairs(path.into())))
    }

    /// Entries in the table.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    pub fn lens(&self) -> [u64; 3] {
        [
            self.filter.as_bytes().len() as u64,
            self.index.len() as u64,
            self.entries * PASSAGE_ENTRY_BYTES as u64,
        ]
    }

    pub fn checksums(&self) -> PassageChecksums {
        PassageChecksums {
            filter: Checksum::of(self.filter.as_bytes()),
            index: Checksum::of(&self.index),
            table: self.table_checksum,
        }
    }

    /// Write the table section's bytes to `w`.
    pub fn write_table(&self, w: &mut impl Write) -> std::io::Result<()> {
        match &self.table {
            TableBytes::Memory(bytes) => w.write_all(bytes),
            TableBytes::Pairs(path) => {
                let mut r = BufReader::with_capacity(1 << 20, File::open(path)?);
                let mut rec = [0u8; PAIR_BYTES];
                for _ in 0..self.entries {
                    r.read_exact(&mut rec)?;
                    let (key, s) = <(u64, SourceId) as Record>::get(&rec);
                    w.write_all(&table_entry(key, s))?;
                }
                Ok(())
            }
        }
    }
}

/// Merge a spilled build's sorted runs of `(key, source)` pairs into its table, as
/// [`build_table`] does in memory: grouped by key, repeated pairs counted once, keys in more
/// than `max_documents` sources dropped as stop passages, the lowest source kept. The table
/// is written to a file of pairs (which becomes the runs' only run); returns its path, its
/// entries and the stop passages.
pub(crate) fn merge_runs(
    runs: &mut Runs<(u64, SourceId)>,
    max_documents: u32,
) -> Result<(PathBuf, u64, u64)> {
    // The key being grouped: its first (lowest) source, the last source seen, distinct sources.
    let mut group: Option<(u64, SourceId, SourceId, u32)> = None;
    let mut stop = 0u64;
    let (path, n) = runs.merge(|pair, w| {
        if let (Some((k, _, last, count)), Some((key, s))) = (group.as_mut(), pair) {
            if *k == key {
                if *last != s {
                    *last = s;
                    *count = count.saturating_add(1);
                }
                return Ok(());
            }
        }
        if let Some((k, first, _, count)) = group.take() {
            if count > max_documents {
                stop += 1;
            } else {
                w.push(&(k, first))?;
            }
        }
        group = pair.map(|(key, s)| (key, s, s, 1));
        Ok(())
    })?;
    Ok((path, n, stop))
}

/// A passage table read from a mapped label set (ranges validated on open).
pub(crate) struct PassageTable {
    pub header: PassageHeader,
    pub filter: Range<usize>,
    pub index: Range<usize>,
    pub table: Range<usize>,
}

impl PassageTable {
    /// Look the table key `key` up in `map`: the filter, then the bucket's entries
    /// (bounds-checked: damage can only cause misses).
    pub fn lookup(&self, map: &[u8], key: u64) -> Option<SourceId> {
        let f = map.get(self.filter.clone())?;
        if !filter::may_contain(f, self.header.filter_blocks, self.header.filter_k, &filter_key(key)) {
            return None;
        }
        self.lookup_exact(map, key)
    }

    pub fn lookup_exact(&self, map: &[u8], key: u64) -> Option<SourceId> {
        let n = self.header.entries as usize;
        let at = self.index.start + bucket(key, self.header.index_bits) * 4;
        let lo = (le_u32(map, at)? as usize).min(n);
        let hi = (le_u32(map, at + 4)? as usize).min(n);
        let table = map.get(self.table.clone())?;
        let want = stored_bits(key);
        let (mut lo, mut hi) = (lo, hi.max(lo));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let e = table.get(mid * PASSAGE_ENTRY_BYTES..(mid + 1) * PASSAGE_ENTRY_BYTES)?;
            match le_u32(e, 0)?.cmp(&want) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return le_u32(e, 4),
            }
        }
        None
    }

    /// Every `(key, source)` in key order, the key rebuilt from its bucket and stored bits.
    pub fn iter<'a>(&'a self, map: &'a [u8]) -> impl Iterator<Item = (u64, SourceId)> + 'a {
        let bits = self.header.index_bits;
        let index = map.get(self.index.clone()).unwrap_or(&[]);
        let n = self.header.entries as usize;
        let mut bucket = 0usize;
        map.get(self.table.clone()).unwrap_or(&[]).chunks_exact(PASSAGE_ENTRY_BYTES).enumerate().filter_map(
            move |(i, e)| {
                // Advance to the bucket holding entry i (the index is monotone when sound).
                while le_u32(index, (bucket + 1) * 4).is_some_and(|end| (end as usize).min(n) <= i) {
                    bucket += 1;
                }
                let key = ((bucket as u64) << (KEY_BITS - bits)) | u64::from(le_u32(e, 0)?);
                Some((key, le_u32(e, 4)?))
            },
        )
    }

    /// Structure: sorted, distinct, sources in range, each in the filter and found through
    /// the index. `Err` says the first fault.
    pub fn verify(&self, map: &[u8], sources: usize) -> std::result::Result<(), String> {
        let mut prev: Option<PassageHash> = None;
        let mut count = 0u64;
        for (i, (h, s)) in self.iter(map).enumerate() {
            if prev.is_some_and(|p| p >= h) {
                return Err(format!("passage {i} out of order"));
            }
            if s as usize >= sources {
                return Err(format!("passage {i} has source id {s} ≥ {sources}"));
            }
            if self.lookup(map, h) != Some(s) {
                return Err(format!("passage {i} not found through the filter and index"));
            }
            prev = Some(h);
            count += 1;
        }
        if count != self.header.entries {
            return Err(format!("{count} passages, the header says {}", self.header.entries));
        }
        Ok(())
    }
}

/// A label set's passage table as the detector looks it up.
pub struct PassageView<'a> {
    pub(crate) table: &'a PassageTable,
    pub(crate) map: &'a [u8],
}

impl PassageView<'_> {
    /// Every `(key, source)` in key order (keys: [`table_key`]).
    pub fn iter(&self) -> impl Iterator<Item = (u64, SourceId)> + '_ {
        self.table.iter(self.map)
    }
    pub fn header(&self) -> &PassageHeader {
        &self.table.header
    }
}

impl PassageLookup for PassageView<'_> {
    fn params(&self) -> PassageParams {
        self.table.header.params()
    }
    fn lookup_passage(&self, h: PassageHash) -> Option<SourceId> {
        self.table.lookup(self.map, table_key(h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_passages_are_dropped_and_the_lowest_source_kept() {
        let mut pairs = vec![(5u64, 3u32), (5, 1), (9, 2)];
        // 7 is in 4 sources: a stop passage at max 3.
        pairs.extend((0..4).map(|s| (7u64, s)));
        let (t, stop) = build_table(pairs, 3);
        assert_eq!(t, vec![(5, 1), (9, 2)]);
        assert_eq!(stop, 1);
    }

    #[test]
    fn keys_survive_the_table() {
        let keys: Vec<(u64, u32)> =
            (0..5000u64).map(|i| (table_key(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) << 3), i as u32)).collect();
        let (mut t, _) = build_table(keys, 8);
        t.sort_unstable();
        let ps = PassageSections::of(&t);
        // Lay the sections out as a file would, then read them back.
        let mut map = Vec::new();
        let f = 0..ps.filter.as_bytes().len();
        map.extend_from_slice(ps.filter.as_bytes());
        let i = map.len()..map.len() + ps.index.len();
        map.extend_from_slice(&ps.index);
        let tb = map.len()..map.len() + ps.lens()[2] as usize;
        ps.write_table(&mut map).unwrap();
        let header = PassageHeader {
            word_hash: detector::passages::WORD_HASH_VERSION,
            words: 5,
            modulus: 8,
            max_documents: 8,
            entries: t.len() as u64,
            stop_passages: 0,
            anchors_seen: 0,
            filter_blocks: ps.filter.blocks(),
            filter_k: ps.filter.k(),
            index_bits: ps.index_bits,
            filter: Section::default(),
            index: Section::default(),
            table: Section::default(),
            checksums: ps.checksums(),
        };
        let table = PassageTable { header, filter: f, index: i, table: tb };
        assert_eq!(table.iter(&map).collect::<Vec<_>>(), t);
        for &(k, s) in &t {
            assert_eq!(table.lookup(&map, k), Some(s));
        }
        assert_eq!(table.lookup(&map, table_key(0x7777_dead_beef_1230)), None);
        table.verify(&map, 5000).unwrap();
    }

    #[test]
    fn index_bits_grow() {
        assert_eq!(passage_index_bits(8), 8);
        assert_eq!(passage_index_bits(4096), 9);
        assert_eq!(passage_index_bits(1 << 30), 26);
    }
}
