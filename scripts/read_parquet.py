#!/usr/bin/env python3
"""Read Parquet files written by ditto with an independent reader (pyarrow).

Makes its own virtual environment under target/pyarrow-venv (`pip install pyarrow`) on first
use and re-runs itself there. For each FILE prints one JSON object per line:
{"path", "rows", "columns", "types", "first"} where `first` is the first row as JSON (lists
of structs become lists of objects), so a test can compare it with ditto's JSONL/CSV output.

Usage: scripts/read_parquet.py FILE...
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.environ.get("DITTO_PYARROW_VENV", os.path.join(ROOT, "target", "pyarrow-venv"))
VPY = os.path.join(VENV, "bin", "python")


def ensure_venv():
    try:
        import pyarrow  # noqa: F401

        return
    except ImportError:
        pass
    if os.path.abspath(sys.executable) == os.path.abspath(VPY):
        sys.exit("pyarrow is not importable in " + VENV)
    if not os.path.exists(VPY):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    if subprocess.call([VPY, "-c", "import pyarrow"], stderr=subprocess.DEVNULL) != 0:
        subprocess.check_call([VPY, "-m", "pip", "install", "-q", "pyarrow"])
    os.execv(VPY, [VPY] + sys.argv)


def main():
    ensure_venv()
    import pyarrow.parquet as pq

    for path in sys.argv[1:]:
        t = pq.read_table(path)
        rows = t.to_pylist()
        print(
            json.dumps(
                {
                    "path": path,
                    "rows": t.num_rows,
                    "columns": t.column_names,
                    "types": [str(f.type) for f in t.schema],
                    "first": rows[0] if rows else None,
                },
                sort_keys=True,
            )
        )


if __name__ == "__main__":
    main()
