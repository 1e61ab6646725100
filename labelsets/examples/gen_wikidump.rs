//! Generate a Wikipedia-sized MediaWiki XML dump, written as Wikimedia writes
//! `pages-articles-multistream`: bzip2 streams of 100 pages each (the first holds only the
//! `<mediawiki>`/`<siteinfo>` head, the last only `</mediawiki>`), plus the
//! `-index.txt.bz2` file (`offset:page id:title` per page).
//!
//! The wikitext is made from the paragraphs of the shared articles
//! (`../shared/data/wikipedia/articles`): each generated paragraph joins sentences drawn
//! from them (a seeded generator, so a rerun writes the same bytes), mentions its article's
//! title and is marked up as Wikipedia articles are (`'''bold'''`, `[[links|labels]]`,
//! `<ref>`, templates, headings, lists, categories), so that every paragraph reduces to a
//! distinct chunk of more than 100 characters (each names its article's title, unique, and
//! its number in the article). One page in 40 is a redirect and one in 60 a
//! talk page (both skipped by the builder); one article in 8 repeats a shared boilerplate
//! paragraph (a duplicate chunk).
//!
//! The pool holds only ~11,700 sentences, so that in a large dump each would recur in
//! hundreds of articles and their word k-grams (the label set's passages, issue 36) would
//! mostly be common wording. So, by default, every drawn sentence is varied at word level:
//! each number gets random digits, each capitalized word that does not begin the sentence
//! becomes a name from a generated pool (~10^6 names), and one other word in 4 is replaced by
//! a word of the shared articles' vocabulary (all their distinct words), all from the
//! article's seeded generator, so that articles' passages are about as distinct as real
//! articles' are. `--vary-words off` writes the unvaried sentences (the dumps of earlier
//! versions); `--vary-words N` replaces one ordinary word in N instead of one in 4.
//!
//! ```text
//! cargo run --release -p labelsets --example gen_wikidump -- \
//!     --articles 6000000 --paragraphs 13 --out /work/scratch/enwiki-gen-pages-articles-multistream.xml.bz2
//! ```
//! Options: `--articles N` (articles, default 1000), `--paragraphs P` (prose paragraphs per
//! article, default 13), `--threads T` (compressing threads, default all cores),
//! `--source DIR` (default `../shared/data/wikipedia/articles`), `--out FILE`,
//! `--vary-words on|off|N` (default on: one ordinary word in 4).

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

const PAGES_PER_STREAM: u64 = 100;

struct Args {
    articles: u64,
    paragraphs: u64,
    threads: usize,
    source: PathBuf,
    out: PathBuf,
    /// Replace one ordinary word in `vary` by a vocabulary word, and every number and name;
    /// 0: leave the sentences as drawn.
    vary: u64,
}

/// One ordinary word in this many is replaced when words are varied.
const VARY_DEFAULT: u64 = 4;

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        articles: 1000,
        paragraphs: 13,
        threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
        source: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/wikipedia/articles")),
        out: PathBuf::from("enwiki-gen-pages-articles-multistream.xml.bz2"),
        vary: VARY_DEFAULT,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|_| format!("{flag}: not a number: {v}"));
        match flag.as_str() {
            "--articles" => a.articles = num(&v)?,
            "--paragraphs" => a.paragraphs = num(&v)?.max(1),
            "--threads" => a.threads = num(&v)?.max(1) as usize,
            "--source" => a.source = v.into(),
            "--out" => a.out = v.into(),
            "--vary-words" => {
                a.vary = match v.as_str() {
                    "on" => VARY_DEFAULT,
                    "off" => 0,
                    n => num(n)?.max(1),
                }
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(a)
}

/// Sentences and titles taken from the shared articles.
struct Pool {
    sentences: Vec<String>,
    titles: Vec<String>,
    /// The distinct words (letters only, lowercased) of the articles' paragraphs.
    vocabulary: Vec<String>,
    /// 0: sentences as drawn; else one ordinary word in `vary` is replaced.
    vary: u64,
}

fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"")
}

fn load_pool(dir: &Path) -> Result<Pool, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    files.sort();
    let mut pool = Pool { sentences: Vec::new(), titles: Vec::new(), vocabulary: Vec::new(), vary: 0 };
    let mut vocabulary = std::collections::BTreeSet::new();
    for f in files {
        let html = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        if let Some(stem) = f.file_stem() {
            pool.titles.push(stem.to_string_lossy().replace('_', " "));
        }
        for p in html.split("<p>").skip(1) {
            let p = strip_tags(p.split("</p>").next().unwrap_or(""));
            for w in p.split(|c: char| !c.is_alphabetic()) {
                if w.chars().count() >= 2 {
                    vocabulary.insert(w.to_lowercase());
                }
            }
            for s in p.split(". ") {
                let s = s.trim();
                // Plain sentences only: no characters the wikitext reducer would treat as markup.
                if s.len() >= 80
                    && s.len() <= 160
                    && !s.contains(['[', ']', '{', '}', '|', '<', '>', '\'', '=', '&'])
                {
                    pool.sentences.push(format!("{}.", s.trim_end_matches('.')));
                }
            }
        }
    }
    pool.vocabulary = vocabulary.into_iter().collect();
    if pool.sentences.len() < 100 || pool.titles.is_empty() || pool.vocabulary.is_empty() {
        return Err(format!("{}: too few sentences ({})", dir.display(), pool.sentences.len()));
    }
    Ok(pool)
}

/// splitmix64: a small deterministic generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

fn xml_escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
}

fn title_of(pool: &Pool, id: u64) -> String {
    // The first two words of a shared article's title, then the page id: unique, short.
    let base = &pool.titles[(id % pool.titles.len() as u64) as usize];
    let short: Vec<&str> = base.split(' ').take(2).collect();
    format!("{} {id}", short.join(" "))
}

const ONSETS: [&str; 24] = [
    "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "ch", "gr",
    "sh", "st", "th", "tr",
];
const NUCLEI: [&str; 8] = ["a", "e", "i", "o", "u", "ai", "ea", "ou"];

/// A name from the generated pool: two or three syllables, capitalized (~10^6 names).
fn name(rng: &mut Rng, out: &mut String) {
    let start = out.len();
    for _ in 0..2 + rng.below(2) {
        out.push_str(ONSETS[rng.below(ONSETS.len())]);
        out.push_str(NUCLEI[rng.below(NUCLEI.len())]);
    }
    if rng.below(2) == 0 {
        out.push_str(["n", "r", "s", "l", "x"][rng.below(5)]);
    }
    let first = out[start..start + 1].to_ascii_uppercase();
    out.replace_range(start..start + 1, &first);
}

/// The sentence `s` varied at word level (see the module's comment); `s` itself when
/// variation is off.
fn vary(pool: &Pool, rng: &mut Rng, s: &str) -> String {
    if pool.vary == 0 {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 16);
    for (j, w) in s.split(' ').enumerate() {
        if j > 0 {
            out.push(' ');
        }
        // Leading and trailing punctuation stay; the core between them may be replaced.
        let core_start = w.find(char::is_alphanumeric).unwrap_or(w.len());
        let core_end = w
            .rfind(char::is_alphanumeric)
            .map_or(core_start, |i| i + w[i..].chars().next().map_or(1, char::len_utf8));
        let (head, core, tail) =
            (&w[..core_start], &w[core_start..core_end.max(core_start)], &w[core_end.max(core_start)..]);
        out.push_str(head);
        if core.chars().any(|c| c.is_ascii_digit()) {
            // A number (or a word with digits): every digit random, the first not 0.
            let mut first = true;
            for c in core.chars() {
                if c.is_ascii_digit() {
                    let d = if first { 1 + rng.below(9) } else { rng.below(10) };
                    out.push(char::from(b'0' + d as u8));
                    first = false;
                } else {
                    out.push(c);
                }
            }
        } else if j > 0
            && core.chars().next().is_some_and(char::is_uppercase)
            && core.chars().all(char::is_alphabetic)
        {
            name(rng, &mut out);
        } else if !core.is_empty()
            && core.chars().all(char::is_alphabetic)
            && rng.below(pool.vary as usize) == 0
        {
            out.push_str(&pool.vocabulary[rng.below(pool.vocabulary.len())]);
        } else {
            out.push_str(core);
        }
        out.push_str(tail);
    }
    out
}

/// One paragraph of marked-up prose: the title linked, then one sentence (two in one
/// paragraph of four).
fn paragraph(pool: &Pool, rng: &mut Rng, title: &str, n: u64, out: &mut String) {
    let count = if rng.below(4) == 0 { 2 } else { 1 };
    let _ = write!(out, "In part {n} of [[{title}]], ");
    for i in 0..count {
        let s = &pool.sentences[rng.below(pool.sentences.len())];
        let s = vary(pool, rng, s);
        if i > 0 {
            out.push(' ');
        }
        // Mark up one word in three sentences of four.
        let words: Vec<&str> = s.split(' ').collect();
        let pick = rng.below(words.len().max(1));
        for (j, w) in words.iter().enumerate() {
            if j > 0 {
                out.push(' ');
            }
            if j == pick && w.len() > 3 && w.chars().all(char::is_alphabetic) {
                match rng.below(4) {
                    0 => {
                        let _ = write!(out, "[[{w}]]");
                    }
                    1 => {
                        let _ = write!(out, "[[{w} (topic)|{w}]]");
                    }
                    2 => {
                        let _ = write!(out, "''{w}''");
                    }
                    _ => out.push_str(w),
                }
            } else {
                out.push_str(w);
            }
        }
        if rng.below(6) == 0 {
            let _ = write!(out, "<ref>{{{{cite web |title={title} |url=https://example.org/{n}}}}}</ref>");
        }
    }
}

const BOILERPLATE: &str =
    "This article is part of a generated series of articles used to measure how a ditto \
     label set is built at the size of the English Wikipedia, from sentences of real articles.";

fn wikitext(pool: &Pool, id: u64, paragraphs: u64, title: &str) -> String {
    let mut rng = Rng(id.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x5eed);
    let mut t = String::with_capacity(256 * paragraphs as usize);
    let _ = write!(t, "{{{{Short description|Generated article {id}}}}}\n{{{{Infobox thing\n| name = {title}\n| id = {id}\n}}}}\n");
    let _ = write!(t, "'''{title}''' ");
    for n in 0..paragraphs {
        if n > 0 && n % 4 == 0 {
            let _ = write!(t, "\n== Section {} ==\n", n / 4);
        }
        if n == 2 {
            t.push_str("* a short list item\n* another one\n\n");
        }
        paragraph(pool, &mut rng, title, n, &mut t);
        t.push_str("\n\n");
    }
    if id.is_multiple_of(8) {
        t.push_str(BOILERPLATE);
        t.push_str("\n\n");
    }
    t.push_str("== References ==\n{{Reflist}}\n\n[[Category:Generated articles]]\n");
    t
}

/// The XML of pages `first..first + PAGES_PER_STREAM` (ids from 1), and their index lines
/// (offset filled in by the writer).
fn stream_pages(pool: &Pool, first: u64, last: u64, paragraphs: u64) -> (String, Vec<(u64, String)>) {
    let mut xml = String::with_capacity(300 * paragraphs as usize * PAGES_PER_STREAM as usize);
    let mut index = Vec::new();
    for id in first..last {
        let title = title_of(pool, id);
        let (ns, redirect) = (if id % 60 == 7 { 1 } else { 0 }, id % 40 == 3);
        let full_title = if ns == 1 { format!("Talk:{title}") } else { title.clone() };
        let text = if redirect {
            format!("#REDIRECT [[{}]]", title_of(pool, id + 1))
        } else {
            wikitext(pool, id, paragraphs, &title)
        };
        xml.push_str("  <page>\n    <title>");
        xml_escape(&full_title, &mut xml);
        let _ = write!(xml, "</title>\n    <ns>{ns}</ns>\n    <id>{id}</id>\n");
        if redirect {
            xml.push_str("    <redirect title=\"");
            xml_escape(&title_of(pool, id + 1), &mut xml);
            xml.push_str("\" />\n");
        }
        let _ = write!(
            xml,
            "    <revision>\n      <id>{}</id>\n      <timestamp>2026-11-01T00:00:00Z</timestamp>\n      \
             <contributor>\n        <username>Generator</username>\n        <id>1</id>\n      </contributor>\n      \
             <model>wikitext</model>\n      <format>text/x-wiki</format>\n      <text bytes=\"{}\" xml:space=\"preserve\">",
            id * 7 + 1,
            text.len()
        );
        xml_escape(&text, &mut xml);
        xml.push_str("</text>\n    </revision>\n  </page>\n");
        index.push((id, full_title));
    }
    (xml, index)
}

const HEAD: &str = "<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.10/\" \
    xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" version=\"0.10\" xml:lang=\"en\">\n  <siteinfo>\n    \
    <sitename>Wikipedia</sitename>\n    <dbname>enwiki</dbname>\n    <base>https://en.wikipedia.org/wiki/Main_Page</base>\n    \
    <generator>ditto gen_wikidump</generator>\n    <case>first-letter</case>\n    <namespaces>\n      \
    <namespace key=\"0\" case=\"first-letter\" />\n      <namespace key=\"1\" case=\"first-letter\">Talk</namespace>\n    \
    </namespaces>\n  </siteinfo>\n";

fn bz2(data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut enc =
        bzip2::write::BzEncoder::new(Vec::with_capacity(data.len() / 4), bzip2::Compression::new(6));
    enc.write_all(data)?;
    enc.finish()
}

type Job = (u64, u64);
type Done = (u64, Vec<u8>, Vec<(u64, String)>, u64);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let mut pool = load_pool(&args.source)?;
    pool.vary = args.vary;
    eprintln!(
        "{} sentences, {} titles, {} words from {}; varying {}; writing {} articles to {}",
        pool.sentences.len(),
        pool.titles.len(),
        pool.vocabulary.len(),
        args.source.display(),
        if args.vary == 0 { "off".to_string() } else { format!("names, numbers, 1 word in {}", args.vary) },
        args.articles,
        args.out.display()
    );
    let out_name = args.out.to_string_lossy().into_owned();
    let index_path = PathBuf::from(match out_name.strip_suffix(".xml.bz2") {
        Some(stem) => format!("{stem}-index.txt.bz2"),
        None => format!("{out_name}-index.txt.bz2"),
    });
    let mut out = std::io::BufWriter::with_capacity(1 << 22, std::fs::File::create(&args.out)?);
    let mut index = bzip2::write::BzEncoder::new(
        std::io::BufWriter::new(std::fs::File::create(&index_path)?),
        bzip2::Compression::new(6),
    );
    let head = bz2(HEAD.as_bytes())?;
    out.write_all(&head)?;
    let mut offset = head.len() as u64;
    let streams = args.articles.div_ceil(PAGES_PER_STREAM);
    let started = std::time::Instant::now();
    let (mut xml_bytes, mut written) = (HEAD.len() as u64, 0u64);
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(args.threads * 4);
    let job_rx = std::sync::Mutex::new(job_rx);
    std::thread::scope(|s| -> Result<(), Box<dyn std::error::Error>> {
        let (done_tx, done_rx) = mpsc::sync_channel::<Done>(args.threads * 4);
        for _ in 0..args.threads {
            let (job_rx, done_tx, pool) = (&job_rx, done_tx.clone(), &pool);
            s.spawn(move || loop {
                let job = match job_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok((seq, first)) = job else { return };
                let last = (first + PAGES_PER_STREAM).min(args.articles + 1);
                let (xml, idx) = stream_pages(pool, first, last, args.paragraphs);
                let Ok(z) = bz2(xml.as_bytes()) else { return };
                if done_tx.send((seq, z, idx, xml.len() as u64)).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        s.spawn(move || {
            for seq in 0..streams {
                if job_tx.send((seq, 1 + seq * PAGES_PER_STREAM)).is_err() {
                    return;
                }
            }
        });
        let mut pending = std::collections::BTreeMap::new();
        let mut next = 0u64;
        for (seq, z, idx, xml_len) in done_rx {
            pending.insert(seq, (z, idx, xml_len));
            while let Some((z, idx, xml_len)) = pending.remove(&next) {
                for (id, title) in idx {
                    writeln!(index, "{offset}:{id}:{title}")?;
                }
                out.write_all(&z)?;
                offset += z.len() as u64;
                xml_bytes += xml_len;
                written += (PAGES_PER_STREAM).min(args.articles - next * PAGES_PER_STREAM);
                next += 1;
                if next.is_multiple_of(2000) {
                    let secs = started.elapsed().as_secs_f64();
                    eprintln!(
                        "{written} pages, {:.2} GB XML, {:.2} GB bz2, {:.1} MB/s XML, {secs:.0}s",
                        xml_bytes as f64 / 1e9,
                        offset as f64 / 1e9,
                        xml_bytes as f64 / 1e6 / secs
                    );
                }
            }
        }
        if next != streams {
            return Err(format!("only {next} of {streams} streams were written").into());
        }
        Ok(())
    })?;
    let tail = bz2(b"</mediawiki>\n")?;
    out.write_all(&tail)?;
    xml_bytes += 13;
    out.flush()?;
    index.finish()?.flush()?;
    eprintln!(
        "done: {} pages, {:.3} GB XML, {:.3} GB bz2 ({}), index {}, {:.0}s",
        args.articles,
        xml_bytes as f64 / 1e9,
        (offset + tail.len() as u64) as f64 / 1e9,
        args.out.display(),
        index_path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
