//! `ditto`: the pipeline wiring, sources, reports and CLI glue on top of `detector`,
//! `labelsets` and `store`. See ARCHITECTURE.md for the tour.

pub mod api;
pub mod counting;
pub mod crawl;
pub mod crawl_progress;
pub mod demo;
pub mod discover;
pub mod labels;
pub mod live_origins;
pub mod metrics_http;
pub mod novel;
pub mod origins_cmd;
#[cfg(feature = "parquet")]
pub mod parquet_export;
pub mod partitions;
pub mod pipeline;
pub mod quilts_cmd;
pub mod recrawl;
pub mod replicas;
pub mod report;
pub mod review;
pub mod source;
pub mod summary;
pub mod testweb;
