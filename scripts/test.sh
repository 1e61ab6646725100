#!/usr/bin/env bash
# The one test command (README "Set up on a fresh machine"; .ci/run runs exactly this).
# A fresh machine has only the Rust toolchain: this installs what the tests need besides it
# (Debian packages, when missing; needs root or sudo the first time) and runs every test.
#
#   scripts/test.sh
#
#   Java 17     the PySpark test (tests/it/spark_discover.rs)      scripts/install_java.sh
#   redis-server the partitioned crawls over Redis (tests/partition_crawl.rs)
#                                                                   scripts/install_redis.sh
#   python3-venv the PySpark and Scrapy tests (pip needs PyPI once) scripts/install_python.sh
#   chromium    the review page in a browser (tests/it/review_browser.rs)
#                                                                   scripts/install_browser.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d ../shared/data ]; then
  echo "error: ../shared/data (the shared test data) is missing: the tests read it beside the checkout" >&2
  exit 1
fi
# The installers call apt-get: as root directly, otherwise through sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then bash "$@"; elif command -v sudo >/dev/null 2>&1; then sudo bash "$@"; else
    echo "error: $1 needs root (or sudo) to install a Debian package the tests need" >&2
    return 1
  fi
}
command -v java >/dev/null 2>&1 && java -version >/dev/null 2>&1 || as_root scripts/install_java.sh
command -v redis-server >/dev/null 2>&1 || as_root scripts/install_redis.sh
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || as_root scripts/install_python.sh
{ [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || as_root scripts/install_browser.sh
cargo test --workspace --release
# The Parquet exports are behind a cargo feature the default build leaves out.
cargo test --release --features parquet --test parquet_export
