#!/usr/bin/env bash
# Prints the bin directory of a Node.js >= 24 with its C headers, installing one if needed.
#
# The machine's Node is used when it is new enough and ships its headers (native modules such
# as better-sqlite3 compile against them offline). Otherwise the pinned Node below is taken
# from the npm registry (package node-linux-<arch>, which carries bin/node and include/) and
# unpacked into $ETCD_OPERATOR_CACHE (default ~/.cache/etcd-operator), where later runs reuse it.
# Says on stderr, in one line, which Node is used. `hack/node.sh --pinned` always prints the
# pinned Node's (the one the operator image ships, hack/image/build.ts).
set -euo pipefail

NODE_VERSION=24.21.0
MIN_MAJOR=24
cache=${ETCD_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etcd-operator}

if [[ ${1:-} != --pinned ]] && machine=$(command -v node 2>/dev/null); then
  version=$("$machine" -p 'process.versions.node' 2>/dev/null || echo 0)
  prefix=$(cd "$(dirname "$machine")/.." && pwd)
  if (( ${version%%.*} >= MIN_MAJOR )) && [[ -f $prefix/include/node/node_version.h ]]; then
    echo "node: using the machine's Node v$version" >&2
    dirname "$machine"
    exit 0
  fi
fi

case $(uname -m) in
  x86_64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) echo "node: no Node $NODE_VERSION package for $(uname -m)" >&2; exit 1 ;;
esac

dir=$cache/node-v$NODE_VERSION-linux-$arch
if [[ ! -x $dir/bin/node ]]; then
  command -v npm >/dev/null || { echo "node: need Node >= $MIN_MAJOR, or npm to fetch it" >&2; exit 1; }
  echo "node: installing Node v$NODE_VERSION from the npm registry (node-linux-$arch) into the cache" >&2
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.node.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-$arch@$NODE_VERSION" >/dev/null)
  tar -xzf "$tmp"/node-linux-"$arch"-*.tgz -C "$tmp"
  [[ -x $tmp/package/bin/node && -f $tmp/package/include/node/node_version.h ]] ||
    { echo "node: node-linux-$arch@$NODE_VERSION has no bin/node or include/node" >&2; exit 1; }
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
echo "node: using Node v$NODE_VERSION (node-linux-$arch from the npm registry, cached)" >&2
echo "$dir/bin"
