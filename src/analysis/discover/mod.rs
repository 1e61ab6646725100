//! Blind discovery and stop chunks (Ardi & Heidemann 2014, §3.2 step 3b and §3.4.2):
//! `ditto discover`, `ditto stopchunks suggest` and `ditto export chunks`.
//!
//! - **Discover** (§3.2): "Given a threshold, all objects o in the corpus C whose number of
//!   duplicates exceeds the threshold and are not 'stop chunks' are automatically labeled":
//!   `L := ∀o ∈ C: duplicates(o) > threshold, o ∉ {stop chunks}`. `duplicates(o)` is the
//!   number of occurrences of `o` over the whole corpus (the paper's example adds them:
//!   1000 + 100 = 1100), and the comparison is strict. Discovery "is not distributive": the
//!   count is global, computed exactly by [`crate::analysis::counting::Counter`] within `--memory`.
//!   Objects are chunks (`L_c`, every occurrence of a chunk hash in every page's chunk hash
//!   vector, §3.1 step 2) or, with `--files`, whole files (`L_f`, one file hash per page).
//!   The result is an ordinary `.dls` label set whose sources are sample URLs, so reports
//!   built on it stay explainable. The sample is the page with the smallest number: a store
//!   numbers its pages in URL order (its keys are `URL \0 file hash`), so from a store the
//!   sample is the byte-wise smallest URL holding the object — a rule the cluster path
//!   (`examples/spark/discover.py`, `min(url)`) computes too, so its hash list imported with
//!   `ditto labelset import` gives the same label set. From inputs it is the first page in
//!   reading order.
//! - **Import** (`ditto labelset import`): a hash list (`HASH<TAB>COUNT<TAB>URL`, see
//!   [`parse_hash_list`]) written as that same label set.
//! - **Stop chunks** (§3.4.2): "we manually examine the 500 most frequently occurring chunks
//!   … and identify 226 as benign". `stopchunks suggest` lists the most frequent chunks with
//!   counts, a sample URL and the text, in the stop-list text format, for a person to review.
//! - **Export** writes every chunk occurrence (hash, URL, host, neighborhood) for the cluster
//!   path (a Spark job computing the same counts).
//!
//! Pages come from a store (their stored cleaned text blocks, re-fingerprinted with the
//! store's normalization, exactly as the scan hashed them) or straight from inputs (WARC
//! files, directories, files) through the scan's own filter and clean stages. Pages are
//! counted once per (URL, body digest), as a store keeps them.

mod blind;
mod corpus;
mod export;
mod import;
mod stopchunks;

pub use blind::{discover, run_discovery, CounterStatsOut, DiscoverConfig, Discovery};
pub use corpus::{for_each_page, Corpus, InputsConfig, PageHashes, PassStats};
#[cfg(feature = "parquet")]
pub use export::export_chunks_parquet;
pub use export::{export, export_chunks_csv, export_files_csv, ExportConfig, ExportFormat, ExportRows};
pub use import::{import, import_hash_list, parse_hash_list, HashList, HashListEntry, ImportConfig};
pub use stopchunks::{
    stop_list_line, stopchunks, suggest, write_reviewed_stops, write_suggestions, StopchunksConfig,
    SuggestConfig, Suggestion,
};
