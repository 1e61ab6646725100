"""ditto's content-reuse detection inside your own crawler.

>>> from ditto_detect import Detector, Store
>>> det = Detector("wikipedia.dls")
>>> v = det.page("http://example.org/a.html", body, content_type="text/html")
>>> v.contains, v.sources
>>> with Store("crawl.db", det) as store:
...     store.add(v)

Then ``ditto report --store crawl.db`` flags the neighborhoods with copied content and
``ditto review --store crawl.db`` opens the review page. For Scrapy, see
:mod:`ditto_detect.scrapy`.

A WARC file scanned as ``ditto scan`` scans it, without a store (what a Spark task runs,
see ``examples/spark/scan.py``):

>>> s = det.scan_warc("file.warc.gz")       # or a binary file-like object (HTTP stream)
>>> s.pages, s.accumulators, s.stats

``MeanStd`` and ``badness`` are ``ditto report``'s threshold arithmetic.
"""

from ._native import (
    CONTAINS_SCALE,
    Detector,
    DittoError,
    MeanStd,
    Store,
    Verdict,
    WarcScan,
    __version__,
    badness,
    contains_fixed,
    recrawl_plan,
)

__all__ = [
    "CONTAINS_SCALE",
    "Detector",
    "DittoError",
    "MeanStd",
    "Store",
    "Verdict",
    "WarcScan",
    "__version__",
    "badness",
    "contains_fixed",
    "recrawl_plan",
]
