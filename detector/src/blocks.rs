//! A page's text blocks, held in one buffer.
//!
//! The cleaner emits a few hundred blocks per page. Holding them as one `String` plus the end
//! offset of each block costs one allocation per page instead of one per block, and the text
//! is copied once (from the tokenizer's tendrils into the buffer) instead of twice; the scan's
//! later stages then walk one contiguous buffer. [`BlockList`] lets the fingerprint and
//! shingle functions take either this or a plain slice of strings.

use std::fmt;
use std::ops::Index;

/// Text blocks in document order, in one buffer: block `i` is `text[ends[i-1]..ends[i]]`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TextBlocks {
    text: String,
    ends: Vec<usize>,
}

impl TextBlocks {
    pub fn new() -> Self {
        Self::default()
    }

    /// Empty, with room for `text_bytes` of text in `blocks` blocks.
    pub fn with_capacity(text_bytes: usize, blocks: usize) -> Self {
        TextBlocks { text: String::with_capacity(text_bytes), ends: Vec::with_capacity(blocks) }
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn start(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.ends[i - 1]
        }
    }

    /// Block `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        self.text.get(self.start(i)..end)
    }

    /// The blocks in order.
    pub fn iter(&self) -> Blocks<'_> {
        Blocks { list: self, front: 0, back: self.ends.len() }
    }

    /// Append a block.
    pub fn push(&mut self, block: &str) {
        self.text.push_str(block);
        self.ends.push(self.text.len());
    }

    /// The blocks as separate strings (for storage formats and APIs that want them).
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }

    /// The blocks joined with `sep`.
    pub fn join(&self, sep: &str) -> String {
        let mut s = String::with_capacity(self.text.len() + sep.len() * self.len());
        for (i, b) in self.iter().enumerate() {
            if i > 0 {
                s.push_str(sep);
            }
            s.push_str(b);
        }
        s
    }

    /// For the cleaner, which builds a block in place: the buffer (the open block is its tail,
    /// after [`Self::committed_len`]).
    pub(crate) fn buffer_mut(&mut self) -> &mut String {
        &mut self.text
    }

    /// Bytes of the buffer that belong to finished blocks.
    pub(crate) fn committed_len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Bytes of the open block.
    pub(crate) fn open_len(&self) -> usize {
        self.text.len() - self.committed_len()
    }

    /// End the open block (the buffer's tail after [`Self::committed_len`]) as a block.
    pub(crate) fn commit(&mut self) {
        self.ends.push(self.text.len());
    }

    /// Drop the open block's text.
    pub(crate) fn discard_open(&mut self) {
        let keep = self.committed_len();
        self.text.truncate(keep);
    }
}

impl fmt::Debug for TextBlocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Index<usize> for TextBlocks {
    type Output = str;
    fn index(&self, i: usize) -> &str {
        match self.get(i) {
            Some(b) => b,
            None => panic!("block index {i} out of range for {} blocks", self.len()),
        }
    }
}

/// Iterator over [`TextBlocks`].
#[derive(Clone)]
pub struct Blocks<'a> {
    list: &'a TextBlocks,
    front: usize,
    back: usize,
}

impl<'a> Iterator for Blocks<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        if self.front >= self.back {
            return None;
        }
        let b = self.list.get(self.front);
        self.front += 1;
        b
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Blocks<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        self.back -= 1;
        self.list.get(self.back)
    }
}

impl ExactSizeIterator for Blocks<'_> {}

impl<'a> IntoIterator for &'a TextBlocks {
    type Item = &'a str;
    type IntoIter = Blocks<'a>;
    fn into_iter(self) -> Blocks<'a> {
        self.iter()
    }
}

impl<S: AsRef<str>> FromIterator<S> for TextBlocks {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut b = TextBlocks::new();
        for s in iter {
            b.push(s.as_ref());
        }
        b
    }
}

impl From<Vec<String>> for TextBlocks {
    fn from(v: Vec<String>) -> Self {
        v.iter().collect()
    }
}

impl<S: AsRef<str>> PartialEq<[S]> for TextBlocks {
    fn eq(&self, other: &[S]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for TextBlocks {
    fn eq(&self, other: &Vec<S>) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for TextBlocks {
    fn eq(&self, other: &[S; N]) -> bool {
        *self == other[..]
    }
}

impl serde::Serialize for TextBlocks {
    /// As a sequence of strings: the same as a `Vec<String>` of the blocks.
    fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        s.collect_seq(self.iter())
    }
}

/// A page's blocks, however they are held: [`TextBlocks`], or a slice, vector or array of
/// strings. The fingerprint and shingle functions take any of them.
pub trait BlockList {
    /// Number of blocks.
    fn block_count(&self) -> usize;
    /// The blocks in order.
    fn blocks(&self) -> impl Iterator<Item = &str> + Clone + '_;
    /// Bytes of text of all blocks together.
    fn text_bytes(&self) -> usize {
        self.blocks().map(str::len).sum()
    }
}

impl BlockList for TextBlocks {
    fn block_count(&self) -> usize {
        self.len()
    }
    fn blocks(&self) -> impl Iterator<Item = &str> + Clone + '_ {
        self.iter()
    }
    fn text_bytes(&self) -> usize {
        self.text.len()
    }
}

impl<S: AsRef<str>> BlockList for [S] {
    fn block_count(&self) -> usize {
        self.len()
    }
    fn blocks(&self) -> impl Iterator<Item = &str> + Clone + '_ {
        self.iter().map(AsRef::as_ref)
    }
}

// Vectors and arrays as their slices (a `&Vec<String>` argument does not coerce to a slice
// when the parameter is generic).
impl<S: AsRef<str>> BlockList for Vec<S> {
    fn block_count(&self) -> usize {
        self[..].block_count()
    }
    fn blocks(&self) -> impl Iterator<Item = &str> + Clone + '_ {
        self[..].blocks()
    }
}

impl<S: AsRef<str>, const N: usize> BlockList for [S; N] {
    fn block_count(&self) -> usize {
        self[..].block_count()
    }
    fn blocks(&self) -> impl Iterator<Item = &str> + Clone + '_ {
        self[..].blocks()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_and_index() {
        let b: TextBlocks = ["one", "", "three é"].into_iter().collect();
        assert_eq!(b.len(), 3);
        assert_eq!(b.text_bytes(), "onethree é".len());
        assert_eq!(b.get(0), Some("one"));
        assert_eq!(b.get(1), Some(""));
        assert_eq!(&b[2], "three é");
        assert_eq!(b.get(3), None);
        assert_eq!(b.iter().rev().collect::<Vec<_>>(), ["three é", "", "one"]);
        assert_eq!(b.iter().len(), 3);
        assert_eq!(b.to_vec(), vec!["one".to_string(), String::new(), "three é".into()]);
        assert_eq!(b.join(" | "), "one |  | three é");
        assert_eq!(b, ["one", "", "three é"]);
        assert_ne!(b, ["one", "three é"]);
        assert_eq!(TextBlocks::from(b.to_vec()), b);
        assert_eq!(serde_json::to_string(&b).ok().as_deref(), Some(r#"["one","","three é"]"#));
        assert_eq!(format!("{b:?}"), r#"["one", "", "three é"]"#);
        assert!(TextBlocks::new().is_empty());
    }

    #[test]
    fn open_block_commit_and_discard() {
        let mut b = TextBlocks::new();
        b.buffer_mut().push_str("kept");
        b.commit();
        b.buffer_mut().push_str("  ");
        assert_eq!((b.committed_len(), b.open_len()), (4, 2));
        b.discard_open();
        b.buffer_mut().push_str("second");
        b.commit();
        assert_eq!(b, ["kept", "second"]);
    }

    #[test]
    fn block_list_is_the_same_for_every_holder() {
        let v = vec!["a b".to_string(), "c".to_string()];
        let t: TextBlocks = v.iter().collect();
        let arr = ["a b", "c"];
        let of = |l: &dyn Fn() -> (usize, Vec<String>, usize)| l();
        let want = (2, v.clone(), 4);
        assert_eq!(of(&|| (t.block_count(), t.blocks().map(String::from).collect(), t.text_bytes())), want);
        assert_eq!(of(&|| (v.block_count(), v.blocks().map(String::from).collect(), v.text_bytes())), want);
        assert_eq!(
            of(&|| (arr.block_count(), arr.blocks().map(String::from).collect(), arr.text_bytes())),
            want
        );
        let s: &[&str] = &arr;
        assert_eq!(of(&|| (s.block_count(), s.blocks().map(String::from).collect(), s.text_bytes())), want);
    }
}
