#!/usr/bin/env bash
# Takes docs/operating.md's trace screenshot (docs/images/trace-jaeger.png): a
# Jaeger all-in-one (scripts/jaeger.sh) keeping traces in memory and
# serving its web UI, toolfold with tracing on exporting to it, one
# agent's turn of MCP calls under one client trace (find_tools, a
# call_tool that reaches an upstream, a call_tool whose tool fails), and
# headless Chromium photographing that trace in the UI. Everything listens
# on loopback only and is stopped when the script ends.
#
#   JAEGER_UI_DIR=/path/to/jaeger-ui/build scripts/trace-screenshot.sh [out.png]
#
# Needs go, node, curl, jq and chromium; the PNG is shrunk with pngquant
# or optipng when they are installed.
#
# Jaeger built from Go sources serves only a placeholder page: its UI is a
# separate JavaScript project (jaegertracing/jaeger-ui on GitHub), so
# JAEGER_UI_DIR must name a build of it, the folder holding its index.html.
# To make one, in a scratch folder outside this repository: clone that
# project, check out the tag that matches scripts/jaeger.sh's version
# (v1.76.0), then with Node 20 or later run
#   npm ci --ignore-scripts --engine-strict=false
#   npm run --workspace @jaegertracing/plexus build
#   npm run --workspace jaeger-ui build
# and point JAEGER_UI_DIR at its packages/jaeger-ui/build.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(realpath -m "${1:-$root/docs/images/trace-jaeger.png}")"

die() {
  printf 'trace-screenshot: %s\n' "$*" >&2
  exit 1
}

if [ -z "${JAEGER_UI_DIR:-}" ] || [ ! -f "${JAEGER_UI_DIR}/index.html" ]; then
  die "JAEGER_UI_DIR='${JAEGER_UI_DIR:-}' holds no Jaeger UI build (no index.html).
Jaeger built from Go sources has no UI; build one from the jaeger-ui project
as this script's header says, and set JAEGER_UI_DIR to its packages/jaeger-ui/build."
fi
ui_dir="$(cd "$JAEGER_UI_DIR" && pwd)"
for tool in go node curl jq; do
  command -v "$tool" > /dev/null || die "$tool is not installed; it is needed to run Jaeger, toolfold and the calls"
done
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -n "$chromium" ] || die "chromium is not installed (on Debian: apt-get install chromium), or set CHROMIUM to a Chromium binary"

work="$(mktemp -d)"
pids=()
stop() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2> /dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2> /dev/null || true
  done
  rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT TERM

# free_port prints a loopback port nothing listens on now and that it has
# not printed before (it remembers them in the file $work/ports, as it runs
# in a subshell).
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 40000))
    if ! grep -qx "$port" "$work/ports" 2> /dev/null &&
      ! (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then
      echo "$port" >> "$work/ports"
      echo "$port"
      return
    fi
  done
}

# wait_listening waits up to a minute for a started program (pid, log) to
# accept connections on a port, and stops the script if it exits first.
wait_listening() {
  local what=$1 pid=$2 port=$3 log=$4 i
  for ((i = 0; i < 600; i++)); do
    if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then
      return
    fi
    if ! kill -0 "$pid" 2> /dev/null; then
      cat "$log" >&2
      die "$what exited before it listened on 127.0.0.1:$port (its output is above)"
    fi
    sleep 0.1
  done
  cat "$log" >&2
  die "$what did not listen on 127.0.0.1:$port within a minute (its output is above)"
}

hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
now_ns() { date +%s%N; }

# Jaeger: OTLP over HTTP in, traces in memory, the query API and the UI out.
jaeger="$("$root/scripts/jaeger.sh")"
otlp=$(free_port) otlp_grpc=$(free_port) query=$(free_port) query_grpc=$(free_port) health=$(free_port)
cat > "$work/jaeger.yaml" << EOF
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    ui:
      assets_path: $ui_dir
    http:
      endpoint: 127.0.0.1:$query
    grpc:
      endpoint: 127.0.0.1:$query_grpc
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 100
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:$health
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$otlp_grpc
      http:
        endpoint: 127.0.0.1:$otlp
processors:
  batch:
    timeout: 50ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
EOF
"$jaeger" --config "file:$work/jaeger.yaml" > "$work/jaeger.log" 2>&1 &
pids+=($!)
wait_listening jaeger "${pids[-1]}" "$query" "$work/jaeger.log"
wait_listening jaeger "${pids[-1]}" "$otlp" "$work/jaeger.log"

# toolfold, serving the search mode over HTTP, with one stdio upstream that
# reports its own spans to the same Jaeger.
(cd "$root" && go build -o "$work/toolfold" ./cmd/toolfold)
port=$(free_port)
jq -n --arg node "$(command -v node)" --arg upstream "$root/scripts/trace-upstream.mjs" \
  --arg otlp "http://127.0.0.1:$otlp" '{
  mcpServers: {trace: {command: $node, args: [$upstream], env: {OTEL_EXPORTER_OTLP_ENDPOINT: $otlp}}},
  telemetry: {tracing: true, endpoint: $otlp, protocol: "http/protobuf", recordArguments: true}
}' > "$work/toolfold.json"
OTEL_BSP_SCHEDULE_DELAY=50 TOOLFOLD_CACHE_DIR="$work/cache" \
  "$work/toolfold" serve --config "$work/toolfold.json" --http "127.0.0.1:$port" --mode search \
  > "$work/toolfold.log" 2>&1 &
pids+=($!)
wait_listening toolfold "${pids[-1]}" "$port" "$work/toolfold.log"

# One agent turn: a client span (the agent's, sent by this script) that is
# the parent of every request's traceparent.
trace_id=$(hex 16) turn=$(hex 8)
traceparent="00-$trace_id-$turn-01"
turn_start=$(now_ns)
mcp() { # mcp BODY [HEADER...]: POSTs one JSON-RPC message, prints the answer
  local body=$1
  shift
  curl -sS -D "$work/headers" -X POST "http://127.0.0.1:$port/mcp" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    "$@" --data "$body"
}
mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"trace-screenshot","version":"1"}}}' \
  -H "traceparent: $traceparent" > /dev/null
session=$(sed -n 's/^mcp-session-id: *//Ip' "$work/headers" | tr -d '\r')
[ -n "$session" ] || die "toolfold's initialize answer named no session; its log: $(cat "$work/toolfold.log")"
headers=(-H "Mcp-Session-Id: $session" -H 'Mcp-Protocol-Version: 2025-11-25')
mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' "${headers[@]}" > /dev/null
call() { # call ID TOOL ARGUMENTS: a tools/call carrying the turn's traceparent in its _meta
  mcp "$(jq -nc --argjson id "$1" --arg tool "$2" --argjson args "$3" --arg tp "$traceparent" \
    '{jsonrpc:"2.0",id:$id,method:"tools/call",params:{name:$tool,arguments:$args,_meta:{traceparent:$tp}}}')" "${headers[@]}"
}
mcp "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"traceparent\":\"$traceparent\"}}}" "${headers[@]}" > /dev/null
call 3 find_tools '{"query":"echo the trace context"}' > "$work/find.txt"
grep -q 'trace__echo' "$work/find.txt" || die "find_tools did not find trace__echo: $(cat "$work/find.txt")"
call 4 call_tool '{"name":"trace__echo","arguments":{}}' > "$work/echo.txt"
grep -q "traceparent=00-$trace_id-" "$work/echo.txt" || die "the upstream did not get the turn's trace: $(cat "$work/echo.txt")"
call 5 call_tool '{"name":"trace__fail","arguments":{}}' > /dev/null
turn_end=$(now_ns)
jq -nc --arg trace "$trace_id" --arg span "$turn" --arg from "$turn_start" --arg to "$turn_end" '{
  resourceSpans: [{
    resource: {attributes: [{key: "service.name", value: {stringValue: "agent"}}]},
    scopeSpans: [{scope: {name: "trace-screenshot"}, spans: [{
      traceId: $trace, spanId: $span, name: "agent turn", kind: 3,
      startTimeUnixNano: $from, endTimeUnixNano: $to
    }]}]
  }]
}' | curl -sS -f -o /dev/null -X POST "http://127.0.0.1:$otlp/v1/traces" -H 'Content-Type: application/json' --data @-

# Wait (up to a minute) for the trace to be stored whole: the agent's span,
# the two the upstream sent, and toolfold's span of the last call (toolfold
# exports its spans in the order they end, and that one ends last).
for ((i = 0; ; i++)); do
  whole=$(curl -sS "http://127.0.0.1:$query/api/traces/$trace_id" | jq -r '.data[0] // {} |
    (.processes // {}) as $p | [.spans[]? | {service: $p[.processID].serviceName, op: .operationName}] |
    (any(.service == "agent") and any(.service == "toolfold" and .op == "tools/call trace__fail")
      and ([.[] | select(.service == "trace-upstream")] | length) == 2)' 2> /dev/null || true)
  [ "$whole" = true ] && break
  ((i < 600)) || die "trace $trace_id was never stored whole; toolfold's log: $(cat "$work/toolfold.log")"
  sleep 0.1
done

mkdir -p "$(dirname "$out")"
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$work/chromium" --window-size=1400,600 \
  --virtual-time-budget=15000 --screenshot="$work/shot.png" \
  "http://127.0.0.1:$query/trace/$trace_id" > "$work/chromium.log" 2>&1 ||
  die "chromium failed: $(cat "$work/chromium.log")"
# Shrunk when a PNG optimizer is at hand (pngquant exits 99 when it cannot
# keep the quality asked: the picture is then kept as Chromium took it).
if command -v pngquant > /dev/null &&
  pngquant --quality=70-95 --strip --force --output "$work/small.png" "$work/shot.png"; then
  mv "$work/small.png" "$work/shot.png"
elif command -v optipng > /dev/null; then
  optipng -quiet -o2 "$work/shot.png"
fi
cp "$work/shot.png" "$out"
printf 'trace %s: %s (%s bytes)\n' "$trace_id" "$out" "$(stat -c %s "$out")"
