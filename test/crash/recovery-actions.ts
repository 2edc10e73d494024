/**
 * The crash sweep's snapshot and recovery actions: a snapshot to a PVC, the quorum lost for good
 * (two of three volumes wiped), and spec.recovery from the survivor or from the snapshot, as a
 * user does them (docs/recovery.md).
 */
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, pvcName, VERSION } from '../../effects/kubernetes/meta.ts';
import { wipeVolume } from '../../localcluster/storage/index.ts';
import type { ClusterUnderTest, Converged } from '../e2e/etcd-cluster.ts';
import { clientsOf, until, untilGone } from '../effects/kubernetes/e2e-context.ts';
import { abandonRestore, createSnapshot, snapshotFinished } from '../e2e/s3-server.ts';
import type { ActionContext } from './action-context.ts';

/**
 * Two of three members' volumes wiped and their Pods deleted at once, the quorum lost for good;
 * once the cluster says so, a recovery from the survivor (spec.recovery) until 3 voters run.
 */
export async function recoverLostQuorum(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await loseQuorum(cut, ctx);
  await recoverAs(cut, ctx, { requestID: 'crash-sweep' });
}

/** Two of three members' volumes wiped and their Pods deleted at once; until the cluster says the quorum is lost. */
async function loseQuorum(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  const [, ...lost] = [...(ctx.before?.members.keys() ?? [])].sort();
  for (const name of lost) await wipeVolume(ctx.kubeconfig, cut.namespace, pvcName(name));
  await Promise.all(lost.map((name) => ctx.core.deleteNamespacedPod({ name, namespace: cut.namespace })));
  await conditionShows(cut, ctx, 'quorum lost', 'Available', (x) => x.reason === 'QuorumLost');
}

/**
 * Asks for a recovery (spec.recovery) and waits until it is Recovered (this request, not an earlier
 * one) and 3 voters run; returns when Recovered was seen (process.hrtime.bigint()).
 */
async function recoverAs(
  cut: ClusterUnderTest,
  ctx: ActionContext,
  recovery: { requestID: string } & Record<string, unknown>,
): Promise<bigint> {
  await cut.patchSpec({ recovery });
  const request = `(request ${recovery.requestID})`;
  await conditionShows(cut, ctx, 'recovered', 'Recovered', (x) => x.status === 'True' && x.message.includes(request));
  const recovered = process.hrtime.bigint();
  await cut.settled(3, ctx.settleMs);
  return recovered;
}

/** Waits until the cluster has a condition of `type` that `holds`. */
const conditionShows = (
  cut: ClusterUnderTest,
  ctx: ActionContext,
  what: string,
  type: string,
  holds: (c: { status: string; reason: string; message: string }) => boolean,
) =>
  until(
    what,
    async () => ((await cut.get()).status?.conditions?.some((x) => x.type === type && holds(x)) ? true : undefined),
    ctx.settleMs,
  );

/**
 * A snapshot to a PVC, then the quorum lost for good (as above) and a recovery from the newest
 * snapshot: a new seed restored from it, grown back to 3; the keys written before it read back.
 */
export async function recoverFromSnapshot(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await backupClaim(ctx, cut.namespace);
  await snapshotOf(cut, ctx, 'crash-snap');
  await loseQuorum(cut, ctx);
  await recoverAs(cut, ctx, { requestID: 'crash-sweep', from: 'snapshot' });
}

/** How long the clients write after the snapshot before the rollback: writes for it to lose. */
const WRITES_AFTER_SNAPSHOT_MS = 3_000;

/**
 * A healthy cluster rolled back in place (docs/recovery.md): a snapshot to a PVC under the
 * clients' writes, more writes, then spec.recovery from it with rollback: true, until Recovered
 * and 3 voters run; the traffic is told (ctx.rolledBack), and the EtcdSnapshot is deleted after
 * (its file with it). Its own snapshot and request each time, so it can run again on one cluster.
 */
export async function rollBackInPlace(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await backupClaim(ctx, cut.namespace);
  const name = `rollback-${Date.now().toString(36)}`;
  const snapshot = await snapshotOf(cut, ctx, name);
  await new Promise((r) => setTimeout(r, WRITES_AFTER_SNAPSHOT_MS));
  const asked = process.hrtime.bigint();
  const recovery = { requestID: name, from: 'snapshot', snapshotName: name, rollback: true };
  const answered = await recoverAs(cut, ctx, recovery);
  ctx.rolledBack?.({ snapshotRevision: snapshot.status?.revision ?? 0, asked, answered });
  const ref = { ...apiOf(cut, PLURAL.snapshot), name };
  await clientsOf(ctx.kubeconfig).custom.deleteNamespacedCustomObject(ref);
  await snapshotGone(ctx, ref);
}

/**
 * As recoverFromSnapshot, but the stored snapshot is wiped from its claim out of band once the
 * recovery found (and holds) it and before its seed restores (the survivor's Pod held Terminating
 * by a finalizer of the test's meanwhile, so the seed waits for it): the seed cannot read it, the
 * recovery deletes the seed and ends refused, and every member it stopped starts again with its
 * data; then a recovery from the survivor, chosen by what it said before it stopped.
 */
export async function recoverAfterSnapshotGone(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await backupClaim(ctx, cut.namespace);
  await snapshotOf(cut, ctx, 'crash-snap');
  await loseQuorum(cut, ctx);
  const survivor = [...(ctx.before?.members.keys() ?? [])].sort()[0] ?? '';
  await holdPod(ctx, cut.namespace, survivor, true);
  await cut.patchSpec({ recovery: { requestID: 'crash-sweep', from: 'snapshot' } });
  const found = 'recovering from EtcdSnapshot crash-snap';
  await conditionShows(cut, ctx, 'the snapshot found', 'Recovered', (x) => x.message.startsWith(found));
  await wipeVolume(ctx.kubeconfig, cut.namespace, 'backups');
  await holdPod(ctx, cut.namespace, survivor, false);
  const refused = 'could not restore from EtcdSnapshot crash-snap';
  await conditionShows(cut, ctx, 'the recovery refused', 'Recovered', (x) => x.message.includes(refused));
  // Started again without a quorum, no member serves a client: the cluster rests, Degraded.
  const resting = 'etcd does not answer';
  await conditionShows(cut, ctx, 'the members started again', 'Progressing', (x) => x.message.startsWith(resting));
  // A merge patch: `from` said again, or the snapshot request's stays.
  await recoverAs(cut, ctx, { requestID: 'crash-sweep-2', from: 'survivor' });
}

/**
 * As recoverFromSnapshot, but the EtcdSnapshot is deleted as soon as the seed restoring from it
 * exists: the recovery holds it, so the seed restores from its stored file all the same, and once
 * the cluster is recovered the deletion finishes by itself (the stored file with it).
 */
export async function recoverWhileSnapshotDeleted(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await backupClaim(ctx, cut.namespace);
  await snapshotOf(cut, ctx, 'crash-snap');
  await loseQuorum(cut, ctx);
  const old = new Set(ctx.before?.members.keys() ?? []);
  await cut.patchSpec({ recovery: { requestID: 'crash-sweep', from: 'snapshot' } });
  const { custom } = clientsOf(ctx.kubeconfig);
  await until(
    'the seed made',
    async () => ((await cut.members()).some((m) => !old.has(m.metadata.name ?? '')) ? true : undefined),
    ctx.settleMs,
  );
  const snapshot = { ...apiOf(cut, PLURAL.snapshot), name: 'crash-snap' };
  await custom.deleteNamespacedCustomObject(snapshot);
  await conditionShows(cut, ctx, 'recovered', 'Recovered', (x) => x.status === 'True');
  await snapshotGone(ctx, snapshot);
  await cut.settled(3, ctx.settleMs);
}

/**
 * A snapshot to a PVC, then a new cluster restoring from it deleted midway, while it holds the
 * EtcdSnapshot (its check Job without a Pod: a quota of none): the snapshot's machine lets go of
 * that hold itself, and the EtcdSnapshot stays Succeeded, not deleted.
 */
export async function abandonRestoreOf(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await backupClaim(ctx, cut.namespace);
  await snapshotOf(cut, ctx, 'crash-snap');
  const kube = clientsOf(ctx.kubeconfig);
  const o = { snapshot: 'crash-snap', cluster: `${cut.name}-abandoned`, timeoutMs: ctx.settleMs };
  const released = await abandonRestore(kube, cut.namespace, o);
  if (released.metadata.deletionTimestamp || released.status?.phase !== 'Succeeded')
    throw new Error(`EtcdSnapshot crash-snap after the hold went: ${JSON.stringify(released.status)}`);
}

/** Waits (up to ctx.settleMs) until the EtcdSnapshot at `ref` is gone. */
const snapshotGone = (ctx: ActionContext, ref: ReturnType<typeof apiOf> & { name: string }): Promise<void> =>
  untilGone(
    `EtcdSnapshot ${ref.name} gone`,
    () => clientsOf(ctx.kubeconfig).custom.getNamespacedCustomObject(ref),
    ctx.settleMs,
  );

/** Puts the test's finalizer on Pod `name` (a deletion then waits for it), or takes it off. */
async function holdPod(ctx: ActionContext, namespace: string, name: string, hold: boolean): Promise<void> {
  const finalizers = (await ctx.core.readNamespacedPod({ name, namespace })).metadata?.finalizers ?? [];
  const value = hold ? [...finalizers, HOLD] : finalizers.filter((f) => f !== HOLD);
  await ctx.core.patchNamespacedPod({ name, namespace, body: [{ op: 'add', path: '/metadata/finalizers', value }] });
}

/** The finalizer holdPod puts on. */
const HOLD = 'etcd-operator.dev/crash-sweep-hold';

/** Throws unless the survivor (the first member by name) kept its ID and the cluster's, and the lost left etcd. */
export function survivorKept(before: Converged | undefined, after: Converged): void {
  const [survivor, ...lost] = [...(before?.members ?? [])].sort(([a], [b]) => a.localeCompare(b));
  if (after.clusterID !== before?.clusterID) throw new Error(`cluster ${before?.clusterID} became ${after.clusterID}`);
  if (after.members.get(survivor?.[0] ?? '') !== survivor?.[1])
    throw new Error(`the survivor ${survivor?.[0]} (${survivor?.[1]}) is not in etcd with its ID`);
  for (const [name, id] of lost)
    if ([...after.members.values()].includes(id)) throw new Error(`the lost member ${name} (${id}) is still in etcd`);
}

/** Throws unless the cluster is a new one (a new cluster ID) with none of the old member IDs in etcd: restored from a snapshot. */
export function restoredAnew(before: Converged | undefined, after: Converged): void {
  if (after.clusterID === before?.clusterID)
    throw new Error(`the restored cluster kept the old cluster ID ${after.clusterID}`);
  for (const [name, id] of before?.members ?? [])
    if ([...after.members.values()].includes(id)) throw new Error(`the old member ${name} (${id}) is still in etcd`);
}

/** The API coordinates of a kind of the operator in the cluster's namespace. */
export const apiOf = (cut: ClusterUnderTest, plural: string) => ({
  group: GROUP,
  version: VERSION,
  namespace: cut.namespace,
  plural,
});

/** Creates the claim `backups` for snapshots to a PVC (one there already is kept). */
export async function backupClaim(ctx: ActionContext, namespace: string): Promise<void> {
  await ctx.core
    .createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'backups' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
      },
    })
    .catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });
}

/** Takes an EtcdSnapshot of the cluster to the claim `backups` and waits until it is Succeeded. */
export async function snapshotOf(
  cut: ClusterUnderTest,
  ctx: ActionContext,
  name: string,
  extra: object = {},
): Promise<EtcdSnapshot> {
  const kube = clientsOf(ctx.kubeconfig);
  const destination = { pvc: { claimName: 'backups' } };
  await createSnapshot(kube, cut.namespace, name, { cluster: cut.name, destination, extra });
  const done = await snapshotFinished(kube, cut.namespace, name, ctx.settleMs);
  if (done.status?.phase !== 'Succeeded') throw new Error(`EtcdSnapshot ${name}: ${JSON.stringify(done.status)}`);
  return done;
}
