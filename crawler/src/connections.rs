//! Connections and descriptors (issue 37, item 3). The fetcher keeps at most one idle
//! connection per host, and only for [`POOL_IDLE_TIMEOUT`] (hyper's default was 90 s: at
//! 100,000 hosts a crawl held 19,979 sockets and ran out of descriptors), so idle sockets are
//! bounded by the hosts fetched from in the last few seconds. A request that fails on a pooled
//! connection the server closed meanwhile (nginx closes idle connections; the request meets
//! the close) is sent again once, on a fresh connection, inside the same fetch: it spends no
//! page budget, and is counted (`stale_connection_retried`). `ditto crawl` lifts the soft
//! descriptor limit to the hard one at its start (`src/crawl/mod.rs`, `raise_nofile_limit`).

use std::time::Duration;

use crate::error::FetchErrorKind;

/// How long an idle connection waits for its host's next request. Longer than the delay
/// between a host's requests in most crawls (1 s by default; a focused crawl's hosts are
/// fetched from again within seconds or not soon), short enough that idle sockets stay a
/// few seconds' worth of hosts.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether a failed fetch (its kind and detail) failed on a connection the server had closed
/// before answering (no response head came): hyper's "connection closed before message
/// completed", a reset or a broken pipe while sending. A GET is safe to send again.
pub fn is_stale_connection(kind: FetchErrorKind, detail: &str) -> bool {
    if !matches!(kind, FetchErrorKind::Protocol | FetchErrorKind::Connect) {
        return false;
    }
    let d = detail.to_ascii_lowercase();
    d.contains("connection closed before message completed")
        || d.contains("connection reset")
        || d.contains("broken pipe")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_connections_are_told_from_other_failures() {
        use FetchErrorKind::*;
        let closed = "error sending request for url (http://a.test/): client error (SendRequest): \
                      connection closed before message completed";
        assert!(is_stale_connection(Protocol, closed));
        assert!(is_stale_connection(Connect, "… Connection reset by peer (os error 104)"));
        assert!(!is_stale_connection(Connect, "tcp connect error: Connection refused"));
        assert!(!is_stale_connection(Body, "connection reset while reading the body"));
        assert!(!is_stale_connection(Timeout, "connection reset"));
    }
}
