#!/usr/bin/env python3
"""Scan speed by thread count, as processes, best of N alternating runs (issue 39).

    scripts/bench_parallel_sources.py LABELSET NAME=BINARY:THREADS[,...] INPUT... [--runs 3]

For example, --threads 1 against 2 of one binary, and an old binary against a new one:

    scripts/bench_parallel_sources.py /tmp/wiki.dls new1=target/release/ditto:1 \\
        new2=target/release/ditto:2 /tmp/warc16/*.warc.gz

Each round runs every configuration once, in the order given (so a load that comes and goes
falls on all of them); each run scans into a fresh store under $TMPDIR with --progress none
and --stats-json. Printed per configuration, for its fastest run: wall seconds, payload MB/s,
the process's CPU seconds (user + system, from getrusage), and each stage's CPU seconds from
--stats-json with its share of the process's CPU; then `uptime`.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def run(binary, threads, labelset, inputs, tmp):
    db = os.path.join(tmp, "bench.db")
    stats = os.path.join(tmp, "stats.json")
    shutil.rmtree(db, ignore_errors=True)
    args = [binary, "scan", "--store", db, "--labelset", labelset, "--progress", "none"]
    args += ["--threads", str(threads), "--stats-json", stats] + inputs
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    st = json.load(open(stats))
    shutil.rmtree(db, ignore_errors=True)
    return {"wall": wall, "cpu": cpu, "stats": st}


def main():
    argv = sys.argv[1:]
    runs = 3
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = int(argv[i + 1])
        del argv[i : i + 2]
    if len(argv) < 3:
        sys.exit(__doc__)
    labelset, configs, inputs = argv[0], argv[1].split(","), argv[2:]
    configs = [(c.split("=")[0], c.split("=")[1].rsplit(":", 1)) for c in configs]
    results = {name: [] for name, _ in configs}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(runs):
            for name, (binary, threads) in configs:
                res = run(binary, threads, labelset, inputs, tmp)
                results[name].append(res)
                print("round %d %s: %.2f s wall, %.2f s CPU" % (r + 1, name, res["wall"], res["cpu"]), flush=True)
    print()
    print("| run | best wall s | all walls s | payload MB/s | process CPU s | " "stage CPU s (share of process CPU) |")
    print("| --- | ---: | --- | ---: | ---: | --- |")
    for name, _ in configs:
        best = min(results[name], key=lambda x: x["wall"])
        st = best["stats"]
        mbs = st["payload_bytes"] / 1e6 / best["wall"]
        stages = ", ".join(
            "%s %.2f (%.1f %%)" % (s["stage"], s["cpu_seconds"], 100 * s["cpu_seconds"] / best["cpu"])
            for s in st["stages"]
        )
        walls = " ".join("%.2f" % x["wall"] for x in results[name])
        print("| %s | %.2f | %s | %.1f | %.2f | %s |" % (name, best["wall"], walls, mbs, best["cpu"], stages))
    print()
    print("pages %d, payload %.1f MB" % (st["pages_read"], st["payload_bytes"] / 1e6))
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
