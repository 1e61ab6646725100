//! The crawler's error type: one variant per kind of failure, so a caller (and `anyhow`
//! downcasts across crates) can tell a bad setting from a store or link-exchange failure.

use crate::partition::ExchangeError;

/// What stopped a crawl from starting or going on.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// A `--resolve` mapping that is not `HOST=ADDR:PORT`.
    #[error("--resolve {spec:?}: {problem}")]
    BadResolve { spec: String, problem: ResolveProblem },
    /// No User-Agent to send (a polite crawler names itself and a contact).
    #[error("a User-Agent with a contact URL is required")]
    MissingUserAgent,
    /// The HTTP client could not be built.
    #[cfg(feature = "net")]
    #[error("building the HTTP client")]
    HttpClient(#[source] reqwest::Error),
    /// The store holding the frontier failed.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// The link exchange of a partitioned crawl failed.
    #[error(transparent)]
    Exchange(#[from] ExchangeError),
}

/// What is wrong with a `--resolve` mapping.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveProblem {
    #[error("expected HOST=ADDR:PORT")]
    NoEquals,
    #[error("{0:?} is not ADDR:PORT")]
    BadAddress(String),
    #[error("empty host")]
    EmptyHost,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    /// How `anyhow` prints `{:#}` (what `ditto` shows): the message and each cause.
    fn chain(e: &dyn Error) -> String {
        let mut line = e.to_string();
        let mut cause = e.source();
        while let Some(c) = cause {
            line = format!("{line}: {c}");
            cause = c.source();
        }
        line
    }

    #[test]
    fn exchange_failures_keep_kind_and_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = CrawlError::from(ExchangeError::Io { what: "reading inbox/1".into(), source: io });
        assert!(matches!(e, CrawlError::Exchange(ExchangeError::Io { .. })));
        let cause = e.source().and_then(|c| c.downcast_ref::<std::io::Error>());
        assert_eq!(cause.map(|c| c.kind()), Some(std::io::ErrorKind::PermissionDenied));
        // The same line as when the exchange error was a string inside the store's error.
        assert_eq!(chain(&e), "link exchange: reading inbox/1: denied");
    }

    #[test]
    fn setting_errors_read_as_before() {
        let e = CrawlError::BadResolve { spec: "x".into(), problem: ResolveProblem::NoEquals };
        assert_eq!(chain(&e), r#"--resolve "x": expected HOST=ADDR:PORT"#);
        assert_eq!(chain(&CrawlError::MissingUserAgent), "a User-Agent with a contact URL is required");
    }
}

/// Why a fetch failed, by kind (for counters and backoff decisions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FetchErrorKind {
    /// The address is private/loopback/… and not allowed (SSRF guard).
    Refused,
    Connect,
    Timeout,
    /// Malformed response (e.g. huge or broken headers).
    Protocol,
    Body,
    BadUrl,
}

impl FetchErrorKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            FetchErrorKind::Refused => "refused_address",
            FetchErrorKind::Connect => "connect",
            FetchErrorKind::Timeout => "timeout",
            FetchErrorKind::Protocol => "protocol",
            FetchErrorKind::Body => "body",
            FetchErrorKind::BadUrl => "bad_url",
        }
    }
}
