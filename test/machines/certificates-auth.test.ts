/**
 * The cluster machine with spec.tls from issuers and spec.auth.enabled: the seeding step makes the
 * cert-manager Certificates after the Services and waits for them Ready before any member, and auth
 * is turned on once, as soon as a quorum of the new cluster answers.
 */
import { describe, expect, it } from 'vitest';
import { clusterMachine } from '../../machines/cluster.ts';
import { describeCluster } from '../../machines/describe.ts';
import { peerURL } from '../../machines/policy.ts';
import type { ClusterEvent } from '../../machines/types.ts';
import { Driver, type Intent } from './harness.ts';

const ref = { namespace: 'ns', name: 'demo', uid: 'uid-1', peerTLS: true };
let clock = 1_000_000;
const at = (): number => (clock += 10);
const ok = (kind: string, result?: Record<string, unknown>): ClusterEvent =>
  ({ type: `effect.${kind}.succeeded`, at: at(), result }) as ClusterEvent;
const failed = (kind: string, code: string, message = code): ClusterEvent =>
  ({ type: `effect.${kind}.failed`, at: at(), error: { code, message } }) as ClusterEvent;
const spec = (o: { certificates?: boolean; auth?: boolean } = {}): ClusterEvent => ({
  type: 'k8s.cluster.updated',
  at: at(),
  spec: { replicas: 3, version: '3.6.16' },
  progressDeadlineSeconds: 600,
  ...o,
});
const voters = (...ns: number[]): ClusterEvent => ({
  type: 'etcd.members.listed',
  at: at(),
  etcd: {
    clusterID: 'c1',
    leader: 'a0',
    members: ns.map((n) => ({ id: `a${n}`, name: `demo-${n}`, peerURL: peerURL(ref, `demo-${n}`), learner: false })),
    healthy: ns.map((n) => `a${n}`),
  },
});
const members = (...ns: number[]): ClusterEvent => ({
  type: 'k8s.members.listed',
  at: at(),
  members: ns.map((n) => ({
    name: `demo-${n}`,
    ordinal: n,
    bootstrap: n === 0,
    dormant: false,
    state: 'voter',
    deleting: false,
    version: '3.6.16',
  })),
});

type Step = readonly [ClusterEvent, string, Intent[]?];
function play(d: Driver<typeof clusterMachine>, steps: readonly Step[]): void {
  for (const [event, state, intents] of steps) {
    const out = d.send(event);
    expect(out.state, `after ${event.type}`).toBe(state);
    if (intents) expect(out.intents, `intents after ${event.type}`).toEqual(intents);
  }
}

const certificates: Intent = { type: 'ensureCertificates', params: { cluster: 'demo' } };
const check: Intent = { type: 'checkCertificates', params: { cluster: 'demo' } };
const notReady =
  'Certificate demo-client-tls is not Ready (DoesNotExist: Issuing certificate as Secret does not exist) (kubectl describe certificate -n ns)';
const enableAuth: Intent = { type: 'enableAuth', params: { cluster: 'demo' } };
/** createMember of member n of the new cluster of 3, started whole with https peer URLs. */
const startMember = (n: number): Intent => ({
  type: 'createMember',
  params: {
    member: `demo-${n}`,
    ordinal: n,
    bootstrap: true,
    initialCluster: [0, 1, 2].map((i) => `demo-${i}=${peerURL(ref, `demo-${i}`)}`).join(','),
    version: '3.6.16',
  },
});
/** The first member asked for: every member of the 3 created, then the wait for a quorum. */
const createAll: Step[] = [
  [ok('createMember'), 'bootstrapping.starting.creatingMember.running', [startMember(1)]],
  [ok('createMember'), 'bootstrapping.starting.creatingMember.running', [startMember(2)]],
  [ok('createMember'), 'bootstrapping.starting.awaitingQuorum', []],
];

function newCluster(): Driver<typeof clusterMachine> {
  const d = new Driver(clusterMachine, { cluster: ref });
  d.send(members());
  return d;
}

describe('cluster machine: certificates from cert-manager and etcd auth', () => {
  it('an issuer: Services, then the Certificates, the members once they are Ready', () => {
    const d = newCluster();
    play(d, [
      [spec({ certificates: true }), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.seeding.creatingCertificates.running', [certificates]],
      [ok('ensureCertificates'), 'bootstrapping.seeding.awaitingCertificates.running', [check]],
      // cert-manager has not issued them yet: a hold, asked again within a second.
      [
        failed('checkCertificates', 'ERR_CERTIFICATES_NOT_READY', notReady),
        'bootstrapping.seeding.awaitingCertificates.backingOff',
        [],
      ],
      [{ type: 'timer.tick', at: (clock += 500) }, 'bootstrapping.seeding.awaitingCertificates.running', [check]],
      [
        ok('checkCertificates', { ready: ['demo-client-tls'] }),
        'bootstrapping.starting.creatingMember.running',
        [startMember(0)],
      ],
      ...createAll,
    ]);
    expect(describeCluster('bootstrapping.seeding.creatingCertificates.running', d.context).message).toBe(
      'creating the cert-manager Certificates of spec.tls (demo-<client|peer|operator>-tls)',
    );
  });

  it('a Certificate not Ready: a wait at first, then named with its reason as trouble', () => {
    const d = newCluster();
    play(d, [
      [spec({ certificates: true }), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.seeding.creatingCertificates.running'],
      [ok('ensureCertificates'), 'bootstrapping.seeding.awaitingCertificates.running'],
      [
        failed('checkCertificates', 'ERR_CERTIFICATES_NOT_READY', notReady),
        'bootstrapping.seeding.awaitingCertificates.backingOff',
      ],
    ]);
    const waiting = describeCluster(d.state, d.context).message;
    expect(waiting).toContain('waiting for cert-manager to issue them');
    expect(waiting).not.toContain('DoesNotExist');
    for (let i = 0; i < 20; i++)
      play(d, [
        [{ type: 'timer.tick', at: (clock += 60_000) }, 'bootstrapping.seeding.awaitingCertificates.running', [check]],
        [
          failed('checkCertificates', 'ERR_CERTIFICATES_NOT_READY', notReady),
          'bootstrapping.seeding.awaitingCertificates.backingOff',
        ],
      ]);
    expect(describeCluster(d.state, d.context).message).toContain(
      `the last try failed (ERR_CERTIFICATES_NOT_READY: ${notReady}) and is retried with back-off`,
    );
    expect(d.context.retryAt! - d.context.now).toBeGreaterThan(500);
  });

  it('a failed Certificate create is retried with back-off; cert-manager missing is said', () => {
    const d = newCluster();
    play(d, [
      [spec({ certificates: true }), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.seeding.creatingCertificates.running'],
      [
        failed('ensureCertificates', 'ERR_CERT_MANAGER_MISSING', 'the API server does not serve certificates'),
        'bootstrapping.seeding.creatingCertificates.backingOff',
        [],
      ],
      [
        { type: 'timer.tick', at: (clock += 1_000) },
        'bootstrapping.seeding.creatingCertificates.running',
        [certificates],
      ],
    ]);
    expect(describeCluster(d.state, d.context).message).toContain('ERR_CERT_MANAGER_MISSING');
  });

  it('brought Secrets: no Certificates step', () => {
    const d = newCluster();
    play(d, [
      [spec(), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.starting.creatingMember.running', [startMember(0)]],
    ]);
  });

  it('auth: turned on as soon as a quorum of the new cluster answers; never asked again', () => {
    const d = newCluster();
    play(d, [
      [spec({ certificates: true, auth: true }), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.seeding.creatingCertificates.running'],
      [ok('ensureCertificates'), 'bootstrapping.seeding.awaitingCertificates.running'],
      [ok('checkCertificates'), 'bootstrapping.starting.creatingMember.running'],
      ...createAll,
      [voters(0, 1, 2), 'observing', []],
      [voters(0, 1, 2), 'enablingAuth.running', [enableAuth]],
      [failed('enableAuth', 'ERR_ETCD_UNAVAILABLE'), 'enablingAuth.backingOff', []],
      [{ type: 'timer.tick', at: (clock += 1_000) }, 'enablingAuth.running', [enableAuth]],
      [
        ok('enableAuth', { enabled: true, did: ['user add root (no password)', 'role add root'] }),
        'updatingBudget.running',
        [{ type: 'setDisruptionBudget', params: { cluster: 'demo', minAvailable: 2 } }],
      ],
    ]);
    expect(d.context.authEnabled).toBe(true);
    expect(describeCluster('enablingAuth.running', d.context)).toEqual({
      step: 'EnablingAuth',
      message:
        "enabling etcd authentication: adding the user root without a password (the operator is root by its client certificate's common name) with the role root, then turning auth on",
    });
    // Survives the journal.
    d.restart();
    expect(d.context.authEnabled).toBe(true);
  });

  it('auth waits for a healthy quorum and for etcd to answer at all', () => {
    const d = newCluster();
    play(d, [
      [spec({ auth: true }), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.starting.creatingMember.running'],
      ...createAll,
      [voters(0, 1, 2), 'observing'],
      [{ type: 'etcd.unreachable', at: at(), error: 'none of 3 members answered' }, 'observing'],
    ]);
    // A cluster without auth goes on at the same point (to its budget, the bootstrap done).
    const plain = newCluster();
    play(plain, [
      [spec(), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.starting.creatingMember.running'],
      ...createAll,
      [voters(0, 1, 2), 'observing'],
      [voters(0, 1, 2), 'updatingBudget.running'],
    ]);
  });

  it('a machine without its journal adopting a running cluster with auth asks once (enableAuth finds it on), then rests', () => {
    const d = new Driver(clusterMachine, { cluster: ref });
    play(d, [
      [members(0, 1, 2), 'pending'],
      [spec({ certificates: true, auth: true }), 'observing'],
      [voters(0, 1, 2), 'enablingAuth.running', [enableAuth]],
      [ok('enableAuth', { enabled: true, did: [] }), 'updatingBudget.running'],
      [ok('setDisruptionBudget', { minAvailable: 2 }), 'steady'],
      [voters(0, 1, 2), 'steady', []],
    ]);
  });
});
