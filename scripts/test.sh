#!/usr/bin/env bash
# Runs every test toolfold has, on a fresh machine as on a developer's.
# It installs what the tests need first: Go modules, the pinned npm packages
# of the real MCP clients and servers the end-to-end tests drive, and the
# Debian packages of the programs the command-line tests discover.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n==> %s\n' "$*" >&2; }

log "Go modules"
go mod download

# Lint first: a formatting slip fails in seconds, before any install.
scripts/lint.sh

log "npm packages for the end-to-end tests (pinned in e2e/node/package-lock.json)"
npm ci --prefix e2e/node --no-audit --no-fund --loglevel=error

log "npm packages of the OpenID provider the OAuth tests start (pinned in e2e/oidc/package-lock.json)"
npm ci --prefix e2e/oidc --no-audit --no-fund --loglevel=error

# The dashboard test loads the page in a real browser: Debian's Chromium.
if ! command -v chromium > /dev/null; then
  log "Debian chromium for the dashboard test"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi
# The replica tests run two toolfolds behind Debian's HAProxy.
if ! command -v haproxy > /dev/null; then
  log "Debian haproxy for the replica tests"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y haproxy
fi
export TOOLFOLD_REQUIRE_HAPROXY=1

# The trace test sends spans to a real collector and reads them back: Jaeger,
# built from the Go module proxy once (about 10 to 17 minutes on two cores)
# and cached beside Go's build cache (scripts/jaeger.sh).
log "Jaeger for the trace test"
TOOLFOLD_JAEGER="$(scripts/jaeger.sh)"
export TOOLFOLD_JAEGER TOOLFOLD_REQUIRE_JAEGER=1

# Tests that need an outside program (node, chromium) skip when it is
# missing on a developer's machine; here every part is installed, so a skip
# would hide a broken setup: make those tests fail instead. (The real tool
# catalogs are in testdata/catalogs and always read.)
export TOOLFOLD_REQUIRE_NODE=1
export TOOLFOLD_REQUIRE_CHROMIUM=1

# The official MCP conformance suite, run against the Go SDK's fixture server
# directly and through toolfold (conformance/run.sh installs Node 22, the
# suite and the fixture itself). The 2026-07-28 leg is gated at what it
# reaches: its one known difference is listed in conformance_test.go and
# explained in conformance/README.md.
export TOOLFOLD_CONFORMANCE=1
export TOOLFOLD_CONFORMANCE_LEGS=stable,2025-11-25,2026-07-28


log "go test -race"
go test -race -count=1 -timeout 30m ./...

# The byte paths (tools/call forwarded undecoded) must keep every promise
# the typed path keeps: the end-to-end and conformance tests pass both ways.
log "end-to-end and conformance tests again, with byte forwarding off"
TOOLFOLD_BYTE_FORWARDING=off go test -race -count=1 -timeout 30m ./e2e/ ./conformance/

# What a client sends must never crash the gateway or draw an answer that is
# not JSON-RPC: the fuzz target over every client-supplied parameter runs
# for a bounded time beyond its seeds (which go test ./... ran above).
log "fuzzing client-supplied parameters (30 s)"
go test -run '^$' -fuzz='^FuzzClientParams$' -fuzztime=30s ./internal/gateway/

# The typed path and the byte path must answer a call alike, whatever the
# upstream's bytes. Bounded by executions, not time: each one starts a
# gateway, and a time bound on loaded cores ends with a worker mid-input.
log "fuzzing the typed path against the byte path (15,000 inputs)"
go test -run '^$' -fuzz='^FuzzTypedAndBytePathsAgree$' -fuzztime=15000x ./internal/gateway/

log "allocation counts and big lists (without -race, which moves values to the heap and reads megabytes ten times slower)"
go test -count=1 -run 'Allocations$|^TestBigList' ./internal/...

log "benchmarks (one short run each, so they stay runnable)"
go test -run='^$' -bench=. -benchtime=1x -count=1 ./... > /dev/null

log "done"
