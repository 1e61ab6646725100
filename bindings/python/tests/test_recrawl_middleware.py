"""DittoRecrawlMiddleware's rule without a web: members of a cluster are dropped while the
representative is unchanged, fetched after all when it changed, failed, or was never
requested (run by test_scrapy.sh in the venv with the wheel and Scrapy)."""

import hashlib

from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.http import HtmlResponse, Request

from ditto_detect.scrapy import DittoRecrawlMiddleware


class Engine:
    def __init__(self):
        self.crawled = []

    def crawl(self, request):
        self.crawled.append(request)


class Crawler:
    def __init__(self):
        self.engine = Engine()
        self.stats = None


def sha1(b: bytes) -> str:
    return hashlib.sha1(b).hexdigest()


OLD = b"<p>old</p>"
plan = [
    ("http://a/rep", [sha1(OLD)], ["http://m/1", "http://m/2"]),  # stays the same
    ("http://b/rep", [sha1(OLD)], ["http://n/1"]),  # changes
    ("http://c/rep", [sha1(OLD)], ["http://o/1"]),  # never requested
    ("http://d/rep", [sha1(OLD)], ["http://p/1"]),  # download fails
]
mw = DittoRecrawlMiddleware(plan)
mw.crawler = Crawler()


def dropped(url: str) -> bool:
    try:
        mw.process_request(Request(url))
        return False
    except IgnoreRequest:
        return True


def respond(url: str, body: bytes):
    req = Request(url)
    assert mw.process_request(req) is None
    return mw.process_response(req, HtmlResponse(url, body=body, encoding="utf-8"))


assert not dropped("http://elsewhere/x"), "URLs in no cluster pass"
assert dropped("http://m/1") and dropped("http://n/1") and dropped("http://o/1") and dropped("http://p/1")
respond("http://a/rep", OLD)
assert dropped("http://m/2"), "representative unchanged: members stay skipped"
respond("http://b/rep", b"<p>new</p>")
assert [r.url for r in mw.crawler.engine.crawled] == ["http://n/1"], "changed: dropped member refetched"
again = mw.crawler.engine.crawled[0]
assert again.dont_filter and mw.process_request(again) is None
assert not dropped("http://n/1"), "later requests of a changed cluster pass"
mw.process_exception(Request("http://d/rep"), ConnectionError("refused"))
assert [r.url for r in mw.crawler.engine.crawled][-1] == "http://p/1", "failed representative: members refetched"
try:
    mw.spider_idle()
    raise AssertionError("spider_idle should keep the spider open")
except DontCloseSpider:
    pass
assert [r.url for r in mw.crawler.engine.crawled][-1] == "http://o/1", "never-fetched representative"
mw.spider_idle()  # nothing pending: returns
assert mw.skipped() == [("http://m/1", "http://a/rep"), ("http://m/2", "http://a/rep")], mw.skipped()
assert mw.stats["dropped"] == 5 and mw.stats["refetched"] == 3 and mw.stats["changed_clusters"] == 3, mw.stats
print("DittoRecrawlMiddleware rule: ok")
