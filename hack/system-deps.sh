#!/usr/bin/env bash
# Installs the Debian packages the project uses, when missing: nftables and iproute2 (the local
# cluster's Service DNAT, Pod isolation, and each Pod's network namespace) and chromium (the real browser the debug page's tests drive, headless).
# Needs root; without it, says which packages to install and goes on (the local cluster runs
# without isolation; the browser tests say chromium is missing).
set -euo pipefail
missing=()
command -v nft >/dev/null || missing+=(nftables)
command -v ip >/dev/null || missing+=(iproute2)
[[ -x /usr/bin/chromium ]] || missing+=(chromium)
(( ${#missing[@]} == 0 )) && exit 0
if [[ $(id -u) != 0 ]]; then
  echo "system-deps: not root; install ${missing[*]} (apt-get install -y ${missing[*]})" >&2
  exit 0
fi
echo "system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y "${missing[@]}" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null; }
