//! A guard in front of html5ever's tokenizer: at most [`MAX_ATTRIBUTES_PER_TAG`] attributes
//! reach it per tag.
//!
//! html5ever 0.29 checks each new attribute name against every earlier one of the same tag
//! (`Tokenizer::finish_attribute`, a linear search), so one tag of N distinct attributes
//! costs N²/2 string comparisons: a 4.9 MB tag of 500,000 attributes took 162 s (issue 26).
//! Gumbo and Nokogiri cap attributes per element for the same reason. This pre-scan follows
//! the tokenizer's own states for tags, comments, doctypes and the raw-text elements our
//! sink switches it into (`html.rs`, `special_start_tag`), counts the attributes each tag
//! starts, and cuts a tag's attributes from the first one past the cap up to the tag's `>`
//! (or to EOF, where the tokenizer drops an unfinished tag anyway). The tokenizer then sees
//! the same tokens with the excess attributes gone, and its attribute work per tag is at
//! most `MAX²/2` comparisons; as every attribute takes at least two bytes, a page of S bytes
//! costs at most `S × MAX / 4` of them (10 MB, the crawl's body cap: 1.6·10⁸; see BENCHMARKS.md,
//! issue 26).
//!
//! The scan is one pass: text between tags is skipped with `memchr`, quoted values too; only
//! tag names and attribute names are walked byte by byte. A page with no tag over the cap is
//! passed on as it is, without a copy, by [`cap_attributes`]; the cleaner calls [`prepare`],
//! which in the same pass also cuts out the attributes it never reads (all but `href`), so
//! the tokenizer skips most of a page's markup bytes (issue 22: the Debian docs scan went
//! from 0.63 to 0.81 of the bare tokenizer's speed by CPU time, BENCHMARKS.md), and the
//! whole tags of inline elements (`b`, `span`, `code`, …; links' too when links are not
//! collected), which are half the tokenizer's time on an article (issue 22, round 7: the
//! text-heavy scan went from 0.45 to 0.65 of the bare tokenizer's speed, Debian from 0.80
//! to 1.12).
//!
//! Where this scan and the tokenizer could disagree (script data's "double-escaped" state,
//! which the scan does not model, so it may end a script early), the scan reads *more* of
//! the input as markup than the tokenizer does, never less: every tag the tokenizer sees is
//! seen here, so the cap holds for every tag the tokenizer builds.

use html5ever::tendril::StrTendril;

/// Most attributes passed to the tokenizer per tag (start or end tag); later ones are
/// dropped and counted ([`super::CleanedDoc::attributes_dropped`]). Real pages stay below
/// it (a few dozen on heavy framework markup), and the cleaner reads only `href`. The work
/// it lets through grows with it (`S × MAX / 4` comparisons for S bytes): at 256, a 5 MB
/// page of tags at the cap cleaned in 0.75 s; at 64 the worst case is near an ordinary
/// page's cost (BENCHMARKS.md, issue 26). Nokogiri's default is 400.
pub const MAX_ATTRIBUTES_PER_TAG: usize = 64;

/// The input with every tag's attributes past the cap removed, and what was removed.
pub(crate) struct Guarded<'a> {
    pub text: GuardedText<'a>,
    /// Attributes removed, over all tags.
    pub attributes_dropped: u64,
}

/// The guard's output: the input itself when nothing was cut, else the text with the cuts
/// made, built straight into the tendril the tokenizer is fed (one copy of the page, not two).
pub(crate) enum GuardedText<'a> {
    Borrowed(&'a str),
    Owned(StrTendril),
    /// Owned, over a tendril's 4 GiB.
    Long(String),
}

impl GuardedText<'_> {
    pub fn as_str(&self) -> &str {
        match self {
            GuardedText::Borrowed(s) => s,
            GuardedText::Owned(t) => t,
            GuardedText::Long(l) => l,
        }
    }

    #[cfg(test)]
    pub fn into_owned(self) -> String {
        self.as_str().to_owned()
    }
}

/// Elements whose content our sink has the tokenizer read as raw text (up to their end tag),
/// and `plaintext` (to EOF): markup inside is not tags.
const RAW_ELEMENTS: [&[u8]; 9] =
    [b"script", b"style", b"noscript", b"iframe", b"noembed", b"noframes", b"title", b"textarea", b"xmp"];

/// What the scan is in between tags.
#[derive(Clone, Copy)]
enum Mode {
    Data,
    /// Raw text of the element with this name (an entry of [`RAW_ELEMENTS`]).
    Raw(&'static [u8]),
}

/// Cuts every tag of `text` to at most `max` attributes (see the module docs).
pub(crate) fn cap_attributes(text: &str, max: usize) -> Guarded<'_> {
    prepare(text, max, Strip::Nothing)
}

/// What [`prepare`] removes besides the attributes past the cap.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Strip {
    /// Nothing more: the cap only.
    Nothing,
    /// What the cleaner does not read when it collects links: every attribute but `href`,
    /// and inline tags ([`is_inline_tag`]).
    KeepLinks,
    /// What it does not read for text alone: every attribute, and inline and links' tags
    /// ([`is_inline_tag`]).
    TextOnly,
}

/// The names [`is_inline_tag`] matches besides links' (for tests: `html.rs` checks each is
/// inert in the sink).
#[cfg(test)]
pub(crate) const INLINE_TAGS: [&str; 30] = [
    "b", "i", "u", "s", "q", "em", "tt", "big", "bdi", "bdo", "del", "dfn", "img", "ins", "kbd", "sub",
    "sup", "var", "wbr", "abbr", "cite", "code", "font", "mark", "nobr", "samp", "span", "time", "small",
    "strong",
];

/// Whether a tag named `name` (as written, ASCII case ignored) is one [`prepare`] may cut
/// whole: an inline element whose tags the cleaner's sink does nothing with outside `<head>`
/// (`html.rs`: class `Other`, not a head element; tested there), so text on both sides of
/// it goes to the same block; links' tags (`a`, `area`) too with `links_too`.
fn is_inline_tag(name: &[u8], links_too: bool) -> bool {
    if name.len() > 6 {
        return false;
    }
    let mut lower = [0u8; 6];
    for (l, c) in lower.iter_mut().zip(name) {
        *l = c.to_ascii_lowercase();
    }
    // One `match` (by length, then bytes) rather than a search of the list: it runs for
    // every tag. The list and this match agree (tested).
    match &lower[..name.len()] {
        b"a" | b"area" => links_too,
        b"b" | b"i" | b"u" | b"s" | b"q" | b"em" | b"tt" | b"big" | b"bdi" | b"bdo" | b"del" | b"dfn"
        | b"img" | b"ins" | b"kbd" | b"sub" | b"sup" | b"var" | b"wbr" | b"abbr" | b"cite" | b"code"
        | b"font" | b"mark" | b"nobr" | b"samp" | b"span" | b"time" | b"small" | b"strong" => true,
        _ => false,
    }
}

/// [`cap_attributes`], and with `strip` also removes what the cleaner never reads, so that
/// the tokenizer does not build what is thrown away:
/// - every attribute of the first `max` of a tag except `href` (the only one the cleaner
///   reads, `html.rs`; with [`Strip::TextOnly`] that one too). Most of a page's markup bytes
///   are `class`, `id`, `style`, `title`… values. The tokenizer then emits the same tags,
///   with only their `href` attributes.
/// - whole tags of inline elements ([`is_inline_tag`]): on a Wikipedia article half the
///   tokenizer's time goes to its links and bold words (issue 22, BENCHMARKS.md).
///
/// Why the tags stay the same: an attribute is cut from its first byte up to where the next
/// one starts, or to the `/` or `>` that ends it, so the tokenizer goes from the state before
/// it (before- or after-attribute-name) straight to what followed it. Those two states act
/// alike on every byte but `=` (after a name, `=` starts its value; before one, it starts
/// a name), so an attribute followed by one whose name starts with `=` is kept. Stripping
/// needs the scan to agree with the tokenizer on what is markup, not only to read more of
/// it as markup: after a `<script>` whose text holds `<!--` (where the tokenizer's
/// double-escaped state, which the scan does not model, may end the script later than the
/// scan does) nothing more is stripped on the page, and only the cap applies.
///
/// Why the text stays the same without an inline tag ([`text_allows_cut`]): the tokenizer
/// is in the data state on both sides of a tag, so the text before and after it is emitted
/// as it was, and the sink appends both to the open block. Three things in the data state
/// read across a tag's place, and a tag is kept where one could: a `\r` before it (the
/// tokenizer reads `\r\n` as one newline), a `<` before it (`a<<b>p>` would become the tag
/// `<p>`), and a character reference not yet ended (`&not<b>in;` is `¬in;`, `&notin;` is
/// `∉`). Tags are kept while a `<head>` may be open, as the sink ends the head at them.
pub(crate) fn prepare(text: &str, max: usize, strip: Strip) -> Guarded<'_> {
    let keep_href = strip != Strip::TextOnly;
    let mut strip = strip != Strip::Nothing;
    let b = text.as_bytes();
    let mut cuts = Cuts { text, out: None, from: 0 };
    let mut dropped = 0u64;
    let mut i = 0;
    let mut mode = Mode::Data;
    // Where the text before the next markup starts, and whether a `<head>` may be open.
    let mut run_start = 0;
    let mut head_open = false;
    while i < b.len() {
        let tag = match mode {
            Mode::Data => {
                let Some(lt) = memchr::memchr(b'<', &b[i..]).map(|p| i + p) else { break };
                i = lt + 1;
                let (name_start, end_tag) = match b.get(i) {
                    Some(b'!') => {
                        i = markup_declaration(b, i + 1);
                        run_start = i;
                        continue;
                    }
                    Some(b'/') => match b.get(i + 1) {
                        Some(b'>') => {
                            i += 2;
                            run_start = i;
                            continue;
                        }
                        Some(c) if c.is_ascii_alphabetic() => (i + 1, true),
                        // A bogus comment, to the next `>`.
                        _ => {
                            i = after_next_gt(b, i + 1);
                            run_start = i;
                            continue;
                        }
                    },
                    Some(b'?') => {
                        i = after_next_gt(b, i);
                        run_start = i;
                        continue;
                    }
                    Some(c) if c.is_ascii_alphabetic() => (i, false),
                    _ => continue,
                };
                let name_end = tag_name_end(b, name_start);
                let name = &b[name_start..name_end];
                let inline = strip
                    && !head_open
                    && is_inline_tag(name, !keep_href)
                    && text_allows_cut(&b[run_start..lt]);
                head_open = head_open_after(head_open, name, end_tag);
                let t = scan_tag_from(b, name_end, max, strip && !inline, keep_href, &mut cuts);
                if inline && t.gt < b.len() {
                    // The whole tag goes; its attributes past the cap are still counted.
                    cuts.cut(lt, t.end);
                    dropped += t.excess;
                    i = t.end;
                    run_start = i;
                    continue;
                }
                if let Some(raw) = raw_element(name).filter(|_| !end_tag) {
                    if raw == b"plaintext" {
                        // Literal text to EOF: nothing after is markup.
                        note_cut(&t, &mut cuts, &mut dropped);
                        break;
                    }
                    if t.end < b.len() {
                        mode = Mode::Raw(raw);
                    }
                }
                t
            }
            Mode::Raw(name) => match raw_end_tag(b, i, name) {
                // The end tag's name is read; its attributes (if any) start here.
                Some(at) => {
                    mode = Mode::Data;
                    if name == b"script" && memchr::memmem::find(&b[i..at], b"<!--").is_some() {
                        strip = false;
                    }
                    scan_tag_from(b, at, max, strip, keep_href, &mut cuts)
                }
                None => break,
            },
        };
        note_cut(&tag, &mut cuts, &mut dropped);
        i = tag.end;
        run_start = i;
    }
    Guarded { text: cuts.finish(), attributes_dropped: dropped }
}

/// Whether a tag may be cut after `run`, the text since the markup before it (see
/// [`prepare`]). When that markup was itself cut, the text before it allowed the cut, and
/// what is checked here still holds over it.
fn text_allows_cut(run: &[u8]) -> bool {
    match run.last() {
        None => true,
        Some(b'\r' | b'<') => false,
        Some(_) => {
            // A character reference runs over letters, digits and `#` (numeric ones, with
            // leading zeros, as long as they like): an `&` before such a tail is open.
            let tail = run.iter().rev().take_while(|c| c.is_ascii_alphanumeric() || **c == b'#').count();
            run.len() == tail || run[run.len() - tail - 1] != b'&'
        }
    }
}

/// Whether a `<head>` may be open after a tag named `name`: the sink opens it at `<head>`
/// and ends it at `</head>` and at any start tag that cannot be in a head; of those, the
/// scan knows `<body>` and the inline tags.
fn head_open_after(open: bool, name: &[u8], end_tag: bool) -> bool {
    if name.eq_ignore_ascii_case(b"head") {
        !end_tag
    } else if !end_tag && (name.eq_ignore_ascii_case(b"body") || is_inline_tag(name, true)) {
        false
    } else {
        open
    }
}

/// The guard's output, built as the cuts are found (in order, never overlapping): the text up
/// to each cut is copied and the cut skipped, so no list of cuts is kept (a page of many
/// tiny attributes has millions). Nothing is allocated before the first cut. A tendril holds
/// at most 4 GiB: a longer text is built in a `String`.
struct Cuts<'a> {
    text: &'a str,
    out: Option<CutText>,
    /// Where the text not yet copied starts.
    from: usize,
}

enum CutText {
    Tendril(StrTendril),
    Long(String),
}

impl CutText {
    fn push(&mut self, s: &str) {
        match self {
            CutText::Tendril(t) => t.push_slice(s),
            CutText::Long(l) => l.push_str(s),
        }
    }
}

impl<'a> Cuts<'a> {
    fn cut(&mut self, start: usize, end: usize) {
        let len = self.text.len();
        let out = self.out.get_or_insert_with(|| match u32::try_from(len) {
            Ok(n) => CutText::Tendril(StrTendril::with_capacity(n)),
            Err(_) => CutText::Long(String::with_capacity(len)),
        });
        // Cuts start at an attribute name's first character and end where the next attribute
        // starts, at `/`, `>` or EOF, all after ASCII delimiters: character boundaries.
        out.push(self.text.get(self.from..start).unwrap_or_default());
        self.from = end;
    }

    fn finish(self) -> GuardedText<'a> {
        match self.out {
            None => GuardedText::Borrowed(self.text),
            Some(mut out) => {
                out.push(self.text.get(self.from..).unwrap_or_default());
                match out {
                    CutText::Tendril(t) => GuardedText::Owned(t),
                    CutText::Long(l) => GuardedText::Long(l),
                }
            }
        }
    }
}

fn note_cut(t: &Tag, cuts: &mut Cuts, dropped: &mut u64) {
    if let Some(start) = t.cut_from {
        cuts.cut(start, t.gt);
        *dropped += t.excess;
    }
}

/// `plaintext` or one of [`RAW_ELEMENTS`], by a tag name as written (ASCII case ignored).
fn raw_element(name: &[u8]) -> Option<&'static [u8]> {
    if name.eq_ignore_ascii_case(b"plaintext") {
        return Some(b"plaintext");
    }
    RAW_ELEMENTS.iter().copied().find(|r| r.eq_ignore_ascii_case(name))
}

fn is_ws(c: u8) -> bool {
    // The tokenizer sees CR as LF (input preprocessing).
    matches!(c, b'\t' | b'\n' | b'\x0c' | b' ' | b'\r')
}

/// Index after the next `>` at or after `from`, or the end.
fn after_next_gt(b: &[u8], from: usize) -> usize {
    match memchr::memchr(b'>', b.get(from..).unwrap_or_default()) {
        Some(p) => from + p + 1,
        None => b.len(),
    }
}

/// After `<!`: a comment (`<!--`), or a doctype or bogus comment, both ending at the next
/// `>`. Returns the index after it.
fn markup_declaration(b: &[u8], i: usize) -> usize {
    if b.get(i..i + 2) == Some(b"--") {
        comment(b, i + 2)
    } else {
        after_next_gt(b, i)
    }
}

/// A comment's body from after `<!--`, with html5ever's comment states (so `<!-->`,
/// `<!--->` and `--!>` end it where the tokenizer ends it). Returns the index after it.
fn comment(b: &[u8], mut i: usize) -> usize {
    #[derive(Clone, Copy)]
    enum S {
        Start,
        StartDash,
        Body,
        Lt,
        LtBang,
        LtBangDash,
        LtBangDashDash,
        EndDash,
        End,
        EndBang,
    }
    let mut s = S::Start;
    while let Some(&c) = b.get(i) {
        // Reconsuming states leave `i` where it is.
        let (next, consume) = match (s, c) {
            (S::Start, b'-') => (S::StartDash, true),
            (S::Start, b'>') | (S::StartDash, b'>') => return i + 1,
            (S::Start, _) => (S::Body, true),
            (S::StartDash, b'-') => (S::End, true),
            (S::StartDash, _) => (S::Body, true),
            (S::Body, b'<') => (S::Lt, true),
            (S::Body, b'-') => (S::EndDash, true),
            (S::Body, _) => {
                // Skip ahead to the next byte that can change the state.
                match memchr::memchr2(b'<', b'-', &b[i..]) {
                    Some(p) => {
                        i += p;
                        continue;
                    }
                    None => return b.len(),
                }
            }
            (S::Lt, b'!') => (S::LtBang, true),
            (S::Lt, b'<') => (S::Lt, true),
            (S::Lt, _) => (S::Body, false),
            (S::LtBang, b'-') => (S::LtBangDash, true),
            (S::LtBang, _) => (S::Body, false),
            (S::LtBangDash, b'-') => (S::LtBangDashDash, true),
            (S::LtBangDash, _) => (S::EndDash, false),
            (S::LtBangDashDash, _) => (S::End, false),
            (S::EndDash, b'-') => (S::End, true),
            (S::EndDash, _) => (S::Body, true),
            (S::End, b'>') => return i + 1,
            (S::End, b'!') => (S::EndBang, true),
            (S::End, b'-') => (S::End, true),
            (S::End, _) => (S::Body, false),
            (S::EndBang, b'-') => (S::EndDash, true),
            (S::EndBang, b'>') => return i + 1,
            (S::EndBang, _) => (S::Body, true),
        };
        s = next;
        if consume {
            i += 1;
        }
    }
    b.len()
}

/// In raw text of element `name`: finds the next `</name` followed by whitespace, `/` or
/// `>` (ASCII case ignored) and returns the index just after the name, where the end tag's
/// tag-name state sees its terminator. `None`: the raw text runs to EOF.
fn raw_end_tag(b: &[u8], mut i: usize, name: &[u8]) -> Option<usize> {
    loop {
        let lt = i + memchr::memchr(b'<', b.get(i..)?)?;
        i = lt + 1;
        if b.get(i) != Some(&b'/') {
            continue;
        }
        let start = i + 1;
        let end = start + name.len();
        if b.get(start..end).is_some_and(|n| n.eq_ignore_ascii_case(name))
            && b.get(end).is_some_and(|&c| is_ws(c) || c == b'/' || c == b'>')
        {
            return Some(end);
        }
    }
}

/// A scanned tag.
struct Tag {
    /// Index after the tag (after its `>`, or the end of input).
    end: usize,
    /// The tag's `>` (or the end of input): where a cut ends.
    gt: usize,
    /// Where the first attribute past the cap starts, if the tag has one.
    cut_from: Option<usize>,
    /// Attributes past the cap.
    excess: u64,
}

/// The end of a tag name starting at `i` (after `<` or `</`): html5ever's tag-name state
/// ends it at whitespace, `/` or `>`.
fn tag_name_end(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|&c| !is_ws(c) && c != b'/' && c != b'>') {
        i += 1;
    }
    i
}

/// Whether the attribute starting at `at` is named `href` (as the tokenizer lowercases it).
fn is_href(b: &[u8], at: usize) -> bool {
    b.get(at..at + 4).is_some_and(|n| n.eq_ignore_ascii_case(b"href"))
        && b.get(at + 4).is_none_or(|&c| is_ws(c) || c == b'/' || c == b'>' || c == b'=')
}

/// The rest of a tag from `i`, the end of its name (html5ever's tag-name state seeing the
/// byte at `i`): its attributes, counted, up to `>`. With `strip`, cuts from `cuts` the
/// attributes among the first `max` that [`prepare`] removes (`href` only without
/// `keep_href`).
fn scan_tag_from(b: &[u8], mut i: usize, max: usize, strip: bool, keep_href: bool, cuts: &mut Cuts) -> Tag {
    #[derive(Clone, Copy)]
    enum S {
        TagName,
        BeforeName,
        Name,
        AfterName,
        BeforeValue,
        Unquoted,
        AfterQuoted,
        SelfClosing,
    }
    let mut s = S::TagName;
    let mut count = 0usize;
    let mut cut_from = None;
    // The open attribute (the `count`-th), while it may be stripped: where it starts.
    let mut open: Option<usize> = None;
    // The open attribute ends at `end` (a new attribute, or the `/` or `>` after it): cut it
    // unless it is `href`, past the cap (the cap's cut holds it), or followed by a name that
    // starts with `=`.
    let mut close = |open: &mut Option<usize>, end: usize, count: usize| {
        if let Some(start) = open.take() {
            if count <= max && b.get(end) != Some(&b'=') && !(keep_href && is_href(b, start)) {
                cuts.cut(start, end);
            }
        }
    };
    let gt = loop {
        let Some(&c) = b.get(i) else { break b.len() };
        s = match (s, c) {
            (S::TagName, c) if is_ws(c) => S::BeforeName,
            (S::TagName, b'/') => S::SelfClosing,
            (S::TagName, b'>') => break i,
            (S::TagName, _) => S::TagName,
            (S::BeforeName | S::AfterName, c) if is_ws(c) => s,
            (S::BeforeName | S::AfterName | S::Name | S::AfterQuoted, b'/') => {
                close(&mut open, i, count);
                S::SelfClosing
            }
            (S::BeforeName | S::AfterName | S::Name | S::AfterQuoted | S::Unquoted, b'>') => break i,
            (S::AfterName | S::Name, b'=') => S::BeforeValue,
            (S::BeforeName | S::AfterName, _) => {
                close(&mut open, i, count);
                count += 1;
                if count == max + 1 {
                    cut_from = Some(i);
                }
                if strip {
                    open = Some(i);
                }
                S::Name
            }
            (S::Name, c) if is_ws(c) => S::AfterName,
            (S::Name, _) => S::Name,
            (S::BeforeValue, c) if is_ws(c) => S::BeforeValue,
            (S::BeforeValue, q @ (b'"' | b'\'')) => {
                // A quoted value: to its closing quote (or EOF, which drops the tag).
                match memchr::memchr(q, &b[i + 1..]) {
                    Some(p) => {
                        i += p + 2;
                        s = S::AfterQuoted;
                        continue;
                    }
                    None => break b.len(),
                }
            }
            (S::BeforeValue, b'>') => break i,
            (S::BeforeValue, _) | (S::Unquoted, _) if !is_ws(c) => S::Unquoted,
            (S::Unquoted, _) | (S::AfterQuoted, _) if is_ws(c) => S::BeforeName,
            // A `/` not followed by `>`, or text right after a quoted value: reconsumed as
            // the start of a new attribute name.
            (S::AfterQuoted | S::SelfClosing, _) => {
                if matches!(s, S::SelfClosing) && c == b'>' {
                    break i;
                }
                s = S::BeforeName;
                continue;
            }
            // Unreachable: whitespace in BeforeValue is handled above.
            (S::BeforeValue | S::Unquoted, _) => S::BeforeName,
        };
        i += 1;
    };
    close(&mut open, gt, count);
    let excess = count.saturating_sub(max) as u64;
    Tag { end: (gt + 1).min(b.len()), gt, cut_from, excess }
}

/// For tests: the cleaner collects the same blocks, block tags, links, anchors, truncation
/// and dropped attributes from `page` with [`prepare`]'s stripping as without it, links
/// collected and not (`what` names the page in a failure).
#[cfg(test)]
pub(crate) fn assert_stripping_changes_nothing(page: &str, what: &str) {
    for links in [true, false] {
        let a = super::html::clean_html_with(page, Some("http://host.test/dir/page.html"), links, false);
        let b = super::html::clean_html_with(page, Some("http://host.test/dir/page.html"), links, true);
        let what = format!("{what}, links {links}");
        assert_eq!(a.blocks.to_vec(), b.blocks.to_vec(), "{what}");
        assert_eq!(a.block_tags, b.block_tags, "{what}");
        assert_eq!(a.links, b.links, "{what}");
        assert_eq!(a.anchors, b.anchors, "{what}");
        assert_eq!((a.truncated, a.attributes_dropped), (b.truncated, b.attributes_dropped), "{what}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clean::{clean, CleanOptions};

    /// One `<tag>` with `n` distinct attributes `a0`, `a1`, … (the issue's reproducing input),
    /// then a paragraph.
    fn many_attributes(tag: &str, n: usize, close: &str) -> String {
        let mut s = format!("<html><body><p>before</p><{tag}");
        for k in 0..n {
            s.push_str(&format!(" a{k:08}"));
        }
        s.push_str(close);
        s.push_str("<p>after the tag</p></body></html>");
        s
    }

    fn capped(s: &str, max: usize) -> (String, u64) {
        let g = cap_attributes(s, max);
        (g.text.into_owned(), g.attributes_dropped)
    }

    #[test]
    fn tags_under_the_cap_pass_unchanged_without_a_copy() {
        let s = "<p class=x id='y' data-z=\"1>2\">a</p><!-- <a b c d> --><script>if (a<b && c>d) x='<a b c>'</script>";
        let g = cap_attributes(s, 3);
        assert!(matches!(g.text, GuardedText::Borrowed(_)), "{}", g.text.as_str());
        assert_eq!(g.attributes_dropped, 0);
    }

    #[test]
    fn attributes_past_the_cap_are_cut_to_the_tags_end() {
        assert_eq!(capped("<a b c d e>t", 2), ("<a b c >t".to_string(), 2));
        // Quoted values may hold `>`, whitespace and quotes of the other kind.
        assert_eq!(capped("<a b='>' c=\"x y\" d=1 e/>t", 2), ("<a b='>' c=\"x y\" >t".to_string(), 2));
        // Values glued to the next name, `/` inside a tag, unquoted values with quotes.
        assert_eq!(capped("<a b=\"1\"c=2 / d=x\"y e>t", 2), ("<a b=\"1\"c=2 / >t".to_string(), 2));
        // End tags have attributes too (a parse error the tokenizer still collects).
        assert_eq!(capped("</p x y z>t", 1), ("</p x >t".to_string(), 2));
        // At EOF the unfinished tag is cut to its end (the tokenizer drops it anyway).
        assert_eq!(capped("<a b c d", 1), ("<a b ".to_string(), 2));
        // Names starting with `=` or quotes are names.
        assert_eq!(capped("<a =b \"c 'd>", 1), ("<a =b >".to_string(), 2));
    }

    #[test]
    fn comments_doctypes_and_raw_text_are_not_tags() {
        for s in [
            "<!-- <a b c d> -->",
            "<!DOCTYPE html <a b c d>",
            "<? <a b c d>",
            "</ <a b c d>",
            "<script><a b c d></script >",
            "<STYLE x><a b c d></style>",
            "<title><a b c d></title>",
            "<textarea><a b c d></textarea>",
            "<xmp><a b c d></xmp>",
            "<plaintext><a b c d></plaintext><a b c d>",
            "<p>1 < 2 <3 <= 4</p>",
        ] {
            assert_eq!(capped(s, 2), (s.to_string(), 0), "{s}");
        }
        // Where the tokenizer ends a comment or raw text, tags count again.
        for (s, cut) in [
            ("<!--><a b c d>", "<!--><a b c >"),
            ("<!---><a b c d>", "<!---><a b c >"),
            ("<!-- x --!><a b c d>", "<!-- x --!><a b c >"),
            ("<!-- <!--><a b c d>", "<!-- <!--><a b c >"),
            ("<!-- x ---><a b c d>", "<!-- x ---><a b c >"),
            ("<!doctype html><a b c d>", "<!doctype html><a b c >"),
            ("<script></scriptx></script><a b c d>", "<script></scriptx></script><a b c >"),
            ("<title>x</TITLE\ty z w><a b c d>", "<title>x</TITLE\ty z ><a b c >"),
        ] {
            assert_eq!(capped(s, 2).0, cut, "{s}");
        }
    }

    /// The guard agrees with the tokenizer on what is a tag: over pages of hostile markup,
    /// every tag the tokenizer builds has at most the cap's attributes.
    #[test]
    fn the_tokenizer_never_sees_more_than_the_cap() {
        let n = 3 * MAX_ATTRIBUTES_PER_TAG;
        let a = many_attributes("div", n, ">");
        let cases = [
            a.clone(),
            many_attributes("p", n, "/>"),
            many_attributes("/p", n, ">"),
            format!("<script>{a}</script>{a}"),
            format!("<!-- {a} -->{a}<!-->{a}"),
            format!("<textarea></textarea {}>{a}", "x ".repeat(n)),
            format!("<a href='{}' {}>{a}", "<b c d>".repeat(n), "e ".repeat(n)),
        ];
        for page in &cases {
            let out = crate::clean::html::clean_html(page, Some("http://example.com/"), true);
            assert!(
                out.max_attributes_seen <= MAX_ATTRIBUTES_PER_TAG,
                "{} attributes reached the tokenizer",
                out.max_attributes_seen
            );
            assert!(out.attributes_dropped > 0);
            assert!(out.truncated);
        }
    }

    /// The issue's reproducing input: one tag of 500,000 distinct attributes (4.9 MB).
    /// Bare html5ever spent 162 s on it (N²/2 name comparisons); now the tokenizer gets
    /// [`MAX_ATTRIBUTES_PER_TAG`] of them, and the page's text around the tag survives. (Time is measured in
    /// `detector/benches/clean_throughput.rs`, not here.)
    #[test]
    fn one_tag_of_500k_attributes_reaches_the_tokenizer_with_the_cap() {
        let n = 500_000;
        let page = many_attributes("div", n, ">");
        assert!(page.len() > 4_900_000, "{} bytes", page.len());
        let d = clean(page.as_bytes(), Some("text/html"), None, &CleanOptions::default());
        assert_eq!(d.blocks.to_vec(), ["before", "after the tag"]);
        assert_eq!(d.attributes_dropped, (n - MAX_ATTRIBUTES_PER_TAG) as u64);
        assert!(d.truncated);
        let out = crate::clean::html::clean_html_with(&page, None, false, false);
        assert_eq!(out.max_attributes_seen, MAX_ATTRIBUTES_PER_TAG);
        // Stripped of the attributes the cleaner does not read, the tag reaches it bare.
        let out = crate::clean::html::clean_html(&page, None, false);
        assert_eq!(out.max_attributes_seen, 0);
        assert_eq!(out.attributes_dropped, (n - MAX_ATTRIBUTES_PER_TAG) as u64);
    }

    fn stripped(s: &str) -> String {
        prepare(s, MAX_ATTRIBUTES_PER_TAG, Strip::KeepLinks).text.into_owned()
    }

    #[test]
    fn unread_attributes_are_stripped_and_href_kept() {
        assert_eq!(stripped("<p class=x id='y' data-z=\"1>2\">a</p>"), "<p >a</p>");
        assert_eq!(stripped("<a class=\"c\" HREF=\"/u\" title=t>x</a><br/>"), "<a HREF=\"/u\" >x</a><br/>");
        // `/` ends an attribute; one followed by a name starting with `=` is kept.
        assert_eq!(stripped("<p a/ b><p x y=1 =z>"), "<p / ><p y=1 >");
        // A name that only starts with `href` is not `href`.
        assert_eq!(stripped("<a hrefx=1 href=2>"), "<a href=2>");
        // Comments and raw text are left alone.
        let s = "<!-- <p a=b> --><script>x='<p a=b>'</script><textarea><p a=b></textarea>";
        assert_eq!(stripped(s), s);
        // After a script the tokenizer may end later than the scan (double-escaped), the
        // page is no longer stripped.
        let s = "<p a=1></p><script><!--<script></script><p title='</script>'>--></script><p b=2>";
        assert_eq!(
            stripped(s),
            "<p ></p><script><!--<script></script><p title='</script>'>--></script><p b=2>"
        );
    }

    /// Stripping changes nothing in what the cleaner collects: the same blocks, tags, links
    /// and anchors as with every attribute passed, on markup made to trip it.
    #[test]
    fn stripping_gives_the_same_output() {
        let n = 3 * MAX_ATTRIBUTES_PER_TAG;
        let cases = [
            "<html><head><title>t</title><base class=b href='/dir/'></head><body><p class=x id=y>one<a class=l href=a.html>link</a></p></body>".to_string(),
            "<a href id=1 =z>x</a><a x y=1 =http://e.com/>y</a><a b=\"1\"href=q>z</a><a q/href=w>w</a>".to_string(),
            "<a title='</a>' href=\"r\">in</a><p data-x='<p>'>two</p><area href=s alt=x/><a href=1 href=2>d</a>".to_string(),
            "<script><!--<script></script><a title='</script>' href=z>--></script><a c=d href=v>after</a>".to_string(),
            "<xmp class=k><p a=b>lit</xmp><p style='x' >p</p><plaintext a=b><a href=no>".to_string(),
            "<div a=1 b c=\"3\" d='4' e=5/ f /><a g\th\nhref\r=x>\n</a><a href=\"u\" i=\"x".to_string(),
            many_attributes("a", n, " href=late>"),
            format!("<a{} href=cap>t</a>", " c=1".repeat(n)),
            many_attributes("b", n, ">bold</b> after"),
            // Inline tags cut whole: text joins across them, but not across a `\r\n`, a
            // `<` that would make a tag, or a character reference not yet ended.
            "<p>one <b>bold</b> and <i class=x>it<em>al</em>ic</i>, <span><code>x</code></span>.</p>".to_string(),
            "<p>a\r<b>\nb</b>\r</i>\n c<<b>p>d<</b>/p>e</p>".to_string(),
            "<p>&not<b>in; &#x00000<i>41; &amp<b>; &<i>lt; &#<b>65; x&y<i>z &no</i>t</p>".to_string(),
            "<p>&notin<b></b>; a&<b></b><i></i>amp; b</p><p>&am<!-- c -->p; &am<b><!-- c --></b>p;</p>".to_string(),
            // A head: text and inline tags in it; the head ends at an inline tag or `<body>`.
            "<html><head><title>t</title>\n  <b>  \n</b>   <i>text in head</i><p>x</p>".to_string(),
            "<head><meta charset=utf-8>  <span>   </span> <body>  <b> </b> one</body>".to_string(),
            "<head> </head> <b> </b> <head> <i>  </i> <p>after</p> <HEAD/> <SPAN>z</SPAN>".to_string(),
            // Links' tags, kept when links are collected; unfinished inline tags; templates.
            "<a href=/1><b>one</b></a> <A HREF='/2'><IMG SRC=x ALT=y>two</A><area href=/3>".to_string(),
            "<template><p>in <b>template</b></p></template><p>out <i>side</i> <b".to_string(),
            "<p>x<b/>y<b / >z</b x=1>w<b\ty\n=2\r>v<wbr>u<nobr>t</nobr><bdi dir=rtl>s</bdi></p>".to_string(),
            "<script>a<b>c</script><b>d</b><style><i>e</style><i>f</i><textarea><b>g</textarea><b>h".to_string(),
            "<p>a<b>b<plaintext><b>literal</b>".to_string(),
        ];
        for page in &cases {
            assert_stripping_changes_nothing(page, &format!("{page:?}"));
        }
    }

    /// Stripping changes nothing on random pages pieced from the markup that could trip it
    /// (inline tags beside `\r`, `<`, `&`, character references, heads, raw text, comments).
    #[test]
    fn stripping_gives_the_same_output_on_random_markup() {
        const PIECES: [&str; 40] = [
            "<b>",
            "</b>",
            "<i x=1>",
            "</I>",
            "<span class='a>b'>",
            "</span>",
            "<a href=/l>",
            "</a>",
            "<area href=/m>",
            "<img src=x>",
            "<b/>",
            "<b",
            "<p>",
            "</p>",
            "<div>",
            "<head>",
            "</head>",
            "<body>",
            "<title>",
            "</title>",
            "<script>",
            "</script>",
            "<!--",
            "-->",
            "<br>",
            "<template>",
            "</template>",
            "&",
            "&amp",
            "&not",
            ";",
            "#",
            "x41",
            "\r",
            "\n",
            " ",
            "<",
            ">",
            "word",
            "é",
        ];
        // xorshift64*: a fixed sequence, so a failure repeats.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        };
        for _ in 0..20_000 {
            let len = 1 + next(24);
            let page: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
            assert_stripping_changes_nothing(&page, &format!("{page:?}"));
        }
    }

    #[test]
    fn the_inline_match_is_the_list() {
        for name in INLINE_TAGS {
            assert!(is_inline_tag(name.as_bytes(), false), "{name}");
            assert!(is_inline_tag(name.to_uppercase().as_bytes(), false), "{name}");
        }
        for name in ["p", "div", "li", "br", "head", "body", "title", "script", "strongest", "spa", ""] {
            assert!(!is_inline_tag(name.as_bytes(), true), "{name}");
        }
        assert!(is_inline_tag(b"A", true) && is_inline_tag(b"area", true));
        assert!(!is_inline_tag(b"a", false) && !is_inline_tag(b"area", false));
    }

    fn text_only(s: &str) -> String {
        prepare(s, MAX_ATTRIBUTES_PER_TAG, Strip::TextOnly).text.into_owned()
    }

    #[test]
    fn inline_tags_are_cut_whole_where_text_allows() {
        assert_eq!(stripped("<p class=x>a <b>b</b> <a href=/u>c</a></p>"), "<p >a b <a href=/u>c</a></p>");
        assert_eq!(text_only("<p class=x>a <b>b</b> <a href=/u>c</a></p>"), "<p >a b c</p>");
        // Kept: after `\r`, after `<`, after an open character reference, in a head.
        assert_eq!(text_only("a\r<b>\n"), "a\r<b>\n");
        assert_eq!(text_only("a<<b>p>"), "a<<b>p>");
        assert_eq!(text_only("&not<b>in; &#x0<b>41; &amp;<b>x"), "&not<b>in; &#x0<b>41; &amp;x");
        assert_eq!(text_only("<head><b>x</b><i>y</i>"), "<head><b>xy");
        assert_eq!(text_only("<head><body><b>x</b>"), "<head><body>x");
        // An inline tag unfinished at the end is left to the tokenizer (which drops it).
        assert_eq!(text_only("a<b c=1"), "a<b c=1");
    }

    /// Nesting costs nothing: no tree is built, and the block stack is capped.
    #[test]
    fn deep_nesting_is_text_with_the_deepest_tracked_tag() {
        let depth = 200_000;
        let page =
            format!("{}<p>deep</p>{}", "<div><ul><li>".repeat(depth), "</li></ul></div>".repeat(depth));
        let d = clean(page.as_bytes(), Some("text/html"), None, &CleanOptions::default());
        assert_eq!(d.blocks.to_vec(), ["deep"]);
        // The stack holds div, ul, li, div, … up to MAX_NESTING; deeper ones are not tracked.
        let deepest = ["div", "ul", "li"][(crate::clean::MAX_NESTING - 1) % 3];
        assert_eq!(d.block_tags, [deepest], "past MAX_NESTING, the deepest tracked element tags the block");
    }
}
