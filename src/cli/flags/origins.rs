//! `ditto origins` flags.
