#!/usr/bin/env bash
# Fuzz ditto's input parsers (stable Rust, no cargo-fuzz): every target for SECONDS each
# (default 600), at most EXECS executions each (default 1000000). Crashes, hangs and
# inputs over the memory cap are saved under target/fuzz/artifacts/TARGET/. One target at a
# time, under `nice -n 5` (FUZZ_NICE to change). Input length limits: `ditto-fuzz --help`.
#   scripts/fuzz.sh [SECONDS] [EXECS] [TARGET...]
# Targets: warc html robots url labelset store (all by default). Seeds: ../shared/data.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
execs=${2:-1000000}
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(warc html robots url labelset store)
cargo build --release -p ditto-fuzz
status=0
for t in "${targets[@]}"; do
  nice -n "${FUZZ_NICE:-5}" target/release/ditto-fuzz --target "$t" --seconds "$secs" --execs "$execs" --seed "${FUZZ_SEED:-26}" || status=1
done
exit $status
