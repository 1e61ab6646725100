#!/usr/bin/env python3
"""Copies of a gzipped WARC file with distinct URLs, for scan benchmarks (issue 39).

    scripts/make_warc_copies.py ../shared/data/warc/big/debian-docs-html.warc.gz 16 /tmp/warc16

Copy i (0-based, files copy-00.warc.gz ...) is the input record by record (one gzip member
each, as the input), with every WARC-Target-URI's host prefixed by `cI-` (for example
http://c3-docs.test/a.html), and a WARC-Record-ID of its own, so no two copies share a URL
or a capture: a scan stores every page of every copy, and the copies' pages are copies of
each other on distinct hosts, as reuse across sites is. Blocks (and their Content-Length and
digests) are unchanged. Deterministic: the same command gives the same bytes.
"""
import re
import sys
import uuid
import zlib
from pathlib import Path


def members(data):
    """The decompressed gzip members of `data`, in order."""
    pos = 0
    while pos < len(data):
        d = zlib.decompressobj(wbits=31)
        out = d.decompress(data[pos:])
        out += d.flush()
        used = len(data) - pos - len(d.unused_data)
        if used <= 0:
            break
        yield out
        pos += used


URI = re.compile(rb"^(WARC-Target-URI:[ \t]*<?)(https?://)([^/\r\n>]*)", re.M | re.I)
RID = re.compile(rb"^(WARC-Record-ID:[ \t]*)<urn:uuid:[^>]*>", re.M | re.I)


def rewrite(record, i, n):
    head_end = record.find(b"\r\n\r\n")
    if head_end < 0:
        return record
    head, rest = record[:head_end], record[head_end:]
    head = URI.sub(lambda m: m.group(1) + m.group(2) + b"c%d-" % i + m.group(3), head, count=1)
    rid = uuid.uuid5(uuid.NAMESPACE_URL, "copy-%d-record-%d" % (i, n))
    head = RID.sub(lambda m: m.group(1) + b"<urn:uuid:" + str(rid).encode() + b">", head, count=1)
    return head + rest


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, count, out = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    records = list(members(src.read_bytes()))
    for i in range(count):
        path = out / ("copy-%02d.warc.gz" % i)
        with open(path, "wb") as f:
            for n, rec in enumerate(records):
                c = zlib.compressobj(6, zlib.DEFLATED, 31)
                f.write(c.compress(rewrite(rec, i, n)) + c.flush())
        print(path, path.stat().st_size)
    print("%d copies of %d records each" % (count, len(records)))


if __name__ == "__main__":
    main()
