#!/usr/bin/env bash
# The inner loop: every package's tests in -short mode, which leaves out the
# end-to-end tests (e2e/), the MCP conformance suite and the other slow
# tests. It needs nothing but Go and takes well under two minutes (23 s on
# two busy cores with a warm build cache); run
# scripts/test.sh (the full suite, as CI) before you push.
#
#   scripts/quick.sh                 # all packages
#   scripts/quick.sh ./internal/...  # some of them
set -euo pipefail
cd "$(dirname "$0")/.."
unformatted="$(find . -name '*.go' -not -path '*/node_modules/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l)"
if [ -n "$unformatted" ]; then
  printf 'not gofmt-formatted (gofmt -w them):\n%s\n' "$unformatted" >&2
  exit 1
fi
if [ $# -eq 0 ]; then set -- ./...; fi
go test -short -count=1 "$@"
