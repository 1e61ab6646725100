//! A loopback file server for remote-input tests: `GET /NAME` serves a file of one folder,
//! honours `Range: bytes=N-` (206 with `Content-Range`), and can cut the first transfer of
//! every file halfway, as a broken download does. Plain threads and HTTP/1.1, one request
//! per connection; it stops when dropped.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How the server treats transfers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfers {
    /// Every transfer whole.
    Whole,
    /// The first transfer of each file stops after half its bytes (the connection closes).
    CutFirstHalfway,
}

pub struct FileServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    ranged: Arc<AtomicUsize>,
}

impl FileServer {
    /// Serve `root` on 127.0.0.1 (an ephemeral port).
    pub fn start(root: PathBuf, transfers: Transfers) -> std::io::Result<FileServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicUsize::new(0));
        let ranged = Arc::new(AtomicUsize::new(0));
        let (st, rq, rg) = (stop.clone(), requests.clone(), ranged.clone());
        let cut_done = Arc::new(Mutex::new(HashSet::new()));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                rq.fetch_add(1, Ordering::SeqCst);
                let (root, rg, cut_done) = (root.clone(), rg.clone(), cut_done.clone());
                std::thread::spawn(move || {
                    let _ = answer(stream, &root, transfers, &rg, &cut_done);
                });
            }
        });
        Ok(FileServer { addr, stop, requests, ranged })
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn base_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Requests answered so far, and how many of them asked for a range.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    pub fn ranged_requests(&self) -> usize {
        self.ranged.load(Ordering::SeqCst)
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wake the accept loop
    }
}

fn answer(
    mut stream: TcpStream,
    root: &std::path::Path,
    transfers: Transfers,
    ranged: &AtomicUsize,
    cut_done: &Mutex<HashSet<String>>,
) -> std::io::Result<()> {
    let (path, start) = read_request(&stream)?;
    let name = path.trim_start_matches('/');
    let file = root.join(name);
    let body = match (name.contains(".."), std::fs::read(&file)) {
        (false, Ok(b)) => b,
        _ => {
            return stream
                .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
    };
    let start = start.min(body.len());
    let rest = &body[start..];
    if start > 0 {
        ranged.fetch_add(1, Ordering::SeqCst);
        let last = body.len().saturating_sub(1);
        write!(
            stream,
            "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{last}/{}\r\nConnection: close\r\n\r\n",
            rest.len(),
            body.len()
        )?;
    } else {
        write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", rest.len())?;
    }
    let cut = transfers == Transfers::CutFirstHalfway
        && cut_done.lock().map(|mut s| s.insert(name.to_string())).unwrap_or(false);
    let send = if cut { &rest[..rest.len() / 2] } else { rest };
    stream.write_all(send)?;
    stream.flush()
}

/// The request path and the start of a `Range: bytes=N-` header (0 without one).
fn read_request(stream: &TcpStream) -> std::io::Result<(String, usize)> {
    let mut reader = BufReader::new(stream);
    let mut first = String::new();
    reader.read_line(&mut first)?;
    let path = first.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut start = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            return Ok((path, start));
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
            start = v.trim().trim_end_matches('-').parse().unwrap_or(0);
        }
    }
}
