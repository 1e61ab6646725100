//! A frontier entry and how the queues write it: its queue key (host, priority, id) and its
//! compact value; and the frontier's numbered keys and lists of numbers. Shared by `frontier` (the frontier's API) and `queues` (the queues in
//! memory and their log), so that neither imports the other's module back.

use serde::{Deserialize, Serialize};

use crate::{corrupt, Result};

/// Prefix of queue keys: the key a queued entry has in memory, and on disk under versions
/// before format 6.
pub(crate) const QUEUE: &[u8] = b"q/";

/// One URL waiting in (or taken from) the frontier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontierEntry {
    /// Canonical URL.
    pub url: String,
    pub host_key: String,
    /// Links followed from a seed (seeds are 0).
    pub depth: u32,
    /// Higher is fetched first within a host; the scheduler also prefers hosts whose best
    /// entry has a higher priority.
    pub priority: u32,
    /// Redirects followed to reach this URL (bounded by the crawler's hop limit).
    #[serde(default)]
    pub hops: u32,
    /// A sitemap to read for the URLs it lists, not a page (issue 38). Absent (false) in
    /// the JSON of every other entry, so older entries read as pages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sitemap: bool,
}

pub(crate) fn queue_key(e: &FrontierEntry, seq: u64) -> Vec<u8> {
    queue_key_of(e.host_key.as_bytes(), e.priority, seq)
}

/// The queue key of an entry of `host` at `priority` with sequence (id) `seq`.
pub(crate) fn queue_key_of(host: &[u8], priority: u32, seq: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(QUEUE.len() + host.len() + 13);
    k.extend_from_slice(QUEUE);
    k.extend_from_slice(host);
    k.push(0);
    k.extend_from_slice(&(u32::MAX - priority).to_be_bytes());
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

pub(crate) fn queue_prefix(host_key: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(QUEUE.len() + host_key.len() + 13);
    k.extend_from_slice(QUEUE);
    k.extend_from_slice(host_key.as_bytes());
    k.push(0);
    k
}

/// A key of `prefix` and a number (a URL fingerprint, a sequence), big-endian.
pub(crate) fn fp_key(prefix: &[u8], fp: u64) -> Vec<u8> {
    [prefix, &fp.to_be_bytes()[..]].concat()
}

/// A value of 8-byte big-endian numbers (`sb/` fingerprints, `qd/` ids); None when its
/// length is not a multiple of 8.
pub(crate) fn be_u64s(v: &[u8]) -> Option<Vec<u64>> {
    v.len().is_multiple_of(8).then(|| {
        v.chunks_exact(8)
            .map(|b| u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .collect()
    })
}

/// The priority in a queue key (`q/` host `\0` (u32::MAX − priority) BE, sequence BE) whose
/// host part is `prefix_len` bytes long.
pub(crate) fn queue_key_priority(k: &[u8], prefix_len: usize) -> Result<u32> {
    k.get(prefix_len..prefix_len + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(|b| u32::MAX - u32::from_be_bytes(b))
        .ok_or_else(|| corrupt(&String::from_utf8_lossy(k), "queue key without priority"))
}

/// The first byte of a compact queue value ([`encode_queued`]); JSON values start with `{`.
const COMPACT_QUEUED: u8 = 1;
/// Flag bit of a compact queue value: the entry is a sitemap.
const COMPACT_SITEMAP: u8 = 1;
/// Bytes after the host in a queue key: `\0`, the priority (4), the sequence (8).
const QUEUE_KEY_TAIL: usize = 13;

/// A queue entry's value: its host and priority are its key's, so the value is a tag byte,
/// flags, depth and hops as varints, then the URL: about 45 bytes where the entry's JSON
/// took 110. Every link a crawl queues is one sled insert, and sled copies, logs and
/// checksums the leaf it lands in; smaller values make each of those cheaper (issue 37).
pub(crate) fn encode_queued(e: &FrontierEntry) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + e.url.len());
    v.push(COMPACT_QUEUED);
    v.push(if e.sitemap { COMPACT_SITEMAP } else { 0 });
    crate::record::put_v(&mut v, u64::from(e.depth));
    crate::record::put_v(&mut v, u64::from(e.hops));
    v.extend_from_slice(e.url.as_bytes());
    v
}

/// A queue entry (`q/`, compact or JSON as written before 2026-11-29) or an `i/` or `rf/`
/// entry (JSON).
pub(crate) fn decode_entry(k: &[u8], v: &[u8]) -> Result<FrontierEntry> {
    let damaged = |why: &dyn std::fmt::Display| corrupt(&String::from_utf8_lossy(k), why);
    if v.first() != Some(&COMPACT_QUEUED) {
        return serde_json::from_slice(v).map_err(|e| damaged(&e));
    }
    let host_end =
        k.len().checked_sub(QUEUE_KEY_TAIL).filter(|&end| end >= QUEUE.len() && k.starts_with(QUEUE));
    let Some(host_end) = host_end.filter(|&end| k[end] == 0) else {
        return Err(damaged(&"compact queue value under a key that is not a queue key"));
    };
    let host_key = std::str::from_utf8(&k[QUEUE.len()..host_end]).map_err(|e| damaged(&e))?.to_owned();
    let priority = queue_key_priority(k, host_end + 1)?;
    let mut r = crate::record::Reader { b: &v[1..] };
    let fields = (|| Ok::<_, String>((r.u8()?, r.v32()?, r.v32()?)))();
    let (flags, depth, hops) = fields.map_err(|e| damaged(&e))?;
    let url = std::str::from_utf8(r.b).map_err(|e| damaged(&e))?.to_owned();
    Ok(FrontierEntry { url, host_key, depth, priority, hops, sitemap: flags & COMPACT_SITEMAP != 0 })
}
