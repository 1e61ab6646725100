//! The rows of a report, as every output format (JSON Lines, CSV, table, Parquet) writes them.
//! Field names are stable: docs/report-schema.md.

use serde::Serialize;

/// The threshold a report used, and the population it came from.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ThresholdInfo {
    /// `mean+sd` or `fixed`.
    pub kind: &'static str,
    pub value: f64,
    pub mean: f64,
    pub sd: f64,
    /// Neighborhoods (or pages) the mean and σ were computed over.
    pub population: u64,
    /// Above the threshold (with enough pages), before review labels and `--limit` left any
    /// out: what the messages count. Not part of the report's schema.
    #[serde(skip)]
    pub above: u64,
    /// Of those, left out for their review label (`--all` shows them).
    #[serde(skip)]
    pub reviewed_left_out: u64,
    /// The highest ones at or below the threshold (name, badness), best first, so that a
    /// report listing nothing shows where the nearest sit.
    #[serde(skip)]
    pub nearest_below: Vec<(String, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceRef {
    pub id: u32,
    pub title: Option<String>,
    pub url: Option<String>,
    /// Labeled chunk occurrences from this source.
    pub chunks: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvidenceRow {
    /// The page the passage was found on.
    pub url: String,
    pub passage: String,
    pub source_id: u32,
    pub source_title: Option<String>,
    pub source_url: Option<String>,
    /// How the passage was found: `exact` (the whole normalized paragraph is in the label
    /// set) or `passage` (labeled passages cover at least half of its words: an edited copy).
    #[serde(rename = "match")]
    pub match_kind: &'static str,
    /// With `--source-pages`: the source paragraph the passage was copied from (shortened as
    /// `passage` is) ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_passage: Option<String>,
    /// ... and the words that differ, on the page only and in the source only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differs: Option<crate::source::labeled::WordChanges>,
}

impl EvidenceRow {
    /// The row for evidence `e` of page `p`.
    /// `title`/`url` name the source; `source_passage` is its paragraph the passage came
    /// from, when the sources' text is at hand (`--source-pages`).
    pub fn of(
        p: &store::PageRecord,
        e: &store::Evidence,
        (title, url): (Option<String>, Option<String>),
        source_passage: Option<String>,
    ) -> Self {
        let differs = source_passage
            .as_deref()
            .and_then(|s| crate::source::labeled::word_changes(s, &e.passage, e.passage.ends_with('…')));
        EvidenceRow {
            url: p.url.clone(),
            passage: e.passage.clone(),
            source_id: e.source,
            source_title: title,
            source_url: url,
            match_kind: match_kind(p, e),
            source_passage: source_passage
                .map(|s| crate::source::text::shorten_passage(&s, crate::source::text::PASSAGE_CHARS)),
            differs,
        }
    }
}

/// How evidence `e` of page `p` was found: `passage` when its block counts as labeled
/// through labeled passages (an edited copy), else `exact`. The one rule of every report
/// and of the `ditto_detect` wheel (`crate::api`).
pub fn match_kind(p: &store::PageRecord, e: &store::Evidence) -> &'static str {
    if p.passages.as_ref().is_some_and(|s| s.blocks.contains(&e.block)) {
        "passage"
    } else {
        "exact"
    }
}

/// One reported neighborhood or page.
#[derive(Debug, Clone, Serialize)]
pub struct ReportRow {
    pub level: &'static str,
    /// The URL prefix (for pages: the page URL).
    pub neighborhood: String,
    /// badness(N) for a neighborhood, contains(L_c, f) for a page.
    pub badness: f64,
    pub threshold: f64,
    pub threshold_kind: &'static str,
    pub pages: u64,
    pub chunks: u64,
    pub labeled_chunks: u64,
    pub sources: Vec<SourceRef>,
    pub evidence: Vec<EvidenceRow>,
    /// Pages: the earlier page of the scan or crawl it is a SimHash near duplicate of
    /// (`PageRecord::near_duplicate_of`); absent for neighborhoods and unmarked pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near_duplicate_of: Option<String>,
    /// Pages matched with passages: words on the page, and words its labeled passages cover
    /// (absent for neighborhoods and for pages matched by exact chunks only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub covered_words: Option<u32>,
    /// Pages: the crawl was told `noindex` (meta robots or `X-Robots-Tag`): the site hid the
    /// page from search engines. Absent when not.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub noindex: bool,
    /// Pages: the other URL the page names as canonical (`<link rel="canonical">`): a page
    /// naming its original is syndication rather than a content farm. Absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
}
