/**
 * Zero failed writes while a minority is disrupted: a writer and a watcher (real etcd clients
 * through the client Service, test/e2e/traffic.ts) run while one thing at a time goes wrong
 * under a 3-member cluster, and the operator brings it back. After each: no write failed for
 * the client (a write retried within its 10 s budget counts only if it never succeeded), the
 * watch saw every acknowledged revision, every acknowledged key reads back, and recorded traffic
 * of three clients and two watchers is linearizable with whole watches (the history checker,
 * docs/reliability.md); the longest write and the operations and events checked are printed per
 * disruption.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startIsolator, type Isolator } from '../../localcluster/network/index.ts';
import { wipeVolume } from '../../localcluster/storage/index.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';
import { Traffic, type TrafficReport } from './traffic.ts';
import { describeVerdict } from '../history/checker.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('disrupt');
const { ns, kube } = env;
let isolator: Isolator;
let demo: ClusterUnderTest;
const stalls: string[] = [];

/** Runs `disrupt` under traffic, waits until the cluster is settled at `replicas`, and checks what the traffic saw. */
async function underTraffic(name: string, replicas: number, disrupt: () => Promise<void>): Promise<TrafficReport> {
  const traffic = new Traffic(name.replaceAll(' ', '-'), { history: true });
  await traffic.start(kube.core, ns, 'demo');
  let failure: unknown;
  try {
    // Writes before, during and after: with the disruption over in a few seconds (a killed etcd
    // restarted by its node), traffic started just before had once only 18 calls to check.
    await traffic.flowing(10);
    await disrupt();
    await demo.settled(replicas);
    await demo.verify(replicas);
  } catch (err) {
    failure = err;
  }
  const report = await traffic.stop();
  const line =
    `${name}: ${report.acknowledged} writes, ${report.failed.length} failed, ` +
    `longest write ${report.longestStallMs} ms (${report.longestAttempts.join('; ')}), ` +
    `${report.unwatched.length} unwatched, ${report.lost.length} lost`;
  const history = report.history!;
  stalls.push(`${line}; history: ${describeVerdict(history)}`);
  console.log(`disruption ${line}; history: ${describeVerdict(history)}`);
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
  expect(report.failed, name).toEqual([]);
  expect(report.unwatched, name).toEqual([]);
  expect(report.lost, name).toEqual([]);
  expect(report.acknowledged, name).toBeGreaterThan(5);
  expect(history.linearizable, `${name}: ${describeVerdict(history)}`).toBe('Ok');
  expect(history.revisionViolations, name).toEqual([]);
  expect(history.watch.violations, name).toEqual([]);
  expect(history.checked, name).toBeGreaterThan(20);
  return report;
}

/** The IP of a member's Pod. */
const podIP = async (member: string): Promise<string> =>
  until(`${member} has an IP`, async () => {
    const pod = await kube.core.readNamespacedPod({ name: member, namespace: ns });
    return pod.status?.podIP && !pod.metadata?.deletionTimestamp ? pod.status.podIP : undefined;
  });

/** SIGKILLs the etcd process of `member`, as a crash would. */
function killEtcd(member: string): void {
  const flag = `--initial-advertise-peer-urls=http://${member}.demo.${ns}.svc:2380`;
  const cmdline = (pid: string): string[] => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return [];
    }
  };
  const pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p) && cmdline(p).includes(flag));
  expect(pids, `etcd of ${member}`).toHaveLength(1);
  process.kill(Number(pids[0]), 'SIGKILL');
}

/** The newest member name whose EtcdMember exists. */
const memberNames = async (): Promise<string[]> =>
  (await demo.members()).filter((m) => !m.metadata.deletionTimestamp).map((m) => m.metadata.name ?? '');

describe.skipIf(!hasNode)('manager: zero failed writes while a minority is disrupted', () => {
  env.hooks();
  beforeAll(async () => {
    isolator = await startIsolator({ dir: path.join(env.dir, 'isolator'), kubeconfigPath: inject('kubeconfig') });
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await demo.create({ replicas: 3 });
    await demo.settled(3);
  });
  afterAll(async () => {
    console.log(`disruptions, longest write each:\n  ${stalls.join('\n  ')}`);
    await isolator?.stop();
  });

  it('a member Pod deleted', () =>
    underTraffic('pod deleted', 3, async () => {
      const [victim = ''] = await memberNames();
      const uid = (await kube.core.readNamespacedPod({ name: victim, namespace: ns })).metadata?.uid;
      await kube.core.deleteNamespacedPod({ name: victim, namespace: ns });
      await until(`${victim} back in a new Pod`, async () => {
        const pod = await kube.core.readNamespacedPod({ name: victim, namespace: ns }).catch(() => undefined);
        return pod &&
          pod.metadata?.uid !== uid &&
          pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? true
          : undefined;
      });
    }));

  it("a member's etcd killed", () =>
    underTraffic('etcd killed', 3, async () => {
      const [victim = ''] = (await memberNames()).slice(-1);
      const pod = () => kube.core.readNamespacedPod({ name: victim, namespace: ns }).catch(() => undefined);
      const before = await pod();
      const restarts = (p: typeof before) =>
        p?.status?.containerStatuses?.find((c) => c.name === 'etcd')?.restartCount ?? 0;
      killEtcd(victim);
      // Seen by the node (the container restarted) or by the operator (a new Pod checks the data).
      await until(`${victim} restarted`, async () => {
        const now = await pod();
        return now && (now.metadata?.uid !== before?.metadata?.uid || restarts(now) > restarts(before))
          ? true
          : undefined;
      });
      await until(`${victim} Ready again`, async () =>
        (await pod())?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined,
      );
    }));

  it('a member cut off the network for 15 s', () =>
    underTraffic('member isolated', 3, async () => {
      const [victim = ''] = (await memberNames()).slice(1);
      const ip = await podIP(victim);
      console.log(`member isolated: ${victim}, ${ip}`);
      await isolator.isolate(ip);
      await new Promise((r) => setTimeout(r, 15_000));
      await isolator.heal(ip);
    }));

  it('a member whose volume is wiped is replaced', () =>
    underTraffic('member replaced', 3, async () => {
      const [victim = ''] = await memberNames();
      await wipeVolume(inject('kubeconfig'), ns, `data-${victim}`);
      await kube.core.deleteNamespacedPod({ name: victim, namespace: ns });
      await demo.replaced(victim, 3);
    }));

  it('scaled 3 -> 5 -> 3', () =>
    underTraffic('scale 3-5-3', 3, async () => {
      await demo.scale(5);
      await demo.settled(5);
      await demo.scale(3);
    }));

  it('the manager killed with SIGKILL mid-scale and started again', () =>
    underTraffic('manager kill -9', 3, async () => {
      await demo.scale(4);
      await until('a member joining', async () => ((await memberNames()).length === 4 ? true : undefined));
      await env.manager.kill();
      await env.start();
      await demo.settled(4);
      await demo.scale(3);
    }));
});
