//! Detectors that run inside a scan or crawl, beside the store writer.

pub mod neardups;
pub mod origins;
