/**
 * What the crash sweep does to a cluster, as a user would: each scenario has a precondition
 * (replicas settled before, by a manager without failpoint), an action (what the user does,
 * done once the operator reports it done) and what must hold of etcd afterwards beyond the
 * common checks (voters, no learner, no duplicate or orphan member, keys read back).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, pvcName, VERSION } from '../../effects/kubernetes/meta.ts';
import { wipeVolume } from '../cluster/storage/index.ts';
import type { ClusterUnderTest, Converged } from '../e2e/etcd-cluster.ts';
import { clientsOf, until, untilGone } from '../effects/kubernetes/e2e-context.ts';

/** What an action may use. */
export interface ActionContext {
  readonly kubeconfig: string;
  readonly core: CoreV1Api;
  /** How long the operator gets to settle after each thing the user does. */
  readonly settleMs: number;
  /** What etcd said before the action (undefined for bootstrap). */
  readonly before?: Converged;
}

/** One scenario of the sweep. */
export interface Scenario {
  readonly name: string;
  /** Replicas settled before the action; undefined when the action creates the cluster. */
  readonly before?: number;
  /** Replicas the action ends at. */
  readonly after: number;
  /** Does what a user does and waits until the operator says it is done. */
  action(cut: ClusterUnderTest, ctx: ActionContext): Promise<void>;
  /** Throws when etcd after does not agree with etcd before in the way the scenario demands. */
  check?(before: Converged | undefined, after: Converged): void;
}

const scaleTo =
  (to: number): Scenario['action'] =>
  async (cut, ctx) => {
    await cut.scale(to);
    await cut.settled(to, ctx.settleMs);
  };

/** The first member by name, whose data the replacement scenario wipes. */
const victim = (before: Converged | undefined): [string, string] => {
  const first = [...(before?.members ?? new Map<string, string>())].sort(([a], [b]) => a.localeCompare(b))[0];
  if (!first) throw new Error('replacement: no member before');
  return first;
};

/**
 * A snapshot to a PVC, checked on the claim's volume, then deleted: the EtcdSnapshot goes only
 * after its file has. The snapshot and delete Jobs run on whatever the crashes do to the manager.
 */
async function snapshotToPVC(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  const { core, custom } = clientsOf(ctx.kubeconfig);
  const namespace = cut.namespace;
  const api = { group: GROUP, version: VERSION, namespace, plural: PLURAL.snapshot };
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name: 'backups' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
    },
  });
  await custom.createNamespacedCustomObject({
    ...api,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'EtcdSnapshot',
      metadata: { name: 'crash-snap' },
      spec: { clusterRef: { name: cut.name }, destination: { pvc: { claimName: 'backups' } } },
    },
  });
  const read = async () => (await custom.getNamespacedCustomObject({ ...api, name: 'crash-snap' })) as EtcdSnapshot;
  const done = await until(
    'EtcdSnapshot crash-snap finished',
    async () => {
      const s = await read();
      return s.status?.phase === 'Succeeded' || s.status?.phase === 'Failed' ? s : undefined;
    },
    ctx.settleMs,
  );
  if (done.status?.phase !== 'Succeeded') throw new Error(`EtcdSnapshot crash-snap: ${JSON.stringify(done.status)}`);
  const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'backups' });
  const pv = await core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
  const file = path.join(pv.spec?.hostPath?.path ?? '', (done.status.location ?? '').replace('pvc://backups/', ''));
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  if (sha256 !== done.status.sha256)
    throw new Error(`${file} has sha256 ${sha256}, the status says ${done.status.sha256}`);
  await custom.deleteNamespacedCustomObject({ ...api, name: 'crash-snap' });
  await untilGone('EtcdSnapshot crash-snap', read);
  if (existsSync(file)) throw new Error(`EtcdSnapshot crash-snap is gone and left ${file}`);
}

/** The scenarios, in the order the sweep runs them. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'bootstrap-3',
    after: 3,
    action: async (cut, ctx) => {
      await cut.create({ replicas: 3 });
      await cut.settled(3, ctx.settleMs);
    },
  },
  { name: 'scale-3-5', before: 3, after: 5, action: scaleTo(5) },
  { name: 'scale-5-3', before: 5, after: 3, action: scaleTo(3) },
  {
    name: 'scale-3-0-3',
    before: 3,
    after: 3,
    action: async (cut, ctx) => {
      await scaleTo(0)(cut, ctx);
      await scaleTo(3)(cut, ctx);
    },
    check: (before, after) => {
      if (after.clusterID !== before?.clusterID)
        throw new Error(`cluster ID ${before?.clusterID} became ${after.clusterID}`);
      const was = JSON.stringify([...(before?.members ?? [])].sort());
      const is = JSON.stringify([...after.members].sort());
      if (was !== is) throw new Error(`members ${was} became ${is}`);
    },
  },
  {
    name: 'replacement',
    before: 3,
    after: 3,
    action: async (cut, ctx) => {
      const [name, id] = victim(ctx.before);
      await wipeVolume(ctx.kubeconfig, cut.namespace, pvcName(name));
      await ctx.core.deleteNamespacedPod({ name, namespace: cut.namespace });
      // Steady at 3 holds before the loss is seen: wait for the old member to leave etcd first.
      await until(
        `member ${id} (${name}) gone from etcd`,
        async () => {
          const now = await cut.verify(3);
          return [...now.members.values()].includes(id) ? undefined : true;
        },
        ctx.settleMs,
      );
      await cut.settled(3, ctx.settleMs);
    },
    check: (before, after) => {
      const [name, id] = victim(before);
      if ([...after.members.values()].includes(id))
        throw new Error(`the wiped member ${name} (${id}) is still in etcd`);
    },
  },
  { name: 'snapshot', before: 1, after: 1, action: snapshotToPVC },
];
