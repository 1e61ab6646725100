#!/usr/bin/env python3
"""Blind discovery on Spark: the cluster path of `ditto discover` (Ardi & Heidemann 2014, §3.2).

§3.2 step 3b: "all objects o in the corpus C whose number of duplicates exceeds the threshold
and are not 'stop chunks' are automatically labeled" — L := {o : duplicates(o) > T,
o not a stop chunk}. Discovery "is not distributive": the count is global, so it runs here as
one GROUP BY over every chunk occurrence of the corpus (the paper sorts and counts all hashes
with Hadoop; this is the same shuffle on Spark). Stop chunks (§3.4.2) are left out by the
export's `stop` column.

Input: what `ditto export chunks` writes, CSV (header
`chunk_sha1,url,host,neighborhood,stop`, RFC 4180 quoting) or Parquet (same columns, `stop`
boolean); files or directories of them. Several stores' exports can be given together.

Output: a hash list that `ditto labelset import` turns into a label set, equal to what
`ditto discover --store … --min-count T` writes for the same store (same chunk hashes, same
sample-URL sources):

    # ditto hash list
    # kind=chunks
    # min_count=T
    # normalization=nfkc,lower,collapse-ws,trim
    <40 hex digits of the chunk SHA-1>\t<count>\t<sample URL>

one line per chunk seen MORE than T times (strictly, as §3.2), sorted by hash. The sample URL
is the byte-wise smallest URL the chunk was seen at: `ditto discover` keeps the page with the
smallest number and a store numbers its pages in URL order, so both pick the same page. (Spark
compares strings as UTF-8 bytes, unsigned, which is the same order.)

Usage:
    python3 examples/spark/discover.py --min-count 1000 -o hashes.tsv chunks.csv [more…]
    ditto labelset import -o blind.dls hashes.tsv

File hashes (L_f, `ditto discover --files`): `--files-from files.csv --files-output
files.tsv [--files-min-count T]` counts the pages of `ditto export files` the same way
(`# kind=files` in the list), in the same Spark session.

Options: --master (default local[*]), --normalization (recorded in the list; give the one the
store was scanned with, default nfkc,lower,collapse-ws,trim), --format csv|parquet (default:
by file extension, a directory holding *.parquet files is Parquet), --histogram (also print
the log2-binned count distribution). See README.md beside this file.
"""
import argparse
import os
import sys


def input_format(paths, forced):
    if forced:
        return forced
    fmt = set()
    for p in paths:
        if os.path.isdir(p):
            names = os.listdir(p)
            fmt.add("parquet" if any(n.endswith(".parquet") for n in names) else "csv")
        else:
            fmt.add("parquet" if p.endswith(".parquet") else "csv")
    if len(fmt) != 1:
        sys.exit("error: give either CSV or Parquet exports, not both (or use --format)")
    return fmt.pop()


def read_export(spark, paths, fmt, key):
    from pyspark.sql.types import BooleanType, StringType, StructField, StructType

    if fmt == "parquet":
        return spark.read.parquet(*paths)
    schema = StructType(
        [
            StructField(key, StringType(), False),
            StructField("url", StringType(), False),
            StructField("host", StringType(), False),
            StructField("neighborhood", StringType(), False),
            StructField("stop", BooleanType(), False),
        ]
    )
    # ditto writes RFC 4180: a quote inside a quoted field is doubled.
    return spark.read.csv(list(paths), header=True, schema=schema, quote='"', escape='"', mode="FAILFAST")


def discover(df, key, threshold, output, kind, normalization, histogram):
    """Count `key` over every row, keep > threshold, write the hash list; returns rows written."""
    from pyspark.sql import functions as F

    occ = df.where(~F.col("stop")).select(key, "url")
    counts = occ.groupBy(key).agg(F.count(F.lit(1)).alias("n"), F.min("url").alias("sample"))
    if histogram:
        hist = (
            counts.select(F.floor(F.log2(F.col("n"))).cast("int").alias("bin"), "n")
            .groupBy("bin")
            .agg(F.count(F.lit(1)).alias("distinct"), F.sum("n").alias("occurrences"))
            .orderBy("bin")
            .collect()
        )
        print(f"{kind}:")
        print(f"{'count':>23}  {'distinct':>12}  {'occurrences':>14}")
        for r in hist:
            lo, hi = 1 << r["bin"], (1 << (r["bin"] + 1)) - 1
            rng = str(lo) if lo == hi else f"{lo}-{hi}"
            print(f"{rng:>23}  {r['distinct']:>12}  {r['occurrences']:>14}")
    # §3.2: duplicates(o) > threshold (strict).
    above = counts.where(F.col("n") > threshold).orderBy(key)
    tmp = output + ".tmp"
    written = 0
    with open(tmp, "w", encoding="utf-8", newline="\n") as w:
        w.write("# ditto hash list (examples/spark/discover.py)\n")
        w.write(f"# kind={kind}\n")
        w.write(f"# min_count={threshold}\n")
        w.write(f"# normalization={normalization}\n")
        for r in above.toLocalIterator():
            url = r["sample"] or ""
            if "\t" in url or "\n" in url or "\r" in url:
                sys.exit(f"error: sample URL {url!r} has a tab or line break")
            w.write(f"{r[key]}\t{r['n']}\t{url}\n")
            written += 1
    os.replace(tmp, output)
    print(f"{written} {kind} seen more than {threshold} times written to {output}", file=sys.stderr)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="*", help="`ditto export chunks` outputs (CSV or Parquet)")
    ap.add_argument("--min-count", type=int, help="keep chunks seen MORE than this")
    ap.add_argument("-o", "--output", help="the chunk hash list to write")
    ap.add_argument("--files-from", nargs="+", default=[], help="`ditto export files` outputs (CSV): count file hashes (L_f) too")
    ap.add_argument("--files-min-count", type=int, help="keep files seen MORE than this (default: --min-count)")
    ap.add_argument("--files-output", help="the file hash list to write")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--format", choices=["csv", "parquet"])
    ap.add_argument("--normalization", default="nfkc,lower,collapse-ws,trim")
    ap.add_argument("--partitions", type=int, default=8, help="shuffle partitions")
    ap.add_argument("--histogram", action="store_true")
    a = ap.parse_args()
    if not a.inputs and not a.files_from:
        ap.error("give chunk exports (INPUTS) and/or --files-from")
    if a.inputs and (a.min_count is None or not a.output):
        ap.error("chunk exports need --min-count and -o")
    files_min = a.files_min_count if a.files_min_count is not None else a.min_count
    if a.files_from and (files_min is None or not a.files_output):
        ap.error("--files-from needs --files-output and --files-min-count (or --min-count)")
    for t in (a.min_count, files_min):
        if t is not None and t < 0:
            sys.exit("error: thresholds must be >= 0")
    for p in a.inputs + a.files_from:
        if not os.path.exists(p) and "://" not in p:
            sys.exit(f"error: {p}: no such file or directory")

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(a.master)
        .appName("ditto-discover")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(a.partitions))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    if a.inputs:
        df = read_export(spark, a.inputs, input_format(a.inputs, a.format), "chunk_sha1")
        discover(df, "chunk_sha1", a.min_count, a.output, "chunks", a.normalization, a.histogram)
    if a.files_from:
        df = read_export(spark, a.files_from, "csv", "file_sha1")
        discover(df, "file_sha1", files_min, a.files_output, "files", a.normalization, a.histogram)
    spark.stop()


if __name__ == "__main__":
    main()
