//! The frontier's queues in memory, with an append-only log in the store as their durable
//! copy (issue 37). Every queued link used to be one sled key under its host (`q/`), and
//! each sled insert copies, logs and checksums the leaf it lands in: at 100,000 hosts a
//! page's new URLs went to as many cold leaves, and with 30 links a page the queue's keys
//! took a quarter of a crawl's CPU (docs/benchmarks/issue-37.md, "Session 8").
//!
//! | prefix | key | value |
//! |---|---|---|
//! | `ql/` | record number BE | queued entries, in the order queued: id (u64 BE), host key (varint length + bytes), priority (u32 BE), entry ([`crate::queue_entry::encode_queued`]: varint length + bytes) |
//! | `qd/` | record number BE | ids (u64 BE each) of finished entries whose `ql/` record still holds live ones |
//!
//! - A link batch's new entries are one `ql/` record: one sled insert at the tree's end.
//! - An entry's id is unique and increasing (sled's `generate_id`): it orders the entries
//!   of one priority within a host, as the sequence in a `q/` key did.
//! - In memory, queued entries sit in one ordered map under the key a `q/` entry had
//!   (host, priority, id), so a host's best entry is the first of its range; taken entries
//!   are held by their URL's fingerprint until finished.
//! - Finishing an entry (its page's batch, or [`crate::Store::frontier_finish`]) writes its
//!   id into a `qd/` record in the same atomic batch; when that leaves its `ql/` record no
//!   live entry, the batch removes the record instead. A kill leaves every unfinished entry
//!   in the log: the next load queues it again, as a `q/` entry's ticket did.
//! - Loading (the first frontier call of a process) reads the log and the done marks once,
//!   drops records with nothing live, rewrites the done marks of the live ones, and moves
//!   `q/` entries left by a version before format 6 into the log.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::queue_entry::{
    be_u64s, decode_entry, encode_queued, fp_key, queue_key, queue_key_of, FrontierEntry, QUEUE,
};
use crate::record::{put_v, Reader};
use crate::{corrupt, Result, Store};

pub(crate) const LOG: &[u8] = b"ql/";
pub(crate) const DONE: &[u8] = b"qd/";
/// Done marks written per `qd/` record when the marks are rewritten at load.
const DONE_PER_RECORD: usize = 4096;

/// One queued entry: where its durable copy is, and its value.
#[derive(Debug, Clone)]
pub(crate) struct Queued {
    pub(crate) record: u64,
    pub(crate) value: Vec<u8>,
}

/// An entry handed to the crawler and not finished.
#[derive(Debug, Clone)]
pub(crate) struct Ticket {
    pub(crate) key: Vec<u8>,
    pub(crate) entry: Queued,
}

impl Ticket {
    /// The entry's id: the last 8 bytes of its queue key.
    pub(crate) fn id(&self) -> u64 {
        key_id(&self.key)
    }
}

/// The number of a `ql/` or `qd/` record from its key.
fn record_number(k: &[u8]) -> Result<u64> {
    <[u8; 8]>::try_from(&k[k.len().min(3)..])
        .map(u64::from_be_bytes)
        .map_err(|_| corrupt(&String::from_utf8_lossy(k), "queue log key is not a prefix and 8 bytes"))
}

/// The id in a queue key this module built (its last 8 bytes).
fn key_id(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&key[key.len() - 8..]);
    u64::from_be_bytes(b)
}

/// The queues in memory (see the module notes).
#[derive(Debug, Default)]
pub(crate) struct Queues {
    loaded: bool,
    /// Queued and not taken, by queue key (`q/` host `\0` (u32::MAX − priority) BE, id BE).
    pub(crate) queued: BTreeMap<Vec<u8>, Queued>,
    /// Taken, by URL fingerprint.
    pub(crate) taken: HashMap<u64, Ticket>,
    /// Unfinished entries (queued or taken) of each `ql/` record.
    live: HashMap<u64, u32>,
}

impl Queues {
    /// Entries of this process's queues that are taken.
    pub(crate) fn taken_len(&self) -> usize {
        self.taken.len()
    }

    pub(crate) fn add(&mut self, key: Vec<u8>, entry: Queued) {
        *self.live.entry(entry.record).or_default() += 1;
        self.queued.insert(key, entry);
    }

    /// Write the finish of `tickets` into `batch`: a done mark for each, under one new `qd/`
    /// record, except for records left with no live entry, which are removed. Memory changes
    /// only in [`Queues::finished`], once the batch is applied.
    pub(crate) fn write_finish(
        &self,
        store: &Store,
        tickets: &[&Ticket],
        batch: &mut sled::Batch,
    ) -> Result<()> {
        let mut per_record: HashMap<u64, u32> = HashMap::new();
        for t in tickets {
            *per_record.entry(t.entry.record).or_default() += 1;
        }
        let mut marks = Vec::new();
        for t in tickets {
            let left = self.live.get(&t.entry.record).copied().unwrap_or(0);
            if left > per_record[&t.entry.record] {
                marks.extend_from_slice(&t.id().to_be_bytes());
            }
        }
        for (record, n) in per_record {
            if self.live.get(&record).copied().unwrap_or(0) <= n {
                batch.remove(fp_key(LOG, record));
            }
        }
        if !marks.is_empty() {
            batch.insert(fp_key(DONE, store.db.generate_id()?), marks);
        }
        Ok(())
    }

    /// The tickets of these fingerprints are finished (their batch applied).
    pub(crate) fn finished(&mut self, fps: &[u64]) {
        for fp in fps {
            if let Some(t) = self.taken.remove(fp) {
                if let Some(n) = self.live.get_mut(&t.entry.record) {
                    *n -= 1;
                    if *n == 0 {
                        self.live.remove(&t.entry.record);
                    }
                }
            }
        }
    }
}

/// A `ql/` record of `entries`: each with its id and its value ([`encode_queued`]), encoded
/// once by the caller, who keeps it for the queues in memory.
pub(crate) fn encode_record<'a>(
    entries: impl IntoIterator<Item = (u64, &'a FrontierEntry, &'a [u8])>,
) -> Vec<u8> {
    let mut v = Vec::new();
    for (id, e, value) in entries {
        v.extend_from_slice(&id.to_be_bytes());
        put_v(&mut v, e.host_key.len() as u64);
        v.extend_from_slice(e.host_key.as_bytes());
        v.extend_from_slice(&e.priority.to_be_bytes());
        put_v(&mut v, value.len() as u64);
        v.extend_from_slice(value);
    }
    v
}

/// The entries of a `ql/` record: (queue key, compact value).
pub(crate) fn decode_record(k: &[u8], v: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let damaged = |why: String| corrupt(&String::from_utf8_lossy(k), why);
    let mut r = Reader { b: v };
    let mut out = Vec::new();
    while !r.b.is_empty() {
        let id = u64::from_be_bytes(r.array::<8>().map_err(damaged)?);
        let host_len = r.v().map_err(damaged)? as usize;
        let host = r.take(host_len).map_err(damaged)?;
        if host.contains(&0) {
            return Err(damaged("host key holds a NUL byte".into()));
        }
        let priority = u32::from_be_bytes(r.array::<4>().map_err(damaged)?);
        let value_len = r.v().map_err(damaged)? as usize;
        let value = r.take(value_len).map_err(damaged)?.to_vec();
        let key = queue_key_of(host, priority, id);
        // Checked now, so that a pop never meets a value it cannot read.
        decode_entry(&key, &value)?;
        out.push((key, value));
    }
    Ok(out)
}

/// The ids of a `qd/` record.
pub(crate) fn decode_done(k: &[u8], v: &[u8]) -> Result<Vec<u64>> {
    be_u64s(v).ok_or_else(|| corrupt(&String::from_utf8_lossy(k), "done marks of a wrong length"))
}

impl Store {
    /// The queues in memory, loaded from the store on first use (see the module notes).
    pub(crate) fn queues(&self) -> Result<std::sync::MutexGuard<'_, Queues>> {
        let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        if !q.loaded {
            // Into a new value: a load that fails leaves nothing half read behind.
            let mut loaded = Queues::default();
            self.load_queues(&mut loaded)?;
            loaded.loaded = true;
            *q = loaded;
        }
        Ok(q)
    }

    fn load_queues(&self, q: &mut Queues) -> Result<()> {
        self.move_old_queue_entries_to_the_log()?;
        let mut done = HashSet::new();
        let mut done_keys = Vec::new();
        for kv in self.tree.scan_prefix(DONE) {
            let (k, v) = kv?;
            done.extend(decode_done(&k, &v)?);
            done_keys.push(k.to_vec());
        }
        let mut dead = Vec::new();
        let mut marks_kept = Vec::new();
        for kv in self.tree.scan_prefix(LOG) {
            let (k, v) = kv?;
            let record = record_number(&k)?;
            let live_before = q.queued.len();
            let mut marks = Vec::new();
            for (key, value) in decode_record(&k, &v)? {
                let id = key_id(&key);
                if done.contains(&id) {
                    marks.push(id);
                } else {
                    q.add(key, Queued { record, value });
                }
            }
            if q.queued.len() == live_before {
                dead.push(k.to_vec());
            } else {
                marks_kept.extend(marks);
            }
        }
        // The marks of live records again, then the old marks and the dead records out, in
        // batches of bounded size: a crash in between leaves marks twice (a set) or dead
        // records (dropped at the next load), never an unfinished entry marked.
        for chunk in marks_kept.chunks(DONE_PER_RECORD) {
            let v: Vec<u8> = chunk.iter().flat_map(|id| id.to_be_bytes()).collect();
            self.tree.insert(fp_key(DONE, self.db.generate_id()?), v)?;
        }
        for chunk in done_keys.chunks(crate::LINK_BATCH).chain(dead.chunks(crate::LINK_BATCH)) {
            let mut batch = sled::Batch::default();
            for k in chunk {
                batch.remove(k.as_slice());
            }
            self.tree.apply_batch(batch)?;
        }
        Ok(())
    }

    /// `q/` entries written before format 6 go into the log, a record per [`crate::LINK_BATCH`]
    /// keys, each record and the removal of its keys in one batch.
    fn move_old_queue_entries_to_the_log(&self) -> Result<()> {
        loop {
            let mut old = Vec::new();
            for kv in self.tree.scan_prefix(QUEUE).take(crate::LINK_BATCH) {
                let (k, v) = kv?;
                let e = decode_entry(&k, &v)?;
                // The key must be the entry's own (host, priority, then 8 bytes of sequence).
                if k.len() < 8 || queue_key(&e, key_id(&k)) != k.as_ref() {
                    return Err(corrupt(&String::from_utf8_lossy(&k), "queue key does not match its entry"));
                }
                old.push((k.to_vec(), e));
            }
            if old.is_empty() {
                return Ok(());
            }
            let values: Vec<Vec<u8>> = old.iter().map(|(_, e)| encode_queued(e)).collect();
            let record =
                encode_record(old.iter().zip(&values).map(|((k, e), v)| (key_id(k), e, v.as_slice())));
            let mut batch = sled::Batch::default();
            batch.insert(fp_key(LOG, self.db.generate_id()?), record);
            // A ditto that reads only format 5 cannot read the log.
            if let Some((k, v)) = self.stamp_to_raise() {
                batch.insert(k, v);
            }
            for (k, _) in &old {
                batch.remove(k.as_slice());
            }
            self.tree.apply_batch(batch)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str, host: &str, priority: u32) -> FrontierEntry {
        FrontierEntry { url: url.into(), host_key: host.into(), depth: 0, priority, hops: 0, sitemap: false }
    }

    fn keys(st: &Store, prefix: &[u8]) -> usize {
        st.tree.scan_prefix(prefix).count()
    }

    /// One record per link batch; finished entries are marked done, a record with nothing
    /// live is removed, and a reopened store queues again exactly what was not finished.
    #[test]
    fn the_log_keeps_what_is_not_finished_and_drops_what_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        {
            let st = Store::open(&path).unwrap();
            st.frontier_add(&[
                entry("http://a/1", "a", 5),
                entry("http://a/2", "a", 4),
                entry("http://b/1", "b", 3),
            ])
            .unwrap();
            st.frontier_add(&[entry("http://c/1", "c", 2)]).unwrap();
            assert_eq!((keys(&st, LOG), keys(&st, QUEUE)), (2, 0), "a record per batch, no q/ keys");
            // c's record: its only entry finished, the record goes.
            assert_eq!(st.frontier_pop("c").unwrap().unwrap().url, "http://c/1");
            st.frontier_finish("http://c/1", &[]).unwrap();
            assert_eq!((keys(&st, LOG), keys(&st, DONE)), (1, 0));
            // a/1 finished by its page's batch: a done mark, the record stays for a/2 and b/1.
            let a1 = st.frontier_pop("a").unwrap().unwrap();
            let mut p = crate::tests::page(&a1.url, b"x", 0, 1);
            p.fetched = Some((a1.url.clone(), "a".into()));
            st.write_batch(&[p]).unwrap();
            assert_eq!((keys(&st, LOG), keys(&st, DONE)), (1, 1));
            // a/2 taken, not finished: a kill leaves it queued.
            assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/2");
            assert_eq!(st.frontier_counts().unwrap(), (1, 1));
            st.flush().unwrap();
        }
        let st = Store::open(&path).unwrap();
        assert_eq!(st.frontier_counts().unwrap(), (2, 0));
        assert_eq!(st.frontier_hosts().unwrap().len(), 2);
        assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/2");
        assert!(st.frontier_pop("a").unwrap().is_none());
        assert!(st.frontier_pop("c").unwrap().is_none());
        // Loading rewrote the done marks: still one (a/1), in a record of its own.
        assert_eq!((keys(&st, LOG), keys(&st, DONE)), (1, 1));
        // Requeued: a new record; finishing b/1 and the requeued a/2 leaves nothing.
        st.frontier_requeue(&entry("http://a/2", "a", 4)).unwrap();
        assert_eq!(keys(&st, LOG), 2);
        assert_eq!(st.frontier_pop("b").unwrap().unwrap().url, "http://b/1");
        st.frontier_finish("http://b/1", &[]).unwrap();
        assert_eq!(keys(&st, LOG), 1, "the first record has nothing live now");
        assert_eq!(st.frontier_pop("a").unwrap().unwrap().url, "http://a/2");
        st.frontier_finish("http://a/2", &[]).unwrap();
        assert_eq!(keys(&st, LOG), 0);
        assert_eq!(st.frontier_counts().unwrap(), (0, 0));
        assert!(st.check().unwrap().problems.is_empty(), "{:?}", st.check().unwrap().problems);
    }

    /// A damaged record is an error at load, not a panic, and `store check` names it.
    #[test]
    fn a_damaged_log_record_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let st = Store::open(&dir.path().join("q.db")).unwrap();
        let e = entry("http://a/1", "a", 1);
        let good = encode_record([(7, &e, encode_queued(&e).as_slice())]);
        for bad in
            [&good[..good.len() - 1], &good[..5], b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff".as_slice()]
        {
            assert!(decode_record(b"ql/x", bad).is_err());
        }
        st.tree.insert(fp_key(LOG, 1), &good[..good.len() - 1]).unwrap();
        assert!(st.frontier_pop("a").is_err());
        assert!(!st.check().unwrap().problems.is_empty());
        // A key too short for a record number.
        let st = Store::open(&dir.path().join("k.db")).unwrap();
        st.tree.insert(b"ql/x", good.as_slice()).unwrap();
        assert!(st.frontier_counts().is_err());
        // A queue key of an earlier version that does not match its entry.
        let st = Store::open(&dir.path().join("o.db")).unwrap();
        st.tree.insert(b"q/x", serde_json::to_vec(&entry("http://a/1", "a", 1)).unwrap()).unwrap();
        assert!(st.frontier_counts().is_err());
    }
}
