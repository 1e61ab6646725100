//! The passage table of a label set (issue 36): the anchors of its sources' word streams
//! (`detector::passages`), hash → source, with stop passages (anchors found in more than
//! [`DEFAULT_MAX_DOCUMENTS`] sources) dropped. Three sections after the source blob, each
//! with its checksum in the header's `passages` object (`FORMAT.md`, "Passages"):
//!
//! - a blocked Bloom filter (the chunks' [`crate::filter`], keys widened from the 64-bit
//!   hash by [`filter_key`]), read first, so a page's anchors that are not labeled (most of
//!   them) cost one cache line each;
//! - a prefix index on the hash's top bits (u32 positions, as the chunks' index);
//! - the table: `n × 12` bytes, u64 hash + u32 source, little-endian, sorted by hash,
//!   distinct.
//!
//! A label set without the `passages` object (built by an older ditto, or with
//! `--passages off`) matches exact chunks only.

use std::ops::Range;

use detector::passages::{PassageHash, PassageLookup, PassageParams};
use detector::{Sha1Digest, SourceId};
use serde::{Deserialize, Serialize};

use crate::filter;
use crate::format::{Checksum, Section};

/// Bytes per passage-table entry: u64 hash + u32 source id.
pub const PASSAGE_ENTRY_BYTES: usize = 12;
/// An anchor found in more sources than this is a stop passage: common wording (set
/// phrases, templates, boilerplate) that says nothing about who copied whom.
pub const DEFAULT_MAX_DOCUMENTS: u32 = 8;
/// Filter bits per passage.
pub const PASSAGE_BITS_PER_KEY: u32 = 10;

/// The header's `passages` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassageHeader {
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

impl PassageHeader {
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

/// The filter key of a passage hash: its 8 bytes (the filter's block choice) and 8 more
/// mixed from them (the bits within the block).
pub fn filter_key(h: PassageHash) -> Sha1Digest {
    let mut d = [0u8; 20];
    d[..8].copy_from_slice(&h.to_be_bytes());
    let mut z = h ^ 0x2545_f491_4f6c_dd1d;
    z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    d[8..16].copy_from_slice(&(z ^ (z >> 33)).to_be_bytes());
    d
}

/// Prefix-index width for `n` passages: at most 8 per bucket on average, capped at 26.
pub fn passage_index_bits(n: u64) -> u32 {
    let mut b = 0;
    while b < 26 && (n >> b) > 8 {
        b += 1;
    }
    b
}

fn bucket(h: PassageHash, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (h >> (64 - bits)) as usize
    }
}

/// `(hash, source)` pairs, each document's anchors distinct → the table: sorted, stop
/// passages (in more than `max_documents` sources) dropped, the lowest source kept.
/// Returns the table and how many distinct anchors were stop passages.
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

/// The three sections' bytes of a built table.
pub struct PassageSections {
    pub filter: filter::BlockedBloom,
    pub index: Vec<u8>,
    pub table: Vec<u8>,
    pub index_bits: u32,
}

impl PassageSections {
    pub fn of(table: &[(PassageHash, SourceId)]) -> PassageSections {
        let n = table.len() as u64;
        let bits = passage_index_bits(n);
        let mut bloom = filter::BlockedBloom::with_capacity(n, PASSAGE_BITS_PER_KEY, filter::K);
        let mut counts = vec![0u32; 1usize << bits];
        let mut bytes = Vec::with_capacity(table.len() * PASSAGE_ENTRY_BYTES);
        for &(h, s) in table {
            bloom.insert(&filter_key(h));
            counts[bucket(h, bits)] += 1;
            bytes.extend_from_slice(&h.to_le_bytes());
            bytes.extend_from_slice(&s.to_le_bytes());
        }
        let mut index = Vec::with_capacity((counts.len() + 1) * 4);
        let mut pos = 0u32;
        for c in counts {
            index.extend_from_slice(&pos.to_le_bytes());
            pos += c;
        }
        index.extend_from_slice(&(n as u32).to_le_bytes());
        PassageSections { filter: bloom, index, table: bytes, index_bits: bits }
    }

    pub fn lens(&self) -> [u64; 3] {
        [self.filter.as_bytes().len() as u64, self.index.len() as u64, self.table.len() as u64]
    }

    pub fn checksums(&self) -> PassageChecksums {
        PassageChecksums {
            filter: Checksum::of(self.filter.as_bytes()),
            index: Checksum::of(&self.index),
            table: Checksum::of(&self.table),
        }
    }
}

/// A passage table read from a mapped label set (ranges validated on open).
pub(crate) struct PassageTable {
    pub header: PassageHeader,
    pub filter: Range<usize>,
    pub index: Range<usize>,
    pub table: Range<usize>,
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

impl PassageTable {
    /// Look `h` up in `map`: the filter, then the bucket's entries (bounds-checked: damage
    /// can only cause misses).
    pub fn lookup(&self, map: &[u8], h: PassageHash) -> Option<SourceId> {
        let f = map.get(self.filter.clone())?;
        if !filter::may_contain(f, self.header.filter_blocks, self.header.filter_k, &filter_key(h)) {
            return None;
        }
        self.lookup_exact(map, h)
    }

    pub fn lookup_exact(&self, map: &[u8], h: PassageHash) -> Option<SourceId> {
        let n = self.header.entries as usize;
        let at = self.index.start + bucket(h, self.header.index_bits) * 4;
        let lo = (le_u32(map, at)? as usize).min(n);
        let hi = (le_u32(map, at + 4)? as usize).min(n);
        let table = map.get(self.table.clone())?;
        let (mut lo, mut hi) = (lo, hi.max(lo));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let e = table.get(mid * PASSAGE_ENTRY_BYTES..(mid + 1) * PASSAGE_ENTRY_BYTES)?;
            match le_u64(e, 0)?.cmp(&h) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return le_u32(e, 8),
            }
        }
        None
    }

    /// Every `(hash, source)` in hash order.
    pub fn iter<'a>(&'a self, map: &'a [u8]) -> impl Iterator<Item = (PassageHash, SourceId)> + 'a {
        map.get(self.table.clone())
            .unwrap_or(&[])
            .chunks_exact(PASSAGE_ENTRY_BYTES)
            .filter_map(|e| Some((le_u64(e, 0)?, le_u32(e, 8)?)))
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
    /// Every `(hash, source)` in hash order.
    pub fn iter(&self) -> impl Iterator<Item = (PassageHash, SourceId)> + '_ {
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
        self.table.lookup(self.map, h)
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
    fn index_bits_grow() {
        assert_eq!(passage_index_bits(8), 0);
        assert_eq!(passage_index_bits(9), 1);
        assert_eq!(passage_index_bits(1 << 30), 26);
    }
}
