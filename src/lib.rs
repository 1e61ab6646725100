//! `ditto`: the pipeline wiring, sources, reports and CLI on top of `detector`,
//! `labelsets` and `store`. See ARCHITECTURE.md for the tour.

pub mod source;
