//! The commands whose flags are in `super::flags`: each turns its flags into the engine's
//! config, runs the engine, and prints the outcome. The analyses (`replicas`, `quilts`, …)
//! print from the engine and are called straight from `super::main`.

pub mod crawl;
pub mod labelset;
pub mod report;
pub mod scan;
pub mod stats;
pub mod store;
