#!/usr/bin/env python3
"""`ditto scan` + `ditto report` as a Spark job: WARC files from a listing, scanned on executors.

    spark-submit examples/spark/scan.py --labelset wikipedia.dls --input-list warc.paths.gz \\
        --base-url https://data.commoncrawl.org/ --out report/

Each task streams its WARC files over HTTP(S) (Python's urllib; a broken transfer is resumed
with a Range request from the byte it stopped at, retried with exponential backoff and given
up after --retries attempts without progress) and runs the `ditto_detect` wheel's
`Detector.scan_warc` on the stream: the stage functions of `ditto scan` (trap filter, clean,
fingerprint, match; with the label set's passages, so edited copies count, unless --match
exact), one capture (URL + body SHA-1) counted once per file. A task emits its
file's page rows and per-neighborhood integer accumulators (pages, chunks, labeled chunks,
Σ contains in fixed point), keyed by the file's number in the listing.

Spark then reduces as one `ditto` store would count (Ardi & Heidemann 2014 §3.3; detection is
distributive): a capture found in several files counts once (the copy in the file listed
first, at the smallest offset), so its other copies' contributions are taken off their
neighborhoods; accumulators are summed per neighborhood as exact integers (decimal(38,0));
badness(N) = Σ contains / |N|; the threshold is μ + σ of badness over ALL neighborhoods,
folded in neighborhood byte order with ditto's own `MeanStd` (the order and arithmetic of
`ditto report --store A --store B …`, so it comes out bit for bit the same); the report rows
are the neighborhoods above it, sorted as `ditto report` sorts them, with their top sources
and first passages. Every output comes from Spark's lineage, never from side effects: a task
that fails and is run again replaces its output, so nothing is counted twice.

Output (--out DIR):
  report.jsonl/       the report, `ditto report --format jsonl` rows (docs/report-schema.md),
                      in order across part files (`cat report.jsonl/part-*`)
  report.parquet/     the same rows
  threshold.json      {kind, value, mean, sd, population, bits: {value, mean, sd}}
  pages.parquet/      per-page verdicts: url, file_hash, warc_file, warc_offset, fetch_time,
                      status, chunks, labeled_chunks, stop_chunks, contains, neighborhoods,
                      sources, evidence (with each passage's match: exact or passage),
                      words, covered_words (null without passage matching); each capture once
  neighborhoods.parquet/  every neighborhood: accumulators, badness, flagged
  files.parquet/      per listed file: ok, error, records, pages, bytes, resumes, seconds
  summary.json        totals and timings

Inputs: --input-list FILE|URL (plain or gzipped, one path a line, joined to --base-url;
Common Crawl's warc.paths.gz) and/or WARC URLs or local paths as arguments. A path listed
twice is scanned once. A file whose transfer keeps failing is reported (files.parquet,
summary.json, stderr) and counted; its pages are left out and the rest go on.

Options mirror `ditto scan`/`ditto report`: --match, --stop-chunks, --no-default-stop-chunks,
--max-path-repeats, --max-depth, --max-body-bytes, --threshold, --min-pages, --evidence,
--sources. See README.md beside this file.
"""
import argparse
import gzip
import http.client
import io
import json
import os
import random
import struct
import sys
import time
import urllib.error
import urllib.request

USER_AGENT = "ditto-spark-scan/0.1 (+https://github.com/ditto)"
RETRYABLE_HTTP = {408, 425, 429, 500, 502, 503, 504}


class TransferFailed(Exception):
    """A transfer that could not be completed (after retries), or an answer we cannot use."""


class HttpRangeReader(io.RawIOBase):
    """A binary stream of one HTTP(S) resource that resumes a broken transfer with a Range
    request (`bytes=POS-`, with If-Range on the first answer's ETag or Last-Modified so a
    changed file is not spliced) and retries with exponential backoff and jitter. It gives up
    after `retries` failed attempts in a row without a byte of progress.

    A transfer is broken when the connection fails, a read times out, or the body ends before
    its Content-Length (urllib returns a short read there without an error)."""

    def __init__(self, url, timeout=60.0, retries=5, backoff=0.5, sleep=time.sleep):
        super().__init__()
        self.url = url
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep
        self.pos = 0
        self.size = None
        self.validator = None
        self.resumes = 0
        self.failures = 0
        self.resp = None
        self._connect()

    def readable(self):
        return True

    def _connect(self):
        fails = 0
        while True:
            try:
                self.resp = self._request()
                return
            except TransferFailed:
                raise
            except urllib.error.HTTPError as e:
                if e.code not in RETRYABLE_HTTP:
                    raise TransferFailed(f"{self.url}: HTTP {e.code}") from None
                err = f"HTTP {e.code}"
            except (OSError, http.client.HTTPException) as e:
                err = f"{type(e).__name__}: {e}"
            fails += 1
            self.failures += 1
            if fails > self.retries:
                raise TransferFailed(f"{self.url}: gave up at byte {self.pos} after {fails} attempts ({err})")
            delay = self.backoff * (2 ** (fails - 1)) * (0.5 + random.random())
            self.sleep(delay)

    def _request(self):
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        if self.pos > 0:
            headers["Range"] = f"bytes={self.pos}-"
            if self.validator:
                headers["If-Range"] = self.validator
        resp = urllib.request.urlopen(urllib.request.Request(self.url, headers=headers), timeout=self.timeout)
        status = resp.status
        if self.pos == 0:
            if status != 200:
                resp.close()
                raise TransferFailed(f"{self.url}: HTTP {status}")
            self.size = _int_or_none(resp.headers.get("Content-Length"))
            self.validator = resp.headers.get("ETag") or resp.headers.get("Last-Modified")
            return resp
        if status == 206:
            start, total = _content_range(resp.headers.get("Content-Range"))
            if start != self.pos or (self.size is not None and total not in (None, self.size)):
                resp.close()
                raise TransferFailed(f"{self.url}: asked for bytes {self.pos}-, got Content-Range {resp.headers.get('Content-Range')!r}")
            return resp
        if status == 200:
            # The server ignores Range, or If-Range failed: the file changed under us.
            v = resp.headers.get("ETag") or resp.headers.get("Last-Modified")
            size = _int_or_none(resp.headers.get("Content-Length"))
            if v != self.validator or size != self.size:
                resp.close()
                raise TransferFailed(f"{self.url}: changed during the transfer")
            skip = self.pos
            while skip > 0:
                got = resp.read(min(skip, 1 << 20))
                if not got:
                    resp.close()
                    raise OSError("connection ended while skipping to the resume point")
                skip -= len(got)
            return resp
        resp.close()
        raise TransferFailed(f"{self.url}: HTTP {status} to a Range request")

    def readinto(self, b):
        fails = 0
        while True:
            err = None
            try:
                n = self.resp.readinto(b)
            except (OSError, http.client.HTTPException) as e:
                n, err = 0, f"{type(e).__name__}: {e}"
            if n:
                self.pos += n
                return n
            if err is None and (self.size is None or self.pos >= self.size) or len(b) == 0:
                return 0
            # Broken transfer: resume from self.pos.
            fails += 1
            self.failures += 1
            try:
                self.resp.close()
            except Exception:
                pass
            if fails > self.retries:
                raise TransferFailed(f"{self.url}: gave up at byte {self.pos} after {fails} broken reads ({err or 'short body'})")
            self.sleep(self.backoff * (2 ** (fails - 1)) * (0.5 + random.random()))
            self.resumes += 1
            self._connect()

    def close(self):
        if self.resp is not None:
            try:
                self.resp.close()
            except Exception:
                pass
        super().close()


def _int_or_none(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _content_range(v):
    """`bytes START-END/TOTAL` → (START, TOTAL or None)."""
    try:
        unit, rest = v.split(" ", 1)
        span, total = rest.split("/", 1)
        start = int(span.split("-", 1)[0])
        return start, (None if total.strip() == "*" else int(total))
    except (AttributeError, ValueError):
        return None, None


def read_listing(path, base_url):
    """Paths of a listing (plain or gzipped, local or http(s)), joined to base_url."""
    if "://" in path:
        with urllib.request.urlopen(urllib.request.Request(path, headers={"User-Agent": USER_AGENT}), timeout=60) as r:
            data = r.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    out = []
    for line in data.decode("utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        out.append(join_url(base_url, line))
    return out


def join_url(base_url, p):
    if "://" in p or not base_url:
        return p
    return base_url.rstrip("/") + "/" + p.lstrip("/")


# --- on the executors --------------------------------------------------------------------

_DETECTORS = {}


def detector(conf):
    """One Detector per Python worker and label set (a worker runs many tasks)."""
    key = json.dumps(conf, sort_keys=True)
    det = _DETECTORS.get(key)
    if det is None:
        from pyspark import SparkFiles
        import ditto_detect

        det = ditto_detect.Detector(
            SparkFiles.get(conf["labelset"]),
            default_stop_chunks=conf["default_stop_chunks"],
            links=False,
            stop_chunks=[SparkFiles.get(s) for s in conf["stop_chunks"]],
            max_path_repeats=conf["max_path_repeats"],
            max_depth=conf["max_depth"],
            match=conf["match"],
        )
        _DETECTORS[key] = det
    return det


def scan_file(item, conf):
    """Scan one listed file: (file_no, location) → one record with its rows and counters."""
    file_no, loc = item
    det = detector(conf)
    t0 = time.time()
    resumes = failures = 0
    try:
        if "://" in loc:
            if not loc.startswith(("http://", "https://")):
                raise TransferFailed(f"{loc}: only http(s) URLs and local paths are read")
            src = HttpRangeReader(loc, timeout=conf["timeout"], retries=conf["retries"], backoff=conf["backoff"])
            try:
                res = det.scan_warc(src, name=loc, max_body_bytes=conf["max_body_bytes"])
            finally:
                resumes, failures = src.resumes, src.failures
                src.close()
        else:
            res = det.scan_warc(loc, name=loc, max_body_bytes=conf["max_body_bytes"])
    except Exception as e:  # the transfer gave up (or the file could not be opened)
        msg = str(e)[:500]
        return (file_no, loc, False, msg, {}, [], [], resumes, failures, time.time() - t0)
    _test_fail_once(loc)
    return (file_no, loc, True, None, res.stats, res.pages, res.accumulators, resumes, failures, time.time() - t0)


def _test_fail_once(loc):
    """Test hook: DITTO_SPARK_TEST_FAIL_ONCE=SUBSTRING fails the first attempt of the task of
    each file whose location contains it, after the scan (Spark must run it again and count
    the file once)."""
    needle = os.environ.get("DITTO_SPARK_TEST_FAIL_ONCE")
    if needle and needle in loc:
        from pyspark import TaskContext

        tc = TaskContext.get()
        if tc is not None and tc.attemptNumber() == 0:
            raise RuntimeError(f"test: first attempt of {loc} fails on purpose")


# --- the job -------------------------------------------------------------------------------

PAGE_FIELDS = (
    "url file_hash warc_offset fetch_time status chunks labeled_chunks stop_chunks contains "
    "contains_fixed neighborhoods sources evidence evidence_match words covered_words"
).split()


def schemas():
    from pyspark.sql import types as T

    source = T.StructType([T.StructField("id", T.LongType()), T.StructField("chunks", T.LongType())])
    evidence = T.StructType(
        [
            T.StructField("source_id", T.LongType()),
            T.StructField("passage", T.StringType()),
            T.StructField("match", T.StringType()),
        ]
    )
    pages = T.StructType(
        [
            T.StructField("file_no", T.LongType(), False),
            T.StructField("warc_file", T.StringType(), False),
            T.StructField("url", T.StringType(), False),
            T.StructField("file_hash", T.StringType(), False),
            T.StructField("warc_offset", T.LongType(), False),
            T.StructField("fetch_time", T.LongType(), False),
            T.StructField("status", T.IntegerType(), False),
            T.StructField("chunks", T.LongType(), False),
            T.StructField("labeled_chunks", T.LongType(), False),
            T.StructField("stop_chunks", T.LongType(), False),
            T.StructField("contains", T.DoubleType(), False),
            T.StructField("contains_fixed", T.LongType(), False),
            T.StructField("neighborhoods", T.ArrayType(T.StringType(), False), False),
            T.StructField("sources", T.ArrayType(source, False), False),
            T.StructField("evidence", T.ArrayType(evidence, False), False),
            T.StructField("words", T.LongType(), True),
            T.StructField("covered_words", T.LongType(), True),
        ]
    )
    accs = T.StructType(
        [
            T.StructField("file_no", T.LongType(), False),
            T.StructField("neighborhood", T.StringType(), False),
            T.StructField("pages", T.LongType(), False),
            T.StructField("chunks", T.LongType(), False),
            T.StructField("labeled_chunks", T.LongType(), False),
            T.StructField("contains_fixed", T.DecimalType(38, 0), False),
        ]
    )
    files = T.StructType(
        [
            T.StructField("file_no", T.LongType(), False),
            T.StructField("warc_file", T.StringType(), False),
            T.StructField("ok", T.BooleanType(), False),
            T.StructField("error", T.StringType(), True),
            T.StructField("records", T.LongType(), True),
            T.StructField("pages_read", T.LongType(), True),
            T.StructField("pages", T.LongType(), True),
            T.StructField("input_bytes", T.LongType(), True),
            T.StructField("payload_bytes", T.LongType(), True),
            T.StructField("skipped", T.MapType(T.StringType(), T.LongType()), True),
            T.StructField("resumes", T.LongType(), False),
            T.StructField("failed_reads", T.LongType(), False),
            T.StructField("seconds", T.DoubleType(), False),
        ]
    )
    return pages, accs, files


def page_rows(rec):
    file_no, loc, ok = rec[0], rec[1], rec[2]
    if not ok:
        return
    for p in rec[5]:
        (url, fh, off, ft, st, ch, lab, stop, cont, cf, hoods, srcs, ev, ev_match, words, covered) = p
        # Each passage with how it was found (exact or passage), as `ditto report` writes it.
        ev = [(s, text, m) for (s, text), m in zip(ev, ev_match)]
        yield (file_no, loc, url, fh, off, ft, st, ch, lab, stop, cont, cf, hoods, srcs, ev, words, covered)


def acc_rows(rec):
    from decimal import Decimal

    if not rec[2]:
        return
    for n, pages, chunks, labeled, cf in rec[6]:
        yield (rec[0], n, pages, chunks, labeled, Decimal(cf))


def file_row(rec):
    file_no, loc, ok, err, stats, _, _, resumes, failures, secs = rec
    g = stats.get
    return (
        file_no, loc, ok, err, g("records"), g("pages_read"), g("pages"), g("input_bytes"),
        g("payload_bytes"), dict(g("skipped") or {}), resumes, failures, float(secs),
    )


def pack_badness(rows):
    """Badness of each neighborhood of a partition, in order, as packed little-endian float64s
    (blocks of up to 2^20), computed by ditto's own code; checked against the SQL column."""
    import array

    import ditto_detect

    buf = array.array("d")
    for r in rows:
        b = ditto_detect.badness(r["pages"], int(r["contains_fixed"]))
        if b != r["badness"]:
            raise ValueError(f"badness of {r['neighborhood']!r}: SQL {r['badness']!r} != ditto {b!r}")
        buf.append(b)
        if len(buf) >= 1 << 20:
            yield _le(buf)
            buf = array.array("d")
    if buf:
        yield _le(buf)


def _le(buf):
    if sys.byteorder != "little":
        buf.byteswap()
    return buf.tobytes()


def report_json_rows(rows, conf, threshold):
    """`ditto report --format jsonl` rows (docs/report-schema.md), one JSON text per row."""
    det = detector(conf)
    names = {}

    def name(i):
        if i not in names:
            names[i] = det.source(i)
        return names[i]

    for r in rows:
        srcs = []
        for s in r["top_sources"] or []:
            t = name(s["id"])
            srcs.append({"id": s["id"], "title": t[0] if t else None, "url": t[1] if t else None, "chunks": s["chunks"]})
        ev = []
        for e in r["first_passages"] or []:
            t = name(e["source_id"])
            ev.append(
                {
                    "url": e["url"],
                    "passage": e["passage"],
                    "source_id": e["source_id"],
                    "source_title": t[0] if t else None,
                    "source_url": t[1] if t else None,
                    "match": e["match"],
                }
            )
        row = {
            "level": "neighborhood",
            "neighborhood": r["neighborhood"],
            "badness": r["badness"],
            "threshold": threshold["value"],
            "threshold_kind": threshold["kind"],
            "pages": r["pages"],
            "chunks": r["chunks"],
            "labeled_chunks": r["labeled_chunks"],
            "sources": srcs,
            "evidence": ev,
        }
        yield json.dumps(row, ensure_ascii=False, allow_nan=False)


def run(spark, a, files, conf):
    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    import ditto_detect

    sc = spark.sparkContext
    timings = {}
    t0 = time.time()
    page_schema, acc_schema, file_schema = schemas()

    # 1. Scan: one task per file (numbered by listing order), kept for the reductions.
    scanned = sc.parallelize(list(enumerate(files)), max(1, len(files))).map(lambda it: scan_file(it, conf))
    scanned = scanned.persist(StorageLevel.MEMORY_AND_DISK)
    files_df = spark.createDataFrame(scanned.map(file_row), file_schema).persist(StorageLevel.MEMORY_AND_DISK)
    # One part file per 1,000 listed files, not one per task (a shuffle: coalesce would run
    # the scan itself in that few tasks).
    files_df.repartition(max(1, len(files) // 1000)).write.mode("overwrite").parquet(os.path.join(a.out, "files.parquet"))
    timings["scan_s"] = time.time() - t0
    pages = spark.createDataFrame(scanned.flatMap(page_rows), page_schema)
    accs = spark.createDataFrame(scanned.flatMap(acc_rows), acc_schema)

    # 2. Each capture once: the copy in the first-listed file, at the smallest offset.
    t1 = time.time()
    w = Window.partitionBy("url", "file_hash").orderBy("file_no", "warc_offset")
    ranked = pages.withColumn("copy", F.row_number().over(w))
    ranked = ranked.persist(StorageLevel.MEMORY_AND_DISK)
    kept = ranked.where(F.col("copy") == 1).drop("copy", "file_no")
    # The other copies' contributions, taken off their neighborhoods.
    extra = (
        ranked.where(F.col("copy") > 1)
        .select("file_no", F.explode("neighborhoods").alias("neighborhood"), "chunks", "labeled_chunks", "contains_fixed")
        .select(
            "file_no",
            "neighborhood",
            F.lit(-1).cast("long").alias("pages"),
            (-F.col("chunks")).alias("chunks"),
            (-F.col("labeled_chunks")).alias("labeled_chunks"),
            (-F.col("contains_fixed").cast("decimal(38,0)")).alias("contains_fixed"),
        )
    )
    hoods = (
        accs.unionByName(extra)
        .groupBy("neighborhood")
        .agg(
            F.sum("pages").alias("pages"),
            F.sum("chunks").alias("chunks"),
            F.sum("labeled_chunks").alias("labeled_chunks"),
            F.sum("contains_fixed").cast("decimal(38,0)").alias("contains_fixed"),
        )
        .where(F.col("pages") > 0)
        # badness = (Σ contains_fixed as f64 / 2^40) / pages, in doubles as ditto computes it.
        .withColumn(
            "badness",
            F.col("contains_fixed").cast("double") / F.lit(float(1 << 40)) / F.col("pages").cast("double"),
        )
    )
    hoods = hoods.persist(StorageLevel.MEMORY_AND_DISK)

    # 3. μ + σ over all neighborhoods, folded in neighborhood byte order (as `ditto report`).
    stats = ditto_detect.MeanStd()
    ordered = hoods.select("neighborhood", "pages", "contains_fixed", "badness").orderBy("neighborhood")
    for blob in ordered.rdd.mapPartitions(pack_badness).toLocalIterator():
        stats.push_packed(blob)
    if a.threshold == "auto":
        threshold = {"kind": "mean+sd", "value": stats.mean_plus_std()}
    else:
        threshold = {"kind": "fixed", "value": float(a.threshold)}
    threshold.update({"mean": stats.mean(), "sd": stats.std_dev(), "population": stats.count})
    # The IEEE 754 bits too, for comparisons that must not depend on a JSON parser's rounding.
    threshold["bits"] = {k: struct.unpack("<Q", struct.pack("<d", threshold[k]))[0] for k in ("value", "mean", "sd")}
    timings["reduce_s"] = time.time() - t1

    # 4. The report: neighborhoods above it, with top sources and first passages of the pages
    #    whose URL starts with the prefix (as `ditto report` walks them: URL, then file hash).
    t2 = time.time()
    flagged = hoods.where((F.col("badness") > F.lit(threshold["value"])) & (F.col("pages") >= a.min_pages))
    flagged = flagged.withColumn("flagged", F.lit(True))
    fl = flagged.select("neighborhood")
    under = (
        kept.select("url", "file_hash", "sources", "evidence", F.explode("neighborhoods").alias("neighborhood"))
        .join(F.broadcast(fl) if a.broadcast_flagged else fl, "neighborhood")
        .where(F.col("url").startswith(F.col("neighborhood")))
    )
    per_source = (
        under.select("neighborhood", F.explode("sources").alias("s"))
        .groupBy("neighborhood", F.col("s.id").alias("id"))
        .agg(F.sum("s.chunks").alias("chunks"))
    )
    ws = Window.partitionBy("neighborhood").orderBy(F.col("chunks").desc(), F.col("id").asc())
    top = (
        per_source.withColumn("rank", F.row_number().over(ws))
        .where(F.col("rank") <= a.sources)
        .groupBy("neighborhood")
        .agg(F.sort_array(F.collect_list(F.struct("rank", "id", "chunks"))).alias("top_sources"))
    )
    we = Window.partitionBy("neighborhood").orderBy("url", "file_hash")
    first = (
        under.where(F.size("evidence") > 0)
        .withColumn("rank", F.row_number().over(we))
        .where(F.col("rank") <= a.evidence)
        .select("neighborhood", "rank", "url", F.col("evidence")[0].alias("e"))
        .groupBy("neighborhood")
        .agg(
            F.sort_array(
                F.collect_list(
                    F.struct(
                        "rank",
                        "url",
                        F.col("e.source_id").alias("source_id"),
                        F.col("e.passage").alias("passage"),
                        F.col("e.match").alias("match"),
                    )
                )
            ).alias("first_passages")
        )
    )
    report = (
        flagged.join(top, "neighborhood", "left")
        .join(first, "neighborhood", "left")
        .orderBy(F.col("badness").desc(), F.col("labeled_chunks").desc(), F.col("neighborhood").asc())
    )
    if a.limit is not None:
        report = report.limit(a.limit)
    th = {k: threshold[k] for k in ("kind", "value")}
    jsonl = report.rdd.mapPartitions(lambda rows: report_json_rows(rows, conf, th))
    jsonl = jsonl.persist(StorageLevel.MEMORY_AND_DISK)
    jsonl.saveAsTextFile(os.path.join(a.out, "report.jsonl"))
    report_pq = spark.read.json(jsonl, schema=report_schema())
    report_pq.write.mode("overwrite").parquet(os.path.join(a.out, "report.parquet"))
    timings["report_s"] = time.time() - t2

    # 5. Per-page verdicts and every neighborhood, for SQL.
    t3 = time.time()
    kept.drop("contains_fixed").write.mode("overwrite").parquet(os.path.join(a.out, "pages.parquet"))
    (
        hoods.join(flagged.select("neighborhood", "flagged"), "neighborhood", "left")
        .fillna(False, ["flagged"])
        .write.mode("overwrite")
        .parquet(os.path.join(a.out, "neighborhoods.parquet"))
    )
    timings["write_s"] = time.time() - t3

    with open(os.path.join(a.out, "threshold.json"), "w", encoding="utf-8") as f:
        json.dump(threshold, f)
        f.write("\n")
    tot = files_df.agg(
        F.count(F.lit(1)).alias("files"),
        F.sum(F.col("ok").cast("long")).alias("files_ok"),
        F.sum("input_bytes").alias("input_bytes"),
        F.sum("payload_bytes").alias("payload_bytes"),
        F.sum("pages_read").alias("pages_read"),
        F.sum("pages").alias("pages_analysed"),
        F.sum("resumes").alias("resumes"),
        F.sum("seconds").alias("task_seconds"),
    ).collect()[0].asDict()
    failed = [(r["warc_file"], r["error"]) for r in files_df.where(~F.col("ok")).collect()]
    copies = dict(ranked.groupBy((F.col("copy") == 1).alias("first")).count().collect())
    summary = {
        **{k: (v or 0) for k, v in tot.items()},
        "files_failed": len(failed),
        "captures_kept": copies.get(True, 0),
        "duplicate_captures": copies.get(False, 0),
        "neighborhoods": threshold["population"],
        "flagged": jsonl.count(),
        "threshold": threshold,
        "timings": {k: round(v, 3) for k, v in timings.items()},
        "wall_s": round(time.time() - t0, 3),
        "master": sc.master,
        "default_parallelism": sc.defaultParallelism,
    }
    with open(os.path.join(a.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    for path, err in failed:
        print(f"failed: {path}: {err}", file=sys.stderr)
    mb = summary["input_bytes"] / 1e6
    print(
        f"scanned {summary['files_ok']}/{summary['files']} files ({mb:.1f} MB in, "
        f"{summary['payload_bytes'] / 1e6:.1f} MB payload, {summary['pages_analysed']} pages analysed, "
        f"{summary['resumes']} resumed transfers) in {summary['wall_s']:.1f}s "
        f"(scan stage {timings['scan_s']:.1f}s: {mb / max(timings['scan_s'], 1e-9):.2f} MB/s); "
        f"threshold {threshold['value']:.4f} (mean {threshold['mean']:.4f}, sd {threshold['sd']:.4f}, "
        f"over {threshold['population']} neighborhoods); {summary['flagged']} above it",
        file=sys.stderr,
    )
    return summary


def report_schema():
    from pyspark.sql import types as T

    src = T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField("title", T.StringType()),
            T.StructField("url", T.StringType()),
            T.StructField("chunks", T.LongType()),
        ]
    )
    ev = T.StructType(
        [
            T.StructField("url", T.StringType()),
            T.StructField("passage", T.StringType()),
            T.StructField("source_id", T.LongType()),
            T.StructField("source_title", T.StringType()),
            T.StructField("source_url", T.StringType()),
            T.StructField("match", T.StringType()),
        ]
    )
    return T.StructType(
        [
            T.StructField("level", T.StringType()),
            T.StructField("neighborhood", T.StringType()),
            T.StructField("badness", T.DoubleType()),
            T.StructField("threshold", T.DoubleType()),
            T.StructField("threshold_kind", T.StringType()),
            T.StructField("pages", T.LongType()),
            T.StructField("chunks", T.LongType()),
            T.StructField("labeled_chunks", T.LongType()),
            T.StructField("sources", T.ArrayType(src)),
            T.StructField("evidence", T.ArrayType(ev)),
        ]
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="*", help="WARC URLs (http, https) or local paths")
    ap.add_argument("--input-list", action="append", default=[], help="listing: one path a line, plain or gzipped (file or URL)")
    ap.add_argument("--base-url", default="", help="joined to the listing's relative paths")
    ap.add_argument("--labelset", required=True)
    ap.add_argument("--out", required=True, help="output directory (must not exist, or be empty)")
    ap.add_argument("--master", default=None, help="default: spark-submit's, else local[*]")
    ap.add_argument(
        "--match",
        choices=("passage", "exact"),
        default="passage",
        help="passage (default): exact chunks and labeled passages (edited copies), where the label set has them; exact: exact chunks only",
    )
    ap.add_argument("--stop-chunks", action="append", default=[])
    ap.add_argument("--no-default-stop-chunks", action="store_true")
    ap.add_argument("--max-path-repeats", type=int, default=3)
    ap.add_argument("--max-depth", type=int, default=96)
    ap.add_argument("--max-body-bytes", type=int, default=64 << 20)
    ap.add_argument("--threshold", default="auto", help="auto (mean + sd) or a number in [0, 1]")
    ap.add_argument("--min-pages", type=int, default=1)
    ap.add_argument("--evidence", type=int, default=3)
    ap.add_argument("--sources", type=int, default=5)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--retries", type=int, default=5, help="failed attempts in a row before a transfer is given up")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per connect or read")
    ap.add_argument("--backoff", type=float, default=0.5, help="first retry delay in seconds (doubles)")
    ap.add_argument("--partitions", type=int, default=8, help="shuffle partitions")
    ap.add_argument("--broadcast-flagged", action="store_true", help="broadcast the flagged neighborhoods (when few)")
    ap.add_argument("--event-log", default=None, help="write Spark's event log (stage metrics: bytes written) to this directory")
    a = ap.parse_args(argv)
    if a.threshold != "auto":
        try:
            v = float(a.threshold)
        except ValueError:
            ap.error("--threshold must be auto or a number in [0, 1]")
        if not 0.0 <= v <= 1.0:
            ap.error("--threshold must be auto or a number in [0, 1]")
    if not a.input_list and not a.inputs:
        ap.error("give --input-list and/or WARC inputs")
    for p in [a.labelset] + a.stop_chunks:
        if not os.path.isfile(p):
            sys.exit(f"error: {p}: no such file")
    if os.path.exists(a.out) and os.listdir(a.out):
        sys.exit(f"error: {a.out} exists and is not empty")

    files = []
    for lst in a.input_list:
        try:
            files.extend(read_listing(lst, a.base_url))
        except (OSError, UnicodeDecodeError, EOFError) as e:
            sys.exit(f"error: listing {lst}: {e}")
    files.extend(a.inputs)
    seen, unique = set(), []
    for f in files:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    if len(unique) < len(files):
        print(f"{len(files) - len(unique)} paths listed more than once: each is scanned once", file=sys.stderr)
    files = [f if "://" in f else os.path.abspath(f) for f in unique]

    # Executors run this interpreter's Python (the one with ditto_detect) unless told otherwise.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    b = SparkSession.builder.appName("ditto-scan").config("spark.ui.enabled", "false")
    b = b.config("spark.ui.showConsoleProgress", "false")
    b = b.config("spark.sql.shuffle.partitions", str(a.partitions))
    if a.event_log:
        os.makedirs(a.event_log, exist_ok=True)
        b = b.config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", "file://" + os.path.abspath(a.event_log))
        b = b.config("spark.eventLog.compress", "false").config("spark.eventLog.rolling.enabled", "false")
    if a.master:
        b = b.master(a.master)
    elif not os.environ.get("PYSPARK_GATEWAY_PORT"):  # not under spark-submit
        b = b.master("local[*]")
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    sc = spark.sparkContext
    sc.addFile(os.path.abspath(a.labelset))
    for s in a.stop_chunks:
        sc.addFile(os.path.abspath(s))
    conf = {
        "labelset": os.path.basename(a.labelset),
        "stop_chunks": [os.path.basename(s) for s in a.stop_chunks],
        "default_stop_chunks": not a.no_default_stop_chunks,
        "match": a.match,
        "max_path_repeats": a.max_path_repeats,
        "max_depth": a.max_depth,
        "max_body_bytes": a.max_body_bytes,
        "timeout": a.timeout,
        "retries": a.retries,
        "backoff": a.backoff,
    }
    os.makedirs(a.out, exist_ok=True)
    try:
        run(spark, a, files, conf)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
