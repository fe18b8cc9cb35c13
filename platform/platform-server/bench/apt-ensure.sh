#!/usr/bin/env bash
# Installs the named Debian packages that are not installed yet (apt-get, as
# root or through sudo); does nothing when all are.
#
#   bash platform/platform-server/bench/apt-ensure.sh PACKAGE...
set -euo pipefail
missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
((${#missing[@]})) || exit 0
echo "== apt-get install ${missing[*]}" >&2
sudo=()
((EUID == 0)) || sudo=(sudo)
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2
