# The two set-up commands are `make dev` and `make test`; both work on a fresh machine.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Every target runs on Node >= 24: the machine's when new enough, else one cached by hack/node.sh.
NODE_BIN := $(shell hack/node.sh)
ifeq ($(NODE_BIN),)
$(error no Node >= 24 could be found or installed; see the message above)
endif
export PATH := $(NODE_BIN):$(PATH)
# Native modules (better-sqlite3) compile against this Node's own headers, offline.
export npm_config_nodedir := $(abspath $(NODE_BIN)/..)

.PHONY: help deps generate typecheck lint format unit test tools cluster dev e2e-crash e2e-history bench bench-scale image image-test push plugin-archive

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

deps: ## install the locked npm dependencies (again only when the lockfile or Node changes)
	@hack/deps.sh

generate: deps ## rewrite the CRDs, TypeScript types and docs/api.md from api/, and docs/statecharts/*.svg from machines/
	node api/generate.ts

typecheck: deps ## type-check every TypeScript file
	npx tsc -p .

lint: deps ## lint every TypeScript file, and check it is formatted (make format rewrites it)
	npx eslint --max-warnings 0 .
	npx prettier --check --log-level warn .

format: deps ## format every TypeScript file with prettier
	npx prettier --write --log-level warn .

image: deps ## build the operator's OCI image without Docker (build/image/*.oci.tar) and print its digest (docs/install.md)
	node hack/image/build.ts

push: deps ## push the image and the chart to TO=REGISTRY/ORG (PLAIN_HTTP=1 without TLS), read both back, print the helm install line
	@[[ -n "$${TO:-}" ]] || { echo "make push TO=REGISTRY/ORG (e.g. ghcr.io/you); make image first" >&2; exit 2; }
	node hack/release.ts --to "$$TO" $${PLAIN_HTTP:+--plain-http}

plugin-archive: ## `kubectl etcd`'s krew archive, reproducibly (build/plugin/kubectl-etcd-vVERSION.tar.gz), and its manifest with the archive's sha256 (build/plugin/etcd.yaml)
	node hack/plugin-archive.ts

image-test: deps ## build the image twice (same digest?), run it unpacked as uid 65532 (needs root), push it and the chart to a local registry and pull them back
	@localcluster/tools/build.sh crane >/dev/null && localcluster/tools/build.sh registry >/dev/null && localcluster/tools/build.sh helm >/dev/null
	npx vitest run --project image

tools: ## build the local cluster's binaries into the cache (first time only), and its Debian packages
	@hack/system-deps.sh
	@hack/node-deps.sh
	@localcluster/tools/build.sh all

unit: deps ## run the tests that need no local cluster
	npx vitest run --project unit

test: deps tools ## run every test: unit and end-to-end, with types, lint and format checked beside them
	hack/test.sh

cluster: deps tools ## run the local Kubernetes in the foreground and print how to use kubectl with it
	node localcluster/main.ts

bench: deps tools ## operator vs floor: apply -> Available (1, 3, 5), scale-up, replacement (needs root); snapshot and restore of 256 MiB vs etcdctl and etcdutl; a 3.5 -> 3.6 roll vs restarting by hand; a 3-member TLS bootstrap beside plaintext; defrag of a fragmented 256 MiB database vs etcd's own calls; writes test/bench/results/*.json
	node test/bench/operator.ts
	node test/bench/snapshot.ts
	node test/bench/restore.ts
	node test/bench/upgrade.ts
	node test/bench/defrag.ts

bench-scale: deps tools ## the manager at scale: BENCH_SCALE_LIVE (50) one-member clusters + BENCH_SCALE_PARKED (950) parked, applied at once: time to settle, event -> intent, RSS, CPU at rest; writes test/bench/results/scale.json
	node test/bench/scale.ts

e2e-crash: deps tools ## kill the manager at the failpoints of bootstrap, scale, 3->0->3, replacement, an upgrade, growth, defrag, NOSPACE, snapshot, restore and schedule; check it converges (CRASH_SCENARIO=, CRASH_ALL=1: every window)
	node test/crash/sweep.ts

e2e-history: deps tools ## the seeded fault run: HISTORY_ROUNDS (3) rounds of scale, replacement, node loss, upgrade/downgrade rolls, CA change, rollback in place (defrag in the first) with manager kills, in an order from HISTORY_SEED (printed; default random), under traffic the history checker must pass (docs/reliability.md)
	node test/history/fault-run.ts

dev: deps tools ## local cluster + CRDs + manager + examples/etcdcluster.yaml (EXIT_WHEN_READY=1 exits once Available)
	node localcluster/dev.ts
