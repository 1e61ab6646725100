//! Escaping for the review pages. Everything shown comes from crawled pages, which are
//! hostile input: text goes through [`esc`], links through [`safe_href`] (http/https only),
//! query values through [`pct`].

use std::fmt::Write;

/// Escape text for HTML element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '`' => out.push_str("&#96;"),
            // Control characters (other than tab/newline) are invisible and can confuse
            // parsers; show a replacement instead.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The URL, escaped for an `href`, when it is an absolute http(s) URL; `None` otherwise
/// (`javascript:`, `data:`, relative or unparsable URLs are never linked).
pub fn safe_href(u: &str) -> Option<String> {
    let parsed = url::Url::parse(u.trim()).ok()?;
    match parsed.scheme() {
        "http" | "https" => Some(esc(parsed.as_str())),
        _ => None,
    }
}

/// A link to an outside URL when it is safe, plain text otherwise. `rel` keeps the review
/// page's address and window away from the (hostile) target.
pub fn ext_link(u: &str, text: &str) -> String {
    match safe_href(u) {
        Some(h) => format!(
            "<a href=\"{h}\" rel=\"noopener noreferrer nofollow\" target=\"_blank\">{}</a>",
            esc(text)
        ),
        None => esc(text),
    }
}

/// Percent-encode a query value (everything but RFC 3986 unreserved characters).
pub fn pct(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3 / 2);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Shorten for display to at most `max` characters.
pub fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A local path to return to after a form post: only `/...` paths of this server
/// (never `//host` or `/\host`, which browsers treat as other origins).
pub fn local_path(s: &str) -> Option<&str> {
    let ok = s.starts_with('/')
        && !s.starts_with("//")
        && !s.starts_with("/\\")
        && !s.chars().any(|c| c.is_control() || c == '\\');
    ok.then_some(s)
}

/// Fetch time as an HTTP date (UTC), or `unknown`.
pub fn time(secs: i64) -> String {
    if secs <= 0 {
        return "unknown".into();
    }
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs as u64);
    httpdate::fmt_http_date(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(esc("<script>alert('x')</script>"), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
        assert_eq!(esc("\" onerror=\"x` &"), "&quot; onerror=&quot;x&#96; &amp;");
        assert_eq!(esc("a\u{0}b"), "a\u{FFFD}b");
    }

    #[test]
    fn only_http_links() {
        assert!(safe_href("javascript:alert(1)").is_none());
        assert!(safe_href(" JaVaScRiPt:alert(1)").is_none());
        assert!(safe_href("data:text/html,<script>").is_none());
        assert!(safe_href("/relative").is_none());
        assert_eq!(safe_href("http://h/a?b=\"c\"&d").unwrap(), "http://h/a?b=%22c%22&amp;d");
        assert!(ext_link("javascript:x", "<b>").starts_with("&lt;b&gt;"));
    }

    #[test]
    fn local_paths_only() {
        assert_eq!(local_path("/n?name=x"), Some("/n?name=x"));
        assert!(local_path("//evil.test/").is_none());
        assert!(local_path("/\\evil.test/").is_none());
        assert!(local_path("http://evil.test/").is_none());
        assert_eq!(pct("a b/&é"), "a%20b%2F%26%C3%A9");
    }
}
