//! Sorted spill runs: how a build keeps its tables within `--memory`.
//!
//! The builder holds records in memory up to a budget; past it, it sorts them, drops
//! repeats and writes them to a run file of fixed-size records ([`Record`]). At the end the
//! runs are merged, a k-way merge in record order, into one file the writer streams from.
//! Two tables spill so:
//!
//! - the chunk table's `(digest, source)` entries, in the on-disk entry format (20-byte
//!   digest + u32 LE source); a run keeps the first (lowest source) of each digest, and so
//!   does the merge ([`Runs::merge_first`]): the same entries, in the same order, as sorting
//!   everything in memory;
//! - the passage table's `(key, source)` pairs (u64 LE table key + u32 LE source, 12 bytes);
//!   a run keeps every distinct pair, and the merge groups them by key to drop stop passages
//!   (`crate::passages::merge_runs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use detector::{Sha1Digest, SourceId};

use crate::{io_err, Result};

/// A fixed-size record of a run file, ordered as the merge yields them.
pub(crate) trait Record: Copy + Ord {
    const BYTES: usize;
    fn put(&self, out: &mut [u8]);
    fn get(b: &[u8]) -> Self;
}

/// A chunk-table entry.
pub(crate) type Entry = (Sha1Digest, SourceId);

impl Record for Entry {
    /// `crate::format::ENTRY_BYTES` (not imported: the format imports the passages, which
    /// import this module).
    const BYTES: usize = 24;
    fn put(&self, out: &mut [u8]) {
        out[..20].copy_from_slice(&self.0);
        out[20..24].copy_from_slice(&self.1.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        let mut d: Sha1Digest = [0; 20];
        d.copy_from_slice(&b[..20]);
        (d, SourceId::from_le_bytes([b[20], b[21], b[22], b[23]]))
    }
}

/// A passage pair: table key (`crate::passages::table_key`) and source.
impl Record for (u64, SourceId) {
    const BYTES: usize = 12; // `crate::passages::PAIR_BYTES`
    fn put(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.0.to_le_bytes());
        out[8..12].copy_from_slice(&self.1.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        let mut k = [0u8; 8];
        k.copy_from_slice(&b[..8]);
        (u64::from_le_bytes(k), SourceId::from_le_bytes([b[8], b[9], b[10], b[11]]))
    }
}

/// The runs of one table of one build, in a private directory removed on drop.
#[derive(Debug)]
pub(crate) struct Runs<R> {
    dir: PathBuf,
    runs: Vec<PathBuf>,
    /// Records written to runs (after each run's own deduplication).
    pub spilled: u64,
    merges: u32,
    next_run: u32,
    _record: PhantomData<R>,
}

impl<R: Record> Runs<R> {
    /// `label` names the table (the directory's suffix), so two tables' runs never meet.
    pub fn new(tmp_dir: &Path, label: &str) -> Result<Runs<R>> {
        let dir = tmp_dir.join(format!(
            "ditto-labelset-{}-{}-{label}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        Ok(Runs { dir, runs: Vec::new(), spilled: 0, merges: 0, next_run: 0, _record: PhantomData })
    }

    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Write `records`, already sorted and deduplicated, as one run; the vector is left
    /// empty, its capacity kept.
    pub fn spill_sorted(&mut self, records: &mut Vec<R>) -> Result<()> {
        let path = self.dir.join(format!("run-{:05}", self.next_run));
        self.next_run += 1;
        let mut w = RunWriter::create(&path)?;
        for r in records.iter() {
            w.push(r)?;
        }
        self.spilled += w.finish()?;
        self.runs.push(path);
        records.clear();
        Ok(())
    }

    /// Merge every run, in record order, into one file: `keep` sees each record (then `None`
    /// once, at the end) and writes what it keeps to the writer. Returns the merged file's
    /// path and record count; the merged file is then the only run, so the builder can take
    /// more records and be written again.
    pub fn merge(
        &mut self,
        mut keep: impl FnMut(Option<R>, &mut RunWriter<R>) -> Result<()>,
    ) -> Result<(PathBuf, u64)> {
        let out = self.dir.join(format!("merged-{:05}", self.merges));
        self.merges += 1;
        let mut w = RunWriter::create(&out)?;
        let mut readers = Vec::with_capacity(self.runs.len());
        for p in &self.runs {
            readers.push(RunReader::<R>::open(p)?);
        }
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(e) = r.next()? {
                heap.push(Reverse((e, i)));
            }
        }
        while let Some(Reverse((e, i))) = heap.pop() {
            keep(Some(e), &mut w)?;
            if let Some(e) = readers[i].next()? {
                heap.push(Reverse((e, i)));
            }
        }
        keep(None, &mut w)?;
        let n = w.finish()?;
        drop(readers);
        for p in self.runs.drain(..) {
            let _ = std::fs::remove_file(p);
        }
        self.runs.push(out.clone());
        self.spilled = n;
        Ok((out, n))
    }
}

impl Runs<Entry> {
    /// Sort and deduplicate `entries` (lowest source first) on `threads` threads and write
    /// them as one run.
    pub fn spill(&mut self, entries: &mut Vec<Entry>, threads: usize) -> Result<()> {
        crate::parallel_sort::sort_dedup(entries, threads, |e| e.0[0], |a, b| a.0 == b.0);
        self.spill_sorted(entries)
    }

    /// Merge into one file of distinct entries (the first, lowest source of each digest).
    pub fn merge_first(&mut self) -> Result<(PathBuf, u64)> {
        let mut last: Option<Sha1Digest> = None;
        self.merge(|e, w| match e {
            Some((d, s)) if last != Some(d) => {
                last = Some(d);
                w.push(&(d, s))
            }
            _ => Ok(()),
        })
    }
}

impl<R> Drop for Runs<R> {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Writes a run file a record at a time.
pub(crate) struct RunWriter<R> {
    path: PathBuf,
    w: BufWriter<File>,
    n: u64,
    buf: Vec<u8>,
    _record: PhantomData<R>,
}

impl<R: Record> RunWriter<R> {
    fn create(path: &Path) -> Result<RunWriter<R>> {
        let file = File::create(path).map_err(io_err(path))?;
        Ok(RunWriter {
            path: path.into(),
            w: BufWriter::with_capacity(1 << 20, file),
            n: 0,
            buf: vec![0; R::BYTES],
            _record: PhantomData,
        })
    }

    pub fn push(&mut self, r: &R) -> Result<()> {
        r.put(&mut self.buf);
        self.w.write_all(&self.buf).map_err(io_err(&self.path))?;
        self.n += 1;
        Ok(())
    }

    fn finish(mut self) -> Result<u64> {
        self.w.flush().map_err(io_err(&self.path))?;
        Ok(self.n)
    }
}

/// Reads a run file's records in order.
pub(crate) struct RunReader<R> {
    path: PathBuf,
    r: BufReader<File>,
    buf: Vec<u8>,
    _record: PhantomData<R>,
}

impl<R: Record> RunReader<R> {
    pub fn open(path: &Path) -> Result<RunReader<R>> {
        let f = File::open(path).map_err(io_err(path))?;
        Ok(RunReader {
            path: path.into(),
            r: BufReader::with_capacity(1 << 20, f),
            buf: vec![0; R::BYTES],
            _record: PhantomData,
        })
    }

    pub fn next(&mut self) -> Result<Option<R>> {
        match self.r.read_exact(&mut self.buf) {
            Ok(()) => Ok(Some(R::get(&self.buf))),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(io_err(&self.path)(e)),
        }
    }
}
