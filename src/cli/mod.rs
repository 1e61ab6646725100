//! The `ditto` command line: parses arguments into plain configs for the library.

pub mod commands;
pub mod config;
pub mod demo;
pub mod exit;
pub mod flags;
pub mod log;
pub mod review;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::labelset as labels;

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
ditto labelset build --name wikipedia --url-prefix https://en.wikipedia.org/wiki/ -o wikipedia.dls ../shared/data/wikipedia/articles\n  \
ditto scan --store crawl.db --labelset wikipedia.dls some.warc.gz a-directory-of-pages/\n  \
ditto report --store crawl.db --format table",
    after_long_help = "Exit codes (every command):\n  \
0    done (also when stdout closes early, e.g. `ditto report | head`)\n  \
1    error\n  \
2    usage: a wrong flag or value, before anything is opened\n  \
3    finished with failures: some inputs could not be read (WARC records, every seed \
unreachable); the rest is stored\n  \
130  interrupted by ^C: run the same command again to resume"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Read long options from a TOML file (`store = "crawl.db"`, `max-pages = 1000`,
    /// `seed = ["https://a.example/"]`): the command line wins, then DITTO_STORE,
    /// DITTO_LABELSET, DITTO_USER_AGENT, then the file, then the defaults.
    #[arg(long, global = true, value_name = "FILE.toml")]
    config: Option<PathBuf>,
    /// Fewer log events: errors only.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    quiet: u8,
    /// More log events: -v every failed fetch, -vv every page (RUST_LOG overrides).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Log events as lines for people or as JSON objects (one per line).
    #[arg(long, global = true, value_enum, default_value = "human")]
    log_format: log::LogFormat,
}

#[derive(Subcommand)]
enum Command {
    /// Build or inspect label sets (the paper's L_c and L_f).
    #[command(subcommand)]
    Labelset(LabelsetCommand),
    /// Detect content reuse in WARC files, directories of pages, or single files.
    Scan(flags::scan::ScanArgs),
    /// Report suspicious neighborhoods (or pages) with their sources and copied passages.
    Report(flags::report::ReportArgs),
    /// Print a store's totals: pages, chunks, labeled chunks, neighborhoods, thresholds.
    Stats(flags::stats::StatsArgs),
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
    ///
    /// Memory: the frontier's queues are in memory, their durable copy in the store, and hold
    /// at most --max-queued URLs (links past it are dropped and counted); what one page can add
    /// is capped (links per page, attributes per tag, body size). Peak RSS stays under 256 MiB
    /// plus 1 KB per URL the frontier has seen (about 0.3 KB measured: the queued entries and
    /// the seen set; sled's cache is capped at 8 MiB), at the default settings with 2 threads: URLs seen are
    /// at most --max-queued plus the pages fetched, about 1.3 GiB at the defaults. Pages held
    /// at once (up to --max-in-flight fetches plus the pipeline's queues) cost their size on
    /// top (docs/GUIDE.md, "Limits on hostile input").
    Crawl(Box<flags::crawl::CrawlArgs>),
    /// Clusters of exact and near replicas among a store's pages (SimHash + shingle overlap).
    Replicas(flags::replicas::ReplicasArgs),
    /// Refresh a crawl fetching one page per replica cluster (members only when it changed).
    Recrawl(Box<flags::recrawl::RecrawlArgs>),
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
    Quilts(Box<flags::quilts::QuiltsArgs>),
    /// Origin of each page's text segments in arrival order, in fixed memory (Abdel-Hamid
    /// et al. 2009): dominant origin, copied share, novel segments.
    Origins(Box<flags::origins::OriginsArgs>),
    /// Check a store (`ditto store check --store PATH`).
    #[command(subcommand)]
    Store(flags::store::StoreCommand),
    /// Print a shell completion script (e.g. `ditto completions bash > /etc/bash_completion.d/ditto`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write man pages (ditto.1, ditto-crawl.1, …) into a directory.
    Man {
        /// Where the pages go (created if missing).
        dir: PathBuf,
    },
}

/// This command as a store's owner file names it: `ditto crawl`, `ditto labels export`, …
fn holder_name() -> String {
    let words: Vec<String> =
        std::env::args_os().skip(1).take(2).map(|a| a.to_string_lossy().into_owned()).collect();
    let groups = ["labels", "labelset", "stopchunks", "export", "store"];
    match words.as_slice() {
        [group, sub, ..] if groups.contains(&group.as_str()) => format!("ditto {group} {sub}"),
        [cmd, ..] => format!("ditto {cmd}"),
        [] => "ditto".into(),
    }
}

#[derive(Subcommand)]
enum LabelsetCommand {
    /// Build a label set from directories of HTML/text, WARC files, or Wikipedia dumps
    /// (Wikimedia Enterprise HTML NDJSON and its .tar archives, MediaWiki XML, multistream
    /// included; gzip/bzip2 accepted). Inputs are told by content, not name.
    Build(flags::labelset::BuildArgs),
    /// Combine label sets built apart (e.g. per dump part, on several machines) into one:
    /// the entries, sources and counts of one build over all their inputs, in this order.
    Merge(flags::labelset::MergeArgs),
    /// Turn a hash list (HASH<TAB>COUNT<TAB>SAMPLE_URL lines, as `examples/spark/discover.py`
    /// writes) into a blind label set whose sources are the sample URLs, the same file
    /// `ditto discover` writes for the same data and threshold.
    Import(flags::labelset_import::ImportArgs),
    /// Verify a label set completely: every checksum and the structure (order, filter,
    /// index, sources). Exit status 0 when sound, 1 when damaged.
    Check(flags::labelset::CheckArgs),
    /// Print a label set's header and counts.
    Info {
        /// The label-set file (.dls).
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn main() -> ExitCode {
    exit::quiet_broken_pipe_panics();
    let args = match config::expand(std::env::args_os().collect(), &Cli::command()) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let cli = Cli::parse_from(args);
    store::lifecycle::set_holder_name(&holder_name());
    log::init(cli.quiet, cli.verbose, cli.log_format);
    let result = match cli.command {
        Command::Labelset(LabelsetCommand::Build(a)) => commands::labelset::build(&a),
        Command::Labelset(LabelsetCommand::Info { file, json }) => labels::info(&file, json),
        Command::Labelset(LabelsetCommand::Check(a)) => commands::labelset::check(&a),
        Command::Labelset(LabelsetCommand::Merge(a)) => commands::labelset::merge(&a),
        Command::Labelset(LabelsetCommand::Import(a)) => {
            a.to_config().and_then(|c| crate::analysis::discover::import(&c))
        }
        Command::Scan(a) => commands::scan::run(&a),
        Command::Report(a) => commands::report::run(&a),
        Command::Stats(a) => commands::stats::run(&a),
        Command::Crawl(a) => commands::crawl::run(&a),
        Command::Replicas(a) => crate::analysis::replicas::run(a.to_config()),
        Command::Recrawl(a) => crate::analysis::recrawl::run(a.to_config()),
        Command::Review(a) => {
            labels::require_label_set_at(&a.store, "review").and_then(|()| crate::cli::review::run(a))
        }
        Command::Labels(c) => crate::cli::review::labels_cmd(c),
        Command::Discover(a) => a.to_config().and_then(|c| crate::analysis::discover::discover(&c)),
        Command::Quilts(a) => crate::analysis::quilts::run(a.to_config()),
        Command::Origins(a) => crate::analysis::origins::run(a.to_config()),
        Command::Stopchunks(c) => crate::analysis::discover::stopchunks(&c.to_config()),
        Command::Export(c) => crate::analysis::discover::export(&c.to_config()),
        Command::Store(flags::store::StoreCommand::Check(a)) => commands::store::check(&a),
        Command::Demo { out, serve: None } => crate::cli::demo::run_demo(&out, false).map(|_| ()),
        Command::Demo { out, serve: Some(addr) } => crate::cli::demo::serve_demo(&out, addr),
        Command::Completions { shell } => config::completions(shell, Cli::command()),
        Command::Man { dir } => config::man_pages(&dir, Cli::command()),
    };
    exit::exit_code(result)
}
