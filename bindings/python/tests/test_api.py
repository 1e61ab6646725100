"""The ditto_detect API without a web: label set built by `ditto labelset build`, pages
detected from Python, a store that `ditto report` reads, the same verdicts as `ditto scan`
over the same pages, and several Python threads detecting at once.

    python test_api.py [DITTO_BINARY]        (default: ditto on PATH)
"""

import atexit
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import ditto_detect
from ditto_detect import Detector, DittoError, Store, Verdict

DITTO = sys.argv[1] if len(sys.argv) > 1 else "ditto"

ARTICLES = {
    "Albedo": [
        "Albedo is the fraction of sunlight that is diffusely reflected by a body, measured on a "
        "scale from zero for a black body that absorbs all incident radiation to one for a body "
        "that reflects all of it.",
        "Surface albedo is defined as the ratio of radiosity to the irradiance received by a "
        "surface, and the proportion reflected is determined by properties of the surface itself "
        "and by the spectral and angular distribution of the light that reaches it.",
        "Fresh snow has a high albedo and reflects most of the light that falls on it, while the "
        "open ocean absorbs most sunlight and has one of the lowest albedos found on the planet.",
    ],
    "Aardvark": [
        "The aardvark is a medium-sized, burrowing, nocturnal mammal native to Africa, and it is "
        "the only living species of the order Tubulidentata, although other prehistoric species "
        "and genera of that order are known from fossils.",
        "Aardvarks feed almost exclusively on ants and termites, which they dig out of their "
        "nests with strong claws and lick up with a long sticky tongue, often covering several "
        "kilometres a night while foraging.",
    ],
}


def html(paragraphs):
    return ("<html><body>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</body></html>").encode()


def pages():
    """URL -> body: two copying pages, four originals on hosts of their own."""
    out = {}
    for i, (title, paras) in enumerate(ARTICLES.items()):
        out[f"http://copies.test/c/{i}.html"] = html(["Buy now! Best deals on everything today."] + paras)
    for i in range(4):
        out[f"http://notes{i}.test/n/page.html"] = html([
            f"Original note {i}: the weather was mild and the river rose a little after rain, so the "
            f"ferry ran late on day {i} of the month and nobody minded very much at all."
        ])
    return out


def run(*args):
    return subprocess.run([DITTO, *args], check=True, capture_output=True, text=True).stdout


def report(store, level):
    rows = [json.loads(l) for l in run("report", "--store", store, "--format", "jsonl", "--level", level).splitlines() if l]
    for r in rows:
        r.pop("evidence", None)
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def main():
    tmp = tempfile.mkdtemp(prefix="ditto-py-")
    # Removed however the test ends (it left one directory behind per run).
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    src = os.path.join(tmp, "articles")
    os.makedirs(src)
    for title, paras in ARTICLES.items():
        with open(os.path.join(src, f"{title}.html"), "wb") as f:
            f.write(html(paras))
    dls = os.path.join(tmp, "wiki.dls")
    run("labelset", "build", "--name", "wiki", "-o", dls, "--url-prefix", "https://en.wikipedia.org/wiki/", src)

    det = Detector(dls)
    assert "wiki.dls" in repr(det) and det.labelset_path.endswith("wiki.dls")
    web = pages()

    # Verdicts.
    v = det.page("http://copies.test/c/0.html", web["http://copies.test/c/0.html"], content_type="text/html; charset=utf-8")
    assert isinstance(v, Verdict) and v.skipped is None, v
    assert v.labeled_chunks == 3 and v.chunks == 4 and abs(v.contains - 0.75) < 1e-9, v
    assert [(t, c) for (_, t, _, c) in v.sources] == [("Albedo", 3)], v.sources
    assert v.sources[0][2] == "https://en.wikipedia.org/wiki/Albedo", v.sources
    assert v.evidence and all(isinstance(s, int) and p for s, p in v.evidence)
    assert "http://copies.test/c/" in v.neighborhoods and len(v.file_hash) == 40
    orig = det.page("http://notes0.test/n/page.html", web["http://notes0.test/n/page.html"])
    assert orig.contains == 0.0 and orig.sources == []
    assert det.page("http://x.test/missing", b"not found", status=404).skipped == "status_not_2xx"
    assert det.page("http://x.test/a.png", b"\x89PNG\r\n", content_type="image/png").skipped is not None
    links = det.page("http://x.test/d/a.html", b'<p><a href="../b.html">b</a></p>').links
    assert links == ["http://x.test/b.html"], links
    try:
        Detector(os.path.join(tmp, "missing.dls"))
        raise AssertionError("opening a missing label set should fail")
    except DittoError:
        pass

    # Threads: the GIL is released while detecting; the same verdicts as one at a time.
    items = list(web.items()) * 50
    t0 = time.perf_counter()
    serial = [det.page(u, b).contains for u, b in items]
    t_serial = time.perf_counter() - t0
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        t0 = time.perf_counter()
        threaded = list(ex.map(lambda ub: det.page(*ub).contains, items))
        t_threads = time.perf_counter() - t0
    assert serial == threaded
    print(f"detect: {1e6 * t_serial / len(items):.1f} µs/page serial, "
          f"{1e6 * t_threads / len(items):.1f} µs/page with 4 threads", file=sys.stderr)

    # A store that `ditto report` reads, the same as `ditto scan` over the same pages.
    db = os.path.join(tmp, "py.db")
    with Store(db, det) as store:
        new = [store.add(det.page(u, b, content_type="text/html")) for u, b in web.items()]
        assert all(new) and not store.add(det.page("http://copies.test/c/0.html", web["http://copies.test/c/0.html"]))
        assert not store.add(det.page("http://x.test/missing", b"", status=404))
    del store
    site = os.path.join(tmp, "site")
    for u, b in web.items():
        path = os.path.join(site, u[len("http://"):])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b)
    scan_db = os.path.join(tmp, "scan.db")
    run("scan", "--store", scan_db, "--labelset", dls, "--url-prefix", "http://", "--progress", "none", site)
    for level in ("neighborhood", "page"):
        py, scan = report(db, level), report(scan_db, level)
        assert py == scan, f"{level}: python {py} != scan {scan}"
    flagged = [r["neighborhood"] for r in report(db, "neighborhood")]
    assert "http://copies.test/c/" in flagged and not any("notes" in n for n in flagged), flagged
    print(f"ditto_detect {ditto_detect.__version__}: API test passed (flagged {flagged})", file=sys.stderr)


if __name__ == "__main__":
    main()
