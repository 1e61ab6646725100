//! Wikitext → paragraphs: a documented approximation (also in `DUMPS.md`), good enough to
//! hash the prose of MediaWiki XML dumps. It is not a MediaWiki parser: templates are dropped,
//! not expanded, so text produced by templates (e.g. `{{convert}}`) is missing, and chunks
//! differ from those of the rendered HTML. Label sets meant to match copies of rendered pages
//! are best built from HTML (Enterprise dumps or saved pages).
//!
//! Steps, in order:
//! 1. drop comments `<!-- … -->`;
//! 2. drop `<ref …>…</ref>`, `<ref …/>` and `<gallery>…</gallery>` (case-insensitive);
//! 3. drop templates `{{…}}` (nested, parser functions and `{{{params}}}` included) and tables
//!    `{| … |}` (nested);
//! 4. internal links: drop `[[File:…]]`, `[[Image:…]]`, `[[Media:…]]`, `[[Category:…]]` and
//!    interlanguage links (`[[xx:…]]` without a label, prefix of lower-case letters/hyphens,
//!    2–12 chars);
//!    `[[a|b]]` → `b`, `[[a]]` → `a`, `[[:Category:x]]` → `Category:x`;
//! 5. external links `[url label]` → `label`, `[url]` → nothing;
//! 6. bold/italic quotes `'''`, `''` removed;
//! 7. remaining HTML tags stripped (their text kept); `&nbsp;` `&amp;` `&lt;` `&gt;` `&quot;`
//!    `&ndash;` `&mdash;` decoded (XML escaping is already undone by the XML reader);
//! 8. lines: headings (`== x ==`), list lines (`*`, `#`, `:`, `;`) and blank lines end a
//!    paragraph; a heading's or list item's text is a paragraph of its own (like `<hN>`/`<li>`
//!    blocks from the HTML cleaner); table leftovers (`|`, `!`), `----` and magic words
//!    (`__TOC__`…) are dropped; a line left empty by the steps above (e.g. one holding only a
//!    category link or a template) also ends a paragraph; other consecutive lines join with a
//!    space.

/// Reduce wikitext to paragraphs (not normalized; the builder normalizes).
pub fn paragraphs(wikitext: &str) -> Vec<String> {
    let s = drop_comments(wikitext);
    let s = drop_tag_blocks(&s, "ref");
    let s = drop_tag_blocks(&s, "gallery");
    let s = drop_templates_and_tables(&s);
    let s = links(&s);
    let s = external_links(&s);
    let s = s.replace("'''", "").replace("''", "");
    let s = strip_tags(&s);
    let s = entities(&s);
    split_lines(&s)
}

/// True for a redirect page's text (`#REDIRECT [[…]]`, any case).
pub fn is_redirect(wikitext: &str) -> bool {
    let t = wikitext.trim_start();
    t.len() >= 9 && t.as_bytes()[..9].eq_ignore_ascii_case(b"#redirect")
}

fn drop_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("<!--") {
        out.push_str(&rest[..i]);
        match rest[i + 4..].find("-->") {
            Some(j) => rest = &rest[i + 4 + j + 3..],
            None => return out, // unterminated comment runs to the end, as in MediaWiki
        }
    }
    out.push_str(rest);
    out
}

/// ASCII-case-insensitive find of `needle` (ASCII) in `hay` from byte `from`.
fn find_ci(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let h = hay.as_bytes();
    let n = needle.as_bytes();
    if n.is_empty() || h.len() < n.len() {
        return None;
    }
    (from..=h.len() - n.len()).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// Drop `<tag …>…</tag>` and `<tag …/>` (not nested).
fn drop_tag_blocks(s: &str, tag: &str) -> String {
    let open = format!("<{tag}");
    let close = format!("</{tag}");
    let mut out = String::with_capacity(s.len());
    let mut pos = 0;
    while let Some(i) = find_ci(s, &open, pos) {
        // Must be the whole tag name: `<ref>` / `<ref name=…>`, not `<references/>`.
        let after = s.as_bytes().get(i + open.len()).copied();
        if !matches!(after, Some(b'>' | b' ' | b'/' | b'\t' | b'\n')) {
            out.push_str(&s[pos..i + open.len()]);
            pos = i + open.len();
            continue;
        }
        out.push_str(&s[pos..i]);
        let Some(gt) = s[i..].find('>').map(|g| i + g) else {
            return out;
        };
        if s.as_bytes()[gt - 1] == b'/' {
            pos = gt + 1;
            continue;
        }
        match find_ci(s, &close, gt) {
            Some(c) => pos = s[c..].find('>').map(|g| c + g + 1).unwrap_or(s.len()),
            None => pos = gt + 1, // unclosed: drop only the opening tag
        }
    }
    out.push_str(&s[pos..]);
    out
}

/// Drop `{{…}}` and `{|…|}`, nested in each other.
fn drop_templates_and_tables(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    let mut i = 0;
    let mut copy_from = 0;
    while i < b.len() {
        let two = (b[i], b.get(i + 1).copied().unwrap_or(0));
        match two {
            (b'{', b'{') | (b'{', b'|') => {
                if depth == 0 {
                    out.push_str(&s[copy_from..i]);
                }
                depth += 1;
                i += 2;
            }
            (b'}', b'}') | (b'|', b'}') if depth > 0 => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    copy_from = i;
                }
            }
            _ => i += 1,
        }
    }
    if depth == 0 {
        out.push_str(&s[copy_from..]);
    }
    out
}

fn is_interlanguage(prefix: &str) -> bool {
    (2..=12).contains(&prefix.len()) && prefix.bytes().all(|c| c.is_ascii_lowercase() || c == b'-')
}

/// Resolve `[[…]]` links, innermost first (a file caption may contain links).
fn links(s: &str) -> String {
    let mut cur = s.to_string();
    // Each pass resolves links containing no other `[[`; nesting is shallow in practice.
    for _ in 0..8 {
        if !cur.contains("[[") {
            break;
        }
        let mut out = String::with_capacity(cur.len());
        let mut rest = cur.as_str();
        let mut changed = false;
        while let Some(i) = rest.find("[[") {
            let inner_start = i + 2;
            let close = rest[inner_start..].find("]]").map(|c| inner_start + c);
            let reopen = rest[inner_start..].find("[[").map(|c| inner_start + c);
            match close {
                Some(c) if !matches!(reopen, Some(r) if r < c) => {
                    out.push_str(&rest[..i]);
                    out.push_str(&link_text(&rest[inner_start..c]));
                    rest = &rest[c + 2..];
                    changed = true;
                }
                Some(_) => {
                    // A nested link: keep this `[[` for the next pass.
                    out.push_str(&rest[..inner_start]);
                    rest = &rest[inner_start..];
                }
                None => {
                    out.push_str(rest);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        cur = out;
        if !changed {
            break;
        }
    }
    cur
}

fn link_text(inner: &str) -> String {
    let (target, label) = match inner.find('|') {
        Some(p) => (&inner[..p], Some(&inner[p + 1..])),
        None => (inner, None),
    };
    let target = target.trim();
    if let Some(colon_target) = target.strip_prefix(':') {
        // `[[:Category:X]]` is a visible link to the category page.
        return label.map(str::to_string).unwrap_or_else(|| colon_target.to_string());
    }
    if let Some(p) = target.find(':') {
        let ns = target[..p].trim();
        let lower = ns.to_ascii_lowercase();
        // Interlanguage links carry no label; labeled interwiki links (`[[wikt:x|x]]`) show it.
        if matches!(lower.as_str(), "file" | "image" | "media" | "category")
            || (is_interlanguage(ns) && label.is_none())
        {
            return String::new();
        }
    }
    match label {
        // The pipe trick `[[a|]]` shows `a`.
        Some(l) if !l.trim().is_empty() => l.to_string(),
        _ => target.to_string(),
    }
}

/// `[url label]` → `label`, `[url]` → nothing. Only brackets opening a URL are touched.
fn external_links(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('[') {
        let after = &rest[i + 1..];
        let is_url = ["http://", "https://", "ftp://", "//", "mailto:"].iter().any(|p| after.starts_with(p));
        let close = after.find(']');
        match (is_url, close) {
            (true, Some(c)) if !after[..c].contains('\n') => {
                out.push_str(&rest[..i]);
                let inner = &after[..c];
                if let Some(sp) = inner.find(' ') {
                    out.push_str(inner[sp + 1..].trim());
                }
                rest = &after[c + 1..];
            }
            _ => {
                out.push_str(&rest[..=i]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Strip `<…>` tags that look like tags (a letter or `/` after `<`), keeping their text.
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('<') {
        let after = &rest[i + 1..];
        let looks_like_tag = after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/');
        match after.find('>') {
            Some(g) if looks_like_tag && !after[..g].contains('<') => {
                out.push_str(&rest[..i]);
                // `<br>` separates words.
                if after[..g].trim_start_matches('/').to_ascii_lowercase().starts_with("br") {
                    out.push(' ');
                }
                rest = &after[g + 1..];
            }
            _ => {
                out.push_str(&rest[..=i]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    s.replace("&nbsp;", "\u{a0}")
        .replace("&ndash;", "\u{2013}")
        .replace("&mdash;", "\u{2014}")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

fn split_lines(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut para = String::new();
    let flush = |para: &mut String, out: &mut Vec<String>| {
        let t = para.trim();
        if !t.is_empty() {
            out.push(t.to_string());
        }
        para.clear();
    };
    for line in s.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("----") || t.starts_with('|') || t.starts_with('!') {
            flush(&mut para, &mut out);
            continue;
        }
        if t.starts_with("__") && t.ends_with("__") {
            continue;
        }
        if t.len() >= 2 && t.starts_with('=') && t.ends_with('=') {
            flush(&mut para, &mut out);
            let h = t.trim_matches('=').trim();
            if !h.is_empty() {
                out.push(h.to_string());
            }
            continue;
        }
        if t.starts_with(['*', '#', ':', ';']) {
            flush(&mut para, &mut out);
            let item = t.trim_start_matches(['*', '#', ':', ';']).trim();
            if !item.is_empty() {
                out.push(item.to_string());
            }
            continue;
        }
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(t);
    }
    flush(&mut para, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduces_hand_written_wikitext() {
        let w = "{{Infobox animal\n| name = Aardvark\n| image = {{nested|x}}\n}}\n\
'''Aardvark''' (''Orycteropus afer'')<ref name=\"a\">{{cite web|url=x}}</ref> is a \
[[mammal]] native to [[Africa|the African continent]].<ref name=b/> It eats \
[[ant]]s.<!-- hidden\ncomment -->\nSecond line of the same paragraph, see \
[http://example.com the site] and [http://bare.example].\n\n\
[[File:Aardvark.jpg|thumb|An [[aardvark]] at night]]\n\
== Taxonomy ==\n\
{| class=\"wikitable\"\n|-\n| cell || {{t}} cell\n|}\n\
* A list item with <span style=\"x\">markup</span>&nbsp;here\n\
# numbered\n\
Last paragraph.<br/>Same.\n\
[[Category:Mammals]]\n[[de:Erdferkel]]\n[[:Category:Shown]] stays.\n__NOTOC__\n";
        let p = paragraphs(w);
        assert_eq!(
            p,
            vec![
                "Aardvark (Orycteropus afer) is a mammal native to the African continent. It eats ants. \
Second line of the same paragraph, see the site and .",
                "Taxonomy",
                "A list item with markup\u{a0}here",
                "numbered",
                "Last paragraph. Same.",
                "Category:Shown stays.",
            ]
        );
    }

    #[test]
    fn redirects_and_unterminated_markup_do_not_panic() {
        assert!(is_redirect("  #REDIRECT [[Foo]]"));
        assert!(is_redirect("#redirect[[Foo]]"));
        assert!(!is_redirect("#REDIR"));
        for w in
            ["{{open", "[[open", "<!-- open", "<ref>open", "<ref", "[http://x", "a <b", "}} |} ]]", "é{{é"]
        {
            let _ = paragraphs(w);
        }
        assert_eq!(paragraphs("before {{open template"), vec!["before"]);
        assert_eq!(paragraphs("a [[b|]] c"), vec!["a b c"]);
        assert_eq!(paragraphs("x<references/>y"), vec!["xy"]);
    }
}
