//! Per-bit counts of 1s over many 64-bit values: the SimHash's bit rule over a page's word
//! hashes, counted in the word pass (`crate::fingerprint::long_words`) and by
//! `crate::shingles`. Apart from `crate::simhash` so that the shingles need not import it
//! (which imports the shingles' word hashes).

/// Per-bit counts of 1s over many 64-bit values, 8 additions per value instead of 64: each
/// byte of a value selects, from a table, a word whose 8 bytes are that byte's bits; the 8
/// byte-lane counters are flushed to wide counters before any lane can reach 256.
pub(crate) struct BitCounts {
    lanes: [u64; 8],
    pending: u32,
    wide: [u32; 64],
    total: u32,
}

/// `SPREAD[b]` has byte j equal to bit j of `b`.
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            if (b >> j) & 1 == 1 {
                t[b] |= 1u64 << (8 * j);
            }
            j += 1;
        }
        b += 1;
    }
    t
};

impl Default for BitCounts {
    fn default() -> Self {
        BitCounts { lanes: [0; 8], pending: 0, wide: [0; 64], total: 0 }
    }
}

impl BitCounts {
    #[inline]
    pub(crate) fn add(&mut self, h: u64) {
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            *lane += SPREAD[((h >> (8 * k)) & 0xff) as usize];
        }
        self.pending += 1;
        self.total += 1;
        if self.pending == 255 {
            self.flush();
        }
    }

    /// `add` of `hashes[..n]`; with `AVX512`, by byte masks
    /// ([`avx512::add_bits`]).
    #[inline(always)]
    pub(crate) fn add_batch<const AVX512: bool>(&mut self, hashes: &[u64; 8], n: usize) {
        #[cfg(target_arch = "x86_64")]
        if AVX512 {
            // SAFETY: `AVX512` is true only below the word pass's AVX-512 `count_long_words`,
            // which runs only on a CPU with the features.
            unsafe { self.add_zero_padded(hashes, n, n) };
            return;
        }
        for &h in hashes.iter().take(n) {
            self.add(h);
        }
    }

    /// `add` of the first `n` of `hashes`, by byte masks over the first `lanes` (≥ `n`;
    /// hashes `n..lanes` must be 0: they add nothing).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    pub(crate) unsafe fn add_zero_padded(&mut self, hashes: &[u64; 8], n: usize, lanes: usize) {
        // No byte counter may pass 255.
        if self.pending as usize + n > 255 {
            self.flush();
        }
        // SAFETY: the caller's CPU has the features.
        unsafe { avx512::add_bits(&mut self.lanes, hashes, lanes) };
        self.pending += n as u32;
        self.total += n as u32;
    }

    fn flush(&mut self) {
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            for j in 0..8 {
                self.wide[8 * k + j] += ((*lane >> (8 * j)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.pending = 0;
    }

    /// Count of 1s per bit position (bit i of the values), and how many values.
    pub(crate) fn finish(mut self) -> ([u32; 64], u32) {
        self.flush();
        (self.wide, self.total)
    }

    /// Charikar's bit rule with unit weights over the values added: bit i is set when
    /// V_i = ones_i − (n − ones_i) > 0, i.e. 2·ones_i > n.
    pub(crate) fn simhash(self) -> u64 {
        let (ones, n) = self.finish();
        ones.iter().enumerate().fold(0u64, |acc, (i, &o)| if 2 * o > n { acc | (1 << i) } else { acc })
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// Count the bits of `hashes[..n]` into the byte counters `lanes` (byte i of the 64
    /// counts bit i): a byte mask of each hash's bits, subtracted (−1 per set bit).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    pub(super) unsafe fn add_bits(lanes: &mut [u64; 8], hashes: &[u64; 8], n: usize) {
        // SAFETY: `lanes` is 64 bytes.
        let mut acc = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) };
        for &h in hashes.iter().take(n) {
            acc = _mm512_sub_epi8(acc, _mm512_movm_epi8(h));
        }
        // SAFETY: as above.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), acc) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingles::fmix64;

    #[test]
    fn bit_counts_match_a_plain_count() {
        let mut c = BitCounts::default();
        let mut plain = [0u32; 64];
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..1000 {
            x = fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            c.add(x);
            for (i, p) in plain.iter_mut().enumerate() {
                *p += ((x >> i) & 1) as u32;
            }
        }
        c.add(u64::MAX);
        plain.iter_mut().for_each(|p| *p += 1);
        assert_eq!(c.finish(), (plain, 1001));
    }
}
