#!/usr/bin/env bash
# Builds Jaeger (the all-in-one collector and query service) for the trace
# test (e2e/trace_test.go), once: the binary is kept beside Go's build
# cache, keyed by version, and later runs only print its path. It is built
# from the Go module proxy in a throwaway module, so toolfold's go.mod
# never depends on it. Prints the binary's path on stdout.
#
#   export TOOLFOLD_JAEGER=$(scripts/jaeger.sh)
set -euo pipefail

JAEGER_VERSION=v1.76.0

dir="$(dirname "$(go env GOCACHE)")/toolfold-jaeger/$JAEGER_VERSION"
bin="$dir/jaeger"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
(
  cd "$work"
  go mod init toolfold-jaeger-build > /dev/null 2>&1
  # go get names each of its few hundred modules: shown only if it fails.
  if ! GOFLAGS=-mod=mod go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION" > get.log 2>&1; then
    cat get.log
    exit 1
  fi
  go build -o "$bin.tmp" github.com/jaegertracing/jaeger/cmd/jaeger
) >&2
mv "$bin.tmp" "$bin"
printf 'built Jaeger %s in %ss\n' "$JAEGER_VERSION" "$(( $(date +%s) - start ))" >&2
echo "$bin"
