#!/usr/bin/env bash
# Installs Debian's redis-server (for the partitioned-crawl tests over Redis, issue 10)
# when it is missing. Idempotent; needs root (apt-get).
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends redis-server >/dev/null 2>&1 || {
  apt-get update >/dev/null
  apt-get install -y --no-install-recommends redis-server >/dev/null
}
command -v redis-server >/dev/null
