"""The benchmark's spider: fetches the URLs listed in BENCH_URLS (a JSON-lines feed of an
earlier crawl) BENCH_REPEAT times each, without following links."""

import json
import os

import scrapy

from ditto_detect.scrapy import page_item


class BenchSpider(scrapy.Spider):
    name = "bench"

    async def start(self):
        for req in self.start_requests():
            yield req

    def start_requests(self):
        urls = [json.loads(l)["url"] for l in open(os.environ["BENCH_URLS"]) if l.strip()]
        for _ in range(int(os.environ.get("BENCH_REPEAT", "10"))):
            for u in urls:
                yield scrapy.Request(u, self.parse, dont_filter=True)

    def parse(self, response):
        yield page_item(response)
