//! Byte-level pieces both tables of a `.dls` file share (the chunks' in `format`, the
//! passages' in `passages`): bounds-checked little-endian reads and the prefix index.

/// The u32 at `at`, little-endian; `None` past the end.
pub(crate) fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The u64 at `at`, little-endian; `None` past the end.
pub(crate) fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A prefix index from per-bucket entry counts: the u32 position of each bucket's first entry,
/// then `n` (the end).
pub(crate) fn prefix_index(counts: Vec<u32>, n: u64) -> Vec<u8> {
    let mut index = Vec::with_capacity((counts.len() + 1) * 4);
    let mut pos = 0u32;
    for c in counts {
        index.extend_from_slice(&pos.to_le_bytes());
        pos += c;
    }
    index.extend_from_slice(&(n as u32).to_le_bytes());
    index
}
