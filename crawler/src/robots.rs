//! robots.txt (RFC 9309) parsing and matching, pure code: no network, no I/O.
//!
//! The behaviour follows RFC 9309 and, where the RFC leaves room, Google's reference
//! parser (github.com/google/robotstxt), whose test suite is checked in
//! `tests/robots_google.rs`. This is our own implementation; only the observable
//! behaviour is matched:
//!
//! - lines end at CR, LF or CRLF; a leading UTF-8 BOM (or a prefix of one) is skipped;
//!   lines are capped at 16,663 bytes (Google: `2083 * 8` bytes minus the terminator);
//! - `#` starts a comment (RFC 9309 §2.2.3 / ABNF); keys are case-insensitive (§2.1)
//!   and matched as prefixes, with Google's accepted typos (`useragent`, `user agent`,
//!   `dissallow`, `disalow`, …); a missing colon is accepted when the line is exactly
//!   `key value`;
//! - a group starts with one or more `user-agent` lines and ends at the next
//!   `user-agent` line after an `allow`/`disallow` line (§2.1); `sitemap`, `crawl-delay`
//!   and unknown lines do not end a group; groups for the same agent are merged (§2.2.1);
//! - the longest matching pattern (in octets, after escaping) wins; Allow wins ties
//!   (§2.2.2); `*` matches any run of octets and a final `$` anchors the end (§2.2.3);
//! - non-ASCII octets in patterns are percent-encoded and `%xx` escapes upper-cased
//!   before comparing (§2.2.2); the URL is expected already encoded by the caller.

use std::borrow::Cow;

/// RFC 9309 §2.5: crawlers MUST parse at least 500 kibibytes; we parse exactly that much
/// and ignore the rest (the fetcher may stop reading there too).
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// Longest line kept, in bytes (Google's buffer of `2083 * 8` minus its NUL terminator).
/// Bytes past this on one line are dropped, so a huge line cannot cost more than this.
pub const MAX_LINE_BYTES: usize = 2083 * 8 - 1;

const UTF8_BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The crawler's product token (RFC 9309 §2.2.1) from a full User-Agent string:
/// the leading run of `[A-Za-z_-]`, e.g. `ditto` from `ditto/0.1 (+https://example.org/bot)`.
pub fn product_token(user_agent: &str) -> &str {
    let end = user_agent.bytes().position(|b| !is_token_byte(b)).unwrap_or(user_agent.len());
    // All bytes before `end` are ASCII, so `end` is a char boundary.
    &user_agent[..end]
}

/// Whether `token` is a product token a crawler may use to obey robots.txt: non-empty and
/// only `[A-Za-z_-]` (RFC 9309 §2.2.1; Google's `IsValidUserAgentToObey`).
pub fn is_valid_product_token(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(is_token_byte)
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'-' || b == b'_'
}

/// Whitespace as C's `isspace` / absl's `ascii_isspace` (includes `\v`, unlike
/// `u8::is_ascii_whitespace`).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

fn trim_space(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

fn starts_with_ignore_case(s: &[u8], prefix: &str) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// Reduces a URL to path, params and query, dropping scheme, authority and fragment
/// (Google's `GetPathParamsQuery`). The result always starts with `/`; a URL without a
/// path (or an empty one) gives `/`.
pub fn path_params_query(url: &str) -> String {
    let b = url.as_bytes();
    let find_from = |start: usize, pred: &dyn Fn(u8) -> bool| -> Option<usize> {
        b.get(start..).and_then(|s| s.iter().position(|&c| pred(c))).map(|i| i + start)
    };
    let is_path_start = |c: u8| c == b'/' || c == b'?' || c == b';';

    // A leading `//` (scheme-relative URL) is skipped.
    let search_start = if b.starts_with(b"//") { 2 } else { 0 };
    let early_path = find_from(search_start, &is_path_start);
    let mut protocol_end =
        b.get(search_start..).and_then(|s| s.windows(3).position(|w| w == b"://")).map(|i| i + search_start);
    // A `://` after the first `/`, `?` or `;` is inside the path or query, not a scheme.
    if let (Some(early), Some(proto)) = (early_path, protocol_end) {
        if early < proto {
            protocol_end = None;
        }
    }
    let authority_start = protocol_end.map_or(search_start, |p| p + 3);

    let Some(path_start) = find_from(authority_start, &is_path_start) else {
        return "/".to_string();
    };
    let hash_pos = find_from(search_start, &|c| c == b'#');
    if let Some(h) = hash_pos {
        if h < path_start {
            return "/".to_string();
        }
    }
    let path_end = hash_pos.unwrap_or(b.len());
    // Both ends sit on ASCII bytes, so slicing the &str is on char boundaries.
    let part = &url[path_start..path_end];
    if part.starts_with('/') {
        part.to_string()
    } else {
        // e.g. `example.com?a` gives `/?a`.
        format!("/{part}")
    }
}

/// Normalizes a rule pattern for comparison (RFC 9309 §2.2.2; Google's
/// `MaybeEscapePattern`): octets outside US-ASCII are percent-encoded, and existing
/// `%xx` escapes get upper-case hex digits. Nothing is decoded.
pub fn escape_pattern(pattern: &[u8]) -> Cow<'_, [u8]> {
    let needs_change = {
        let mut i = 0;
        let mut change = false;
        while i < pattern.len() {
            if let Some(hex) = percent_escape_at(pattern, i) {
                change |= hex.iter().any(u8::is_ascii_lowercase);
                i += 3;
            } else {
                change |= pattern[i] >= 0x80;
                i += 1;
            }
        }
        change
    };
    if !needs_change {
        return Cow::Borrowed(pattern);
    }
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(pattern.len() + 8);
    let mut i = 0;
    while i < pattern.len() {
        if let Some(hex) = percent_escape_at(pattern, i) {
            out.push(b'%');
            out.push(hex[0].to_ascii_uppercase());
            out.push(hex[1].to_ascii_uppercase());
            i += 3;
        } else {
            let c = pattern[i];
            if c >= 0x80 {
                out.extend_from_slice(&[b'%', HEX[usize::from(c >> 4)], HEX[usize::from(c & 0xF)]]);
            } else {
                out.push(c);
            }
            i += 1;
        }
    }
    Cow::Owned(out)
}

/// The two hex digits if `s[i..]` starts with a `%xx` escape.
fn percent_escape_at(s: &[u8], i: usize) -> Option<[u8; 2]> {
    match s.get(i..i + 3) {
        Some([b'%', h1, h2]) if h1.is_ascii_hexdigit() && h2.is_ascii_hexdigit() => Some([*h1, *h2]),
        _ => None,
    }
}

/// Upper-cases the hex digits of `%xx` escapes in a URL path, so that `%2f` in a URL and
/// `%2F` in a rule compare equal (RFC 3986 §2.1: the hex case is not significant). Unlike
/// patterns, the URL's raw non-ASCII octets are left alone: the caller must encode URLs.
fn normalize_path_escapes(path: &str) -> Cow<'_, [u8]> {
    let b = path.as_bytes();
    let has_lower =
        (0..b.len()).any(|i| percent_escape_at(b, i).is_some_and(|h| h.iter().any(u8::is_ascii_lowercase)));
    if !has_lower {
        return Cow::Borrowed(b);
    }
    let mut out = b.to_vec();
    let mut i = 0;
    while i < out.len() {
        if percent_escape_at(&out, i).is_some() {
            out[i + 1].make_ascii_uppercase();
            out[i + 2].make_ascii_uppercase();
            i += 3;
        } else {
            i += 1;
        }
    }
    Cow::Owned(out)
}

/// Whether `path` matches a rule `pattern` (RFC 9309 §2.2.2, §2.2.3). The pattern is
/// anchored at the start of the path; `*` matches any run of octets; `$` is special only
/// as the last octet, where it anchors the end. Worst case O(|path| · |pattern|), with no
/// backtracking blow-up.
pub fn pattern_matches(path: &[u8], pattern: &[u8]) -> bool {
    if !pattern.contains(&b'*') {
        // Fast path, the common case: a literal prefix, maybe anchored.
        return match pattern.strip_suffix(b"$") {
            Some(literal) => path == literal,
            None => path.starts_with(pattern),
        };
    }
    // `pos` holds, sorted, every path offset at which the pattern prefix seen so far can
    // end. It only grows at `*`, to every offset from its smallest member on.
    let mut pos: Vec<usize> = vec![0];
    for (k, &c) in pattern.iter().enumerate() {
        if c == b'$' && k + 1 == pattern.len() {
            return pos.last() == Some(&path.len());
        }
        if c == b'*' {
            if k > 0 && pattern[k - 1] == b'*' {
                continue; // `**` is `*`: skip the O(|path|) refill
            }
            let first = pos.first().copied().unwrap_or(0);
            pos.clear();
            pos.extend(first..=path.len());
        } else {
            pos.retain_mut(|p| {
                if path.get(*p) == Some(&c) {
                    *p += 1;
                    true
                } else {
                    false
                }
            });
            if pos.is_empty() {
                return false;
            }
        }
    }
    true
}

/// What a recognised robots.txt line is (RFC 9309 §2.1 plus non-standard keys we read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectiveKind {
    UserAgent,
    Allow,
    Disallow,
    Sitemap,
    /// Non-standard, not in RFC 9309; honored as a minimum delay between fetches.
    CrawlDelay,
    /// A `key: value` line with a key we do not know; kept for statistics.
    Unknown,
}

/// One `key: value` line of a robots.txt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive<'a> {
    /// 1-based line number (CR, LF and CRLF each end one line).
    pub line: usize,
    pub kind: DirectiveKind,
    /// The key as written (trimmed).
    pub key: &'a [u8],
    /// The value, trimmed; for rules (and unknown keys) escaped with [`escape_pattern`].
    pub value: Cow<'a, [u8]>,
}

fn classify_key(key: &[u8]) -> DirectiveKind {
    let any = |prefixes: &[&str]| prefixes.iter().any(|p| starts_with_ignore_case(key, p));
    // Order as Google's: keys are matched as prefixes, so `allow` before `disallow` is
    // harmless but user-agent comes first.
    if any(&["user-agent", "useragent", "user agent"]) {
        DirectiveKind::UserAgent
    } else if any(&["allow"]) {
        DirectiveKind::Allow
    } else if any(&["disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"]) {
        DirectiveKind::Disallow
    } else if any(&["sitemap", "site-map"]) {
        DirectiveKind::Sitemap
    } else if any(&["crawl-delay", "crawldelay", "crawl delay"]) {
        DirectiveKind::CrawlDelay
    } else {
        DirectiveKind::Unknown
    }
}

/// Splits one line into trimmed key and value, or `None` if it holds no directive.
fn split_key_value(line: &[u8]) -> Option<(&[u8], &[u8])> {
    // Everything after `#` is a comment (RFC 9309 §2.2.3 / ABNF).
    let line = match line.iter().position(|&c| c == b'#') {
        Some(i) => &line[..i],
        None => line,
    };
    let line = trim_space(line);
    let (key, value) = match line.iter().position(|&c| c == b':') {
        Some(i) => (&line[..i], &line[i + 1..]),
        None => {
            // Google accepts whitespace instead of the colon, but only when the line is
            // exactly two whitespace-separated words (`disallow /`).
            let is_white = |c: &u8| *c == b' ' || *c == b'\t';
            let sep = line.iter().position(is_white)?;
            let rest = &line[sep..];
            let value_start = rest.iter().position(|c| !is_white(c)).unwrap_or(rest.len());
            if rest[value_start..].iter().any(is_white) {
                return None;
            }
            (&line[..sep], &line[sep + 1..])
        }
    };
    let key = trim_space(key);
    if key.is_empty() {
        return None;
    }
    Some((key, trim_space(value)))
}

/// Calls `f` with every directive in `body`, in order. The whole body is read (callers cap
/// it, see [`MAX_ROBOTS_BYTES`]); never panics, whatever the bytes.
pub fn for_each_directive<'a>(body: &'a [u8], mut f: impl FnMut(Directive<'a>)) {
    // Skip a UTF-8 BOM, or as much of a prefix of one as the body starts with (Google).
    let bom_len = body.iter().zip(UTF8_BOM.iter()).take_while(|(a, b)| a == b).count();
    let body = &body[bom_len..];

    let mut line_num = 0usize;
    let mut emit = |line: &'a [u8], line_num: usize| {
        let line = &line[..line.len().min(MAX_LINE_BYTES)];
        // Google's parser works on C strings: a NUL byte ends the line.
        let line = match line.iter().position(|&c| c == 0) {
            Some(i) => &line[..i],
            None => line,
        };
        let Some((key, value)) = split_key_value(line) else {
            return;
        };
        let kind = classify_key(key);
        let value = match kind {
            // Agent names and sitemap URLs are not path patterns: kept as written.
            DirectiveKind::UserAgent | DirectiveKind::Sitemap => Cow::Borrowed(value),
            _ => escape_pattern(value),
        };
        f(Directive { line: line_num, kind, key, value });
    };

    let mut start = 0usize;
    let mut i = 0usize;
    let mut last_was_cr = false;
    while i < body.len() {
        let c = body[i];
        if c == b'\n' || c == b'\r' {
            // The LF of a CRLF pair does not end a second (empty) line.
            if !(c == b'\n' && last_was_cr && start == i) {
                line_num += 1;
                emit(&body[start..i], line_num);
            }
            start = i + 1;
            last_was_cr = c == b'\r';
        }
        i += 1;
    }
    line_num += 1;
    emit(&body[start..], line_num);
}

/// A group's user-agent line value (RFC 9309 §2.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Agent {
    /// `*`, also `* something` (Google).
    Any,
    /// The leading `[A-Za-z_-]` run of the value (Google cuts it at the first other char).
    Token(String),
}

#[derive(Debug, Clone)]
struct Rule {
    allow: bool,
    pattern: Vec<u8>,
}

/// Agents and what applies to them: rules (for [`Robots::groups`]) or a crawl-delay
/// (for [`Robots::delay_scopes`]).
#[derive(Debug, Clone, Default)]
struct Group {
    agents: Vec<Agent>,
    rules: Vec<Rule>,
    crawl_delay: Option<f64>,
}

impl Group {
    fn names(&self, token: &str) -> bool {
        self.agents.iter().any(|a| matches!(a, Agent::Token(t) if t.eq_ignore_ascii_case(token)))
    }
    fn is_global(&self) -> bool {
        self.agents.contains(&Agent::Any)
    }
}

/// A parsed robots.txt: groups of rules, crawl-delays, and the sitemaps it lists.
#[derive(Debug, Clone, Default)]
pub struct Robots {
    /// Rule groups as Google forms them: only an allow/disallow line closes a group, so
    /// `sitemap`, `crawl-delay` and unknown lines between user-agent lines do not.
    groups: Vec<Group>,
    /// Crawl-delay scopes: a run of user-agent lines ended by any other directive. Real
    /// files write `User-agent: slowbot / Crawl-delay: 20 / User-agent: * / Disallow: …`;
    /// with rule grouping the `*` crawlers would inherit slowbot's delay, which is not
    /// what the author meant (crawl-delay is non-standard; RFC 9309 §2.1 groups by intent).
    delay_scopes: Vec<Group>,
    sitemaps: Vec<String>,
}

impl Robots {
    /// Parses a robots.txt body. Only the first [`MAX_ROBOTS_BYTES`] are read; if the body
    /// is longer, a line that the limit cuts short is dropped too, so a cut rule cannot
    /// change meaning. Never fails: lines that are not directives are ignored (RFC 9309 §2.2).
    pub fn parse(body: &[u8]) -> Robots {
        let body = cap_body(body);
        let mut robots = Robots::default();
        // Whether the current group has had an allow/disallow line: the next user-agent
        // line then starts a new group (RFC 9309 §2.1).
        let mut group_has_rules = false;
        // Whether the last directive was a user-agent line (for crawl-delay scopes).
        let mut in_agent_run = false;
        for_each_directive(body, |d| {
            let is_agent = d.kind == DirectiveKind::UserAgent;
            robots.add(d, &mut group_has_rules, in_agent_run);
            in_agent_run = is_agent;
        });
        robots
    }

    fn add(&mut self, d: Directive<'_>, group_has_rules: &mut bool, in_agent_run: bool) {
        match d.kind {
            DirectiveKind::UserAgent => {
                if *group_has_rules || self.groups.is_empty() {
                    self.groups.push(Group::default());
                    *group_has_rules = false;
                }
                if !in_agent_run {
                    self.delay_scopes.push(Group::default());
                }
                let value = &*d.value;
                let agent = match value {
                    [b'*'] => Agent::Any,
                    [b'*', next, ..] if is_space(*next) => Agent::Any,
                    _ => {
                        let n = value.iter().take_while(|&&c| is_token_byte(c)).count();
                        // ASCII only, so the conversion is lossless.
                        Agent::Token(String::from_utf8_lossy(&value[..n]).into_owned())
                    }
                };
                if let Some(s) = self.delay_scopes.last_mut() {
                    s.agents.push(agent.clone());
                }
                if let Some(g) = self.groups.last_mut() {
                    g.agents.push(agent);
                }
            }
            DirectiveKind::Allow | DirectiveKind::Disallow => {
                // Rules before the first user-agent line belong to no group: ignored.
                let Some(g) = self.groups.last_mut() else {
                    return;
                };
                *group_has_rules = true;
                let allow = d.kind == DirectiveKind::Allow;
                let pattern = d.value.into_owned();
                // Google: `allow: /dir/index.htm[l]` also allows `/dir/` itself.
                if allow {
                    if let Some(slash) = pattern.iter().rposition(|&c| c == b'/') {
                        if pattern[slash..].starts_with(b"/index.htm") {
                            let mut dir = pattern[..=slash].to_vec();
                            dir.push(b'$');
                            g.rules.push(Rule { allow: true, pattern: dir });
                        }
                    }
                }
                g.rules.push(Rule { allow, pattern });
            }
            DirectiveKind::Sitemap => {
                // Sitemaps are global, not part of a group (RFC 9309 §2.2.4).
                if !d.value.is_empty() {
                    self.sitemaps.push(String::from_utf8_lossy(&d.value).into_owned());
                }
            }
            DirectiveKind::CrawlDelay => {
                // Only right after its user-agent lines (or other lines of its record).
                if let Some(s) = self.delay_scopes.last_mut() {
                    if s.crawl_delay.is_none() {
                        s.crawl_delay = parse_delay(&d.value);
                    }
                }
            }
            DirectiveKind::Unknown => {}
        }
    }

    /// Whether `url` may be fetched by the crawler whose product token is `product_token`
    /// (e.g. `ditto`, see [`product_token`]). `url` is a full URL, already percent-encoded
    /// (as `url::Url` gives it); only its path, params and query are compared.
    ///
    /// Groups naming the token (case-insensitively) are merged and take precedence over
    /// `*` groups; if none names it and there is no `*` group, everything is allowed
    /// (RFC 9309 §2.2.1). `/robots.txt` itself is always allowed (§2.2.2).
    pub fn is_allowed(&self, product_token: &str, url: &str) -> bool {
        let path = path_params_query(url);
        if path == "/robots.txt" {
            return true;
        }
        let path = normalize_path_escapes(&path);

        let specific: Vec<&Group> = self.groups.iter().filter(|g| g.names(product_token)).collect();
        if !specific.is_empty() {
            return verdict(&specific, &path);
        }
        let global: Vec<&Group> = self.groups.iter().filter(|g| g.is_global()).collect();
        verdict(&global, &path)
    }

    /// The crawl-delay in seconds for the crawler's product token: from the groups naming
    /// it, else from `*` groups. The first valid value wins. Non-standard (not in RFC 9309).
    pub fn crawl_delay(&self, product_token: &str) -> Option<f64> {
        let mut specific = self.delay_scopes.iter().filter(|g| g.names(product_token)).peekable();
        if specific.peek().is_some() {
            return specific.find_map(|g| g.crawl_delay);
        }
        self.delay_scopes.iter().filter(|g| g.is_global()).find_map(|g| g.crawl_delay)
    }

    /// Sitemap URLs listed anywhere in the file, in order (RFC 9309 §2.2.4).
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }
}

/// The verdict of the merged `groups` for `path`: the longest matching rule wins, Allow
/// on a tie, and no match allows (RFC 9309 §2.2.2). An empty pattern matches with length
/// 0, which like Google counts as no rule (`disallow:` allows everything).
fn verdict(groups: &[&Group], path: &[u8]) -> bool {
    let mut best_allow: Option<usize> = None;
    let mut best_disallow: Option<usize> = None;
    for rule in groups.iter().flat_map(|g| g.rules.iter()) {
        let best = if rule.allow { &mut best_allow } else { &mut best_disallow };
        let len = rule.pattern.len();
        if best.is_some_and(|b| b >= len) {
            continue; // cannot improve: skip the match work
        }
        if pattern_matches(path, &rule.pattern) {
            *best = Some(len);
        }
    }
    // Disallowed only by a non-empty disallow pattern strictly longer than any match
    // among the allows.
    match (best_disallow, best_allow) {
        (Some(d), Some(a)) => d == 0 || d <= a,
        (Some(d), None) => d == 0,
        (None, _) => true,
    }
}

/// The part of `body` we parse: at most [`MAX_ROBOTS_BYTES`] (RFC 9309 §2.5). When the
/// limit falls inside a line, that line is dropped unless it already reached
/// [`MAX_LINE_BYTES`] (then the line cap, not the size limit, decides what is kept).
fn cap_body(body: &[u8]) -> &[u8] {
    if body.len() <= MAX_ROBOTS_BYTES {
        return body;
    }
    let capped = &body[..MAX_ROBOTS_BYTES];
    let line_start = capped.iter().rposition(|&c| c == b'\n' || c == b'\r').map_or(0, |i| i + 1);
    if capped.len() - line_start >= MAX_LINE_BYTES {
        capped
    } else {
        &capped[..line_start]
    }
}

fn parse_delay(value: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(value).ok()?.trim();
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// What the crawler knows about a host's robots.txt after fetching it (RFC 9309 §2.3.1).
///
/// Redirects (§2.3.1.2) are the fetcher's job: it follows at least five consecutive
/// redirects (we follow up to 5 hops) and gives the final status here; a status still in
/// 3xx means the redirect limit was hit, which the RFC lets us treat as "unavailable".
#[derive(Debug, Clone)]
pub enum RobotsState {
    /// 2xx: the parsed file (§2.3.1.1).
    Rules(Robots),
    /// 4xx, "unavailable" (§2.3.1.3): the crawler may access any resource.
    AllowAll,
    /// 5xx or unreachable (§2.3.1.4): complete disallow, to be retried later. (After 30
    /// days unreachable the RFC allows falling back to a cached copy or to allow-all; that
    /// policy belongs to the caller.)
    DisallowAll,
}

impl RobotsState {
    /// The state for a fetched robots.txt with HTTP `status` and (possibly truncated) body.
    pub fn from_status(status: u16, body: &[u8]) -> RobotsState {
        match status {
            200..=299 => RobotsState::Rules(Robots::parse(body)),
            // 429 Too Many Requests is a 4xx but means "slow down", not "no file": being
            // polite, treat it like a server error (as Google does) rather than allow-all.
            429 => RobotsState::DisallowAll,
            // Redirect limit exhausted (§2.3.1.2) or any other 4xx (§2.3.1.3). A 304 to a
            // conditional request must be handled by the caller (keep the cached state).
            300..=499 => RobotsState::AllowAll,
            // 5xx (§2.3.1.4), and anything nonsensical (1xx, >599): be conservative.
            _ => RobotsState::DisallowAll,
        }
    }

    /// The state when the fetch failed at the network level (DNS, connect, TLS, timeout):
    /// unreachable, so complete disallow (RFC 9309 §2.3.1.4).
    pub fn unreachable() -> RobotsState {
        RobotsState::DisallowAll
    }

    /// Whether `url` may be fetched, see [`Robots::is_allowed`].
    pub fn is_allowed(&self, product_token: &str, url: &str) -> bool {
        match self {
            RobotsState::Rules(r) => r.is_allowed(product_token, url),
            RobotsState::AllowAll => true,
            RobotsState::DisallowAll => false,
        }
    }

    /// The crawl-delay for the token, if the file gives one.
    pub fn crawl_delay(&self, product_token: &str) -> Option<f64> {
        match self {
            RobotsState::Rules(r) => r.crawl_delay(product_token),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(robots: &str, agent: &str, url: &str) -> bool {
        Robots::parse(robots.as_bytes()).is_allowed(agent, url)
    }

    #[test]
    fn longest_match_wins() {
        let r = "user-agent: *\ndisallow: /a\nallow: /a/b\ndisallow: /a/b/c\n";
        assert!(!allowed(r, "ditto", "http://x.test/a/x"));
        assert!(allowed(r, "ditto", "http://x.test/a/b/x"));
        assert!(!allowed(r, "ditto", "http://x.test/a/b/c/d"));
        assert!(allowed(r, "ditto", "http://x.test/other"));
        // Order in the file does not matter, only length.
        let r = "user-agent: *\nallow: /a/b\ndisallow: /a\n";
        assert!(allowed(r, "ditto", "http://x.test/a/b"));
    }

    #[test]
    fn allow_wins_ties() {
        let r = "user-agent: *\ndisallow: /page\nallow: /page\n";
        assert!(allowed(r, "ditto", "http://x.test/page"));
        // Tie of a wildcard and a literal of equal byte length.
        let r = "user-agent: *\ndisallow: /p*e\nallow: /pag\n";
        assert!(allowed(r, "ditto", "http://x.test/page"));
        // An empty disallow allows everything.
        assert!(allowed("user-agent: *\ndisallow:\n", "ditto", "http://x.test/x"));
    }

    #[test]
    fn dollar_anchor() {
        let r = "user-agent: *\ndisallow: /*.php$\ndisallow: /exact$\n";
        assert!(!allowed(r, "ditto", "http://x.test/a/b.php"));
        assert!(allowed(r, "ditto", "http://x.test/a/b.php?x=1"));
        assert!(allowed(r, "ditto", "http://x.test/a/b.phps"));
        assert!(!allowed(r, "ditto", "http://x.test/exact"));
        assert!(allowed(r, "ditto", "http://x.test/exactly"));
        // `$` in the middle is a literal.
        assert!(pattern_matches(b"/a$b", b"/a$b"));
        assert!(!pattern_matches(b"/ab", b"/a$b"));
    }

    #[test]
    fn star_wildcard() {
        assert!(pattern_matches(b"/fish/salmon.html", b"/fish*"));
        assert!(pattern_matches(b"/fish", b"/fish*"));
        assert!(pattern_matches(b"/a/x/y/b", b"/a/*/b"));
        assert!(!pattern_matches(b"/a/b", b"/a/*/b"));
        assert!(pattern_matches(b"/anything", b"*"));
        assert!(pattern_matches(b"/x.php", b"/*.php$"));
        assert!(pattern_matches(b"/x/", b"/**/"));
        assert!(!pattern_matches(b"/x", b"/*y*"));
        // Pathological pattern stays polynomial.
        let mut path = b"/".to_vec();
        path.extend_from_slice(&[b'a'; 3000]);
        let mut pat = b"/".to_vec();
        pat.extend_from_slice(&b"*a".repeat(500));
        pat.push(b'b');
        assert!(!pattern_matches(&path, &pat));
    }

    #[test]
    fn specific_agent_over_star() {
        let r = "user-agent: *\ndisallow: /\n\nuser-agent: ditto\nallow: /\ndisallow: /private\n";
        assert!(allowed(r, "ditto", "http://x.test/page"));
        assert!(allowed(r, "DITTO", "http://x.test/page"));
        assert!(!allowed(r, "ditto", "http://x.test/private/x"));
        assert!(!allowed(r, "otherbot", "http://x.test/page"));
        // A specific group with no rules still shadows `*`.
        let r = "user-agent: *\ndisallow: /\n\nuser-agent: ditto\n";
        assert!(allowed(r, "ditto", "http://x.test/page"));
        // The value is cut at the first char outside [A-Za-z_-].
        let r = "user-agent: ditto/2.0\ndisallow: /\n";
        assert!(!allowed(r, "ditto", "http://x.test/page"));
        // No matching group and no `*`: allowed.
        assert!(allowed(r, "other", "http://x.test/page"));
    }

    #[test]
    fn merged_groups_and_shared_groups() {
        let r = "user-agent: ditto\ndisallow: /a\n\nuser-agent: other\ndisallow: /\n\n\
                 user-agent: Ditto\ndisallow: /b\n";
        assert!(!allowed(r, "ditto", "http://x.test/a"));
        assert!(!allowed(r, "ditto", "http://x.test/b"));
        assert!(allowed(r, "ditto", "http://x.test/c"));
        // Consecutive user-agent lines share one group; sitemap/unknown don't split it.
        let r = "user-agent: a\nsitemap: http://x.test/s.xml\nfoo: bar\nuser-agent: ditto\n\
                 disallow: /\n";
        assert!(!allowed(r, "a", "http://x.test/x"));
        assert!(!allowed(r, "ditto", "http://x.test/x"));
        // Rules before any user-agent line are ignored.
        assert!(allowed("disallow: /\n", "ditto", "http://x.test/x"));
    }

    #[test]
    fn crawl_delay_parse() {
        let r = Robots::parse(
            b"user-agent: *\ncrawl-delay: 2.5\ndisallow: /x\n\nuser-agent: ditto\n\
              Crawl-Delay: 10\nuser-agent: slow\ncrawl-delay: nonsense\n",
        );
        assert_eq!(r.crawl_delay("ditto"), Some(10.0));
        assert_eq!(r.crawl_delay("other"), Some(2.5));
        assert_eq!(r.crawl_delay("slow"), None);
        // A delay belongs to the user-agent lines right above it, even though for rules
        // (Google) `slowbot` and `*` below form one group.
        let r = Robots::parse(
            b"User-agent: slowbot\nCrawl-delay: 20\n\nUser-agent: *\nDisallow: /wp-admin/\n\
              \nUser-agent: a\nUser-agent: b\nCrawl-delay: 3\n",
        );
        assert_eq!(r.crawl_delay("slowbot"), Some(20.0));
        assert_eq!(r.crawl_delay("ditto"), None);
        assert_eq!(r.crawl_delay("a"), Some(3.0));
        assert_eq!(r.crawl_delay("B"), Some(3.0));
        assert!(!r.is_allowed("ditto", "http://x.test/wp-admin/x"));
        let r = Robots::parse(b"user-agent: *\ncrawl-delay: -1\n");
        assert_eq!(r.crawl_delay("ditto"), None);
        let r = Robots::parse(b"user-agent: *\ncrawl-delay: inf\n");
        assert_eq!(r.crawl_delay("ditto"), None);
    }

    #[test]
    fn sitemaps_anywhere() {
        let r = Robots::parse(
            b"Sitemap: http://x.test/a.xml\nuser-agent: *\ndisallow: /\nsitemap: http://x.test/b.xml\n",
        );
        assert_eq!(r.sitemaps(), ["http://x.test/a.xml", "http://x.test/b.xml"]);
    }

    #[test]
    fn empty_file_allows_all() {
        let r = Robots::parse(b"");
        assert!(r.is_allowed("ditto", "http://x.test/anything"));
        assert!(r.is_allowed("ditto", ""));
        assert_eq!(r.crawl_delay("ditto"), None);
        assert!(r.sitemaps().is_empty());
    }

    #[test]
    fn robots_txt_always_allowed() {
        let r = "user-agent: *\ndisallow: /\n";
        assert!(allowed(r, "ditto", "http://x.test/robots.txt"));
        assert!(!allowed(r, "ditto", "http://x.test/robots.txt.bak"));
    }

    #[test]
    fn percent_escapes_compare_case_insensitively() {
        let r = "user-agent: *\ndisallow: /a%2fb\n";
        assert!(!allowed(r, "ditto", "http://x.test/a%2Fb"));
        assert!(!allowed(r, "ditto", "http://x.test/a%2fb"));
        assert!(allowed(r, "ditto", "http://x.test/a/b"));
        // Non-ASCII in a rule matches its UTF-8 percent-encoding.
        let r = "user-agent: *\ndisallow: /caf\u{e9}\n";
        assert!(!allowed(r, "ditto", "http://x.test/caf%C3%A9"));
        assert!(!allowed(r, "ditto", "http://x.test/caf%c3%a9"));
    }

    #[test]
    fn line_endings_bom_and_typos() {
        let r = "\u{feff}User-Agent: ditto\r\nDisalow: /a\rdissallow /b\nallow /b/c\n";
        assert!(!allowed(r, "ditto", "http://x.test/a"));
        assert!(!allowed(r, "ditto", "http://x.test/b"));
        assert!(allowed(r, "ditto", "http://x.test/b/c"));
        // `key value` without colon needs exactly two words.
        let r = "user-agent ditto\ndisallow / extra\n";
        assert!(allowed(r, "ditto", "http://x.test/a"));
    }

    #[test]
    fn states_from_status() {
        let body = b"user-agent: *\ndisallow: /x\n";
        let ok = RobotsState::from_status(200, body);
        assert!(matches!(ok, RobotsState::Rules(_)));
        assert!(!ok.is_allowed("ditto", "http://x.test/x"));
        assert!(ok.is_allowed("ditto", "http://x.test/y"));
        for s in [400, 401, 403, 404, 410, 451] {
            let st = RobotsState::from_status(s, body);
            assert!(matches!(st, RobotsState::AllowAll), "{s}");
            assert!(st.is_allowed("ditto", "http://x.test/x"));
        }
        // Redirect limit hit: unavailable.
        assert!(matches!(RobotsState::from_status(301, b""), RobotsState::AllowAll));
        for s in [429, 500, 502, 503, 504, 599, 100, 600] {
            let st = RobotsState::from_status(s, body);
            assert!(matches!(st, RobotsState::DisallowAll), "{s}");
            assert!(!st.is_allowed("ditto", "http://x.test/y"));
        }
        assert!(!RobotsState::unreachable().is_allowed("ditto", "http://x.test/"));
    }

    #[test]
    fn product_token_extraction() {
        assert_eq!(product_token("ditto/0.1 (+https://example.org/bot)"), "ditto");
        assert_eq!(product_token("Foo_Bar-Bot rest"), "Foo_Bar-Bot");
        assert_eq!(product_token("/1.0"), "");
        assert_eq!(product_token(""), "");
        assert_eq!(product_token("bot\u{30c4}"), "bot");
        assert!(is_valid_product_token("ditto"));
        assert!(!is_valid_product_token(""));
        assert!(!is_valid_product_token("ditto/0.1"));
    }

    #[test]
    fn max_size_cuts_at_a_line() {
        let mut body = b"user-agent: *\ndisallow: /early\n".to_vec();
        while body.len() < MAX_ROBOTS_BYTES - 10 {
            body.extend_from_slice(b"# padding padding padding padding\n");
        }
        // This rule straddles the limit: it must not become `disallow: /`-ish.
        body.extend_from_slice(b"disallow: /late-and-long-path\n");
        body.extend_from_slice(b"disallow: /beyond\n");
        let r = Robots::parse(&body);
        assert!(!r.is_allowed("ditto", "http://x.test/early"));
        assert!(r.is_allowed("ditto", "http://x.test/late"));
        assert!(r.is_allowed("ditto", "http://x.test/beyond"));
    }

    /// Small deterministic generator so the fuzz test needs no extra crate.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let alphabet: &[u8] = b"uA:/*$#%\r\n \tdisallow-user-agent\xEF\xBB\xBF\x00\xFFaz2F?;";
        let urls = ["", "http://x.test/", "//a/b", "x?%zz", "http://x.test/a*b$", "#"];
        for round in 0..300 {
            let len = (rng.next() % 2000) as usize;
            let body: Vec<u8> = (0..len)
                .map(|_| {
                    let r = rng.next();
                    if round % 2 == 0 {
                        r as u8
                    } else {
                        alphabet[(r as usize) % alphabet.len()]
                    }
                })
                .collect();
            let robots = Robots::parse(&body);
            for url in urls {
                let _ = robots.is_allowed("ditto", url);
                let _ = robots.is_allowed("", url);
            }
            let _ = robots.crawl_delay("ditto");
            let _ = escape_pattern(&body);
            let _ = path_params_query(&String::from_utf8_lossy(&body));
        }
        // Huge lines, huge body, a path with many stars.
        let mut body = b"user-agent: *\ndisallow: /".to_vec();
        body.resize(body.len() + 3 * MAX_ROBOTS_BYTES, b'*');
        let robots = Robots::parse(&body);
        let long_url = format!("http://x.test/{}", "a".repeat(20_000));
        assert!(!robots.is_allowed("ditto", &long_url));
        let body = vec![b'\n'; 2 * MAX_ROBOTS_BYTES];
        assert!(Robots::parse(&body).is_allowed("ditto", "http://x.test/"));
    }

    #[test]
    fn long_lines_are_capped() {
        let mut body = b"user-agent: *\ndisallow: /".to_vec();
        body.resize(body.len() + 2 * MAX_LINE_BYTES, b'a');
        let r = Robots::parse(&body);
        let kept = MAX_LINE_BYTES - "disallow: /".len();
        let at_cap = format!("http://x.test/{}", "a".repeat(kept));
        assert!(!r.is_allowed("ditto", &at_cap));
        let short = format!("http://x.test/{}", "a".repeat(kept - 1));
        assert!(r.is_allowed("ditto", &short));
    }
}
