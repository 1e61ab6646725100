//! Fetching one URL safely: timeouts, a body cap that also stops decompression bombs,
//! the body kept as sent (Content-Encoding intact, for WARC records) beside the decoded one,
//! the request head recorded as sent,
//! redirects returned (never followed here — the scheduler queues the target after checking
//! robots and scope), and an SSRF guard that refuses private, loopback, link-local,
//! multicast and unspecified addresses — also after DNS resolution — unless the user mapped
//! the host with `--resolve` or passed `--allow-private`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::connections::is_stale_connection;
use crate::dns::{lookup_guarded, DnsCache};
use crate::error::{CrawlError, ResolveProblem};
use crate::fetch_sockets::{pool_key, socket_budget_from_limit, Pool};
use crate::headers_first::{refuse_after_headers, BodyRefused};

/// `--resolve HOST=ADDR:PORT` mappings; HOST may be `*.suffix`.
#[derive(Debug, Clone, Default)]
pub struct ResolveMap {
    exact: HashMap<String, SocketAddr>,
    suffixes: Vec<(String, SocketAddr)>,
}

impl ResolveMap {
    /// Parse `HOST=ADDR:PORT` (IPv6 as `[::1]:PORT`).
    pub fn add(&mut self, spec: &str) -> Result<(), CrawlError> {
        let bad = |problem| CrawlError::BadResolve { spec: spec.to_string(), problem };
        let (host, addr) = spec.split_once('=').ok_or_else(|| bad(ResolveProblem::NoEquals))?;
        let addr: SocketAddr =
            addr.trim().parse().map_err(|_| bad(ResolveProblem::BadAddress(addr.to_string())))?;
        let host = host.trim().to_ascii_lowercase();
        if let Some(suffix) = host.strip_prefix("*.") {
            self.suffixes.push((suffix.to_string(), addr));
        } else if host.is_empty() {
            return Err(bad(ResolveProblem::EmptyHost));
        } else {
            self.exact.insert(host, addr);
        }
        Ok(())
    }

    /// The mapped address of a host, if any (`*.suffix` matches the suffix and subdomains).
    pub fn get(&self, host: &str) -> Option<SocketAddr> {
        let host = host.trim_end_matches('.');
        // URL hosts come lowercased: copy only a name that is not (the scheduler asks once
        // per host it starts, at 100,000 mapped hosts a copy per call showed in profiles).
        let lower;
        let host = if host.bytes().any(|b| b.is_ascii_uppercase()) {
            lower = host.to_ascii_lowercase();
            lower.as_str()
        } else {
            host
        };
        if let Some(a) = self.exact.get(host) {
            return Some(*a);
        }
        self.suffixes.iter().find(|(s, _)| crate::urls::is_same_or_subdomain(host, s)).map(|(_, a)| *a)
    }

    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.suffixes.is_empty()
    }
}

/// True for addresses a public crawl must never contact: private (RFC 1918, ULA), loopback,
/// link-local, multicast, unspecified, broadcast, shared (CGN), IETF protocol assignments
/// (`192.0.0.0/24`), documentation and benchmarking ranges; IPv4-mapped and IPv4-compatible
/// forms of those, and NAT64 forms (`64:ff9b::/96`, RFC 6052) of those; the local-use NAT64
/// prefix (`64:ff9b:1::/48`, RFC 8215) and 6to4 (`2002::/16`, deprecated by RFC 7526, whose
/// relays reach any IPv4 address, private ones included).
pub fn is_non_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1])) // shared address space, RFC 6598
                || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments, RFC 6890
                || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) // benchmarking, RFC 2544
                || o[0] >= 240 // reserved
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            // `::ffff:a.b.c.d` (mapped), `::a.b.c.d` (compatible; `::1` and `::` too) and
            // `64:ff9b::a.b.c.d` (NAT64) reach the IPv4 address they embed.
            let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
            let o = v6.octets();
            let embedded = nat64.then(|| std::net::Ipv4Addr::new(o[12], o[13], o[14], o[15]));
            if let Some(v4) = v6.to_ipv4().or(embedded) {
                return is_non_public(IpAddr::V4(v4));
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64, RFC 8215
                || s[0] == 0x2002 // 6to4, RFC 3056
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link local
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        }
    }
}

/// DNS resolution with the resolve map first, then the cache of answers (shared with the
/// scheduler: [`crate::dns`]), and the SSRF guard after.
struct GuardedResolver {
    map: Arc<ResolveMap>,
    dns: Arc<DnsCache>,
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        if let Some(addr) = self.map.get(&host) {
            // A port here is used when the URL gives none (reqwest's documented rule).
            return Box::pin(async move { Ok(Box::new(std::iter::once(addr)) as Addrs) });
        }
        let (dns, allow_private) = (self.dns.clone(), self.allow_private);
        Box::pin(async move {
            let allowed = lookup_guarded(&dns, &host, |ip| allow_private || !is_non_public(ip)).await?;
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

pub use crate::validators::Validators;

/// The conditional headers to send for `v` (values a header cannot carry are left out).
fn conditional_headers(v: &Validators) -> Vec<(&'static str, &str)> {
    let mut h = Vec::new();
    if let Some(e) = &v.etag {
        h.push(("If-None-Match", e.as_str()));
    }
    if let Some(d) = &v.last_modified {
        h.push(("If-Modified-Since", d.as_str()));
    }
    h.retain(|(_, v)| reqwest::header::HeaderValue::from_str(v).is_ok());
    h
}

/// Settings of the fetcher.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    pub user_agent: String,
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes of a response.
    pub read_timeout: Duration,
    /// Longest a whole fetch (headers and body) may take.
    pub total_timeout: Duration,
    /// Largest body kept, after decompression; larger bodies are cut and flagged.
    pub max_body_bytes: usize,
    pub allow_private: bool,
    pub resolve: Arc<ResolveMap>,
    /// Resolved addresses with their time to live, shared with the scheduler.
    pub dns: Arc<DnsCache>,
    /// How long an idle connection is kept for the host's next request
    /// ([`crate::connections::POOL_IDLE_TIMEOUT`]).
    pub pool_idle_timeout: Duration,
    /// URLs fetched with conditional requests ([`Validators`]); empty: none.
    pub validators: Arc<HashMap<String, Validators>>,
    /// Most sockets held at once: requests in flight, address lookups and idle pooled
    /// connections ([`crate::fetch_sockets`]); at the bound a request waits. None: the
    /// process's soft descriptor limit less the descriptors open when the fetcher is built
    /// and a reserve.
    pub max_sockets: Option<usize>,
    /// Most idle pooled connections ([`crate::fetch_sockets::DEFAULT_MAX_IDLE`]): beyond
    /// them the idle connections are dropped.
    pub max_idle: usize,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            user_agent: String::new(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(20),
            total_timeout: Duration::from_secs(60),
            max_body_bytes: 10 << 20,
            allow_private: false,
            resolve: Arc::new(ResolveMap::default()),
            dns: Arc::new(DnsCache::default()),
            pool_idle_timeout: crate::connections::POOL_IDLE_TIMEOUT,
            validators: Arc::new(HashMap::new()),
            max_sockets: None,
            max_idle: crate::fetch_sockets::DEFAULT_MAX_IDLE,
        }
    }
}

pub use crate::error::FetchErrorKind;

#[derive(Debug, Clone)]
pub struct FetchError {
    pub kind: FetchErrorKind,
    pub detail: String,
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.detail)
    }
}

/// A response, body read (up to the cap) and decoded.
#[derive(Debug, Clone)]
pub struct FetchResponse {
    pub status: u16,
    /// The reason phrase the server sent (the status's usual one when it sent that).
    pub reason: String,
    pub http_version: String,
    /// Header fields as received (names in lower case: the HTTP client keeps no case).
    pub headers: Vec<(String, String)>,
    /// The body, Content-Encoding decoded (gzip, deflate, br), at most `max_body_bytes`.
    pub body: Vec<u8>,
    /// The body is not the whole resource: cut at the cap as sent, or once decoded.
    pub truncated: bool,
    /// The body was not read: refused after the headers ([`Fetcher::get_page`]).
    pub refused: Option<BodyRefused>,
    /// The first try failed on a pooled connection the server had closed, and this answer
    /// came on a fresh one ([`crate::connections`]).
    pub retried_stale: bool,
    /// The body as sent (transfer coding removed, Content-Encoding intact) where that is not
    /// `body`: None when the server sent no content coding.
    pub sent_body: Option<Vec<u8>>,
    /// The body as sent was cut at the cap (a decoded body cut at the cap alone is not).
    pub sent_truncated: bool,
    pub remote_ip: Option<IpAddr>,
    /// From sending the request to the end of the body.
    pub elapsed: Duration,
    /// The request line and headers as sent (for the WARC request record).
    pub request_head: Vec<u8>,
}

impl FetchResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The payload as sent (for a WARC response record) and whether it was cut.
    pub fn payload(&self) -> (&[u8], bool) {
        match &self.sent_body {
            Some(b) => (b, self.sent_truncated),
            None => (&self.body, self.sent_truncated),
        }
    }

    /// This fetch of `url` at `fetch_time` (Unix seconds) as a WARC writer records it.
    pub fn warc_record(&self, url: &str, fetch_time: i64) -> crate::warc::FetchRecord {
        let (payload, truncated) = self.payload();
        crate::warc::FetchRecord {
            url: url.to_string(),
            ip: self.remote_ip,
            fetch_time,
            request_head: self.request_head.clone(),
            status: self.status,
            reason: self.reason.clone(),
            http_version: self.http_version.clone(),
            response_headers: self.headers.clone(),
            payload: payload.to_vec(),
            // A body refused after its headers is recorded empty, as cut.
            truncated: truncated || self.refused.is_some(),
        }
    }
}

/// The `Accept` header every request sends.
const ACCEPT: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5";
/// The content codings the fetcher asks for (and decodes, as the WARC reader does).
const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// An HTTP client configured for polite, safe crawling.
#[derive(Clone)]
pub struct Fetcher {
    /// The HTTP client and the budget of sockets ([`crate::fetch_sockets`]).
    pool: Arc<Pool>,
    cfg: FetchConfig,
    /// Fetches sent again after a stale pooled connection ([`crate::connections`]).
    stale_retries: Arc<std::sync::atomic::AtomicU64>,
    user_agent: reqwest::header::HeaderValue,
}

impl Fetcher {
    pub fn new(cfg: FetchConfig) -> Result<Fetcher, CrawlError> {
        if cfg.user_agent.trim().is_empty() {
            return Err(CrawlError::MissingUserAgent);
        }
        let user_agent = reqwest::header::HeaderValue::from_str(&cfg.user_agent)
            .map_err(|_| CrawlError::MissingUserAgent)?;
        let limit = cfg.max_sockets.unwrap_or_else(socket_budget_from_limit);
        let c = cfg.clone();
        let pool = Pool::new(limit, cfg.max_idle, cfg.pool_idle_timeout, Box::new(move || build_client(&c)))
            .map_err(CrawlError::HttpClient)?;
        Ok(Fetcher { pool: Arc::new(pool), cfg, user_agent, stale_retries: Default::default() })
    }

    pub fn config(&self) -> &FetchConfig {
        &self.cfg
    }

    /// Fetches sent again, once, after failing on a pooled connection the server had closed.
    pub fn stale_retries(&self) -> u64 {
        self.stale_retries.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Most sockets held at once ([`FetchConfig::max_sockets`]).
    pub fn socket_limit(&self) -> usize {
        self.pool.limit()
    }

    /// Sockets held now: requests in flight, lookups and idle pooled connections.
    pub fn sockets_in_use(&self) -> usize {
        self.pool.in_use()
    }

    /// Requests and lookups that waited for a socket (the bound was reached).
    pub fn socket_waits(&self) -> u64 {
        self.pool.waits()
    }

    /// Times the idle connections were all dropped to free sockets for new hosts.
    pub fn socket_pool_flushes(&self) -> u64 {
        self.pool.flushes()
    }

    /// A socket for an address lookup outside a request (the scheduler's), held until the
    /// returned permit is dropped; waits at the bound.
    pub async fn lookup_socket(&self) -> tokio::sync::OwnedSemaphorePermit {
        self.pool.lookup_permit().await
    }

    /// GET `url`. Redirects are returned as responses (3xx with Location).
    /// Credentials in `url` (`user:secret@`) are never sent: they are removed first (the
    /// link policy already removes and counts them; robots.txt redirects come here directly).
    pub async fn get(&self, url: &str) -> Result<FetchResponse, FetchError> {
        self.get_checked(url, self.cfg.max_body_bytes, false).await
    }

    /// GET a page: as [`Fetcher::get`], but a 2xx body the crawl would not keep is refused
    /// after the headers, without reading it ([`crate::headers_first`]).
    pub async fn get_page(&self, url: &str) -> Result<FetchResponse, FetchError> {
        self.get_checked(url, self.cfg.max_body_bytes, true).await
    }

    /// [`Self::get`] with another body cap than `max_body_bytes` (as sent and once decoded):
    /// a sitemap may hold 50 MB.
    pub async fn get_capped(&self, url: &str, max_body: usize) -> Result<FetchResponse, FetchError> {
        self.get_checked(url, max_body, false).await
    }

    async fn get_checked(
        &self,
        url: &str,
        max_body: usize,
        headers_first: bool,
    ) -> Result<FetchResponse, FetchError> {
        let mut parsed = url::Url::parse(url).map_err(|e| err(FetchErrorKind::BadUrl, e))?;
        crate::urls::strip_credentials(&mut parsed);
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(err(FetchErrorKind::BadUrl, format!("unsupported scheme {}", parsed.scheme())));
        }
        // IP literals never reach the resolver: guard them here.
        if let Some(host) = parsed.host() {
            let ip = match host {
                url::Host::Ipv4(a) => Some(IpAddr::V4(a)),
                url::Host::Ipv6(a) => Some(IpAddr::V6(a)),
                url::Host::Domain(_) => None,
            };
            let mapped = parsed.host_str().is_some_and(|h| self.cfg.resolve.get(h).is_some());
            if let Some(ip) = ip {
                if is_non_public(ip) && !self.cfg.allow_private && !mapped {
                    return Err(err(FetchErrorKind::Refused, format!("{ip} is not a public address")));
                }
            }
        } else {
            return Err(err(FetchErrorKind::BadUrl, "no host"));
        }
        // A socket first (waiting at the bound, outside the fetch's time limit); dropped with
        // the fetch on a timeout (its connection is dropped too).
        let socket = self.pool.checkout(&pool_key(&parsed)).await;
        let client = &socket.generation.client;
        let start = Instant::now();
        let mut kept = false;
        let fut = async {
            match self.fetch_inner(client, parsed.clone(), start, max_body, headers_first, &mut kept).await {
                // Once, on a fresh connection (the pool just dropped the dead one).
                Err(e) if is_stale_connection(e.kind, &e.detail) => {
                    self.stale_retries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tracing::debug!(url = %parsed, error = %e, "stale pooled connection: sent again on a fresh one");
                    let mut again =
                        self.fetch_inner(client, parsed, start, max_body, headers_first, &mut kept).await;
                    if let Ok(r) = &mut again {
                        r.retried_stale = true;
                    }
                    again
                }
                other => other,
            }
        };
        let result = match tokio::time::timeout(self.cfg.total_timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(err(
                FetchErrorKind::Timeout,
                format!("no complete response in {:?}", self.cfg.total_timeout),
            )),
        };
        self.pool.checkin(socket, kept);
        result
    }

    /// One request on `client`; `kept` is set when its connection may stay in the client's
    /// pool (the body read to its end, no `Connection: close`), cleared otherwise.
    async fn fetch_inner(
        &self,
        client: &reqwest::Client,
        url: url::Url,
        start: Instant,
        max_body: usize,
        headers_first: bool,
        kept: &mut bool,
    ) -> Result<FetchResponse, FetchError> {
        *kept = false;
        let conditional = self.cfg.validators.get(url.as_str()).map(conditional_headers).unwrap_or_default();
        let sent = request_headers(&url, &self.user_agent, &conditional)?;
        let request_head = request_head(&url, &sent);
        let mut headers = reqwest::header::HeaderMap::with_capacity(sent.len());
        for (name, value) in sent {
            headers.append(name, value);
        }
        let mut resp = client.get(url).headers(headers).send().await.map_err(classify)?;
        let status = resp.status();
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect();
        let reason = match resp.extensions().get::<hyper::ext::ReasonPhrase>() {
            Some(r) => String::from_utf8_lossy(r.as_bytes()).into_owned(),
            None => status.canonical_reason().unwrap_or("").to_string(),
        };
        let remote_ip = resp.remote_addr().map(|a| a.ip());
        let http_version = format!("{:?}", resp.version());
        let mut sent_body = Vec::new();
        let mut sent_truncated = false;
        let refused = match headers_first && status.is_success() {
            true => refuse_after_headers(&headers, max_body),
            false => None,
        };
        // A refused body is not read: dropping the response closes the connection.
        while refused.is_none() {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    let room = max_body.saturating_sub(sent_body.len());
                    if chunk.len() > room {
                        sent_body.extend_from_slice(&chunk[..room]);
                        sent_truncated = true;
                        break; // dropping the response closes the connection
                    }
                    sent_body.extend_from_slice(&chunk);
                }
                Ok(None) => {
                    // Read to its end: the connection goes back to the pool unless the server
                    // closes it.
                    *kept = !headers.iter().any(|(k, v)| {
                        k.eq_ignore_ascii_case("connection") && v.to_ascii_lowercase().contains("close")
                    });
                    break;
                }
                Err(e) => {
                    let e = classify(e);
                    if e.kind == FetchErrorKind::Timeout {
                        return Err(e);
                    }
                    return Err(FetchError { kind: FetchErrorKind::Body, detail: e.detail });
                }
            }
        }
        let Decoded { body, sent_body, truncated } =
            decode_sent(&headers, sent_body, sent_truncated, max_body)?;
        Ok(FetchResponse {
            status: status.as_u16(),
            reason,
            http_version,
            headers,
            body,
            truncated,
            sent_body,
            sent_truncated,
            refused,
            retried_stale: false,
            remote_ip,
            elapsed: start.elapsed(),
            request_head,
        })
    }
}

/// The HTTP client: every header is set per request (`request_headers`), in the order
/// written, so the request record is the request as sent; the client adds none (no default
/// User-Agent, no Accept-Encoding of its own: it decompresses nothing). At most one idle
/// connection per host, kept `pool_idle_timeout`.
fn build_client(cfg: &FetchConfig) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .no_zstd()
        .http1_title_case_headers()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(cfg.connect_timeout)
        .read_timeout(cfg.read_timeout)
        .no_proxy()
        .dns_resolver(Arc::new(GuardedResolver {
            map: cfg.resolve.clone(),
            dns: cfg.dns.clone(),
            allow_private: cfg.allow_private,
        }))
        .pool_max_idle_per_host(1)
        .pool_idle_timeout(cfg.pool_idle_timeout)
        .build()
}

/// A body as sent and decoded ([`decode_sent`]).
#[derive(Debug, PartialEq, Eq)]
struct Decoded {
    body: Vec<u8>,
    /// The body as sent, where it differs from `body`.
    sent_body: Option<Vec<u8>>,
    truncated: bool,
}

/// The body as sent, decoded by its Content-Encoding (the WARC reader's decoder, output
/// capped at `max`). A body that does not decode is an error, unless it was cut short (then
/// what decoded is kept; the page is not used anyway).
fn decode_sent(
    headers: &[(String, String)],
    sent: Vec<u8>,
    sent_truncated: bool,
    max: usize,
) -> Result<Decoded, FetchError> {
    let codings = crate::warc::http::content_codings(
        headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("content-encoding")).map(|(_, v)| v.as_str()),
    );
    if codings.is_empty() {
        return Ok(Decoded { body: sent, sent_body: None, truncated: sent_truncated });
    }
    let (body, capped, failed) = crate::warc::http::decode_codings(&codings, sent.clone(), max);
    if failed && !sent_truncated {
        let detail = format!("the body does not decode as Content-Encoding {}", codings.join(", "));
        return Err(FetchError { kind: FetchErrorKind::Body, detail });
    }
    Ok(Decoded { body, sent_body: Some(sent), truncated: sent_truncated || capped || failed })
}

/// The request's header fields, in the order sent: `Host`, `User-Agent`, `Accept`,
/// `Accept-Encoding`, then any conditional ones. The client writes them in this order with
/// these names (title case) and adds none, so [`request_head`] is the request as sent.
fn request_headers(
    url: &url::Url,
    user_agent: &reqwest::header::HeaderValue,
    conditional: &[(&str, &str)],
) -> Result<Vec<(reqwest::header::HeaderName, reqwest::header::HeaderValue)>, FetchError> {
    use reqwest::header::{self as h, HeaderValue};
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
        None => url.host_str().unwrap_or("").to_string(),
    };
    let host = HeaderValue::from_str(&host).map_err(|_| err(FetchErrorKind::BadUrl, "host not sendable"))?;
    let mut out = vec![
        (h::HOST, host),
        (h::USER_AGENT, user_agent.clone()),
        (h::ACCEPT, HeaderValue::from_static(ACCEPT)),
        (h::ACCEPT_ENCODING, HeaderValue::from_static(ACCEPT_ENCODING)),
    ];
    for (name, value) in conditional {
        // Both were checked by `conditional_headers`.
        if let (Ok(n), Ok(v)) = (h::HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            out.push((n, v));
        }
    }
    Ok(out)
}

/// The request head as written on the wire: request line in origin form, then `headers`
/// with their names in title case (as the client writes them), then a blank line.
fn request_head(
    url: &url::Url,
    headers: &[(reqwest::header::HeaderName, reqwest::header::HeaderValue)],
) -> Vec<u8> {
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(b"GET ");
    head.extend_from_slice(url.path().as_bytes());
    if let Some(q) = url.query() {
        head.push(b'?');
        head.extend_from_slice(q.as_bytes());
    }
    head.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in headers {
        head.extend_from_slice(title_case(name.as_str()).as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// A header name as hyper's `title_case_headers` writes it: the first letter and every
/// letter after a `-` upper case.
fn title_case(name: &str) -> String {
    let mut up = true;
    name.chars()
        .map(|c| {
            let c = if up { c.to_ascii_uppercase() } else { c };
            up = c == '-';
            c
        })
        .collect()
}

fn err(kind: FetchErrorKind, e: impl std::fmt::Display) -> FetchError {
    FetchError { kind, detail: e.to_string() }
}

fn classify(e: reqwest::Error) -> FetchError {
    // Walk the source chain for the root cause's text (our resolver's refusal, hyper's
    // header errors …).
    let mut detail = e.to_string();
    let mut src: Option<&dyn std::error::Error> = std::error::Error::source(&e);
    while let Some(s) = src {
        detail = format!("{detail}: {s}");
        src = s.source();
    }
    let kind = if detail.contains("refused: ") && detail.contains("non-public") {
        FetchErrorKind::Refused
    } else if e.is_timeout() {
        FetchErrorKind::Timeout
    } else if e.is_connect() {
        FetchErrorKind::Connect
    } else if e.is_body() || e.is_decode() {
        FetchErrorKind::Body
    } else {
        FetchErrorKind::Protocol
    };
    FetchError { kind, detail }
}

/// Parse `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
pub fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_public_ranges() {
        for ip in [
            "10.1.2.3",
            "127.0.0.1",
            "169.254.1.1",
            "192.168.0.1",
            "172.16.5.4",
            "0.0.0.0",
            "224.0.0.1",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fc00::1",
            "::",
            "ff02::1",
            "::ffff:127.0.0.1",
            // issue 38: IETF protocol assignments, NAT64, 6to4, IPv4-compatible
            "192.0.0.1",
            "192.0.0.170",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b::c0a8:101",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::808:808",
            "2002:7f00:1::1",
            "2002:808:808::1",
            "2002::",
            "::127.0.0.1",
            "::10.0.0.1",
        ] {
            assert!(is_non_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            // NAT64 of a public address is how IPv6-only networks reach IPv4 sites.
            "64:ff9b::808:808",
            "64:ff9b::5db8:d822",
            "192.0.1.1",
            "191.255.255.255",
            "2001:4860::8888",
            "2003::1",
        ] {
            assert!(!is_non_public(ip.parse().unwrap()), "{ip}");
        }
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn bodies_are_kept_as_sent_and_decoded() {
        let ce = |v: &str| {
            vec![("content-type".to_string(), "text/html".to_string()), ("content-encoding".into(), v.into())]
        };
        let html = b"<p>hello hello hello</p>".repeat(20);
        let sent = gzip(&html);
        let d = decode_sent(&ce("gzip"), sent.clone(), false, 1 << 20).unwrap();
        assert_eq!(d, Decoded { body: html.clone(), sent_body: Some(sent.clone()), truncated: false });
        // No coding: the body is the body as sent (not kept twice).
        let plain = vec![("content-type".to_string(), "text/html".to_string())];
        let as_is = Decoded { body: html.clone(), sent_body: None, truncated: false };
        assert_eq!(decode_sent(&plain, html.clone(), false, 1 << 20).unwrap(), as_is);
        assert_eq!(decode_sent(&ce("identity"), html.clone(), false, 1 << 20).unwrap(), as_is);
        // Decoded past the cap: cut there (a bomb), the body as sent whole.
        let d = decode_sent(&ce("gzip"), sent.clone(), false, 100).unwrap();
        assert_eq!((d.body.len(), d.sent_body.map(|k| k.len()), d.truncated), (100, Some(sent.len()), true));
        // A body that does not decode is an error, unless it was cut short.
        let e = decode_sent(&ce("gzip"), html.clone(), false, 1 << 20).unwrap_err();
        assert_eq!(e.kind, FetchErrorKind::Body);
        assert!(e.detail.contains("gzip"), "{e}");
        assert!(decode_sent(&ce("zstd"), html.clone(), false, 1 << 20).is_err());
        let half = sent[..sent.len() / 2].to_vec();
        let d = decode_sent(&ce("gzip"), half.clone(), true, 1 << 20).unwrap();
        assert!(d.truncated && html.starts_with(&d.body) && d.sent_body == Some(half));
    }

    #[test]
    fn the_request_head_is_written_as_the_client_sends_it() {
        let url = url::Url::parse("http://h.test:8080/a/b?q=1&r").unwrap();
        let ua = reqwest::header::HeaderValue::from_static("ditto-test/1 (+http://h.test/)");
        let headers = request_headers(&url, &ua, &[("If-None-Match", "\"v1\"")]).unwrap();
        assert_eq!(
            String::from_utf8(request_head(&url, &headers)).unwrap(),
            "GET /a/b?q=1&r HTTP/1.1\r\nHost: h.test:8080\r\nUser-Agent: ditto-test/1 (+http://h.test/)\r\n\
             Accept: text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5\r\n\
             Accept-Encoding: gzip, deflate, br\r\nIf-None-Match: \"v1\"\r\n\r\n"
        );
        assert_eq!(title_case("if-modified-since"), "If-Modified-Since");
        assert_eq!(title_case("x--y"), "X--Y");
        let url = url::Url::parse("https://[::1]/").unwrap();
        let head = request_head(&url, &request_headers(&url, &ua, &[]).unwrap());
        assert!(head.starts_with(b"GET / HTTP/1.1\r\nHost: [::1]\r\n"));
    }

    #[test]
    fn conditional_headers_sent() {
        let v = Validators {
            etag: Some("\"v1\"".into()),
            last_modified: Some("Mon, 01 Jan 2024 00:00:00 GMT".into()),
        };
        assert_eq!(
            conditional_headers(&v),
            [("If-None-Match", "\"v1\""), ("If-Modified-Since", "Mon, 01 Jan 2024 00:00:00 GMT")]
        );
        // A value no header can carry is not sent.
        let bad = Validators { etag: Some("a\u{1}b".into()), last_modified: None };
        assert!(conditional_headers(&bad).is_empty());
    }

    #[test]
    fn resolve_map_exact_and_suffix() {
        let mut m = ResolveMap::default();
        m.add("a.test=127.0.0.1:8080").unwrap();
        m.add("*.demo.test=127.0.0.2:9000").unwrap();
        assert_eq!(m.get("A.test"), Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(m.get("wiki.demo.test"), Some("127.0.0.2:9000".parse().unwrap()));
        assert_eq!(m.get("demo.test"), Some("127.0.0.2:9000".parse().unwrap()));
        assert_eq!(m.get("xdemo.test"), None);
        assert_eq!(m.get("Wiki.Demo.Test."), Some("127.0.0.2:9000".parse().unwrap()));
        assert_eq!(m.get("a.test."), Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(m.get("test"), None);
        assert!(matches!(
            m.add("nohost"),
            Err(CrawlError::BadResolve { problem: ResolveProblem::NoEquals, .. })
        ));
        let Err(e) = m.add("h=notanaddr") else { panic!("accepted h=notanaddr") };
        assert_eq!(e.to_string(), r#"--resolve "h=notanaddr": "notanaddr" is not ADDR:PORT"#);
        assert!(matches!(
            m.add("=127.0.0.1:80"),
            Err(CrawlError::BadResolve { problem: ResolveProblem::EmptyHost, .. })
        ));
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(parse_retry_after(&later, now), Some(Duration::from_secs(30)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
    }
}
