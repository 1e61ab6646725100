//! `ditto scan` flags.
