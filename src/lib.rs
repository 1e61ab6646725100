//! `ditto`, the engine: the scan pipeline and its sources, the crawl wiring, the live
//! detectors, the analyses over a finished store, and reports, on top of `detector`,
//! `labelsets`, `store` and `crawler`. The `ditto` binary is [`cli`] (cargo feature `cli`, on
//! by default); built without it (as the Python extension is) the engine needs no CLI or web
//! stack, and without `crawl` no HTTP client. See ARCHITECTURE.md for the tour.

pub mod analysis;
pub mod api;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "crawl")]
pub mod crawl;
pub mod error;
pub mod labelset;
pub mod live;
pub mod pipeline;
pub mod report;
pub mod source;

pub use error::{Error, ErrorKind, Result};
