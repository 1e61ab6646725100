//! `ditto stats` flags.
