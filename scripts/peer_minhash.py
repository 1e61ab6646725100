#!/usr/bin/env python3
"""Peer baseline for `ditto replicas`: datasketch MinHashLSH on ../shared/data/reuse.

Settings as shared/research/peer-dedup.md: visible text by the truth's extractor rules
(html.parser; script, style, noscript, template and head dropped; block tags are line
breaks; whitespace collapsed; .txt files whole), shingles = set of lower-cased `\\w+` word
4-grams, MinHash num_perm = 128, MinHashLSH threshold 0.8 (datasketch picks b = 9, r = 13),
pairs = `lsh.query` for every page, no verification. Scored against truth.tsv: exact + near
pairs are positives; predicted `partial` pairs count neither as TP nor FP.

The script makes its own virtual environment under target/peer-venv (pip install
datasketch==2.0.0) on first use and re-runs itself there.

Usage: scripts/peer_minhash.py [--data DIR] [--json]
Prints a table, or with --json one JSON object: {"detector", "tp", "fp", "part", "pred",
"precision", "recall", "f1", "recall_exact", "recall_near", "seconds", "extract_seconds",
"peak_rss_mb"}. `seconds` is shingling + MinHash + LSH build + queries; `extract_seconds`
is the text extraction, timed apart as in peer-dedup.md.
"""
import argparse
import json
import os
import re
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "peer-venv")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import own_venv  # noqa: E402
from peer_text import block_text  # noqa: E402


def visible_text(path):
    raw = open(path, "rb").read().decode("utf-8", errors="replace")
    if path.endswith(".html") or path.endswith(".htm"):
        raw = block_text(raw)
    return " ".join(raw.split())


WORD = re.compile(r"\w+")


def shingles(text, k=4):
    w = WORD.findall(text.lower())
    return {" ".join(w[i : i + k]) for i in range(len(w) - k + 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "reuse"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    own_venv.ensure(VENV, "datasketch", "datasketch==2.0.0")
    from datasketch import MinHash, MinHashLSH

    site = os.path.join(a.data, "site")
    t0 = time.time()
    texts = {}
    for d, _, files in os.walk(site):
        for f in files:
            path = os.path.join(d, f)
            url = "http://" + os.path.relpath(path, site).replace(os.sep, "/")
            texts[url] = visible_text(path)
    extract = time.time() - t0

    t0 = time.time()
    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    sigs = {}
    for url in sorted(texts):
        m = MinHash(num_perm=128)
        for s in shingles(texts[url]):
            m.update(s.encode("utf-8"))
        sigs[url] = m
        lsh.insert(url, m)
    pred = set()
    for url, m in sigs.items():
        for other in lsh.query(m):
            if other != url:
                pred.add((min(url, other), max(url, other)))
    seconds = time.time() - t0

    truth = {}
    with open(os.path.join(a.data, "truth.tsv")) as f:
        next(f)
        for line in f:
            ua, ub, kind = line.rstrip("\n").split("\t")[:3]
            truth[(ua, ub)] = kind
    pos = {p: k for p, k in truth.items() if k in ("exact", "near")}
    tp = sum(1 for p in pred if p in pos)
    part = sum(1 for p in pred if truth.get(p) == "partial")
    fp = len(pred) - tp - part
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / len(pos) if pos else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0

    def rec_kind(kind):
        want = [p for p, k in pos.items() if k == kind]
        return sum(1 for p in want if p in pred) / len(want) if want else 0.0

    res = {
        "detector": "datasketch MinHashLSH w4 (threshold 0.8, 128 perms)",
        "pred": len(pred),
        "tp": tp,
        "fp": fp,
        "part": part,
        "precision": round(prec, 4),
        "recall": round(rec, 4),
        "f1": round(f1, 4),
        "recall_exact": round(rec_kind("exact"), 4),
        "recall_near": round(rec_kind("near"), 4),
        "seconds": round(seconds, 2),
        "extract_seconds": round(extract, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if a.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:>16}: {v}")


if __name__ == "__main__":
    main()
