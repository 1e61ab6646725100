//! URL rules of the crawler: canonical form, SURT keys, registrable domains, crawl scope,
//! trap avoidance and host partitioning.
//!
//! Everything here is pure and synchronous. URLs are parsed with the `url` crate (WHATWG
//! URL Standard), which already does most of RFC 3986 §6.2.2 syntax-based normalization;
//! [`normalize_url`] adds the rest (percent-encoding normalization, fragment, empty query).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;
use url::{Host, Url};

use detector::{TrapReason, TrapRules};

/// Why a string is not a crawlable URL.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UrlError {
    #[error("invalid URL: {0}")]
    Parse(#[from] url::ParseError),
    /// Only `http` and `https` are fetched.
    #[error("unsupported scheme {0:?}")]
    UnsupportedScheme(String),
    #[error("URL has no host")]
    NoHost,
    #[error("invalid host pattern {0:?}")]
    BadPattern(String),
}

// ---------------------------------------------------------------------------------------
// Canonical form
// ---------------------------------------------------------------------------------------

/// Canonical form of an absolute `http`/`https` URL, as a string.
///
/// The rules (RFC 3986 §6.2.2 and §6.2.3, applied by [`normalize_url`]):
/// - scheme and host lower-cased, internationalized hosts in IDNA/punycode form (§6.2.2.1;
///   the `url` crate does this), a trailing dot of the host removed;
/// - the default port removed: 80 for http, 443 for https (§6.2.3);
/// - dot segments removed (§6.2.2.3) and an empty path made `/` (§6.2.3);
/// - percent-encoding normalized (§6.2.2.2): escapes of unreserved characters
///   (`ALPHA / DIGIT / "-" / "." / "_" / "~"`, §2.3) decoded, the hex digits of all other
///   escapes upper-cased (§6.2.2.1);
/// - the fragment dropped (it never reaches the server);
/// - the query kept byte for byte and in order, except that an empty query (`/a?`) is
///   removed.
///
/// Userinfo is kept (the crawler removes it before a URL can be fetched:
/// [`strip_credentials`]). The result is idempotent: canonicalizing it again changes nothing.
pub fn canonicalize(url: &str) -> Result<String, UrlError> {
    canonical_url(url).map(String::from)
}

/// Canonical form of `href` resolved against `base` (RFC 3986 §5.2), as a string.
/// `base` need not be canonical. Hrefs with other schemes (`mailto:`, `javascript:`) fail
/// with [`UrlError::UnsupportedScheme`].
pub fn canonicalize_with_base(base: &str, href: &str) -> Result<String, UrlError> {
    let base = Url::parse(base)?;
    resolve(&base, href).map(String::from)
}

/// [`canonicalize`], returning the parsed URL.
pub fn canonical_url(url: &str) -> Result<Url, UrlError> {
    normalize_url(Url::parse(url)?)
}

/// Resolve `href` against a parsed `base` (RFC 3986 §5.2) and canonicalize the result.
pub fn resolve(base: &Url, href: &str) -> Result<Url, UrlError> {
    normalize_url(base.join(href)?)
}

/// Remove the userinfo (`user:secret@`) of `url`; true when there was some. A crawler never
/// sends credentials found in links, seeds or redirects: HTTP clients turn them into an
/// `Authorization` header (Heritrix strips them too).
pub fn strip_credentials(url: &mut Url) -> bool {
    if url.username().is_empty() && url.password().is_none() {
        return false;
    }
    // Both fail only for URLs that cannot have credentials (no host, `file:`), which have
    // none to strip.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    true
}

/// Apply the canonical-form rules of [`canonicalize`] to a parsed URL.
pub fn normalize_url(mut url: Url) -> Result<Url, UrlError> {
    match url.scheme() {
        "http" | "https" => {}
        other => return Err(UrlError::UnsupportedScheme(other.to_string())),
    }
    // `example.com.` and `example.com` name the same host; keep one form.
    let trimmed = match url.host() {
        Some(Host::Domain(d)) if d.ends_with('.') => Some(d.trim_end_matches('.').to_string()),
        Some(_) => None,
        None => return Err(UrlError::NoHost),
    };
    if let Some(host) = trimmed {
        if host.is_empty() {
            return Err(UrlError::NoHost);
        }
        url.set_host(Some(&host))?;
    }
    url.set_fragment(None);
    if let Some(path) = normalize_percent(url.path()) {
        url.set_path(&path);
    }
    match url.query() {
        Some("") => url.set_query(None),
        Some(q) => {
            if let Some(q) = normalize_percent(q) {
                url.set_query(Some(&q));
            }
        }
        None => {}
    }
    Ok(url)
}

/// RFC 3986 §2.3 unreserved characters.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Percent-encoding normalization (RFC 3986 §6.2.2.1–2): decode escapes of unreserved
/// characters, upper-case the hex of the others. `None` when nothing changes. A `%` not
/// followed by two hex digits is left alone (the WHATWG parser keeps it too).
fn normalize_percent(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0; // bytes of `s` already in `out`
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(hi), Some(lo)) = (hex_val(b[i + 1]), hex_val(b[i + 2])) {
                let v = hi * 16 + lo;
                // Decoding a hex digit right after a stray `%` or `%X` would make a new
                // escape ("%6" + "%61" → "%6a"), which a second pass would decode: the
                // canonical form would not be a fixed point (found by fuzzing, issue 26).
                let tail = last_two(out.as_deref(), &s[copied..i]);
                let forms_escape = v.is_ascii_hexdigit()
                    && (tail[1] == Some(b'%')
                        || (tail[0] == Some(b'%') && tail[1].is_some_and(|c| c.is_ascii_hexdigit())));
                let replacement: Option<String> = if is_unreserved(v) && !forms_escape {
                    Some((v as char).to_string())
                } else if b[i + 1].is_ascii_lowercase() || b[i + 2].is_ascii_lowercase() {
                    Some(format!("%{v:02X}"))
                } else {
                    None
                };
                if let Some(r) = replacement {
                    let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
                    // `%XX` is ASCII, so these slice bounds are char boundaries.
                    o.push_str(&s[copied..i]);
                    o.push_str(&r);
                    copied = i + 3;
                }
                i += 3;
                continue;
            }
        }
        i += 1;
    }
    let mut o = out?;
    o.push_str(&s[copied..]);
    Some(o)
}

/// The last two bytes of `done` followed by `pending` (the output so far).
fn last_two(done: Option<&str>, pending: &str) -> [Option<u8>; 2] {
    let mut it = done.unwrap_or("").bytes().chain(pending.bytes()).rev();
    let last = it.next();
    [it.next(), last]
}

// ---------------------------------------------------------------------------------------
// SURT keys and registrable domains
// ---------------------------------------------------------------------------------------

/// True for an IPv4 address or a bracketed IPv6 address (as `Url::host_str` gives it).
fn is_ip_host(host: &str) -> bool {
    host.starts_with('[') || host.contains(':') || Ipv4Addr::from_str(host).is_ok()
}

/// Lower-case ASCII, no trailing dot.
fn clean_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// SURT host key (Sort-friendly URI Reordering Transform, as Heritrix and the Wayback
/// Machine use it): the host lower-cased, its labels reversed, each followed by a comma:
/// `www.Example.com` → `com,example,www,`.
///
/// `www` is kept (unlike CDX indexes, which strip it): `www.example.com` and `example.com`
/// are different hosts. The trailing comma makes a domain's key a prefix of exactly its
/// subdomains' keys (`com,example,` is a prefix of `com,example,www,` but not of
/// `com,examples,`). IP addresses (IPv4, bracketed IPv6) are returned as they are, without
/// reversal or comma; a trailing dot is dropped. Pass the punycode form of IDNs (as
/// `Url::host_str` gives it); other bytes are only ASCII-lower-cased.
pub fn surt_host_key(host: &str) -> String {
    let host = clean_host(host);
    if host.is_empty() || is_ip_host(&host) {
        return host;
    }
    let mut out = String::with_capacity(host.len() + 1);
    for label in host.rsplit('.') {
        out.push_str(label);
        out.push(',');
    }
    out
}

/// SURT form of a parsed URL, CDX style: `http://www.Example.com:8080/a?b=1` →
/// `com,example,www:8080)/a?b=1`.
///
/// The scheme and userinfo are dropped; the host labels reversed and comma-separated
/// (without the trailing comma of [`surt_host_key`]); a non-default port follows as
/// `:port`; then `)`, the path and `?query`. The fragment is dropped. Pass a canonical URL
/// ([`canonical_url`]) for canonical keys.
pub fn surt(url: &Url) -> String {
    let mut out = surt_host_key(url.host_str().unwrap_or(""));
    if out.ends_with(',') {
        out.pop();
    }
    if let Some(port) = url.port() {
        out.push(':');
        out.push_str(&port.to_string());
    }
    out.push(')');
    out.push_str(url.path());
    if let Some(q) = url.query() {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// [`surt`] of the canonical form of a URL string.
pub fn surt_str(url: &str) -> Result<String, UrlError> {
    canonical_url(url).map(|u| surt(&u))
}

/// Registrable domain ("eTLD+1") of a host, from the Public Suffix List (`psl` crate,
/// ICANN and private sections): `a.b.example.co.uk` → `example.co.uk`,
/// `foo.blogspot.com` → `foo.blogspot.com`.
///
/// Fallbacks, so that every real host has a domain:
/// - IP addresses and single-label hosts (`localhost`) are their own domain;
/// - an unknown TLD falls under the list's default `*` rule: its last label is the public
///   suffix and the registrable domain is the last two labels (`a.b.test` → `b.test`);
/// - a host that is itself a public suffix (`co.uk`) is its own domain.
///
/// The host is lower-cased and a trailing dot dropped; `None` only for an empty host.
pub fn registrable_domain(host: &str) -> Option<String> {
    let host = clean_host(host);
    if host.is_empty() {
        return None;
    }
    if is_ip_host(&host) || !host.contains('.') {
        return Some(host);
    }
    match psl::domain_str(&host) {
        Some(d) => Some(d.to_string()),
        None => Some(host),
    }
}

// ---------------------------------------------------------------------------------------
// Scope
// ---------------------------------------------------------------------------------------

/// Which hosts a crawl may leave its seeds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Any host (a focused crawl that follows copies across the web).
    Any,
    /// Only the exact hosts of the seeds.
    SeedHosts,
    /// Any host whose registrable domain is a seed's ([`registrable_domain`]).
    SameDomain,
}

/// A host pattern: an exact host (`example.com`), or `*.suffix`, which matches the suffix
/// itself and every host below it (`*.example.com` matches `example.com` and
/// `a.b.example.com`, not `badexample.com`). Patterns are lower-cased, IDNs converted to
/// punycode, a trailing dot dropped; a `*` anywhere else is an error.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HostPattern {
    Exact(String),
    Suffix(String),
}

/// `host` is `suffix` or a name under it, ASCII case aside (`a.b.test` under `b.test`, not
/// `ab.test`): the `*.suffix` rule of host patterns and of `--resolve`.
pub(crate) fn is_same_or_subdomain(host: &str, suffix: &str) -> bool {
    // Bytes, not str slices: a non-ASCII host must not split a character.
    let (h, s) = (host.as_bytes(), suffix.as_bytes());
    h.len() >= s.len()
        && h[h.len() - s.len()..].eq_ignore_ascii_case(s)
        && (h.len() == s.len() || h[h.len() - s.len() - 1] == b'.')
}

impl HostPattern {
    pub fn parse(pattern: &str) -> Result<Self, UrlError> {
        let bad = || UrlError::BadPattern(pattern.to_string());
        let p = pattern.trim();
        let (wild, rest) = match p.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, p),
        };
        let rest = rest.trim_end_matches('.');
        if rest.is_empty() || rest.contains('*') {
            return Err(bad());
        }
        // Host::parse lower-cases and applies IDNA, as URL parsing does to hosts.
        let host = match Host::parse(rest).map_err(|_| bad())? {
            Host::Domain(d) => d,
            Host::Ipv4(a) => a.to_string(),
            Host::Ipv6(a) => format!("[{a}]"),
        };
        Ok(if wild { HostPattern::Suffix(host) } else { HostPattern::Exact(host) })
    }

    /// Whether `host` (lower-case, as `Url::host_str` gives it) matches.
    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        match self {
            HostPattern::Exact(h) => host.eq_ignore_ascii_case(h),
            HostPattern::Suffix(s) => is_same_or_subdomain(host, s),
        }
    }
}

impl FromStr for HostPattern {
    type Err = UrlError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HostPattern::parse(s)
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostPattern::Exact(h) => f.write_str(h),
            HostPattern::Suffix(s) => write!(f, "*.{s}"),
        }
    }
}

/// Why a URL is out of scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutOfScope {
    UnsupportedScheme,
    NoHost,
    /// The host matches a blocked pattern.
    BlockedHost,
    /// [`Scope::SeedHosts`]: not a seed host, nor allowed by a pattern.
    NotSeedHost,
    /// [`Scope::SameDomain`]: not under a seed's registrable domain, nor allowed.
    NotSeedDomain,
}

impl OutOfScope {
    /// Stable name for counters.
    pub fn as_str(&self) -> &'static str {
        match self {
            OutOfScope::UnsupportedScheme => "unsupported_scheme",
            OutOfScope::NoHost => "no_host",
            OutOfScope::BlockedHost => "blocked_host",
            OutOfScope::NotSeedHost => "not_seed_host",
            OutOfScope::NotSeedDomain => "not_seed_domain",
        }
    }
}

impl fmt::Display for OutOfScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The crawl's scope: a URL is allowed when its scheme is http(s), its host matches no
/// blocked pattern, and either it is inside [`Scope`] relative to the seeds or its host
/// matches an allowed pattern. Blocking wins over everything; allowed patterns widen the
/// scope (they mean nothing with [`Scope::Any`]).
#[derive(Debug, Clone)]
pub struct ScopeRules {
    pub scope: Scope,
    seed_hosts: HashSet<String>,
    seed_domains: HashSet<String>,
    pub allowed: Vec<HostPattern>,
    pub blocked: Vec<HostPattern>,
}

impl ScopeRules {
    pub fn new(scope: Scope) -> Self {
        ScopeRules {
            scope,
            seed_hosts: HashSet::new(),
            seed_domains: HashSet::new(),
            allowed: Vec::new(),
            blocked: Vec::new(),
        }
    }

    /// Add seeds (their hosts and registrable domains).
    pub fn with_seeds<'a>(mut self, seeds: impl IntoIterator<Item = &'a Url>) -> Self {
        for s in seeds {
            self.add_seed(s);
        }
        self
    }

    pub fn with_allowed(mut self, patterns: impl IntoIterator<Item = HostPattern>) -> Self {
        self.allowed.extend(patterns);
        self
    }

    pub fn with_blocked(mut self, patterns: impl IntoIterator<Item = HostPattern>) -> Self {
        self.blocked.extend(patterns);
        self
    }

    pub fn add_seed(&mut self, seed: &Url) {
        if let Some(host) = seed.host_str() {
            let host = clean_host(host);
            if let Some(d) = registrable_domain(&host) {
                self.seed_domains.insert(d);
            }
            self.seed_hosts.insert(host);
        }
    }

    pub fn allows(&self, url: &Url) -> Result<(), OutOfScope> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(OutOfScope::UnsupportedScheme);
        }
        let host = match url.host_str() {
            Some(h) if !h.is_empty() => clean_host(h),
            _ => return Err(OutOfScope::NoHost),
        };
        if self.blocked.iter().any(|p| p.matches(&host)) {
            return Err(OutOfScope::BlockedHost);
        }
        let inside = match self.scope {
            Scope::Any => return Ok(()),
            Scope::SeedHosts => self.seed_hosts.contains(&host),
            Scope::SameDomain => registrable_domain(&host).is_some_and(|d| self.seed_domains.contains(&d)),
        };
        if inside || self.allowed.iter().any(|p| p.matches(&host)) {
            return Ok(());
        }
        Err(match self.scope {
            Scope::SeedHosts => OutOfScope::NotSeedHost,
            _ => OutOfScope::NotSeedDomain,
        })
    }
}

// ---------------------------------------------------------------------------------------
// Traps
// ---------------------------------------------------------------------------------------

/// Why the crawler refuses a URL as a likely trap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrapKind {
    /// Path segments repeat back to back (detector's recursion-error rule).
    RepeatedPath,
    /// Too many directory levels (detector's rule, paper appendix A: 96).
    TooDeep,
    UrlTooLong,
    /// Too many distinct queries for one path or one parameter-name set of a host.
    QueryExplosion,
    TooManyParams,
}

impl TrapKind {
    pub const ALL: [TrapKind; 5] = [
        TrapKind::RepeatedPath,
        TrapKind::TooDeep,
        TrapKind::UrlTooLong,
        TrapKind::QueryExplosion,
        TrapKind::TooManyParams,
    ];

    /// Stable name for counters; the first two equal [`TrapReason::as_str`].
    pub fn as_str(&self) -> &'static str {
        match self {
            TrapKind::RepeatedPath => "repeated_path",
            TrapKind::TooDeep => "too_deep",
            TrapKind::UrlTooLong => "url_too_long",
            TrapKind::QueryExplosion => "query_explosion",
            TrapKind::TooManyParams => "too_many_params",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl From<TrapReason> for TrapKind {
    fn from(r: TrapReason) -> Self {
        match r {
            TrapReason::RepeatedPath => TrapKind::RepeatedPath,
            TrapReason::TooDeep => TrapKind::TooDeep,
        }
    }
}

impl fmt::Display for TrapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Limits of [`TrapGuard`]. A limit of 0 disables its check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrapLimits {
    /// Path repetition and depth, shared with the pipeline's recursion-error filter.
    pub rules: TrapRules,
    /// Longest URL (canonical, in bytes). Default 2048, what most servers and browsers
    /// handle.
    pub max_url_len: usize,
    /// Most `&`-separated query parameters. Default 16.
    pub max_query_params: usize,
    /// Most distinct query strings for one (host, path), e.g. an endless calendar's
    /// `cal.php?month=..&year=..`. Default 1000: generous because one script path
    /// legitimately serves whole sites (`index.php?title=`, `viewtopic.php?t=`) and the
    /// per-host page budget bounds the rest.
    pub max_queries_per_path: usize,
    /// Most distinct query strings for one (host, set of parameter names) across all
    /// paths, e.g. a session or sort parameter appended to every link. Default 5000.
    pub max_queries_per_param_set: usize,
    /// Most (host, path) and (host, name set) keys tracked at once; the least recently
    /// used are forgotten (two generations of half this size each). Default 20000, so at
    /// most about 20000 × 1000 × 8 bytes in the pathological case, far less in practice.
    pub max_tracked_keys: usize,
}

impl Default for TrapLimits {
    fn default() -> Self {
        TrapLimits {
            rules: TrapRules::default(),
            max_url_len: 2048,
            max_query_params: 16,
            max_queries_per_path: 1000,
            max_queries_per_param_set: 5000,
            max_tracked_keys: 20_000,
        }
    }
}

/// Distinct query hashes seen for one key; never holds more than its limit.
type QuerySet = HashSet<u64>;

/// Crawler trap avoidance: [`TrapRules`] (path repetition, depth) plus URL length, query
/// parameter count and query explosions, each refusal counted by [`TrapKind`].
///
/// [`check`](TrapGuard::check) records the queries it admits, so a URL checked twice is
/// admitted twice, and a trap is cut off after its first `limit` distinct queries.
#[derive(Debug, Clone)]
pub struct TrapGuard {
    limits: TrapLimits,
    current: HashMap<u64, QuerySet>,
    previous: HashMap<u64, QuerySet>,
    counts: [u64; 5],
}

impl Default for TrapGuard {
    fn default() -> Self {
        TrapGuard::new(TrapLimits::default())
    }
}

impl TrapGuard {
    pub fn new(limits: TrapLimits) -> Self {
        TrapGuard { limits, current: HashMap::new(), previous: HashMap::new(), counts: [0; 5] }
    }

    pub fn limits(&self) -> &TrapLimits {
        &self.limits
    }

    /// `Some(kind)` when the URL (best canonical) is a likely trap; counted. Admitted
    /// queries are remembered.
    pub fn check(&mut self, url: &Url) -> Option<TrapKind> {
        let kind = self.classify(url);
        if let Some(k) = kind {
            self.counts[k.index()] += 1;
        }
        kind
    }

    /// Refusals so far of one kind.
    pub fn count(&self, kind: TrapKind) -> u64 {
        self.counts[kind.index()]
    }

    /// Refusals so far by name, every kind listed.
    pub fn counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        TrapKind::ALL.iter().map(|k| (k.as_str(), self.counts[k.index()]))
    }

    /// Keys currently tracked for query explosions (bounded by `max_tracked_keys`).
    pub fn tracked_keys(&self) -> usize {
        self.current.len() + self.previous.len()
    }

    fn classify(&mut self, url: &Url) -> Option<TrapKind> {
        let l = self.limits;
        if l.max_url_len > 0 && url.as_str().len() > l.max_url_len {
            return Some(TrapKind::UrlTooLong);
        }
        if let Some(r) = l.rules.check(url.as_str()) {
            return Some(r.into());
        }
        let query = url.query().filter(|q| !q.is_empty())?;
        let params: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
        if l.max_query_params > 0 && params.len() > l.max_query_params {
            return Some(TrapKind::TooManyParams);
        }
        if l.max_queries_per_path == 0 && l.max_queries_per_param_set == 0 {
            return None;
        }
        let host = url.host_str().unwrap_or("");
        let qh = fnv1a64(query.as_bytes());
        let mut names: Vec<&str> = params.iter().map(|p| p.split('=').next().unwrap_or(p)).collect();
        names.sort_unstable();
        names.dedup();
        let mut keys = Vec::with_capacity(2);
        if l.max_queries_per_path > 0 {
            keys.push((key_hash(b'p', host, &[url.path()]), l.max_queries_per_path));
        }
        if l.max_queries_per_param_set > 0 {
            keys.push((key_hash(b'n', host, &names), l.max_queries_per_param_set));
        }
        // Refuse before recording anything, so a refused query counts nowhere.
        for &(key, limit) in &keys {
            let set = self.set_for(key);
            if !set.contains(&qh) && set.len() >= limit {
                return Some(TrapKind::QueryExplosion);
            }
        }
        for &(key, _) in &keys {
            self.set_for(key).insert(qh);
        }
        None
    }

    /// The set of a key, promoted from the old generation or created; when the current
    /// generation is full it becomes the old one (the old one is dropped).
    fn set_for(&mut self, key: u64) -> &mut QuerySet {
        if !self.current.contains_key(&key) {
            let set = self.previous.remove(&key).unwrap_or_default();
            let half = (self.limits.max_tracked_keys / 2).max(1);
            if self.current.len() >= half {
                self.previous = std::mem::take(&mut self.current);
            }
            self.current.insert(key, set);
        }
        self.current.entry(key).or_default()
    }
}

/// Hash of a tracked key: kind tag, host, parts, NUL-separated.
fn key_hash(tag: u8, host: &str, parts: &[&str]) -> u64 {
    let mut h = Fnv1a64::new();
    h.write(&[tag, 0]);
    h.write(host.as_bytes());
    for p in parts {
        h.write(&[0]);
        h.write(p.as_bytes());
    }
    h.finish()
}

// ---------------------------------------------------------------------------------------
// Partitioning
// ---------------------------------------------------------------------------------------

/// FNV-1a, 64 bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3): a fixed,
/// documented hash, unlike std's `DefaultHasher`, whose output may change between Rust
/// versions and is randomized by `RandomState`.
struct Fnv1a64(u64);

impl Fnv1a64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new() -> Self {
        Fnv1a64(Self::OFFSET)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// FNV-1a 64 of bytes.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a64::new();
    h.write(bytes);
    h.finish()
}

/// The partition (0..`partitions`) that owns a host: FNV-1a 64 ([`fnv1a64`]) of the UTF-8
/// bytes of the host's [`registrable_domain`] (lower-case, no trailing dot; the host
/// itself when it has none), modulo `partitions`. `partitions` 0 or 1 gives 0.
///
/// Every host of one registrable domain lands in one partition, so per-domain politeness
/// and neighborhoods stay on one crawler. The hash is fixed across platforms and builds;
/// the domain comes from the Public Suffix List compiled into the `psl` crate, so all
/// partitions of a crawl must run the same build (a list update can move hosts under a
/// newly listed suffix).
pub fn partition_of(host: &str, partitions: u32) -> u32 {
    if partitions <= 1 {
        return 0;
    }
    let key = registrable_domain(host).unwrap_or_default();
    (fnv1a64(key.as_bytes()) % u64::from(partitions)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        match canonicalize(s) {
            Ok(c) => c,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn rfc3986_section6_equivalents() {
        // §6.2.2: "example://a/b/c/%7Bfoo%7D" ≡ "eXAMPLE://a/./b/../b/%63/%7bfoo%7d" (http here)
        assert_eq!(canon("HTTP://a/./b/../b/%63/%7bfoo%7d"), "http://a/b/c/%7Bfoo%7D");
        assert_eq!(canon("http://a/b/c/%7Bfoo%7D"), "http://a/b/c/%7Bfoo%7D");
        // §6.2.2.1 case: "HTTP://www.EXAMPLE.com/" ≡ "http://www.example.com/"
        assert_eq!(canon("HTTP://www.EXAMPLE.com/"), "http://www.example.com/");
        // §6.2.2.1: hex digits upper-cased, path case kept
        assert_eq!(canon("http://example.com/a%c2%b1b/Path"), "http://example.com/a%C2%B1b/Path");
        // §6.2.2.2: unreserved escapes decoded
        assert_eq!(canon("http://example.com/%7Esmith/%41%2d%2E%5F%30"), "http://example.com/~smith/A-._0");
        // §6.2.3: all of these are equivalent
        for u in [
            "http://example.com",
            "http://example.com/",
            "http://example.com:/",
            "http://example.com:80/",
            "HTTP://EXAMPLE.COM:80",
        ] {
            assert_eq!(canon(u), "http://example.com/", "{u}");
        }
        assert_eq!(canon("https://example.com:443/x"), "https://example.com/x");
        assert_eq!(canon("http://example.com:443/x"), "http://example.com:443/x");
        assert_eq!(canon("https://example.com:80/x"), "https://example.com:80/x");
        assert_eq!(canon("http://example.com:8080"), "http://example.com:8080/");
    }

    #[test]
    fn rfc3986_section5_4_reference_resolution() {
        // §5.4.1 normal examples, base "http://a/b/c/d;p?q"
        let base = "http://a/b/c/d;p?q";
        let cases = [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g/"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q"),
            ("g#s", "http://a/b/c/g"),
            ("g?y#s", "http://a/b/c/g?y"),
            (";x", "http://a/b/c/;x"),
            ("g;x", "http://a/b/c/g;x"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            // §5.4.2 abnormal examples
            ("../../../g", "http://a/g"),
            ("../../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            (".g", "http://a/b/c/.g"),
            ("g..", "http://a/b/c/g.."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("./g/.", "http://a/b/c/g/"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
            ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
            ("g;x=1/../y", "http://a/b/c/y"),
            ("g?y/./x", "http://a/b/c/g?y/./x"),
            ("g?y/../x", "http://a/b/c/g?y/../x"),
            ("g#s/./x", "http://a/b/c/g"),
            ("g#s/../x", "http://a/b/c/g"),
            ("https://other.example/x", "https://other.example/x"),
        ];
        for (href, want) in cases {
            assert_eq!(canonicalize_with_base(base, href).as_deref(), Ok(want), "{href}");
        }
    }

    #[test]
    fn fragment_query_and_schemes() {
        assert_eq!(canon("http://h/p?b=2&a=1#frag"), "http://h/p?b=2&a=1");
        assert_eq!(canon("http://h/p?"), "http://h/p");
        assert_eq!(canon("http://h/p?#x"), "http://h/p");
        assert_eq!(canon("http://h/p?q=%7e%2f%3d"), "http://h/p?q=~%2F%3D");
        assert_eq!(canon("http://h/p?a&&b"), "http://h/p?a&&b");
        assert_eq!(canon("http://h/100%/x"), "http://h/100%/x"); // stray % kept
        assert_eq!(canon("http://h/%zz%4"), "http://h/%zz%4");
        assert_eq!(canon("http://user:pw@h/"), "http://user:pw@h/");
        for (with, without) in [
            ("http://user:pw@h/x", "http://h/x"),
            ("http://user@h:81/", "http://h:81/"),
            ("https://:pw@h/", "https://h/"),
            ("http://%41:%42@h/", "http://h/"),
        ] {
            let mut u = canonical_url(with).unwrap();
            assert!(strip_credentials(&mut u), "{with}");
            assert_eq!(u.as_str(), without);
            assert!(!strip_credentials(&mut u), "{without}: nothing left to strip");
        }
        assert_eq!(canon("  http://h/a b\n"), "http://h/a%20b");
        assert_eq!(canon("http://Example.COM./x"), "http://example.com/x");
        assert_eq!(canon("http://BÜCHER.example/ä"), "http://xn--bcher-kva.example/%C3%A4");
        assert_eq!(canon("http://[::1]:80/"), "http://[::1]/");
        assert_eq!(canon("http://127.000.0.1/"), "http://127.0.0.1/");
        assert_eq!(canon("http://h/a/%2e%2E/b"), "http://h/b");
        assert!(matches!(canonicalize("ftp://h/"), Err(UrlError::UnsupportedScheme(_))));
        assert!(matches!(canonicalize("mailto:a@b"), Err(UrlError::UnsupportedScheme(_))));
        assert!(matches!(
            canonicalize_with_base("http://h/", "javascript:void(0)"),
            Err(UrlError::UnsupportedScheme(_))
        ));
        assert!(matches!(canonicalize("/relative"), Err(UrlError::Parse(_))));
        assert!(canonicalize("http://").is_err());
        assert!(canonicalize("http://./").is_err());
    }

    #[test]
    fn canonical_form_is_idempotent() {
        for u in [
            "HTTP://a/./b/../b/%63/%7bfoo%7d?x=%7e%aa#f",
            "http://h/%25%32%35",
            "http://h/%2541",
            "https://BÜCHER.example:443/a/../b?",
            "http://h/a%2fb%2Fc",
            // Found by the fuzz harness: decoding must not glue a new escape together.
            "http://foo.bar/foo/ba1/%6%61%7A",
            "http://h/%%36%31",
            "http://h/%%361",
        ] {
            let once = canon(u);
            assert_eq!(canon(&once), once, "{u}");
        }
        assert_eq!(canon("http://h/%2541"), "http://h/%2541");
        assert_eq!(canon("http://h/%6%61%7A"), "http://h/%6%61z");
    }

    #[test]
    fn surt_keys() {
        assert_eq!(surt_host_key("www.Example.com"), "com,example,www,");
        assert_eq!(surt_host_key("example.com."), "com,example,");
        assert_eq!(surt_host_key("localhost"), "localhost,");
        assert_eq!(surt_host_key("192.168.0.1"), "192.168.0.1");
        assert_eq!(surt_host_key("[::1]"), "[::1]");
        assert_eq!(surt_host_key(""), "");
        assert_eq!(
            surt_str("http://www.Example.com/path?query#f").as_deref(),
            Ok("com,example,www)/path?query")
        );
        assert_eq!(surt_str("https://example.com").as_deref(), Ok("com,example)/"));
        assert_eq!(surt_str("http://u@example.com:8080/a?").as_deref(), Ok("com,example:8080)/a"));
        assert_eq!(surt_str("http://10.0.0.1/x").as_deref(), Ok("10.0.0.1)/x"));
    }

    #[test]
    fn registrable_domains() {
        let rd = |h: &str| registrable_domain(h);
        assert_eq!(rd("www.example.com").as_deref(), Some("example.com"));
        assert_eq!(rd("A.B.Example.CO.UK.").as_deref(), Some("example.co.uk"));
        assert_eq!(rd("example.com").as_deref(), Some("example.com"));
        assert_eq!(rd("a.b.test").as_deref(), Some("b.test"));
        assert_eq!(rd("b.test").as_deref(), Some("b.test"));
        assert_eq!(rd("site.internal").as_deref(), Some("site.internal"));
        assert_eq!(rd("localhost").as_deref(), Some("localhost"));
        assert_eq!(rd("127.0.0.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(rd("[::1]").as_deref(), Some("[::1]"));
        assert_eq!(rd("co.uk").as_deref(), Some("co.uk"));
        assert_eq!(rd("en.wikipedia.org").as_deref(), Some("wikipedia.org"));
        assert_eq!(rd(""), None);
    }

    fn url(s: &str) -> Url {
        match canonical_url(s) {
            Ok(u) => u,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn host_patterns() {
        let p = |s: &str| match HostPattern::parse(s) {
            Ok(p) => p,
            Err(e) => panic!("{s}: {e}"),
        };
        assert!(p("*.Example.com").matches("example.com"));
        assert!(p("*.example.com").matches("a.b.example.com"));
        assert!(!p("*.example.com").matches("badexample.com"));
        assert!(!p("*.example.com").matches("com"));
        assert!(p("example.com.").matches("example.com"));
        assert!(!p("example.com").matches("www.example.com"));
        assert!(p("*.bücher.example").matches("xn--bcher-kva.example"));
        assert!(p("10.0.0.1").matches("10.0.0.1"));
        assert!(!p("*.ample.com").matches("exé.ample.com.x"));
        assert!(!p("*.b.com").matches("éb.com"));
        assert!(p("*.b.com").matches("é.b.com"));
        assert_eq!(p("*.example.com").to_string(), "*.example.com");
        for bad in ["", "*.", "*", "a.*.com", "ex*ample.com", "a b.com"] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn scope_rules() {
        let seeds = [url("http://www.example.com/"), url("http://a.b.test/")];
        let hosts = ScopeRules::new(Scope::SeedHosts).with_seeds(&seeds);
        assert_eq!(hosts.allows(&url("https://www.example.com/x")), Ok(()));
        assert_eq!(hosts.allows(&url("http://example.com/")), Err(OutOfScope::NotSeedHost));
        let hosts = hosts.with_allowed([HostPattern::Suffix("example.com".into())]);
        assert_eq!(hosts.allows(&url("http://img.example.com/")), Ok(()));

        let dom = ScopeRules::new(Scope::SameDomain)
            .with_seeds(&seeds)
            .with_blocked([HostPattern::Exact("ads.example.com".into())]);
        assert_eq!(dom.allows(&url("http://example.com/")), Ok(()));
        assert_eq!(dom.allows(&url("http://x.y.example.com/")), Ok(()));
        assert_eq!(dom.allows(&url("http://c.b.test/")), Ok(()));
        assert_eq!(dom.allows(&url("http://other.test/")), Err(OutOfScope::NotSeedDomain));
        assert_eq!(dom.allows(&url("http://ads.example.com/")), Err(OutOfScope::BlockedHost));

        let any = ScopeRules::new(Scope::Any).with_blocked([HostPattern::Suffix("evil.org".into())]);
        assert_eq!(any.allows(&url("http://anything.net/")), Ok(()));
        assert_eq!(any.allows(&url("http://x.evil.org/")), Err(OutOfScope::BlockedHost));
        let ftp = Url::parse("ftp://example.com/").ok();
        assert_eq!(ftp.map(|u| any.allows(&u)), Some(Err(OutOfScope::UnsupportedScheme)));
        assert_eq!(OutOfScope::NotSeedDomain.as_str(), "not_seed_domain");
    }

    #[test]
    fn trap_guard_path_rules_and_length() {
        let mut g = TrapGuard::default();
        assert_eq!(g.check(&url("http://h/a/a/a/x.html")), Some(TrapKind::RepeatedPath));
        let deep = format!("http://h/{}", (0..97).map(|i| format!("d{i}/")).collect::<String>());
        assert_eq!(g.check(&url(&deep)), Some(TrapKind::TooDeep));
        let long = format!("http://h/{}", "x".repeat(2048));
        assert_eq!(g.check(&url(&long)), Some(TrapKind::UrlTooLong));
        let many: Vec<String> = (0..17).map(|i| format!("p{i}=1")).collect();
        let many = format!("http://h/s?{}", many.join("&"));
        assert_eq!(g.check(&url(&many)), Some(TrapKind::TooManyParams));
        assert_eq!(g.check(&url("http://h/ok/page.html?a=1")), None);
        let names: Vec<&str> = TrapKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            names,
            ["repeated_path", "too_deep", "url_too_long", "query_explosion", "too_many_params"]
        );
        let counts: Vec<(&str, u64)> = g.counts().collect();
        assert_eq!(
            counts,
            [
                ("repeated_path", 1),
                ("too_deep", 1),
                ("url_too_long", 1),
                ("query_explosion", 0),
                ("too_many_params", 1)
            ]
        );
    }

    #[test]
    fn trap_guard_query_explosion() {
        let limits =
            TrapLimits { max_queries_per_path: 10, max_queries_per_param_set: 15, ..TrapLimits::default() };
        let mut g = TrapGuard::new(limits);
        for m in 0..10 {
            assert_eq!(g.check(&url(&format!("http://h/cal?month={m}"))), None);
        }
        assert_eq!(g.check(&url("http://h/cal?month=10")), Some(TrapKind::QueryExplosion));
        // Already admitted queries stay admitted; other hosts and paths are separate.
        assert_eq!(g.check(&url("http://h/cal?month=3")), None);
        assert_eq!(g.check(&url("http://other/cal?month=10")), None);
        assert_eq!(g.check(&url("http://h/cal")), None);
        // Same parameter names across paths: 10 admitted above + 5 here reach 15.
        for p in 0..5 {
            assert_eq!(g.check(&url(&format!("http://h/p{p}?month={}", 100 + p))), None);
        }
        assert_eq!(g.check(&url("http://h/p9?month=200")), Some(TrapKind::QueryExplosion));
        assert_eq!(g.check(&url("http://h/p9?day=1")), None);
        assert_eq!(g.count(TrapKind::QueryExplosion), 2);
    }

    #[test]
    fn trap_guard_memory_is_bounded() {
        let limits = TrapLimits { max_tracked_keys: 100, ..TrapLimits::default() };
        let mut g = TrapGuard::new(limits);
        for i in 0..10_000 {
            assert_eq!(g.check(&url(&format!("http://h{i}.example/p?x=1"))), None);
        }
        assert!(g.tracked_keys() <= 100, "{}", g.tracked_keys());
        // A trap that keeps being hit stays tracked while other keys churn.
        let limits = TrapLimits { max_tracked_keys: 20, max_queries_per_path: 5, ..TrapLimits::default() };
        let mut g = TrapGuard::new(limits);
        let mut refused = 0;
        for i in 0..200 {
            g.check(&url(&format!("http://noise{i}.example/")));
            g.check(&url(&format!("http://noise{i}.example/n?q={i}")));
            if g.check(&url(&format!("http://trap.example/cal?d={i}"))).is_some() {
                refused += 1;
            }
        }
        assert_eq!(refused, 195);
    }

    #[test]
    fn fnv_and_partitions_are_pinned() {
        // FNV-1a 64 reference values (draft-eastlake-fnv test vectors).
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
        // One partition per registrable domain.
        for n in [2, 7, 64, 1000] {
            let p = partition_of("example.com", n);
            assert_eq!(partition_of("www.example.com", n), p);
            assert_eq!(partition_of("A.B.EXAMPLE.COM.", n), p);
            assert!(p < n);
        }
        assert_eq!(partition_of("example.com", 0), 0);
        assert_eq!(partition_of("example.com", 1), 0);
        assert_eq!(partition_of("www.example.com", 16), (fnv1a64(b"example.com") % 16) as u32);
        assert_eq!(partition_of("en.wikipedia.org", 1000), (fnv1a64(b"wikipedia.org") % 1000) as u32);
        assert_eq!(partition_of("127.0.0.1", 7), (fnv1a64(b"127.0.0.1") % 7) as u32);
        // Pinned: these must never change.
        let pinned: Vec<u32> = ["example.com", "wikipedia.org", "b.test", "127.0.0.1"]
            .iter()
            .map(|h| partition_of(h, 1024))
            .collect();
        assert_eq!(pinned, PINNED);
    }

    const PINNED: [u32; 4] = [198, 512, 41, 190];
}
