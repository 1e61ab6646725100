"""Per-page detect time from Python over the pages a Scrapy crawl saw.

    python bench_detect.py LABELSET ITEMS.jsonl   (http_proxy set to the demo web)

Fetches each item's URL once, then times Detector.page over all bodies (serial, and with
a thread pool: the GIL is released while detecting)."""

import concurrent.futures
import json
import os
import statistics
import sys
import time
import urllib.request

from ditto_detect import Detector


def main():
    labelset, items_path = sys.argv[1], sys.argv[2]
    urls = [json.loads(l)["url"] for l in open(items_path) if l.strip()]
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": os.environ["http_proxy"]}))
    pages = []
    for u in urls:
        with opener.open(u) as r:
            pages.append((u, r.read(), r.headers.get("Content-Type")))
    det = Detector(labelset)
    reps = max(1, 20000 // max(1, len(pages)))
    times = []
    for _ in range(reps):
        for u, b, ct in pages:
            t0 = time.perf_counter()
            det.page(u, b, content_type=ct)
            times.append(time.perf_counter() - t0)
    times.sort()
    n = len(times)
    mb = sum(len(b) for _, b, _ in pages) / len(pages) / 1024
    work = pages * reps
    threads = os.cpu_count() or 2
    with concurrent.futures.ThreadPoolExecutor(threads) as ex:
        t0 = time.perf_counter()
        list(ex.map(lambda p: det.page(p[0], p[1], content_type=p[2]), work))
        tt = time.perf_counter() - t0
    print(json.dumps({
        "pages": len(pages), "mean_body_kib": round(mb, 1), "calls": n,
        "mean_us": round(1e6 * statistics.fmean(times), 1),
        "p50_us": round(1e6 * times[n // 2], 1), "p99_us": round(1e6 * times[int(n * 0.99)], 1),
        "serial_pages_per_s": round(n / sum(times)),
        "threads": threads, "threaded_pages_per_s": round(len(work) / tt),
    }))


if __name__ == "__main__":
    main()
