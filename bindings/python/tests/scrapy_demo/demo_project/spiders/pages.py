"""Fetches the URLs listed in PAGES_URLS (a file, one URL a line) once each, without following
links: the edited-copy test's spider (../../test_edited.py)."""

import os

import scrapy

from ditto_detect.scrapy import page_item


class PagesSpider(scrapy.Spider):
    name = "pages"

    async def start(self):
        for req in self.start_requests():
            yield req

    def start_requests(self):
        with open(os.environ["PAGES_URLS"], encoding="utf-8") as f:
            for u in f.read().split():
                yield scrapy.Request(u, self.parse)

    def parse(self, response):
        yield page_item(response)
