//! `ditto report` flags.
