//! The integration tests as modules of one test binary (`cargo test --test it`): one link of
//! the `ditto` library for all of them instead of one per file. A module's tests are named
//! `<file>::<test>` (filter with `cargo test --release --test it <file>::`). Tests run in
//! parallel threads across modules; files whose checks depend on timing or on having the
//! process to themselves stay their own binaries in `tests/` (politeness and rate measured on
//! the test web's clock, kills at fixed moments, feature-gated Parquet).

#[path = "../common/mod.rs"]
mod common;

mod architecture;
mod crawl_honest;
mod crawl_warc_rescan;
mod digest_skip;
mod discover_counting;
mod discover_store;
mod disk_full;
mod edited_copies;
mod exit_codes;
mod first_hour;
mod hostile_input;
mod kill_resume;
mod labelset_check;
mod near_dup_live;
mod origins_live;
mod origins_stream;
mod parallel_sources;
mod partition_report;
mod plugin_example;
mod python_plugin;
mod quilts_web;
mod readme_walkthrough;
mod recrawl;
mod recrawl_novel;
mod recrawl_reuse;
mod remote_scan;
mod replicas_reuse;
mod review_browser;
mod review_stopchunks;
mod review_web;
mod setup_command;
mod shared_data;
mod small_web;
mod spark_discover;
mod spark_scan;
mod store_faults;
mod store_lifecycle;
mod warc_reader;
