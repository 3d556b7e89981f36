#!/usr/bin/env bash
# Records testdata/catalogs again from the pinned servers listed in
# scripts/record-catalogs/servers.mjs: the named ones, or all of them.
#
#   scripts/record-catalogs.sh                 # every catalog
#   scripts/record-catalogs.sh memory exa      # just these
#
# Everything is installed into a scratch folder (mktemp -d) that is removed
# afterwards; each server runs there with a HOME of its own and dummy
# credentials (see record.mjs). Needs node and npm, and go for grafana.
# Not part of CI: review the diff of testdata/catalogs and update the token
# column of its README (go test ./internal/tokens/ names the rows that moved).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
here="$repo/scripts/record-catalogs"
out="$repo/testdata/catalogs"

log() { printf '==> %s\n' "$*" >&2; }
for tool in node npm; do
  command -v "$tool" > /dev/null || { echo "record-catalogs: $tool is not installed; install Node.js with npm and run again." >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here"/*.mjs "$work"/
cd "$work"
echo '{"name": "record-catalogs", "private": true, "type": "module"}' > package.json

# What to install for these servers (a typo in a name stops here).
plan="$(node plan.mjs "$@")"
mapfile -t npm_specs < <(sed -n 's/^npm //p' <<< "$plan")
log "npm packages: ${npm_specs[*]}"
# --ignore-scripts: listing tools needs no install step, and some packages'
# steps download browsers, which a recording must not depend on.
npm install --no-audit --no-fund --loglevel=error --ignore-scripts --save-exact "${npm_specs[@]}"

node22="$(sed -n 's/^node22 //p' <<< "$plan")"
if [ -n "$node22" ]; then
  log "Node 22 for the servers that need it: $node22"
  # The node package's own install step puts the binary in place, so it runs.
  npm install --prefix "$work/node22" --no-audit --no-fund --loglevel=error "$node22"
fi

while read -r module; do
  [ -n "$module" ] || continue
  command -v go > /dev/null || { echo "record-catalogs: go is not installed; it builds $module." >&2; exit 1; }
  log "go install $module"
  GOBIN="$work/bin" go install "$module"
done < <(sed -n 's/^go //p' <<< "$plan")

log "recording into $out"
node record.mjs --out "$out" "$@"
