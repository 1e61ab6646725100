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
        // A file name is input too: printed escaped (`crawler::warc::printable`).
        let path = self.path.display().to_string();
        write!(f, "{}: {}", crawler::warc::printable(&path), crawler::warc::printable(&self.message))
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
    /// FIFOs, sockets and device files met in the walk: skipped unread (reading a FIFO
    /// would block, a device may never end).
    pub not_regular: u64,
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
    Ok(file_url_prefix(&fs::canonicalize(root)?))
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

/// `file://` + the absolute folder `abs`, each segment percent-encoded, + `/`.
pub fn file_url_prefix(abs: &Path) -> String {
    let mut p = String::from("file://");
    for c in abs.components() {
        if let std::path::Component::Normal(s) = c {
            p.push('/');
            p.push_str(&encode_segment(s));
        }
    }
    p.push('/');
    p
}

/// The bytes of a file name as the OS gives them (Unix: any bytes but `/` and NUL, not
/// necessarily UTF-8); elsewhere its UTF-8 form (lossy only where the OS name is not
/// Unicode).
fn name_bytes(s: &std::ffi::OsStr) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::borrow::Cow::Borrowed(s.as_bytes())
    }
    #[cfg(not(unix))]
    {
        match s.to_string_lossy() {
            std::borrow::Cow::Borrowed(t) => std::borrow::Cow::Borrowed(t.as_bytes()),
            std::borrow::Cow::Owned(t) => std::borrow::Cow::Owned(t.into_bytes()),
        }
    }
}

/// Percent-encode one path segment, byte by byte: keep RFC 3986 unreserved and sub-delims,
/// ':' and '@'. The name's own bytes are encoded, so a name that is not UTF-8 maps to a URL
/// of its own (two names never share one, as they would through U+FFFD).
fn encode_segment(s: &std::ffi::OsStr) -> String {
    let bytes = name_bytes(s);
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes.iter() {
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
            url.push_str(&encode_segment(s));
        }
    }
    url
}

/// The file's bytes and metadata, or None when it is larger than `max` bytes (by its size,
/// or by what could be read: a file growing while read is not read past `max`).
fn read_limited(path: &Path, max: u64) -> std::io::Result<Option<(Vec<u8>, fs::Metadata)>> {
    use std::io::Read;
    let file = fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.len() > max {
        return Ok(None);
    }
    let mut body = Vec::with_capacity(meta.len() as usize + 1);
    file.take(max.saturating_add(1)).read_to_end(&mut body)?;
    if body.len() as u64 > max {
        return Ok(None);
    }
    Ok(Some((body, meta)))
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
            let kind = entry.file_type();
            if !kind.is_file() {
                if !kind.is_dir() {
                    self.stats.not_regular += 1;
                }
                continue;
            }
            let path = entry.path();
            if is_warc_name(path) {
                // WARC containers are read as WARC inputs (see the scan's input plan).
                self.stats.warc_files += 1;
                continue;
            }
            match read_file_page(&self.root, &self.prefix, path, self.max_file) {
                FileRead::Page(page) => {
                    self.stats.pages += 1;
                    self.stats.bytes += page.body.len() as u64;
                    return Some(Ok(page));
                }
                FileRead::TooLarge => self.stats.too_large += 1,
                FileRead::Failed(e) => {
                    self.stats.errors += 1;
                    return Some(Err(e));
                }
            }
        }
    }
}

/// One file of a folder, read.
pub enum FileRead {
    Page(Page),
    /// Over the size cap: skipped unread.
    TooLarge,
    Failed(DirError),
}

/// The file `path` under `root` as a page: URL = `prefix` + its path relative to `root`.
/// One open and one fstat: its size and time come from the open handle.
pub fn read_file_page(root: &Path, prefix: &str, path: &Path, max_file: u64) -> FileRead {
    let (body, meta) = match read_limited(path, max_file) {
        Ok(Some(read)) => read,
        Ok(None) => return FileRead::TooLarge,
        Err(e) => return FileRead::Failed(DirError { path: path.to_path_buf(), message: e.to_string() }),
    };
    let fetch_time = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let rel = path.strip_prefix(root).unwrap_or(path);
    FileRead::Page(Page {
        url: path_to_url(prefix, rel),
        fetch_time,
        status: 200,
        content_type: guess_content_type(path).map(str::to_string),
        body,
        origin: PageOrigin::File { path: path.to_string_lossy().into_owned() },
    })
}

/// A folder's identity, to find symlink loops: device and inode where the OS gives them,
/// else its canonical path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirId(DirIdInner);

#[derive(Debug, Clone, PartialEq, Eq)]
enum DirIdInner {
    #[cfg(unix)]
    DevIno(u64, u64),
    #[cfg_attr(unix, allow(dead_code))]
    Path(PathBuf),
}

impl DirId {
    /// The identity of the folder `path` (symlinks followed).
    pub fn of(path: &Path) -> std::io::Result<DirId> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let m = fs::metadata(path)?;
            Ok(DirId(DirIdInner::DevIno(m.dev(), m.ino())))
        }
        #[cfg(not(unix))]
        {
            Ok(DirId(DirIdInner::Path(fs::canonicalize(path)?)))
        }
    }
}

/// One entry of a folder listing ([`list_dir`]).
#[derive(Debug)]
pub enum Entry {
    /// A regular file (symlinks followed) that is not a WARC file.
    File(PathBuf),
    /// A WARC file (`*.warc`, `*.warc.gz`).
    Warc(PathBuf),
    /// A subfolder and its identity.
    Dir(PathBuf, DirId),
    /// A FIFO, socket or device file: not read.
    NotRegular,
    /// An entry that could not be read, or a symlink back to a folder above it.
    Failed(DirError),
}

/// The entries of the folder `dir`, sorted by file name (the order of [`DirSource`]'s walk),
/// symlinks followed; `ancestors`: the identities of `dir` and the folders above it up to
/// the walk's root, so a symlink back to one of them is an error entry (as in `walkdir`),
/// not an endless walk.
pub fn list_dir(dir: &Path, ancestors: &[DirId]) -> Result<Vec<Entry>, DirError> {
    let err = |path: &Path, e: std::io::Error| DirError { path: path.to_path_buf(), message: e.to_string() };
    let mut names = Vec::new();
    for e in fs::read_dir(dir).map_err(|e| err(dir, e))? {
        match e {
            Ok(e) => names.push((e.file_name(), e.file_type())),
            Err(e) => names.push((std::ffi::OsString::new(), Err(e))),
        }
    }
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::with_capacity(names.len());
    for (name, kind) in names {
        let path = dir.join(&name);
        let kind = match kind {
            // A symlink is followed: what it points to decides.
            Ok(k) if k.is_symlink() => fs::metadata(&path).map(|m| m.file_type()),
            k => k,
        };
        let kind = match kind {
            Ok(k) => k,
            Err(e) => {
                out.push(Entry::Failed(err(&path, e)));
                continue;
            }
        };
        if kind.is_dir() {
            let id = match DirId::of(&path) {
                Ok(id) => id,
                Err(e) => {
                    out.push(Entry::Failed(err(&path, e)));
                    continue;
                }
            };
            if let Some(pos) = ancestors.iter().position(|a| *a == id) {
                // The ancestor's path: `dir` is ancestors' last; each step up drops a name.
                let up = ancestors.len() - 1 - pos;
                let ancestor = dir.ancestors().nth(up).unwrap_or(dir);
                let message = format!(
                    "File system loop found: {} points to an ancestor {}",
                    path.display(),
                    ancestor.display()
                );
                out.push(Entry::Failed(DirError { path, message }));
                continue;
            }
            out.push(Entry::Dir(path, id));
        } else if kind.is_file() {
            out.push(if is_warc_name(&path) { Entry::Warc(path) } else { Entry::File(path) });
        } else {
            out.push(Entry::NotRegular);
        }
    }
    Ok(out)
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

    /// Two names that differ only in bytes that are not UTF-8 used to become one URL (both
    /// read as U+FFFD); their bytes are now percent-encoded.
    #[cfg(unix)]
    #[test]
    fn non_utf8_names_map_to_distinct_urls() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("host.test");
        fs::create_dir_all(&site).unwrap();
        let a = std::ffi::OsStr::from_bytes(b"caf\xe9.html");
        let b = std::ffi::OsStr::from_bytes(b"caf\xe8.html");
        for n in [a, b] {
            if fs::write(site.join(n), "<p>x</p>").is_err() {
                return; // a file system that refuses such names
            }
        }
        fs::write(site.join("café.html"), "<p>y</p>").unwrap();
        let mut urls: Vec<String> =
            DirSource::new(dir.path(), Some("http://")).unwrap().map(|p| p.unwrap().url).collect();
        urls.sort();
        assert_eq!(
            urls,
            [
                "http://host.test/caf%C3%A9.html",
                "http://host.test/caf%E8.html",
                "http://host.test/caf%E9.html"
            ]
        );
        assert_eq!(path_to_url("http://", &Path::new("host.test").join(a)), "http://host.test/caf%E9.html");
    }

    /// A FIFO in a scanned folder is skipped and counted, never opened (reading it would
    /// block the scan).
    #[cfg(unix)]
    #[test]
    fn fifos_are_skipped_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.html"), "<p>a</p>").unwrap();
        let fifo = dir.path().join("pipe.html");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo here
        }
        let mut src = DirSource::new(dir.path(), Some("http://h.test/")).unwrap();
        let urls: Vec<String> = src.by_ref().map(|p| p.unwrap().url).collect();
        assert_eq!(urls, ["http://h.test/a.html"]);
        assert_eq!(src.stats().not_regular, 1);
        assert_eq!(src.stats().errors, 0);
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

    /// A symlink back to a folder above is an error entry, not a folder to walk; the
    /// listing is sorted by name and sorts files, WARC files and folders apart.
    #[cfg(unix)]
    #[test]
    fn listings_refuse_symlink_loops() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::create_dir_all(a.join("sub")).unwrap();
        fs::write(a.join("x.html"), "<p>x</p>").unwrap();
        fs::write(a.join("c.warc.gz"), "").unwrap();
        std::os::unix::fs::symlink(dir.path(), a.join("up")).unwrap();
        let ids = [DirId::of(dir.path()).unwrap(), DirId::of(&a).unwrap()];
        let got: Vec<String> = list_dir(&a, &ids)
            .unwrap()
            .into_iter()
            .map(|e| match e {
                Entry::File(p) => format!("file {}", p.file_name().unwrap().to_string_lossy()),
                Entry::Warc(p) => format!("warc {}", p.file_name().unwrap().to_string_lossy()),
                Entry::Dir(p, _) => format!("dir {}", p.file_name().unwrap().to_string_lossy()),
                Entry::NotRegular => "other".into(),
                Entry::Failed(e) => format!("error {}", e.message),
            })
            .collect();
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0], "warc c.warc.gz");
        assert_eq!(got[1], "dir sub");
        assert!(
            got[2].starts_with("error File system loop found") && got[2].contains("points to an ancestor"),
            "{got:?}"
        );
        assert_eq!(got[3], "file x.html");
    }
}
