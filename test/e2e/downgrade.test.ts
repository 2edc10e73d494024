/**
 * One-minor downgrades on the local cluster with the manager, as a user does them: set
 * spec.version one minor down and watch. 3.6.16 -> 3.5.35 of three members under recorded traffic
 * the history checker finds linearizable with whole watches; what etcd refuses and what the API
 * server refuses is said; back up to 3.6.16 (etcd's downgrade cancelled, the cluster version up
 * again), then 3.7.3 -> 3.6.16 likewise.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { eventReasons } from './kube.ts';
import { withManager } from './manager-fixture.ts';
import { Traffic, trafficProblems } from './traffic.ts';
import { describeVerdict } from '../history/checker.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('downgrade');
const { ns, kube } = env;
const KEYS = 50;
let demo: ClusterUnderTest;

/** What each member's /version says: its binary, the cluster version, its storage version (3.6+). */
async function memberVersions(): Promise<{ etcdserver: string; etcdcluster: string; storage?: string }[]> {
  const ips = [...(await demo.podIPs()).values()];
  return Promise.all(
    ips.map(
      async (ip) =>
        (await (await fetch(`http://${ip}:2379/version`)).json()) as {
          etcdserver: string;
          etcdcluster: string;
          storage?: string;
        },
    ),
  );
}

/** Every member answers with `server` and the cluster version is its minor (and the storage version, where reported). */
async function allAt(server: string): Promise<void> {
  const minor = `${server.split('.').slice(0, 2).join('.')}.0`;
  await until(
    `every member on ${server}, cluster version ${minor}`,
    async () => {
      const all = await memberVersions().catch(() => []);
      return all.length === 3 &&
        all.every((v) => v.etcdserver === server && v.etcdcluster === minor && (v.storage ?? minor) === minor)
        ? all
        : undefined;
    },
    120_000,
  );
}

/**
 * Rolls demo from `from` to `to` under a writer, a watcher and recorded traffic, then checks what
 * a user would: the step said, nothing failed or lost, the history linearizable with whole watches,
 * the same member IDs, every key read back, Upgraded True on the version.
 */
async function rollUnderTraffic(from: string, to: string, words: RegExp, step: string): Promise<void> {
  const before = await demo.verify(3);
  // Keys of its own per roll: the checker takes every key as unwritten when a recording starts.
  const traffic = new Traffic(`during-${from}-to-${to}`, { history: true });
  await traffic.start(kube.core, ns, 'demo');
  const started = Date.now();
  let failure: unknown;
  let seen = { message: '', reason: '', step: '' };
  try {
    await demo.patchSpec({ version: to });
    seen = await until('the roll said', async () => {
      const status = (await demo.get()).status;
      const p = status?.conditions?.find((c) => c.type === 'Progressing');
      return p && words.test(p.message)
        ? { message: p.message, reason: p.reason, step: status?.observed?.step ?? '' }
        : undefined;
    });
    await allAt(to);
    await demo.settled(3);
  } catch (err) {
    failure = err;
  }
  const ms = Date.now() - started;
  const report = await traffic.stop();
  const history = report.history!;
  console.log(
    `roll ${from} -> ${to} of 3 members: ${ms} ms; ${report.acknowledged} writes, ${report.failed.length} failed, ` +
      `longest write ${report.longestStallMs} ms; history: ${describeVerdict(history)}`,
  );
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
  expect(seen.message).toMatch(words);
  // The Step column and Progressing's reason say which way the roll goes.
  expect(seen).toMatchObject({ reason: step, step });
  expect(report.failed).toEqual([]);
  expect(trafficProblems(report)).toEqual([]);
  expect(history.checked).toBeGreaterThan(100);
  expect(history.watch.events).toBeGreaterThan(100);
  const after = await demo.verify(3);
  expect(after.clusterID).toBe(before.clusterID);
  expect([...after.members.entries()]).toEqual([...before.members.entries()]);
  expect(await demo.readBack('before', KEYS)).toBe(KEYS);
  const status = (await demo.get()).status;
  expect(status?.version).toBe(to);
  expect(status?.conditions?.find((c) => c.type === 'Upgraded')).toMatchObject({
    status: 'True',
    message: `every member runs etcd ${to}`,
  });
}

describe.skipIf(!hasNode)('manager: one-minor downgrades through etcd downgrade', () => {
  env.hooks();
  beforeAll(async () => {
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await demo.create({ replicas: 3, version: '3.6.16', progressDeadlineSeconds: 120 });
    await demo.settled(3);
    await demo.write('before', KEYS);
  });

  it('refuses, saying why, two minors down, an older patch, a 3.5 patch unfit to run beside 3.6, and 3.4', async () => {
    await expect(demo.patchSpec({ version: '3.6.15' })).rejects.toThrow(
      /spec.version cannot go to an older patch of the same minor/,
    );
    await expect(demo.patchSpec({ version: '3.5.31' })).rejects.toThrow(/downgrade to 3.5.32 or later/);
    await expect(demo.patchSpec({ version: '3.4.37' })).rejects.toThrow(/etcd 3.4 is not run by this operator/);
    expect((await demo.get()).spec.version).toBe('3.6.16');
  });

  it('3.6.16 -> 3.5.35: etcd downgrade enabled first, then one member at a time under traffic; nothing failed, lost or out of order', async () => {
    const mark = env.manager.lines.length;
    await rollUnderTraffic(
      '3.6.16',
      '3.5.35',
      /^downgrading demo-\d \([123] of 3\) from 3\.6\.16 to 3\.5\.35/,
      'Downgrading',
    );
    // etcd's downgrade asked (and, after a failed try, asked again) before any member was set.
    const steps = env.manager.lines
      .slice(mark)
      .filter((l) => l.msg === 'step' && l.machine === 'cluster')
      .map((l) => ((l.intents as string[] | undefined) ?? []).join());
    const asked = steps.flatMap((s, i) => (s.includes('enableDowngrade') ? [i] : []));
    const firstSet = steps.findIndex((s) => s.includes('setMemberVersion'));
    expect(asked.length).toBeGreaterThan(0);
    expect(firstSet).toBeGreaterThan(asked.at(-1)!);
    console.log(`enableDowngrade asked ${asked.length} time(s) before the first member was set`);
    // Each member restarted onto the older version said so in its own Events too, never Upgrading.
    const memberSteps = await eventReasons(kube.core, ns, 'EtcdMember');
    expect(memberSteps.has('Downgrading'), [...memberSteps].join(', ')).toBe(true);
    expect(memberSteps.has('Upgrading'), [...memberSteps].join(', ')).toBe(false);
  });

  it('3.5.35 -> 3.6.16 again: the downgrade cancelled first, the cluster version back at 3.6', async () => {
    await rollUnderTraffic(
      '3.5.35',
      '3.6.16',
      /^upgrading demo-\d \([123] of 3\) from 3\.5\.35 to 3\.6\.16/,
      'Upgrading',
    );
    await allAt('3.6.16');
  });

  it('3.7.3 -> 3.6.16 likewise, after 3.6.16 -> 3.7.3', async () => {
    await demo.patchSpec({ version: '3.7.3' });
    await allAt('3.7.3');
    await demo.settled(3);
    await expect(demo.patchSpec({ version: '3.5.35' })).rejects.toThrow(
      /spec.version can move down one minor version at a time/,
    );
    await rollUnderTraffic(
      '3.7.3',
      '3.6.16',
      /^downgrading demo-\d \([123] of 3\) from 3\.7\.3 to 3\.6\.16/,
      'Downgrading',
    );
  });
});
