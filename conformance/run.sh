#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against the Go SDK's conformance fixture server directly, and against
# toolfold fronting that same fixture over stdio with no prefix, and compares
# the two. Exits non-zero if any scenario that passes directly fails through
# toolfold.
#
# It does so in up to three legs (all by default):
#   stable      the suite's latest release (0.1.16), every scenario (--suite all),
#               both servers stateful
#   2025-11-25  the suite version the Go SDK's own CI pins (0.2.0-alpha.11),
#               --requirements 2025-11-25, both servers stateful
#   2026-07-28  that version, --requirements 2026-07-28, both servers stateless
#               (fixture -stateless, toolfold serve --stateless)
#
# Usage: conformance/run.sh [--leg NAME]... [--scenario NAME]... [--direct-only]
#                           [--toolfold-only] [--results DIR] [--install-only]
#
# Environment:
#   CONFORMANCE_TIMEOUT  seconds one suite run may take (default 300)
#   TOOLFOLD_BIN         use this toolfold binary instead of building ./cmd/toolfold
#   TOOLFOLD_MODE        --mode for toolfold serve (default flat)
#   CONFORMANCE_TRACE=1  record the stdio JSON-RPC between toolfold and the fixture
#
# Results go to DIR (default conformance/results/latest), one folder per leg
# with the suite's checks.json files, both servers' logs and summary.json.
#
# Exit codes: 0 no regression, 1 regression (or toolfold did not start),
# 2 bad usage, 3 a prerequisite (npm, go) is missing, 4 the fixture did not
# start directly (so there is nothing to compare against).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$HERE/.bin"
NODE="$HERE/node_modules/.bin/node"
SUITE_STABLE="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
SUITE_PINNED="$HERE/node_modules/conformance-sdk-pin/dist/index.js"
TIMEOUT="${CONFORMANCE_TIMEOUT:-300}"
MODE="${TOOLFOLD_MODE:-flat}"
RESULTS="$HERE/results/latest"
RUN_DIRECT=1
RUN_TOOLFOLD=1
INSTALL_ONLY=0
SCENARIOS=()
LEGS=()
ALL_LEGS=(stable 2025-11-25 2026-07-28)

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --leg)
      shift
      case "${1:-}" in
        stable|2025-11-25|2026-07-28) LEGS+=("$1") ;;
        *) echo "run.sh: unknown leg '${1:-}' (stable, 2025-11-25 or 2026-07-28)" >&2; exit 2 ;;
      esac ;;
    --direct-only) RUN_TOOLFOLD=0 ;;
    --toolfold-only) RUN_DIRECT=0 ;;
    --install-only) INSTALL_ONLY=1 ;;
    --scenario) shift; SCENARIOS+=("${1:?--scenario needs a name}") ;;
    --results) shift; RESULTS="${1:?--results needs a directory}" ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$RESULTS" in /*) ;; *) RESULTS="$PWD/$RESULTS" ;; esac

log() { echo "conformance: $*" >&2; }
die() { local code="$1"; shift; echo "conformance: $*" >&2; exit "$code"; }

# ---------------------------------------------------------------- install ---

# The SDK version the fixture is built from is the one toolfold's go.mod requires.
sdk_version() {
  awk '$1 == "github.com/modelcontextprotocol/go-sdk" { print $2; exit }
       $1 == "require" && $2 == "github.com/modelcontextprotocol/go-sdk" { print $3; exit }' "$ROOT/go.mod"
}

install_node() {
  local want have
  want="$(sed -n 's/.*"node": *"\([0-9.]*\)".*/\1/p' "$HERE/package.json")"
  have="$("$NODE" --version 2>/dev/null || true)"
  if [ "$have" = "v$want" ] && [ -f "$SUITE_STABLE" ] && [ -f "$SUITE_PINNED" ] &&
     [ "$HERE/node_modules/.package-lock.json" -nt "$HERE/package-lock.json" ]; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 ||
    die 3 "npm is not installed; it is needed once to install Node 22 and the conformance suite into conformance/node_modules (apt-get install npm)."
  log "installing Node $want and the conformance suite into conformance/node_modules (npm ci)"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error >"$HERE/.npm-install.log" 2>&1) ||
    { tail -20 "$HERE/.npm-install.log" >&2; die 3 "npm ci failed in conformance/ (log above)."; }
  [ -x "$NODE" ] && [ -f "$SUITE_STABLE" ] && [ -f "$SUITE_PINNED" ] ||
    die 3 "npm ci finished but $NODE or a suite is missing from conformance/node_modules."
  touch "$HERE/node_modules/.package-lock.json"
}

install_fixture() {
  local ver stamp
  ver="$(sdk_version)"
  [ -n "$ver" ] || die 3 "cannot find the go-sdk version in $ROOT/go.mod."
  stamp="$BIN/everything-server.version"
  if [ -x "$BIN/everything-server" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$ver" ]; then
    return 0
  fi
  command -v go >/dev/null 2>&1 || die 3 "go is not installed; it is needed to build the fixture server."
  log "installing the SDK's conformance fixture server $ver into conformance/.bin (go install)"
  mkdir -p "$BIN"
  # go install pkg@version ignores the current module, so go.mod is untouched.
  (cd "$HERE" && GOBIN="$BIN" GOFLAGS='' go install \
    "github.com/modelcontextprotocol/go-sdk/conformance/everything-server@$ver") ||
    die 3 "go install of the fixture server failed."
  echo "$ver" >"$stamp"
}

build_toolfold() {
  if [ -n "${TOOLFOLD_BIN:-}" ]; then
    TOOLFOLD="$TOOLFOLD_BIN"
    [ -x "$TOOLFOLD" ] || die 3 "TOOLFOLD_BIN=$TOOLFOLD is not an executable."
    return 0
  fi
  TOOLFOLD="$BIN/toolfold"
  mkdir -p "$BIN"
  (cd "$ROOT" && go build -o "$TOOLFOLD" ./cmd/toolfold) || die 1 "go build ./cmd/toolfold failed."
}

install_node
install_fixture
[ "$RUN_TOOLFOLD" = 1 ] && build_toolfold
[ "$INSTALL_ONLY" = 1 ] && exit 0

# ---------------------------------------------------------------- servers ---

PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] || continue
    kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
  done
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  "$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# wait_ready PID PORT: waits until PORT accepts connections, at most 20 s, or
# until PID exits.
wait_ready() {
  local pid="$1" port="$2" i
  for i in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || return 1
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

# stop PID: stops one server this script started.
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; return 0; }

# run_suite DIR URL: runs the leg's suite against URL, results into DIR.
run_suite() {
  local out="$1" url="$2" s rc
  mkdir -p "$out"
  if [ "${#SCENARIOS[@]}" -gt 0 ]; then
    for s in "${SCENARIOS[@]}"; do
      (cd "$out" && timeout --kill-after=10 "$TIMEOUT" "$NODE" "$LEG_SUITE" server --url "$url" \
        --scenario "$s" -o "$out/checks") >>"$out/suite.log" 2>&1
    done
    return 0
  fi
  (cd "$out" && timeout --kill-after=10 "$TIMEOUT" "$NODE" "$LEG_SUITE" server --url "$url" \
    "${LEG_ARGS[@]}" -o "$out/checks") >"$out/suite.log" 2>&1
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    log "$LEG: the suite did not finish within ${TIMEOUT}s (CONFORMANCE_TIMEOUT); scenarios without results count as failed"
    echo "timeout after ${TIMEOUT}s" >"$out/TIMEOUT"
  fi
  return 0
}

# write_config FILE: a toolfold config fronting the fixture over stdio, no
# prefix. With CONFORMANCE_TRACE=1 the command is a wrapper that copies the
# stdio JSON-RPC between toolfold and the fixture into the leg's folder
# (toolfold-to-fixture.jsonl, fixture-to-toolfold.jsonl).
write_config() {
  local fixture="$BIN/everything-server" dir
  if [ "${CONFORMANCE_TRACE:-}" = 1 ]; then
    dir="$(dirname "$1")"
    fixture="$dir/traced-fixture.sh"
    printf '#!/bin/sh\ntee -a "%s/toolfold-to-fixture.jsonl" | "%s" "$@" | tee -a "%s/fixture-to-toolfold.jsonl"\n' \
      "$dir" "$BIN/everything-server" "$dir" >"$fixture"
    chmod +x "$fixture"
  fi
  # JSON-escape the path (backslashes and quotes; it is a path this script made).
  fixture="$(printf '%s' "$fixture" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
  # The suite checks pass-through: the fixture adds a tool mid-run for its
  # list_changed scenario, which the trust gate would hold by default
  # (trust.onNew: hold), so this config accepts new items.
  printf '{\n  "mcpServers": {\n    "everything": {"command": "%s", "prefix": ""}\n  },\n  "trust": {"onNew": "accept"}\n}\n' "$fixture" >"$1"
}

# run_leg LEG: both halves of one leg, then its report; returns non-zero on a
# regression.
run_leg() {
  LEG="$1"
  local dir="$RESULTS/$LEG" port pid cfg
  case "$LEG" in
    stable)
      LEG_SUITE="$SUITE_STABLE"; LEG_ARGS=(--suite all)
      FIXTURE_FLAGS=(-stateless=false); TOOLFOLD_FLAGS=() ;;
    2025-11-25)
      LEG_SUITE="$SUITE_PINNED"; LEG_ARGS=(--requirements "$LEG")
      FIXTURE_FLAGS=(-stateless=false); TOOLFOLD_FLAGS=() ;;
    2026-07-28)
      LEG_SUITE="$SUITE_PINNED"; LEG_ARGS=(--requirements "$LEG")
      FIXTURE_FLAGS=(-stateless); TOOLFOLD_FLAGS=(--stateless) ;;
  esac
  mkdir -p "$dir"
  "$NODE" "$LEG_SUITE" list --server >"$dir/scenarios.txt" 2>&1 ||
    die 3 "the conformance suite cannot list its scenarios: $(head -3 "$dir/scenarios.txt")"

  if [ "$RUN_DIRECT" = 1 ]; then
    port="$(free_port)"
    # -stateless=false: before 2026-07-28 server-initiated requests (sampling,
    # elicitation) need a session; the SDK's own CI runs the fixture the same way.
    "$BIN/everything-server" -http="127.0.0.1:$port" "${FIXTURE_FLAGS[@]}" >"$dir/direct-server.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    if ! wait_ready "$pid" "$port"; then
      tail -20 "$dir/direct-server.log" >&2
      die 4 "the fixture server did not start on 127.0.0.1:$port (log above)."
    fi
    log "$LEG: direct: suite against the fixture at http://127.0.0.1:$port/mcp (${FIXTURE_FLAGS[*]})"
    run_suite "$dir/direct" "http://127.0.0.1:$port/mcp"
    stop "$pid"
  fi

  if [ "$RUN_TOOLFOLD" = 1 ]; then
    port="$(free_port)"
    cfg="$dir/toolfold.json"
    write_config "$cfg"
    "$TOOLFOLD" serve --config "$cfg" --http "127.0.0.1:$port" --mode "$MODE" \
      ${TOOLFOLD_FLAGS[@]+"${TOOLFOLD_FLAGS[@]}"} >"$dir/toolfold-server.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    if wait_ready "$pid" "$port"; then
      log "$LEG: toolfold: suite against toolfold at http://127.0.0.1:$port/mcp (--mode $MODE${TOOLFOLD_FLAGS[*]:+ ${TOOLFOLD_FLAGS[*]}}, fronting the fixture over stdio)"
      run_suite "$dir/toolfold" "http://127.0.0.1:$port/mcp"
    else
      {
        echo "conformance: $LEG: toolfold did not start, so nothing was run through it."
        echo "conformance: command: $TOOLFOLD serve --config $cfg --http 127.0.0.1:$port --mode $MODE ${TOOLFOLD_FLAGS[*]}"
        echo "conformance: its output (last lines of $dir/toolfold-server.log):"
        tail -15 "$dir/toolfold-server.log" | sed 's/^/    /'
      } >&2
      echo "toolfold did not start: $(tail -3 "$dir/toolfold-server.log" | tr '\n' ' ')" >"$dir/toolfold-start-failed"
    fi
    stop "$pid"
  fi

  echo
  echo "=== leg $LEG: suite $("$NODE" "$LEG_SUITE" --version) ${LEG_ARGS[*]} ==="
  "$NODE" "$HERE/report.mjs" --results "$dir" --summary "$dir/summary.json" \
    $([ "$RUN_DIRECT" = 1 ] || echo --no-direct) $([ "$RUN_TOOLFOLD" = 1 ] || echo --no-toolfold)
}

# ---------------------------------------------------------------- run -------

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
START=$(date +%s)
[ "${#LEGS[@]}" -gt 0 ] || LEGS=("${ALL_LEGS[@]}")
STATUS=0
FAILED_LEGS=()
for leg in "${LEGS[@]}"; do
  if ! run_leg "$leg"; then
    STATUS=1
    FAILED_LEGS+=("$leg")
  fi
done
ELAPSED=$(( $(date +%s) - START ))

echo
if [ "$RUN_DIRECT" = 0 ] || [ "$RUN_TOOLFOLD" = 0 ]; then
  echo "conformance: legs ${LEGS[*]}: one half only, nothing compared; ${ELAPSED}s; results in $RESULTS"
elif [ "$STATUS" = 0 ]; then
  echo "conformance: legs ${LEGS[*]}: no regression through toolfold; ${ELAPSED}s; results in $RESULTS"
else
  echo "conformance: legs ${LEGS[*]}: regressions through toolfold in ${FAILED_LEGS[*]}; ${ELAPSED}s; results in $RESULTS"
fi
exit "$STATUS"
