//! Page directives a crawler is told by the page itself: `<meta name="robots">` and the
//! `X-Robots-Tag` header (`noindex`, `nofollow`, `none`), `<meta http-equiv="refresh">`, and
//! `<link rel="canonical">`.
//!
//! The tags are read by a prescan of the page's head in the manner of the WHATWG encoding
//! prescan (comments skipped, a `>` inside a quoted value does not end a tag, `script`,
//! `style`, `title` and `textarea` contents skipped), over at most [`HEAD_SCAN_BYTES`] and
//! stopping at `<body`: no tree is built, and no input can make it loop or panic. Values keep
//! their case (URLs); names and robots tokens are compared without it.

/// Most bytes of a page read for directives (heads longer than this are rare; the tags
/// belong in the head).
pub const HEAD_SCAN_BYTES: usize = 64 * 1024;

/// What a page (and its response headers) asks of crawlers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Directives {
    /// `noindex` (or `none`): the site asks search engines not to index the page.
    pub noindex: bool,
    /// `nofollow` (or `none`): the page's links are not to be followed.
    pub nofollow: bool,
    /// The target of a `<meta http-equiv="refresh" content="N; url=…">`, as written.
    pub refresh: Option<String>,
    /// The `href` of the first `<link rel="canonical">`, as written.
    pub canonical: Option<String>,
}

impl Directives {
    /// Whether anything was found.
    pub fn is_empty(&self) -> bool {
        *self == Directives::default()
    }
}

/// The directives of a response: its `X-Robots-Tag` header values and, for HTML, the tags
/// of its head. `token` is the crawler's robots product token (lower case): a directive
/// aimed at another crawler (`<meta name="googlebot">`, `X-Robots-Tag: otherbot: noindex`)
/// does not apply.
pub fn directives<'a>(
    x_robots_tags: impl IntoIterator<Item = &'a str>,
    html: Option<&[u8]>,
    token: &str,
) -> Directives {
    let mut d = Directives::default();
    for v in x_robots_tags {
        apply_x_robots_tag(&mut d, v, token);
    }
    if let Some(body) = html {
        scan_head(&mut d, &body[..body.len().min(HEAD_SCAN_BYTES)], token);
    }
    d
}

/// One `X-Robots-Tag` value: comma-separated rules, optionally after `agent:` (which then
/// holds for the rest of the value).
fn apply_x_robots_tag(d: &mut Directives, value: &str, token: &str) {
    let mut applies = true;
    for part in value.split(',') {
        let mut rule = part.trim();
        if let Some((agent, rest)) = rule.split_once(':') {
            // `unavailable_after: <date>` is a rule with a value, not an agent.
            if !agent.trim().eq_ignore_ascii_case("unavailable_after") {
                applies = agent.trim().eq_ignore_ascii_case(token);
                rule = rest.trim();
            }
        }
        if applies {
            apply_robots_rule(d, rule);
        }
    }
}

/// One robots rule (`noindex`, `nofollow`, `none`, others ignored).
fn apply_robots_rule(d: &mut Directives, rule: &str) {
    let rule = rule.trim();
    if rule.eq_ignore_ascii_case("none") {
        d.noindex = true;
        d.nofollow = true;
    } else if rule.eq_ignore_ascii_case("noindex") {
        d.noindex = true;
    } else if rule.eq_ignore_ascii_case("nofollow") {
        d.nofollow = true;
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay.get(from..)?, needle).map(|p| p + from)
}

/// The next `</name` (any case) from `from`.
fn find_end_tag(hay: &[u8], mut from: usize, name: &[u8]) -> Option<usize> {
    loop {
        let at = find(hay, from, b"</")?;
        let after = &hay[at + 2..];
        if after.len() >= name.len() && after[..name.len()].eq_ignore_ascii_case(name) {
            return Some(at);
        }
        from = at + 2;
    }
}

/// Elements whose content is text, not tags: skipped to their end tag.
const RAW_TEXT: [&[u8]; 4] = [b"script", b"style", b"title", b"textarea"];

/// Read the `meta` and `link` tags of `buf` until `<body` or the end.
fn scan_head(d: &mut Directives, buf: &[u8], token: &str) {
    let mut pos = 0;
    while pos < buf.len() {
        let rest = &buf[pos..];
        if rest.starts_with(b"<!--") {
            let Some(end) = find(buf, pos + 2, b"-->") else { return };
            pos = end + 3;
            continue;
        }
        let tag_start = if rest.starts_with(b"</") { 2 } else { 1 };
        if rest[0] == b'<' && rest.get(tag_start).is_some_and(u8::is_ascii_alphabetic) {
            pos += tag_start;
            let name_start = pos;
            while pos < buf.len() && !is_space(buf[pos]) && buf[pos] != b'>' && buf[pos] != b'/' {
                pos += 1;
            }
            let name = &buf[name_start..pos];
            let is = |n: &[u8]| name.eq_ignore_ascii_case(n);
            // Attributes are kept only where they are read.
            let keep = tag_start == 1 && (is(b"meta") || is(b"link"));
            let mut attrs: Vec<(&[u8], &[u8])> = Vec::new();
            loop {
                match get_attribute(buf, &mut pos) {
                    None => {
                        // Input ended inside the tag: what was read of it is not a tag.
                        return;
                    }
                    Some(None) => break,
                    Some(Some(a)) => {
                        if keep && attrs.len() < 64 {
                            attrs.push(a);
                        }
                    }
                }
            }
            pos += 1; // the '>'
            if tag_start == 2 {
                continue;
            }
            if is(b"body") {
                return;
            } else if is(b"meta") {
                meta(d, &attrs, token);
            } else if is(b"link") {
                link(d, &attrs);
            } else if let Some(raw) = RAW_TEXT.iter().find(|r| is(r)) {
                match find_end_tag(buf, pos, raw) {
                    Some(end) => pos = end,
                    None => return,
                }
            }
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            let Some(end) = find(buf, pos, b">") else { return };
            pos = end + 1;
            continue;
        }
        // Text: on to the next '<'.
        match memchr::memchr(b'<', &buf[pos + 1..]) {
            Some(next) => pos += 1 + next,
            None => return,
        }
    }
}

/// The value of attribute `name` (lower-case) among `attrs`: the first one, as HTML keeps it.
fn attr<'a>(attrs: &[(&[u8], &'a [u8])], name: &[u8]) -> Option<&'a [u8]> {
    attrs.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
}

fn meta(d: &mut Directives, attrs: &[(&[u8], &[u8])], token: &str) {
    let content = attr(attrs, b"content").map(String::from_utf8_lossy);
    if let Some(name) = attr(attrs, b"name") {
        let name = String::from_utf8_lossy(name);
        let name = name.trim();
        if name.eq_ignore_ascii_case("robots") || name.eq_ignore_ascii_case(token) {
            for rule in content.as_deref().unwrap_or("").split(',') {
                apply_robots_rule(d, rule);
            }
        }
    }
    if d.refresh.is_none()
        && attr(attrs, b"http-equiv").is_some_and(|v| v.trim_ascii().eq_ignore_ascii_case(b"refresh"))
    {
        d.refresh = content.as_deref().and_then(refresh_target);
    }
}

fn link(d: &mut Directives, attrs: &[(&[u8], &[u8])]) {
    if d.canonical.is_some() {
        return;
    }
    let canonical = attr(attrs, b"rel")
        .is_some_and(|rel| rel.split(|&b| is_space(b)).any(|t| t.eq_ignore_ascii_case(b"canonical")));
    if canonical {
        let href = attr(attrs, b"href").map(|h| String::from_utf8_lossy(h).trim().to_string());
        d.canonical = href.filter(|h| !h.is_empty());
    }
}

/// The URL of a refresh's `content` (`5; url=/next`, `0;URL='x'`, `3, next.html`), by the
/// HTML standard's "shared declarative refresh steps"; None for a refresh of the page itself.
pub fn refresh_target(content: &str) -> Option<String> {
    let s = content.trim_start();
    // The delay: digits and dots.
    let s = s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    let s = s.trim_start();
    let s = s.strip_prefix([';', ',']).unwrap_or(s).trim_start();
    if s.is_empty() {
        return None;
    }
    let s = match s.get(..3) {
        Some(u) if u.eq_ignore_ascii_case("url") => {
            let after = s[3..].trim_start();
            match after.strip_prefix('=') {
                Some(v) => v.trim_start(),
                None => s, // "urlfoo": a URL that starts with "url"
            }
        }
        _ => s,
    };
    let url = match s.chars().next() {
        Some(q @ ('"' | '\'')) => s[1..].split(q).next().unwrap_or(""),
        _ => s,
    };
    let url = url.trim();
    (!url.is_empty()).then(|| url.to_string())
}

/// WHATWG "get an attribute", as slices of `buf` (names compared without case, values
/// kept as written). Outer `None`: the input ran out; inner `None`: no more attributes in
/// this tag (the position is then on the `>`).
#[allow(clippy::type_complexity)]
fn get_attribute<'a>(buf: &'a [u8], pos: &mut usize) -> Option<Option<(&'a [u8], &'a [u8])>> {
    while is_space(*buf.get(*pos)?) || buf[*pos] == b'/' {
        *pos += 1;
    }
    if buf[*pos] == b'>' {
        return Some(None);
    }
    let name_start = *pos;
    let name_end;
    loop {
        let c = *buf.get(*pos)?;
        if c == b'=' && *pos > name_start {
            name_end = *pos;
            *pos += 1;
            break;
        }
        if is_space(c) {
            name_end = *pos;
            while is_space(*buf.get(*pos)?) {
                *pos += 1;
            }
            if buf[*pos] != b'=' {
                return Some(Some((&buf[name_start..name_end], &[])));
            }
            *pos += 1;
            break;
        }
        if c == b'/' || c == b'>' {
            return Some(Some((&buf[name_start..*pos], &[])));
        }
        *pos += 1;
    }
    let name = &buf[name_start..name_end];
    while is_space(*buf.get(*pos)?) {
        *pos += 1;
    }
    let c = *buf.get(*pos)?;
    if c == b'"' || c == b'\'' {
        *pos += 1;
        let end = memchr::memchr(c, &buf[*pos..])? + *pos;
        let value = &buf[*pos..end];
        *pos = end + 1;
        return Some(Some((name, value)));
    }
    if c == b'>' {
        return Some(Some((name, &[])));
    }
    let value_start = *pos;
    loop {
        let b = *buf.get(*pos)?;
        if is_space(b) || b == b'>' {
            return Some(Some((name, &buf[value_start..*pos])));
        }
        *pos += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(s: &str) -> Directives {
        directives([], Some(s.as_bytes()), "ditto")
    }

    #[test]
    fn meta_robots_forms() {
        let d = html(r#"<html><head><META NAME="Robots" CONTENT="NoIndex, NOFOLLOW"></head>"#);
        assert!(d.noindex && d.nofollow);
        let d = html("<meta name=robots content=none>");
        assert!(d.noindex && d.nofollow);
        let d = html("<meta name='ditto' content='nofollow'>");
        assert!(!d.noindex && d.nofollow);
        // Another crawler's directive does not apply.
        let d = html("<meta name=googlebot content='noindex,nofollow'>");
        assert!(d.is_empty(), "{d:?}");
        // Inside a comment, a script, a title or after <body>: not a directive.
        for s in [
            "<!-- <meta name=robots content=nofollow> -->",
            "<script>document.write('<meta name=robots content=nofollow>')</script>",
            "<title><meta name=robots content=nofollow></title>",
            "<a title='<meta name=robots content=nofollow>'>x</a>",
            "<body><meta name=robots content=nofollow>",
        ] {
            assert!(html(s).is_empty(), "{s}");
        }
        // After a script, tags are read again.
        assert!(html("<script>var a = '<b>';</script><meta name=robots content=noindex>").noindex);
    }

    #[test]
    fn x_robots_tag_forms() {
        let d = directives(["noindex"], None, "ditto");
        assert!(d.noindex && !d.nofollow);
        let d = directives(["otherbot: nofollow", "ditto: noindex, nofollow"], None, "ditto");
        assert!(d.noindex && d.nofollow);
        let d = directives(["googlebot: none"], None, "ditto");
        assert!(d.is_empty());
        let d = directives(["unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow"], None, "ditto");
        assert!(d.nofollow && !d.noindex);
    }

    #[test]
    fn refresh_and_canonical() {
        let d = html(
            r#"<head><meta http-equiv="Refresh" content="0; URL='/New/Place?a=B'"><link rel="alternate canonical" href=" https://Orig.example/A "></head>"#,
        );
        assert_eq!(d.refresh.as_deref(), Some("/New/Place?a=B"));
        assert_eq!(d.canonical.as_deref(), Some("https://Orig.example/A"));
        assert_eq!(refresh_target("5;url=next.html"), Some("next.html".into()));
        assert_eq!(refresh_target("3, http://x.test/"), Some("http://x.test/".into()));
        assert_eq!(refresh_target("10"), None);
        assert_eq!(refresh_target("  "), None);
        assert_eq!(refresh_target("1; url=\"a b\""), Some("a b".into()));
        // A self-refresh names no target.
        assert!(html("<meta http-equiv=refresh content=30>").refresh.is_none());
        // The first canonical wins; one without href is none.
        let d = html("<link rel=canonical><link rel=canonical href=/b><link rel=canonical href=/c>");
        assert_eq!(d.canonical.as_deref(), Some("/b"));
    }

    #[test]
    fn truncated_and_hostile_input_ends() {
        for s in ["<meta name=robots content='nofollow", "<meta", "<!--", "<", "<script>", "</"] {
            let _ = html(s);
        }
        let mut long = b"<meta ".to_vec();
        long.extend(std::iter::repeat_n(b'a', HEAD_SCAN_BYTES * 2));
        assert!(directives([], Some(&long), "ditto").is_empty());
    }
}
