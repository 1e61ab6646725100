//! `ditto crawl` flags, and their translation into [`CrawlSettings`]: the one place crawl
//! flags become settings.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use crawler::crawl::CrawlConfig;
use crawler::fetch::FetchConfig;
use crawler::politeness::PolitenessConfig;
use detector::{Normalization, TrapRules};

use crate::crawl::{CrawlSettings, FocusOptions};
use crate::pipeline::pool::worker_count;
use crate::pipeline::progress::ProgressMode;
use crate::pipeline::stages::Focus;

#[derive(Args)]
pub struct CrawlArgs {
    /// Store to write; holds the frontier too, so the same command resumes.
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    /// Live origins of text segments (Abdel-Hamid et al. 2009) in a table of this size (e.g.
    /// 64MB), in the order pages are stored; `ditto origins --live` prints them. Off by
    /// default.
    #[arg(long, value_parser = super::parse_bytes)]
    pub origins: Option<u64>,
    /// Keep each page's cleaned text in the store. Without `--warc-dir` it is kept anyway
    /// (the crawl leaves no other copy); with it, evidence is read back from the WARC files.
    #[arg(long)]
    pub keep_text: bool,
    /// Chunk label set (.dls) to detect while crawling. Required with --focus labeled (the
    /// default), which ranks links by it; --focus bfs crawls without one (pages are stored
    /// with nothing labeled: `report` and `review` then have nothing to judge).
    #[arg(long, env = "DITTO_LABELSET")]
    pub labelset: Option<PathBuf>,
    /// What to match: `passage` (default) finds labeled passages in edited copies (words
    /// changed, paragraphs split or joined) as well as exact chunks, where the label set has a
    /// passage table; `exact` matches whole normalized paragraphs only (Ardi & Heidemann's
    /// method as published: the same figures as ditto before passages).
    #[arg(long = "match", value_enum, default_value = "passage")]
    pub match_mode: crate::labelset::MatchMode,
    /// File of seed URLs, one per line (# comments allowed).
    #[arg(long)]
    pub seeds: Option<PathBuf>,
    /// A seed URL (may repeat).
    #[arg(long = "seed")]
    pub seed: Vec<String>,
    /// Honest User-Agent with a contact URL or e-mail, e.g. "ditto/0.1 (+https://example.org/bot)".
    /// Required. Its product token ("ditto") is what robots.txt groups are matched against.
    #[arg(long, env = "DITTO_USER_AGENT", required_unless_present = "explain_priority")]
    pub user_agent: Option<String>,
    /// Stop after this many page fetches (robots.txt not counted): the crawl's page budget.
    #[arg(long, default_value_t = 100_000)]
    pub max_pages: u64,
    /// Most pages fetched from one host. Default: 1000 with `--scope any` (the default of a
    /// focused crawl: the page budget then spreads over at least max-pages/1000 hosts, so a
    /// few large sites cannot take all of it), 10000 with `--scope domain` or `seeds`.
    #[arg(long)]
    pub per_host_max_pages: Option<u64>,
    /// Deepest link distance from a seed.
    #[arg(long, default_value_t = 20)]
    pub max_depth: u32,
    /// Most links taken from one page; the rest are dropped and counted
    /// (`links_rejected.page_link_cap` in the stats).
    #[arg(long, default_value_t = crawler::crawl::DEFAULT_MAX_LINKS_PER_PAGE)]
    pub max_links_per_page: usize,
    /// Most URLs waiting in the frontier (queued or being fetched). Links found while it is
    /// full are dropped and counted (`links_rejected.frontier_full` in the stats; a later page
    /// or run may queue them again). It bounds the crawl's memory: the queues are kept in
    /// memory (their durable copy in the store), about 0.3 KB per queued URL.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_queued: u64,
    /// Write every fetch (request + response) to rotating WARC/1.1 files here.
    #[arg(long)]
    pub warc_dir: Option<PathBuf>,
    /// Rotate WARC files past this size.
    #[arg(long, default_value_t = 1 << 30)]
    pub warc_max_bytes: u64,
    /// `labeled` (the default; needs --labelset): URLs by expected yield: anchor text and URL
    /// tokens naming label-set titles, links from copying pages and bad neighborhoods,
    /// tunnelling through a few pages, and per-host learning (hosts whose pages carry labeled
    /// chunks first, hosts with text but none fall behind); `bfs`: breadth first (within a
    /// depth, hosts already contacted before new ones), with or without --labelset.
    #[arg(long, value_enum, default_value = "labeled")]
    pub focus: Focus,
    /// `--focus labeled`: the best-ranked hosts served first, at most this many (each still
    /// polite); the others get only the request slots these leave free (--focus-spare).
    #[arg(long, default_value_t = 64)]
    pub focus_hosts: usize,
    /// `--focus labeled`: beyond the best --focus-min-hosts hosts, fetch only from hosts ranked at least
    /// this share of the best host's rank (0 to 1; 0 fetches from all --focus-hosts, faster
    /// but spending more of the page budget on hosts that promise less).
    #[arg(long, default_value_t = 0.1)]
    pub focus_rank_span: f64,
    /// `--focus labeled`: this many of the best-ranked hosts are always fetched from,
    /// whatever their rank (--focus-rank-span applies beyond them): more explores more and
    /// spends more of the page budget on hosts that promise less.
    #[arg(long, default_value_t = crawler::crawl::FOCUS_MIN_HOSTS)]
    pub focus_min_hosts: usize,
    /// `--focus labeled`: when the best-ranked hosts (--focus-hosts, --focus-min-hosts,
    /// --focus-rank-span) leave request slots free, up to this share of --max-in-flight (0
    /// to 1) goes to the next-best hosts, best first, so the crawl does not idle while hosts
    /// are due (as fast as politeness allows; the slots kept free hold the wait of the best
    /// hosts' requests short); 0 keeps the page budget for the best-ranked hosts, waiting for
    /// their politeness delays: more labeled chunks per page when --max-pages ends the
    /// crawl, far slower.
    #[arg(long, default_value_t = crawler::crawl::FOCUS_SPARE)]
    pub focus_spare: f64,
    /// Whose sitemaps to read (robots.txt `Sitemap:` lines, else /sitemap.xml; sitemap indexes
    /// and gzipped sitemaps too, at most 50,000 URLs and 50 MB per file): `auto` = the hosts a
    /// focused crawl finds copying (`--focus labeled`; none with `--focus bfs`), `seeds` = the
    /// seeds' hosts too, from the start (with either --focus), `off` = none. Their URLs enter
    /// the frontier as links do (scope, robots.txt, traps, --max-depth, --per-host-max-pages),
    /// at the host's priority; sitemap requests are polite and not counted as pages.
    #[arg(long, value_enum, default_value = "auto")]
    pub sitemaps: SitemapsArg,
    /// Say why URL was fetched when it was (its link's evidence, its host's rank at the
    /// time), from the focus log of --store (`focus-log.jsonl`, written by `--focus labeled`
    /// crawls), and exit.
    #[arg(long, value_name = "URL")]
    pub explain_priority: Option<String>,
    /// Which links to follow: `any` = every host, `domain` = the seeds' registrable domains,
    /// `seeds` = the seeds' hosts. Default: `any` with `--focus labeled` (the default), since
    /// copies of labeled content sit on other domains than the sites that link to them; the
    /// crawl stays bounded by --max-pages and --per-host-max-pages and polite on every host
    /// (robots.txt, one request at a time, --min-delay-ms). `domain` with `--focus bfs`, and
    /// `--scope domain` keeps a focused crawl on the seeds' domains, as before.
    #[arg(long, value_enum)]
    pub scope: Option<ScopeArg>,
    /// Also allow these hosts (`host` or `*.suffix`; may repeat, or list several separated by
    /// commas).
    #[arg(long = "allow-host", value_delimiter = ',')]
    pub allow_host: Vec<String>,
    /// Never fetch these hosts (`host` or `*.suffix`; may repeat, or list several separated by
    /// commas).
    #[arg(long = "block-host", value_delimiter = ',')]
    pub block_host: Vec<String>,
    /// Map HOST (or `*.suffix`) to ADDR:PORT instead of DNS, e.g. for a test web on loopback;
    /// mapped hosts may be private or loopback addresses. May repeat, or list several
    /// separated by commas.
    #[arg(long, value_delimiter = ',')]
    pub resolve: Vec<String>,
    /// Allow private, loopback and link-local addresses (intranet crawls). Off by default:
    /// such addresses are refused, also after DNS resolution and redirects.
    #[arg(long)]
    pub allow_private: bool,
    /// Minimum delay between requests to one host, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub min_delay_ms: u64,
    /// Delay = factor × the host's last response time, when longer than the minimum.
    #[arg(long, default_value_t = 2.0)]
    pub delay_factor: f64,
    /// Longest robots.txt Crawl-delay honored, in seconds.
    #[arg(long, default_value_t = 30.0)]
    pub max_crawl_delay: f64,
    /// Requests in flight per host.
    #[arg(long, default_value_t = 1)]
    pub per_host_concurrency: usize,
    /// What the per-host rules (one request at a time, --min-delay-ms, backoff) apply to:
    /// `host` (each host name), `domain` (each registrable domain: its hosts share one
    /// queue, delay and --per-host-max-pages), or `ip` (each IP address: the per-address
    /// bound below takes --per-host-concurrency and --min-delay-ms where they are stricter).
    /// The per-address bound applies with every key. Keep one key for a store: its queue is
    /// kept by it.
    #[arg(long, value_enum, default_value = "host")]
    pub politeness_key: PolitenessKeyArg,
    /// Requests in flight to one IP address over all its hosts (a farm of 500 domains on one
    /// server gets this many at once, not 500). Addresses are learnt before a host's first
    /// request (--resolve mappings, or DNS answers kept for 5 minutes). 0: no bound.
    #[arg(long, default_value_t = crawler::crawl::DEFAULT_PER_IP_IN_FLIGHT)]
    pub per_ip_in_flight: usize,
    /// Least time between the starts of two requests to one IP address over all its hosts,
    /// in milliseconds. Default: --min-delay-ms / 10 (100 at the default: an address gets at
    /// most 10 requests a second where each host gets 1). 0 with --per-ip-in-flight 0: no
    /// per-address bound (as for a benchmark web whose hosts all sit on one loopback server).
    #[arg(long)]
    pub per_ip_min_delay_ms: Option<u64>,
    /// Global cap on requests per second over all hosts, fractions exact (0.2: one request
    /// every 5 s); bursts of up to the whole part after a quiet spell.
    #[arg(long, value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// Requests in flight over all hosts (still one per host). Each may hold a body of up to
    /// --max-body-bytes until the pipeline takes it (twice that for a compressed one: as sent,
    /// for the WARC record, and decoded).
    #[arg(long, default_value_t = crawler::crawl::DEFAULT_MAX_IN_FLIGHT)]
    pub max_in_flight: usize,
    /// Largest body kept per page, in bytes, as sent and once decompressed (bigger bodies are
    /// cut and skipped).
    #[arg(long, default_value_t = 10 << 20)]
    pub max_body_bytes: usize,
    /// Whole-fetch timeout in seconds (connect 10 s, idle read 20 s).
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Workers per CPU stage of detection. Default: number of cores.
    #[arg(long, value_parser = super::parse_threads)]
    pub threads: Option<usize>,
    /// Retire a host after this many failures in a row: connections refused, reset or timed
    /// out, DNS and TLS failures, and robots.txt unreachable (5xx or a broken response; asked
    /// again after the host's backoff). A retired host's queued URLs, and those it gets while
    /// retired, are finished as failed without requests (`retired_url_{reason}` in the stats,
    /// a line each in --failure-log). 0: never retire (a host whose robots.txt is unreachable
    /// then waits 10 minutes and is asked again).
    #[arg(long, default_value_t = 3)]
    pub retire_after: u32,
    /// How long a host stays retired, in seconds; after that it is tried afresh should it get
    /// URLs (a new run tries every host).
    #[arg(long, default_value_t = 3600)]
    pub retire_for_secs: u64,
    /// Write the crawl and detection statistics as JSON to this file.
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
    /// Conditional requests: a file of `URL<TAB>ETag<TAB>Last-Modified` lines (an empty field
    /// for none). Those URLs are fetched with `If-None-Match` / `If-Modified-Since`; a 304
    /// finishes one as `not_modified`, without a body. `ditto recrawl` writes it from the
    /// earlier crawl's WARC records.
    #[arg(long, value_name = "FILE")]
    pub validators: Option<PathBuf>,
    /// Append one JSON line per failed or dropped URL to this file: `{"url", "event",
    /// "reason"}` (fetch errors, HTTP errors, bodies over the cap, non-text types, URLs of
    /// retired hosts, and every robots.txt fetch that failed, under its robots.txt URL).
    #[arg(long)]
    pub failure_log: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto")]
    pub progress: ProgressMode,
    /// Serve Prometheus metrics (requests, pages, hosts active/queued, in flight, events by
    /// kind) at http://ADDR/metrics while crawling, e.g. 127.0.0.1:9100.
    #[arg(long)]
    pub metrics: Option<std::net::SocketAddr>,
    /// Allow --metrics on a non-loopback address.
    #[arg(long)]
    pub metrics_remote: bool,
    /// Crawl one partition `i/N` of a host-partitioned crawl: this process fetches only the
    /// hosts whose registrable domain hashes to i (FNV-1a mod N) and sends links to other
    /// hosts to their owners through --coordinator (Redis) or --exchange-dir (files). All
    /// partitions may get the same seeds.
    #[arg(long)]
    pub partition: Option<crawler::partition::Partition>,
    /// Shared directory through which partitions exchange links (inboxes, states).
    #[arg(long, requires = "partition", conflicts_with = "coordinator")]
    pub exchange_dir: Option<PathBuf>,
    /// Redis through which partitions exchange links (one stream per partition, consumer
    /// groups, acknowledged after queueing), e.g. redis://127.0.0.1:6379 or
    /// redis://127.0.0.1:6379/2 for database 2 (one database per crawl).
    #[arg(long, requires = "partition")]
    pub coordinator: Option<String>,
    /// A partition stops once every partition has been idle, with no link in transit, for
    /// this long (milliseconds).
    #[arg(long, default_value_t = 2000)]
    pub exchange_grace_ms: u64,
}

/// Pages one host gives a crawl by default with `--scope any` ([`CrawlArgs::per_host_max_pages`]).
pub const PER_HOST_PAGES_ANY: u64 = 1_000;
/// Pages one host gives a crawl by default with `--scope domain` or `seeds`.
pub const PER_HOST_PAGES_DOMAIN: u64 = 10_000;

/// `--rate`: a positive number of requests per second.
fn parse_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 1e-9 => Ok(r),
        _ => Err("expected a positive number of requests per second, e.g. 0.2 or 10".to_string()),
    }
}

/// `--politeness-key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PolitenessKeyArg {
    Host,
    Domain,
    Ip,
}

impl From<PolitenessKeyArg> for crawler::crawl::PolitenessKey {
    fn from(k: PolitenessKeyArg) -> Self {
        match k {
            PolitenessKeyArg::Host => crawler::crawl::PolitenessKey::Host,
            PolitenessKeyArg::Domain => crawler::crawl::PolitenessKey::Domain,
            PolitenessKeyArg::Ip => crawler::crawl::PolitenessKey::Ip,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SitemapsArg {
    Auto,
    Seeds,
    Off,
}

impl From<SitemapsArg> for crawler::crawl::SitemapPolicy {
    fn from(s: SitemapsArg) -> Self {
        match s {
            SitemapsArg::Auto => crawler::crawl::SitemapPolicy { ranked: true, seeds: false },
            SitemapsArg::Seeds => crawler::crawl::SitemapPolicy { ranked: true, seeds: true },
            SitemapsArg::Off => crawler::crawl::SitemapPolicy { ranked: false, seeds: false },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeArg {
    Any,
    Seeds,
    Domain,
}

impl From<ScopeArg> for crawler::urls::Scope {
    fn from(s: ScopeArg) -> Self {
        match s {
            ScopeArg::Any => crawler::urls::Scope::Any,
            ScopeArg::Seeds => crawler::urls::Scope::SeedHosts,
            ScopeArg::Domain => crawler::urls::Scope::SameDomain,
        }
    }
}

impl ScopeArg {
    /// The name `--scope` takes.
    pub fn name(self) -> &'static str {
        match self {
            ScopeArg::Any => "any",
            ScopeArg::Seeds => "seeds",
            ScopeArg::Domain => "domain",
        }
    }
}

impl CrawlArgs {
    /// `--scope`, or its default: `any` for a focused crawl (`--focus labeled`), which goes
    /// where the copies are, `domain` for breadth first.
    pub fn scope(&self) -> ScopeArg {
        self.scope.unwrap_or(match self.focus {
            Focus::Labeled => ScopeArg::Any,
            Focus::Bfs => ScopeArg::Domain,
        })
    }

    /// `--per-host-max-pages`, or its default for the scope ([`PER_HOST_PAGES_ANY`],
    /// [`PER_HOST_PAGES_DOMAIN`]).
    pub fn per_host_max_pages(&self) -> u64 {
        self.per_host_max_pages.unwrap_or(match self.scope() {
            ScopeArg::Any => PER_HOST_PAGES_ANY,
            ScopeArg::Seeds | ScopeArg::Domain => PER_HOST_PAGES_DOMAIN,
        })
    }

    /// One line saying where the crawl may go and what bounds it, with which of it are
    /// defaults (printed when a crawl starts).
    pub fn bounds_line(&self) -> String {
        let scope = self.scope();
        let why = match (self.scope, scope) {
            (Some(_), _) => String::new(),
            (None, ScopeArg::Any) => {
                " (the default of --focus labeled: copies sit on other domains; --scope domain keeps to the seeds' domains)"
                    .to_string()
            }
            (None, _) => " (the default of --focus bfs)".to_string(),
        };
        let where_to = match scope {
            ScopeArg::Any => "links to any host",
            ScopeArg::Domain => "links within the seeds' registrable domains",
            ScopeArg::Seeds => "links within the seeds' hosts",
        };
        format!(
            "scope {}{why}: follows {where_to}, at most {} pages, {} per host, {} links deep, \
             {} URLs queued; robots.txt and at least {} ms between requests on every host{}",
            scope.name(),
            self.max_pages,
            self.per_host_max_pages(),
            self.max_depth,
            self.max_queued,
            self.min_delay_ms,
            self.per_ip_line()
        )
    }

    /// `--per-ip-min-delay-ms`, or its default: a tenth of `--min-delay-ms`.
    pub fn per_ip_gap_ms(&self) -> u64 {
        self.per_ip_min_delay_ms.unwrap_or(self.min_delay_ms / 10)
    }

    /// The per-address bound, as the bounds line says it.
    fn per_ip_line(&self) -> String {
        let gap = self.per_ip_gap_ms();
        match (self.per_ip_in_flight, gap) {
            (0, 0) => ", no bound per IP address".to_string(),
            (0, g) => format!(", at least {g} ms between requests to one IP address"),
            (n, 0) => format!(", at most {n} at once to one IP address"),
            (n, g) => format!(", at most {n} at once and {g} ms apart to one IP address"),
        }
    }

    /// The crawl's settings; `seeds` are the URLs from `--seed` and `--seeds`, and
    /// `normalization` is the label set's.
    pub fn to_settings(
        &self,
        seeds: Vec<String>,
        normalization: Normalization,
    ) -> anyhow::Result<CrawlSettings> {
        let focus_opts = match self.focus {
            Focus::Bfs => FocusOptions::default(),
            Focus::Labeled => FocusOptions {
                titles: crate::labelset::source_titles(self.labelset()?)?,
                log: Some(crate::pipeline::focus::log_path_for(&self.store)),
                hosts: self.focus_hosts.max(1),
                rank_span: self.focus_rank_span,
            },
        };
        Ok(CrawlSettings {
            seeds,
            focus_opts,
            user_agent: self.user_agent()?.to_string(),
            focus: self.focus,
            scope: self.scope().into(),
            allow_hosts: self.allow_host.clone(),
            block_hosts: self.block_host.clone(),
            resolve: self.resolve.clone(),
            allow_private: self.allow_private,
            warc_dir: self.warc_dir.clone(),
            warc_max_bytes: self.warc_max_bytes,
            crawl: CrawlConfig {
                polite: PolitenessConfig {
                    min_delay: Duration::from_millis(self.min_delay_ms),
                    delay_factor: self.delay_factor,
                    max_crawl_delay: Duration::from_secs_f64(self.max_crawl_delay.max(0.0)),
                    per_host_concurrency: self.per_host_concurrency.max(1),
                    ..PolitenessConfig::default()
                },
                max_pages: self.max_pages,
                per_host_max_pages: self.per_host_max_pages(),
                max_depth: self.max_depth,
                global_rate: self.rate,
                max_in_flight: self.max_in_flight.max(1),
                focus_min_hosts: self.focus_min_hosts,
                focus_spare: self.focus_spare,
                max_links_per_page: self.max_links_per_page.max(1),
                servers: crawler::crawl::ServerConfig {
                    key: self.politeness_key.into(),
                    per_ip_in_flight: self.per_ip_in_flight,
                    per_ip_min_gap: Duration::from_millis(self.per_ip_gap_ms()),
                },
                retire: crawler::crawl::RetireConfig {
                    after_failures: self.retire_after,
                    retire_for: Duration::from_secs(self.retire_for_secs),
                },
                sitemaps: self.sitemaps.into(),
                failure_log: match &self.failure_log {
                    Some(path) => {
                        let f = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(path)
                            .map_err(|e| anyhow::anyhow!("--failure-log {}: {e}", path.display()))?;
                        Some(crawler::crawl::FailureLog::new(Box::new(std::io::BufWriter::new(f))))
                    }
                    None => None,
                },
                ..CrawlConfig::default()
            },
            fetch: FetchConfig {
                max_body_bytes: self.max_body_bytes,
                total_timeout: Duration::from_secs(self.timeout.max(1)),
                validators: std::sync::Arc::new(match &self.validators {
                    Some(path) => crawler::validators::Validators::parse_list(
                        &std::fs::read_to_string(path)
                            .map_err(|e| anyhow::anyhow!("--validators {}: {e}", path.display()))?,
                    ),
                    None => Default::default(),
                }),
                ..FetchConfig::default()
            },
            traps: TrapRules::default(),
            threads: worker_count(self.threads)?,
            progress: self.progress,
            normalization,
            metrics: self.metrics,
            metrics_remote: self.metrics_remote,
        })
    }

    /// `--labelset`, which `--focus labeled` (the default) needs.
    pub fn labelset(&self) -> anyhow::Result<&std::path::Path> {
        self.labelset.as_deref().ok_or_else(|| {
            anyhow::anyhow!(
                "--labelset FILE.dls is required with --focus labeled (the default), which ranks links by \
                 it; --focus bfs crawls without one"
            )
        })
    }

    /// `--user-agent` (required unless `--explain-priority`).
    pub fn user_agent(&self) -> anyhow::Result<&str> {
        self.user_agent.as_deref().ok_or_else(|| anyhow::anyhow!("--user-agent is required"))
    }

    /// The seed URLs from `--seed` and the `--seeds` file (blank lines and `#` comments
    /// left out).
    pub fn seed_urls(&self) -> anyhow::Result<Vec<String>> {
        use anyhow::Context;
        let mut seeds = self.seed.clone();
        if let Some(path) = &self.seeds {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("reading seeds {}", path.display()))?;
            seeds.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(String::from),
            );
        }
        Ok(seeds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        a: CrawlArgs,
    }

    fn parse(extra: &[&str]) -> CrawlArgs {
        let base = ["crawl", "--store", "s.db", "--labelset", "w.dls", "--user-agent", "t/1 (+http://t/)"];
        match Cmd::try_parse_from(base.iter().chain(extra)) {
            Ok(c) => c.a,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn breadth_first_needs_no_label_set() {
        let base = ["crawl", "--store", "s.db", "--user-agent", "t/1 (+http://t/)", "--focus", "bfs"];
        let a = Cmd::try_parse_from(base).map(|c| c.a).expect("bfs without --labelset parses");
        assert!(a.labelset.is_none());
        let s = a.to_settings(vec!["http://a.test/".into()], Normalization::default()).expect("settings");
        assert_eq!(s.focus, Focus::Bfs);
        // The focused crawl says what it needs.
        let labeled = Cmd::try_parse_from(&base[..5]).map(|c| c.a).expect("parses");
        let e = labeled.to_settings(vec![], Normalization::default()).err().expect("refused").to_string();
        assert!(e.contains("--labelset FILE.dls is required with --focus labeled"), "{e}");
        assert!(e.contains("--focus bfs crawls without one"), "{e}");
    }

    #[test]
    fn a_focused_crawl_goes_to_any_domain_within_a_budget_by_default() {
        let a = parse(&[]);
        assert_eq!(a.scope(), ScopeArg::Any);
        assert_eq!((a.max_pages, a.per_host_max_pages()), (100_000, PER_HOST_PAGES_ANY));
        assert_eq!(a.min_delay_ms, 1000);
        let line = a.bounds_line();
        assert!(line.starts_with("scope any (the default of --focus labeled"), "{line}");
        assert!(line.contains("at most 100000 pages, 1000 per host"), "{line}");
        assert!(line.ends_with(", at most 8 at once and 100 ms apart to one IP address"), "{line}");
        assert_eq!(parse(&["--min-delay-ms", "20"]).per_ip_gap_ms(), 2);
        assert_eq!(parse(&["--min-delay-ms", "20", "--per-ip-min-delay-ms", "7"]).per_ip_gap_ms(), 7);
        let none = parse(&["--per-ip-in-flight", "0", "--per-ip-min-delay-ms", "0"]);
        assert!(none.bounds_line().ends_with(", no bound per IP address"));
        // Breadth first keeps to the seeds' domains, and an explicit scope is kept.
        let bfs = parse(&["--focus", "bfs"]);
        assert_eq!((bfs.scope(), bfs.per_host_max_pages()), (ScopeArg::Domain, PER_HOST_PAGES_DOMAIN));
        let dom = parse(&["--scope", "domain"]);
        assert_eq!((dom.scope(), dom.per_host_max_pages()), (ScopeArg::Domain, PER_HOST_PAGES_DOMAIN));
        assert!(dom.bounds_line().starts_with("scope domain: follows links within"), "{}", dom.bounds_line());
        let capped = parse(&["--per-host-max-pages", "7", "--focus", "bfs", "--scope", "any"]);
        assert_eq!((capped.scope(), capped.per_host_max_pages()), (ScopeArg::Any, 7));
    }
}
