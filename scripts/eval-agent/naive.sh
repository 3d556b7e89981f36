#!/bin/sh
# A scripted agent for a floor, not a model: for each request of
# requests.json it sends the request's words to find_tools and calls the
# first tool found with no arguments, through the shim, logging as a blind
# agent would. Needs a server in the search mode (serve.sh search).
# Usage: naive.sh [SHIM]  (SHIM defaults to a fresh build of ./shim)
set -eu
cd "$(dirname "$0")/../.."
shim=${1:-}
if [ -z "$shim" ]; then
	shim=${EVAL_DIR:-/tmp/toolfold-eval}/shim
	go build -o "$shim" ./scripts/eval-agent/shim
fi
export EVAL_RUN=${EVAL_RUN:-naive-search} EVAL_AGENT=${EVAL_AGENT:-naive}
# One request per line: id, a tab, the request's words.
sed -n 's/.*"id": "\(R[0-9]*\)".*/\1/p; s/.*"request": "\(.*\)"$/\1/p' scripts/eval-agent/requests.json | paste - - |
while IFS='	' read -r id text; do
	q=$(printf '%s' "$text" | sed 's/\\"/'"'"'/g; s/"/'"'"'/g')
	top=$("$shim" -r "$id" tools/call "{\"name\": \"find_tools\", \"arguments\": {\"query\": \"$q\"}}" |
		sed -n 's/^1\. \([^(]*\)(.*/\1/p; s/^{"tools":\[{"name":"\([^"]*\)".*/\1/p')
	if [ -n "$top" ]; then
		"$shim" -r "$id" tools/call "{\"name\": \"call_tool\", \"arguments\": {\"name\": \"$top\", \"arguments\": {}}}" >/dev/null
	fi
done
