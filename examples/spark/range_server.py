#!/usr/bin/env python3
"""A loopback HTTP/1.1 file server with Range requests, for tests and benchmarks of
`examples/spark/scan.py` (Python's http.server answers no Range requests).

    python3 examples/spark/range_server.py DIR [--port 0] [--cut-after BYTES] [--log FILE]

Serves the files under DIR (GET and HEAD; `Range: bytes=A-` / `bytes=A-B` answered 206 with
Content-Range; `If-Range` honored against the ETag; ETag and Last-Modified on every answer).
`--cut-after BYTES` makes every answer send at most BYTES bytes of its body and then drop
the connection, mid-transfer, while announcing the full Content-Length: a client must resume
with Range requests to get a file larger than BYTES. `--fail-first N` answers the first N
requests for each path with 503. Prints `listening on http://127.0.0.1:PORT/` once ready;
`--log FILE` appends one line per request: `METHOD PATH RANGE STATUS BYTES_SENT`.
"""
import argparse
import email.utils
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ditto-range-server/0.1"

    def log_message(self, fmt, *args):  # quiet; requests go to --log
        pass

    def _log(self, status, sent):
        if self.server.log_path:
            rng = self.headers.get("Range") or "-"
            with self.server.log_lock, open(self.server.log_path, "a", encoding="utf-8") as f:
                f.write(f"{self.command} {self.path} {rng.replace(' ', '')} {status} {sent}\n")

    def do_HEAD(self):
        self._serve(head=True)

    def do_GET(self):
        self._serve(head=False)

    def _serve(self, head):
        rel = self.path.split("?", 1)[0].lstrip("/")
        root = self.server.root
        path = os.path.realpath(os.path.join(root, rel))
        if not path.startswith(root + os.sep) or not os.path.isfile(path):
            self._plain(404, b"not found\n")
            return
        with self.server.log_lock:
            n = self.server.seen.get(rel, 0)
            self.server.seen[rel] = n + 1
        if n < self.server.fail_first:
            self._plain(503, b"try again\n", extra={"Retry-After": "0"})
            return
        st = os.stat(path)
        size = st.st_size
        etag = f'"{size:x}-{int(st.st_mtime_ns):x}"'
        start, end, status = 0, size - 1, 200
        rng = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if rng and (if_range is None or if_range == etag):
            parsed = parse_range(rng, size)
            if parsed is None:
                self._plain(416, b"bad range\n", extra={"Content-Range": f"bytes */{size}"})
                return
            start, end = parsed
            status = 206
        length = max(0, end - start + 1)
        self.send_response(status)
        self.send_header("Content-Type", "application/warc")
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if head:
            self._log(status, 0)
            return
        budget = length if self.server.cut_after is None else min(length, self.server.cut_after)
        sent = 0
        with open(path, "rb") as f:
            f.seek(start)
            while sent < budget:
                chunk = f.read(min(1 << 16, budget - sent))
                if not chunk:
                    break
                try:
                    self.wfile.write(chunk)
                except OSError:
                    break
                sent += len(chunk)
        self._log(status, sent)
        if sent < length:
            # Cut the transfer: drop the connection with the body incomplete.
            self.close_connection = True
            try:
                self.wfile.flush()
            except OSError:
                pass

    def _plain(self, status, body, extra=None):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self._log(status, len(body))


def parse_range(value, size):
    """`bytes=A-`, `bytes=A-B` or `bytes=-N` → (start, end) inclusive; None if unsatisfiable."""
    if not value.startswith("bytes=") or "," in value:
        return None
    a, _, b = value[6:].strip().partition("-")
    try:
        if a == "":
            n = int(b)
            return (max(0, size - n), size - 1) if n > 0 and size > 0 else None
        start = int(a)
        end = int(b) if b else size - 1
    except ValueError:
        return None
    if start >= size or end < start:
        return None
    return start, min(end, size - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--cut-after", type=int, default=None)
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--log", default=None)
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.root = os.path.realpath(a.root)
    srv.cut_after = a.cut_after
    srv.fail_first = a.fail_first
    srv.log_path = a.log
    srv.log_lock = threading.Lock()
    srv.seen = {}
    print(f"listening on http://127.0.0.1:{srv.server_address[1]}/", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
