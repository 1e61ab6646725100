# A Scrapy project crawling ditto's demo web (`ditto demo --serve`), used by
# ../test_scrapy.sh. The three ditto lines are the plug-in; the rest is ordinary Scrapy.
import os

BOT_NAME = "demo_project"
SPIDER_MODULES = ["demo_project.spiders"]

ITEM_PIPELINES = {"ditto_detect.scrapy.DittoPipeline": 300}
DITTO_LABELSET = os.environ.get("DITTO_LABELSET", "wikipedia-demo.dls")
DITTO_STORE = os.environ.get("DITTO_STORE", "crawl.db")
# "passage" (the default): edited copies count through the label set's passages; "exact":
# exact chunks only (`ditto crawl --match exact`).
DITTO_MATCH = os.environ.get("DITTO_MATCH", "passage")

if os.environ.get("DITTO_PIPELINE", "1") == "0":  # the benchmark's baseline
    ITEM_PIPELINES = {"demo_project.pipelines.DropBody": 300}
DITTO_DROP_BODY = True  # keep the feed small

# A recrawl that skips the replicas an earlier crawl's store knows (the `recrawl` spider).
if os.environ.get("DITTO_RECRAWL_STORE"):
    DOWNLOADER_MIDDLEWARES = {"ditto_detect.scrapy.DittoRecrawlMiddleware": 50}
    DITTO_RECRAWL_STORE = os.environ["DITTO_RECRAWL_STORE"]
    DITTO_RECRAWL_SKIPPED_OUT = os.environ.get("DITTO_RECRAWL_SKIPPED_OUT")

# Polite, as `ditto crawl --min-delay-ms 20`: one request at a time per host.
USER_AGENT = "ditto-scrapy-test/0.1 (+https://example.org/bot)"
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = float(os.environ.get("DOWNLOAD_DELAY", "0.02"))
DEPTH_LIMIT = 8
RETRY_TIMES = 3
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
