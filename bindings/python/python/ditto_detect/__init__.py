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
"""

from ._native import Detector, DittoError, Store, Verdict, __version__, recrawl_plan

__all__ = ["Detector", "DittoError", "Store", "Verdict", "__version__", "recrawl_plan"]
