"""The recrawl spider: refetches the URLs of an earlier crawl (RECRAWL_URLS, its JSON-lines
feed) without following links, as `ditto recrawl` seeds its crawl with the old store's URLs
at depth 0. With DITTO_RECRAWL_STORE set, settings.py turns DittoRecrawlMiddleware on."""

import json
import os

import scrapy

from ditto_detect.scrapy import page_item


class RecrawlSpider(scrapy.Spider):
    name = "recrawl"

    async def start(self):
        for req in self.start_requests():
            yield req

    def start_requests(self):
        urls = sorted({json.loads(l)["url"] for l in open(os.environ["RECRAWL_URLS"]) if l.strip()})
        for u in urls:
            yield scrapy.Request(u, self.parse)

    def parse(self, response):
        yield page_item(response)
