#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# twice — against the Go SDK's conformance fixture server directly, and against
# toolfold fronting that same fixture over stdio with no prefix — and compares
# the two. Exits non-zero if any scenario that passes directly fails through
# toolfold.
#
# Usage: conformance/run.sh [--direct-only] [--toolfold-only] [--scenario NAME]...
#                           [--results DIR] [--summary FILE] [--install-only]
#
# Environment:
#   CONFORMANCE_TIMEOUT  seconds one suite run may take (default 300)
#   CONFORMANCE_SUITE    suite passed to the runner: all (default), active, pending
#   TOOLFOLD_BIN         use this toolfold binary instead of building ./cmd/toolfold
#   TOOLFOLD_MODE        --mode for toolfold serve (default flat)
#
# Exit codes: 0 no regression, 1 regression (or toolfold did not start),
# 2 bad usage, 3 a prerequisite (npm, go) is missing, 4 the direct run failed
# to start (so there is nothing to compare against).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$HERE/.bin"
NODE="$HERE/node_modules/.bin/node"
SUITE_JS="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
TIMEOUT="${CONFORMANCE_TIMEOUT:-300}"
SUITE="${CONFORMANCE_SUITE:-all}"
MODE="${TOOLFOLD_MODE:-flat}"
RESULTS="$HERE/results/latest"
SUMMARY=""
RUN_DIRECT=1
RUN_TOOLFOLD=1
INSTALL_ONLY=0
SCENARIOS=()

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --direct-only) RUN_TOOLFOLD=0 ;;
    --toolfold-only) RUN_DIRECT=0 ;;
    --install-only) INSTALL_ONLY=1 ;;
    --scenario) shift; SCENARIOS+=("${1:?--scenario needs a name}") ;;
    --results) shift; RESULTS="${1:?--results needs a directory}" ;;
    --summary) shift; SUMMARY="${1:?--summary needs a file}" ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

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
  if [ "$have" = "v$want" ] && [ -f "$SUITE_JS" ] &&
     [ "$HERE/node_modules/.package-lock.json" -nt "$HERE/package-lock.json" ]; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 ||
    die 3 "npm is not installed; it is needed once to install Node 22 and the conformance suite into conformance/node_modules (apt-get install npm)."
  log "installing Node $want and the conformance suite into conformance/node_modules (npm ci)"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error >"$HERE/.npm-install.log" 2>&1) ||
    { tail -20 "$HERE/.npm-install.log" >&2; die 3 "npm ci failed in conformance/ (log above)."; }
  [ -x "$NODE" ] && [ -f "$SUITE_JS" ] || die 3 "npm ci finished but $NODE or the suite is missing."
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
  (cd "$HERE" && GOBIN="$BIN" GOFLAGS= go install \
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

# wait_ready PID PORT LOG: waits until PORT accepts connections, at most 20 s.
wait_ready() {
  local pid="$1" port="$2" i
  for i in $(seq 1 200); do
    if ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

# run_suite NAME URL: runs the suite against URL, results into $RESULTS/NAME.
run_suite() {
  local name="$1" url="$2" out="$RESULTS/$1" args=() s rc
  mkdir -p "$out"
  if [ "${#SCENARIOS[@]}" -gt 0 ]; then
    for s in "${SCENARIOS[@]}"; do
      (cd "$out" && timeout --kill-after=10 "$TIMEOUT" "$NODE" "$SUITE_JS" server --url "$url" \
        --scenario "$s" -o "$out/checks") >>"$out/suite.log" 2>&1
    done
    return 0
  fi
  (cd "$out" && timeout --kill-after=10 "$TIMEOUT" "$NODE" "$SUITE_JS" server --url "$url" \
    --suite "$SUITE" -o "$out/checks") >"$out/suite.log" 2>&1
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    log "$name: the suite did not finish within ${TIMEOUT}s (CONFORMANCE_TIMEOUT); scenarios without results count as failed"
    echo "timeout after ${TIMEOUT}s" >"$out/TIMEOUT"
  fi
  return 0
}

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
START=$(date +%s)

"$NODE" "$SUITE_JS" list --server >"$RESULTS/scenarios.txt" 2>&1 ||
  die 3 "the conformance suite cannot list its scenarios: $(head -3 "$RESULTS/scenarios.txt")"

if [ "$RUN_DIRECT" = 1 ]; then
  port="$(free_port)"
  # -stateless=false: server-initiated requests (sampling, elicitation) need a
  # session; the SDK's own CI runs the fixture the same way for 2025-11-25.
  "$BIN/everything-server" -http="127.0.0.1:$port" -stateless=false >"$RESULTS/direct-server.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  if ! wait_ready "$pid" "$port"; then
    tail -20 "$RESULTS/direct-server.log" >&2
    die 4 "the fixture server did not start on 127.0.0.1:$port (log above)."
  fi
  log "direct: suite against the fixture at http://127.0.0.1:$port/mcp"
  run_suite direct "http://127.0.0.1:$port/mcp"
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
fi

if [ "$RUN_TOOLFOLD" = 1 ]; then
  port="$(free_port)"
  cfg="$RESULTS/toolfold.json"
  # JSON-escape the fixture path (quotes and backslashes only; it is a path we made).
  fixture="$(printf '%s' "$BIN/everything-server" | sed 's/\\/\\\\/g; s/"/\\"/g')"
  cat >"$cfg" <<EOF
{
  "mcpServers": {
    "everything": {"command": "$fixture", "prefix": ""}
  }
}
EOF
  "$TOOLFOLD" serve --config "$cfg" --http "127.0.0.1:$port" --mode "$MODE" \
    >"$RESULTS/toolfold-server.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  if wait_ready "$pid" "$port"; then
    log "toolfold: suite against toolfold at http://127.0.0.1:$port/mcp (mode $MODE, fronting the fixture over stdio)"
    run_suite toolfold "http://127.0.0.1:$port/mcp"
  else
    {
      echo "conformance: toolfold did not start, so nothing was run through it."
      echo "conformance: command: $TOOLFOLD serve --config $cfg --http 127.0.0.1:$port --mode $MODE"
      echo "conformance: its output (last lines of $RESULTS/toolfold-server.log):"
      tail -15 "$RESULTS/toolfold-server.log" | sed 's/^/    /'
    } >&2
    echo "toolfold did not start: $(tail -3 "$RESULTS/toolfold-server.log" | tr '\n' ' ')" >"$RESULTS/toolfold-start-failed"
  fi
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
fi

ELAPSED=$(( $(date +%s) - START ))

# ---------------------------------------------------------------- report ----

"$NODE" "$HERE/report.mjs" --results "$RESULTS" --seconds "$ELAPSED" \
  ${SUMMARY:+--summary "$SUMMARY"} \
  $([ "$RUN_DIRECT" = 1 ] || echo --no-direct) $([ "$RUN_TOOLFOLD" = 1 ] || echo --no-toolfold)
