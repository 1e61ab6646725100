//! Sorted spill runs: how a build keeps its chunk table within `--memory`.
//!
//! The builder holds `(digest, source)` pairs in memory up to a budget; past it, it sorts
//! them, drops repeated digests (the lowest source id stays) and writes them to a run file
//! in the on-disk entry format (20-byte digest + u32 LE source). At the end the runs are
//! merged in `(digest, source)` order, keeping the first of each digest, into one file of
//! distinct entries the writer streams from: the same entries, in the same order, as sorting
//! everything in memory.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use detector::{Sha1Digest, SourceId};

use crate::format::ENTRY_BYTES;
use crate::{io_err, Result};

type Entry = (Sha1Digest, SourceId);

/// The runs of one build, in a private directory removed on drop.
#[derive(Debug)]
pub(crate) struct Runs {
    dir: PathBuf,
    runs: Vec<PathBuf>,
    /// Entries written to runs (after each run's own deduplication).
    pub spilled: u64,
    merges: u32,
    next_run: u32,
}

impl Runs {
    pub fn new(tmp_dir: &Path) -> Result<Runs> {
        let dir = tmp_dir.join(format!(
            "ditto-labelset-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        Ok(Runs { dir, runs: Vec::new(), spilled: 0, merges: 0, next_run: 0 })
    }

    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Sort and deduplicate `entries` (lowest source first) and write them as one run; the
    /// vector is left empty, its capacity kept. Sorted on `threads` threads.
    pub fn spill(&mut self, entries: &mut Vec<Entry>, threads: usize) -> Result<()> {
        crate::parallel_sort::sort_dedup(entries, threads, |e| e.0[0], |a, b| a.0 == b.0);
        let path = self.dir.join(format!("run-{:05}", self.next_run));
        self.next_run += 1;
        let file = File::create(&path).map_err(io_err(&path))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        for (d, s) in entries.iter() {
            w.write_all(d).map_err(io_err(&path))?;
            w.write_all(&s.to_le_bytes()).map_err(io_err(&path))?;
        }
        w.flush().map_err(io_err(&path))?;
        self.spilled += entries.len() as u64;
        self.runs.push(path);
        entries.clear();
        Ok(())
    }

    /// Merge every run into one file of distinct entries (the first, lowest source of each
    /// digest), returning its path and the number of entries. The merged file is then the
    /// only run, so the builder can take more entries and be written again.
    pub fn merge(&mut self) -> Result<(PathBuf, u64)> {
        let out = self.dir.join(format!("merged-{:05}", self.merges));
        self.merges += 1;
        let file = File::create(&out).map_err(io_err(&out))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let mut readers = Vec::with_capacity(self.runs.len());
        for p in &self.runs {
            readers.push(RunReader::open(p)?);
        }
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(e) = r.next()? {
                heap.push(Reverse((e, i)));
            }
        }
        let mut n = 0u64;
        let mut last: Option<Sha1Digest> = None;
        while let Some(Reverse(((d, s), i))) = heap.pop() {
            if last != Some(d) {
                w.write_all(&d).map_err(io_err(&out))?;
                w.write_all(&s.to_le_bytes()).map_err(io_err(&out))?;
                last = Some(d);
                n += 1;
            }
            if let Some(e) = readers[i].next()? {
                heap.push(Reverse((e, i)));
            }
        }
        w.flush().map_err(io_err(&out))?;
        drop(readers);
        for p in self.runs.drain(..) {
            let _ = std::fs::remove_file(p);
        }
        self.runs.push(out.clone());
        self.spilled = n;
        Ok((out, n))
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct RunReader {
    path: PathBuf,
    r: BufReader<File>,
}

impl RunReader {
    fn open(path: &Path) -> Result<RunReader> {
        let f = File::open(path).map_err(io_err(path))?;
        Ok(RunReader { path: path.into(), r: BufReader::with_capacity(1 << 20, f) })
    }

    fn next(&mut self) -> Result<Option<Entry>> {
        let mut rec = [0u8; ENTRY_BYTES];
        match self.r.read_exact(&mut rec) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(io_err(&self.path)(e)),
        }
        let mut d: Sha1Digest = [0; 20];
        d.copy_from_slice(&rec[..20]);
        let s = SourceId::from_le_bytes([rec[20], rec[21], rec[22], rec[23]]);
        Ok(Some((d, s)))
    }
}
