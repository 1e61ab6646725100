//! Offline sources: WARC files and directories of pages. Both produce
//! [`detector::Page`]s that enter the pipeline at the same place as crawler fetches.

pub mod dir;
pub mod http;
pub mod warc;
