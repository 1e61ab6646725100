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
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.environ.get("DITTO_PYARROW_VENV", os.path.join(ROOT, "target", "pyarrow-venv"))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import own_venv  # noqa: E402


def main():
    own_venv.ensure(VENV, "pyarrow", "pyarrow")
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
