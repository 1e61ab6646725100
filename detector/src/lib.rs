//! `detector`: ditto's detection algorithms, pure and synchronous.
//!
//! No files, no network: everything here takes bytes or strings and returns values, so the
//! same code runs inside `ditto scan`, `ditto crawl` and inside somebody else's crawler.
//!
//! The method is Ardi & Heidemann 2014, "Web-scale Content Reuse Detection" (USC/ISI
//! TR-692), §3 steps 1–6 and §3.4. Sections are cited where each definition is implemented.
//!
//! Stage map (see ARCHITECTURE.md):
//! - [`page`]: the [`Page`] type every source produces (WARC record, file, fetch).
//! - [`traps`]: recursion-error / crawler-trap heuristics on URLs (§3.4.1, appendix A).
//! - [`clean`]: HTML/text → paragraph-level text blocks + links (§3.1 step 2).
//! - [`normalize`] + [`fingerprint`]: normalized chunks, SHA-1 chunk and file hashes (§3.1 steps 1–2, §3.5).
//!   [`fingerprint::scan`]: the scan's kernel, these fused with the SimHash and text hash.
//! - [`matching`]: stop-chunk removal and `contains(L_c, f)` (§3.3 step 5, §3.4.2).
//! - [`passages`]: word k-gram anchors of the word stream: labeled text found where it was edited (issue 36).
//! - [`neighborhood`]: URL-prefix neighborhoods and `badness(N)` (§3.3 step 6).
//! - [`stats`]: mean + σ thresholds (§3, §6.3).
//! - [`shingles`], [`simhash`], [`neardup`], [`overlap`]: near-replicas (Khan & Ali 2015 SimHash,
//!   Manku et al. permuted tables, Shivakumar & Garcia-Molina 1998 overlap and clusters).
//! - [`quilts`]: quilted pages (Najork 2012): patch grams, patchfrac, greedy source cover.
//! - [`origins`]: origin of text segments in fixed memory (Abdel-Hamid et al. 2009).

pub(crate) mod bitcounts;
pub mod blocks;
pub mod clean;
pub mod fingerprint;
pub mod matching;
pub mod neardup;
pub mod neighborhood;
pub mod normalize;
pub mod origins;
pub mod overlap;
pub mod page;
pub mod passages;
pub mod quilts;
pub(crate) mod sha1_pair;
pub mod shingles;
pub mod simhash;
pub mod stats;
pub mod traps;

pub use blocks::{BlockList, TextBlocks};
pub use clean::{clean, sniff_kind, CleanOptions, CleanedDoc, DocKind, MAX_ATTRIBUTES_PER_TAG};
pub use fingerprint::{fingerprint, ChunkFingerprint, Fingerprints, Sha1Digest};
pub use matching::{match_page, ChunkLookup, ChunkMatch, PageVerdict, SourceId, StopList};
pub use neighborhood::{neighborhoods, NeighborhoodAccumulator};
pub use normalize::Normalization;
pub use page::{Page, PageOrigin};
pub use stats::MeanStd;
pub use traps::{TrapReason, TrapRules};
