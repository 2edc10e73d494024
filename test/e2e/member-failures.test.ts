/**
 * What a member does when things go wrong under it, on the local cluster with the manager:
 * etcd restarting inside its Pod after its volume was wiped (the check-data init container
 * does not run on an in-place restart), and a Pod the API server refuses (a bad podTemplate),
 * which stops the member with the reason shown until the EtcdCluster is fixed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { wipeVolume } from '../../localcluster/storage/index.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest, type Converged } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('failures');
const { ns, kube } = env;
const KEYS = 20;
/** How many wipes in a row the wipe case makes (REPEAT=10 for the figures in docs/reliability.md). */
const REPEAT = Math.max(1, Number(process.env.REPEAT ?? 1));
let demo: ClusterUnderTest;
let first: Converged;

/** SIGKILLs the etcd process of `member` (its peer URL is on its command line), as a crash would. */
function killEtcd(member: string): void {
  const flag = `--initial-advertise-peer-urls=http://${member}.demo.${ns}.svc:2380`;
  const commandLine = (pid: string): string[] => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return []; // gone since the listing
    }
  };
  const pids = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid) && commandLine(pid).includes(flag));
  expect(pids.length, `etcd processes of ${member}`).toBe(1);
  process.kill(Number(pids[0]), 'SIGKILL');
}

/** min / median / max of each figure, in seconds. */
function spread(figures: readonly { started: number; steady: number }[]): string {
  const of = (pick: (f: { started: number; steady: number }) => number): string => {
    const v = figures.map(pick).sort((a, b) => a - b);
    const median = v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
    return [v[0]!, median, v.at(-1)!].map((ms) => (ms / 1000).toFixed(1)).join(' / ');
  };
  return `replacement started ${of((f) => f.started)} s, Steady ${of((f) => f.steady)} s (min / median / max)`;
}

/** The manager's step log lines of one member machine. */
const memberSteps = (member: string) =>
  env.manager.lines.filter((l) => l.msg === 'step' && l.machine === 'member' && l.object === `${ns}/${member}`);

const condition = (
  o: { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } },
  type: string,
) => o.status?.conditions?.find((c) => c.type === type);

describe.skipIf(!hasNode)('manager: a member when things go wrong under it', () => {
  env.hooks();
  beforeAll(async () => {
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await demo.create({ replicas: 3 });
    await demo.settled(3);
    first = await demo.verify(3);
    await demo.write('before', KEYS);
  });

  it(
    "etcd restarting in place on a wiped volume is caught by a new Pod's data check, and the member is replaced",
    async () => {
      // REPEAT=N wipes N members in a row (demo-1, then each replacement: demo-0 and demo-2 stay).
      const figures: { started: number; steady: number }[] = [];
      let victim = 'demo-1';
      for (let run = 1; run <= REPEAT; run++) {
        const before = await demo.verify(3);
        const wiped = performance.now();
        await wipeVolume(inject('kubeconfig'), ns, `data-${victim}`);
        killEtcd(victim);
        const started = until(`a replacement for ${victim} made`, async () =>
          (await demo.members()).some((m) => !before.members.has(m.metadata.name ?? ''))
            ? performance.now()
            : undefined,
        );
        const replaced = await demo.replaced(victim, 3);
        const replacement = replaced.find((n) => n !== undefined && !before.members.has(n));
        expect(replacement, `a new member beside ${replaced.join(', ')}`).toBeDefined();
        expect(replaced.filter((n) => n !== replacement)).toEqual(['demo-0', 'demo-2']);
        await demo.settled(3);
        figures.push({ started: (await started) - wiped, steady: performance.now() - wiped });
        const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
        console.log(
          `wiped in place (run ${run}/${REPEAT}, ${victim} -> ${replacement}): replacement started ${s(figures[run - 1]!.started)}, Steady ${s(figures[run - 1]!.steady)} after the wipe`,
        );
        const after = await demo.verify(3);
        expect([...after.members.values()]).not.toContain(before.members.get(victim));
        expect(after.members.get('demo-0')).toBe(first.members.get('demo-0'));
        expect(await demo.readBack('before', KEYS)).toBe(KEYS);
        // The step the journal shows: the Pod that etcd restarted in went, so check-data ran again
        // (which refuses the WAL and db etcd wrote anew, without the member's guard), or etcd's own
        // crash log (raft's "tocommit ... out of range") told the loss first.
        expect(
          memberSteps(victim).some((l) => l.event === 'member.data.lost'),
          `${victim}'s loss was observed as member.data.lost`,
        ).toBe(true);
        victim = replacement!;
      }
      if (REPEAT > 1) console.log(`wiped in place, ${REPEAT} runs: ${spread(figures)}`);
    },
    REPEAT * 180_000,
  );

  it('a Pod the API server refuses stops its member with the reason, and an edit of the EtcdCluster fixes it', async () => {
    await demo.patchSpec({ podTemplate: { metadata: { labels: { 'not/a/valid/key': 'x' } } } });
    await kube.core.deleteNamespacedPod({ name: 'demo-2', namespace: ns });
    const failed = await until('demo-2 failed', async () => {
      const m = (await demo.members()).find((x) => x.metadata.name === 'demo-2');
      return m?.status?.state === 'failed' ? m : undefined;
    });
    expect(condition(failed, 'Progressing')).toMatchObject({ status: 'False', reason: 'Failed' });
    expect(condition(failed, 'Progressing')?.message).toMatch(/HTTP 422: .*not\/a\/valid\/key/);
    const degraded = await until('the cluster says which member failed', async () => {
      const c = await demo.get();
      return condition(c, 'Degraded')?.reason === 'MemberFailed' ? c : undefined;
    });
    expect(condition(degraded, 'Degraded')?.message).toContain('EtcdMember demo-2 stopped');
    // It stays stopped: no Pod is tried again until something changes.
    const podCreates = (): number =>
      memberSteps('demo-2').filter((l) => (l.intents as string[]).includes('createPod')).length;
    const tries = podCreates();
    await new Promise((r) => setTimeout(r, 3000));
    expect(podCreates()).toBe(tries);

    await demo.patchSpec({ podTemplate: null });
    await demo.settled(3);
    const after = await demo.verify(3);
    expect(after.members.get('demo-2')).toBe(first.members.get('demo-2'));
    // The cluster settles on etcd's word; the member's own status follows when its machine steps.
    const fixed = await until('demo-2 a voter again', async () => {
      const m = (await demo.members()).find((x) => x.metadata.name === 'demo-2');
      return m?.status?.state === 'voter' ? m : undefined;
    });
    expect(condition(fixed, 'Progressing')).toMatchObject({ status: 'False', reason: 'Voter' });
    await until('the cluster no longer Degraded', async () =>
      condition(await demo.get(), 'Degraded')?.status === 'False' ? true : undefined,
    );
  });
});
