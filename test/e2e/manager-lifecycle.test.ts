/**
 * The manager on the local cluster, through the lifecycles a user drives: bootstrap of 3 at once,
 * scale 3 -> 5 -> 3, park at 0 and wake with the same IDs, a deleted Pod brought back as the
 * same member, a wiped member replaced by a new one, a restarted manager, a manager stopped by
 * SIGTERM with clusters in flight, and deletion with nothing left behind. Each check is what etcd
 * itself says, and the keys written first are read back at the end of each step.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { chartDir } from '../charts/helm.ts';
import { wipeVolume } from '../../localcluster/storage/index.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest, type Converged } from './etcd-cluster.ts';
import { describedEvents, type DescribedEvent } from './kube.ts';
import { withManager } from './manager-fixture.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('lifecycle');
const { ns, kube } = env;
const KEYS = 50;
let demo: ClusterUnderTest;
let first: Converged;

/** A healthy bootstrap of 3, step by step, as its Events say it (`Reason: message`). */
const BOOTSTRAP = [
  /^Bootstrapping: creating the headless Service/,
  /^Bootstrapping: creating EtcdMember demo-[012] \([123] of 3\): a new cluster starts with all its members at once/,
  /^Bootstrapping: waiting for a quorum \(2 of 3\) of the initial cluster to start etcd together/,
  /^UpdatingBudget: setting PodDisruptionBudget demo to minAvailable 2 of 3 members/,
  /^Steady: 3 voters/,
];

/** The seconds the chart gives the manager between SIGTERM and SIGKILL (its values.yaml default). */
const GRACE_SECONDS = (
  parse(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8')) as { terminationGracePeriodSeconds: number }
).terminationGracePeriodSeconds;

/** What a manager logs as it stops, in this order, the last line of all last. */
const SHUTDOWN = [
  'stopping',
  'stopping the work: no new steps; waiting for the steps in flight',
  'work stopped: steps in flight finished, watches ended, etcd clients closed',
  'journal closed',
  'stopped',
];

/** `kubectl describe etcdcluster demo`'s Events, once the last one says the cluster is Steady. */
const eventsWhenSteady = (): Promise<DescribedEvent[]> =>
  until('a Steady Event last', async () => {
    const events = await describedEvents('etcdcluster', 'demo', ns);
    return events.at(-1)?.reason === 'Steady' ? events : undefined;
  });

describe.skipIf(!hasNode)('manager: lifecycles on the local cluster', () => {
  env.hooks();
  beforeAll(() => {
    demo = new ClusterUnderTest(kube, ns, 'demo');
  });

  it('bootstraps 3 members at once, with one initial cluster: no learner is added', async () => {
    await demo.create({ replicas: 3 });
    const settled = await demo.settled(3);
    first = await demo.verify(3);
    expect(settled.status?.clusterID).toBe(first.clusterID);
    expect([...first.members.keys()].sort()).toEqual(['demo-0', 'demo-1', 'demo-2']);
    expect(settled.status?.conditions?.find((c) => c.type === 'Bootstrapped')?.status).toBe('True');
    await demo.write('before', KEYS);
    // Every member started with the same initial cluster: none was added or promoted as a learner.
    const added = env.manager.lines
      .filter((l) => l.msg === 'learner added' || l.msg === 'learner promoted')
      .map((l) => `${l.msg} ${String(l.member)}`);
    expect(added).toEqual([]);
    // kubectl describe tells the story in the order of the steps, with no Warning. (Pending comes
    // before, Observing between steps.)
    const events = await eventsWhenSteady();
    expect(events.filter((e) => e.type !== 'Normal')).toEqual([]);
    const told = events
      .filter((e) => e.reason !== 'Observing' && e.reason !== 'Pending')
      .map((e) => `${e.reason}: ${e.message}`);
    const steps = told.map((line) => BOOTSTRAP.findIndex((step) => step.test(line)));
    expect(told.filter((_, i) => steps[i] === -1)).toEqual([]);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(steps).toEqual(expect.arrayContaining([0, 1, 2, BOOTSTRAP.length - 1]));
  });

  it('scales 3 -> 5 -> 3, removing members from etcd before their Pods go', async () => {
    await demo.scale(5);
    await demo.settled(5);
    expect((await demo.verify(5)).members.size).toBe(5);
    expect((await eventsWhenSteady()).filter((e) => e.type !== 'Normal')).toEqual([]);
    await demo.scale(3);
    await demo.settled(3);
    const after = await demo.verify(3);
    // The newest members go; the first three stay with their IDs.
    expect([...after.members.entries()].sort()).toEqual([...first.members.entries()].sort());
    expect(await demo.readBack('before', KEYS)).toBe(KEYS);
  });

  it('parks at 0 (Pods gone, volumes kept) and wakes as the same cluster with the same member IDs', async () => {
    await demo.scale(0);
    const parked = await demo.settled(0);
    expect(parked.status?.conditions?.find((c) => c.type === 'Dormant')?.status).toBe('True');
    expect(parked.status?.conditions?.find((c) => c.type === 'Available')).toMatchObject({
      status: 'False',
      reason: 'Dormant',
      message: 'scaled to zero on purpose: no member runs; volumes are kept; scale up to resume',
    });
    const pods = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'etcd-operator.dev/cluster=demo' });
    expect(pods.items).toHaveLength(0);
    const claims = await kube.core.listNamespacedPersistentVolumeClaim({
      namespace: ns,
      labelSelector: 'etcd-operator.dev/cluster=demo',
    });
    expect(claims.items).toHaveLength(3);
    await demo.scale(3);
    await demo.settled(3);
    const woken = await demo.verify(3);
    expect(woken.clusterID).toBe(first.clusterID);
    expect([...woken.members.entries()].sort()).toEqual([...first.members.entries()].sort());
    expect(await demo.readBack('before', KEYS)).toBe(KEYS);
  });

  it('brings a deleted Pod back as the same member, from its volume', async () => {
    const old = await kube.core.readNamespacedPod({ name: 'demo-1', namespace: ns });
    await kube.core.deleteNamespacedPod({ name: 'demo-1', namespace: ns });
    await until('a new demo-1 Pod', async () => {
      const pod = await kube.core.readNamespacedPod({ name: 'demo-1', namespace: ns });
      return pod.metadata?.uid !== old.metadata?.uid &&
        pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        ? pod
        : undefined;
    });
    await demo.settled(3);
    expect((await demo.verify(3)).members.get('demo-1')).toBe(first.members.get('demo-1'));
  });

  it('replaces a member whose volume was wiped with a new member, and the old one leaves etcd', async () => {
    await wipeVolume(inject('kubeconfig'), ns, 'data-demo-2');
    await kube.core.deleteNamespacedPod({ name: 'demo-2', namespace: ns });
    const replaced = await demo.replaced('demo-2', 3);
    expect(replaced).toEqual(['demo-0', 'demo-1', 'demo-5']);
    await demo.settled(3);
    const after = await demo.verify(3);
    expect([...after.members.values()]).not.toContain(first.members.get('demo-2'));
    expect(after.members.get('demo-0')).toBe(first.members.get('demo-0'));
    expect(await demo.readBack('before', KEYS)).toBe(KEYS);
    const c = await demo.get();
    expect(c.status?.conditions?.find((x) => x.type === 'MemberReplaced')?.status).toBe('True');
  });

  it('a restarted manager resumes from its journal and changes nothing that is settled', async () => {
    const before = await demo.verify(3);
    await env.manager.stop();
    await env.start();
    await demo.scale(4);
    await demo.settled(4);
    const after = await demo.verify(4);
    for (const [name, id] of before.members) expect(after.members.get(name)).toBe(id);
  });

  it('a manager that lost its journal adopts the running cluster: no seed, no name reused, same IDs', async () => {
    const before = await demo.verify(4);
    await env.manager.stop();
    env.loseJournal();
    await env.start();
    await demo.scale(3);
    await demo.settled(3);
    const after = await demo.verify(3);
    expect(after.clusterID).toBe(before.clusterID);
    for (const [name, id] of after.members) expect(before.members.get(name)).toBe(id);
    expect(
      env.manager.lines.some(
        (l) => l.msg === 'step' && Array.isArray(l.intents) && (l.intents as string[]).includes('ensureServices'),
      ),
    ).toBe(false);
  });

  it("SIGTERM with two clusters bootstrapping: the manager closes its journal and exits 0 within the chart's grace period; the next one finishes both", async () => {
    const inflight = ['sigterm-a', 'sigterm-b'].map((name) => new ClusterUnderTest(kube, ns, name));
    for (const c of inflight) await c.create({ replicas: 3 });
    // In flight: every member of one of them created, its start waiting for a quorum to answer
    // (etcd is being called), neither done.
    await until('a cluster starting, its members created', () =>
      Promise.resolve(
        env.manager.lines.some(
          (l) =>
            l.msg === 'step' &&
            l.machine === 'cluster' &&
            String(l.object).startsWith(`${ns}/sigterm-`) &&
            String(l.to).includes('awaitingQuorum'),
        ) || undefined,
      ),
    );
    const stopping = env.manager;
    const sent = performance.now();
    const exit = await Promise.race([
      stopping.stop(),
      new Promise((r) => setTimeout(r, GRACE_SECONDS * 1000, `still running after ${GRACE_SECONDS} s`)),
    ]);
    console.log(`SIGTERM -> exit ${String(exit)}: ${Math.round(performance.now() - sent)} ms`);
    // Past the grace period the kubelet would have sent SIGKILL: so does the test, before failing.
    if (exit !== 0) await stopping.kill();
    expect(exit).toBe(0);
    const told = stopping.lines.map((l) => l.msg);
    expect(told.filter((m) => SHUTDOWN.includes(m))).toEqual(SHUTDOWN);
    expect(told.at(-1)).toBe('stopped');
    // The journal reads back whole, as a user reads it (its pages checked, the schema known).
    const journal = await promisify(execFile)(process.execPath, [
      path.join(import.meta.dirname, '..', '..', 'manager', 'cli.ts'),
      'journal',
      'sigterm-a',
      '-n',
      ns,
      '--db',
      path.join(env.dir, 'journal.db'),
    ]);
    expect(journal.stdout).toMatch(new RegExp(`^# EtcdCluster ${ns}/sigterm-a \\(uid `, 'm'));
    // The next manager resumes both from that journal and finishes them.
    await env.start();
    for (const c of inflight) {
      await c.settled(3);
      expect((await c.verify(3)).members.size).toBe(3);
    }
    for (const c of inflight) await c.delete();
  });

  it('deleting the cluster removes its members, Pods, volumes and Services: no finalizer is left behind', async () => {
    await demo.delete();
    await until('everything of demo gone', async () => {
      const [members, pods, claims, services] = await Promise.all([
        demo.members(),
        kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'etcd-operator.dev/cluster=demo' }),
        kube.core.listNamespacedPersistentVolumeClaim({
          namespace: ns,
          labelSelector: 'etcd-operator.dev/cluster=demo',
        }),
        kube.core.listNamespacedService({ namespace: ns, labelSelector: 'etcd-operator.dev/cluster=demo' }),
      ]);
      const left = members.length + pods.items.length + claims.items.length + services.items.length;
      const gone = await demo.get().then(
        () => false,
        () => true,
      );
      return left === 0 && gone ? true : undefined;
    });
  });
});
