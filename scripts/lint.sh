#!/usr/bin/env bash
# The lint step of CI (scripts/test.sh runs it before the tests): gofmt must
# have nothing to say, then go vet and staticcheck, pinned so that a new
# release of it cannot fail a build that passed yesterday. Its checks are
# configured in staticcheck.conf.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2 # 2026.x: the first line that reads Go 1.26 code
GOCYCLO_VERSION=v0.6.0
# A ratchet, not a goal: the functions over cyclomatic complexity 20 (tests
# left out) may not grow past this count. Lower it when you split one.
MAX_COMPLEX_FUNCS=25

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

log "gocyclo $GOCYCLO_VERSION: at most $MAX_COMPLEX_FUNCS functions over complexity 20"
# gocyclo exits 1 when it lists anything; go run reports that as a line.
complex="$(go run "github.com/fzipp/gocyclo/cmd/gocyclo@$GOCYCLO_VERSION" -over 20 -ignore '_test' . 2>&1 | grep -v '^exit status 1$' || true)"
count="$(printf '%s' "$complex" | grep -c . || true)"
if [ "$count" -gt "$MAX_COMPLEX_FUNCS" ]; then
  printf '%s functions are over complexity 20, more than the %s allowed; split the new one into named steps:\n%s\n' "$count" "$MAX_COMPLEX_FUNCS" "$complex" >&2
  exit 1
fi
