//! `ditto crawl` flags.
