//! Clean stage: HTML → paragraph-level text blocks + outgoing links (§3.1 step 2:
//! "we use minimal understanding of the semantics of the text to break it into chunks").
//! PLACEHOLDER — being implemented.

/// What kind of document the body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    Html,
    Text,
}

/// Options for the cleaner.
#[derive(Debug, Clone)]
pub struct CleanOptions {
    /// Collect `<a href>` links (resolved against the page URL). Scans may turn this off.
    pub extract_links: bool,
}

impl Default for CleanOptions {
    fn default() -> Self {
        CleanOptions { extract_links: true }
    }
}

/// A cleaned document.
#[derive(Debug, Clone, Default)]
pub struct CleanedDoc {
    /// Paragraph-level text blocks in document order (not yet normalized).
    pub blocks: Vec<String>,
    /// Absolute outgoing link URLs in document order.
    pub links: Vec<String>,
    /// Name of the encoding the body was decoded with.
    pub encoding: &'static str,
}

/// Clean `body`. PLACEHOLDER.
pub fn clean(
    _body: &[u8],
    _content_type: Option<&str>,
    _base_url: Option<&str>,
    _opts: &CleanOptions,
) -> CleanedDoc {
    CleanedDoc::default()
}
