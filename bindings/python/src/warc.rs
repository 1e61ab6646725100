//! A WARC file scanned as `ditto scan` scans it, for a task of a distributed scan
//! (`examples/spark/scan.py`), and the threshold arithmetic of `ditto report`.
//!
//! The detection is `ditto::api::Detector::scan_warc`; here only the conversions: a Python
//! file-like object as a `std::io::Read`, the result as Python lists and dicts.

use std::io::{BufReader, Read};
use std::path::PathBuf;

use ditto::api::{Detector, WarcScan};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

/// `read(n)` of a Python binary file-like object, as a `Read`. The GIL is taken for each
/// call only; an exception is kept to be raised again when the scan returns.
struct PyRead {
    obj: Py<PyAny>,
    failed: Option<PyErr>,
}

impl Read for PyRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.failed.is_some() {
            return Err(std::io::Error::other("the source failed before"));
        }
        let got = Python::with_gil(|py| -> PyResult<usize> {
            let chunk = self.obj.call_method1(py, "read", (buf.len(),))?;
            let chunk = chunk.bind(py);
            let n = if let Ok(b) = chunk.downcast::<PyBytes>() {
                let b = b.as_bytes();
                let n = b.len().min(buf.len());
                buf[..n].copy_from_slice(&b[..n]);
                n
            } else if chunk.is_none() {
                0
            } else {
                let b: Vec<u8> = chunk.extract()?;
                let n = b.len().min(buf.len());
                buf[..n].copy_from_slice(&b[..n]);
                n
            };
            Ok(n)
        });
        got.map_err(|e| {
            let msg = Python::with_gil(|py| e.value(py).to_string());
            self.failed = Some(e);
            std::io::Error::other(format!("reading the source failed: {msg}"))
        })
    }
}

/// What `Detector.scan_warc` returns.
#[pyclass(module = "ditto_detect._native", name = "WarcScan", frozen)]
pub struct PyWarcScan {
    inner: WarcScan,
    name: String,
}

#[pymethods]
impl PyWarcScan {
    /// The analysed pages, each capture (URL + body SHA-1) once, in file order: tuples
    /// `(url, file_hash, warc_offset, fetch_time, status, chunks, labeled_chunks,
    /// stop_chunks, contains, contains_fixed, neighborhoods, sources, evidence,
    /// evidence_match, words, covered_words)`, with `sources` a list of `(source_id, chunks)`,
    /// `evidence` of `(source_id, passage)`, `evidence_match` how each was found (`"exact"` or
    /// `"passage"`), and `words`/`covered_words` None when passages were not matched.
    /// Built on each access.
    #[getter]
    fn pages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut rows = Vec::with_capacity(self.inner.pages.len());
        for p in &self.inner.pages {
            let fields: Vec<PyObject> = vec![
                p.url.as_str().into_pyobject(py)?.into_any().unbind(),
                p.file_hash.as_str().into_pyobject(py)?.into_any().unbind(),
                p.warc_offset.into_pyobject(py)?.into_any().unbind(),
                p.fetch_time.into_pyobject(py)?.into_any().unbind(),
                p.status.into_pyobject(py)?.into_any().unbind(),
                p.chunks.into_pyobject(py)?.into_any().unbind(),
                p.labeled_chunks.into_pyobject(py)?.into_any().unbind(),
                p.stop_chunks.into_pyobject(py)?.into_any().unbind(),
                p.contains.into_pyobject(py)?.into_any().unbind(),
                p.contains_fixed.into_pyobject(py)?.into_any().unbind(),
                p.neighborhoods.as_slice().into_pyobject(py)?.into_any().unbind(),
                p.sources.as_slice().into_pyobject(py)?.into_any().unbind(),
                p.evidence.as_slice().into_pyobject(py)?.into_any().unbind(),
                p.evidence_match.as_slice().into_pyobject(py)?.into_any().unbind(),
                p.words.into_pyobject(py)?.into_any().unbind(),
                p.covered_words.into_pyobject(py)?.into_any().unbind(),
            ];
            rows.push(PyTuple::new(py, fields)?);
        }
        PyList::new(py, rows)
    }

    /// The file's per-neighborhood accumulators, in neighborhood order: tuples
    /// `(neighborhood, pages, chunks, labeled_chunks, contains_sum_fixed)`.
    #[getter]
    fn accumulators(&self) -> Vec<(String, u64, u64, u64, u64)> {
        self.inner
            .accumulators
            .iter()
            .map(|(n, a)| (n.clone(), a.pages, a.chunks, a.labeled_chunks, a.contains_sum_fixed))
            .collect()
    }

    /// Counters: `records`, `pages_read`, `pages` (analysed), `payload_bytes`,
    /// `input_bytes`, and `skipped` (a dict by reason).
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let s = &self.inner;
        d.set_item("records", s.records)?;
        d.set_item("pages_read", s.pages_read)?;
        d.set_item("pages", s.pages.len())?;
        d.set_item("payload_bytes", s.payload_bytes)?;
        d.set_item("input_bytes", s.input_bytes)?;
        let skipped = PyDict::new(py);
        for (k, v) in &s.skips {
            skipped.set_item(*k, *v)?;
        }
        d.set_item("skipped", skipped)?;
        Ok(d)
    }

    /// Read errors (each also counted in `stats["skipped"]["read_error"]`; at most 200 kept).
    #[getter]
    fn errors(&self) -> Vec<String> {
        self.inner.errors.clone()
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!(
            "WarcScan({:?}, pages={}, neighborhoods={}, errors={})",
            self.name,
            self.inner.pages.len(),
            self.inner.accumulators.len(),
            self.inner.errors.len()
        )
    }
}

/// `Detector.scan_warc`: a path or a file-like object.
pub fn scan(
    py: Python<'_>,
    det: &Detector,
    source: &Bound<'_, PyAny>,
    name: Option<String>,
    max_body_bytes: u64,
) -> PyResult<PyWarcScan> {
    if source.hasattr("read")? {
        let name = match name {
            Some(n) => n,
            None => match source.getattr("name").and_then(|n| n.extract::<String>()) {
                Ok(n) => n,
                Err(_) => "<stream>".to_string(),
            },
        };
        let mut reader = PyRead { obj: source.clone().unbind(), failed: None };
        let inner = py.allow_threads(|| {
            det.scan_warc(BufReader::with_capacity(1 << 20, &mut reader), &name, max_body_bytes)
        });
        if let Some(e) = reader.failed.take() {
            return Err(e);
        }
        Ok(PyWarcScan { inner, name })
    } else {
        let path: PathBuf = source.extract()?;
        let name = name.unwrap_or_else(|| path.display().to_string());
        let f =
            std::fs::File::open(&path).map_err(|e| crate::err(anyhow::anyhow!("{}: {e}", path.display())))?;
        let inner =
            py.allow_threads(|| det.scan_warc(BufReader::with_capacity(1 << 20, f), &name, max_body_bytes));
        Ok(PyWarcScan { inner, name })
    }
}

/// Count, Σx and Σx² of a population, pushed in order: `ditto report`'s own arithmetic for
/// the mean + σ threshold (`detector::MeanStd`), so the same values in the same order give
/// the same bits.
#[pyclass(module = "ditto_detect._native", name = "MeanStd")]
#[derive(Default)]
struct PyMeanStd {
    inner: detector::MeanStd,
}

#[pymethods]
impl PyMeanStd {
    #[new]
    fn new() -> Self {
        PyMeanStd::default()
    }

    fn push(&mut self, x: f64) {
        self.inner.push(x);
    }

    /// Push every value of a buffer of little-endian float64s (e.g. `array('d').tobytes()`).
    fn push_packed(&mut self, data: &[u8]) -> PyResult<()> {
        if !data.len().is_multiple_of(8) {
            return Err(crate::err(anyhow::anyhow!(
                "{} bytes is not a whole number of float64s",
                data.len()
            )));
        }
        for c in data.chunks_exact(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            self.inner.push(f64::from_le_bytes(b));
        }
        Ok(())
    }

    #[getter]
    fn count(&self) -> u64 {
        self.inner.count
    }
    #[getter]
    fn sum(&self) -> f64 {
        self.inner.sum
    }
    #[getter]
    fn sum_squares(&self) -> f64 {
        self.inner.sum_squares
    }
    fn mean(&self) -> f64 {
        self.inner.mean()
    }
    /// Population standard deviation σ.
    fn std_dev(&self) -> f64 {
        self.inner.std_dev()
    }
    /// μ + σ: `ditto report`'s default threshold.
    fn mean_plus_std(&self) -> f64 {
        self.inner.mean_plus_std()
    }

    fn __repr__(&self) -> String {
        format!(
            "MeanStd(count={}, mean={}, sd={})",
            self.inner.count,
            self.inner.mean(),
            self.inner.std_dev()
        )
    }
}

/// badness(N) = Σ contains / |N| from a neighborhood's integer accumulators (§3.1 step 6),
/// computed as `ditto report` computes it.
#[pyfunction]
fn badness(pages: u64, contains_sum_fixed: u64) -> f64 {
    detector::NeighborhoodAccumulator { pages, chunks: 0, labeled_chunks: 0, contains_sum_fixed }.badness()
}

/// `contains` in fixed point, as accumulators sum it (rounded to 2^-40).
#[pyfunction]
fn contains_fixed(contains: f64) -> u64 {
    detector::neighborhood::contains_fixed(contains)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyWarcScan>()?;
    m.add_class::<PyMeanStd>()?;
    m.add_function(wrap_pyfunction!(badness, m)?)?;
    m.add_function(wrap_pyfunction!(contains_fixed, m)?)?;
    m.add("CONTAINS_SCALE", detector::neighborhood::CONTAINS_SCALE)?;
    Ok(())
}
