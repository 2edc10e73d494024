#!/usr/bin/env bash
# Runs `npm ci` when node_modules was not installed from this lockfile by this Node, then
# makes sure the native SQLite binding loads, compiling it from source when the prebuilt
# binary shipped in the package does not fit this machine (offline, against the headers in
# $npm_config_nodedir that hack/node.sh provides).
set -euo pipefail
cd "$(dirname "$0")/.."
want="$(node -p 'process.version + " " + process.versions.modules') $(sha256sum package-lock.json | cut -c1-16)"
stamp=node_modules/.deps-stamp
if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]]; then exit 0; fi
npm ci --no-audit --no-fund

loads() { node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()" 2>/dev/null; }
if ! loads; then
  echo "deps: the prebuilt better-sqlite3 does not load here; compiling it from source" >&2
  gyp=$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js
  (cd node_modules/better-sqlite3 && node "$gyp" rebuild --release --force_build=1)
  loads || { echo "deps: better-sqlite3 does not load even after compiling it" >&2; exit 1; }
fi
echo "$want" > "$stamp"
