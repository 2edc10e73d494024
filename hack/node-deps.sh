#!/usr/bin/env bash
# Installs the Debian packages the real nodes need, when missing: libseccomp-dev, pkg-config and
# gcc (runc is built with cgo against libseccomp, for seccomp profiles) and busybox-static (the
# tests' shell image, localcluster/realnode/images.ts). Quick when all are there (no apt).
# Needs root, as the nodes do; without it, says which packages to install and goes on (build.sh
# all then builds no node parts).
set -euo pipefail
missing=()
command -v pkg-config >/dev/null || missing+=(pkg-config)
pkg-config --exists libseccomp 2>/dev/null || missing+=(libseccomp-dev)
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing+=(busybox-static)
(( ${#missing[@]} == 0 )) && exit 0
if [[ $(id -u) != 0 ]]; then
  echo "node-deps: not root; the nodes need root, and these packages: apt-get install -y ${missing[*]}" >&2
  exit 0
fi
echo "node-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y "${missing[@]}" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null; }
