//! `ditto quilts` flags.
