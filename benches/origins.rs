//! Origin detection (Abdel-Hamid et al. 2009). `cargo bench --bench origins` runs both parts;
//! `ORIGINS_BENCH=throughput` or `ORIGINS_BENCH=scale` one of them.
//!
//! - Throughput (pages/s on one core) over the shared Wikipedia articles followed by pages
//!   copying segments of them, for the exact reference and the fixed-memory modes at 5 % of
//!   the exact table.
//! - The paper's regime: the articles and WARC samples followed by 100,000 short blog-like
//!   documents (`ORIGINS_BLOGS`) with Table 1-like statistics, so that 1 % of the exact table
//!   is ≳ 100 k slots; NHs+Lucky+BE, All+LRU+NB and NHs+LRU+BE scored against the exact run
//!   (§3.2: DO, novel P/R, TF) over the last 10,000 documents with a dominant origin
//!   (`ORIGINS_QUERIES`, §3.1) at 0.557 (= 1 % of the text), 0.7, 1, 5 and 20 % of the exact
//!   table (`ORIGINS_PCTS`); and NHs+LuckyAging+BE, ditto's own eviction (not the paper's:
//!   Lucky with a halving every `AGING_PERIOD` insertions into a bucket; `ORIGINS_AGING=64,128`
//!   runs other periods, `ORIGINS_MODES=NHs+LuckyAging+BE,…` only the named modes).
//!   `ORIGINS_POPULAR=0.5`: half of the copies take an earlier copy's source (popular
//!   documents copied again). Figures in BENCHMARKS.md (issue 9, Origins).

use std::time::Instant;

use detector::origins::{
    score_against_exact, BucketTable, Estimation, Eviction, OriginConfig, OriginDetector, PageOrigins,
    Selection, AGING_PERIOD, ENTRY_BYTES, K,
};

fn texts() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/wikipedia/articles");
    let mut paths: Vec<_> =
        std::fs::read_dir(&dir).expect("shared articles").map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut out: Vec<String> = paths
        .iter()
        .map(|p| {
            let doc =
                detector::clean(&std::fs::read(p).unwrap(), Some("text/html"), None, &Default::default());
            doc.blocks.join(" ")
        })
        .collect();
    // Copying pages: halves of two earlier articles each, with text of their own.
    let n = out.len();
    for i in 0..n {
        let a: Vec<&str> = out[i].split(' ').collect();
        let b: Vec<&str> = out[(i * 7 + 3) % n].split(' ').collect();
        let own: Vec<String> = (0..50).map(|j| format!("own{i}x{j}")).collect();
        out.push(format!("{} {} {}", a[..a.len() / 2].join(" "), own.join(" "), b[b.len() / 2..].join(" ")));
    }
    out
}

fn main() {
    let which = std::env::var("ORIGINS_BENCH").unwrap_or_default();
    if which != "scale" {
        throughput();
    }
    if which != "throughput" {
        paper_scale();
    }
}

fn throughput() {
    let texts = texts();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut exact = OriginDetector::exact(K);
    let t = Instant::now();
    for (i, x) in texts.iter().enumerate() {
        exact.process(i as u32, x);
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "exact (All, NB, unbounded): {} pages, {:.1} MB text in {:.3} s: {:.0} pages/s, {:.1} MB/s; table {} bytes",
        texts.len(),
        bytes as f64 / 1e6,
        secs,
        texts.len() as f64 / secs,
        bytes as f64 / 1e6 / secs,
        exact.memory_bytes()
    );
    let mem = exact.memory_bytes() / 20;
    for (name, selection, eviction, estimation) in [
        ("NHs+Lucky+BE", Selection::Nhs, Eviction::Lucky, Estimation::Be),
        ("All+LRU+NB", Selection::All, Eviction::Lru, Estimation::Nb),
    ] {
        let cfg = OriginConfig { selection, eviction, estimation, ..Default::default() };
        let mut det = OriginDetector::new(cfg, mem);
        let t = Instant::now();
        for (i, x) in texts.iter().enumerate() {
            det.process(i as u32, x);
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{name} at 5 % ({} bytes): {:.0} pages/s, {:.1} MB/s; {} of {} shingles selected, {} evictions",
            det.memory_bytes(),
            texts.len() as f64 / secs,
            bytes as f64 / 1e6 / secs,
            det.selected_total,
            det.shingles_total,
            det.evictions()
        );
    }
}

// ---------------------------------------------------------------------------------------
// The paper's regime (Abdel-Hamid et al. 2009 §3.1, Table 1): a long stream of short
// blog-like documents, so that a table of 1 % of the exact table's shingles holds ≳ 100 k
// shingles and a new shingle lives for many documents (see BENCHMARKS.md, issue 9, Origins).
// ---------------------------------------------------------------------------------------

/// splitmix64: a seeded, platform-independent generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

/// The words of a page's cleaned text, joined with single spaces (as tests/it/origins_stream.rs).
fn page_words(body: &[u8]) -> String {
    let doc = detector::clean(body, Some("text/html"), None, &Default::default());
    let words: Vec<String> =
        detector::shingles::words(&doc.blocks.join(" ")).map(|w| w.into_owned()).collect();
    words.join(" ")
}

/// The stream of tests/it/origins_stream.rs's uniform stream, without its copying pages: the
/// shared Wikipedia articles (≥ 300 words), then the HTML pages (≥ 45 words) of the WARC
/// samples. Returns the texts and the number of articles.
fn prefix_texts() -> (Vec<String>, usize) {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    let mut paths: Vec<_> = std::fs::read_dir(data.join("wikipedia/articles"))
        .expect("shared articles")
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let mut texts: Vec<String> = paths
        .iter()
        .map(|p| page_words(&std::fs::read(p).unwrap()))
        .filter(|t| t.split(' ').count() >= 300)
        .collect();
    let n_articles = texts.len();
    let root = data.join("warc");
    let mut files = Vec::new();
    let mut dirs: Vec<_> =
        std::fs::read_dir(root.join("valid")).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    for d in dirs {
        let mut fs_: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().path()).collect();
        fs_.sort();
        files.extend(fs_);
    }
    files.push(root.join("big/debian-docs-html.warc.gz"));
    for f in files {
        let Ok(pages) = crawler::warc::WarcPages::open(&f) else { continue };
        for p in pages.flatten() {
            let html = p.content_type.as_deref().is_some_and(|c| c.starts_with("text/html"));
            if p.status == 200 && html {
                let t = page_words(&p.body);
                if t.split(' ').count() >= 45 {
                    texts.push(t);
                }
            }
        }
    }
    (texts, n_articles)
}

/// Parameters of the blog-like part of the stream.
#[derive(Debug, Clone, Copy)]
struct BlogParams {
    blogs: usize,
    /// Share of blogs that copy most of their text from one earlier document.
    copier: f64,
    /// Share of copied segments taken from the Wikipedia articles (the rest from earlier blogs).
    from_articles: f64,
    /// Copies of earlier blogs reach back a log-uniform number of blogs in [1, max_lag].
    max_lag: usize,
    /// Share of copies whose source is drawn from the earlier copies' sources (a popular
    /// document is copied again: preferential attachment); 0 in the default stream.
    popular: f64,
    seed: u64,
}

/// Blog-like documents after the prefix: 60–350 words (≥ 45 tokens, mean ≈ 205 as the
/// paper's 197 shingles). A "copier" (share `copier`) takes 60–95 % of its words as one
/// segment of one earlier document (its dominant origin, or that document's) plus 0–2 quotes
/// of 8–24 words of others; any other blog has 0–3 such quotes.
/// The rest is own text: words drawn at random from the articles' words (frequency
/// weighted), so genuinely novel 8-word sequences.
fn blog_stream(prefix: Vec<String>, n_articles: usize, p: BlogParams) -> Vec<String> {
    let pool: Vec<String> =
        prefix[..n_articles].iter().flat_map(|t| t.split(' ').map(str::to_string)).collect();
    let mut texts = prefix;
    let first_blog = texts.len();
    let mut rng = Rng(p.seed);
    let mut sources: Vec<usize> = Vec::new();
    for _ in 0..p.blogs {
        let blogs_so_far = texts.len() - first_blog;
        let n_texts = texts.len();
        let mut pick = |rng: &mut Rng| -> usize {
            let src = if !sources.is_empty() && rng.unit() < p.popular {
                sources[rng.below(sources.len())]
            } else if blogs_so_far == 0 || rng.unit() < p.from_articles {
                rng.below(n_articles)
            } else {
                let max = blogs_so_far.min(p.max_lag).max(1) as f64;
                let lag = (max.ln() * rng.unit()).exp() as usize;
                n_texts - lag.clamp(1, blogs_so_far)
            };
            sources.push(src);
            src
        };
        let len = rng.range(60, 350);
        let mut segs: Vec<(usize, usize)> = Vec::new();
        let quotes = if rng.unit() < p.copier {
            let f = 0.60 + 0.35 * rng.unit();
            segs.push((pick(&mut rng), (len as f64 * f) as usize));
            rng.below(3)
        } else {
            rng.below(4)
        };
        for _ in 0..quotes {
            segs.push((pick(&mut rng), rng.range(8, 24)));
        }
        let copied: usize = segs.iter().map(|s| s.1).sum();
        let own_total = len.saturating_sub(copied).max(10);
        // Own text in segs.len() + 1 pieces (random cut points).
        let mut cuts: Vec<usize> = (0..segs.len()).map(|_| rng.below(own_total + 1)).collect();
        cuts.sort_unstable();
        cuts.push(own_total);
        let mut out = String::with_capacity(len * 8);
        let mut prev = 0;
        let push = |out: &mut String, w: &str| {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        };
        for (i, &c) in cuts.iter().enumerate() {
            for _ in prev..c {
                push(&mut out, &pool[rng.below(pool.len())]);
            }
            prev = c;
            if let Some(&(src, n)) = segs.get(i) {
                let words: Vec<&str> = texts[src].split(' ').collect();
                let n = n.min(words.len());
                let start = rng.below(words.len() - n + 1);
                for w in &words[start..start + n] {
                    push(&mut out, w);
                }
            }
        }
        texts.push(out);
    }
    texts
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn paper_scale() {
    let (texts, n_prefix, text_bytes) = paper_stream();
    let exact = exact_reference(&texts, n_prefix, text_bytes);
    let modes = scale_modes();
    println!(
        "| mode | table (% of exact) | bytes | slots | % of text | DO | novel P | novel R | TF | copied sel. shingles \
         right / missed / other | entries' median age (docs) | pages/s |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let pcts: Vec<f64> = std::env::var("ORIGINS_PCTS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![0.557, 0.7, 1.0, 5.0, 20.0]);
    for &pct in &pcts {
        for mode in modes.iter().cloned() {
            run_mode(&texts, &exact, text_bytes, pct, mode);
        }
    }
}

/// The paper-scale stream (prefix, then `ORIGINS_BLOGS` blogs), its description printed:
/// the texts, the prefix's length and the text's bytes.
fn paper_stream() -> (Vec<String>, usize, usize) {
    let t = Instant::now();
    let (prefix, n_articles) = prefix_texts();
    let n_prefix = prefix.len();
    let p = BlogParams {
        blogs: env_usize("ORIGINS_BLOGS", 100_000),
        copier: 0.40,
        from_articles: 0.10,
        max_lag: env_usize("ORIGINS_MAX_LAG", usize::MAX),
        popular: std::env::var("ORIGINS_POPULAR").ok().and_then(|v| v.parse().ok()).unwrap_or(0.0),
        seed: 2009,
    };
    let texts = blog_stream(prefix, n_articles, p);
    let text_bytes: usize = texts.iter().map(String::len).sum();
    println!(
        "\npaper-scale stream: {n_articles} articles + {} WARC pages + {} blogs ({p:?}); {} documents, {:.1} MB text; built in {:.1} s",
        n_prefix - n_articles,
        p.blogs,
        texts.len(),
        text_bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    (texts, n_prefix, text_bytes)
}

/// What the fixed-memory modes are scored against.
struct ExactReference {
    /// The exact table's size in bytes.
    bytes: u64,
    /// Indices of the query documents, ascending.
    query: Vec<usize>,
    /// The exact run's result for each query document.
    origins: Vec<PageOrigins>,
}

/// Runs the exact detector over the stream, prints its Table 1-like statistics over the blogs
/// and the query documents', and keeps what scoring needs.
fn exact_reference(texts: &[String], n_prefix: usize, text_bytes: usize) -> ExactReference {
    let mut exact_det = OriginDetector::exact(K);
    let t = Instant::now();
    let exact: Vec<PageOrigins> =
        texts.iter().enumerate().map(|(i, x)| exact_det.process(i as u32, x)).collect();
    let exact_secs = t.elapsed().as_secs_f64();
    let exact_bytes = exact_det.memory_bytes();
    // Table 1's statistics over the blogs; query documents = the last Q with a dominant
    // origin, S = everything before (§3.1).
    let blogs = &exact[n_prefix..];
    let shingles: usize = blogs.iter().map(|d| d.shingles).sum();
    let copied: usize = blogs.iter().map(|d| d.copied).sum();
    let with_dom = blogs.iter().filter(|d| d.dominant.is_some()).count();
    let (blocks, block_tokens) = copied_blocks(blogs);
    let q = env_usize("ORIGINS_QUERIES", 10_000);
    let mut query: Vec<usize> =
        (n_prefix..texts.len()).rev().filter(|&i| exact[i].dominant.is_some()).take(q).collect();
    query.reverse();
    let own = query.iter().filter(|&&i| exact[i].dominant == Some(i as u32)).count();
    let q_tokens: usize = query.iter().map(|&i| exact[i].tokens).sum();
    let q_fresh: usize = query.iter().map(|&i| exact[i].fresh.iter().filter(|&&f| f).count()).sum();
    println!(
        "exact: {} shingles, {} distinct = table {} bytes ({:.1} % of the text), {:.0} pages/s; blogs: {:.0} shingles/doc, \
         shingle copy ratio {:.3}, {:.1} % with a dominant origin, avg copied block {:.1} tokens",
        exact_det.shingles_total,
        exact_det.stored(),
        exact_bytes,
        100.0 * exact_bytes as f64 / text_bytes as f64,
        texts.len() as f64 / exact_secs,
        shingles as f64 / blogs.len() as f64,
        copied as f64 / shingles as f64,
        100.0 * with_dom as f64 / blogs.len() as f64,
        block_tokens as f64 / blocks.max(1) as f64,
    );
    println!(
        "query documents: the last {} with a dominant origin (from document {}); {:.1} % their own dominant origin \
         (trivial DO), {:.1} % of their tokens fresh (trivial TF)",
        query.len(),
        query[0],
        100.0 * own as f64 / query.len() as f64,
        100.0 * q_fresh as f64 / q_tokens as f64
    );
    let exact_q: Vec<PageOrigins> = query.iter().map(|&i| exact[i].clone()).collect();
    drop(exact);
    drop(exact_det);
    ExactReference { bytes: exact_bytes, query, origins: exact_q }
}

/// The number of copied blocks (maximal runs of shingles with one origin other than the
/// document itself) in `docs`, and their total length in tokens.
fn copied_blocks(docs: &[PageOrigins]) -> (usize, usize) {
    let (mut blocks, mut block_tokens) = (0usize, 0usize);
    for d in docs {
        let o = &d.origins;
        let mut i = 0;
        while i < o.len() {
            let mut j = i;
            while j + 1 < o.len() && o[j + 1] == o[i] {
                j += 1;
            }
            if o[i] != d.doc {
                blocks += 1;
                block_tokens += j - i + K;
            }
            i = j + 1;
        }
    }
    (blocks, block_tokens)
}

/// A fixed-memory mode: name, selection, eviction, estimation and LuckyAging period.
type Mode = (String, Selection, Eviction, Estimation, u16);

/// The modes to run: the paper's three and NHs+LuckyAging+BE for each `ORIGINS_AGING`
/// period, only those named in `ORIGINS_MODES` if it is set.
fn scale_modes() -> Vec<Mode> {
    // ORIGINS_AGING: the LuckyAging periods to run (ditto's own policy; default AGING_PERIOD);
    // ORIGINS_MODES: the mode names to run (default all).
    let periods: Vec<u16> = std::env::var("ORIGINS_AGING")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![AGING_PERIOD]);
    let mut modes: Vec<Mode> = vec![
        ("NHs+Lucky+BE".into(), Selection::Nhs, Eviction::Lucky, Estimation::Be, AGING_PERIOD),
        ("All+LRU+NB".into(), Selection::All, Eviction::Lru, Estimation::Nb, AGING_PERIOD),
        ("NHs+LRU+BE".into(), Selection::Nhs, Eviction::Lru, Estimation::Be, AGING_PERIOD),
    ];
    for &a in &periods {
        let name =
            if a == AGING_PERIOD { "NHs+LuckyAging+BE".to_string() } else { format!("NHs+LuckyAging{a}+BE") };
        modes.push((name, Selection::Nhs, Eviction::LuckyAging, Estimation::Be, a));
    }
    if let Ok(only) = std::env::var("ORIGINS_MODES") {
        let only: Vec<&str> = only.split(',').collect();
        modes.retain(|m| only.contains(&m.0.as_str()));
    }
    modes
}

/// Runs one mode with a table of `pct` % of the exact table over the stream and prints its
/// table row (and, for scored evictions, its Lucky statistics on stderr).
fn run_mode(texts: &[String], exact: &ExactReference, text_bytes: usize, pct: f64, mode: Mode) {
    let (mode, selection, eviction, estimation, period) = mode;
    let query = &exact.query;
    let cfg = OriginConfig { selection, eviction, estimation, ..Default::default() };
    let table = BucketTable::with_memory((exact.bytes as f64 * pct / 100.0) as u64, eviction)
        .with_aging_period(period);
    let mut det = OriginDetector::with_table(cfg, table);
    let mut got = Vec::with_capacity(query.len());
    let mut qi = 0;
    let t = Instant::now();
    for (i, x) in texts.iter().enumerate() {
        let r = det.process(i as u32, x);
        if qi < query.len() && query[qi] == i {
            got.push(r);
            qi += 1;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let s = score_against_exact(&exact.origins, &got);
    let n = (s.copied_right + s.copied_missed + s.copied_other).max(1) as f64;
    let last = texts.len() as u32 - 1;
    let mut ages: Vec<u32> = det.entries().map(|e| last - e.origin).collect();
    ages.sort_unstable();
    let median_age = ages.get(ages.len() / 2).copied().unwrap_or(0);
    println!(
        "| {mode} | {pct} % | {} | {} | {:.3} % | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} / {:.2} / {:.2} | {median_age} | {:.0} |",
        det.memory_bytes(),
        det.memory_bytes() / ENTRY_BYTES as u64,
        100.0 * det.memory_bytes() as f64 / text_bytes as f64,
        s.dominant_accuracy,
        s.novel_precision,
        s.novel_recall,
        s.token_freshness,
        s.copied_right as f64 / n,
        s.copied_missed as f64 / n,
        s.copied_other as f64 / n,
        texts.len() as f64 / secs,
    );
    if eviction.scored() {
        let (halvings, hist) = det.lucky_stats();
        eprintln!(
            "    {mode} {pct} %: ssr {:.3}, {halvings} halvings (rule e), {} aging halvings, {} evictions; scores 0/1/2/3/4/≥5: {} {} {} {} {} {}",
            det.selected_total as f64 / det.shingles_total as f64,
            det.aging_halvings(),
            det.evictions(),
            hist[0],
            hist[1],
            hist[2],
            hist[3],
            hist[4],
            hist[5..].iter().sum::<u64>()
        );
    }
}
