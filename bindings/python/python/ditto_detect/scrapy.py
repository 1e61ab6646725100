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

A recrawl that skips replicas (Shivakumar & Garcia-Molina 1998 §3), the rule of
``ditto recrawl``: a downloader middleware that drops requests for the pages an earlier
crawl's store knows as exact or near replicas of another page (not their cluster's
representative), and lets them through after all when the representative changed::

    DOWNLOADER_MIDDLEWARES = {"ditto_detect.scrapy.DittoRecrawlMiddleware": 50}
    DITTO_RECRAWL_STORE = "crawl.db"   # the earlier crawl's store (not the one being written)

See :class:`DittoRecrawlMiddleware` for its settings and Scrapy stats.

Optional settings: ``DITTO_MATCH`` (``"passage"``, the default: exact chunks and blocks
covered by labeled passages, which finds edited copies where the label set has a passage
table; ``"exact"``: exact chunks only, as ``ditto crawl --match exact``),
``DITTO_DEFAULT_STOP_CHUNKS`` (bool, default True),
``DITTO_DROP_BODY`` (bool, default False: remove ``body`` from the item after detection),
``DITTO_IN_THREAD`` (bool, default True: detect in Twisted's thread pool; ditto releases
the GIL, so detection runs beside the crawl).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from . import Detector, Store, Verdict

logger = logging.getLogger(__name__)

__all__ = ["DittoPipeline", "DittoRecrawlMiddleware", "page_item", "verdict_summary"]


def page_item(response: Any) -> Dict[str, Any]:
    """The item ``DittoPipeline`` detects on, built from a Scrapy response."""
    return {
        "url": response.url,
        "body": response.body,
        "status": response.status,
        "content_type": _header(response.headers, "Content-Type"),
    }


def verdict_summary(v: Verdict) -> Dict[str, Any]:
    """A small, JSON-friendly summary of a verdict (what the item's ``ditto`` field gets).

    ``evidence`` holds the page's first copied passages, each with the source it is from
    and how it was found (``match``: ``"exact"`` or ``"passage"``, an edited copy);
    ``words``/``covered_words`` (the page's words, and those that are labeled text) are None
    when passages were not matched (``DITTO_MATCH = "exact"``, a label set without passages).
    """
    return {
        "skipped": v.skipped,
        "contains": v.contains,
        "chunks": v.chunks,
        "labeled_chunks": v.labeled_chunks,
        "file_hash": v.file_hash,
        "sources": [{"id": i, "title": t, "url": u, "chunks": c} for (i, t, u, c) in v.sources],
        "evidence": [
            {"source_id": s, "passage": p, "match": m} for (s, p), m in zip(v.evidence, v.evidence_match)
        ],
        "words": v.words,
        "covered_words": v.covered_words,
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
        match: str = "passage",
    ) -> None:
        if match not in ("passage", "exact"):
            raise ValueError(f'DITTO_MATCH must be "passage" or "exact", not {match!r}')
        self.labelset_path = labelset
        self.store_path = store
        self.match = match
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
            match=str(s.get("DITTO_MATCH") or "passage"),
        )
        p.crawler = crawler
        return p

    def open_spider(self, spider: Any = None) -> None:
        self.detector = Detector(
            self.labelset_path, default_stop_chunks=self.default_stop_chunks, match=self.match
        )
        self.store = Store(self.store_path, self.detector)
        logger.info(
            "ditto: label set %s, store %s, %s",
            self.labelset_path,
            self.store_path,
            "exact chunks and labeled passages" if self.detector.passages else "exact chunks only",
        )

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


PlanRow = Tuple[str, Sequence[str], Sequence[str]]


class DittoRecrawlMiddleware:
    """Scrapy downloader middleware for a recrawl that skips replicas.

    The earlier crawl's store (``DITTO_RECRAWL_STORE``) is clustered as ``ditto recrawl``
    and ``ditto replicas`` do (:func:`ditto_detect.recrawl_plan`). A request for a cluster
    member that is not its representative is dropped (``IgnoreRequest``) while the
    representative is not known to have changed; when the representative's response comes
    back with a body whose SHA-1 is none of the old store's for it (or its download fails),
    the cluster counts as changed and its dropped requests are scheduled again. A cluster
    whose representative was never requested counts as changed when the spider goes idle
    (``ditto recrawl`` counts a representative it could not refetch as changed, too). URLs
    are compared as strings, as stored (``response.url`` for stores written by
    :class:`DittoPipeline`).

    Settings: ``DITTO_RECRAWL_STORE`` (required), ``DITTO_RECRAWL_THRESHOLD`` (Jaccard, default
    0.8), ``DITTO_RECRAWL_SIMHASH_K`` (default 3; ``None`` or ``-1``: no SimHash candidates),
    ``DITTO_RECRAWL_SKIPPED_OUT`` (write the skipped URLs there at the end, one
    ``url<TAB>representative`` a line, as ``ditto recrawl --skipped-out``).

    Scrapy stats: ``ditto_recrawl/clusters``, ``ditto_recrawl/dropped`` (requests dropped),
    ``ditto_recrawl/refetched`` (dropped, then scheduled again because the representative
    changed or was not fetched), ``ditto_recrawl/skipped`` (dropped for good, at the end),
    ``ditto_recrawl/changed_clusters``.
    """

    def __init__(self, plan: Sequence[PlanRow], skipped_out: Optional[str] = None) -> None:
        self.representatives: List[str] = []
        self.rep_hashes: List[Set[str]] = []
        self.cluster_of_member: Dict[str, int] = {}
        self.cluster_of_rep: Dict[str, int] = {}
        for i, (rep, hashes, others) in enumerate(plan):
            self.representatives.append(rep)
            self.rep_hashes.append(set(hashes))
            self.cluster_of_rep[rep] = i
            for o in others:
                self.cluster_of_member.setdefault(o, i)
        # None: representative not seen yet; True: changed; False: unchanged.
        self.changed: List[Optional[bool]] = [None] * len(plan)
        self.dropped: Dict[int, List[Any]] = {}
        self.skipped_out = skipped_out
        self.stats: Dict[str, int] = {
            "clusters": len(plan),
            "dropped": 0,
            "refetched": 0,
            "skipped": 0,
            "changed_clusters": 0,
        }
        self.crawler: Any = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "DittoRecrawlMiddleware":
        from scrapy import signals
        from scrapy.exceptions import NotConfigured

        from . import recrawl_plan

        s = crawler.settings
        old = s.get("DITTO_RECRAWL_STORE")
        if not old:
            raise NotConfigured("DittoRecrawlMiddleware needs DITTO_RECRAWL_STORE")
        k = s.get("DITTO_RECRAWL_SIMHASH_K", 3)
        k = None if k is None or str(k).lower() in ("none", "off", "-1") else int(k)
        plan = recrawl_plan(str(old), threshold=s.getfloat("DITTO_RECRAWL_THRESHOLD", 0.8), simhash_k=k)
        mw = cls(plan, skipped_out=s.get("DITTO_RECRAWL_SKIPPED_OUT"))
        mw.crawler = crawler
        crawler.signals.connect(mw.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        logger.info(
            "ditto recrawl: %d clusters, %d replica URLs skippable (store %s)",
            len(plan),
            len(mw.cluster_of_member),
            old,
        )
        return mw

    def _stat(self, key: str, n: int = 1) -> None:
        self.stats[key] += n
        st = getattr(self.crawler, "stats", None)
        if st is not None:
            st.inc_value(f"ditto_recrawl/{key}", n)

    def _mark(self, c: int, changed: bool) -> None:
        if self.changed[c] is not None:
            return
        self.changed[c] = changed
        if changed:
            self._stat("changed_clusters")
            self._release(c)

    def _release(self, c: int) -> None:
        """Schedule the cluster's dropped requests again."""
        for req in self.dropped.pop(c, []):
            self._stat("refetched")
            meta = dict(req.meta)
            meta["ditto_recrawl_refetch"] = True
            self.crawler.engine.crawl(req.replace(dont_filter=True, meta=meta))

    def process_request(self, request: Any, spider: Any = None) -> None:
        c = self.cluster_of_member.get(request.url)
        if c is None or self.changed[c] or request.meta.get("ditto_recrawl_refetch"):
            return None
        from scrapy.exceptions import IgnoreRequest

        self.dropped.setdefault(c, []).append(request)
        self._stat("dropped")
        raise IgnoreRequest(f"ditto recrawl: replica of {self.representatives[c]}")

    def process_response(self, request: Any, response: Any, spider: Any = None) -> Any:
        c = self.cluster_of_rep.get(request.url)
        if c is not None and response.status < 300:
            self._mark(c, hashlib.sha1(response.body).hexdigest() not in self.rep_hashes[c])
        elif c is not None and response.status >= 400:
            self._mark(c, True)
        return response

    def process_exception(self, request: Any, exception: Any, spider: Any = None) -> None:
        c = self.cluster_of_rep.get(request.url)
        if c is not None and request.meta.get("ditto_recrawl_refetch") is None:
            from scrapy.exceptions import IgnoreRequest

            if not isinstance(exception, IgnoreRequest):
                self._mark(c, True)
        return None

    def spider_idle(self, spider: Any = None) -> None:
        """Clusters whose representative was never fetched count as changed."""
        pending = [c for c in list(self.dropped) if self.changed[c] is None]
        if not pending:
            return
        for c in pending:
            self._mark(c, True)
        from scrapy.exceptions import DontCloseSpider

        raise DontCloseSpider()

    def skipped(self) -> List[Tuple[str, str]]:
        """``(url, representative)`` for every request dropped for good so far."""
        return sorted(
            (r.url, self.representatives[c]) for c, reqs in self.dropped.items() for r in reqs if not self.changed[c]
        )

    def spider_closed(self, spider: Any = None) -> None:
        skipped = self.skipped()
        self.stats["skipped"] = len(skipped)
        st = getattr(self.crawler, "stats", None)
        if st is not None:
            st.set_value("ditto_recrawl/skipped", len(skipped))
            st.set_value("ditto_recrawl/clusters", self.stats["clusters"])
        if self.skipped_out:
            with open(self.skipped_out, "w", encoding="utf-8") as f:
                for url, rep in skipped:
                    f.write(f"{url}\t{rep}\n")
        logger.info(
            "ditto recrawl: %(dropped)d requests dropped, %(refetched)d fetched after all "
            "(%(changed_clusters)d changed clusters), %(skipped)d skipped",
            self.stats,
        )
