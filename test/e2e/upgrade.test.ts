/**
 * Rolling upgrades on the local cluster with the manager, as a user does them: edit
 * spec.version and watch. 3.5.35 -> 3.6.16, then 3.6.16 -> 3.7.3, each under a writer and a
 * watcher (no failed write, every revision watched, every key read back) and recorded traffic
 * the history checker finds linearizable with whole watches (docs/reliability.md), a snapshot
 * to a PVC taken first; a version no member can start holds the roll at its first member with the others
 * serving, and going back to status.version undoes it. A snapshot taken on 3.7 is refused by a
 * new 3.6 cluster before any member starts.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { Traffic } from './traffic.ts';
import { describeVerdict } from '../history/checker.ts';
import { createSnapshot, snapshotFinished } from './s3-server.ts';
import { binary, run } from '../../localcluster/controlplane/tools.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('upgrade');
const { ns, kube } = env;
const KEYS = 50;
let demo: ClusterUnderTest;

/** Member name -> the version its EtcdMember asks for, and -> the version status reports it answers with. */
async function versions(): Promise<{ spec: Record<string, string>; answering: Record<string, string> }> {
  const members = await demo.members();
  const status = (await demo.get()).status;
  return {
    spec: Object.fromEntries(members.map((m) => [m.metadata.name ?? '', m.spec.version])),
    answering: Object.fromEntries((status?.members ?? []).map((m) => [m.name, m.version ?? ''])),
  };
}

const condition = (type: string) => async () => (await demo.get()).status?.conditions?.find((c) => c.type === type);

/**
 * Rolls demo from `from` to `to` under a writer and a watcher, then checks what a user would:
 * progress shown while it runs, no write failed, every revision watched, every key read back,
 * the same cluster and member IDs, the leader set last, the snapshot taken first on `from`.
 */
async function rollUnderTraffic(from: string, to: string): Promise<void> {
  const before = await demo.verify(3);
  const etcd = await demo.client();
  const leaderID = (await etcd.maintenance.status()).leader;
  etcd.close();
  const mark = env.manager.lines.length;
  const traffic = new Traffic(`during-${to}`, { history: true });
  await traffic.start(kube.core, ns, 'demo');
  const started = Date.now();
  let failure: unknown;
  try {
    await demo.patchSpec({ version: to });
    // Progress is visible while it runs: which member, its place in the roll, the target.
    const progressing = await until('an upgrading step past its snapshot', async () => {
      const p = await condition('Progressing')();
      return p?.reason === 'Upgrading' && p.message.startsWith('upgrading demo-') ? p : undefined;
    });
    expect(progressing.message).toMatch(
      new RegExp(
        `^upgrading demo-\\d \\([123] of 3\\) from ${from.replaceAll('.', '\\.')} to ${to.replaceAll('.', '\\.')}: `,
      ),
    );
    await until(`every member on ${to}`, async () => {
      const v = await versions();
      return Object.values(v.answering).every((x) => x === to) && Object.values(v.spec).every((x) => x === to)
        ? v
        : undefined;
    });
    await demo.settled(3);
  } catch (err) {
    failure = err;
  }
  const report = await traffic.stop();
  console.log(
    `upgrade ${from} -> ${to} of 3 members, snapshot first: ${Date.now() - started} ms; ${report.acknowledged} writes, ` +
      `${report.failed.length} failed, longest write ${report.longestStallMs} ms, ` +
      `${report.unwatched.length} revisions unwatched, ${report.lost.length} keys lost, ${report.watchErrors} watch errors`,
  );
  const history = report.history!;
  console.log(`upgrade ${from} -> ${to} history: ${describeVerdict(history)}`);
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
  expect(report.failed).toEqual([]);
  expect(report.unwatched).toEqual([]);
  expect(report.lost).toEqual([]);
  expect(report.acknowledged).toBeGreaterThan(20);
  expect(history.linearizable, describeVerdict(history)).toBe('Ok');
  expect(history.revisionViolations, describeVerdict(history)).toEqual([]);
  expect(history.watch.violations, describeVerdict(history)).toEqual([]);
  expect(history.checked).toBeGreaterThan(100);
  // Same cluster, same members, same IDs: restarted in place, not replaced.
  const after = await demo.verify(3);
  expect(after.clusterID).toBe(before.clusterID);
  expect([...after.members.entries()]).toEqual([...before.members.entries()]);
  expect(await demo.readBack('before', KEYS)).toBe(KEYS);
  // Followers first: the member that led when the roll began was set last.
  const lines = env.manager.lines.slice(mark);
  const order = lines.filter(
    (l) => l.msg === 'step' && l.machine === 'cluster' && String(l.to).startsWith('upgrading.settingVersion'),
  );
  expect(order).toHaveLength(3);
  const leaderName = [...before.members.entries()].find(([, id]) => BigInt(`0x${id}`) === BigInt(leaderID))?.[0];
  const lastSet = lines.filter((l) => l.msg === 'member set to a new etcd version' && String(l.version) === to);
  expect(lastSet.map((l) => l.member)).toHaveLength(3);
  expect(lastSet.at(-1)?.member).toBe(leaderName);
  // The snapshot came first: taken from a member still on `from`, finished before any member was set.
  const snapshot = (await kube.custom.getNamespacedCustomObject({
    group: 'etcd-operator.dev',
    version: 'v1alpha1',
    namespace: ns,
    plural: 'etcdsnapshots',
    name: `demo-pre-v${to.replaceAll('.', '-')}`,
  })) as EtcdSnapshot;
  expect(snapshot.status).toMatchObject({ phase: 'Succeeded', etcdVersion: from });
  expect(snapshot.metadata.ownerReferences ?? []).toEqual([]);
  const snapshotDone = Date.parse(snapshot.status?.completionTime ?? '');
  expect(
    lastSet.every((l) => Number(l.time) >= snapshotDone),
    'members set after the snapshot',
  ).toBe(true);
  const status = (await demo.get()).status;
  expect(status?.version).toBe(to);
  expect(status?.conditions?.find((c) => c.type === 'Upgraded')).toMatchObject({
    status: 'True',
    message: `every member runs etcd ${to}`,
  });
}

describe.skipIf(!hasNode)('manager: rolling version upgrades', () => {
  env.hooks();
  beforeAll(async () => {
    await kube.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'backups' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
      },
    });
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await demo.create({
      replicas: 3,
      version: '3.5.35',
      progressDeadlineSeconds: 30,
      upgrade: { snapshot: { destination: { pvc: { claimName: 'backups' } } } },
    });
    await demo.settled(3);
    await demo.write('before', KEYS);
  });

  it('3.5.35 -> 3.6.16 one member at a time, leader last, under a writer and a watcher: nothing failed or lost', async () => {
    await rollUnderTraffic('3.5.35', '3.6.16');
  });

  it('a version no member can start holds the roll at its first member, the others serving; going back undoes it', async () => {
    await demo.patchSpec({ version: '3.6.99' });
    const stuck = await until(
      'the roll past its deadline',
      async () => {
        const d = await condition('Degraded')();
        return d?.status === 'True' && d.reason === 'ProgressDeadlineExceeded' ? d : undefined;
      },
      120_000,
    );
    expect(stuck.message).toMatch(/upgrading demo-\d \(1 of 3\) from 3\.6\.16 to 3\.6\.99/);
    const v = await versions();
    const held = Object.entries(v.spec).filter(([, x]) => x === '3.6.99');
    expect(held, 'members set to 3.6.99').toHaveLength(1);
    const heldName = held[0]![0];
    // The other two serve: writes go through.
    await demo.write('while-stuck', 10);
    expect(await demo.readBack('while-stuck', 10)).toBe(10);
    expect((await demo.get()).status?.version).toBe('3.6.16');

    // Back to the version every member still runs: allowed, and the held member comes back on it.
    await demo.patchSpec({ version: '3.6.16' });
    await until(
      `${heldName} back on 3.6.16`,
      async () => ((await versions()).spec[heldName] === '3.6.16' ? true : undefined),
      120_000,
    );
    await demo.settled(3);
    await demo.verify(3);
    expect(await demo.readBack('before', KEYS)).toBe(KEYS);
  });

  it('an older patch once every member runs the new version is refused by the API server, saying why', async () => {
    await expect(demo.patchSpec({ version: '3.6.15' })).rejects.toThrow(
      /spec.version cannot go to an older patch of the same minor/,
    );
  });

  it('3.6.16 -> 3.7.3 one member at a time, leader last, under a writer and a watcher: nothing failed or lost', async () => {
    await rollUnderTraffic('3.6.16', '3.7.3');
  });

  it('a snapshot taken on 3.7.3 is refused by a new 3.6.16 cluster before any member starts, saying why', async () => {
    // etcd moves its storage version to 3.7 a few seconds after the cluster version: wait for it.
    const etcdctl = await binary('etcdctl', '3.7.3');
    const endpoints = [...(await demo.podIPs()).values()].map((ip) => `http://${ip}:2379`).join(',');
    await until('storage version 3.7.0 on every member', async () => {
      const out = await run(etcdctl, ['--endpoints', endpoints, 'endpoint', 'status', '-w', 'json']);
      const all = JSON.parse(out) as { Status: { storageVersion?: string } }[];
      return all.length === 3 && all.every((m) => m.Status.storageVersion === '3.7.0') ? true : undefined;
    });
    await createSnapshot(kube, ns, 'on-3-7', { cluster: 'demo', destination: { pvc: { claimName: 'backups' } } });
    const taken = await snapshotFinished(kube, ns, 'on-3-7');
    expect(taken.status).toMatchObject({ phase: 'Succeeded', etcdVersion: '3.7.3' });

    const back = new ClusterUnderTest(kube, ns, 'back');
    await back.create({ replicas: 1, version: '3.6.16', bootstrap: { restore: { snapshotName: 'on-3-7' } } });
    const refused = await until('back refused', async () => {
      const c = await back.get();
      return c.status?.conditions?.find(
        (x) => x.type === 'Degraded' && x.status === 'True' && x.reason === 'StepFailed',
      );
    });
    expect(refused.message).toContain(`the snapshot at ${taken.status?.location ?? ''} failed its check`);
    expect(refused.message).toContain(
      'the snapshot holds data of storage version 3.7.0 (written by etcd 3.7), newer than etcd 3.6.16 can run',
    );
    expect(await back.members()).toEqual([]);
    await back.delete();
  });
});
