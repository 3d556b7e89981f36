#!/usr/bin/env bash
# The lint step of CI (scripts/test.sh runs it before the tests): gofmt must
# have nothing to say, then go vet and staticcheck, pinned so that a new
# release of it cannot fail a build that passed yesterday. Its checks are
# configured in staticcheck.conf.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2 # 2026.x: the first line that reads Go 1.26 code

log() { printf '\n==> %s\n' "$*" >&2; }

log "gofmt -l"
unformatted="$(find . -name '*.go' -not -path '*/node_modules/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l)"
if [ -n "$unformatted" ]; then
  printf 'these files are not gofmt-formatted; run gofmt -w on them:\n%s\n' "$unformatted" >&2
  exit 1
fi

log "go vet"
go vet ./...

log "staticcheck $STATICCHECK_VERSION"
go run "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" ./...
