//! Offline sources: directories of pages here, WARC files through [`crawler::warc`]. Both
//! produce [`detector::Page`]s that enter the pipeline at the same place as crawler fetches.

pub mod dir;
pub mod labeled;
pub mod listing;
#[cfg(feature = "crawl")]
pub mod remote;
pub mod text;
