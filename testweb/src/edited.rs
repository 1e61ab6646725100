//! Edited-copy test webs (issue 36): content farms that copy labeled Wikipedia articles with
//! the edits scrapers and spinners make, beside innocent sites that must not be flagged.
//!
//! [`generate`] reads the shared articles (`shared/data/wikipedia/articles`), splits them by
//! a fixed rule into *labeled* articles (the label set's sources, about two thirds) and
//! *unlabeled* ones (held out of the label set), and writes into an output folder:
//!
//! - `labelset/`: the labeled articles' files, unchanged, for
//!   `ditto labelset build --name wikipedia --min-chars 100 -o X.dls OUT/labelset`;
//! - `web/HOST/DIR/PAGE.html`: the web, read by `ditto scan --url-prefix http:// OUT/web` as
//!   `http://HOST/DIR/PAGE.html` (see `src/source/dir.rs`);
//! - `truth.json`: which hosts and directories copy labeled text ([`Truth::to_json`]).
//!
//! One web holds one kind of edit ([`Edit`], a "row" of the issue's table), applied to every
//! paragraph copied by a copying host. Host roles ([`Role`]):
//!
//! | role | what its pages are | flagged? |
//! | --- | --- | --- |
//! | `copier` | a content farm: some directories copy whole labeled articles (every `<p>`, edited), wrapped in navigation, ads, a byline, related links and a footer; its other directories hold original prose | yes: the host and its copying directories |
//! | `unlabeled-copier` | the same farm layout, copying *unlabeled* articles (held out of the label set) | no |
//! | `topical` | pages on the topics of labeled articles written independently: sentences drawn from unlabeled articles, with the topic's names (runs of capitalized words), years and numbers put in place of theirs | no |
//! | `quoting` | essays on labeled topics (as `topical`) quoting one sentence of the labeled article, inline or in a `<blockquote>`, with credit | no |
//! | `boilerplate` | a network of sites sharing one long navigation menu and three paragraphs of legal boilerplate; original prose | no |
//! | `template` | blogs sharing one theme: sidebar text, a comment form, a "featured fact" (one sentence of a labeled article, the same on every page of every such site); original prose | no |
//!
//! "Original prose" comes from an order-2 word Markov chain trained on the unlabeled articles.
//! Host and directory names are drawn from one pool for every role, so names tell nothing.
//!
//! Generation is deterministic per [`Spec`]: the same seed, edit, split and scale give the same
//! bytes. [`Spec::holdout`] selects another article split and another seed stream: variants
//! kept for a final check that no threshold was tuned on ("never tune").

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// What a copier did to each copied paragraph: one per generated web.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Edit {
    /// Copied as is (the test webs before issue 36).
    None,
    /// One word per paragraph replaced by a synonym (or, where the paragraph has none in the
    /// table, by another word of the vocabulary).
    Synonym,
    /// One word in 20 replaced, two sentences swapped.
    Light,
    /// One word in 8 replaced, one in 10 dropped, sentences shuffled.
    Heavy,
    /// Paragraphs split at sentence ends, one `<p>` per sentence (no word changed).
    Split,
    /// Paragraphs joined in pairs into one `<p>` (no word changed).
    Join,
    /// One word in 12 inserted (fillers such as "really", "indeed").
    Insert,
    /// Each paragraph's last third of words dropped, an ellipsis after the rest.
    TailCut,
    /// Cyrillic look-alikes (а е о р с) for a Latin letter in one word in 10.
    Homoglyph,
    /// American spellings made British and British American (a table, and -ize/-yze words
    /// made -ise/-yse); paragraphs with no such word stay unchanged.
    Spelling,
    /// The paragraphs of a page in one `<div>`, separated by `<br><br>` instead of `<p>`.
    BrBr,
}

impl Edit {
    /// Every row, the issue's six first.
    pub const ALL: [Edit; 11] = [
        Edit::None,
        Edit::Synonym,
        Edit::Light,
        Edit::Heavy,
        Edit::Split,
        Edit::Join,
        Edit::Insert,
        Edit::TailCut,
        Edit::Homoglyph,
        Edit::Spelling,
        Edit::BrBr,
    ];

    /// The row's name on the command line and in `truth.json`.
    pub fn name(self) -> &'static str {
        match self {
            Edit::None => "none",
            Edit::Synonym => "synonym",
            Edit::Light => "light",
            Edit::Heavy => "heavy",
            Edit::Split => "split",
            Edit::Join => "join",
            Edit::Insert => "insert",
            Edit::TailCut => "tailcut",
            Edit::Homoglyph => "homoglyph",
            Edit::Spelling => "spelling",
            Edit::BrBr => "brbr",
        }
    }

    /// One line for tables.
    pub fn describe(self) -> &'static str {
        match self {
            Edit::None => "nothing",
            Edit::Synonym => "one word replaced by a synonym",
            Edit::Light => "1 word in 20 replaced, two sentences swapped",
            Edit::Heavy => "1 word in 8 replaced, 1 in 10 dropped, sentences shuffled",
            Edit::Split => "split at sentence ends into separate <p>",
            Edit::Join => "joined in pairs into one <p>",
            Edit::Insert => "1 word in 12 inserted",
            Edit::TailCut => "last third of each paragraph cut",
            Edit::Homoglyph => "Cyrillic look-alike letters in 1 word in 10",
            Edit::Spelling => "British/American spellings swapped",
            Edit::BrBr => "<br><br> in place of <p>",
        }
    }

    pub fn parse(s: &str) -> Option<Edit> {
        Edit::ALL.into_iter().find(|e| e.name() == s)
    }
}

/// The role of a host in the web.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Copier,
    UnlabeledCopier,
    Topical,
    Quoting,
    Boilerplate,
    Template,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Copier => "copier",
            Role::UnlabeledCopier => "unlabeled-copier",
            Role::Topical => "topical",
            Role::Quoting => "quoting",
            Role::Boilerplate => "boilerplate",
            Role::Template => "template",
        }
    }
}

/// How many hosts of each role, and their shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    pub copier_hosts: usize,
    /// Directories per host (every role); a copier copies in 1 to `dirs_per_host - 1` of them.
    pub dirs_per_host: usize,
    /// Content pages per directory (each directory also has an `index.html`).
    pub pages_per_dir: usize,
    pub unlabeled_copier_hosts: usize,
    pub topical_hosts: usize,
    pub quoting_hosts: usize,
    pub boilerplate_hosts: usize,
    pub template_hosts: usize,
}

impl Scale {
    /// The evaluator's web: 28 hosts, about 700 pages.
    pub fn full() -> Scale {
        Scale {
            copier_hosts: 12,
            dirs_per_host: 4,
            pages_per_dir: 5,
            unlabeled_copier_hosts: 3,
            topical_hosts: 3,
            quoting_hosts: 2,
            boilerplate_hosts: 4,
            template_hosts: 4,
        }
    }

    /// The integration test's web: 11 hosts, about 150 pages.
    pub fn small() -> Scale {
        Scale {
            copier_hosts: 4,
            dirs_per_host: 3,
            pages_per_dir: 3,
            unlabeled_copier_hosts: 1,
            topical_hosts: 2,
            quoting_hosts: 1,
            boilerplate_hosts: 2,
            template_hosts: 1,
        }
    }

    pub fn parse(s: &str) -> Option<Scale> {
        match s {
            "full" => Some(Scale::full()),
            "small" => Some(Scale::small()),
            _ => None,
        }
    }
}

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub edit: Edit,
    pub seed: u64,
    /// The "never tune" variants: another labeled/unlabeled split of the articles and another
    /// stream of random choices for the same seed.
    pub holdout: bool,
    pub scale: Scale,
}

/// Where [`generate`] wrote things, and the truth.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The labeled articles (label-set sources).
    pub labelset_dir: PathBuf,
    /// The web: `HOST/DIR/PAGE.html`.
    pub web_dir: PathBuf,
    pub truth_path: PathBuf,
    pub truth: Truth,
}

/// One page of the web.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageTruth {
    pub url: String,
    /// The article it copies (title), if any.
    pub copies: Option<String>,
    /// Whether that article is labeled.
    pub labeled: bool,
}

/// One directory (`http://host/dir/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirTruth {
    pub prefix: String,
    /// Copies labeled articles: a directory a detector should flag.
    pub copying: bool,
    pub pages: Vec<PageTruth>,
}

/// One host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostTruth {
    pub host: String,
    /// `http://host/`: the host's root neighborhood.
    pub root: String,
    pub role: Role,
    pub dirs: Vec<DirTruth>,
}

/// The ground truth of a generated web.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truth {
    pub edit: Edit,
    pub seed: u64,
    pub holdout: bool,
    /// The `--url-prefix` the web's URLs assume.
    pub url_prefix: String,
    pub labeled_articles: Vec<String>,
    pub unlabeled_articles: Vec<String>,
    pub hosts: Vec<HostTruth>,
}

impl Truth {
    /// Roots (`http://host/`) of the hosts that copy labeled text.
    pub fn copying_hosts(&self) -> BTreeSet<String> {
        self.hosts.iter().filter(|h| h.role == Role::Copier).map(|h| h.root.clone()).collect()
    }

    /// Roots of every other host.
    pub fn innocent_hosts(&self) -> BTreeSet<String> {
        self.hosts.iter().filter(|h| h.role != Role::Copier).map(|h| h.root.clone()).collect()
    }

    /// Prefixes (`http://host/dir/`) of the directories that copy labeled text.
    pub fn copying_dirs(&self) -> BTreeSet<String> {
        self.hosts.iter().flat_map(|h| &h.dirs).filter(|d| d.copying).map(|d| d.prefix.clone()).collect()
    }

    /// Prefixes of every directory.
    pub fn all_dirs(&self) -> BTreeSet<String> {
        self.hosts.iter().flat_map(|h| &h.dirs).map(|d| d.prefix.clone()).collect()
    }

    /// Pages that copy a labeled article.
    pub fn copied_pages(&self) -> usize {
        self.hosts
            .iter()
            .flat_map(|h| &h.dirs)
            .flat_map(|d| &d.pages)
            .filter(|p| p.copies.is_some() && p.labeled)
            .count()
    }

    pub fn pages(&self) -> usize {
        // Content pages plus one index per directory and one per host.
        self.hosts.iter().map(|h| 1 + h.dirs.iter().map(|d| 1 + d.pages.len()).sum::<usize>()).sum()
    }

    /// The truth as JSON (`truth.json`).
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        let list = |v: &mut String, items: &mut dyn Iterator<Item = &String>| {
            let parts: Vec<String> = items.map(|i| json_str(i)).collect();
            v.push('[');
            v.push_str(&parts.join(", "));
            v.push(']');
        };
        s.push_str("{\n");
        let _ = writeln!(s, "  \"generator\": \"testweb::edited\",");
        let _ = writeln!(s, "  \"edit\": {},", json_str(self.edit.name()));
        let _ = writeln!(s, "  \"edit_description\": {},", json_str(self.edit.describe()));
        let _ = writeln!(s, "  \"seed\": {},", self.seed);
        let _ = writeln!(s, "  \"holdout\": {},", self.holdout);
        let _ = writeln!(s, "  \"url_prefix\": {},", json_str(&self.url_prefix));
        let _ = writeln!(s, "  \"pages\": {},", self.pages());
        let _ = writeln!(s, "  \"copied_pages\": {},", self.copied_pages());
        s.push_str("  \"copying_hosts\": ");
        list(&mut s, &mut self.copying_hosts().iter());
        s.push_str(",\n  \"copying_dirs\": ");
        list(&mut s, &mut self.copying_dirs().iter());
        s.push_str(",\n  \"innocent_hosts\": ");
        list(&mut s, &mut self.innocent_hosts().iter());
        s.push_str(",\n  \"labeled_articles\": ");
        list(&mut s, &mut self.labeled_articles.iter());
        s.push_str(",\n  \"unlabeled_articles\": ");
        list(&mut s, &mut self.unlabeled_articles.iter());
        s.push_str(",\n  \"hosts\": [\n");
        for (i, h) in self.hosts.iter().enumerate() {
            let _ = write!(
                s,
                "    {{\"host\": {}, \"root\": {}, \"role\": {}, \"dirs\": [",
                json_str(&h.host),
                json_str(&h.root),
                json_str(h.role.name())
            );
            for (j, d) in h.dirs.iter().enumerate() {
                let _ = write!(
                    s,
                    "{}\n      {{\"prefix\": {}, \"copying\": {}, \"pages\": [",
                    if j > 0 { "," } else { "" },
                    json_str(&d.prefix),
                    d.copying
                );
                for (k, p) in d.pages.iter().enumerate() {
                    let copies = p.copies.as_deref().map(json_str).unwrap_or_else(|| "null".into());
                    let _ = write!(
                        s,
                        "{}{{\"url\": {}, \"copies\": {copies}, \"labeled\": {}}}",
                        if k > 0 { ", " } else { "" },
                        json_str(&p.url),
                        p.labeled
                    );
                }
                s.push_str("]}");
            }
            let _ = writeln!(s, "]}}{}", if i + 1 < self.hosts.len() { "," } else { "" });
        }
        s.push_str("  ]\n}\n");
        s
    }
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

// ---------------------------------------------------------------------------------------------
// Random numbers: SplitMix64, seeded per purpose so that one part's draws do not shift another's.

/// A small deterministic PRNG (SplitMix64, Steele, Lea & Flood 2014).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator for one purpose (`label`) of one seed.
    pub fn derive(seed: u64, label: &str) -> Rng {
        Rng(mix(seed ^ fnv1a(label.as_bytes())))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        if v.is_empty() {
            None
        } else {
            v.get(self.below(v.len()))
        }
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }

    /// `k` distinct indices of `0..n` (all of them when `k >= n`), in random order.
    pub fn sample(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..n).collect();
        let k = k.min(n);
        for i in 0..k {
            let j = i + self.below(n - i);
            idx.swap(i, j);
        }
        idx.truncate(k);
        idx
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn fnv1a(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

// ---------------------------------------------------------------------------------------------
// Articles.

/// One shared article: its title, file name and `<p>` paragraphs as plain text.
#[derive(Clone, Debug)]
pub struct Article {
    pub title: String,
    pub file: String,
    pub paragraphs: Vec<String>,
}

/// The articles of `dir` (`*.html`, sorted by file name) with at least two paragraphs.
pub fn load_articles(dir: &Path) -> Result<Vec<Article>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let html = fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?;
        let file = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let title = between(&html, "<title>", "</title>")
            .map(plain_text)
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| file.trim_end_matches(".html").replace('_', " "));
        let paragraphs: Vec<String> = html
            .split("<p>")
            .skip(1)
            .filter_map(|s| s.split("</p>").next())
            .map(plain_text)
            .filter(|p| p.split_whitespace().count() >= 3)
            .collect();
        if paragraphs.len() >= 2 {
            out.push(Article { title, file, paragraphs });
        }
    }
    if out.len() < 20 {
        bail!("{}: {} usable articles, at least 20 needed", dir.display(), out.len());
    }
    Ok(out)
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let a = s.find(open)? + open.len();
    let b = s[a..].find(close)? + a;
    Some(&s[a..b])
}

/// Tags removed, the common entities decoded, whitespace collapsed.
pub fn plain_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = decode_entities(&text);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                n if n.starts_with("#x") || n.starts_with("#X") => {
                    u32::from_str_radix(&n[2..], 16).ok().and_then(char::from_u32)
                }
                n if n.starts_with('#') => n[1..].parse::<u32>().ok().and_then(char::from_u32),
                _ => None,
            };
            c.map(|c| (c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Text escaped for HTML.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

/// The sentences of a paragraph: split after `.`, `!` or `?` (closing quotes and brackets
/// allowed) when the next word starts with a capital letter, a digit or an opening quote, and
/// the word before is not an initial or a common abbreviation.
pub fn sentences(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        cur.push(w);
        if ends_sentence(w) && words.get(i + 1).is_some_and(|n| starts_sentence(n)) {
            out.push(cur.join(" "));
            cur.clear();
        }
    }
    if !cur.is_empty() {
        out.push(cur.join(" "));
    }
    out
}

const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "c", "ca", "no", "vol", "gen",
    "col", "lt", "mt", "ft", "inc", "ltd", "co", "approx", "fig", "op", "pp", "rev", "sgt", "capt", "prof",
];

fn ends_sentence(w: &str) -> bool {
    let t = w.trim_end_matches(['"', '\'', ')', ']', '\u{201d}', '\u{2019}']);
    if !t.ends_with(['.', '!', '?']) {
        return false;
    }
    if t.ends_with('.') {
        let core = t.trim_end_matches('.').trim_start_matches(['(', '"', '\'', '\u{201c}']);
        if core.chars().count() <= 1 || ABBREVIATIONS.contains(&core.to_lowercase().as_str()) {
            return false;
        }
        // U.S., A.D., e.g.: dotted abbreviations.
        if core.contains('.') && core.len() <= 5 {
            return false;
        }
    }
    true
}

fn starts_sentence(w: &str) -> bool {
    w.trim_start_matches(['"', '\'', '(', '\u{201c}', '\u{2018}'])
        .chars()
        .next()
        .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
}

/// `(leading punctuation, core, trailing punctuation)` of a whitespace token.
fn split_token(tok: &str) -> (&str, &str, &str) {
    let start = tok.find(|c: char| c.is_alphanumeric()).unwrap_or(tok.len());
    let end = tok
        .rfind(|c: char| c.is_alphanumeric())
        .map(|i| i + tok[i..].chars().next().map_or(1, char::len_utf8))
        .unwrap_or(start);
    let end = end.max(start);
    (&tok[..start], &tok[start..end], &tok[end..])
}

/// A word that may be replaced: letters only, three or more.
fn replaceable(core: &str) -> bool {
    core.len() >= 3 && core.chars().all(|c| c.is_ascii_alphabetic())
}

/// `word` with the capitalization of `like`.
fn same_case(word: &str, like: &str) -> String {
    let mut chars = like.chars();
    let first_upper = chars.next().is_some_and(|c| c.is_uppercase());
    let all_upper = like.len() > 1 && like.chars().all(|c| !c.is_lowercase());
    if all_upper {
        word.to_uppercase()
    } else if first_upper {
        let mut w = word.chars();
        match w.next() {
            Some(f) => f.to_uppercase().collect::<String>() + w.as_str(),
            None => String::new(),
        }
    } else {
        word.to_string()
    }
}

const SYNONYMS: &[(&str, &str)] = &[
    ("also", "additionally"),
    ("large", "big"),
    ("big", "large"),
    ("small", "little"),
    ("little", "small"),
    ("many", "numerous"),
    ("several", "various"),
    ("various", "several"),
    ("used", "employed"),
    ("use", "employ"),
    ("uses", "employs"),
    ("known", "recognized"),
    ("however", "nevertheless"),
    ("important", "significant"),
    ("significant", "important"),
    ("began", "started"),
    ("started", "began"),
    ("begin", "start"),
    ("first", "initial"),
    ("later", "subsequently"),
    ("often", "frequently"),
    ("frequently", "often"),
    ("usually", "typically"),
    ("typically", "usually"),
    ("called", "named"),
    ("named", "called"),
    ("found", "discovered"),
    ("discovered", "found"),
    ("made", "created"),
    ("make", "create"),
    ("people", "persons"),
    ("city", "town"),
    ("country", "nation"),
    ("different", "distinct"),
    ("similar", "comparable"),
    ("main", "principal"),
    ("major", "principal"),
    ("became", "grew"),
    ("area", "region"),
    ("region", "area"),
    ("part", "portion"),
    ("show", "display"),
    ("shows", "displays"),
    ("showed", "demonstrated"),
    ("help", "assist"),
    ("helped", "assisted"),
    ("ended", "finished"),
    ("built", "constructed"),
    ("build", "construct"),
    ("bought", "purchased"),
    ("get", "obtain"),
    ("got", "obtained"),
    ("give", "provide"),
    ("gave", "provided"),
    ("given", "provided"),
    ("quickly", "rapidly"),
    ("rapidly", "quickly"),
    ("almost", "nearly"),
    ("nearly", "almost"),
    ("around", "roughly"),
    ("because", "since"),
    ("although", "though"),
    ("though", "although"),
    ("whereas", "while"),
    ("include", "comprise"),
    ("includes", "comprises"),
    ("included", "comprised"),
    ("example", "instance"),
    ("common", "widespread"),
    ("famous", "renowned"),
    ("believed", "thought"),
    ("considered", "regarded"),
    ("regarded", "considered"),
    ("described", "depicted"),
    ("needed", "required"),
    ("required", "needed"),
    ("allowed", "permitted"),
    ("tried", "attempted"),
    ("modern", "contemporary"),
    ("ancient", "old"),
    ("war", "conflict"),
    ("king", "monarch"),
    ("increased", "rose"),
    ("reduced", "lowered"),
    ("changed", "altered"),
    ("received", "got"),
    ("died", "perished"),
    ("wrote", "penned"),
    ("large", "huge"),
    ("world", "globe"),
    ("time", "period"),
    ("years", "decades"),
    ("early", "initial"),
    ("high", "elevated"),
];

const FILLERS: &[&str] = &[
    "really",
    "very",
    "actually",
    "certainly",
    "also",
    "indeed",
    "quite",
    "generally",
    "notably",
    "clearly",
    "simply",
    "largely",
    "typically",
    "often",
    "truly",
    "basically",
];

/// (American, British).
const SPELLINGS: &[(&str, &str)] = &[
    ("color", "colour"),
    ("colors", "colours"),
    ("colored", "coloured"),
    ("honor", "honour"),
    ("honors", "honours"),
    ("honored", "honoured"),
    ("labor", "labour"),
    ("favor", "favour"),
    ("favorite", "favourite"),
    ("behavior", "behaviour"),
    ("behaviors", "behaviours"),
    ("neighbor", "neighbour"),
    ("neighbors", "neighbours"),
    ("neighboring", "neighbouring"),
    ("harbor", "harbour"),
    ("humor", "humour"),
    ("rumor", "rumour"),
    ("vigor", "vigour"),
    ("center", "centre"),
    ("centers", "centres"),
    ("theater", "theatre"),
    ("meter", "metre"),
    ("meters", "metres"),
    ("kilometers", "kilometres"),
    ("liter", "litre"),
    ("fiber", "fibre"),
    ("defense", "defence"),
    ("offense", "offence"),
    ("license", "licence"),
    ("catalog", "catalogue"),
    ("dialog", "dialogue"),
    ("analog", "analogue"),
    ("gray", "grey"),
    ("traveled", "travelled"),
    ("traveling", "travelling"),
    ("traveler", "traveller"),
    ("modeling", "modelling"),
    ("labeled", "labelled"),
    ("canceled", "cancelled"),
    ("jewelry", "jewellery"),
    ("aluminum", "aluminium"),
    ("plow", "plough"),
    ("skeptical", "sceptical"),
    ("mold", "mould"),
    ("maneuver", "manoeuvre"),
    ("encyclopedia", "encyclopaedia"),
    ("pediatric", "paediatric"),
    ("fetus", "foetus"),
    ("anemia", "anaemia"),
    ("archeology", "archaeology"),
    ("enrollment", "enrolment"),
    ("fulfill", "fulfil"),
    ("judgment", "judgement"),
    ("aging", "ageing"),
    ("program", "programme"),
    ("programs", "programmes"),
];

/// The other spelling of `core` (lower-case letters compared), if it has one.
fn respell(core: &str) -> Option<String> {
    let lower = core.to_ascii_lowercase();
    for (am, br) in SPELLINGS {
        if lower == *am {
            return Some(same_case(br, core));
        }
        if lower == *br {
            return Some(same_case(am, core));
        }
    }
    // -ize/-yze families, American to British.
    for (am, br) in [
        ("izations", "isations"),
        ("ization", "isation"),
        ("izing", "ising"),
        ("ized", "ised"),
        ("izes", "ises"),
        ("ize", "ise"),
        ("yzing", "ysing"),
        ("yzed", "ysed"),
        ("yzes", "yses"),
        ("yze", "yse"),
    ] {
        if lower.len() > am.len() + 2 && lower.ends_with(am) && lower.bytes().all(|b| b.is_ascii_lowercase())
        {
            let stem = &lower[..lower.len() - am.len()];
            // size, prize, seize, capsize: not the -ize suffix.
            if stem.ends_with('s') || stem.ends_with("pr") || stem.ends_with("se") {
                return None;
            }
            return Some(same_case(&format!("{stem}{br}"), core));
        }
    }
    None
}

/// Latin letter → Cyrillic look-alike.
fn homoglyph(c: char) -> Option<char> {
    match c {
        'a' => Some('\u{0430}'),
        'e' => Some('\u{0435}'),
        'o' => Some('\u{043e}'),
        'p' => Some('\u{0440}'),
        'c' => Some('\u{0441}'),
        _ => None,
    }
}

/// What the generator draws words from: the vocabulary of the unlabeled articles.
struct Words {
    vocabulary: Vec<String>,
    synonyms: HashMap<&'static str, &'static str>,
}

impl Words {
    fn new(unlabeled: &[&Article]) -> Words {
        let mut v = BTreeSet::new();
        for a in unlabeled {
            for p in &a.paragraphs {
                for t in p.split_whitespace() {
                    let (_, core, _) = split_token(t);
                    if (4..=10).contains(&core.len()) && core.chars().all(|c| c.is_ascii_lowercase()) {
                        v.insert(core.to_string());
                    }
                }
            }
        }
        let mut synonyms = HashMap::new();
        for (a, b) in SYNONYMS {
            synonyms.entry(*a).or_insert(*b);
        }
        Words { vocabulary: v.into_iter().collect(), synonyms }
    }

    /// Another word for `core`: its synonym when `prefer_synonym` and the table has one, else a
    /// word of the vocabulary that differs from it.
    fn replacement(&self, core: &str, rng: &mut Rng) -> String {
        if let Some(s) = self.synonyms.get(core.to_ascii_lowercase().as_str()) {
            return same_case(s, core);
        }
        for _ in 0..8 {
            if let Some(w) = rng.pick(&self.vocabulary) {
                if !w.eq_ignore_ascii_case(core) {
                    return same_case(w, core);
                }
            }
        }
        same_case("thing", core)
    }
}

/// Edits a paragraph for word-level rows; returns its sentences (for `Split`, one `<p>` each).
fn edit_paragraph(text: &str, edit: Edit, words: &Words, rng: &mut Rng) -> Vec<String> {
    let mut sents = sentences(text);
    match edit {
        Edit::None | Edit::Split | Edit::Join | Edit::BrBr => return sents,
        Edit::Light if sents.len() >= 2 => {
            let i = rng.below(sents.len());
            let mut j = rng.below(sents.len() - 1);
            if j >= i {
                j += 1;
            }
            sents.swap(i, j);
        }
        Edit::Heavy if sents.len() >= 2 => {
            let before = sents.clone();
            rng.shuffle(&mut sents);
            if sents == before {
                sents.rotate_left(1);
            }
        }
        _ => {}
    }
    // Word edits over the paragraph's tokens, sentence boundaries kept.
    let mut toks: Vec<(usize, String)> = Vec::new();
    for (si, s) in sents.iter().enumerate() {
        for t in s.split_whitespace() {
            toks.push((si, t.to_string()));
        }
    }
    let n = toks.len();
    let candidates: Vec<usize> = (0..n).filter(|&i| replaceable(split_token(&toks[i].1).1)).collect();
    let replace = |toks: &mut Vec<(usize, String)>, at: &[usize], rng: &mut Rng| {
        for &i in at {
            let (lead, core, trail) = split_token(&toks[i].1);
            let w = format!("{lead}{}{trail}", words.replacement(core, rng));
            toks[i].1 = w;
        }
    };
    match edit {
        Edit::Synonym => {
            // One word: one with a synonym in the table when the paragraph has one.
            let with_syn: Vec<usize> = candidates
                .iter()
                .copied()
                .filter(|&i| {
                    words.synonyms.contains_key(split_token(&toks[i].1).1.to_ascii_lowercase().as_str())
                })
                .collect();
            let pool = if with_syn.is_empty() { &candidates } else { &with_syn };
            if let Some(&i) = rng.pick(pool) {
                replace(&mut toks, &[i], rng);
            }
        }
        Edit::Light | Edit::Heavy => {
            let per = if edit == Edit::Light { 20 } else { 8 };
            let k = (n / per).max(1);
            let chosen: Vec<usize> = rng
                .sample(candidates.len(), k)
                .into_iter()
                .filter_map(|j| candidates.get(j).copied())
                .collect();
            replace(&mut toks, &chosen, rng);
            if edit == Edit::Heavy {
                let drop: BTreeSet<usize> = rng.sample(n, n / 10).into_iter().collect();
                let mut i = 0;
                toks.retain(|_| {
                    let keep = !drop.contains(&i);
                    i += 1;
                    keep
                });
            }
        }
        Edit::Insert => {
            let k = (n / 12).max(1);
            let mut at: Vec<usize> = rng.sample(n.max(2) - 1, k).into_iter().map(|i| i + 1).collect();
            at.sort_unstable_by(|a, b| b.cmp(a));
            for i in at {
                let i = i.min(toks.len());
                let si = toks.get(i.saturating_sub(1)).map_or(0, |t| t.0);
                let w = rng.pick(FILLERS).copied().unwrap_or("really");
                toks.insert(i, (si, w.to_string()));
            }
        }
        Edit::TailCut if n >= 3 => {
            toks.truncate(n - n / 3);
            if let Some(last) = toks.last_mut() {
                last.1.push_str(" \u{2026}");
            }
        }
        Edit::Homoglyph => {
            let with: Vec<usize> =
                (0..n).filter(|&i| toks[i].1.chars().any(|c| homoglyph(c).is_some())).collect();
            let k = (n / 10).max(1);
            for j in rng.sample(with.len(), k) {
                let Some(&i) = with.get(j) else { continue };
                let positions: Vec<usize> = toks[i]
                    .1
                    .char_indices()
                    .filter(|(_, c)| homoglyph(*c).is_some())
                    .map(|(p, _)| p)
                    .collect();
                if let Some(&p) = rng.pick(&positions) {
                    let t = &toks[i].1;
                    let c = t[p..].chars().next();
                    if let Some(h) = c.and_then(homoglyph) {
                        let w = format!("{}{h}{}", &t[..p], &t[p + 1..]);
                        toks[i].1 = w;
                    }
                }
            }
        }
        Edit::Spelling => {
            for t in toks.iter_mut() {
                let (lead, core, trail) = split_token(&t.1);
                if let Some(r) = respell(core) {
                    t.1 = format!("{lead}{r}{trail}");
                }
            }
        }
        _ => {}
    }
    // Back to sentences.
    let mut out: Vec<String> = Vec::new();
    let mut cur_s = usize::MAX;
    for (si, t) in toks {
        if si != cur_s || out.is_empty() {
            out.push(t);
            cur_s = si;
        } else if let Some(last) = out.last_mut() {
            last.push(' ');
            last.push_str(&t);
        }
    }
    out
}

/// The copied body of an article under `edit`, as HTML blocks.
fn copied_blocks(article: &Article, edit: Edit, words: &Words, rng: &mut Rng) -> Vec<String> {
    let paras: Vec<Vec<String>> =
        article.paragraphs.iter().map(|p| edit_paragraph(p, edit, words, rng)).collect();
    match edit {
        Edit::Split => paras.iter().flatten().map(|s| format!("<p>{}</p>", escape(s))).collect(),
        Edit::Join => paras
            .chunks(2)
            .map(|pair| {
                let text: Vec<String> = pair.iter().map(|p| p.join(" ")).collect();
                format!("<p>{}</p>", escape(&text.join(" ")))
            })
            .collect(),
        Edit::BrBr => {
            let text: Vec<String> = paras.iter().map(|p| escape(&p.join(" "))).collect();
            vec![format!("<div class=\"entry\">{}</div>", text.join("<br><br>\n"))]
        }
        _ => paras.iter().map(|p| format!("<p>{}</p>", escape(&p.join(" ")))).collect(),
    }
}

// ---------------------------------------------------------------------------------------------
// Original prose.

/// An order-2 word Markov chain over sentences.
struct Markov {
    words: Vec<String>,
    next: HashMap<(u32, u32), Vec<u32>>,
}

const BOS: u32 = u32::MAX;
const EOS: u32 = u32::MAX - 1;

impl Markov {
    fn train(sentences: &[String]) -> Markov {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut words = Vec::new();
        let mut next: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
        for s in sentences {
            let mut state = (BOS, BOS);
            for w in s.split_whitespace() {
                let id = *ids.entry(w.to_string()).or_insert_with(|| {
                    words.push(w.to_string());
                    (words.len() - 1) as u32
                });
                next.entry(state).or_default().push(id);
                state = (state.1, id);
            }
            next.entry(state).or_default().push(EOS);
        }
        Markov { words, next }
    }

    fn sentence(&self, rng: &mut Rng) -> String {
        let mut best = String::new();
        for _ in 0..6 {
            let mut state = (BOS, BOS);
            let mut out: Vec<&str> = Vec::new();
            while out.len() < 45 {
                let Some(choices) = self.next.get(&state) else { break };
                let Some(&id) = rng.pick(choices) else { break };
                if id == EOS {
                    break;
                }
                let Some(w) = self.words.get(id as usize) else { break };
                out.push(w);
                state = (state.1, id);
            }
            let s = out.join(" ");
            if out.len() >= 6 {
                return s;
            }
            best = s;
        }
        best
    }

    fn paragraph(&self, rng: &mut Rng) -> String {
        let k = rng.range(3, 6);
        (0..k).map(|_| self.sentence(rng)).collect::<Vec<_>>().join(" ")
    }
}

/// A labeled topic's names (runs of capitalized words not opening a sentence), and its
/// numbers and years, most frequent first.
struct Topic {
    title: String,
    names: Vec<String>,
    numbers: Vec<String>,
}

impl Topic {
    fn of(a: &Article) -> Topic {
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        let mut numbers: BTreeMap<String, usize> = BTreeMap::new();
        for p in &a.paragraphs {
            for s in sentences(p) {
                let toks: Vec<&str> = s.split_whitespace().collect();
                let mut run: Vec<&str> = Vec::new();
                for (i, t) in toks.iter().enumerate() {
                    let (_, core, trail) = split_token(t);
                    let cap =
                        i > 0 && core.chars().next().is_some_and(|c| c.is_uppercase()) && core.len() > 1;
                    if cap {
                        run.push(core);
                    }
                    if (!cap || !trail.is_empty()) && !run.is_empty() {
                        *names.entry(run.join(" ")).or_default() += 1;
                        run.clear();
                    }
                    if core.chars().any(|c| c.is_ascii_digit())
                        && core.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '.')
                    {
                        *numbers.entry(core.to_string()).or_default() += 1;
                    }
                }
                if !run.is_empty() {
                    *names.entry(run.join(" ")).or_default() += 1;
                }
            }
        }
        let top = |m: BTreeMap<String, usize>, k: usize| {
            let mut v: Vec<(String, usize)> = m.into_iter().collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            v.into_iter().take(k).map(|x| x.0).collect::<Vec<_>>()
        };
        let mut names = top(names, 25);
        if names.is_empty() {
            names.push(a.title.clone());
        }
        let mut numbers = top(numbers, 25);
        if numbers.is_empty() {
            numbers.push("1990".into());
        }
        Topic { title: a.title.clone(), names, numbers }
    }

    /// `sentence` with its names and numbers replaced by the topic's.
    fn dress(&self, sentence: &str, rng: &mut Rng) -> String {
        let toks: Vec<&str> = sentence.split_whitespace().collect();
        let mut out: Vec<String> = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let (lead, core, trail) = split_token(toks[i]);
            let cap = i > 0 && core.chars().next().is_some_and(|c| c.is_uppercase()) && core.len() > 1;
            if cap {
                // Swallow the rest of the capitalized run.
                let mut j = i;
                let mut end_trail = trail;
                while end_trail.is_empty() && j + 1 < toks.len() {
                    let (_, c2, t2) = split_token(toks[j + 1]);
                    if c2.chars().next().is_some_and(|c| c.is_uppercase()) && c2.len() > 1 {
                        j += 1;
                        end_trail = t2;
                    } else {
                        break;
                    }
                }
                let name = if rng.below(4) == 0 {
                    self.title.clone()
                } else {
                    rng.pick(&self.names).cloned().unwrap_or_default()
                };
                out.push(format!("{lead}{name}{end_trail}"));
                i = j + 1;
                continue;
            }
            if !core.is_empty()
                && core.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '.')
                && core.chars().any(|c| c.is_ascii_digit())
            {
                let num = rng.pick(&self.numbers).cloned().unwrap_or_default();
                out.push(format!("{lead}{num}{trail}"));
            } else {
                out.push(toks[i].to_string());
            }
            i += 1;
        }
        out.join(" ")
    }
}

/// Sentences of the unlabeled articles (8 to 40 words) and a Markov chain over them.
struct Prose {
    pool: Vec<String>,
    markov: Markov,
}

impl Prose {
    fn new(unlabeled: &[&Article]) -> Prose {
        let mut pool = Vec::new();
        for a in unlabeled {
            for p in &a.paragraphs {
                for s in sentences(p) {
                    let n = s.split_whitespace().count();
                    if (8..=40).contains(&n) {
                        pool.push(s);
                    }
                }
            }
        }
        let markov = Markov::train(&pool);
        Prose { pool, markov }
    }

    /// A paragraph on `topic` written independently: 3 to 6 pool sentences dressed with the
    /// topic's names and numbers.
    fn topical_paragraph(&self, topic: &Topic, rng: &mut Rng) -> String {
        let k = rng.range(3, 6);
        (0..k)
            .map(|_| {
                let s = rng.pick(&self.pool).cloned().unwrap_or_default();
                topic.dress(&s, rng)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A sentence of `a` fit to quote: 12 to 40 words, from a paragraph of three sentences or more
/// (so the quote is never a whole labeled paragraph).
fn quotable(a: &Article, rng: &mut Rng) -> Option<String> {
    let mut c = Vec::new();
    for p in &a.paragraphs {
        let s = sentences(p);
        if s.len() >= 3 {
            c.extend(s.into_iter().filter(|x| (12..=40).contains(&x.split_whitespace().count())));
        }
    }
    rng.pick(&c).cloned()
}

// ---------------------------------------------------------------------------------------------
// Pages.

const ADS: &[&str] = &[
    "Sponsored: Lose weight fast with this one weird trick doctors do not want you to know about.",
    "Advertisement: Compare the best car insurance quotes in your area and save up to 40 percent today.",
    "Sponsored: Top 10 gadgets everyone is buying this year, number 7 will surprise you.",
    "Advertisement: Earn money from home with our proven system, no experience needed, start now.",
    "Sponsored: Find cheap flights and hotel deals for your next holiday in just a few clicks.",
    "Advertisement: Learn a new language in three weeks with the app millions of people love.",
    "Sponsored: This investment strategy made ordinary people rich, see how it works in 2 minutes.",
    "Advertisement: Refinance your mortgage now while rates are low, check if you qualify today.",
];

const AUTHORS: &[&str] = &["admin", "editor", "staff writer", "J. Smith", "content team", "guest author"];

const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const HOST_A: &[&str] = &[
    "daily", "smart", "green", "quick", "bright", "urban", "global", "simple", "open", "happy", "north",
    "silver", "blue", "prime", "true", "deep", "wise", "clear", "bold", "next",
];
const HOST_B: &[&str] = &[
    "facts", "notes", "hub", "world", "digest", "corner", "post", "times", "point", "wire", "base", "pages",
    "review", "journal", "lens", "trail", "desk", "circle",
];
const TLDS: &[&str] = &["test", "example", "invalid"];
const DIRS: &[&str] = &[
    "articles",
    "news",
    "wiki",
    "topics",
    "guide",
    "learn",
    "blog",
    "library",
    "reference",
    "stories",
    "archive",
    "explore",
    "science",
    "history",
    "culture",
    "notes",
    "features",
    "posts",
];

const NETWORK_NAV: &str =
    "Home Products Solutions Industries Customers Partners Resources Blog Events Webinars \
Careers Investors Press Support Documentation Community Contact Sales Login Sign up";

const NETWORK_LEGAL: &[&str] = &[
    "Privacy notice. We and our partners use cookies and similar technologies to operate this website, to \
     measure how it is used and to show you personalised content. You can change your choices at any time \
     from the settings page. Some cookies are strictly necessary and cannot be switched off.",
    "Terms of use. All content on this website is provided as is, without warranty of any kind, express or \
     implied. The publisher accepts no liability for any loss or damage arising from the use of the \
     information on these pages. Trademarks mentioned belong to their respective owners.",
    "Copyright and imprint. This website is operated by Northwind Media Holdings, registered in the company \
     register under number HRB 48213. Reproduction of any part of this website without prior written \
     permission is prohibited. For legal enquiries write to our registered office.",
];

const THEME_SIDEBAR: &str =
    "About this blog: this is a place where I write about the things that interest me, \
from history and science to the small discoveries of everyday life. Thanks for stopping by, and feel free to \
leave a comment under any post.";
const THEME_REPLY: &str =
    "Leave a Reply. Your email address will not be published. Required fields are marked. \
Save my name, email, and website in this browser for the next time I comment.";
const THEME_FOOTER: &str =
    "Proudly powered by a free blogging platform. Theme: Minimal Writer by Studio Quill.";

fn slug(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            o.push(c.to_ascii_lowercase());
        } else if !o.ends_with('-') && !o.is_empty() {
            o.push('-');
        }
    }
    let o = o.trim_end_matches('-').chars().take(60).collect::<String>();
    if o.is_empty() {
        "page".into()
    } else {
        o
    }
}

/// Page chrome of one host.
struct Chrome {
    site_name: String,
    role: Role,
    dirs: Vec<String>,
}

impl Chrome {
    fn page(&self, title: &str, body: &[String], rng: &mut Rng, extra_sidebar: Option<&str>) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} | {}</title></head><body>",
            escape(title),
            escape(&self.site_name)
        );
        let nav: Vec<String> =
            self.dirs.iter().map(|d| format!("<a href=\"/{d}/\">{}</a>", same_case(d, "X"))).collect();
        match self.role {
            Role::Boilerplate => {
                let links: Vec<String> =
                    NETWORK_NAV.split(' ').map(|w| format!("<a href=\"/{}\">{w}</a>", slug(w))).collect();
                let _ = writeln!(s, "<nav class=\"menu\">{}</nav>", links.join(" "));
            }
            _ => {
                let _ = writeln!(
                    s,
                    "<div class=\"top\"><a href=\"/\">{}</a> {}</div>",
                    escape(&self.site_name),
                    nav.join(" ")
                );
            }
        }
        let farm = matches!(self.role, Role::Copier | Role::UnlabeledCopier);
        if farm {
            let _ = writeln!(
                s,
                "<div class=\"ad\"><p>{}</p></div>",
                escape(rng.pick(ADS).copied().unwrap_or(""))
            );
        }
        let _ = writeln!(s, "<div class=\"main\"><h1>{}</h1>", escape(title));
        if farm || self.role == Role::Template {
            let _ = writeln!(
                s,
                "<p class=\"meta\">Posted on {} {}, {} by {}</p>",
                rng.pick(MONTHS).copied().unwrap_or("May"),
                rng.range(1, 28),
                rng.range(2012, 2024),
                rng.pick(AUTHORS).copied().unwrap_or("admin")
            );
        }
        for (i, b) in body.iter().enumerate() {
            s.push_str(b);
            s.push('\n');
            if farm && i % 6 == 5 && i + 1 < body.len() {
                let _ = writeln!(
                    s,
                    "<div class=\"ad\"><p>{}</p></div>",
                    escape(rng.pick(ADS).copied().unwrap_or(""))
                );
            }
        }
        s.push_str("</div>\n");
        match self.role {
            Role::Copier | Role::UnlabeledCopier => {
                let _ = writeln!(
                    s,
                    "<div class=\"footer\"><p>Copyright {} {}. All rights reserved. Content is provided for \
                     informational purposes only.</p></div>",
                    rng.range(2015, 2024),
                    escape(&self.site_name)
                );
            }
            Role::Boilerplate => {
                s.push_str("<footer>");
                for l in NETWORK_LEGAL {
                    let _ = write!(s, "<p>{l}</p>");
                }
                s.push_str("</footer>\n");
            }
            Role::Template => {
                let _ = writeln!(s, "<div class=\"reply\"><p>{THEME_REPLY}</p></div>");
                let _ = write!(s, "<aside><p>{THEME_SIDEBAR}</p>");
                if let Some(f) = extra_sidebar {
                    let _ = write!(s, "<p>Featured fact: {}</p>", escape(f));
                }
                let _ = writeln!(s, "</aside><div class=\"footer\"><p>{THEME_FOOTER}</p></div>");
            }
            Role::Topical | Role::Quoting => {
                let _ = writeln!(
                    s,
                    "<div class=\"footer\"><p>Written by the editors of {}.</p></div>",
                    escape(&self.site_name)
                );
            }
        }
        s.push_str("</body></html>\n");
        s
    }

    fn index(&self, title: &str, links: &[(String, String)], rng: &mut Rng) -> String {
        let items: Vec<String> =
            links.iter().map(|(href, t)| format!("<li><a href=\"{href}\">{}</a></li>", escape(t))).collect();
        let body = vec![
            format!("<p>Welcome to {}. Browse our latest pages below.</p>", escape(&self.site_name)),
            format!("<ul>{}</ul>", items.join("")),
        ];
        self.page(title, &body, rng, None)
    }
}

/// Generate the web of `spec` from the articles in `articles_dir` into `out` (created; must not
/// exist or be empty).
pub fn generate(articles_dir: &Path, out: &Path, spec: &Spec) -> Result<Generated> {
    if out.exists() && fs::read_dir(out).map(|mut d| d.next().is_some()).unwrap_or(true) {
        bail!("{}: exists and is not an empty folder; give a new one", out.display());
    }
    if spec.scale.dirs_per_host < 2 || spec.scale.pages_per_dir < 1 {
        bail!("a host needs at least 2 directories and a directory at least 1 page");
    }
    let articles = load_articles(articles_dir)?;

    // The split: fixed per variant (tune or holdout), independent of the seed.
    let split_salt = if spec.holdout { "split/holdout" } else { "split/tune" };
    let (mut labeled, mut unlabeled): (Vec<&Article>, Vec<&Article>) = articles
        .iter()
        .partition(|a| !mix(fnv1a(a.file.as_bytes()) ^ fnv1a(split_salt.as_bytes())).is_multiple_of(3));
    if labeled.len() < 10 || unlabeled.len() < 10 {
        bail!("article split left {} labeled and {} unlabeled", labeled.len(), unlabeled.len());
    }
    labeled.sort_by(|a, b| a.file.cmp(&b.file));
    unlabeled.sort_by(|a, b| a.file.cmp(&b.file));

    let seed = if spec.holdout { spec.seed ^ 0x4f1d_0e7d_a7a5_e7c1 } else { spec.seed };
    let words = Words::new(&unlabeled);
    let prose = Prose::new(&unlabeled);

    let labelset_dir = out.join("labelset");
    let web_dir = out.join("web");
    fs::create_dir_all(&labelset_dir).with_context(|| format!("creating {}", labelset_dir.display()))?;
    fs::create_dir_all(&web_dir).with_context(|| format!("creating {}", web_dir.display()))?;
    for a in &labeled {
        let from = articles_dir.join(&a.file);
        fs::copy(&from, labelset_dir.join(&a.file)).with_context(|| format!("copying {}", from.display()))?;
    }

    // Roles, shuffled, so that a host's place in the listing tells nothing.
    let sc = &spec.scale;
    let mut roles: Vec<Role> = Vec::new();
    for (r, k) in [
        (Role::Copier, sc.copier_hosts),
        (Role::UnlabeledCopier, sc.unlabeled_copier_hosts),
        (Role::Topical, sc.topical_hosts),
        (Role::Quoting, sc.quoting_hosts),
        (Role::Boilerplate, sc.boilerplate_hosts),
        (Role::Template, sc.template_hosts),
    ] {
        roles.extend(std::iter::repeat_n(r, k));
    }
    let mut rng = Rng::derive(seed, "hosts");
    rng.shuffle(&mut roles);
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut hosts = Vec::new();
    for role in &roles {
        let mut name;
        loop {
            name = format!(
                "{}{}{}.{}",
                rng.pick(HOST_A).copied().unwrap_or("a"),
                rng.pick(HOST_B).copied().unwrap_or("b"),
                if rng.below(3) == 0 { format!("{}", rng.range(1, 99)) } else { String::new() },
                rng.pick(TLDS).copied().unwrap_or("test")
            );
            if names.insert(name.clone()) {
                break;
            }
        }
        let mut dirs: Vec<String> =
            rng.sample(DIRS.len(), sc.dirs_per_host).into_iter().map(|j| DIRS[j].to_string()).collect();
        dirs.sort();
        hosts.push((name, *role, dirs));
    }

    // The sentence every template host features (a one-sentence quote of a labeled article).
    let mut frng = Rng::derive(seed, "featured");
    let featured = labeled
        .get(frng.below(labeled.len()))
        .and_then(|a| quotable(a, &mut frng))
        .unwrap_or_else(|| "Knowledge is the one thing nobody can take from you.".into());

    let mut truth_hosts = Vec::new();
    for (hi, (host, role, dirs)) in hosts.iter().enumerate() {
        let mut rng = Rng::derive(seed, &format!("host/{hi}"));
        let site_name = {
            let base = host.split('.').next().unwrap_or(host);
            same_case(base, "X")
        };
        let chrome = Chrome { site_name, role: *role, dirs: dirs.clone() };
        let host_dir = web_dir.join(host);
        // Copying directories of a farm: 1 to dirs-1 of them.
        let copying: BTreeSet<usize> = if matches!(role, Role::Copier | Role::UnlabeledCopier) {
            let k = rng.range(1, dirs.len() - 1);
            rng.sample(dirs.len(), k).into_iter().collect()
        } else {
            BTreeSet::new()
        };
        let source: &[&Article] = if *role == Role::UnlabeledCopier { &unlabeled } else { &labeled };
        // Articles this host copies or writes about, distinct within the host.
        let need = dirs.len() * sc.pages_per_dir;
        let mut picks = rng.sample(source.len(), need);
        let mut dir_truths = Vec::new();
        for (di, d) in dirs.iter().enumerate() {
            let is_copy = copying.contains(&di);
            let mut pages = Vec::new();
            let mut links = Vec::new();
            let mut used: BTreeSet<String> = BTreeSet::new();
            for pi in 0..sc.pages_per_dir {
                let a = picks.pop().and_then(|j| source.get(j)).copied();
                let (title, body, copies, sidebar): (String, Vec<String>, Option<&Article>, Option<&str>) =
                    match (*role, a) {
                        (Role::Copier | Role::UnlabeledCopier, Some(a)) if is_copy => {
                            (a.title.clone(), copied_blocks(a, spec.edit, &words, &mut rng), Some(a), None)
                        }
                        (Role::Topical, Some(a)) => {
                            let topic = Topic::of(a);
                            let k = rng.range(4, 8);
                            let mut body = vec![format!(
                                "<p>{}</p>",
                                escape(&format!(
                                    "Here is our own guide to {}, written by our editors.",
                                    a.title
                                ))
                            )];
                            body.extend((0..k).map(|_| {
                                format!("<p>{}</p>", escape(&prose.topical_paragraph(&topic, &mut rng)))
                            }));
                            (a.title.clone(), body, None, None)
                        }
                        (Role::Quoting, Some(a)) => {
                            let topic = Topic::of(a);
                            let k = rng.range(4, 7);
                            let mut body: Vec<String> = (0..k)
                                .map(|_| {
                                    format!("<p>{}</p>", escape(&prose.topical_paragraph(&topic, &mut rng)))
                                })
                                .collect();
                            if let Some(q) = quotable(a, &mut rng) {
                                let at = rng.range(1, body.len() - 1);
                                if rng.below(2) == 0 {
                                    body.insert(
                                    at,
                                    format!(
                                        "<p>{}</p>",
                                        escape(&format!(
                                            "As the Wikipedia article on {} puts it, \u{201c}{q}\u{201d} That is where my own thinking starts.",
                                            a.title
                                        ))
                                    ),
                                );
                                } else {
                                    body.insert(at, format!("<blockquote>{}</blockquote>", escape(&q)));
                                    body.insert(
                                        at + 1,
                                        format!(
                                            "<p>{}</p>",
                                            escape(&format!(
                                                "(Quoted from the Wikipedia article {}.)",
                                                a.title
                                            ))
                                        ),
                                    );
                                }
                            }
                            (format!("Thoughts on {}", a.title), body, None, None)
                        }
                        _ => {
                            let k = rng.range(4, 8);
                            let body: Vec<String> = (0..k)
                                .map(|_| format!("<p>{}</p>", escape(&prose.markov.paragraph(&mut rng))))
                                .collect();
                            let first = prose.markov.sentence(&mut rng);
                            let title: String =
                                first.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
                            let sidebar =
                                if *role == Role::Template { Some(featured.as_str()) } else { None };
                            (title, body, None, sidebar)
                        }
                    };
                let mut file = format!("{}.html", slug(&title));
                if !used.insert(file.clone()) {
                    file = format!("{}-{pi}.html", slug(&title));
                    used.insert(file.clone());
                }
                let html = chrome.page(&title, &body, &mut rng, sidebar);
                write_file(&host_dir.join(d).join(&file), &html)?;
                links.push((format!("/{d}/{file}"), title));
                pages.push(PageTruth {
                    url: format!("http://{host}/{d}/{file}"),
                    copies: copies.map(|a| a.title.clone()),
                    labeled: copies.is_some() && *role == Role::Copier,
                });
            }
            let idx = chrome.index(&same_case(d, "X"), &links, &mut rng);
            write_file(&host_dir.join(d).join("index.html"), &idx)?;
            dir_truths.push(DirTruth {
                prefix: format!("http://{host}/{d}/"),
                copying: is_copy && *role == Role::Copier,
                pages,
            });
        }
        let links: Vec<(String, String)> =
            dirs.iter().map(|d| (format!("/{d}/"), same_case(d, "X"))).collect();
        let home = chrome.index(&chrome.site_name, &links, &mut rng);
        write_file(&host_dir.join("index.html"), &home)?;
        truth_hosts.push(HostTruth {
            host: host.clone(),
            root: format!("http://{host}/"),
            role: *role,
            dirs: dir_truths,
        });
    }
    truth_hosts.sort_by(|a, b| a.host.cmp(&b.host));

    let truth = Truth {
        edit: spec.edit,
        seed: spec.seed,
        holdout: spec.holdout,
        url_prefix: "http://".into(),
        labeled_articles: labeled.iter().map(|a| a.title.clone()).collect(),
        unlabeled_articles: unlabeled.iter().map(|a| a.title.clone()).collect(),
        hosts: truth_hosts,
    };
    let truth_path = out.join("truth.json");
    write_file(&truth_path, &truth.to_json())?;
    Ok(Generated { labelset_dir, web_dir, truth_path, truth })
}

fn write_file(path: &Path, body: &str) -> Result<()> {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p).with_context(|| format!("creating {}", p.display()))?;
    }
    fs::write(path, body).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_at_ends_not_abbreviations() {
        let s = sentences(
            "The U.S. Army met Dr. Smith in 1990. It rained! Was it J. R. Tolkien? Yes. 2020 came.",
        );
        assert_eq!(
            s,
            vec![
                "The U.S. Army met Dr. Smith in 1990.",
                "It rained!",
                "Was it J. R. Tolkien?",
                "Yes.",
                "2020 came."
            ]
        );
    }

    #[test]
    fn tokens_keep_their_punctuation() {
        assert_eq!(split_token("(word),"), ("(", "word", "),"));
        assert_eq!(split_token("..."), ("...", "", ""));
        assert_eq!(split_token("caf\u{e9}."), ("", "caf\u{e9}", "."));
        assert_eq!(same_case("big", "Large"), "Big");
        assert_eq!(respell("Color").as_deref(), Some("Colour"));
        assert_eq!(respell("organization").as_deref(), Some("organisation"));
        assert_eq!(respell("size"), None);
    }

    #[test]
    fn entities_decode() {
        assert_eq!(plain_text("<a href=\"x\">A</a> &amp; B&#x27;s &lt;c&gt; &bogus"), "A & B's <c> &bogus");
    }

    fn words() -> Words {
        let a = Article {
            title: "T".into(),
            file: "t.html".into(),
            paragraphs: vec!["alpha bravo charlie delta echo foxtrot golf hotel india juliet".into()],
        };
        Words::new(&[&a])
    }

    const PARA: &str = "The aardvark is a medium-sized burrowing mammal native to Africa. It is the only living \
        species of its order, although other species are known. Unlike other insectivores, it has a long snout. \
        It roams over most of the southern two-thirds of the continent.";

    #[test]
    fn every_word_edit_changes_every_paragraph() {
        let w = words();
        for e in Edit::ALL {
            let mut rng = Rng::new(7);
            let out = edit_paragraph(PARA, e, &w, &mut rng).join(" ");
            let same = out == PARA;
            match e {
                Edit::None | Edit::Split | Edit::Join | Edit::BrBr | Edit::Spelling => {
                    assert!(same, "{e:?}: {out}")
                }
                _ => assert!(!same, "{e:?} left the paragraph as it was"),
            }
        }
        // Synonym: exactly one word differs.
        let mut rng = Rng::new(1);
        let out = edit_paragraph(PARA, Edit::Synonym, &w, &mut rng).join(" ");
        let diff = out.split(' ').zip(PARA.split_whitespace()).filter(|(a, b)| a != b).count();
        assert_eq!(diff, 1, "{out}");
        // Tail cut: a third fewer words.
        let out = edit_paragraph(PARA, Edit::TailCut, &w, &mut Rng::new(1)).join(" ");
        let n = PARA.split_whitespace().count();
        assert_eq!(out.split_whitespace().count(), n - n / 3 + 1);
        // Homoglyphs: same length in characters, some Cyrillic.
        let out = edit_paragraph(PARA, Edit::Homoglyph, &w, &mut Rng::new(1)).join(" ");
        assert_eq!(
            out.chars().count(),
            PARA.split_whitespace().collect::<Vec<_>>().join(" ").chars().count()
        );
        assert!(out.chars().any(|c| ('\u{0400}'..='\u{04ff}').contains(&c)));
    }

    #[test]
    fn rng_is_deterministic_and_spread() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::derive(5, "x");
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::derive(5, "x");
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        let mut r = Rng::new(3);
        let mut counts = [0usize; 4];
        for _ in 0..4000 {
            counts[r.below(4)] += 1;
        }
        assert!(counts.iter().all(|&c| (800..1200).contains(&c)), "{counts:?}");
        let s = r.sample(10, 4);
        assert_eq!(s.iter().collect::<BTreeSet<_>>().len(), 4);
    }
}

#[cfg(test)]
mod generate_tests {
    use super::*;

    fn articles() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/wikipedia/articles")
    }

    /// Every file under `dir` with its bytes, by relative path.
    fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                    out.insert(rel, fs::read(&p).unwrap());
                }
            }
        }
        out
    }

    #[test]
    fn same_seed_same_bytes_other_seed_or_holdout_other_web() {
        let tmp = std::env::temp_dir().join(format!("ditto-edited-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        let spec = Spec { edit: Edit::Heavy, seed: 3, holdout: false, scale: Scale::small() };
        let a = generate(&articles(), &tmp.join("a"), &spec).unwrap();
        let b = generate(&articles(), &tmp.join("b"), &spec).unwrap();
        assert_eq!(files(&tmp.join("a")), files(&tmp.join("b")));
        assert_eq!(a.truth, b.truth);
        // Refuses a folder that is not empty.
        assert!(generate(&articles(), &tmp.join("a"), &spec).is_err());

        let t = &a.truth;
        assert_eq!(t.copying_hosts().len(), spec.scale.copier_hosts);
        assert!(!t.copying_dirs().is_empty());
        // Every copier keeps at least one original directory; every copying page's article is labeled.
        for h in t.hosts.iter().filter(|h| h.role == Role::Copier) {
            assert!(h.dirs.iter().any(|d| !d.copying), "{}", h.host);
            for p in h.dirs.iter().flat_map(|d| &d.pages).filter(|p| p.copies.is_some()) {
                assert!(t.labeled_articles.contains(p.copies.as_ref().unwrap()));
            }
        }
        for h in t.hosts.iter().filter(|h| h.role == Role::UnlabeledCopier) {
            for p in h.dirs.iter().flat_map(|d| &d.pages).filter_map(|p| p.copies.as_ref()) {
                assert!(t.unlabeled_articles.contains(p));
            }
        }
        // The label-set sources are the labeled articles.
        assert_eq!(fs::read_dir(&a.labelset_dir).unwrap().count(), t.labeled_articles.len());
        assert_eq!(files(&a.web_dir).len(), t.pages());

        let c = generate(&articles(), &tmp.join("c"), &Spec { seed: 4, ..spec.clone() }).unwrap();
        assert_ne!(files(&c.web_dir), files(&a.web_dir));
        assert_eq!(c.truth.labeled_articles, t.labeled_articles, "the split does not depend on the seed");
        let h = generate(&articles(), &tmp.join("h"), &Spec { holdout: true, ..spec.clone() }).unwrap();
        assert_ne!(h.truth.labeled_articles, t.labeled_articles, "the holdout split differs");
        assert_ne!(files(&h.web_dir), files(&a.web_dir));
        fs::remove_dir_all(&tmp).unwrap();
    }
}
