//! What a fetch task sends back to the crawl loop ([`Done`]), and the robots.txt fetch the
//! loop starts for a new host. Apart from `schedule.rs` (which starts fetches) and
//! `finish.rs` (which takes them back) so that neither imports the other both ways.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use store::FrontierEntry;
use url::Url;

use super::retire::RetireReason;
use super::FetchRecorder;
use crate::fetch::{parse_retry_after, FetchError, FetchErrorKind, FetchResponse, Fetcher};
use crate::politeness::Outcome;
use crate::robots::{RobotsState, MAX_ROBOTS_BYTES};

/// A fetch that finished, sent back to the loop by its task.
pub(super) struct Done {
    pub(super) host: String,
    pub(super) kind: DoneKind,
    /// When the fetch ended (its response read to the end, or its error): the host's
    /// politeness delay counts from here, not from when the loop takes the fetch back.
    pub(super) finished: Instant,
}

pub(super) enum DoneKind {
    Robots {
        /// The origin whose robots.txt this is (`scheme://host:port`).
        origin: String,
        state: RobotsState,
        outcome: Outcome,
        crawl_delay_token: Option<f64>,
        /// The SSRF guard refused the host's address: nothing there may be fetched.
        refused: bool,
        /// The fetch failed or found robots.txt unavailable (5xx, 429, network): for the
        /// failure log and the host's retirement.
        failure: Option<RobotsFailure>,
    },
    Page {
        entry: FrontierEntry,
        result: Result<FetchResponse, FetchError>,
        fetch_time: i64,
    },
}

/// A robots.txt fetch that failed ([`DoneKind::Robots`]).
pub(super) struct RobotsFailure {
    pub(super) url: String,
    /// In words: the error, or the HTTP status.
    pub(super) reason: String,
    /// What it counts as towards retiring the host; None for a 429 (the host rests and is
    /// asked again) and for an address the guard refused.
    pub(super) retire: Option<RetireReason>,
}

/// Unix seconds now (0 if the clock is before 1970).
pub(super) fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// Fetch robots.txt, following up to five redirects (RFC 9309 §2.3.1.2), and read it.
pub(super) async fn fetch_robots(
    f: &Fetcher,
    url: &str,
    origin: String,
    token: &str,
    rec: Option<&dyn FetchRecorder>,
) -> DoneKind {
    let mut url = url.to_string();
    for _ in 0..=5 {
        let fetch_time = unix_now();
        match f.get(&url).await {
            Ok(resp) => {
                if let Some(r) = rec {
                    r.record(&url, fetch_time, &resp);
                }
                let outcome = outcome_of(&resp, SystemTime::now());
                if (300..400).contains(&resp.status) {
                    if let Some(next) =
                        resp.header("location").and_then(|l| Url::parse(&url).ok()?.join(l).ok())
                    {
                        url = next.to_string();
                        continue;
                    }
                }
                let body = &resp.body[..resp.body.len().min(MAX_ROBOTS_BYTES)];
                let state = RobotsState::from_status(resp.status, body);
                let crawl_delay_token = state.crawl_delay(token);
                let failure = (resp.status == 429 || resp.status >= 500).then(|| RobotsFailure {
                    url: url.clone(),
                    reason: format!("HTTP status {}", resp.status),
                    retire: (resp.status != 429).then_some(RetireReason::RobotsUnreachable),
                });
                return DoneKind::Robots {
                    origin,
                    state,
                    outcome,
                    crawl_delay_token,
                    refused: false,
                    failure,
                };
            }
            Err(e) => {
                tracing::info!(url = %url, error = e.kind.as_str(), detail = %e.detail, "robots.txt fetch failed: the host waits");
                let refused = e.kind == FetchErrorKind::Refused;
                let retire = match RetireReason::of(&e) {
                    None if refused => None,
                    None => Some(RetireReason::RobotsUnreachable),
                    some => some,
                };
                return DoneKind::Robots {
                    origin,
                    state: RobotsState::unreachable(),
                    outcome: Outcome::Failed,
                    crawl_delay_token: None,
                    refused,
                    failure: Some(RobotsFailure { url, reason: e.to_string(), retire }),
                };
            }
        }
    }
    // Redirect limit reached: RFC 9309 §2.3.1.2 says treat as unavailable (allow all).
    DoneKind::Robots {
        origin,
        state: RobotsState::AllowAll,
        outcome: Outcome::Ok { elapsed: Duration::ZERO },
        crawl_delay_token: None,
        refused: false,
        failure: None,
    }
}

/// What a response received at `received` (wall clock) means for the host's politeness
/// state. A Retry-After date counts from `received`, the instant the backoff is applied
/// from: taken when the response is handled, a busy scheduler's delay would be subtracted
/// from the wait, and the retry could arrive before the date.
pub(super) fn outcome_of(resp: &FetchResponse, received: SystemTime) -> Outcome {
    match resp.status {
        429 | 503 => Outcome::Throttled {
            retry_after: resp.header("retry-after").and_then(|v| parse_retry_after(v, received)),
        },
        500..=599 => Outcome::Failed,
        _ => Outcome::Ok { elapsed: resp.elapsed },
    }
}
