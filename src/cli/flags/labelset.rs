//! `ditto labelset` flags.
