//! The `ditto` command line: parses arguments into plain configs for the library.

pub mod demo;
pub mod flags;
pub mod review;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::labelset as labels;
use crate::pipeline::stages::Focus;
use crate::pipeline::{self, progress::ProgressMode, ScanConfig};
use crate::report::summary;
use crate::report::{self, Format, Level, ReportConfig, ThresholdChoice};
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use detector::TrapRules;
use store::Store;

#[derive(Parser)]
#[command(
    name = "ditto",
    version,
    about = "Find who copies whose content: label sets, bad neighborhoods, evidence",
    long_about = "ditto detects content reuse (Ardi & Heidemann 2014): pages are cleaned into \
paragraph chunks, each chunk is normalized and hashed with SHA-1, chunks found in a label set \
(e.g. Wikipedia paragraphs) make a page's `contains` score, and every URL prefix is a \
neighborhood whose badness is the mean `contains` of its pages. Neighborhoods above mean + one \
standard deviation are reported, with the copied passages and their sources.\n\n\
Typical use:\n  \
ditto labelset build --name wikipedia --min-chars 100 -o wikipedia.dls ../shared/data/wikipedia/articles\n  \
ditto scan --store crawl.db --labelset wikipedia.dls some.warc.gz a-directory-of-pages/\n  \
ditto report --store crawl.db --format table"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build or inspect label sets (the paper's L_c and L_f).
    #[command(subcommand)]
    Labelset(LabelsetCommand),
    /// Detect content reuse in WARC files, directories of pages, or single files.
    Scan(ScanArgs),
    /// Report suspicious neighborhoods (or pages) with their sources and copied passages.
    Report(ReportArgs),
    /// Print a store's totals: pages, chunks, labeled chunks, neighborhoods, thresholds.
    Stats(StatsArgs),
    /// Start a built-in web on loopback (original, copying, mirrored, near-replica, trap and
    /// throttling hosts), crawl it with a bundled Wikipedia label set, print what was found.
    /// No network needed.
    Demo {
        /// Where the store, WARC files, label set and report go.
        #[arg(long, default_value = "ditto-demo")]
        out: PathBuf,
        /// Only serve the demo web on this loopback address (e.g. 127.0.0.1:8080) until ^C,
        /// and write its label set to --out, so you can crawl it yourself with
        /// `ditto crawl --resolve '*.demo.test=ADDR' --seed http://wiki.demo.test/ ...`.
        #[arg(long)]
        serve: Option<std::net::SocketAddr>,
    },
    /// Crawl the web politely with detection inside the crawl (resumable: run the same
    /// command again after ^C or a crash).
    Crawl(Box<CrawlArgs>),
    /// Clusters of exact and near replicas among a store's pages (SimHash + shingle overlap).
    Replicas(crate::analysis::replicas::ReplicasArgs),
    /// Refresh a crawl fetching one page per replica cluster (members only when it changed).
    Recrawl(Box<crate::analysis::recrawl::RecrawlArgs>),
    /// Serve a review web page (loopback) to check suspicious neighborhoods and label them.
    Review(crate::cli::review::ReviewArgs),
    /// Export or import review labels as JSON Lines.
    #[command(subcommand)]
    Labels(crate::cli::review::LabelsCommand),
    /// Blind discovery (§3.2 step 3b): label the chunks (or, with --files, files) a corpus
    /// repeats more than --min-count times, stop chunks left out; writes a .dls label set.
    Discover(Box<flags::discover::DiscoverArgs>),
    /// Stop chunks (§3.4.2): suggest the most frequent chunks for review.
    #[command(subcommand)]
    Stopchunks(flags::stopchunks::StopchunksCommand),
    /// Export a store's chunk occurrences (CSV) for counting elsewhere.
    #[command(subcommand)]
    Export(flags::export::ExportCommand),
    /// Quilted pages (Najork 2012): pages stitched from patches of at least c other pages.
    Quilts(Box<crate::analysis::quilts::QuiltsArgs>),
    /// Origin of each page's text segments in arrival order, in fixed memory (Abdel-Hamid
    /// et al. 2009): dominant origin, copied share, novel segments.
    Origins(Box<crate::analysis::origins::OriginsArgs>),
}

#[derive(Args)]
struct CrawlArgs {
    /// Store to write; holds the frontier too, so the same command resumes.
    #[arg(long)]
    store: PathBuf,
    /// Live origins of text segments (Abdel-Hamid et al. 2009) in a table of this size (e.g.
    /// 64MB), in the order pages are stored; `ditto origins --live` prints them. Off by
    /// default.
    #[arg(long, value_parser = flags::parse_bytes)]
    origins: Option<u64>,
    /// Chunk label set (.dls) to detect while crawling.
    #[arg(long)]
    labelset: PathBuf,
    /// File of seed URLs, one per line (# comments allowed).
    #[arg(long)]
    seeds: Option<PathBuf>,
    /// A seed URL (may repeat).
    #[arg(long = "seed")]
    seed: Vec<String>,
    /// Honest User-Agent with a contact URL or e-mail, e.g. "ditto/0.1 (+https://example.org/bot)".
    /// Required. Its product token ("ditto") is what robots.txt groups are matched against.
    #[arg(long)]
    user_agent: String,
    /// Stop after this many page fetches (robots.txt not counted).
    #[arg(long, default_value_t = 100_000)]
    max_pages: u64,
    /// Most pages fetched from one host.
    #[arg(long, default_value_t = 10_000)]
    per_host_max_pages: u64,
    /// Deepest link distance from a seed.
    #[arg(long, default_value_t = 20)]
    max_depth: u32,
    /// Write every fetch (request + response) to rotating WARC/1.1 files here.
    #[arg(long)]
    warc_dir: Option<PathBuf>,
    /// Rotate WARC files past this size.
    #[arg(long, default_value_t = 1 << 30)]
    warc_max_bytes: u64,
    /// `labeled`: links from pages and neighborhoods with high contains/badness first;
    /// `bfs`: breadth first.
    #[arg(long, value_enum, default_value = "labeled")]
    focus: Focus,
    /// Which links to follow: `domain` = same registrable domain as a seed, `seeds` = the
    /// seeds' hosts, `any` = everything.
    #[arg(long, value_enum, default_value = "domain")]
    scope: ScopeArg,
    /// Also allow these hosts (`host` or `*.suffix`; may repeat).
    #[arg(long = "allow-host")]
    allow_host: Vec<String>,
    /// Never fetch these hosts (`host` or `*.suffix`; may repeat).
    #[arg(long = "block-host")]
    block_host: Vec<String>,
    /// Map HOST (or `*.suffix`) to ADDR:PORT instead of DNS, e.g. for a test web on loopback;
    /// mapped hosts may be private or loopback addresses. May repeat.
    #[arg(long)]
    resolve: Vec<String>,
    /// Allow private, loopback and link-local addresses (intranet crawls). Off by default:
    /// such addresses are refused, also after DNS resolution and redirects.
    #[arg(long)]
    allow_private: bool,
    /// Minimum delay between requests to one host, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    min_delay_ms: u64,
    /// Delay = factor × the host's last response time, when longer than the minimum.
    #[arg(long, default_value_t = 2.0)]
    delay_factor: f64,
    /// Longest robots.txt Crawl-delay honored, in seconds.
    #[arg(long, default_value_t = 30.0)]
    max_crawl_delay: f64,
    /// Requests in flight per host.
    #[arg(long, default_value_t = 1)]
    per_host_concurrency: usize,
    /// Global cap on requests per second over all hosts.
    #[arg(long)]
    rate: Option<f64>,
    /// Requests in flight over all hosts.
    #[arg(long, default_value_t = 64)]
    max_in_flight: usize,
    /// Largest body kept per page, in bytes (decompressed; bigger bodies are cut and skipped).
    #[arg(long, default_value_t = 10 << 20)]
    max_body_bytes: usize,
    /// Whole-fetch timeout in seconds (connect 10 s, idle read 20 s).
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Workers per CPU stage of detection. Default: number of cores.
    #[arg(long)]
    threads: Option<usize>,
    /// Write the crawl and detection statistics as JSON to this file.
    #[arg(long)]
    stats_json: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto")]
    progress: ProgressMode,
    /// Serve Prometheus metrics (requests, pages, hosts active/queued, in flight, events by
    /// kind) at http://ADDR/metrics while crawling, e.g. 127.0.0.1:9100.
    #[arg(long)]
    metrics: Option<std::net::SocketAddr>,
    /// Allow --metrics on a non-loopback address.
    #[arg(long)]
    metrics_remote: bool,
    /// Crawl one partition `i/N` of a host-partitioned crawl: this process fetches only the
    /// hosts whose registrable domain hashes to i (FNV-1a mod N) and sends links to other
    /// hosts to their owners through --coordinator (Redis) or --exchange-dir (files). All
    /// partitions may get the same seeds.
    #[arg(long)]
    partition: Option<crawler::partition::Partition>,
    /// Shared directory through which partitions exchange links (inboxes, states).
    #[arg(long, requires = "partition", conflicts_with = "coordinator")]
    exchange_dir: Option<PathBuf>,
    /// Redis through which partitions exchange links (one stream per partition, consumer
    /// groups, acknowledged after queueing), e.g. redis://127.0.0.1:6379 or
    /// redis://127.0.0.1:6379/2 for database 2 (one database per crawl).
    #[arg(long, requires = "partition")]
    coordinator: Option<String>,
    /// A partition stops once every partition has been idle, with no link in transit, for
    /// this long (milliseconds).
    #[arg(long, default_value_t = 2000)]
    exchange_grace_ms: u64,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ScopeArg {
    Any,
    Seeds,
    Domain,
}

#[derive(Subcommand)]
enum LabelsetCommand {
    /// Build a label set from directories of HTML/text, WARC files, or Wikipedia dumps
    /// (Wikimedia Enterprise HTML NDJSON, MediaWiki XML; .gz/.bz2 accepted).
    Build(BuildArgs),
    /// Turn a hash list (HASH<TAB>COUNT<TAB>SAMPLE_URL lines, as `examples/spark/discover.py`
    /// writes) into a blind label set whose sources are the sample URLs, the same file
    /// `ditto discover` writes for the same data and threshold.
    Import(flags::labelset_import::ImportArgs),
    /// Print a label set's header and counts.
    Info {
        /// The label-set file (.dls).
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct BuildArgs {
    /// Name recorded in the file (e.g. `wikipedia`).
    #[arg(long)]
    name: String,
    /// Output file.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// Keep only chunks LONGER than this many characters after normalization (the paper
    /// labels Wikipedia chunks of length > 100, §7).
    #[arg(long, default_value_t = 100)]
    min_chars: usize,
    /// `chunks` for a chunk label set (L_c), `files` for whole-body hashes (L_f).
    #[arg(long, default_value = "chunks", value_parser = ["chunks", "files"])]
    kind: String,
    /// Normalization steps, comma-separated: nfkc, lower, collapse-ws, trim, or none.
    /// Recorded in the file; scans use the same.
    #[arg(long, default_value = "nfkc,lower,collapse-ws,trim")]
    normalization: String,
    /// URL prefix for files in directory inputs; a source's URL is prefix + file stem
    /// (e.g. `https://en.wikipedia.org/wiki/`).
    #[arg(long)]
    url_prefix: Option<String>,
    /// Free-text description of where the content came from.
    #[arg(long, default_value = "")]
    description: String,
    /// Directories, WARC files, NDJSON or XML dumps.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

#[derive(Args)]
struct ScanArgs {
    /// Store to write (created if missing; re-running skips pages already stored).
    #[arg(long)]
    store: PathBuf,
    /// Chunk label set (.dls, kind chunks).
    #[arg(long)]
    labelset: PathBuf,
    /// Optional file label set (.dls, kind files) for whole-body matches (L_f).
    #[arg(long)]
    file_labelset: Option<PathBuf>,
    /// Extra stop-chunk lists: text files (one chunk per line) or .dls files. May repeat.
    #[arg(long = "stop-chunks")]
    stop_chunks: Vec<PathBuf>,
    /// Do not use the built-in list of benign idioms (see `labelsets/data/default-stopchunks.txt`).
    #[arg(long)]
    no_default_stop_chunks: bool,
    /// URL prefix for directory inputs: a file's URL is prefix + relative path. With a
    /// folder whose subfolders are host names, `--url-prefix http://` gives http://HOST/PATH.
    /// Default: file://<absolute directory>/.
    #[arg(long)]
    url_prefix: Option<String>,
    /// Workers per CPU stage (clean, fingerprint, match). Default: number of cores.
    #[arg(long)]
    threads: Option<usize>,
    /// Skip URLs whose path repeats a segment sequence this many times back to back
    /// (recursion errors, §3.4.1); 0 turns the check off.
    #[arg(long, default_value_t = 3)]
    max_path_repeats: usize,
    /// Skip URLs whose neighborhood prefix is deeper than this (appendix A: 96).
    #[arg(long, default_value_t = 96)]
    max_depth: usize,
    /// Largest body read, in bytes; larger records/files are skipped and counted.
    #[arg(long, default_value_t = 64 << 20)]
    max_body_bytes: u64,
    /// Write run statistics (stage timings, counts, skips by reason) as JSON to this file.
    #[arg(long)]
    stats_json: Option<PathBuf>,
    /// Progress display.
    #[arg(long, value_enum, default_value = "auto")]
    progress: ProgressMode,
    /// Scan one partition `i/N` of the inputs (several processes or machines, one store
    /// each): inputs are numbered in order — each WARC file, each single file, and each file
    /// of a directory walk — and this one reads those numbered ≡ i (mod N). Merge the stores
    /// with `ditto report --store A --store B …`.
    #[arg(long)]
    partition: Option<crawler::partition::Partition>,
    /// Live origins of text segments (Abdel-Hamid et al. 2009) in a table of this size (e.g.
    /// 64MB), in arrival order; `ditto origins --live` prints them. Off by default.
    #[arg(long, value_parser = flags::parse_bytes)]
    origins: Option<u64>,
    /// WARC files, directories of pages, or single HTML/text files.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

#[derive(Args)]
struct ReportArgs {
    /// The store; repeat to report over several stores as one (partitioned crawls and
    /// scans): thresholds over their union, the verdicts of a single store holding it all.
    #[arg(long, required = true)]
    store: Vec<PathBuf>,
    /// `parquet` needs `-o FILE` and a build with `--features parquet`.
    #[arg(long, value_enum, default_value = "jsonl")]
    format: Format,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Report neighborhoods (URL prefixes) or single pages.
    #[arg(long, value_enum, default_value = "neighborhood")]
    level: Level,
    /// `auto` = mean + one standard deviation over all neighborhoods/pages of the store
    /// (the paper's default), or a fixed value in [0, 1].
    #[arg(long, default_value = "auto")]
    threshold: ThresholdChoice,
    /// At most this many rows.
    #[arg(long)]
    limit: Option<usize>,
    /// Leave out neighborhoods with fewer pages.
    #[arg(long, default_value_t = 1)]
    min_pages: u64,
    /// Copied passages shown per row.
    #[arg(long, default_value_t = 3)]
    evidence: usize,
    /// Sources shown per row.
    #[arg(long, default_value_t = 5)]
    sources: usize,
    /// Label set for source titles (default: the one the store was scanned with).
    #[arg(long)]
    labelset: Option<PathBuf>,
    /// Only neighborhoods nobody has labeled yet (`ditto review`).
    #[arg(long, conflicts_with = "all")]
    unreviewed: bool,
    /// Also neighborhoods labeled `false-positive` or `legitimate-mirror` (left out by default).
    #[arg(long)]
    all: bool,
    /// Pages: add `near_duplicate_of` (the earlier page of the scan or crawl whose SimHash is
    /// within 3 bits, marked live). Off by default: which of two near duplicates is "earlier"
    /// depends on the order pages were matched (threads, partitions, resumes), and the report
    /// is otherwise the same however the store was written.
    #[arg(long)]
    near_dups: bool,
}

#[derive(Args)]
struct StatsArgs {
    /// The store to summarize (a scan or crawl, finished or not).
    #[arg(long)]
    store: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Labelset(LabelsetCommand::Build(a)) => build(a),
        Command::Labelset(LabelsetCommand::Info { file, json }) => labels::info(&file, json),
        Command::Labelset(LabelsetCommand::Import(a)) => {
            a.to_config().and_then(|c| crate::analysis::discover::import(&c))
        }
        Command::Scan(a) => scan(a),
        Command::Report(a) => report_cmd(a),
        Command::Stats(a) => stats(a),
        Command::Crawl(a) => crawl_cmd(*a),
        Command::Replicas(a) => crate::analysis::replicas::run(a),
        Command::Recrawl(a) => crate::analysis::recrawl::run(*a),
        Command::Review(a) => crate::cli::review::run(a),
        Command::Labels(c) => crate::cli::review::labels_cmd(c),
        Command::Discover(a) => a.to_config().and_then(|c| crate::analysis::discover::discover(&c)),
        Command::Quilts(a) => crate::analysis::quilts::run(*a),
        Command::Origins(a) => crate::analysis::origins::run(*a),
        Command::Stopchunks(c) => crate::analysis::discover::stopchunks(&c.to_config()),
        Command::Export(c) => crate::analysis::discover::export(&c.to_config()),
        Command::Demo { out, serve: None } => crate::cli::demo::run_demo(&out, false).map(|_| ()),
        Command::Demo { out, serve: Some(addr) } => crate::cli::demo::serve_demo(&out, addr),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn build(a: BuildArgs) -> Result<()> {
    let cfg = labels::BuildConfig {
        name: a.name,
        kind: a.kind,
        normalization: a.normalization.parse().context("--normalization")?,
        min_chars: a.min_chars,
        url_prefix: a.url_prefix,
        description: a.description,
        inputs: a.inputs,
        output: a.output,
    };
    labels::build(&cfg)
}

fn scan(a: ScanArgs) -> Result<()> {
    let threads =
        a.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2));
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    let mut loaded = labels::load_for_scan(
        &a.labelset,
        a.file_labelset.as_deref(),
        &a.stop_chunks,
        !a.no_default_stop_chunks,
    )?;
    let store = Arc::new(Store::open(&a.store)?);
    store.bind_label_set(&loaded.identity)?;
    labels::add_store_stops(&mut loaded, &store)?;
    store.set_meta("labelset_path", &std::fs::canonicalize(&a.labelset)?.display().to_string())?;
    let cfg = ScanConfig {
        inputs: a.inputs,
        url_prefix: a.url_prefix,
        normalization: loaded.normalization,
        traps: TrapRules { max_repeats: a.max_path_repeats, max_depth: a.max_depth, ..TrapRules::default() },
        threads,
        batch_size: 256,
        max_body_bytes: a.max_body_bytes,
        progress: a.progress,
    };
    let part = a.partition.unwrap_or(crawler::partition::Partition::SINGLE);
    loaded.matcher.origins = a.origins.map(|m| Arc::new(crate::live::origins::LiveOrigins::new(m)));
    let stats = pipeline::run_scan_partition(&cfg, store.clone(), loaded.matcher, part)?;
    summary::print_scan(&stats, &store)?;
    if let Some(path) = a.stats_json {
        let f = std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        serde_json::to_writer_pretty(f, &stats)?;
    }
    Ok(())
}

fn report_cmd(a: ReportArgs) -> Result<()> {
    let stores = a
        .store
        .iter()
        .map(|p| Store::open(p).with_context(|| p.display().to_string()))
        .collect::<Result<Vec<_>>>()?;
    let stores: Vec<&Store> = stores.iter().collect();
    let names = labels::source_names(stores[0], a.labelset.as_deref());
    let cfg = ReportConfig {
        level: a.level,
        threshold: a.threshold,
        limit: a.limit,
        min_pages: a.min_pages,
        evidence: a.evidence,
        sources: a.sources,
    };
    let filter = match (a.unreviewed, a.all) {
        (true, _) => report::ReviewFilter::Unreviewed,
        (_, true) => report::ReviewFilter::All,
        _ => report::ReviewFilter::HideDismissed,
    };
    let (th, mut rows) = report::build_merged(&stores, names.as_ref(), &cfg, filter)?;
    if !a.near_dups {
        for r in &mut rows {
            r.near_duplicate_of = None;
        }
    }
    match (a.format, &a.output) {
        (Format::Parquet, Some(path)) => report::write_parquet(path, &th, &rows)?,
        (_, Some(path)) => {
            let f = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
            let mut out = std::io::BufWriter::new(f);
            report::write(&mut out, a.format, &th, &rows)?;
            out.flush()?;
        }
        (_, None) => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            report::write(&mut out, a.format, &th, &rows)?;
            out.flush()?;
        }
    }
    if a.format != Format::Table {
        eprintln!(
            "{} {} above threshold {:.4} ({}: mean {:.4}, sd {:.4}, over {})",
            rows.len(),
            if a.level == Level::Page { "pages" } else { "neighborhoods" },
            th.value,
            th.kind,
            th.mean,
            th.sd,
            th.population
        );
    }
    Ok(())
}

fn stats(a: StatsArgs) -> Result<()> {
    let store = Store::open(&a.store)?;
    summary::print_store(&store, a.json)
}

fn crawl_cmd(a: CrawlArgs) -> Result<()> {
    use crawler::crawl::CrawlConfig;
    use crawler::fetch::FetchConfig;
    use crawler::politeness::PolitenessConfig;
    use std::time::Duration;

    crate::crawl::check_user_agent(&a.user_agent)?;
    let mut seeds = a.seed.clone();
    if let Some(path) = &a.seeds {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading seeds {}", path.display()))?;
        seeds.extend(
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from),
        );
    }
    let store = Arc::new(Store::open(&a.store)?);
    if seeds.is_empty() && a.partition.is_none() && store.frontier_counts()? == (0, 0) {
        bail!("no seeds: give --seeds FILE or --seed URL (or resume a store with a frontier)");
    }
    let mut loaded = labels::load_for_scan(&a.labelset, None, &[], true)?;
    store.bind_label_set(&loaded.identity)?;
    labels::add_store_stops(&mut loaded, &store)?;
    store.set_meta("labelset_path", &std::fs::canonicalize(&a.labelset)?.display().to_string())?;
    let threads =
        a.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2));
    let settings = crate::crawl::CrawlSettings {
        seeds,
        user_agent: a.user_agent,
        focus: a.focus,
        scope: match a.scope {
            ScopeArg::Any => crawler::urls::Scope::Any,
            ScopeArg::Seeds => crawler::urls::Scope::SeedHosts,
            ScopeArg::Domain => crawler::urls::Scope::SameDomain,
        },
        allow_hosts: a.allow_host,
        block_hosts: a.block_host,
        resolve: a.resolve,
        allow_private: a.allow_private,
        warc_dir: a.warc_dir,
        warc_max_bytes: a.warc_max_bytes,
        crawl: CrawlConfig {
            polite: PolitenessConfig {
                min_delay: Duration::from_millis(a.min_delay_ms),
                delay_factor: a.delay_factor,
                max_crawl_delay: Duration::from_secs_f64(a.max_crawl_delay.max(0.0)),
                per_host_concurrency: a.per_host_concurrency.max(1),
                ..PolitenessConfig::default()
            },
            max_pages: a.max_pages,
            per_host_max_pages: a.per_host_max_pages,
            max_depth: a.max_depth,
            global_rate: a.rate,
            max_in_flight: a.max_in_flight.max(1),
            ..CrawlConfig::default()
        },
        fetch: FetchConfig {
            max_body_bytes: a.max_body_bytes,
            total_timeout: Duration::from_secs(a.timeout.max(1)),
            ..FetchConfig::default()
        },
        traps: TrapRules::default(),
        threads: threads.max(1),
        progress: a.progress,
        normalization: loaded.normalization,
        metrics: a.metrics,
        metrics_remote: a.metrics_remote,
    };
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let stop = stop.clone();
        let _ = ctrlc_flag(stop);
    }
    let grace = std::time::Duration::from_millis(a.exchange_grace_ms);
    let router = match (a.partition, &a.exchange_dir, &a.coordinator) {
        (Some(p), Some(dir), None) => Some(crate::crawl::partition::file_router(dir, p, grace)?),
        (Some(p), None, Some(url)) => Some(crate::crawl::partition::redis_router(url, p, grace)?),
        (Some(_), _, _) => bail!("--partition needs --coordinator redis://… or --exchange-dir DIR"),
        _ => None,
    };
    loaded.matcher.origins = a.origins.map(|m| Arc::new(crate::live::origins::LiveOrigins::new(m)));
    let summary = crate::crawl::run_partition(settings, store.clone(), loaded.matcher, stop, router)?;
    let c = &summary.crawl;
    eprintln!(
        "crawl stopped ({}): {} pages, {} requests ({} robots.txt) in {:.1}s; harvest rate {:.2} labeled chunks/page",
        c.stopped_by, c.pages, c.requests, c.robots_fetches, c.seconds, summary.harvest_rate
    );
    if !c.events.is_empty() {
        let ev: Vec<String> = c.events.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!("events: {}", ev.join(", "));
    }
    if !c.links_rejected.is_empty() {
        let ev: Vec<String> = c.links_rejected.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!("links not followed: {}", ev.join(", "));
    }
    if let Some(x) = &summary.exchange {
        let ev: Vec<String> = x.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!("link exchange: {}", ev.join(", "));
    }
    summary::print_scan(&summary.detection, &store)?;
    if let Some(path) = a.stats_json {
        let f = std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        serde_json::to_writer_pretty(f, &summary)?;
    }
    Ok(())
}

/// SIGINT sets `stop`: the crawl stops scheduling, lets fetches in flight finish and be
/// stored, and exits; a second SIGINT exits at once (the next run resumes either way).
fn ctrlc_flag(stop: Arc<std::sync::atomic::AtomicBool>) -> std::io::Result<()> {
    std::thread::Builder::new().name("sigint".into()).spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        rt.block_on(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!(
                    "stopping: finishing fetches in flight (^C again to quit now; the next run resumes)"
                );
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        });
    })?;
    Ok(())
}
