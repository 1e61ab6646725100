//! Cache-blocked Bloom filter over SHA-1 digests: the "compact filter for fast negatives" in
//! front of the exact table (DESIGN.md; the paper suggests Bloom filters for large stop lists,
//! §3.4.2).
//!
//! Each key sets [`K`] bits inside one 512-bit (64-byte, one cache line) block, so a lookup
//! touches exactly one cache line. SHA-1 output is uniformly random, so the block index and
//! the bit positions are taken straight from the digest bytes, with no further hashing:
//!
//! - block = `(u64_be(digest[0..8]) × blocks) >> 64` (multiply-shift range reduction);
//! - bit j (j = 0..K) = bits `9j .. 9j+9` of `u64_be(digest[8..16])`, a position in 0..512.
//!
//! Sizing: [`BITS_PER_KEY`] = 10 bits per key, rounded up to whole blocks. At 75 M chunks
//! (the paper's Wikipedia `L_c`, §7) that is 1,464,844 blocks = 93.75 MB (≤ 100 MB).
//! False-positive rate: a blocked filter's rate is the Poisson mixture over block loads
//! (mean 51.2 keys per block): Σ_j P(j; 51.2)·(1 − (1 − 1/512)^{7j})^7 ≈ 0.96 % for K = 7
//! (a classic unblocked Bloom filter at 10 bits/key would give 0.82 %). The benchmark measures
//! it (`cargo bench -p labelsets --bench lookup`).

use detector::Sha1Digest;

/// Bytes per block (one cache line).
pub const BLOCK_BYTES: usize = 64;
/// Bits per block.
pub const BLOCK_BITS: u32 = 512;
/// Default filter bits per key.
pub const BITS_PER_KEY: u32 = 10;
/// Bits set per key. 9 bits of the digest per position, so at most 7 fit in one u64.
pub const K: u32 = 7;
/// The largest K the position derivation supports.
pub const MAX_K: u32 = 7;

/// Number of blocks for `keys` keys at `bits_per_key`: at least one.
pub fn blocks_for(keys: u64, bits_per_key: u32) -> u64 {
    let bits = keys.saturating_mul(bits_per_key as u64);
    bits.div_ceil(BLOCK_BITS as u64).max(1)
}

/// Filter size in bytes for `keys` keys at `bits_per_key`.
pub fn bytes_for(keys: u64, bits_per_key: u32) -> u64 {
    blocks_for(keys, bits_per_key) * BLOCK_BYTES as u64
}

/// Expected false-positive rate of a blocked Bloom filter: Poisson mixture over block loads.
pub fn expected_fp_rate(keys: u64, blocks: u64, k: u32) -> f64 {
    if keys == 0 || blocks == 0 {
        return 0.0;
    }
    let lambda = keys as f64 / blocks as f64;
    let miss = 1.0 - 1.0 / BLOCK_BITS as f64;
    // Sum the Poisson terms in log space around the mean so large λ does not underflow.
    let hi = (lambda + 12.0 * lambda.sqrt() + 20.0) as u64;
    let mut fp = 0.0;
    for j in 0..=hi {
        let jf = j as f64;
        let log_p = -lambda + jf * lambda.ln() - ln_factorial(j);
        let fill = 1.0 - miss.powf(k as f64 * jf);
        fp += log_p.exp() * fill.powi(k as i32);
    }
    fp.min(1.0)
}

fn ln_factorial(n: u64) -> f64 {
    (1..=n).map(|i| (i as f64).ln()).sum()
}

#[inline]
fn block_index(d: &Sha1Digest, blocks: u64) -> usize {
    let x = u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]);
    ((x as u128 * blocks as u128) >> 64) as usize
}

#[inline]
fn positions(d: &Sha1Digest) -> u64 {
    u64::from_be_bytes([d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15]])
}

/// Set `key`'s bits in `filter` (`blocks × 64` bytes).
pub fn insert(filter: &mut [u8], blocks: u64, k: u32, key: &Sha1Digest) {
    let base = block_index(key, blocks) * BLOCK_BYTES;
    let mut p = positions(key);
    for _ in 0..k.min(MAX_K) {
        let bit = (p & 511) as usize;
        if let Some(byte) = filter.get_mut(base + (bit >> 3)) {
            *byte |= 1 << (bit & 7);
        }
        p >>= 9;
    }
}

/// May `key` be in the filter? `false` means certainly not. A filter slice shorter than
/// `blocks × 64` (corrupt file) answers `true`, which only costs an exact-table search.
#[inline]
pub fn may_contain(filter: &[u8], blocks: u64, k: u32, key: &Sha1Digest) -> bool {
    let base = block_index(key, blocks) * BLOCK_BYTES;
    let Some(block) = filter.get(base..base + BLOCK_BYTES) else {
        return true;
    };
    let mut p = positions(key);
    let mut all = true;
    for _ in 0..k.min(MAX_K) {
        let bit = (p & 511) as usize;
        // Branch-free accumulate: random keys mostly fail early, but a branch per bit
        // mispredicts; one AND chain and one final test is faster.
        all &= block[bit >> 3] & (1 << (bit & 7)) != 0;
        p >>= 9;
    }
    all
}

/// An in-memory filter (for stop lists and the builder).
#[derive(Debug, Clone)]
pub struct BlockedBloom {
    bytes: Vec<u8>,
    blocks: u64,
    k: u32,
}

impl BlockedBloom {
    /// A filter sized for `keys` keys at `bits_per_key` bits each.
    pub fn with_capacity(keys: u64, bits_per_key: u32, k: u32) -> Self {
        let blocks = blocks_for(keys, bits_per_key);
        BlockedBloom { bytes: vec![0; (blocks as usize) * BLOCK_BYTES], blocks, k: k.clamp(1, MAX_K) }
    }
    pub fn insert(&mut self, key: &Sha1Digest) {
        insert(&mut self.bytes, self.blocks, self.k, key);
    }
    pub fn may_contain(&self, key: &Sha1Digest) -> bool {
        may_contain(&self.bytes, self.blocks, self.k, key)
    }
    pub fn blocks(&self) -> u64 {
        self.blocks
    }
    pub fn k(&self) -> u32 {
        self.k
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use detector::fingerprint::sha1;

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives() {
        let n = 20_000u32;
        let mut f = BlockedBloom::with_capacity(n as u64, BITS_PER_KEY, K);
        for i in 0..n {
            f.insert(&sha1(&i.to_le_bytes()));
        }
        for i in 0..n {
            assert!(f.may_contain(&sha1(&i.to_le_bytes())));
        }
        let trials = 200_000u32;
        let fp = (n..n + trials).filter(|i| f.may_contain(&sha1(&i.to_le_bytes()))).count();
        let rate = fp as f64 / trials as f64;
        assert!(rate < 0.02, "fp rate {rate}");
    }

    #[test]
    fn sizing_at_wikipedia_scale() {
        assert_eq!(bytes_for(75_000_000, BITS_PER_KEY), 93_750_016);
        assert!(bytes_for(75_000_000, BITS_PER_KEY) <= 100_000_000);
        let fp = expected_fp_rate(75_000_000, blocks_for(75_000_000, BITS_PER_KEY), K);
        assert!((0.009..0.0105).contains(&fp), "{fp}");
        assert_eq!(blocks_for(0, 10), 1);
    }

    #[test]
    fn short_filter_never_panics() {
        assert!(may_contain(&[], 10, K, &[0xff; 20]));
    }
}
