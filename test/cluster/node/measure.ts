/**
 * Measures the time from Pod create to Ready for etcd Pods on the process node, with a new
 * claim and with an emptyDir, and prints JSON. A benchmark, not a test:
 *
 *   node test/cluster/node/measure.ts [runs]      (root; LOCALCLUSTER_KUBECONFIG to reuse a cluster)
 *
 * Without LOCALCLUSTER_KUBECONFIG it starts a local cluster in a temp dir and stops it after.
 * Pods carry no nodeName, so the time includes binding by the node.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startLocalCluster, type LocalCluster } from '../index.ts';
import { createNamespace, deleteNamespace, etcdPod, isReady, podGone, podWhen } from './testing.ts';

/** min / median / max of the samples, in ms. */
function summary(samples: number[]): {
  runs: number;
  minMs: number;
  medianMs: number;
  maxMs: number;
  samplesMs: number[];
} {
  const s = [...samples].sort((a, b) => a - b);
  return {
    runs: s.length,
    minMs: s[0] ?? 0,
    medianMs: s[Math.floor(s.length / 2)] ?? 0,
    maxMs: s[s.length - 1] ?? 0,
    samplesMs: samples,
  };
}

const runs = Number(process.argv[2] ?? 5);
let cluster: LocalCluster | undefined;
let dir: string | undefined;
let kubeconfig = process.env.LOCALCLUSTER_KUBECONFIG;
if (!kubeconfig) {
  dir = mkdtempSync(join(os.tmpdir(), 'node-measure-'));
  cluster = await startLocalCluster({ dir });
  kubeconfig = cluster.kubeconfigPath;
}
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const ns = `node-measure-${process.pid}`;
await createNamespace(core, ns);
const withClaim: number[] = [];
const emptyDir: number[] = [];
try {
  for (let i = 0; i < runs; i++) {
    for (const claim of [true, false]) {
      const name = `etcd-${claim ? 'pvc' : 'tmp'}-${i}`;
      const started = performance.now();
      if (claim) {
        const pvc = {
          metadata: { name },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        };
        await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc });
      }
      await core.createNamespacedPod({ namespace: ns, body: etcdPod({ name, ...(claim ? { claim: name } : {}) }) });
      await podWhen(core, ns, name, isReady);
      (claim ? withClaim : emptyDir).push(Math.round(performance.now() - started));
      await core.deleteNamespacedPod({ name, namespace: ns });
      await podGone(core, ns, name);
    }
  }
  const result = {
    what: 'etcd 3.6.16 Pod: create -> Ready (readiness httpGet /readyz, period 1s)',
    withNewClaim: summary(withClaim),
    emptyDir: summary(emptyDir),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await deleteNamespace(core, ns);
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
