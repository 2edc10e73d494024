#!/usr/bin/env bash
# Installs the Debian packages the real nodes (issue 27, in progress) need, when missing:
# libseccomp-dev (runc is built with cgo against libseccomp, for seccomp profiles) and
# busybox-static (the tests' shell image, test/cluster/realnode/images.ts).
# Needs root; without it, says which packages to install and exits 1.
set -euo pipefail
missing=()
pkg-config --exists libseccomp 2>/dev/null || missing+=(libseccomp-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing+=(busybox-static)
(( ${#missing[@]} == 0 )) && exit 0
if [[ $(id -u) != 0 ]]; then
  echo "node-deps: not root; install ${missing[*]} (apt-get install -y ${missing[*]})" >&2
  exit 1
fi
echo "node-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y "${missing[@]}" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null; }
