#!/usr/bin/env bash
# Installs google-proto-files (pinned, integrity-checked) from the npm
# registry into the cache (PROTOAPI_CORPUS_CACHE, default
# ~/.cache/protoapi-corpus) unless it is there, and prints the unpacked tree.
set -euo pipefail
cache=${PROTOAPI_CORPUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/protoapi-corpus}
version=6.0.1
integrity=fbvUWVNh3rKGlVFWwlUNF7Sk1Tah0a89q02rLTXsWjbKKHGeuURAa8tl9rvu5TyWny1YiSIo5eDqF260Tai6vQ==
tarball="$cache/google-proto-files-$version.tgz"
tree="$cache/google-proto-files-$version"

mkdir -p "$cache"
if [ ! -f "$tarball" ]; then
  (cd "$cache" && npm pack "google-proto-files@$version" --silent >/dev/null)
fi
actual=$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)
if [ "$actual" != "$integrity" ]; then
  echo "corpus: $tarball is not google-proto-files $version (sha512 $actual)" >&2
  exit 1
fi
if [ ! -f "$tree/.unpacked" ]; then
  rm -rf "$tree" && mkdir -p "$tree"
  tar -xzf "$tarball" -C "$tree" --strip-components=1 package
  touch "$tree/.unpacked"
fi
echo "$tree"
