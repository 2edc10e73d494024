#!/usr/bin/env bash
# Runs `npm ci` when node_modules was not installed from this lockfile by this Node.
set -euo pipefail
cd "$(dirname "$0")/.."
want="$(node -p 'process.version + " " + process.versions.modules') $(sha256sum package-lock.json | cut -c1-16)"
stamp=node_modules/.deps-stamp
if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]]; then exit 0; fi
npm ci --no-audit --no-fund
echo "$want" > "$stamp"
