//! `ditto replicas` flags.
