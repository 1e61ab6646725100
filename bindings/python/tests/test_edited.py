"""Edited copies (issue 36) through the ditto_detect wheel and its Scrapy pipeline.

A label set is built by `ditto labelset build` from the shared Wikipedia articles (it holds
their passages). A copier's pages take a few of those articles with one word changed in every
paragraph, so that no paragraph is an exact chunk any more. Then:

- `Detector` (default `match="passage"`) finds every edited page, with its source, its
  evidence marked `"passage"` and its words counted; `Detector(match="exact")` finds none of
  them (nor does a label set built with `--passages off`, which warns), while still finding
  the unedited copies, whose evidence is `"exact"`;
- a store written from Python reports the same page rows, `match` and `words`/`covered_words`
  included, as `ditto scan` over the same pages;
- a Scrapy crawl of the pages (served on loopback) with `DittoPipeline` puts the passage
  evidence in each item's `ditto` field and in its store, which `ditto report` reads; with
  `DITTO_MATCH = "exact"` nothing of the edited pages is found.

    python test_edited.py DITTO_BINARY [ARTICLES_DIR]
        (default ARTICLES_DIR: ../shared/data/wikipedia/articles beside the checkout)
"""

import atexit
import functools
import html
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from html.parser import HTMLParser

from ditto_detect import Detector, Store

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DITTO = sys.argv[1] if len(sys.argv) > 1 else "ditto"
ARTICLES = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "..", "shared", "data", "wikipedia", "articles")
TITLES = ["Albedo", "Aardvark", "Abacus", "Amateur_astronomy"]
PREFIX = "https://en.wikipedia.org/wiki/"
HOST = "spun.test"


class Paragraphs(HTMLParser):
    """The text of every <p> of a page, tags inside it dropped, whitespace collapsed."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.cur = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "p":
            self.cur = []

    def handle_endtag(self, tag):
        if tag == "p" and self.cur is not None:
            text = " ".join("".join(self.cur).split())
            if text:
                self.out.append(text)
            self.cur = None

    def handle_data(self, data):
        if self.cur is not None:
            self.cur.append(data)


def paragraphs(title):
    p = Paragraphs()
    with open(os.path.join(ARTICLES, title + ".html"), encoding="utf-8") as f:
        p.feed(f.read())
    return [t for t in p.out if len(t.split()) >= 4]


def one_word_changed(text):
    """The middle word of at least four letters replaced: the paragraph is no exact chunk."""
    words = text.split()
    n = len(words)
    at = next((i for i in ((n // 2 + k) % n for k in range(n)) if sum(c.isalpha() for c in words[i]) >= 4), n // 2)
    words[at] = "zanzibarish"
    return " ".join(words)


def page(title, paras):
    t = html.escape(title.replace("_", " "))
    body = "".join(f"<p>{html.escape(p)}</p>\n" for p in paras)
    return (
        f"<html><head><meta charset=\"utf-8\"><title>{t}</title></head><body>\n"
        f"<h1>{t}: everything you need to know</h1>\n<p>Fresh articles every day, rewritten for you.</p>\n"
        f"{body}</body></html>\n"
    ).encode("utf-8")


def web():
    """URL -> body: the edited copies, the unedited copies, an original page."""
    out = {}
    for t in TITLES:
        paras = paragraphs(t)
        assert len(paras) >= 5, (t, len(paras))
        out[f"http://{HOST}/edited/{t}.html"] = page(t, [one_word_changed(p) for p in paras])
        out[f"http://{HOST}/exact/{t}.html"] = page(t, paras)
    out[f"http://notes.test/n/page.html"] = page(
        "Notes",
        [
            "Original note: the weather was mild and the river rose a little after rain, so the ferry ran "
            "late on the third day of the month and nobody minded very much at all."
        ],
    )
    return out


def run(*args):
    r = subprocess.run([DITTO, *args], capture_output=True, text=True)
    assert r.returncode == 0, f"ditto {' '.join(args)}: exit {r.returncode}\n{r.stderr}"
    return r.stdout


def page_report(store):
    """`ditto report --level page` rows (every page with labeled text), by URL."""
    out = run("report", "--store", store, "--format", "jsonl", "--level", "page", "--threshold", "0")
    return {r["neighborhood"]: r for r in map(json.loads, out.splitlines()) if r}


def check_detector(dls, dls_exact_only, items):
    det = Detector(dls)
    exact = Detector(dls, match="exact")
    assert det.passages and not exact.passages
    try:
        Detector(dls, match="fuzzy")
        raise AssertionError("match='fuzzy' should be refused")
    except ValueError:
        pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = Detector(dls_exact_only)
    assert not old.passages
    assert any(issubclass(w.category, UserWarning) and "no passage table" in str(w.message) for w in caught), caught

    for url, body in items.items():
        v, ve, vo = (d.page(url, body, content_type="text/html; charset=utf-8") for d in (det, exact, old))
        if "/edited/" in url:
            title = url.rsplit("/", 1)[1][: -len(".html")]
            # Found through passages: the right source, most of the page labeled, each
            # passage of the evidence marked so, the page's words counted.
            assert v.sources and v.sources[0][2] == PREFIX + title, (url, v.sources)
            assert v.contains >= 0.6, (url, v)
            assert v.evidence and v.evidence_match == ["passage"] * len(v.evidence), (url, v.evidence_match)
            assert v.words and v.covered_words and 2 * v.covered_words >= v.words, (url, v.words, v.covered_words)
            # Exact chunks only: nothing (the edit hides the copy from the paper's method).
            for x in (ve, vo):
                assert x.labeled_chunks == 0 and x.sources == [] and x.evidence == [], (url, x)
                assert x.evidence_match == [] and x.words is None and x.covered_words is None, (url, x)
            print(
                f"{url}: passage {v.labeled_chunks}/{v.chunks} labeled ({v.covered_words}/{v.words} words), "
                f"exact {ve.labeled_chunks}/{ve.chunks}",
                file=sys.stderr,
            )
        elif "/exact/" in url:
            # Unedited copies: exact evidence either way.
            for x in (v, ve):
                assert x.labeled_chunks > 0 and x.evidence, (url, x)
                assert x.evidence_match == ["exact"] * len(x.evidence), (url, x.evidence_match)
            assert ve.words is None and v.words and v.covered_words, (url, v.words)
        else:
            assert v.labeled_chunks == 0 and v.evidence_match == [] and v.words is not None, (url, v)
    return det


def check_store_like_scan(tmp, dls, det, items):
    """A store written from Python reports what `ditto scan` over the same pages reports."""
    db = os.path.join(tmp, "py.db")
    with Store(db, det) as store:
        for url, body in items.items():
            assert store.add(det.page(url, body, content_type="text/html; charset=utf-8"))
    del store
    site = os.path.join(tmp, "site")
    for url, body in items.items():
        path = os.path.join(site, url[len("http://") :])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(body)
    scan_db = os.path.join(tmp, "scan.db")
    run("scan", "--store", scan_db, "--labelset", dls, "--url-prefix", "http://", "--progress", "none", site)
    py, scan = page_report(db), page_report(scan_db)
    assert py == scan, f"python store {json.dumps(py, indent=1)}\n!= ditto scan {json.dumps(scan, indent=1)}"
    for t in TITLES:
        row = py[f"http://{HOST}/edited/{t}.html"]
        assert row["evidence"] and {e["match"] for e in row["evidence"]} == {"passage"}, row
        assert 2 * row["covered_words"] >= row["words"] > 0, row
        assert {e["match"] for e in py[f"http://{HOST}/exact/{t}.html"]["evidence"]} == {"exact"}
    return site


def serve(site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=site))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    atexit.register(srv.shutdown)
    return f"http://127.0.0.1:{srv.server_address[1]}/"


def scrapy_crawl(tmp, dls, base, items, match):
    """The `pages` spider over the served copies with DittoPipeline; returns (items, report)."""
    urls = os.path.join(tmp, "urls.txt")
    with open(urls, "w", encoding="utf-8") as f:
        for u in items:
            f.write(base + u[len("http://") :] + "\n")
    db = os.path.join(tmp, f"scrapy-{match}.db")
    feed = os.path.join(tmp, f"items-{match}.jsonl")
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
    env.update(DITTO_LABELSET=dls, DITTO_STORE=db, DITTO_MATCH=match, PAGES_URLS=urls, DOWNLOAD_DELAY="0")
    r = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "pages", "-O", feed],
        cwd=os.path.join(HERE, "scrapy_demo"),
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    got = {}
    for line in open(feed, encoding="utf-8"):
        if line.strip():
            it = json.loads(line)
            got[it["url"][len(base) :]] = it["ditto"]
    assert len(got) == len(items), (sorted(got), r.stderr[-3000:])
    return got, page_report(db)


def check_scrapy(tmp, dls, site, items):
    base = serve(site)
    got, report = scrapy_crawl(tmp, dls, base, items, "passage")
    for t in TITLES:
        s = got[f"{HOST}/edited/{t}.html"]
        assert s["sources"] and s["sources"][0]["url"] == PREFIX + t, s
        assert s["evidence"] and {e["match"] for e in s["evidence"]} == {"passage"}, s
        assert 2 * s["covered_words"] >= s["words"] > 0, s
        row = report[f"{base}{HOST}/edited/{t}.html"]
        assert {e["match"] for e in row["evidence"]} == {"passage"}, row
        assert (row["words"], row["covered_words"]) == (s["words"], s["covered_words"]), (row, s)
        assert {e["match"] for e in got[f"{HOST}/exact/{t}.html"]["evidence"]} == {"exact"}
    got, report = scrapy_crawl(tmp, dls, base, items, "exact")
    for t in TITLES:
        s = got[f"{HOST}/edited/{t}.html"]
        assert s["labeled_chunks"] == 0 and s["evidence"] == [] and s["words"] is None, s
        assert f"{base}{HOST}/edited/{t}.html" not in report, sorted(report)
        assert f"{base}{HOST}/exact/{t}.html" in report, sorted(report)
    print(f"scrapy: the {len(TITLES)} edited copies found with passages, none with exact chunks only", file=sys.stderr)


def main():
    assert os.path.isdir(ARTICLES), f"{ARTICLES}: the shared Wikipedia articles are missing"
    tmp = tempfile.mkdtemp(prefix="ditto-py-edited-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    dls = os.path.join(tmp, "wikipedia.dls")
    common = ["--name", "wikipedia", "--min-chars", "100", "--url-prefix", PREFIX]
    run("labelset", "build", *common, "-o", dls, ARTICLES)
    dls_exact_only = os.path.join(tmp, "wikipedia-exact.dls")
    run("labelset", "build", *common, "--passages", "off", "-o", dls_exact_only, ARTICLES)
    items = web()
    det = check_detector(dls, dls_exact_only, items)
    site = check_store_like_scan(tmp, dls, det, items)
    check_scrapy(tmp, dls, site, items)
    print("edited copies: API, store and Scrapy pipeline test passed", file=sys.stderr)


if __name__ == "__main__":
    main()
