//! `--metrics ADDR`: a Prometheus text-format endpoint for a running crawl, on loopback by
//! default. Plain std networking on its own thread: one short response per connection.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use crawler::crawl::CrawlCounters;

/// Render the crawl counters in the Prometheus text exposition format.
pub fn render(c: &CrawlCounters) -> String {
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, kind: &str, v: u64| {
        out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}\n"));
    };
    gauge(
        "ditto_crawl_requests_total",
        "HTTP requests sent (robots.txt included).",
        "counter",
        c.requests.load(Relaxed),
    );
    gauge("ditto_crawl_pages_total", "Pages handed to detection.", "counter", c.pages_out.load(Relaxed));
    gauge(
        "ditto_crawl_robots_fetches_total",
        "robots.txt fetches.",
        "counter",
        c.robots_fetches.load(Relaxed),
    );
    gauge("ditto_crawl_in_flight", "Requests in flight.", "gauge", c.in_flight.load(Relaxed));
    gauge(
        "ditto_crawl_hosts_active",
        "Hosts with a request in flight.",
        "gauge",
        c.hosts_active.load(Relaxed),
    );
    gauge("ditto_crawl_hosts_queued", "Hosts with queued URLs.", "gauge", c.queued_hosts.load(Relaxed));
    gauge(
        "ditto_crawl_hosts_retired",
        "Hosts retired for failing (their URLs finished as failed).",
        "gauge",
        c.retired_hosts.load(Relaxed),
    );
    out.push_str(
        "# HELP ditto_crawl_events_total Crawl events by kind (HTTP statuses, errors, backoffs, skips).\n",
    );
    out.push_str("# TYPE ditto_crawl_events_total counter\n");
    for (k, v) in c.events() {
        let k: String =
            k.chars().map(|ch| if ch.is_ascii_alphanumeric() || ch == '_' { ch } else { '_' }).collect();
        out.push_str(&format!("ditto_crawl_events_total{{event=\"{k}\"}} {v}\n"));
    }
    out
}

/// A running metrics endpoint; stops when dropped.
pub struct MetricsServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Serve `GET /metrics` on `addr`. Non-loopback addresses are refused unless
    /// `allow_remote` (the operator asked for it explicitly).
    pub fn start(
        addr: SocketAddr,
        counters: Arc<CrawlCounters>,
        allow_remote: bool,
    ) -> Result<MetricsServer> {
        if !addr.ip().is_loopback() && !allow_remote {
            bail!("--metrics {addr}: not a loopback address (metrics stay on 127.0.0.1 / ::1 by default)");
        }
        let listener = TcpListener::bind(addr).with_context(|| format!("binding --metrics {addr}"))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new().name("metrics".into()).spawn(move || {
            while !s.load(Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                        let mut reader = BufReader::new(&stream);
                        let mut line = String::new();
                        let _ = reader.read_line(&mut line);
                        // Drain the request headers (bounded by the read timeout).
                        let mut h = String::new();
                        while reader.read_line(&mut h).map(|n| n > 2).unwrap_or(false) {
                            h.clear();
                        }
                        let (status, body) = if line.starts_with("GET /metrics") || line.starts_with("GET / ") {
                            ("200 OK", render(&counters))
                        } else {
                            ("404 Not Found", "try /metrics\n".to_string())
                        };
                        let mut w = &stream;
                        let _ = write!(
                            w,
                            "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        );
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(50)),
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        })?;
        Ok(MetricsServer { addr, stop, thread: Some(thread) })
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawler::crawl::CrawlEvent;
    use std::io::Read;

    #[test]
    fn serves_prometheus_text_on_loopback_and_refuses_remote() {
        let c = Arc::new(CrawlCounters::default());
        c.requests.store(7, Relaxed);
        c.event(CrawlEvent::HttpStatus(200));
        c.event(CrawlEvent::BackoffRetryAfter);
        let m = MetricsServer::start("127.0.0.1:0".parse().unwrap(), c, false).unwrap();
        let mut s = std::net::TcpStream::connect(m.addr).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut body = String::new();
        s.read_to_string(&mut body).unwrap();
        assert!(body.starts_with("HTTP/1.1 200"), "{body}");
        assert!(body.contains("ditto_crawl_requests_total 7"));
        assert!(body.contains("ditto_crawl_events_total{event=\"backoff_retry_after\"} 1"));
        assert!(MetricsServer::start(
            "0.0.0.0:0".parse().unwrap(),
            Arc::new(CrawlCounters::default()),
            false
        )
        .is_err());
    }
}
