//! Remote WARC inputs, a few in flight: while the source stage reads one file, the next
//! ones are already being fetched, each into a small bounded buffer (so memory stays
//! `in_flight × PIPE_CHUNKS × CHUNK` however large the files). Files are handed to the reader
//! in listing order, so a remote scan sees pages in the same order as a local one.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::thread::JoinHandle;

use crawler::warc::{RemoteClient, RemoteFile, RemoteOptions, RemoteStats};
use crossbeam_channel::{bounded, Receiver};

/// Bytes per message from a fetching thread.
const CHUNK: usize = 256 << 10;
/// Messages buffered per file ahead of the reader (4 MiB).
const PIPE_CHUNKS: usize = 16;

enum Msg {
    Data(Vec<u8>),
    End(RemoteStats),
    Failed(io::Error),
}

/// Fetches the files of a listing, `in_flight` at a time, in order.
pub struct Prefetcher {
    client: RemoteClient,
    opts: RemoteOptions,
    in_flight: usize,
    waiting: VecDeque<String>,
    running: VecDeque<(String, Receiver<Msg>, JoinHandle<()>)>,
}

impl Prefetcher {
    pub fn new(urls: Vec<String>, opts: RemoteOptions, in_flight: usize) -> io::Result<Self> {
        let client = crawler::warc::remote_client(&opts).map_err(io::Error::other)?;
        Ok(Self { client, opts, in_flight: in_flight.max(1), waiting: urls.into(), running: VecDeque::new() })
    }

    /// The next file of the listing as a stream; its fetch started earlier where the
    /// in-flight limit allowed. `None` when every file has been handed out.
    pub fn next_file(&mut self) -> Option<(String, PipeReader)> {
        self.top_up();
        let (url, rx, handle) = self.running.pop_front()?;
        self.top_up();
        Some((url, PipeReader { rx, buf: Vec::new(), pos: 0, done: None, _handle: handle }))
    }

    fn top_up(&mut self) {
        while self.running.len() < self.in_flight {
            let Some(url) = self.waiting.pop_front() else { return };
            let (tx, rx) = bounded(PIPE_CHUNKS);
            let (client, opts, u) = (self.client.clone(), self.opts.clone(), url.clone());
            let handle = std::thread::spawn(move || fetch_into(client, &u, opts, tx));
            self.running.push_back((url, rx, handle));
        }
    }
}

/// One file's fetch: chunks into `tx` until the end, a failure, or the reader going away.
fn fetch_into(client: RemoteClient, url: &str, opts: RemoteOptions, tx: crossbeam_channel::Sender<Msg>) {
    let mut file = match RemoteFile::open(client, url, opts) {
        Ok(f) => f,
        Err(e) => {
            let _ = tx.send(Msg::Failed(e));
            return;
        }
    };
    loop {
        let mut chunk = vec![0u8; CHUNK];
        match read_full(&mut file, &mut chunk) {
            Ok(0) => {
                let _ = tx.send(Msg::End(file.stats()));
                return;
            }
            Ok(n) => {
                chunk.truncate(n);
                if tx.send(Msg::Data(chunk)).is_err() {
                    return; // the scan stopped reading this file
                }
            }
            Err(e) => {
                let _ = tx.send(Msg::Failed(e));
                return;
            }
        }
    }
}

/// Fill `buf` unless the stream ends first (fewer, larger messages).
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// A fetched file as a [`Read`], fed by its fetching thread.
pub struct PipeReader {
    rx: Receiver<Msg>,
    buf: Vec<u8>,
    pos: usize,
    /// How the transfer ended, once it has.
    done: Option<Result<RemoteStats, String>>,
    _handle: JoinHandle<()>,
}

impl PipeReader {
    /// Requests, resumes and retries of this file's transfer (once it has ended).
    pub fn stats(&self) -> Option<RemoteStats> {
        self.done.as_ref().and_then(|d| d.as_ref().ok().copied())
    }

    /// Whether the file was read to its end without a failure.
    pub fn finished(&self) -> bool {
        matches!(self.done, Some(Ok(_)))
    }
}

impl Read for PipeReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.buf.len() {
            match &self.done {
                Some(Ok(_)) => return Ok(0),
                Some(Err(why)) => return Err(io::Error::other(why.clone())),
                None => {}
            }
            match self.rx.recv() {
                Ok(Msg::Data(d)) => {
                    self.buf = d;
                    self.pos = 0;
                }
                Ok(Msg::End(st)) => self.done = Some(Ok(st)),
                Ok(Msg::Failed(e)) => self.done = Some(Err(e.to_string())),
                Err(_) => self.done = Some(Err("the fetching thread stopped".into())),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
