//! `crawler`: fetching politely. It knows nothing of detection: pages out, links and
//! priorities in (DESIGN.md).
pub mod connections;
pub mod crawl;
pub mod directives;
pub mod dns;
pub mod error;
#[cfg(feature = "net")]
pub mod fetch;
#[cfg(feature = "net")]
pub mod fetch_sockets;
pub mod headers_first;
pub mod partition;
pub mod politeness;
pub mod robots;
pub mod sitemap;
pub mod urls;
pub mod validators;
pub mod warc;

pub use error::CrawlError;
