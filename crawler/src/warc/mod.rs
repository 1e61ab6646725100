//! WARC files in one place: the scan's streaming reader (with [`http`] for the archived
//! responses inside) and the crawler's writer.

pub mod http;
mod reader;
mod writer;

pub use reader::{
    convert_record, parse_warc_date, record_to_page, Conversion, PageStats, WarcError, WarcErrorKind,
    WarcPages, WarcReader, WarcRecord, WarcStats, DEFAULT_MAX_BODY, DEFAULT_MAX_RECORD,
};
pub use writer::{
    base32, complete_members_len, recover_open_file, recover_open_files, sha1_base32, warc_date, FetchRecord,
    Recovery, WarcInfo, WarcLocation, WarcWriter, OPEN_SUFFIX, WARC_SUFFIX,
};
