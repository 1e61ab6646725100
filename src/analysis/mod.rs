//! Analyses over a finished store: near-replicas and recrawl plans, novel text, quilts,
//! origins, discovery of frequent chunks, and the bounded-memory counting they share.

pub mod counting;
pub mod discover;
pub mod novel;
pub mod origins;
pub mod quilts;
pub mod recrawl;
pub mod replicas;
