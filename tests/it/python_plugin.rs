//! The Python plug-in (`bindings/python`, issue 11): builds the `ditto-detect` wheel with
//! maturin, installs it and Scrapy in a fresh virtualenv, and runs a Scrapy spider with
//! `ditto_detect.scrapy.DittoPipeline` over the demo web; `ditto report` over its store must
//! flag the same neighborhoods as over `ditto crawl`. All of it is
//! `bindings/python/tests/test_scrapy.sh`; this test runs it with this build's `ditto`.
//!
//! Needs a Python >= 3.9 with venv (skipped, with a message, when there is none) and PyPI
//! for maturin and Scrapy. The wheel's build lives in `target/python-plugin`.

use std::path::Path;
use std::process::Command;

#[test]
fn scrapy_pipeline_flags_the_same_neighborhoods_as_ditto_crawl() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().expect("temp dir");
    let status = Command::new("bash")
        .arg(root.join("bindings/python/tests/test_scrapy.sh"))
        .env("DITTO", env!("CARGO_BIN_EXE_ditto"))
        .env("DITTO_PY_WORK", work.path().join("py"))
        .env("DITTO_PY_TARGET", root.join("target/python-plugin"))
        .status()
        .expect("running bash");
    match status.code() {
        Some(77) => eprintln!("SKIP: no Python >= 3.9 with venv; the Python plug-in was not tested"),
        _ => assert!(status.success(), "bindings/python/tests/test_scrapy.sh failed: {status}"),
    }
}
