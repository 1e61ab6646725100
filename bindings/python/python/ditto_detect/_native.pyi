"""Type stubs of the compiled module (ditto_detect._native)."""

from os import PathLike
from typing import List, Optional, Tuple, Union

__version__: str

class DittoError(Exception):
    """An error from ditto (label set, store, I/O)."""

class Verdict:
    """What ditto says about one page (see ``Detector.page``)."""

    @property
    def url(self) -> str: ...
    @property
    def skipped(self) -> Optional[str]:
        """Why the page was not analysed (``status_not_2xx``, ``not_text``, ...), or None."""
    @property
    def contains(self) -> float:
        """contains(L_c, page): labeled chunk occurrences / chunk occurrences, in [0, 1]."""
    @property
    def chunks(self) -> int: ...
    @property
    def labeled_chunks(self) -> int: ...
    @property
    def file_hash(self) -> str:
        """SHA-1 of the body, hex."""
    @property
    def sources(self) -> List[Tuple[int, str, str, int]]:
        """Labeled sources the page copies from: (id, title, url, chunks)."""
    @property
    def evidence(self) -> List[Tuple[int, str]]:
        """Copied passages: (source id, passage)."""
    @property
    def links(self) -> List[str]:
        """Absolute outgoing links."""
    @property
    def neighborhoods(self) -> List[str]:
        """The neighborhoods (URL prefixes) the page counts in."""

class Detector:
    """Detection for one label set (``.dls``); thread-safe, releases the GIL while working."""

    def __init__(
        self,
        labelset_path: Union[str, "PathLike[str]"],
        default_stop_chunks: bool = True,
        links: bool = True,
    ) -> None: ...
    @property
    def labelset_path(self) -> str: ...
    def page(
        self,
        url: str,
        body: bytes,
        content_type: Optional[str] = None,
        status: int = 200,
    ) -> Verdict:
        """Analyse one fetched page (raw body, Content-Type header, HTTP status)."""

class Store:
    """A ditto store that ``ditto report`` and ``ditto review`` read, bound to a label set."""

    def __init__(self, path: Union[str, "PathLike[str]"], detector: Detector) -> None: ...
    @property
    def path(self) -> str: ...
    def add(self, verdict: Verdict) -> bool:
        """Add a page's verdict; returns whether it was new (skipped pages add nothing)."""
    def flush(self) -> None:
        """Write everything added so far to disk."""
    def __enter__(self) -> "Store": ...
    def __exit__(self, *args: object) -> bool: ...

def recrawl_plan(
    store_path: Union[str, "PathLike[str]"],
    threshold: float = 0.8,
    simhash_k: Optional[int] = 3,
) -> List[Tuple[str, List[str], List[str]]]:
    """The recrawl skip plan of an earlier crawl's store, as ``ditto recrawl`` makes it:
    ``(representative, representative_body_sha1s, others)`` for every cluster with
    something to skip."""
