/**
 * `kubectl delete namespace` with EtcdClusters in it finishes (issue 14, part 1): a namespace
 * holding a 3-member, a 1-member and a dormant cluster goes within 60 s, once with the manager
 * running throughout and once with it stopped as the deletion starts and started again after.
 * Members of a cluster that is going leave without asking etcd, which goes with it.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { untilGone, type clientsOf } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';

const hasNode = inject('clusterHasNode');
const DEADLINE_MS = 60_000;

/** A 3-member, a 1-member and a dormant cluster in the namespace, all settled. */
async function populated(kube: ReturnType<typeof clientsOf>, ns: string): Promise<void> {
  const three = new ClusterUnderTest(kube, ns, 'three');
  const one = new ClusterUnderTest(kube, ns, 'one');
  const parked = new ClusterUnderTest(kube, ns, 'parked');
  await Promise.all([three.create({ replicas: 3 }), one.create({ replicas: 1 }), parked.create({ replicas: 1 })]);
  await Promise.all([three.settled(3), one.settled(1), parked.settled(1)]);
  await parked.scale(0);
  await parked.settled(0);
}

describe.skipIf(!hasNode)('deleting a namespace with EtcdClusters in it', () => {
  // A namespace and a manager each: set up in the test, as deleting the namespace is the test.
  const running = withManager('nsdel-run');
  const stopped = withManager('nsdel-stop');
  const { kube } = running;
  afterAll(async () => {
    await running.tearDown();
    await stopped.tearDown();
  });

  it('finishes within 60 s with the manager running', async () => {
    const { ns } = running;
    await running.setUp();
    await populated(kube, ns);
    const started = performance.now();
    await kube.core.deleteNamespace({ name: ns });
    await untilGone(`namespace ${ns}`, () => kube.core.readNamespace({ name: ns }));
    console.log(`namespace ${ns} gone ${Math.round(performance.now() - started)} ms after its deletion`);
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
  });

  it('finishes within 60 s when the manager was stopped as it began and started after', async () => {
    const { ns } = stopped;
    await stopped.setUp();
    await populated(kube, ns);
    await stopped.manager.stop();
    const started = performance.now();
    await kube.core.deleteNamespace({ name: ns });
    await new Promise((r) => setTimeout(r, 5000));
    await stopped.start();
    await untilGone(`namespace ${ns}`, () => kube.core.readNamespace({ name: ns }));
    console.log(`namespace ${ns} gone ${Math.round(performance.now() - started)} ms after its deletion`);
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
  });
});
