#!/usr/bin/env bash
# Java 17 for the PySpark job's test (tests/it/spark_discover.rs, examples/spark/): installs
# Debian's openjdk-17-jre-headless when no `java` runs. Idempotent; needs root (apt-get).
set -euo pipefail
if command -v java >/dev/null 2>&1 && java -version >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: no java and no apt-get; install a Java 17 runtime (e.g. openjdk-17-jre-headless)" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "error: no java, and installing openjdk-17-jre-headless needs root" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# Slim Debian images lack man1, which the JRE package's post-install step needs.
$SUDO mkdir -p /usr/share/man/man1
$SUDO apt-get update -qq
# Debian 12 has openjdk-17; later releases only a newer default JRE (Spark 3.5+ runs on 17 and 21).
PKG=openjdk-17-jre-headless
apt-cache show "$PKG" >/dev/null 2>&1 || PKG=default-jre-headless
$SUDO apt-get install -y -qq --no-install-recommends "$PKG" >/dev/null
java -version
