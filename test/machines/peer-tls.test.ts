/** The machines of a cluster whose peers use TLS: every peer URL they make or compare is https. */
import { describe, expect, it } from 'vitest';
import { clusterMachine } from '../../machines/cluster.ts';
import { memberMachine } from '../../machines/member.ts';
import type { ClusterEvent, MemberEvent } from '../../machines/types.ts';
import { Driver } from './harness.ts';

const ref = { namespace: 'ns', name: 'demo', uid: 'uid-1', peerTLS: true };
const https = (n: number): string => `https://demo-${n}.demo.ns.svc:2380`;
let clock = 1_000_000;
const at = (): number => (clock += 10);
const ok = (kind: string, result?: Record<string, unknown>): ClusterEvent =>
  ({ type: `effect.${kind}.succeeded`, at: at(), result }) as ClusterEvent;
const etcd = (voters: number[]): ClusterEvent => ({
  type: 'etcd.members.listed',
  at: at(),
  etcd: {
    clusterID: 'c1',
    leader: 'a0',
    members: voters.map((n) => ({ id: `a${n}`, name: `demo-${n}`, peerURL: https(n), learner: false })),
    healthy: voters.map((n) => `a${n}`),
  },
});

describe('machines with peer TLS', () => {
  it('cluster: a new cluster starts with https peer URLs, etcd members by https URL are its own, learners are added by https URL', () => {
    const d = new Driver(clusterMachine, { cluster: ref });
    d.send({ type: 'k8s.members.listed', at: at(), members: [] });
    d.send({
      type: 'k8s.cluster.updated',
      at: at(),
      spec: { replicas: 2, version: '3.6.16' },
      progressDeadlineSeconds: 600,
    });
    const first = d.send(ok('ensureServices'));
    expect(first.intents).toEqual([
      {
        type: 'createMember',
        params: {
          member: 'demo-0',
          ordinal: 0,
          bootstrap: true,
          initialCluster: `demo-0=${https(0)},demo-1=${https(1)}`,
          version: '3.6.16',
        },
      },
    ]);
    d.send(ok('createMember'));
    d.send(ok('createMember'));
    // Found by their https peer URLs: the members started, the bootstrap is done.
    expect(d.send(etcd([0, 1])).state).toBe('observing');
    d.send({
      type: 'k8s.cluster.updated',
      at: at(),
      spec: { replicas: 3, version: '3.6.16' },
      progressDeadlineSeconds: 600,
    });
    const next = d.send(etcd([0, 1]));
    expect(next.state).toBe('bootstrapping.joining.addingLearner.running');
    expect(next.intents).toEqual([{ type: 'addLearner', params: { member: 'demo-2', peerURL: https(2) } }]);
    // Survives the journal: a restarted machine still makes https URLs.
    d.restart();
    expect(d.context.cluster.peerTLS).toBe(true);
  });

  it('member: leaving etcd removes the member by its https peer URL', () => {
    const d = new Driver(memberMachine, {
      member: { namespace: 'ns', name: 'demo-1', uid: 'm1', cluster: 'demo', peerTLS: true },
      bootstrap: false,
      medium: '',
    });
    const updated = (deleting: boolean): MemberEvent => ({
      type: 'k8s.member.updated',
      at: at(),
      dormant: false,
      deleting,
      clusterDeleting: false,
      generation: 1,
      clusterGeneration: 1,
    });
    d.send(updated(false));
    d.send({ type: 'k8s.pvc.observed', at: at(), bound: true });
    d.send({ type: 'k8s.pod.observed', at: at(), pod: null });
    d.send({ type: 'effect.createPod.succeeded', at: at(), result: { uid: 'p1' } });
    d.send({ type: 'k8s.pod.observed', at: at(), pod: { uid: 'p1', phase: 'Running', ready: true, deleting: false } });
    const member = { id: 'b1', name: 'demo-1', peerURL: https(1), learner: false };
    expect(d.send({ type: 'etcd.member.observed', at: at(), member }).state).toBe('voter');
    const out = d.send(updated(true));
    expect(out.intents).toContainEqual({
      type: 'removeEtcdMember',
      params: { peerURL: https(1), memberID: 'b1', reason: 'its EtcdMember is being deleted' },
    });
  });
});
