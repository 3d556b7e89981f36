#!/bin/sh
# Measures the toolfold gateway against the same upstream reached directly:
# call latency, calls per second, start-up with and without the catalog
# cache, and memory per HTTP session. Flags go to the benchmark (-json, -h).
set -eu
cd "$(dirname "$0")/.."
exec go run ./bench "$@"
