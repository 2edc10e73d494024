/**
 * `kubectl delete namespace` with EtcdClusters in it finishes (issue 14, part 1): a namespace
 * holding a 3-member, a 1-member and a dormant cluster goes within 60 s, once with the manager
 * running throughout and once with it stopped as the deletion starts and started again after.
 * Members of a cluster that is going leave without asking etcd, which goes with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { clientsOf, createNamespace, untilGone } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { startManager, type ManagerProcess } from './manager-process.ts';

const hasNode = inject('clusterHasNode');
const DEADLINE_MS = 60_000;
const dirs: string[] = [];
const managers: ManagerProcess[] = [];

const manager = async (ns: string, dir: string): Promise<ManagerProcess> => {
  const m = await startManager({ kubeconfig: inject('kubeconfig'), dir, args: ['--namespace', ns] });
  managers.push(m);
  return m;
};

/** A namespace with a 3-member, a 1-member and a dormant cluster, all settled. */
async function populated(kube: ReturnType<typeof clientsOf>, ns: string): Promise<void> {
  await createNamespace(kube.core, ns);
  const three = new ClusterUnderTest(kube, ns, 'three');
  const one = new ClusterUnderTest(kube, ns, 'one');
  const parked = new ClusterUnderTest(kube, ns, 'parked');
  await Promise.all([three.create({ replicas: 3 }), one.create({ replicas: 1 }), parked.create({ replicas: 1 })]);
  await Promise.all([three.settled(3), one.settled(1), parked.settled(1)]);
  await parked.scale(0);
  await parked.settled(0);
}

describe.skipIf(!hasNode)('deleting a namespace with EtcdClusters in it', () => {
  const kube = clientsOf(inject('kubeconfig'));
  afterAll(async () => {
    for (const m of managers) await m.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('finishes within 60 s with the manager running', async () => {
    const ns = `nsdel-run-${Date.now().toString(36)}`;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-operator-nsdel-'));
    dirs.push(dir);
    await manager(ns, dir);
    await populated(kube, ns);
    const started = performance.now();
    await kube.core.deleteNamespace({ name: ns });
    await untilGone(`namespace ${ns}`, () => kube.core.readNamespace({ name: ns }));
    console.log(`namespace ${ns} gone ${Math.round(performance.now() - started)} ms after its deletion`);
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
  });

  it('finishes within 60 s when the manager was stopped as it began and started after', async () => {
    const ns = `nsdel-stop-${Date.now().toString(36)}`;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-operator-nsdel-'));
    dirs.push(dir);
    const m = await manager(ns, dir);
    await populated(kube, ns);
    await m.stop();
    const started = performance.now();
    await kube.core.deleteNamespace({ name: ns });
    await new Promise((r) => setTimeout(r, 5000));
    await manager(ns, dir);
    await untilGone(`namespace ${ns}`, () => kube.core.readNamespace({ name: ns }));
    console.log(`namespace ${ns} gone ${Math.round(performance.now() - started)} ms after its deletion`);
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
  });
});
