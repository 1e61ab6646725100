"""Follows links over the demo web's hosts from its two seeds, yielding one page item per
response for DittoPipeline. The hosts (*.demo.test) reach the loopback server through
the `http_proxy` environment variable, so URLs stay those `ditto crawl` sees."""

import scrapy
from scrapy.http import TextResponse

from ditto_detect.scrapy import page_item


class DemoSpider(scrapy.Spider):
    name = "demo"
    allowed_domains = ["demo.test"]
    start_urls = ["http://wiki.demo.test/", "http://blog.demo.test/"]

    def parse(self, response):
        yield page_item(response)
        if isinstance(response, TextResponse):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse)
