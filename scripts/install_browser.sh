#!/usr/bin/env bash
# Installs Debian's Chromium and ChromeDriver (for the review page's browser tests and
# screenshots) when they are missing. Idempotent; needs root (apt-get).
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y chromium chromium-driver >/dev/null 2>&1 || {
  apt-get update >/dev/null
  apt-get install -y chromium chromium-driver >/dev/null
}
test -x /usr/bin/chromium && test -x /usr/bin/chromedriver
