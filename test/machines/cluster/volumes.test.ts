import { beforeEach, describe, expect, it } from 'vitest';
import { clusterMachine } from '../../../machines/cluster.ts';
import { GROW_RECHECK_MS } from '../../../machines/cluster/volumes/index.ts';
import { describeCluster } from '../../../machines/describe.ts';
import { peerURL } from '../../../machines/policy.ts';
import { pathHasTag, TAG } from '../../../machines/tags.ts';
import type { ClaimObservation, ClusterEvent, EtcdObservation } from '../../../machines/types.ts';
import { Driver, type Intent, play, voters } from '../harness.ts';

const ref = { namespace: 'default', name: 'demo', uid: 'uid-1' };
const id = (n: number): string => `a${n}`;
const Mi = 2 ** 20;

let clock = 0;
beforeEach(() => {
  clock = Date.UTC(2026, 10, 25, 12);
});
const now = (): number => (clock += 10);
const tick = (ms: number): ClusterEvent => ({ type: 'timer.tick', at: (clock += ms) });
const ok = (kind: string, result?: Record<string, unknown>): ClusterEvent =>
  ({ type: `effect.${kind}.succeeded`, at: now(), result }) as ClusterEvent;
const failed = (kind: string, code: string, message = code): ClusterEvent =>
  ({ type: `effect.${kind}.failed`, at: now(), error: { code, message, retryable: false } }) as ClusterEvent;

const spec = (size: number, replicas = 3, version = '3.6.16'): ClusterEvent => ({
  type: 'k8s.cluster.updated',
  at: now(),
  spec: { replicas, version },
  progressDeadlineSeconds: 600,
  volumeSize: { quantity: `${size}Mi`, bytes: size * Mi },
});
const members = (n = 3): ClusterEvent => ({
  type: 'k8s.members.listed',
  at: now(),
  members: voters(Array<string>(n).fill('3.6.16')),
});
function etcd(n = 3): ClusterEvent {
  const observation: EtcdObservation = {
    clusterID: 'c1',
    members: [...Array(n).keys()].map((i) => ({
      id: id(i),
      name: `demo-${i}`,
      peerURL: peerURL(ref, `demo-${i}`),
      learner: false,
    })),
    healthy: [...Array(n).keys()].map(id),
    leader: id(0),
    versions: Object.fromEntries([...Array(n).keys()].map((i) => [id(i), '3.6.16'])),
  };
  return { type: 'etcd.members.listed', at: now(), etcd: observation };
}
/** The claims of demo-0..2: [requested MiB, capacity MiB, extra] each. */
const claims = (...list: [number, number | null, Partial<ClaimObservation>?][]): ClusterEvent => ({
  type: 'k8s.claims.listed',
  at: now(),
  claims: list.map(([requested, capacity, o], i) => ({
    member: `demo-${i}`,
    storageClass: 'local-sized',
    requested: requested * Mi,
    capacity: capacity === null ? null : capacity * Mi,
    ...o,
  })),
});
const grow = (n: number, size = '128Mi'): Intent => ({ type: 'growVolume', params: { member: `demo-${n}`, size } });

const say = (d: Driver<typeof clusterMachine>): string => describeCluster(d.state, d.context).message;

/** A steady 3-member cluster on 64Mi claims, adopted as a manager without a journal would. */
function steady(): Driver<typeof clusterMachine> {
  const d = new Driver(clusterMachine, { cluster: ref });
  play(d, [
    [claims([64, 64], [64, 64], [64, 64]), 'pending'],
    [spec(64), 'pending'],
    [members(), 'observing'],
    [etcd(), 'updatingBudget.running'],
    [ok('setDisruptionBudget', { minAvailable: 2 }), 'steady'],
  ]);
  return d;
}

describe('cluster machine: volume expansion', () => {
  it('asks each claim for the new size, one at a time, then waits until every capacity shows it', () => {
    const d = steady();
    play(d, [[spec(128), 'resizingVolumes.patching.running', [grow(0)]]]);
    expect(say(d)).toBe(
      'growing volumes to 128Mi: demo-0 to ask, demo-1 to ask, demo-2 to ask; asking the claim of demo-0 for 128Mi',
    );
    play(d, [
      [ok('growVolume', { patched: true }), 'resizingVolumes.patching.running', [grow(1)]],
      [ok('growVolume', { patched: true }), 'resizingVolumes.patching.running', [grow(2)]],
      [ok('growVolume', { patched: true }), 'resizingVolumes.awaitingCapacity', []],
      [claims([128, 128], [128, 64], [128, 64, { pending: true }]), 'resizingVolumes.awaitingCapacity', []],
    ]);
    expect(say(d)).toBe(
      "growing volumes to 128Mi: demo-0 done, demo-1 waiting, demo-2 waiting for its node to grow the file system; waiting until every claim's capacity shows it (the volume and its file system grown)",
    );
    // A probe in between asks for nothing: the claims were asked once.
    play(d, [
      [etcd(), 'resizingVolumes.awaitingCapacity', []],
      [claims([128, 128], [128, 128], [128, 128]), 'steady', []],
    ]);
    expect(d.context.grow).toBeNull();
  });

  it('a crash mid-step resumes with the claims not yet asked, never asking one twice', () => {
    const d = steady();
    play(d, [
      [spec(128), 'resizingVolumes.patching.running', [grow(0)]],
      [ok('growVolume', { patched: true }), 'resizingVolumes.patching.running', [grow(1)]],
    ]);
    d.restart();
    // The runtime recovers the open intent (growVolume demo-1) and feeds its outcome.
    play(d, [
      [claims([128, 64], [128, 64], [64, 64]), 'resizingVolumes.patching.running', []],
      [ok('growVolume', { patched: true }), 'resizingVolumes.patching.running', [grow(2)]],
    ]);
  });

  it('a StorageClass that refuses expansion is reported with what to do, and tried again later; the rest goes on', () => {
    const d = steady();
    const why =
      'PersistentVolumeClaim data-demo-0 cannot grow to 128Mi: StorageClass local-sized does not allow volume expansion';
    play(d, [
      [spec(128), 'resizingVolumes.patching.running', [grow(0)]],
      [failed('growVolume', 'ERR_VOLUME_EXPANSION_NOT_ALLOWED', why), 'volumesRefused', []],
    ]);
    expect(pathHasTag(clusterMachine, d.state, TAG.warning)).toBe(true);
    expect(pathHasTag(clusterMachine, d.state, TAG.resting)).toBe(true);
    expect(say(d)).toBe(
      `storage.size 128Mi is not applied to the members' volumes: ${why}. Tried again at 2026-11-25T12:05:00Z, or when storage.size changes; members made meanwhile get 128Mi`,
    );
    // A scale-up is not held by it (its budget first).
    play(d, [[spec(128, 4), 'updatingBudget.running']]);
    const d2 = steady();
    play(d2, [
      [spec(128), 'resizingVolumes.patching.running', [grow(0)]],
      [failed('growVolume', 'ERR_VOLUME_EXPANSION_NOT_ALLOWED', why), 'volumesRefused', []],
      [tick(60_000), 'volumesRefused', []],
      // Past the recheck: asked again (the class may have been edited).
      [tick(GROW_RECHECK_MS), 'resizingVolumes.patching.running', [grow(0)]],
      [failed('growVolume', 'ERR_VOLUME_EXPANSION_NOT_ALLOWED', why), 'volumesRefused', []],
      // A larger size is tried at once.
      [spec(256), 'resizingVolumes.patching.running', [grow(0, '256Mi')]],
    ]);
  });

  it('a claim whose resize failed is named, and the step waits for it; a scale edit meanwhile is taken', () => {
    const d = steady();
    play(d, [
      [spec(128), 'resizingVolumes.patching.running', [grow(0)]],
      [ok('growVolume'), 'resizingVolumes.patching.running', [grow(1)]],
      [ok('growVolume'), 'resizingVolumes.patching.running', [grow(2)]],
      [ok('growVolume'), 'resizingVolumes.awaitingCapacity', []],
      [
        claims([128, 128], [128, 64, { failure: 'ControllerResizeError: disk quota exceeded' }], [128, 128]),
        'resizingVolumes.awaitingCapacity',
        [],
      ],
    ]);
    expect(say(d)).toContain('demo-1 failed (ControllerResizeError: disk quota exceeded)');
    play(d, [[spec(128, 4), 'updatingBudget.running']]);
  });

  it('an upgrade asked together with a larger size waits until every claim shows it', () => {
    const d = steady();
    play(d, [
      [spec(128, 3, '3.6.17'), 'resizingVolumes.patching.running', [grow(0)]],
      [ok('growVolume'), 'resizingVolumes.patching.running', [grow(1)]],
      [ok('growVolume'), 'resizingVolumes.patching.running', [grow(2)]],
      [ok('growVolume'), 'resizingVolumes.awaitingCapacity', []],
      [
        claims([128, 128], [128, 128], [128, 128]),
        'upgrading.settingVersion.running',
        [{ type: 'setMemberVersion', params: { member: 'demo-1', version: '3.6.17' } }],
      ],
    ]);
  });

  it('with nothing smaller than the size (a new cluster, Memory, an older journal) there is no step', () => {
    const d = steady();
    play(d, [
      [claims([128, 128], [128, 128], [128, null]), 'steady', []],
      [spec(128), 'steady', []],
      [{ ...spec(256), volumeSize: null } as ClusterEvent, 'steady', []],
    ]);
  });
});
