"""ditto in a Scrapy project: an item pipeline that detects copied content on every page
item and accumulates neighborhoods in a ditto store.

settings.py::

    ITEM_PIPELINES = {"ditto_detect.scrapy.DittoPipeline": 300}
    DITTO_LABELSET = "wikipedia.dls"
    DITTO_STORE = "crawl.db"     # then: ditto report --store crawl.db / ditto review --store crawl.db

Items the pipeline detects on carry the page (other items pass through untouched):

``url`` (str)
    the page's URL (``response.url``)
``body`` (bytes)
    the raw HTTP body (``response.body``)
``status`` (int, optional, default 200)
    the HTTP status
``content_type`` (str, optional)
    the Content-Type header; when missing it is taken from ``headers``
``headers`` (optional)
    the response headers (``response.headers`` or a dict)

``page_item(response)`` builds such an item from a response: ``yield page_item(response)``
in a callback. The pipeline stores the verdict and, when the item accepts it, sets its
``ditto`` field to a summary (``DITTO_ITEM_FIELD`` renames it; ``None`` turns it off).

Optional settings: ``DITTO_DEFAULT_STOP_CHUNKS`` (bool, default True),
``DITTO_DROP_BODY`` (bool, default False: remove ``body`` from the item after detection),
``DITTO_IN_THREAD`` (bool, default True: detect in Twisted's thread pool; ditto releases
the GIL, so detection runs beside the crawl).
"""

from __future__ import annotations

import logging
from typing import Any, Dict, Mapping, Optional

from . import Detector, Store, Verdict

logger = logging.getLogger(__name__)

__all__ = ["DittoPipeline", "page_item", "verdict_summary"]


def page_item(response: Any) -> Dict[str, Any]:
    """The item ``DittoPipeline`` detects on, built from a Scrapy response."""
    return {
        "url": response.url,
        "body": response.body,
        "status": response.status,
        "content_type": _header(response.headers, "Content-Type"),
    }


def verdict_summary(v: Verdict) -> Dict[str, Any]:
    """A small, JSON-friendly summary of a verdict (what the item's ``ditto`` field gets)."""
    return {
        "skipped": v.skipped,
        "contains": v.contains,
        "chunks": v.chunks,
        "labeled_chunks": v.labeled_chunks,
        "file_hash": v.file_hash,
        "sources": [{"id": i, "title": t, "url": u, "chunks": c} for (i, t, u, c) in v.sources],
        "neighborhoods": v.neighborhoods,
    }


def _header(headers: Any, name: str) -> Optional[str]:
    if headers is None:
        return None
    value = None
    try:
        value = headers.get(name)
    except Exception:  # not a mapping
        return None
    if value is None and isinstance(headers, Mapping):
        lname = name.lower()
        for k, v in headers.items():
            key = k.decode("latin-1") if isinstance(k, bytes) else str(k)
            if key.lower() == lname:
                value = v
                break
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


class DittoPipeline:
    """Scrapy item pipeline: detect on page items, write verdicts to a ditto store."""

    def __init__(
        self,
        labelset: str,
        store: str,
        default_stop_chunks: bool = True,
        item_field: Optional[str] = "ditto",
        drop_body: bool = False,
        in_thread: bool = True,
    ) -> None:
        self.labelset_path = labelset
        self.store_path = store
        self.default_stop_chunks = default_stop_chunks
        self.item_field = item_field
        self.drop_body = drop_body
        self.in_thread = in_thread
        self.detector: Optional[Detector] = None
        self.store: Optional[Store] = None
        self.stats = {"pages": 0, "stored": 0, "skipped": 0, "labeled": 0}

    @classmethod
    def from_crawler(cls, crawler: Any) -> "DittoPipeline":
        from scrapy.exceptions import NotConfigured

        s = crawler.settings
        labelset, store = s.get("DITTO_LABELSET"), s.get("DITTO_STORE")
        if not labelset or not store:
            raise NotConfigured("DittoPipeline needs DITTO_LABELSET and DITTO_STORE")
        field = s.get("DITTO_ITEM_FIELD", "ditto")
        p = cls(
            str(labelset),
            str(store),
            default_stop_chunks=s.getbool("DITTO_DEFAULT_STOP_CHUNKS", True),
            item_field=field or None,
            drop_body=s.getbool("DITTO_DROP_BODY", False),
            in_thread=s.getbool("DITTO_IN_THREAD", True),
        )
        p.crawler = crawler
        return p

    def open_spider(self, spider: Any = None) -> None:
        self.detector = Detector(self.labelset_path, default_stop_chunks=self.default_stop_chunks)
        self.store = Store(self.store_path, self.detector)
        logger.info("ditto: label set %s, store %s", self.labelset_path, self.store_path)

    def close_spider(self, spider: Any = None) -> None:
        if self.store is not None:
            self.store.flush()
        logger.info(
            "ditto: %(pages)d pages, %(stored)d stored, %(skipped)d skipped, %(labeled)d with labeled chunks",
            self.stats,
        )
        st = getattr(getattr(self, "crawler", None), "stats", None)
        if st is not None:
            for k, v in self.stats.items():
                st.set_value(f"ditto/{k}", v)
        self.store = None
        self.detector = None

    def _detect(self, url: str, body: bytes, content_type: Optional[str], status: int) -> Any:
        # May run in a worker thread: touches no Python state but the detector and store.
        detector, store = self.detector, self.store
        if detector is None or store is None:
            raise RuntimeError("DittoPipeline: open_spider was not called")
        v = detector.page(url, body, content_type=content_type, status=status)
        return v, store.add(v)

    def _finish(self, item: Any, adapter: Any, result: Any) -> Any:
        v, new = result
        self.stats["pages"] += 1
        self.stats["stored"] += int(new)
        if v.skipped is not None:
            self.stats["skipped"] += 1
        elif v.labeled_chunks:
            self.stats["labeled"] += 1
        if self.drop_body:
            try:
                del adapter["body"]
            except (KeyError, TypeError):
                pass
        if self.item_field:
            try:
                adapter[self.item_field] = verdict_summary(v)
            except (KeyError, TypeError):  # a scrapy.Item without that field
                pass
        return item

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        from itemadapter import ItemAdapter

        adapter = ItemAdapter(item)
        url, body = adapter.get("url"), adapter.get("body")
        if not isinstance(url, str) or not isinstance(body, (bytes, bytearray, memoryview)):
            return item  # not a page item
        body = bytes(body)
        status = int(adapter.get("status") or 200)
        ctype = adapter.get("content_type")
        if isinstance(ctype, bytes):
            ctype = ctype.decode("latin-1")
        if ctype is None:
            ctype = _header(adapter.get("headers"), "Content-Type")
        if self.in_thread:
            from scrapy.utils.defer import maybe_deferred_to_future
            from twisted.internet.threads import deferToThread

            result = await maybe_deferred_to_future(deferToThread(self._detect, url, body, ctype, status))
        else:
            result = self._detect(url, body, ctype, status)
        return self._finish(item, adapter, result)
