/**
 * `helm install` of the chart with watchNamespace, as a user who gives the operator one namespace
 * does it: the manager runs on a Role there alone, makes clusters in it, and a deletion of that
 * namespace with clusters in it finishes. Its manager watches one namespace of its own, so the
 * file runs beside the others (the chart's cluster-wide install is chart-install.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { untilGone, until } from '../../localcluster/until.ts';
import { clientsOf } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { canIAs, installRelease, podsOf, uninstallRelease } from './chart-release.ts';
import { kubectl } from './kube.ts';
import { isReady } from './pods.ts';

const hasNode = inject('clusterHasNode');
const releaseNs = `chart-ns-e2e-${process.pid}-home`;
const watched = `chart-ns-e2e-${process.pid}-watched`;
const name = `etcd-operator-ns-${process.pid}`;
let home: string;

describe('chart: helm install with watchNamespace', () => {
  beforeAll(async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'chart-ns-e2e-'));
    await kubectl(['create', 'namespace', watched], { check: true });
    await installRelease(home, name, releaseNs, `watchNamespace=${watched}`);
  });
  afterAll(async () => {
    await uninstallRelease(home, name, releaseNs);
    await kubectl(['delete', 'namespace', releaseNs, watched, '--ignore-not-found', '--wait=false']);
    rmSync(home, { recursive: true, force: true });
  });

  it.runIf(hasNode)('the manager becomes Ready on a Role in the watched namespace alone', async () => {
    const user = `system:serviceaccount:${releaseNs}:${name}`;
    expect(await canIAs(user, ['watch', 'etcdclusters.etcd-operator.dev'], watched)).toBe('yes');
    expect(await canIAs(user, ['create', 'pods'], watched)).toBe('yes');
    expect(await canIAs(user, ['create', 'pods'], 'elsewhere')).toBe('no');
    expect(await canIAs(user, ['list', 'secrets'], watched)).toBe('no');
    expect(await canIAs(user, ['update', `leases.coordination.k8s.io/${name}`], releaseNs)).toBe('yes');
    const ready = await until(
      `a Ready Pod of ${name}`,
      async () => (await podsOf(releaseNs, name)).find(isReady),
      Infinity,
      500,
    );
    expect(ready.spec.containers[0]!.args).toContain(`--namespace=${watched}`);
  });

  const kube = clientsOf(inject('kubeconfig'));
  const three = new ClusterUnderTest(kube, watched, 'three');
  const one = new ClusterUnderTest(kube, watched, 'one');

  it.runIf(hasNode)(
    'kubectl describe etcdcluster reads as a story: the step to resume from is one shortened annotation line, not a context in the status',
    { timeout: 300_000 },
    async () => {
      await Promise.all([three.create({ replicas: 3 }), one.create({ replicas: 1 })]);
      await Promise.all([three.settled(3), one.settled(1)]);
      const { stdout } = await kubectl(['describe', 'etcdcluster', 'three', '-n', watched], { check: true });
      console.log(`kubectl describe etcdcluster three (${stdout.length} characters):\n${stdout}`);
      expect(stdout).toMatch(/etcd-operator\.dev\/resume:\n\s+\{"sequence":\d+,"state":"steady","intents":\[/);
      expect(stdout).not.toMatch(/^\s+Context:/m);
      const longest = Math.max(...stdout.split('\n').map((l) => l.length));
      expect(longest, 'the longest line').toBeLessThan(400);
    },
  );

  // Issue 25: the Role and RoleBinding go with the namespace, in no order; the release ClusterRole
  // keeps the rights to release the finalizers, so the namespace goes.
  it.runIf(hasNode)(
    'deleting the watched namespace with clusters in it finishes: the EtcdMembers release their finalizers',
    { timeout: 420_000 },
    async () => {
      await Promise.all([three.settled(3), one.settled(1)]);
      const started = performance.now();
      await kube.core.deleteNamespace({ name: watched });
      await untilGone(`namespace ${watched}`, () => kube.core.readNamespace({ name: watched }));
      console.log(`watched namespace ${watched} gone ${Math.round(performance.now() - started)} ms after its deletion`);
      const ready = (await podsOf(releaseNs, name)).find(isReady);
      expect(ready, 'the manager still runs').toBeDefined();
      const logs = await kubectl(['logs', '-n', releaseNs, ready!.metadata.name, '-c', 'manager'], { check: true });
      const forbidden = logs.stdout.split('\n').filter((l) => l.includes('403') && l.includes('etcdmembers'));
      expect(forbidden, 'no EtcdMember write refused for want of rights').toEqual([]);
    },
  );
});
