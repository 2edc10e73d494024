#!/usr/bin/env bash
# `make test`: every test (vitest: image, e2e on the local cluster, unit) with the static checks
# (types, lint, format) run beside it at a lower priority rather than before it. The e2e files
# mostly wait on Kubernetes, so the checks' 45-60 s of CPU cost the suite little, where before
# they added their whole time to the run's. Fails when either fails; the checks' output comes
# after the suite's summary only when they fail.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
(
  nice -n 5 npx tsc -p . &&
    nice -n 5 npx eslint --max-warnings 0 . &&
    nice -n 5 npx prettier --check --log-level warn .
) >"$out" 2>&1 &
checks=$!
npx vitest run
tests=$?
wait "$checks"
static=$?
if (( static == 0 )); then
  echo "static checks (tsc, eslint, prettier, beside the tests): passed"
else
  echo "static checks (tsc, eslint, prettier, beside the tests): FAILED:"
  cat "$out"
fi
(( tests == 0 && static == 0 ))
