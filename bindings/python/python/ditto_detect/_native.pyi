"""Type stubs of the compiled module (ditto_detect._native)."""

from os import PathLike
from typing import BinaryIO, Dict, List, Literal, Optional, Sequence, Tuple, Union

__version__: str
CONTAINS_SCALE: float

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
    def evidence_match(self) -> List[Literal["exact", "passage"]]:
        """How each of ``evidence`` was found, in its order: ``"exact"`` (the whole
        normalized paragraph is in the label set) or ``"passage"`` (labeled passages cover at
        least half of its words: an edited copy)."""
    @property
    def words(self) -> Optional[int]:
        """Words on the page when passages were matched; None with ``match="exact"``, a label
        set without passages, or a skipped page."""
    @property
    def covered_words(self) -> Optional[int]:
        """Of ``words``, those that are labeled text (exact labeled chunks or covered by
        labeled passages); None as ``words``."""
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
        stop_chunks: Sequence[Union[str, "PathLike[str]"]] = (),
        max_path_repeats: int = 3,
        max_depth: int = 96,
        match: Literal["passage", "exact"] = "passage",
    ) -> None:
        """``match="passage"`` (default): exact chunks and blocks covered by labeled passages
        (edited copies), where the label set has a passage table (else exact only, with a
        ``UserWarning``); ``match="exact"``: exact chunks only (``ditto scan --match exact``)."""
    @property
    def labelset_path(self) -> str: ...
    @property
    def passages(self) -> bool:
        """Whether labeled passages are matched (``match="passage"`` and a label set with a
        passage table)."""
    def scan_warc(
        self,
        source: Union[str, "PathLike[str]", BinaryIO],
        name: Optional[str] = None,
        max_body_bytes: int = 64 << 20,
    ) -> "WarcScan":
        """Scan one WARC file as ``ditto scan`` does, without a store: a path, or a binary
        file-like object with ``read(n)``. An exception raised by ``source.read`` is raised
        again."""
    def source(self, id: int) -> Optional[Tuple[str, str]]:
        """A labeled source's ``(title, url)``."""
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

PageRow = Tuple[
    str,
    str,
    int,
    int,
    int,
    int,
    int,
    int,
    float,
    int,
    List[str],
    List[Tuple[int, int]],
    List[Tuple[int, str]],
    List[Literal["exact", "passage"]],
    Optional[int],
    Optional[int],
]

class WarcScan:
    """What ``Detector.scan_warc`` returns."""

    @property
    def pages(self) -> List[PageRow]:
        """``(url, file_hash, warc_offset, fetch_time, status, chunks, labeled_chunks,
        stop_chunks, contains, contains_fixed, neighborhoods, sources, evidence, evidence_match,
        words, covered_words)`` per analysed page, each capture once; ``evidence_match`` says
        how each of ``evidence`` was found, ``words``/``covered_words`` are None when passages
        were not matched."""
    @property
    def accumulators(self) -> List[Tuple[str, int, int, int, int]]:
        """``(neighborhood, pages, chunks, labeled_chunks, contains_sum_fixed)``."""
    @property
    def stats(self) -> Dict[str, object]:
        """``records``, ``pages_read``, ``pages``, ``payload_bytes``, ``input_bytes``, ``skipped``."""
    @property
    def errors(self) -> List[str]: ...
    @property
    def name(self) -> str: ...

class MeanStd:
    """``ditto report``'s mean + σ arithmetic (``detector::MeanStd``)."""

    def __init__(self) -> None: ...
    def push(self, x: float) -> None: ...
    def push_packed(self, data: bytes) -> None:
        """Push little-endian float64s (``array('d').tobytes()`` on little-endian machines)."""
    @property
    def count(self) -> int: ...
    @property
    def sum(self) -> float: ...
    @property
    def sum_squares(self) -> float: ...
    def mean(self) -> float: ...
    def std_dev(self) -> float: ...
    def mean_plus_std(self) -> float: ...

def badness(pages: int, contains_sum_fixed: int) -> float:
    """badness(N) = Σ contains / |N| from a neighborhood's integer accumulators."""

def contains_fixed(contains: float) -> int:
    """``contains`` in fixed point (2^-40), as accumulators sum it."""
