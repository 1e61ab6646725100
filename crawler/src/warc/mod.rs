//! WARC files in one place: the scan's streaming reader, records to pages, and the
//! crawler's writer, sharing one record type ([`WarcRecord`]) and one error type
//! ([`WarcError`], by [`WarcErrorKind`]).
//!
//! | file | what |
//! | --- | --- |
//! | `record.rs` | [`WarcRecord`]: header fields and block, read or to be written |
//! | `error.rs` | [`WarcError`] and its kinds (reader errors, record issues, file errors) |
//! | `input.rs` | the reader's buffered input and gzip members |
//! | `reader.rs` | [`WarcReader`]: records from any `Read`, with recovery |
//! | `pages.rs` | [`WarcPages`]: `response`/`resource` records as [`detector::Page`]s |
//! | `http.rs` | archived HTTP responses: head, de-chunking, decoding |
//! | `writer.rs` | [`WarcWriter`]: a crawl's fetches into rotating `.warc.gz` files |
//! | `date.rs` | `WARC-Date` parsing and formatting |
//! | `remote.rs` | [`RemoteFile`]: a WARC over HTTP(S), resumed with `Range` (feature `net`) |

mod date;
mod error;
pub mod http;
mod input;
mod pages;
mod reader;
mod record;
#[cfg(feature = "net")]
mod remote;
mod writer;

pub use date::{parse_warc_date, warc_date};
pub use error::{printable, WarcError, WarcErrorKind};
pub use pages::{convert_record, record_to_page, Conversion, PageStats, WarcPages, DEFAULT_MAX_BODY};
pub use reader::{WarcReader, WarcStats, DEFAULT_MAX_RECORD};
pub use record::WarcRecord;
#[cfg(feature = "net")]
pub use remote::{client as remote_client, RemoteClient, RemoteFile, RemoteOptions, RemoteStats};
pub use writer::{
    base32, complete_members_len, recover_open_file, recover_open_files, sha1_base32, FetchRecord, Recovery,
    WarcInfo, WarcLocation, WarcWriter, OPEN_SUFFIX, WARC_SUFFIX,
};
