#!/usr/bin/env python3
"""DuckDB baseline for `cargo bench --bench discover`: GROUP BY hash HAVING count(*) > T.

Usage: scripts/duckdb_groupby.py --csv KEYS.csv --threshold T [--venv DIR]

Creates a virtual environment (default: target/duckdb-venv) with `pip install duckdb` when
missing, then re-runs itself inside it. Each measurement runs in a fresh process so its peak
memory (VmHWM) is its own; one JSON line per measurement on stdout:

  csv      SELECT … FROM read_csv(KEYS.csv) GROUP BY hash HAVING count(*) > T   (hex text)
  parquet  the same over a Parquet copy with the hash as a 20-byte BLOB (written first)
  table    the same over an in-memory table (BLOB), load time excluded

The key file has one 40-hex-digit hash per line, header `hash`.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def vmhwm_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def ensure_venv(venv):
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    probe = subprocess.run([py, "-c", "import duckdb"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([py, "-m", "pip", "install", "-q", "duckdb"], check=True)
    return py


def measure(mode, csv, parquet, threshold):
    import duckdb

    con = duckdb.connect()
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    q = "SELECT count(*), sum(c) FROM (SELECT hash, count(*) AS c FROM {src} GROUP BY hash HAVING count(*) > {t})"
    if mode == "csv":
        src = f"read_csv('{csv}', header=true, columns={{'hash': 'VARCHAR'}})"
        t0 = time.perf_counter()
        groups, occ = con.execute(q.format(src=src, t=threshold)).fetchone()
        secs = time.perf_counter() - t0
    elif mode == "parquet":
        src = f"read_parquet('{parquet}')"
        t0 = time.perf_counter()
        groups, occ = con.execute(q.format(src=src, t=threshold)).fetchone()
        secs = time.perf_counter() - t0
    elif mode == "table":
        con.execute(f"CREATE TABLE h AS SELECT hash FROM read_parquet('{parquet}')")
        t0 = time.perf_counter()
        groups, occ = con.execute(q.format(src="h", t=threshold)).fetchone()
        secs = time.perf_counter() - t0
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps({
        "tool": "duckdb " + duckdb.__version__,
        "mode": mode,
        "threads": int(threads),
        "secs": round(secs, 3),
        "vmhwm_mb": round(vmhwm_kb() / 1024, 1),
        "groups_above": groups,
        "occurrences_above": int(occ or 0),
    }), flush=True)


def to_parquet(csv, parquet):
    import duckdb

    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT unhex(hash) AS hash FROM read_csv('{csv}', header=true, columns={{'hash': 'VARCHAR'}})) "
        f"TO '{parquet}' (FORMAT parquet)"
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--threshold", type=int, required=True)
    ap.add_argument("--venv", default=os.path.join(ROOT, "target", "duckdb-venv"))
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    a = ap.parse_args()
    parquet = os.path.splitext(a.csv)[0] + ".parquet"
    if a.mode:
        if a.mode == "to-parquet":
            to_parquet(a.csv, parquet)
        else:
            measure(a.mode, a.csv, parquet, a.threshold)
        return
    py = ensure_venv(a.venv)
    me = os.path.abspath(__file__)
    base = [py, me, "--csv", a.csv, "--threshold", str(a.threshold), "--venv", a.venv]
    if not os.path.exists(parquet):
        subprocess.run(base + ["--mode", "to-parquet"], check=True)
    for mode in ["csv", "parquet", "table"]:
        subprocess.run(base + ["--mode", mode], check=True)


if __name__ == "__main__":
    main()
