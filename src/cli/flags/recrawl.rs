//! `ditto recrawl` flags.
