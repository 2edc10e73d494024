#!/usr/bin/env bash
# Installs the Debian packages the local cluster uses, when missing: nftables (Pod isolation).
# Needs root; without it, says which packages to install and goes on (only isolation needs them).
set -euo pipefail
missing=()
command -v nft >/dev/null || missing+=(nftables)
(( ${#missing[@]} == 0 )) && exit 0
if [[ $(id -u) != 0 ]]; then
  echo "system-deps: not root; install ${missing[*]} for Pod isolation in the local cluster" >&2
  exit 0
fi
echo "system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y "${missing[@]}" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null; }
