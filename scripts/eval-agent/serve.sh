#!/bin/sh
# Serves toolfold over streamable HTTP on the 35 shared catalogs (recorded
# tool lists, replayed by ./replay: every call answers which tool it
# reached). Usage: serve.sh [MODE] [ADDR]   MODE: search (default), groups,
# grouped, flat. The catalogs come from $TOOLFOLD_CATALOGS, else
# testdata/catalogs in the repository; binaries and the config go to
# $EVAL_DIR (default /tmp/toolfold-eval).
set -eu
cd "$(dirname "$0")/../.."
mode=${1:-search}
addr=${2:-127.0.0.1:8931}
catalogs=$(cd "${TOOLFOLD_CATALOGS:-testdata/catalogs}" && pwd)
out=${EVAL_DIR:-/tmp/toolfold-eval}
mkdir -p "$out"
go build -o "$out/replay" ./scripts/eval-agent/replay
go build -o "$out/toolfold" ./cmd/toolfold
# One server per catalog; azure-all repeats azure in another mode.
{
	printf '{\n  "mcpServers": {\n'
	first=1
	for f in "$catalogs"/*.json; do
		name=$(basename "$f" .json)
		[ "$name" = azure-all ] && continue
		[ $first = 1 ] || printf ',\n'
		first=0
		printf '    "%s": {"command": "%s", "args": ["%s"]}' "$name" "$out/replay" "$f"
	done
	printf '\n  }\n}\n'
} >"$out/toolfold.json"
echo "serving $mode on http://$addr/mcp (config $out/toolfold.json)" >&2
exec "$out/toolfold" serve --http "$addr" --mode "$mode" --config "$out/toolfold.json"
