#!/usr/bin/env bash
# Builds the release archives of toolfold into dist/:
#   toolfold_<version>_<os>_<arch>.tar.gz  (linux, darwin)
#   toolfold_<version>_windows_<arch>.zip
#   SHA256SUMS
# for linux, darwin and windows on amd64 and arm64. The binaries are static
# (CGO_ENABLED=0) and built with -trimpath, so they run on any system of
# their kind and carry no path of this machine. The version is
# `git describe --tags --always --dirty` (tag a release first: git tag
# v1.2.3); `toolfold version` prints it with the commit and its date.
#
#   scripts/release.sh                  # every target
#   TARGETS="linux/amd64" scripts/release.sh
set -euo pipefail
cd "$(dirname "$0")/.."

command -v git > /dev/null || { echo "release: git is needed for the version" >&2; exit 1; }
version="$(git describe --tags --always --dirty)"
commit="$(git rev-parse HEAD)"
# The commit's own time, in UTC: rebuilding the same commit gives the
# same binaries and archives.
epoch="$(git log -1 --format=%ct)"
date="$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)"
targets="${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"

ldflags="-s -w -X main.buildVersion=$version -X main.buildCommit=$commit -X main.buildDate=$date"
dist="dist"
rm -rf "$dist"
mkdir -p "$dist"

for target in $targets; do
  os="${target%/*}"
  arch="${target#*/}"
  name="toolfold_${version}_${os}_${arch}"
  stage="$dist/$name"
  mkdir -p "$stage"
  exe="toolfold"
  [ "$os" = windows ] && exe="toolfold.exe"
  echo "==> $os/$arch" >&2
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$stage/$exe" ./cmd/toolfold
  cp LICENSE README.md CHANGELOG.md "$stage/"
  # Same times, owners and order for every file: the archive depends on
  # the commit only.
  find "$stage" -exec touch -d "@$epoch" {} +
  if [ "$os" = windows ]; then
    (cd "$dist" && rm -f "$name.zip" && zip -qrX "$name.zip" "$name")
  else
    # gzip -n: no name or time in the gzip header either.
    tar -C "$dist" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -cf - "$name" | gzip -n > "$dist/$name.tar.gz"
  fi
  rm -rf "$stage"
done

(
  cd "$dist"
  shopt -s nullglob
  archives=(*.tar.gz *.zip)
  if command -v sha256sum > /dev/null; then
    sha256sum -- "${archives[@]}"
  else
    shasum -a 256 -- "${archives[@]}" # macOS
  fi > SHA256SUMS
)
echo "==> $dist/ (version $version):" >&2
ls -l "$dist" >&2
