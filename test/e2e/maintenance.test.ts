/**
 * Maintenance on the local cluster with the manager, as a user meets it. A database churned
 * until fragmented is defragmented once spec.maintenance.defrag.threshold says so: one member
 * at a time, followers first, the leader last after leadership moved, every member giving space
 * back, under a writer and a watcher that lose nothing and recorded traffic the history checker
 * finds linearizable with whole watches (docs/reliability.md). A cluster with a 16Mi quota pushed into
 * NOSPACE recovers without the user (compact, defragment, disarm) and writes work again; filled
 * with live data it says what to do and does not loop, and once the user deletes data and
 * raises the quota it recovers.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest, describeStatus } from './etcd-cluster.ts';
import type { ManagerLine } from '../../localcluster/manager-process.ts';
import { withManager } from './manager-fixture.ts';
import { Traffic } from './traffic.ts';
import { describeVerdict } from '../history/checker.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('maintenance');
const { ns, kube } = env;
const MiB = 2 ** 20;
const VALUE = 'x'.repeat(100_000);
const noSpace = /database space exceeded/;

/** The manager's log lines with this message about this cluster, in the order written. */
const logged = (msg: string, cluster: string): ManagerLine[] =>
  env.manager.lines.filter((l) => l.msg === msg && l.cluster === cluster);

const conditionOf = (c: ClusterUnderTest, type: string) => async () =>
  (await c.get()).status?.conditions?.find((x) => x.type === type);

/** Puts VALUE under key(0), key(1)... until etcd refuses with NOSPACE; returns how many went in. */
async function fill(etcd: Etcd3, key: (i: number) => string): Promise<number> {
  for (let i = 0; ; i++) {
    try {
      await etcd.put(key(i)).value(VALUE);
    } catch (err) {
      if (noSpace.test((err as Error).message)) return i;
      throw err;
    }
  }
}

/** Why the last write refused by `writes` failed, for a wait's message. */
let lastRefusal = '';

/** Whether a write goes through now (within 5 s). */
const writes = async (etcd: Etcd3, key: string): Promise<true | undefined> => {
  try {
    await etcd
      .put(key)
      .value('works')
      .options({ deadline: Date.now() + 5_000 });
    return true;
  } catch (err) {
    lastRefusal = (err as Error).message;
    return undefined;
  }
};

describe.skipIf(!hasNode)('manager: maintenance', () => {
  // Probed every 15 s at rest, as metrics-alerts does: what only etcd says (an alarm, a database
  // over the threshold) is seen within a probe, not up to the default 2 minutes.
  env.hooks({ args: ['--max-probe-interval', '15'] });

  it(
    'defragments a churned database past the threshold: one member at a time, every member gives space back',
    { timeout: 300_000 },
    async () => {
      const frag = new ClusterUnderTest(kube, ns, 'frag');
      await frag.create({ replicas: 3, storage: { size: '512Mi' } });
      await frag.settled(3);
      await frag.write('before', 20);
      const etcd = await frag.client();
      // Churn: ten keys overwritten 40 times (40 MB of history), then compacted away, as
      // auto-compaction or kube-apiserver would: the pages it frees stay allocated until a defrag.
      for (let round = 0; round < 40; round++)
        await Promise.all(Array.from({ length: 10 }, (_, i) => etcd.put(`churn/${i}`).value(VALUE)));
      const revision = (await etcd.maintenance.status()).header.revision;
      await etcd.kv.compact({ revision, physical: true });
      etcd.close();

      const traffic = new Traffic('during', { history: true });
      await traffic.start(kube.core, ns, 'frag');
      const started = Date.now();
      let failure: unknown;
      try {
        // Low enough to fire on every member: each holds about 40 MB of free pages.
        await frag.patchSpec({ maintenance: { defrag: { threshold: { fragmentedBytes: '8Mi' } } } });
        // A run of three small members takes well under a second: polling the Progressing
        // condition would miss it, so the steps are read from the manager's log afterwards.
        await until('the Defragmented condition', conditionOf(frag, 'Defragmented'));
        const steps = env.manager.lines.filter(
          (l) => l.msg === 'step' && l.machine === 'cluster' && String(l.object).endsWith('/frag'),
        );
        expect(
          steps.some((l) => String(l.to).startsWith('defragmenting')),
          'a defragmenting step',
        ).toBe(true);
        await frag.settled(3);
      } catch (err) {
        failure = err;
      }
      const report = await traffic.stop();
      const done = logged('member defragmented', 'frag');
      console.log(
        `defragmentation of 3 members: ${Date.now() - started} ms; ${done.map((l) => `${String(l.member)} ${Math.round(Number(l.freed) / MiB)} MiB in ${String(l.ms)} ms`).join(', ')}; ` +
          `${report.acknowledged} writes, ${report.failed.length} failed, longest write ${report.longestStallMs} ms, ` +
          `${report.unwatched.length} revisions unwatched, ${report.lost.length} keys lost`,
      );
      const history = report.history!;
      console.log(`defragmentation history: ${describeVerdict(history)}`);
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
      expect(report.failed).toEqual([]);
      expect(report.unwatched).toEqual([]);
      expect(report.lost).toEqual([]);
      expect(history.linearizable, describeVerdict(history)).toBe('Ok');
      expect(history.revisionViolations).toEqual([]);
      expect(history.watch.violations).toEqual([]);
      expect(history.checked).toBeGreaterThan(20);

      // Every member, each once, each giving back more than the threshold.
      expect(done.map((l) => l.member).sort()).toEqual(['frag-0', 'frag-1', 'frag-2']);
      for (const l of done) expect(Number(l.freed), String(l.member)).toBeGreaterThan(8 * MiB);
      // One at a time: each began after the one before had finished.
      for (let i = 1; i < done.length; i++)
        expect(Number(done[i]!.time) - Number(done[i]!.ms), `${String(done[i]!.member)} began`).toBeGreaterThanOrEqual(
          Number(done[i - 1]!.time),
        );
      // Which member led when, and the leadership moves, are the machine's (the follower order and
      // the leader last are tables in test/machines/cluster-maintenance.test.ts): under a loaded
      // shared cluster the run may begin before the followers' sizes show the compaction.
      const condition = await conditionOf(frag, 'Defragmented')();
      expect(condition).toMatchObject({ status: 'True', reason: 'Completed' });
      expect(condition?.message).toMatch(/^freed \d+(\.\d)? MiB on 3 members \(/);
      await frag.verify(3);
      expect(await frag.readBack('before', 20)).toBe(20);
    },
  );

  it(
    'a 16Mi quota pushed into NOSPACE: shown at the next probe naming the quota, recovered without the user, writes work again',
    { timeout: 300_000 },
    async () => {
      const full = new ClusterUnderTest(kube, ns, 'full');
      // The quota must stay under the volume (a CEL rule): 16Mi of a 64Mi volume.
      await full.create({ replicas: 3, storage: { size: '64Mi' }, options: { quotaBackendBytes: '16Mi' } });
      await full.settled(3);
      await full.write('before', 20);
      const etcd = await full.client();
      try {
        // History fills the quota: ten keys overwritten until etcd refuses every write.
        expect(await fill(etcd, (i) => `fill/${i % 10}`)).toBeGreaterThan(10);
        await expect(etcd.put('refused').value('v')).rejects.toThrow(noSpace);

        // Seen at the next health probe: at most --max-probe-interval (15 s here) after the alarm.
        const alarm = await until(
          'SpaceAlarm True',
          async () => {
            const c = await conditionOf(full, 'SpaceAlarm')();
            return c?.status === 'True' ? c : undefined;
          },
          60_000,
        );
        expect(alarm).toMatchObject({ reason: 'NoSpace' });
        expect(alarm.message).toContain('the database reached its quota of 16 MiB (spec.options.quotaBackendBytes)');
        // The Event is written after the step's status, so it may trail the condition a little.
        const recovering = await until(
          'a RecoveringSpace Event',
          async () =>
            (
              await kube.core.listNamespacedEvent({
                namespace: ns,
                fieldSelector: 'involvedObject.name=full,involvedObject.kind=EtcdCluster',
              })
            ).items.find((e) => e.reason === 'RecoveringSpace'),
          30_000,
        );
        expect(recovering).toMatchObject({
          type: 'Warning',
          message: expect.stringContaining('quota of 16 MiB') as string,
        });

        let standing = '';
        await until(
          () => `writes work again (last refusal: ${lastRefusal}; the cluster: ${standing})`,
          async () => {
            standing = describeStatus(await full.get());
            return writes(etcd, 'after');
          },
          180_000,
        );
        expect(await etcd.get('after').string()).toBe('works');
        const disarmed = await until('SpaceAlarm False', async () => {
          const c = await conditionOf(full, 'SpaceAlarm')();
          return c?.status === 'False' ? c : undefined;
        });
        expect(disarmed.message).toMatch(
          /^the NOSPACE alarm was disarmed at .* defragmenting 3 members: .* in use of the 16 MiB quota$/,
        );
        expect(
          logged('member defragmented', 'full')
            .map((l) => l.member)
            .sort(),
        ).toEqual(['full-0', 'full-1', 'full-2']);
        await full.settled(3);
        expect(await full.readBack('before', 20)).toBe(20);
      } finally {
        etcd.close();
      }
    },
  );

  it(
    'live data filling the quota: says what to do and does not loop; once data is deleted and the quota raised, it recovers',
    { timeout: 300_000 },
    async () => {
      const full = new ClusterUnderTest(kube, ns, 'full');
      const etcd = await full.client();
      try {
        await fill(etcd, (i) => `live/${i}`);
        const stuck = await until('the OutOfSpace step', async () => {
          const p = await conditionOf(full, 'Progressing')();
          return p?.reason === 'OutOfSpace' ? p : undefined;
        });
        expect(stuck.message).toContain('the operator cannot free enough');
        expect(stuck.message).toContain('Raise spec.options.quotaBackendBytes');
        expect(stuck.message).toContain('delete data');
        expect((await conditionOf(full, 'Degraded')())?.reason).toBe('NoSpace');
        // It does not loop: no compaction or defragmentation while it waits.
        const compactions = logged('history compacted', 'full').length;
        const defrags = logged('member defragmented', 'full').length;
        await new Promise((r) => setTimeout(r, 30_000));
        expect(logged('history compacted', 'full').length).toBe(compactions);
        expect(logged('member defragmented', 'full').length).toBe(defrags);
        await expect(etcd.put('refused').value('v')).rejects.toThrow(noSpace);

        // What the message says: deletes go through while the alarm is raised; a new quota is tried at once.
        await etcd.delete().prefix('live/');
        await full.patchSpec({ options: { quotaBackendBytes: '32Mi' } });
        await until('writes work again', () => writes(etcd, 'after-delete'), 180_000);
        await full.settled(3);
        expect(await full.readBack('before', 20)).toBe(20);
      } finally {
        etcd.close();
      }
    },
  );
});
