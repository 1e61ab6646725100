//! WARC files read over HTTP(S) as a stream: one GET, and when the transfer breaks, a new
//! GET with `Range: bytes=N-` from the first byte not yet read, after a backoff. Nothing is
//! downloaded whole; memory is the reader's buffers.
//!
//! Bytes are read as the server stores them (`Accept-Encoding: identity`, no transparent
//! decompression), so a resumed transfer continues the same byte stream and the WARC reader
//! sees the file exactly as a local copy.

use std::io::{self, Read};
use std::time::Duration;

use reqwest::blocking::{Client, Response};

/// The HTTP client remote files share (connections are pooled).
pub type RemoteClient = Client;
use reqwest::header::{ACCEPT_ENCODING, CONTENT_RANGE, RANGE};
use reqwest::StatusCode;

/// How a remote file is fetched.
#[derive(Debug, Clone)]
pub struct RemoteOptions {
    /// New attempts after a failure (connect error, 5xx, 429, a transfer cut short) before
    /// the file is given up.
    pub retries: u32,
    /// Wait before the first retry; doubled for each further one (capped at 30 s).
    pub backoff: Duration,
    /// Connect timeout, and the longest a read may wait for bytes.
    pub timeout: Duration,
    pub user_agent: String,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        Self {
            retries: 5,
            backoff: Duration::from_millis(500),
            timeout: Duration::from_secs(60),
            user_agent: concat!("ditto/", env!("CARGO_PKG_VERSION"), " (WARC scan)").to_string(),
        }
    }
}

/// What happened while a file was read: for `--stats-json` and the summary.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RemoteStats {
    /// GET requests made (the first, and each retry or resume).
    pub requests: u64,
    /// Requests that continued a broken transfer with `Range`.
    pub resumes: u64,
    /// Failures that were retried (any kind).
    pub retries: u64,
}

/// An HTTP client for remote inputs (one per scan; connections are pooled).
pub fn client(opts: &RemoteOptions) -> Result<Client, reqwest::Error> {
    Client::builder()
        .user_agent(opts.user_agent.clone())
        .connect_timeout(opts.timeout)
        // The blocking client applies this to the request and to each read of the body
        // (not to the whole transfer): a stalled transfer fails and is resumed.
        .timeout(opts.timeout)
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .build()
}

/// A remote file as a [`Read`]: resumes with `Range` and retries with backoff.
pub struct RemoteFile {
    client: Client,
    url: String,
    opts: RemoteOptions,
    response: Option<Response>,
    /// Bytes of the file delivered so far.
    pos: u64,
    /// The file's length when the server said it.
    len: Option<u64>,
    /// Failures since bytes last arrived.
    failures: u32,
    stats: RemoteStats,
}

/// Why one attempt failed; `Permanent` ends the file at once.
enum Attempt {
    Retry(String),
    Permanent(String),
}

impl RemoteFile {
    /// Connects at once, so a missing file (404) or a refused connection is an error here,
    /// before the scan counts the file as started.
    pub fn open(client: Client, url: &str, opts: RemoteOptions) -> io::Result<Self> {
        Self::open_at(client, url, opts, 0)
    }

    /// [`Self::open`] from byte `offset` on (a `Range` request): one record of a large file.
    pub fn open_at(client: Client, url: &str, opts: RemoteOptions, offset: u64) -> io::Result<Self> {
        let mut f = Self {
            client,
            url: url.to_string(),
            opts,
            response: None,
            pos: offset,
            len: None,
            failures: 0,
            stats: RemoteStats::default(),
        };
        f.connect_with_retries()?;
        Ok(f)
    }

    /// The file's length, when the server gave it.
    pub fn length(&self) -> Option<u64> {
        self.len
    }

    pub fn stats(&self) -> RemoteStats {
        self.stats
    }

    fn connect_with_retries(&mut self) -> io::Result<()> {
        loop {
            match self.connect() {
                Ok(()) => return Ok(()),
                Err(Attempt::Permanent(why)) => return Err(io::Error::other(why)),
                Err(Attempt::Retry(why)) => self.back_off(why)?,
            }
        }
    }

    /// Count a failure and wait, or give up when the retries are spent.
    fn back_off(&mut self, why: String) -> io::Result<()> {
        self.response = None;
        self.failures += 1;
        if self.failures > self.opts.retries {
            return Err(io::Error::other(format!(
                "{why} (gave up after {} attempts, {} bytes read)",
                self.failures, self.pos
            )));
        }
        self.stats.retries += 1;
        let exp = self.failures.saturating_sub(1).min(16);
        let wait = self.opts.backoff.saturating_mul(1 << exp).min(Duration::from_secs(30));
        std::thread::sleep(wait);
        Ok(())
    }

    /// One GET from `pos`: a plain GET at the start, a `Range` GET to resume.
    fn connect(&mut self) -> Result<(), Attempt> {
        self.stats.requests += 1;
        let mut req = self.client.get(&self.url).header(ACCEPT_ENCODING, "identity");
        if self.pos > 0 {
            if self.stats.requests > 1 {
                self.stats.resumes += 1;
            }
            req = req.header(RANGE, format!("bytes={}-", self.pos));
        }
        let resp = req.send().map_err(|e| Attempt::Retry(format!("request failed: {}", error_chain(&e))))?;
        let status = resp.status();
        match status {
            StatusCode::OK => {
                if let Some(n) = resp.content_length() {
                    self.len = Some(n);
                }
                self.response = Some(resp);
                // A server that ignores Range starts again from byte 0: pass over what we have.
                self.skip_delivered()
            }
            StatusCode::PARTIAL_CONTENT => {
                let start = resp
                    .headers()
                    .get(CONTENT_RANGE)
                    .and_then(|v| v.to_str().ok())
                    .and_then(content_range_start);
                if start != Some(self.pos) {
                    return Err(Attempt::Permanent(format!(
                        "server resumed at byte {start:?}, asked for {}",
                        self.pos
                    )));
                }
                self.response = Some(resp);
                Ok(())
            }
            StatusCode::RANGE_NOT_SATISFIABLE if self.len == Some(self.pos) => Ok(()),
            s if s.is_server_error()
                || s == StatusCode::TOO_MANY_REQUESTS
                || s == StatusCode::REQUEST_TIMEOUT =>
            {
                Err(Attempt::Retry(format!("HTTP {}", s.as_u16())))
            }
            s => Err(Attempt::Permanent(format!("HTTP {}", s.as_u16()))),
        }
    }

    /// Read and drop the first `pos` bytes of a full (200) response.
    fn skip_delivered(&mut self) -> Result<(), Attempt> {
        let Some(resp) = self.response.as_mut() else { return Ok(()) };
        let mut left = self.pos;
        let mut buf = vec![0u8; 64 << 10];
        while left > 0 {
            let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            match resp.read(&mut buf[..want]) {
                Ok(0) => {
                    return Err(Attempt::Retry("transfer ended while skipping to the resume point".into()))
                }
                Ok(n) => left -= n as u64,
                Err(e) => return Err(Attempt::Retry(format!("read failed: {e}"))),
            }
        }
        Ok(())
    }

    /// The transfer ended: the end of the file, or a cut to resume from.
    fn at_end(&self) -> bool {
        match self.len {
            Some(len) => self.pos >= len,
            // No length given: an orderly end of the body is the end of the file.
            None => true,
        }
    }
}

impl Read for RemoteFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.response.is_none() {
                if self.at_end() && self.pos > 0 {
                    return Ok(0);
                }
                self.connect_with_retries()?;
                if self.response.is_none() {
                    return Ok(0); // 416 at the end
                }
            }
            let Some(resp) = self.response.as_mut() else { continue };
            match resp.read(buf) {
                Ok(0) if self.at_end() => {
                    self.response = None;
                    return Ok(0);
                }
                Ok(0) => {
                    let why = format!("transfer cut at byte {} of {}", self.pos, self.len.unwrap_or(0));
                    self.back_off(why)?;
                }
                Ok(n) => {
                    self.pos += n as u64;
                    self.failures = 0;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let why = format!("transfer broke at byte {}: {}", self.pos, io_error_chain(&e));
                    self.back_off(why)?;
                }
            }
        }
    }
}

/// The first byte of a `Content-Range: bytes A-B/N` header.
fn content_range_start(v: &str) -> Option<u64> {
    let range = v.trim().strip_prefix("bytes")?.trim_start();
    range.split('-').next()?.trim().parse().ok()
}

/// An error with its causes (reqwest's top-level message hides them).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

fn io_error_chain(e: &io::Error) -> String {
    match e.get_ref() {
        Some(inner) => error_chain(inner),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// What the test server does with its i-th request.
    #[derive(Clone, Copy)]
    enum Reply {
        Full,
        /// Headers for the whole rest, then only this many bytes, then close.
        CutAfter(usize),
        Status(u16),
    }

    /// A loopback server for `body` that honours `Range: bytes=N-` and answers request i as
    /// `plan(i)` says. Serves at most `max_requests` requests.
    fn serve(
        body: Vec<u8>,
        plan: impl Fn(usize) -> Reply + Send + 'static,
        max_requests: usize,
    ) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let served = Arc::new(AtomicUsize::new(0));
        let counter = served.clone();
        std::thread::spawn(move || {
            for (i, stream) in listener.incoming().take(max_requests).enumerate() {
                let Ok(mut stream) = stream else { continue };
                counter.fetch_add(1, Ordering::SeqCst);
                let start = read_range_start(&stream);
                let rest = &body[start.min(body.len())..];
                let reply = plan(i);
                if let Reply::Status(code) = reply {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {code} No\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                    continue;
                }
                let _ = if start > 0 {
                    let (len, last) = (rest.len(), body.len() - 1);
                    write!(stream, "HTTP/1.1 206 Partial Content\r\nContent-Length: {len}\r\nContent-Range: bytes {start}-{last}/{}\r\nConnection: close\r\n\r\n", body.len())
                } else {
                    write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        rest.len()
                    )
                };
                let send = match reply {
                    Reply::CutAfter(n) => &rest[..n.min(rest.len())],
                    _ => rest,
                };
                let _ = stream.write_all(send);
            }
        });
        (format!("http://{addr}/file.warc.gz"), served)
    }

    /// The start of a `Range: bytes=N-` header of the request on `stream` (0 without one).
    fn read_range_start(stream: &std::net::TcpStream) -> usize {
        let mut reader = BufReader::new(stream);
        let mut start = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                return start;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
                start = v.trim().trim_end_matches('-').parse().unwrap_or(0);
            }
        }
    }

    fn fast() -> RemoteOptions {
        RemoteOptions { retries: 3, backoff: Duration::from_millis(5), ..RemoteOptions::default() }
    }

    #[test]
    fn a_cut_transfer_is_resumed_with_range_and_gives_the_same_bytes() {
        let body: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (url, served) =
            serve(body.clone(), |i| if i < 2 { Reply::CutAfter(100_000) } else { Reply::Full }, 10);
        let opts = fast();
        let mut f = RemoteFile::open(client(&opts).expect("client"), &url, opts).expect("open");
        let mut got = Vec::new();
        f.read_to_end(&mut got).expect("read");
        assert_eq!(got, body);
        let st = f.stats();
        assert_eq!(st.resumes, 2, "{st:?}");
        assert_eq!(served.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_file_that_keeps_failing_is_an_error_after_the_retries() {
        let body = vec![b'x'; 50_000];
        // The first transfer is cut; every resume then meets 503.
        let (url, served) =
            serve(body, |i| if i == 0 { Reply::CutAfter(1_000) } else { Reply::Status(503) }, 20);
        let opts = fast();
        let mut f = RemoteFile::open(client(&opts).expect("client"), &url, opts).expect("open");
        let err = f.read_to_end(&mut Vec::new()).expect_err("must give up");
        assert!(err.to_string().contains("gave up after 4 attempts"), "{err}");
        assert_eq!(served.load(Ordering::SeqCst), 4, "the first GET and its three retries");
    }

    #[test]
    fn a_missing_file_fails_at_open_without_retries() {
        let (url, served) = serve(Vec::new(), |_| Reply::Status(404), 5);
        let opts = fast();
        let err = RemoteFile::open(client(&opts).expect("client"), &url, opts).err().expect("404");
        assert!(err.to_string().contains("HTTP 404"), "{err}");
        assert_eq!(served.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn content_range_start_is_parsed() {
        assert_eq!(content_range_start("bytes 100-199/200"), Some(100));
        assert_eq!(content_range_start("bytes */200"), None);
    }
}
