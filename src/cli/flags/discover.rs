//! `ditto discover` flags.
