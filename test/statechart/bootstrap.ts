/**
 * A journal written by the real Runner and the real cluster machine, fed what the manager
 * feeds it while a cluster of one bootstraps and is scaled to two: the effect handlers are
 * fakes that answer at once (the first ensureServices fails, to show a retry), and etcd's
 * member list is given by hand. It stops where the learner waits to start (the cluster's
 * PodDisruptionBudget set after the bootstrap and raised for two before the scale-up).
 */
import { EffectError, type EffectContext, type Handler } from '../../effects/types.ts';
import type { Journal } from '../../journal/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import {
  clusterMachine,
  peerURL,
  type DisruptionBudgetParams,
  type MemberObservation,
  type MemberState,
} from '../../machines/index.ts';
import { Runner } from '../../manager/runner.ts';

const cluster = { namespace: 'default', name: 'demo', uid: 'uid-demo' };
/** The journal's ref of the cluster the example drives. */
export const demoRef = { ...cluster, kind: 'EtcdCluster' as const };

/** A handler that succeeds with `result`, failing the first `failures` calls. */
function answer(
  kind: string,
  result: Record<string, unknown> = {},
  failures = 0,
): Handler<never, Record<string, unknown>> {
  let calls = 0;
  const run = () =>
    ++calls <= failures
      ? Promise.reject(new EffectError(ERR.ENSURE_SERVICES, 'the API server did not answer'))
      : Promise.resolve(result);
  return { kind, run, recover: () => Promise.resolve({ done: false as const }) };
}

/** setDisruptionBudget answering with what it was asked to set, as the real handler does. */
const budget: Handler<DisruptionBudgetParams, Record<string, unknown>> = {
  kind: 'setDisruptionBudget',
  run: (p) => Promise.resolve({ minAvailable: p.minAvailable }),
  recover: () => Promise.resolve({ done: false as const }),
};

/** Drives the bootstrap of `demo` (one member), then a scale to two that waits for the learner. */
export async function journalBootstrap(journal: Journal): Promise<void> {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const now = (): number => (clock += 250);
  const seed = { id: 'a1', name: 'demo-0', peerURL: peerURL(cluster, 'demo-0'), learner: false };
  const runner = new Runner<EffectContext>({
    journal,
    ref: demoRef,
    machineName: 'cluster',
    machine: clusterMachine,
    input: { cluster },
    handlers: {
      ensureServices: answer('ensureServices', {}, 1),
      createMember: answer('createMember'),
      addLearner: answer('addLearner', { memberID: 'b2', initialCluster: `demo-0=${seed.peerURL}` }),
      setDisruptionBudget: budget,
    },
    context: () => ({
      cluster,
      signal: AbortSignal.timeout(5000),
      log: { info: () => {}, warn: () => {}, error: () => {} },
    }),
    now,
  });
  const member = (name: string, ordinal: number, state: MemberState): MemberObservation => ({
    name,
    ordinal,
    bootstrap: ordinal === 0,
    dormant: false,
    state,
    deleting: false,
  });
  const spec = (replicas: number) => ({
    type: 'k8s.cluster.updated',
    at: now(),
    spec: { replicas, version: '3.6.16' },
    progressDeadlineSeconds: 600,
  });
  const etcd = (members: readonly (typeof seed)[]) => ({
    type: 'etcd.members.listed',
    at: now(),
    etcd: { clusterID: 'c1', members, healthy: members.map((m) => m.id), leader: 'a1' },
  });
  await runner.feed({ type: 'k8s.members.listed', at: now(), members: [] });
  await runner.feed(spec(1));
  clock += 5000; // the back-off passes
  await runner.feed({ type: 'timer.tick', at: now() });
  await runner.feed({ type: 'k8s.members.listed', at: now(), members: [member('demo-0', 0, 'bootstrapping')] });
  await runner.feed(etcd([seed]));
  await runner.feed({ type: 'k8s.members.listed', at: now(), members: [member('demo-0', 0, 'voter')] });
  await runner.feed(etcd([seed]));
  await runner.feed(spec(2));
  await runner.feed(etcd([seed, { id: 'b2', name: '', peerURL: peerURL(cluster, 'demo-1'), learner: true }]));
}
