/**
 * Warm start of the local control plane: from the startControlPlane call to kube-apiserver
 * /readyz ok, kube-controller-manager /healthz ok and the chart's CRDs Established (and
 * explainable). One first start makes the certificates and etcd data; the next
 * CONTROLPLANE_BENCH_RUNS (default 5) restart on the same dir, as a second `make cluster` does.
 * Run: node test/bench/controlplane-start.ts   → prints each run, writes test/bench/results/controlplane-start.json
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startControlPlane } from '../../localcluster/controlplane/index.ts';
import { installCrds } from '../../localcluster/crds.ts';

/** Figures of one start, in milliseconds. */
export interface StartRun {
  readonly warm: boolean;
  /** startControlPlane call -> /readyz ok of the API server. */
  readonly apiserverReadyMs: number;
  /** startControlPlane call -> the controller manager healthy (startControlPlane resolved). */
  readonly controlPlaneMs: number;
  /** startControlPlane call -> CRDs Established and served with their schema. */
  readonly crdsEstablishedMs: number;
  readonly steps: Readonly<Record<string, number>>;
}

const runs = Number(process.env.CONTROLPLANE_BENCH_RUNS ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'etcd-operator-bench-'));
const results: StartRun[] = [];
try {
  for (let i = 0; i <= runs; i++) {
    const start = Date.now();
    const cp = await startControlPlane({ dir });
    const controlPlaneMs = Date.now() - start;
    await installCrds(cp.kubectl);
    const crdsEstablishedMs = Date.now() - start;
    await cp.stop();
    const t = cp.timings;
    const apiserverReadyMs = (t.pki ?? 0) + (t.etcd ?? 0) + (t.apiserver ?? 0);
    const run: StartRun = { warm: i > 0, apiserverReadyMs, controlPlaneMs, crdsEstablishedMs, steps: t };
    results.push(run);
    console.log(`${run.warm ? 'warm' : 'first'} start: ${JSON.stringify(run)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const warm = results
  .filter((r) => r.warm)
  .map((r) => r.crdsEstablishedMs)
  .sort((a, b) => a - b);
const median = warm[Math.floor(warm.length / 2)] ?? 0;
console.log(
  `warm start to CRDs Established: median ${median} ms, min ${warm[0]} ms, max ${warm.at(-1)} ms (${cpus().length} cores)`,
);
const out = join(import.meta.dirname, 'results');
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'controlplane-start.json'),
  JSON.stringify({ cores: cpus().length, medianWarmMs: median, runs: results }, null, 2) + '\n',
);
