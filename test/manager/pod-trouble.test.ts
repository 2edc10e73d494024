/** Stuck objects say why: Kubernetes' reasons for a Pod or claim reach the member, the cluster and an Event. */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { initialMemberContext, type MemberContext } from '../../machines/member-decide.ts';
import { memberStatus, newlyStuck, STUCK_AFTER_MS, stuckDueAt } from '../../manager/member-status.ts';
import { stuckOf } from '../../manager/debug/views.ts';
import { membersListed, podObserved, pvcObserved } from '../../manager/observe.ts';
import { claimTrouble, podTrouble } from '../../manager/pod-trouble.ts';
import { UNWELL_GRACE_MS } from '../../manager/status-degraded.ts';
import { at, bootstrap, condition as clusterCondition, tick } from './cluster-recorder.ts';

const etcd = (s: Partial<V1ContainerStatus>): V1ContainerStatus => ({
  name: 'etcd',
  image: 'etcd',
  imageID: '',
  ready: false,
  restartCount: 0,
  ...s,
});
const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'demo-0', uid: 'p0' }, status });
/** A claim of a StorageClass that does not exist, and the PV controller's Warning on it. */
const pvc = { metadata: { name: 'data-demo-0' }, spec: { storageClassName: 'nope' }, status: { phase: 'Pending' } };
const warning = { reason: 'ProvisioningFailed', message: 'storageclass.storage.k8s.io "nope" not found' };

const unschedulable = pod({
  phase: 'Pending',
  conditions: [
    {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message: '0/3 nodes are available: 3 Insufficient memory.',
    },
  ],
});
const pulling = pod({
  phase: 'Pending',
  containerStatuses: [
    etcd({
      state: {
        waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "quay.io/coreos/etcd:v3.6.99"' },
      },
    }),
  ],
});
const crashing = pod({
  phase: 'Running',
  containerStatuses: [
    etcd({
      restartCount: 4,
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
      lastState: { terminated: { exitCode: 1, message: 'some line\n{"level":"fatal","msg":"bad flag --frob"}\n' } },
    }),
  ],
});

describe('pod trouble, in Kubernetes words', () => {
  it.each([
    [unschedulable, 'Unschedulable', 'Pod demo-0 not scheduled: 0/3 nodes are available: 3 Insufficient memory.'],
    [
      pulling,
      'ImagePullBackOff',
      'container etcd ImagePullBackOff: Back-off pulling image "quay.io/coreos/etcd:v3.6.99"',
    ],
    [
      crashing,
      'CrashLoopBackOff',
      'container etcd CrashLoopBackOff: back-off 40s restarting failed container; last exit code 1: {"level":"fatal","msg":"bad flag --frob"}',
    ],
  ])('%#: %s', (p, reason, message) => {
    expect(podTrouble(p)).toEqual({ reason, message });
    expect(podObserved(p, 1)).toMatchObject({ pod: { trouble: { reason, message } } });
  });

  it("a restore whose fetch cannot read the snapshot (exit 4) is SnapshotUnreadable at once, in the agent's words; another exit is a crash loop", () => {
    const fetch = (exitCode: number, waiting = true): V1Pod =>
      pod({
        phase: 'Pending',
        initContainerStatuses: [
          etcd({
            name: 'restore-fetch',
            ...(waiting
              ? { state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } } }
              : {
                  state: {
                    terminated: { exitCode, message: 'fetch-snapshot failed: /restore-source/x.db does not exist' },
                  },
                }),
            lastState: {
              terminated: { exitCode, message: 'fetch-snapshot failed: /restore-source/x.db does not exist' },
            },
          }),
        ],
      });
    const unreadable = {
      reason: 'SnapshotUnreadable',
      message:
        'init container restore-fetch cannot read the snapshot to restore: fetch-snapshot failed: /restore-source/x.db does not exist',
    };
    expect(podTrouble(fetch(4))).toEqual(unreadable);
    // Its first failure, before the kubelet backs off: said already.
    expect(podTrouble(fetch(4, false))).toEqual(unreadable);
    expect(podTrouble(fetch(1))).toMatchObject({ reason: 'CrashLoopBackOff' });
  });

  it('a running Pod, or one pulling for the first time (ContainerCreating), is not stuck', () => {
    expect(
      podTrouble(pod({ phase: 'Running', containerStatuses: [etcd({ state: { running: {} } })] })),
    ).toBeUndefined();
    expect(
      podTrouble(
        pod({ phase: 'Pending', containerStatuses: [etcd({ state: { waiting: { reason: 'ContainerCreating' } } })] }),
      ),
    ).toBeUndefined();
  });

  it('a Pending claim names its StorageClass', () => {
    expect(claimTrouble(pvc)).toMatchObject({
      reason: 'ClaimPending',
      message: expect.stringContaining('StorageClass nope') as string,
    });
    expect(pvcObserved(pvc, 1)).toMatchObject({ bound: false, trouble: { reason: 'ClaimPending' } });
  });

  it("a Pending claim with a Warning Event says it, in the PV controller's words", () => {
    const said =
      'PersistentVolumeClaim data-demo-0 is Pending (StorageClass nope): ProvisioningFailed: storageclass.storage.k8s.io "nope" not found';
    expect(claimTrouble(pvc, warning)).toEqual({ reason: 'ClaimPending', message: said });
    expect(pvcObserved(pvc, 1, { warning })).toMatchObject({ bound: false, trouble: { message: said } });
    // Bound: the Warnings it had before say nothing now.
    expect(claimTrouble({ ...pvc, status: { phase: 'Bound' } }, warning)).toBeUndefined();
  });
});

describe('a stuck member says why', () => {
  const member = { namespace: 'default', name: 'demo-0', uid: 'm0', cluster: 'demo' };
  const base = initialMemberContext({ member, bootstrap: true, medium: '' });
  const NOW = Date.parse('2026-11-21T12:00:00Z');

  it('its Stuck condition and Progressing message carry the reason; once unstuck, Stuck False', () => {
    const trouble = podTrouble(pulling)!;
    const c: MemberContext = {
      ...base,
      pvcBound: true,
      pod: { uid: 'p0', phase: 'Pending', ready: false, deleting: false, trouble },
    };
    const s = memberStatus(undefined, { path: 'bootstrapping.awaitingReady', context: c, generation: 1 }, NOW);
    const cond = (t: string, st = s) => st.conditions?.find((x) => x.type === t);
    expect(cond('Stuck')).toMatchObject({ status: 'True', reason: 'ImagePullBackOff', message: trouble.message });
    expect(cond('Progressing')?.message).toContain(trouble.message);
    // One Warning Event: when it turns stuck, not at every write after.
    expect(newlyStuck(undefined, s.conditions)?.reason).toBe('ImagePullBackOff');
    expect(newlyStuck(s.conditions, s.conditions)).toBeUndefined();
    const ok = memberStatus(
      s,
      {
        path: 'voter',
        context: { ...c, everRan: true, pod: { uid: 'p0', phase: 'Running', ready: true, deleting: false } },
        generation: 1,
      },
      NOW + 1000,
    );
    expect(cond('Stuck', ok)).toMatchObject({ status: 'False', reason: 'Unstuck' });
    expect(newlyStuck(s.conditions, ok.conditions)).toBeUndefined();
  });

  /** A member whose Pod has waited to be scheduled since NOW. */
  const waitingToBeScheduled = (): MemberContext => ({
    ...base,
    pvcBound: true,
    pod: { uid: 'p0', phase: 'Pending', ready: false, deleting: false, trouble: podTrouble(unschedulable)! },
    troubleSince: { reason: 'Unschedulable', at: NOW },
  });

  it('waiting to be scheduled or for a claim to bind is part of every start: Stuck only once it lasts 30 s', () => {
    const c = waitingToBeScheduled();
    const step = { path: 'bootstrapping.awaitingReady', context: c, generation: 1 };
    const fresh = memberStatus(undefined, step, NOW + 5_000);
    expect(fresh.conditions?.find((x) => x.type === 'Stuck')).toBeUndefined();
    expect(fresh.conditions?.find((x) => x.type === 'Progressing')?.message).toContain('not scheduled');
    const lasting = memberStatus(fresh, step, NOW + STUCK_AFTER_MS);
    expect(lasting.conditions?.find((x) => x.type === 'Stuck')).toMatchObject({
      status: 'True',
      reason: 'Unschedulable',
    });
  });

  it("a claim Pending past 30 s makes the member Stuck with the claim's Warning", () => {
    const c: MemberContext = {
      ...base,
      pvcBound: false,
      pvcTrouble: claimTrouble(pvc, warning)!,
      troubleSince: { reason: 'ClaimPending', at: NOW },
    };
    const s = memberStatus(
      undefined,
      { path: 'bootstrapping.awaitingReady', context: c, generation: 1 },
      NOW + STUCK_AFTER_MS,
    );
    expect(s.conditions?.find((x) => x.type === 'Stuck')).toMatchObject({
      status: 'True',
      reason: 'ClaimPending',
      message: expect.stringContaining(': ProvisioningFailed: storageclass.storage.k8s.io "nope" not found') as string,
    });
    expect(s.conditions?.find((x) => x.type === 'Progressing')?.message).toContain('"nope" not found');
  });

  it('a member waiting on a passing reason is due to be worked again when it would turn Stuck, and no longer once it has', () => {
    const c = waitingToBeScheduled();
    const trouble = podTrouble(unschedulable)!;
    // Nothing may come to wake it (the scheduler retries without changing the Pod's status).
    expect(stuckDueAt(c, NOW + 5_000)).toBe(NOW + STUCK_AFTER_MS);
    expect(stuckDueAt(c, NOW + STUCK_AFTER_MS)).toBeNull();
    // A reason that is Stuck at once, and no trouble at all, need no wake.
    const pulling = { ...trouble, reason: 'ErrImagePull' };
    expect(stuckDueAt({ ...c, pod: { ...c.pod!, trouble: pulling } }, NOW + 5_000)).toBeNull();
    expect(stuckDueAt(base, NOW)).toBeNull();
  });

  it("the cluster's Progressing names it at once, and Degraded says MemberStuck past the grace", () => {
    const r = bootstrap(3);
    const since = at();
    const stuck = {
      apiVersion: 'etcd-operator.dev/v1alpha1',
      kind: 'EtcdMember',
      metadata: { name: 'demo-2' },
      spec: {
        cluster: 'demo',
        version: '3.6.16',
        storage: { size: '1Gi' },
        bootstrap: false,
        initialCluster: '',
        dormant: false,
      },
      status: {
        state: 'restarting',
        conditions: [
          {
            type: 'Stuck',
            status: 'True',
            reason: 'CrashLoopBackOff',
            message: 'container etcd CrashLoopBackOff: back-off 40s',
            lastTransitionTime: new Date(since).toISOString().replace(/\.\d{3}Z$/, 'Z'),
          },
        ],
      },
    } as const;
    const healthy = (n: number) => ({ ...stuck, metadata: { name: `demo-${n}` }, status: { state: 'voter' } });
    const listed = membersListed('demo', [healthy(0), healthy(1), stuck] as never, at());
    expect(listed).toMatchObject({
      members: [{}, {}, { trouble: { reason: 'CrashLoopBackOff', since: Math.floor(since / 1000) * 1000 } }],
    });
    r.send(listed);
    expect(clusterCondition(r.status, 'Progressing')?.message).toContain(
      'EtcdMember demo-2: container etcd CrashLoopBackOff',
    );
    r.send(tick(UNWELL_GRACE_MS));
    expect(clusterCondition(r.status, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'MemberStuck',
      message: expect.stringContaining('EtcdMember demo-2 stuck since') as string,
    });
  });
});

describe('the live page', () => {
  it("lists a stuck member's and its cluster's why (index lines carry it)", () => {
    const trouble = { reason: 'ImagePullBackOff', message: 'container etcd ImagePullBackOff: no such tag' };
    const member = { machine: 'member', state: { context: { pod: { uid: 'p', deleting: false, trouble } } } };
    const cluster = {
      machine: 'cluster',
      state: { context: { members: [{ name: 'demo-0', deleting: false, trouble: { ...trouble, since: 0 } }] } },
    };
    expect(stuckOf(member as never)).toBe(trouble.message);
    expect(stuckOf(cluster as never)).toBe(`EtcdMember demo-0: ${trouble.message}`);
    expect(stuckOf({ machine: 'member', state: { context: { pod: null } } } as never)).toBeNull();
  });
});
