//! The `ditto` command line: parses arguments into plain configs for the library.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use detector::TrapRules;
use ditto::pipeline::{self, progress::ProgressMode, ScanConfig};
use ditto::report::{self, Format, Level, ReportConfig, ThresholdChoice};
use ditto::{labels, summary};
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
}

#[derive(Subcommand)]
enum LabelsetCommand {
    /// Build a label set from directories of HTML/text, WARC files, or Wikipedia dumps
    /// (Wikimedia Enterprise HTML NDJSON, MediaWiki XML; .gz/.bz2 accepted).
    Build(BuildArgs),
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
    /// WARC files, directories of pages, or single HTML/text files.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

#[derive(Args)]
struct ReportArgs {
    #[arg(long)]
    store: PathBuf,
    #[arg(long, value_enum, default_value = "jsonl")]
    format: Format,
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
}

#[derive(Args)]
struct StatsArgs {
    #[arg(long)]
    store: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Labelset(LabelsetCommand::Build(a)) => build(a),
        Command::Labelset(LabelsetCommand::Info { file, json }) => labels::info(&file, json),
        Command::Scan(a) => scan(a),
        Command::Report(a) => report_cmd(a),
        Command::Stats(a) => stats(a),
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
    let loaded = labels::load_for_scan(
        &a.labelset,
        a.file_labelset.as_deref(),
        &a.stop_chunks,
        !a.no_default_stop_chunks,
    )?;
    let store = Arc::new(Store::open(&a.store)?);
    store.bind_label_set(&loaded.identity)?;
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
    let stats = pipeline::run_scan(&cfg, store.clone(), loaded.matcher)?;
    summary::print_scan(&stats, &store)?;
    if let Some(path) = a.stats_json {
        let f = std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        serde_json::to_writer_pretty(f, &stats)?;
    }
    Ok(())
}

fn report_cmd(a: ReportArgs) -> Result<()> {
    let store = Store::open(&a.store)?;
    let names = labels::source_names(&store, a.labelset.as_deref());
    let cfg = ReportConfig {
        level: a.level,
        threshold: a.threshold,
        limit: a.limit,
        min_pages: a.min_pages,
        evidence: a.evidence,
        sources: a.sources,
    };
    let (th, rows) = report::build(&store, names.as_ref(), &cfg)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    report::write(&mut out, a.format, &th, &rows)?;
    out.flush()?;
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
