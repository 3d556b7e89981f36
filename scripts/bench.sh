#!/bin/sh
# Measures the toolfold gateway against the same upstream reached directly,
# through a byte-copying relay and through a bare Go SDK relay, over stdio and
# streamable HTTP:
# call latency, calls per second, CPU, allocations and RSS per side, start-up with and without the catalog
# cache, and memory per HTTP session. Flags go to the benchmark (-json, -h).
set -eu
cd "$(dirname "$0")/.."
exec go run ./bench "$@"
