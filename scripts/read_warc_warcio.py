#!/usr/bin/env python3
"""Read WARC files written by ditto with an independent reader (warcio).

Makes its own virtual environment under target/warcio-venv (`pip install warcio`) on first use
and re-runs itself there. Every record's digests are checked as warcio reads it
(`check_digests="raise"`: a wrong WARC-Block-Digest or WARC-Payload-Digest fails the run).
For each request and response record prints one JSON object per line:

  {"file", "type", "uri", "status", "http_headers": [[name, value], ...],
   "payload_sha1", "payload_len",   # the payload as stored (after the HTTP head), hex SHA-1
   "content_sha1", "content_len",   # warcio's content_stream(): de-chunked and decoded by
                                    # the record's Content-Encoding
   "payload_digest", "block_digest"}

Usage: scripts/read_warc_warcio.py FILE...
"""
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.environ.get("DITTO_WARCIO_VENV", os.path.join(ROOT, "target", "warcio-venv"))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import own_venv  # noqa: E402


def records(path, read):
    """(record, read(record)) for every request and response record, digests checked."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as f:
        for rec in ArchiveIterator(f, check_digests="raise"):
            if rec.rec_type in ("request", "response"):
                yield rec, read(rec)


def main():
    own_venv.ensure(VENV, "warcio", "warcio==1.8.1")
    for path in sys.argv[1:]:
        # Two passes: the payload as stored, then as warcio decodes it (a stream reads once).
        stored = list(records(path, lambda r: r.raw_stream.read()))
        decoded = list(records(path, lambda r: r.content_stream().read()))
        for (rec, raw), (_, content) in zip(stored, decoded):
            h = rec.http_headers
            print(
                json.dumps(
                    {
                        "file": os.path.basename(path),
                        "type": rec.rec_type,
                        "uri": rec.rec_headers.get_header("WARC-Target-URI"),
                        "status": h.get_statuscode() if rec.rec_type == "response" else None,
                        "http_headers": [list(kv) for kv in h.headers] if h else [],
                        "payload_sha1": hashlib.sha1(raw).hexdigest(),
                        "payload_len": len(raw),
                        "content_sha1": hashlib.sha1(content).hexdigest(),
                        "content_len": len(content),
                        "payload_digest": rec.rec_headers.get_header("WARC-Payload-Digest"),
                        "block_digest": rec.rec_headers.get_header("WARC-Block-Digest"),
                    },
                    sort_keys=True,
                )
            )


if __name__ == "__main__":
    main()
