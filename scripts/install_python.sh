#!/usr/bin/env bash
# Python 3 with venv (for the PySpark test, tests/it/spark_discover.rs, and the Scrapy plug-in
# test, tests/it/python_plugin.rs): installs Debian's python3 and python3-venv when no
# `python3 -m venv` works. Idempotent; needs root (apt-get).
set -euo pipefail
if python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: no Python >= 3.9 with venv and no apt-get; install python3 and python3-venv" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null 2>&1 || {
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
}
python3 -c 'import venv, ensurepip'
