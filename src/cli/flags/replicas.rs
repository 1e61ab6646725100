//! `ditto replicas` flags.

use std::path::PathBuf;

use crate::analysis::replicas::{ReplicaFormat, ReplicasConfig};

/// `ditto replicas` options.
#[derive(Debug, clap::Args)]
pub struct ReplicasArgs {
    /// Store written by `ditto scan` or `ditto crawl`.
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: ReplicaFormat,
    /// Jaccard of template-free long-word 4-shingle sketches at or above which pages are near
    /// replicas (0.75 on this measure stands for about 0.8 over all words' shingles).
    #[arg(long, default_value_t = detector::shingles::SKETCH_NEAR_THRESHOLD)]
    pub threshold: f64,
    /// Also propose candidates by SimHash at Hamming distance ≤ K (Manku's permuted tables);
    /// `--simhash-k none` turns it off. Candidates are confirmed by overlap either way.
    #[arg(long, default_value = "3")]
    pub simhash_k: KChoice,
    /// Keep template shingles (on many pages of one host) in the comparison.
    #[arg(long)]
    pub keep_templates: bool,
    /// A shingle on at least this share of a host's pages (and at least 4 pages) is template.
    #[arg(long, default_value_t = 0.5)]
    pub template_fraction: f64,
    /// Pages with fewer template-free shingles are compared on all their shingles.
    #[arg(long, default_value_t = 20)]
    pub min_content_shingles: usize,
    /// Write the analysis counters (candidates per source, templates, ...) as JSON here.
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
    /// A near member shows up to this many differing text blocks each way (0: none).
    #[arg(long, default_value_t = 3)]
    pub diff_samples: usize,
    /// Each differing block is shortened to this many characters.
    #[arg(long, default_value_t = 200)]
    pub diff_chars: usize,
    /// A pair of directory trees is a near mirror when at least this share of each tree's
    /// pages has a replica at the same relative path in the other.
    #[arg(long, default_value_t = 0.8)]
    pub mirror_coverage: f64,
    /// Mirrors need at least this many matched pages.
    #[arg(long, default_value_t = 2)]
    pub mirror_min_files: usize,
    /// Leave the mirror rows out.
    #[arg(long)]
    pub no_mirrors: bool,
}

impl ReplicasArgs {
    pub fn to_config(&self) -> ReplicasConfig {
        ReplicasConfig {
            store: self.store.clone(),
            format: self.format,
            threshold: self.threshold,
            simhash_k: self.simhash_k.0,
            keep_templates: self.keep_templates,
            template_fraction: self.template_fraction,
            min_content_shingles: self.min_content_shingles,
            stats_json: self.stats_json.clone(),
            diff_samples: self.diff_samples,
            diff_chars: self.diff_chars,
            mirror_coverage: self.mirror_coverage,
            mirror_min_files: self.mirror_min_files,
            no_mirrors: self.no_mirrors,
        }
    }
}

/// The value of `--simhash-k` (`ditto replicas`, `ditto recrawl`): a SimHash distance below
/// 32, or `none`/`off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KChoice(pub Option<u32>);

impl std::str::FromStr for KChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "none" | "off" => Ok(KChoice(None)),
            x => x
                .parse::<u32>()
                .ok()
                .filter(|k| *k < 32)
                .map(|k| KChoice(Some(k)))
                .ok_or_else(|| format!("--simhash-k must be a number below 32 or `none`, not {x:?}")),
        }
    }
}
