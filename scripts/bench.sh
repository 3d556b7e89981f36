#!/bin/sh
# Measures the toolfold gateway against the same upstream reached directly,
# through a byte-copying relay and through a bare Go SDK relay, over stdio and
# streamable HTTP:
# call latency, calls per second, CPU, allocations and RSS per side, start-up with and without the catalog
# cache, memory per HTTP session, and the scale sweep (cached starts of 1k, 5k and 20k tools synthesised from
# testdata/catalogs: CPU-seconds to the first tools/list, RSS and heap per tool). Flags go to the benchmark
# (-json, -h; e.g. -only scale -scale-tools 1000,5000).
set -eu
cd "$(dirname "$0")/.."
exec go run ./bench "$@"
