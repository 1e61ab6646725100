//! `ditto_detect._native`: the PyO3 module behind the `ditto-detect` Python package.
//!
//! A thin layer over `ditto::api`: a page goes through exactly the stage functions `ditto
//! scan` and `ditto crawl` use, so verdicts are the same as ditto's own crawler gives. The
//! GIL is released while a label set opens, while a page is detected and while the store
//! writes, so a threaded crawler can detect on several pages at once.

use std::path::PathBuf;
use std::sync::Arc;

use ditto::api::{open_store, Detector, DetectorConfig, MatchMode, Verdict};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyUserWarning, PyValueError};
use pyo3::prelude::*;

mod warc;

create_exception!(_native, DittoError, PyException, "An error from ditto (label set, store, I/O).");

fn err(e: impl Into<anyhow::Error>) -> PyErr {
    let e: anyhow::Error = e.into();
    DittoError::new_err(format!("{e:#}"))
}

/// Detection for one label set (`.dls`), shareable across threads.
///
/// Detector(labelset_path, default_stop_chunks=True, links=True, stop_chunks=(),
///          max_path_repeats=3, max_depth=96, match="passage")
///
/// `stop_chunks`, `max_path_repeats`, `max_depth` and `match` are `ditto scan`'s
/// `--stop-chunks`, `--max-path-repeats`, `--max-depth` and `--match`: `"passage"` (the
/// default) also counts blocks covered by labeled passages (edited copies) where the label
/// set has a passage table, `"exact"` matches exact chunks only (Ardi & Heidemann as
/// published). A label set without passages matches exact chunks only and warns once
/// (`UserWarning`).
#[pyclass(module = "ditto_detect._native", name = "Detector", frozen)]
struct PyDetector {
    inner: Arc<Detector>,
    labelset_path: PathBuf,
}

#[pymethods]
impl PyDetector {
    #[new]
    #[pyo3(signature = (labelset_path, default_stop_chunks = true, links = true, stop_chunks = Vec::new(),
                        max_path_repeats = 3, max_depth = 96, r#match = "passage"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        labelset_path: PathBuf,
        default_stop_chunks: bool,
        links: bool,
        stop_chunks: Vec<PathBuf>,
        max_path_repeats: usize,
        max_depth: usize,
        r#match: &str,
    ) -> PyResult<Self> {
        let match_mode = match r#match {
            "passage" => MatchMode::Passage,
            "exact" => MatchMode::Exact,
            other => {
                return Err(PyValueError::new_err(format!(
                    "match must be \"passage\" or \"exact\", not {other:?}"
                )))
            }
        };
        let traps = detector::TrapRules { max_repeats: max_path_repeats, max_depth, ..Default::default() };
        let cfg = DetectorConfig { default_stop_chunks, links, stop_chunks, traps, match_mode };
        let det = py.allow_threads(|| Detector::open(&labelset_path, cfg)).map_err(err)?;
        if match_mode == MatchMode::Passage && !det.passages() {
            // `ditto scan` says this once on stderr; a Python caller gets a warning.
            let msg = format!(
                "{}: this label set has no passage table this ditto reads (built by an older ditto, \
                 from hashes by discover or import, or with --passages off): only exact chunks are \
                 matched, edited copies are not found; rebuild it with `ditto labelset build` for \
                 passage evidence",
                labelset_path.display()
            );
            let msg = std::ffi::CString::new(msg).map_err(err)?;
            PyErr::warn(py, py.get_type::<PyUserWarning>().as_any(), &msg, 1)?;
        }
        Ok(PyDetector { inner: Arc::new(det), labelset_path })
    }

    /// Whether pages are matched with labeled passages (edited copies) as well as exact
    /// chunks: `match="passage"` and a label set with a passage table.
    #[getter]
    fn passages(&self) -> bool {
        self.inner.passages()
    }

    /// Scan one WARC file as `ditto scan` does, without a store: `source` is a path, or a
    /// binary file-like object with `read(n)` (e.g. an HTTP response; the GIL is taken only
    /// to read). Returns a `WarcScan`: the page rows, the file's per-neighborhood integer
    /// accumulators and its counters. An exception raised by `source.read` is raised again.
    #[pyo3(signature = (source, name = None, max_body_bytes = 64 << 20))]
    fn scan_warc(
        &self,
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        name: Option<String>,
        max_body_bytes: u64,
    ) -> PyResult<warc::PyWarcScan> {
        warc::scan(py, &self.inner, source, name, max_body_bytes)
    }

    /// A labeled source's `(title, url)`, or None for an unknown id.
    fn source(&self, id: u32) -> Option<(String, String)> {
        self.inner.source(id)
    }

    /// Analyse one fetched page: `body` is the raw HTTP body, `content_type` the
    /// Content-Type header (it carries the charset), `status` the HTTP status (pages that
    /// are not 2xx are skipped, as in a crawl). Releases the GIL while detecting.
    #[pyo3(signature = (url, body, content_type = None, status = 200))]
    fn page(
        &self,
        py: Python<'_>,
        url: &str,
        body: &[u8],
        content_type: Option<&str>,
        status: u16,
    ) -> PyResult<PyVerdict> {
        let det = &self.inner;
        let v = py.allow_threads(|| det.page_with_status(url, status, content_type, body)).map_err(err)?;
        Ok(PyVerdict { inner: v })
    }

    /// The label set this detector was opened with.
    #[getter]
    fn labelset_path(&self) -> PathBuf {
        self.labelset_path.clone()
    }

    fn __repr__(&self) -> String {
        format!("Detector({:?})", self.labelset_path.display().to_string())
    }
}

/// What ditto says about one page.
#[pyclass(module = "ditto_detect._native", name = "Verdict", frozen)]
struct PyVerdict {
    inner: Verdict,
}

#[pymethods]
impl PyVerdict {
    #[getter]
    fn url(&self) -> &str {
        &self.inner.url
    }
    /// Why the page was not analysed (`status_not_2xx`, `not_text`, …), or None.
    #[getter]
    fn skipped(&self) -> Option<&str> {
        self.inner.skipped.as_deref()
    }
    /// contains(L_c, page): labeled chunk occurrences / chunk occurrences.
    #[getter]
    fn contains(&self) -> f64 {
        self.inner.contains
    }
    #[getter]
    fn chunks(&self) -> u32 {
        self.inner.chunks
    }
    #[getter]
    fn labeled_chunks(&self) -> u32 {
        self.inner.labeled_chunks
    }
    /// SHA-1 of the body, hex.
    #[getter]
    fn file_hash(&self) -> &str {
        &self.inner.file_hash
    }
    /// Labeled sources the page copies from: (id, title, url, chunks).
    #[getter]
    fn sources(&self) -> Vec<(u32, String, String, u32)> {
        self.inner.sources.iter().map(|s| (s.id, s.title.clone(), s.url.clone(), s.chunks)).collect()
    }
    /// Copied passages: (source id, passage).
    #[getter]
    fn evidence(&self) -> Vec<(u32, String)> {
        self.inner.evidence.clone()
    }
    /// How each of `evidence` was found, in its order: `"exact"` (the whole normalized
    /// paragraph is in the label set) or `"passage"` (labeled passages cover at least half of
    /// its words: an edited copy), as `ditto report`'s evidence `match`.
    #[getter]
    fn evidence_match(&self) -> Vec<&'static str> {
        self.inner.evidence_match.clone()
    }
    /// Words on the page, when passages were matched; None with `match="exact"`, a label set
    /// without passages, or a skipped page.
    #[getter]
    fn words(&self) -> Option<u32> {
        self.inner.words
    }
    /// Of `words`, those that are labeled text (in exact labeled chunks or covered by
    /// labeled passages); None as `words`.
    #[getter]
    fn covered_words(&self) -> Option<u32> {
        self.inner.covered_words
    }
    /// Absolute outgoing links.
    #[getter]
    fn links(&self) -> Vec<String> {
        self.inner.links.clone()
    }
    /// The neighborhoods (URL prefixes) the page counts in.
    #[getter]
    fn neighborhoods(&self) -> Vec<String> {
        self.inner.neighborhoods.clone()
    }

    fn __repr__(&self) -> String {
        match &self.inner.skipped {
            Some(why) => format!("Verdict(url={:?}, skipped={why:?})", self.inner.url),
            None => format!(
                "Verdict(url={:?}, contains={:.3}, labeled_chunks={}, chunks={}, sources={})",
                self.inner.url,
                self.inner.contains,
                self.inner.labeled_chunks,
                self.inner.chunks,
                self.inner.sources.len()
            ),
        }
    }
}

/// A ditto store (the directory `ditto report` and `ditto review` read), bound to a
/// detector's label set. One process may have a store open at a time.
///
/// Store(path, detector)
#[pyclass(module = "ditto_detect._native", name = "Store", frozen)]
struct PyStore {
    inner: store::Store,
    detector: Arc<Detector>,
    path: PathBuf,
}

#[pymethods]
impl PyStore {
    #[new]
    fn new(py: Python<'_>, path: PathBuf, detector: &PyDetector) -> PyResult<Self> {
        let det = detector.inner.clone();
        let inner = py.allow_threads(|| open_store(&path, &det)).map_err(err)?;
        Ok(PyStore { inner, detector: det, path })
    }

    /// Add a verdict to the store's pages and neighborhood accumulators. Skipped pages and
    /// pages already stored (same URL and body) change nothing. Returns whether it was new.
    fn add(&self, py: Python<'_>, verdict: &PyVerdict) -> PyResult<bool> {
        let (det, store, v) = (&self.detector, &self.inner, &verdict.inner);
        py.allow_threads(|| det.store(store, v)).map_err(err)
    }

    /// Write everything added so far to disk.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let store = &self.inner;
        py.allow_threads(|| store.flush()).map_err(err)
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.flush(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("Store({:?})", self.path.display().to_string())
    }
}

/// A recrawl cluster: (representative, its body SHA-1s, the others).
type PlanCluster = (String, Vec<String>, Vec<String>);

/// The recrawl skip plan of an earlier crawl's store, clustered as `ditto recrawl` and
/// `ditto replicas` do: a list of `(representative, representative_body_sha1s, others)` for
/// every cluster with something to skip. A recrawl fetches the representative and skips
/// `others` unless the representative's new body SHA-1 is none of the old ones.
#[pyfunction]
#[pyo3(signature = (store_path, threshold = 0.8, simhash_k = Some(3)))]
fn recrawl_plan(
    py: Python<'_>,
    store_path: PathBuf,
    threshold: f64,
    simhash_k: Option<u32>,
) -> PyResult<Vec<PlanCluster>> {
    let plan = py
        .allow_threads(|| -> anyhow::Result<_> {
            let store = store::Store::open_existing(&store_path)?;
            ditto::analysis::recrawl::skip_plan(&store, threshold, simhash_k)
        })
        .map_err(err)?;
    Ok(plan.into_iter().map(|c| (c.representative, c.representative_hashes, c.others)).collect())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDetector>()?;
    m.add_class::<PyVerdict>()?;
    m.add_class::<PyStore>()?;
    m.add_function(wrap_pyfunction!(recrawl_plan, m)?)?;
    warc::register(m)?;
    m.add("DittoError", m.py().get_type::<DittoError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
