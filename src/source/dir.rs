//! Directory source: every file under a folder becomes a [`Page`].
//!
//! URLs are `url_prefix` + the file's path relative to the folder, '/'-separated and
//! percent-encoded. With prefix `http://` a folder whose subfolders are host names gives
//! `http://HOST/PATH` (the convention of `shared/data/reuse/site`). Without a prefix, a
//! folder laid out that way (see [`layout`]) is read the same; any other folder gets
//! `file://` + its absolute path + '/', URLs without a host, hence without neighborhoods.
//! Walk order is sorted by file name so runs are deterministic; symlinks are followed, loops
//! reported and skipped.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use detector::{Page, PageOrigin};

/// Files larger than this are skipped by default.
pub const DEFAULT_MAX_FILE: u64 = 64 << 20;

/// Why a file or folder could not be read.
#[derive(Debug)]
pub struct DirError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for DirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for DirError {}

/// Counters of a directory walk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirStats {
    pub pages: u64,
    /// Bytes of the pages yielded.
    pub bytes: u64,
    /// Files over the size cap, skipped.
    pub too_large: u64,
    /// Walk or read errors (yielded as `Err`).
    pub errors: u64,
    /// WARC files met in the walk (not pages; a scan reads them as WARC inputs).
    pub warc_files: u64,
}

/// True for file names of WARC containers: `*.warc`, `*.warc.gz`.
pub fn is_warc_name(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    name.ends_with(".warc") || name.ends_with(".warc.gz")
}

/// The WARC files under `root`, sorted by path.
pub fn warc_files_under(root: &Path) -> Vec<PathBuf> {
    walker(root)
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && is_warc_name(e.path()))
        .map(|e| e.path().to_path_buf())
        .collect()
}

/// How a folder given without a URL prefix is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// `DIR/HOST/PATH`: every subfolder is named like a host and no page lies beside them;
    /// read as `http://HOST/PATH`.
    Hosts { hosts: usize },
    /// Anything else: `file://` URLs, which have no host.
    Files,
}

/// The layout of `root` (its top level only; hidden entries ignored).
pub fn layout(root: &Path) -> Layout {
    let Ok(entries) = fs::read_dir(root) else { return Layout::Files };
    let mut hosts = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = e.path();
        if path.is_dir() {
            if !detector::page::is_host_name(&name) {
                return Layout::Files;
            }
            hosts += 1;
        } else if guess_content_type(&path).is_some() {
            return Layout::Files;
        }
    }
    if hosts > 0 {
        Layout::Hosts { hosts }
    } else {
        Layout::Files
    }
}

/// The URL prefix a folder's pages get: `url_prefix` when given, else `http://` for a
/// [`Layout::Hosts`] folder and `file://` + its absolute path + '/' for any other.
pub fn url_prefix_for(root: &Path, url_prefix: Option<&str>) -> std::io::Result<String> {
    if let Some(p) = url_prefix {
        return Ok(p.to_string());
    }
    if matches!(layout(root), Layout::Hosts { .. }) {
        return Ok("http://".to_string());
    }
    let abs = fs::canonicalize(root)?;
    let mut p = String::from("file://");
    for c in abs.components() {
        if let std::path::Component::Normal(s) = c {
            p.push('/');
            p.push_str(&encode_segment(&s.to_string_lossy()));
        }
    }
    p.push('/');
    Ok(p)
}

/// What a scan of `root` without `--url-prefix` will do, for the user: a note when the folder
/// is read as `HOST/PATH`, a warning with the fix when its pages get URLs without a host.
pub fn layout_notice(root: &Path) -> String {
    match layout(root) {
        Layout::Hosts { hosts } => format!(
            "{}: its {hosts} subfolders are host names, read as http://HOST/PATH (--url-prefix overrides)",
            root.display()
        ),
        Layout::Files => format!(
            "warning: {}: its pages get file:// URLs, which have no host, so they form no \
             neighborhoods and reports will list none of them; give --url-prefix http://HOST/ \
             (the folder is one site) or lay it out as DIR/HOST/PATH",
            root.display()
        ),
    }
}

/// Iterator over the files of a folder as pages.
pub struct DirSource {
    root: PathBuf,
    prefix: String,
    max_file: u64,
    walker: walkdir::IntoIter,
    stats: DirStats,
}

fn walker(root: &Path) -> walkdir::IntoIter {
    walkdir::WalkDir::new(root).follow_links(true).sort_by_file_name().into_iter()
}

impl DirSource {
    /// Walk `root`; `url_prefix` None: see [`url_prefix_for`].
    pub fn new(root: impl AsRef<Path>, url_prefix: Option<&str>) -> std::io::Result<Self> {
        let root = root.as_ref().to_path_buf();
        let prefix = url_prefix_for(&root, url_prefix)?;
        Ok(Self {
            walker: walker(&root),
            root,
            prefix,
            max_file: DEFAULT_MAX_FILE,
            stats: DirStats::default(),
        })
    }

    /// Skip files larger than `max` bytes (counted in `stats().too_large`).
    pub fn with_max_file(mut self, max: u64) -> Self {
        self.max_file = max;
        self
    }

    pub fn stats(&self) -> &DirStats {
        &self.stats
    }

    /// The URL a file under the root gets.
    pub fn url_for(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        path_to_url(&self.prefix, rel)
    }
}

/// Sum of the sizes of the files under `root` (for a progress bar).
pub fn total_bytes(root: impl AsRef<Path>) -> u64 {
    walker(root.as_ref())
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// Content type from the extension: HTML and plain text; None for anything else.
pub fn guess_content_type(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" | "xhtml" => Some("text/html"),
        "txt" => Some("text/plain"),
        _ => None,
    }
}

/// Percent-encode one path segment: keep RFC 3986 unreserved and sub-delims, ':' and '@'.
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
            );
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `prefix` + relative path, '/'-separated, each segment percent-encoded.
pub fn path_to_url(prefix: &str, rel: &Path) -> String {
    let mut url = prefix.to_string();
    let mut first = true;
    for c in rel.components() {
        if let std::path::Component::Normal(s) = c {
            if !first {
                url.push('/');
            }
            first = false;
            url.push_str(&encode_segment(&s.to_string_lossy()));
        }
    }
    url
}

impl Iterator for DirSource {
    type Item = Result<Page, DirError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let entry = match self.walker.next()? {
                Ok(e) => e,
                Err(e) => {
                    // Includes symlink loops; the walk goes on.
                    self.stats.errors += 1;
                    let path = e.path().map(Path::to_path_buf).unwrap_or_default();
                    return Some(Err(DirError { path, message: e.to_string() }));
                }
            };
            if !entry.file_type().is_file() {
                continue;
            }
            let path = entry.path();
            if is_warc_name(path) {
                // WARC containers are read as WARC inputs (see the scan's input plan).
                self.stats.warc_files += 1;
                continue;
            }
            let meta = match entry.metadata() {
                Ok(m) => m,
                Err(e) => {
                    self.stats.errors += 1;
                    return Some(Err(DirError { path: path.to_path_buf(), message: e.to_string() }));
                }
            };
            if meta.len() > self.max_file {
                self.stats.too_large += 1;
                continue;
            }
            let body = match fs::read(path) {
                Ok(b) => b,
                Err(e) => {
                    self.stats.errors += 1;
                    return Some(Err(DirError { path: path.to_path_buf(), message: e.to_string() }));
                }
            };
            let fetch_time = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0);
            self.stats.pages += 1;
            self.stats.bytes += body.len() as u64;
            return Some(Ok(Page {
                url: self.url_for(path),
                fetch_time,
                status: 200,
                content_type: guess_content_type(path).map(str::to_string),
                body,
                origin: PageOrigin::File { path: path.to_string_lossy().into_owned() },
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_types() {
        assert_eq!(
            path_to_url("http://", Path::new("host.test/a b/c%d?.html")),
            "http://host.test/a%20b/c%25d%3F.html"
        );
        assert_eq!(guess_content_type(Path::new("x/INDEX.HTM")), Some("text/html"));
        assert_eq!(guess_content_type(Path::new("x/a.txt")), Some("text/plain"));
        assert_eq!(guess_content_type(Path::new("x/a.css")), None);
    }

    #[test]
    fn walks_sorted_with_cap() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("host.test");
        fs::create_dir_all(site.join("sub")).unwrap();
        fs::write(site.join("b.html"), "<p>b</p>").unwrap();
        fs::write(site.join("a.txt"), "a").unwrap();
        fs::write(site.join("sub/c.html"), "<p>c</p>").unwrap();
        fs::write(site.join("big.html"), vec![b'x'; 100]).unwrap();
        let mut src = DirSource::new(dir.path(), Some("http://")).unwrap().with_max_file(50);
        let urls: Vec<String> = src.by_ref().map(|p| p.unwrap().url).collect();
        assert_eq!(
            urls,
            ["http://host.test/a.txt", "http://host.test/b.html", "http://host.test/sub/c.html"]
        );
        assert_eq!(src.stats().too_large, 1);
        assert_eq!(total_bytes(dir.path()), 8 + 1 + 8 + 100);

        let mut src = DirSource::new(&site, None).unwrap();
        let p = src.next().unwrap().unwrap();
        assert_eq!(layout(&site), Layout::Files);
        assert!(p.url.starts_with("file:///") && p.url.ends_with("/host.test/a.txt"), "{}", p.url);
        assert_eq!(p.status, 200);
        assert!(p.fetch_time > 0);
    }

    #[test]
    fn host_layout_is_read_as_http_urls_without_a_prefix() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("farm.test/wiki")).unwrap();
        fs::create_dir_all(dir.path().join("blog.example.org")).unwrap();
        fs::write(dir.path().join("farm.test/wiki/a.html"), "<p>a</p>").unwrap();
        fs::write(dir.path().join("blog.example.org/b.html"), "<p>b</p>").unwrap();
        fs::write(dir.path().join("crawl.warc.gz"), "").unwrap();
        assert_eq!(layout(dir.path()), Layout::Hosts { hosts: 2 });
        let urls: Vec<String> = DirSource::new(dir.path(), None).unwrap().map(|p| p.unwrap().url).collect();
        assert_eq!(urls, ["http://blog.example.org/b.html", "http://farm.test/wiki/a.html"]);
        assert!(layout_notice(dir.path()).contains("read as http://HOST/PATH"));
        // A page beside the host folders, or a folder that is no host name: file:// URLs, loudly.
        fs::write(dir.path().join("index.html"), "<p>i</p>").unwrap();
        assert_eq!(layout(dir.path()), Layout::Files);
        fs::remove_file(dir.path().join("index.html")).unwrap();
        fs::create_dir_all(dir.path().join("articles")).unwrap();
        assert_eq!(layout(dir.path()), Layout::Files);
        assert!(
            layout_notice(dir.path()).starts_with("warning:")
                && layout_notice(dir.path()).contains("--url-prefix")
        );
    }
}
