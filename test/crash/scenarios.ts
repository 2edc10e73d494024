/**
 * What the crash sweep does to a cluster, as a user would: each scenario has a precondition
 * (replicas settled before, by a manager without failpoint), an action (what the user does,
 * done once the operator reports it done) and what must hold of etcd afterwards beyond the
 * common checks (voters, no learner, no duplicate or orphan member, keys read back).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, pvcName, VERSION } from '../../effects/kubernetes/meta.ts';
import { wipeVolume } from '../../localcluster/storage/index.ts';
import { ClusterUnderTest, type ClusterTLS, type Converged } from '../e2e/etcd-cluster.ts';
import { clientsOf, until, untilGone } from '../effects/kubernetes/e2e-context.ts';
import { keepLeaseOf, memberHeldBy } from '../e2e/hung-node.ts';
import { snapshotVerified } from '../e2e/s3-server.ts';
import { renewClusterSecrets, servedSerial, trustRolled, writeClusterCA } from '../e2e/tls-cluster.ts';
import { TestPki } from '../effects/etcd/test-pki.ts';
import type { ActionContext } from './action-context.ts';
import {
  abandonRestoreOf,
  apiOf,
  backupClaim,
  recoverAfterSnapshotGone,
  recoverFromSnapshot,
  recoverLostQuorum,
  recoverWhileSnapshotDeleted,
  restoredAnew,
  rollBackInPlace,
  snapshotOf,
  survivorKept,
} from './recovery-actions.ts';

/** The keys the sweep writes before the action (run.ts), read back from a restored cluster. */
export const CRASH_KEYS = { prefix: 'before-crash', count: 20 };

export type { ActionContext, NodeControl } from './action-context.ts';

/** One scenario of the sweep. */
export interface Scenario {
  readonly name: string;
  /** Replicas settled before the action; undefined when the action creates the cluster. */
  readonly before?: number;
  /** Replicas the action ends at. */
  readonly after: number;
  /** The etcd version the cluster is created with before the action (the default when absent). */
  readonly version?: string;
  /** With client and peer TLS from Secrets (test/e2e/tls-cluster.ts), reached over TLS. */
  readonly tls?: boolean;
  /** The storage the cluster is created with before the action (the default when absent). */
  readonly storage?: { readonly size: string; readonly storageClassName?: string };
  /** The podTemplate the cluster is created with before the action (none when absent). */
  readonly podTemplate?: EtcdCluster['spec']['podTemplate'];
  /** The etcd options the cluster is created with before the action (none when absent). */
  readonly options?: EtcdCluster['spec']['options'];
  /** Done to etcd after the keys are written and before the armed manager starts, with no manager running. */
  prepare?(cut: ClusterUnderTest, ctx: ActionContext): Promise<void>;
  /** Stops and starts nodes of the local cluster: its runs go one at a time, even with CRASH_PARALLEL. */
  readonly stopsNodes?: boolean;
  /**
   * Its action keeps a quorum throughout: recorded traffic (test/e2e/traffic.ts) runs from before
   * the armed manager starts until the cluster checks out, and the history checker's verdict on
   * it is part of converging.
   */
  readonly history?: boolean;
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

/** The file of a snapshot to the claim `backups`, on the host. */
async function snapshotFile(ctx: ActionContext, namespace: string, s: EtcdSnapshot): Promise<string> {
  const claim = await ctx.core.readNamespacedPersistentVolumeClaim({ namespace, name: 'backups' });
  const pv = await ctx.core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
  return path.join(pv.spec?.hostPath?.path ?? '', (s.status?.location ?? '').replace('pvc://backups/', ''));
}

/**
 * A snapshot to a PVC with spec.verify, checked on the claim's volume and proved by its verify
 * Job's restore, then deleted: the EtcdSnapshot goes only after its file has. The snapshot,
 * verify and delete Jobs run on whatever the crashes do to the manager.
 */
async function snapshotToPVC(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  const { custom } = clientsOf(ctx.kubeconfig);
  const api = apiOf(cut, PLURAL.snapshot);
  await backupClaim(ctx, cut.namespace);
  const done = await snapshotOf(cut, ctx, 'crash-snap', { verify: true });
  const file = await snapshotFile(ctx, cut.namespace, done);
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  if (sha256 !== done.status?.sha256)
    throw new Error(`${file} has sha256 ${sha256}, the status says ${done.status?.sha256}`);
  const proved = await snapshotVerified(clientsOf(ctx.kubeconfig), cut.namespace, 'crash-snap', ctx.settleMs);
  const verified = proved.status?.conditions?.find((c) => c.type === 'Verified');
  if (verified?.status !== 'True') throw new Error(`EtcdSnapshot crash-snap not verified: ${JSON.stringify(verified)}`);
  const read = () => custom.getNamespacedCustomObject({ ...api, name: 'crash-snap' });
  await custom.deleteNamespacedCustomObject({ ...api, name: 'crash-snap' });
  await untilGone('EtcdSnapshot crash-snap', read);
  if (existsSync(file)) throw new Error(`EtcdSnapshot crash-snap is gone and left ${file}`);
}

/**
 * A snapshot to a PVC, then a new 2-member cluster restored from it: its Job checks the
 * snapshot, the seed restores it, a learner joins; every key written before is there.
 */
async function restoreFromSnapshot(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await backupClaim(ctx, cut.namespace);
  await snapshotOf(cut, ctx, 'crash-snap');
  const restored = new ClusterUnderTest(clientsOf(ctx.kubeconfig), cut.namespace, `${cut.name}-restored`);
  await restored.create({ replicas: 2, bootstrap: { restore: { snapshotName: 'crash-snap' } } });
  await restored.settled(2, ctx.settleMs);
  await restored.verify(2);
  const read = await restored.readBack(CRASH_KEYS.prefix, CRASH_KEYS.count);
  if (read !== CRASH_KEYS.count) throw new Error(`the restored cluster has ${read} of the ${CRASH_KEYS.count} keys`);
}

/**
 * A schedule every minute keeping the last one: the sweep waits for its second good snapshot
 * and for the first to be pruned with its file. Runs, retention and their Jobs go on whatever
 * the crashes do to the manager; never two snapshots for one fire time.
 */
async function scheduleEveryMinute(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  const { custom } = clientsOf(ctx.kubeconfig);
  await backupClaim(ctx, cut.namespace);
  await custom.createNamespacedCustomObject({
    ...apiOf(cut, PLURAL.schedule),
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'EtcdSnapshotSchedule',
      metadata: { name: 'every-minute' },
      spec: {
        clusterRef: { name: cut.name },
        schedule: '* * * * *',
        destination: { pvc: { claimName: 'backups' } },
        retention: { keepLast: 1 },
      },
    },
  });
  const list = async () =>
    (
      (await custom.listNamespacedCustomObject({
        ...apiOf(cut, PLURAL.snapshot),
        labelSelector: 'etcd-operator.dev/schedule=every-minute',
      })) as { items: EtcdSnapshot[] }
    ).items;
  const seen = new Set<string>();
  const kept = await until(
    'a second scheduled snapshot, and the first pruned',
    async () => {
      const items = await list();
      for (const s of items) seen.add(s.metadata.name ?? '');
      const good = items.filter((s) => s.status?.phase === 'Succeeded' && !s.metadata.deletionTimestamp);
      return seen.size >= 2 && items.length === 1 && good.length === 1 ? good[0] : undefined;
    },
    ctx.settleMs + 120_000,
  );
  const file = await snapshotFile(ctx, cut.namespace, kept);
  if (!existsSync(file)) throw new Error(`the kept snapshot ${kept.metadata.name ?? ''} has no file ${file}`);
  const names = [...seen].sort();
  if (new Set(names.map((n) => n.replace(/-\d+$/, ''))).size !== 1)
    throw new Error(`unexpected snapshots ${names.join(', ')}`);
}

/** The same members with the same IDs before and after: restarted or grown in place, none replaced. */
const sameMembers: NonNullable<Scenario['check']> = (before, after) => {
  const was = JSON.stringify([...(before?.members ?? [])].sort());
  const is = JSON.stringify([...after.members].sort());
  if (was !== is) throw new Error(`members ${was} became ${is}`);
};

/** storage.size 64Mi -> 128Mi on the sized class: done once every claim asks for and shows 128Mi. */
async function growVolumes(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await cut.patchSpec({ storage: { size: '128Mi' } });
  await until(
    'every claim at 128Mi, VolumesExpanded True',
    async () => {
      const claims = await ctx.core.listNamespacedPersistentVolumeClaim({
        namespace: cut.namespace,
        labelSelector: `etcd-operator.dev/cluster=${cut.name}`,
      });
      const grown = claims.items.filter(
        (c) => c.spec?.resources?.requests?.['storage'] === '128Mi' && c.status?.capacity?.['storage'] === '128Mi',
      );
      const c = await cut.get();
      const expanded = c.status?.conditions?.some((x) => x.type === 'VolumesExpanded' && x.status === 'True');
      return claims.items.length === 3 && grown.length === 3 && expanded ? true : undefined;
    },
    ctx.settleMs,
  );
  await cut.settled(3, ctx.settleMs);
}

/** A value of 100 kB, to churn and fill databases with. */
const BIG = 'x'.repeat(100_000);

/**
 * Churn: ten keys overwritten 20 times (20 MB of history), then compacted away, as
 * auto-compaction or kube-apiserver would: the pages it frees stay allocated until a defrag.
 */
async function churn(cut: ClusterUnderTest): Promise<void> {
  const etcd = await cut.client();
  try {
    for (let round = 0; round < 20; round++)
      await Promise.all(Array.from({ length: 10 }, (_, i) => etcd.put(`churn/${i}`).value(BIG)));
    const revision = (await etcd.maintenance.status()).header.revision;
    await etcd.kv.compact({ revision, physical: true });
  } finally {
    etcd.close();
  }
}

/** Waits until the cluster's condition `type` has `status` (and `reason`, when given). */
const conditionIs = (cut: ClusterUnderTest, type: string, status: string, reason: string | undefined, ms: number) =>
  until(
    `${type} ${status}${reason ? ` (${reason})` : ''}`,
    async () => {
      const c = (await cut.get()).status?.conditions?.find((x) => x.type === type);
      return c?.status === status && (!reason || c.reason === reason) ? true : undefined;
    },
    ms,
  );

/**
 * A fragmented database (churn, prepared) past spec.maintenance.defrag.threshold: every member
 * defragmented, one at a time, the leader last. Done when Defragmented is True and Completed.
 */
async function defragmentPastThreshold(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await cut.patchSpec({ maintenance: { defrag: { threshold: { fragmentedBytes: '4Mi' } } } });
  await conditionIs(cut, 'Defragmented', 'True', 'Completed', ctx.settleMs);
  await cut.settled(3, ctx.settleMs);
}

/** History written until etcd refuses with NOSPACE (the cluster's quota is 16Mi). */
async function fillToQuota(cut: ClusterUnderTest): Promise<void> {
  const etcd = await cut.client();
  try {
    for (let i = 0; ; i++) {
      try {
        await etcd.put(`fill/${i % 10}`).value(BIG);
      } catch (err) {
        if (/database space exceeded/.test((err as Error).message)) return;
        throw err;
      }
    }
  } finally {
    etcd.close();
  }
}

/**
 * A database at its quota (NOSPACE raised, prepared): the operator compacts, defragments every
 * member and disarms the alarm on its own. Done when SpaceAlarm is False and a write goes through.
 */
async function recoverFromNoSpace(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  await conditionIs(cut, 'SpaceAlarm', 'False', undefined, ctx.settleMs);
  const etcd = await cut.client();
  try {
    await until(
      'a write goes through again',
      () =>
        etcd
          .put('after-nospace')
          .value('works')
          .options({ deadline: Date.now() + 5_000 })
          .then(
            () => true as const,
            () => undefined,
          ),
      ctx.settleMs,
    );
  } finally {
    etcd.close();
  }
  await cut.settled(3, ctx.settleMs);
}

/**
 * A renewal by hand (new leaves from the same CA over the client, peer and operator Secrets)
 * while the cluster grows from 3 to 4. A renewal alone runs no step of the operator (etcd loads
 * its certificate files at each handshake, and the manager builds new clients when its Secret's
 * resourceVersion changes), so the sweep kills the manager during the scale-up that runs while
 * the new leaves roll out: the 4th member starts with the new certificate while the others still
 * serve the old one, and a restarted manager reads the renewed Secret. Done when all 4 members
 * serve the renewed certificate on 2379 and 2380 (the node rewrites Secret volumes every 10 s).
 */
async function renewWhileGrowing(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  const { pki } = ctx;
  const creds = cut.tls.client;
  if (!pki || !creds) throw new Error('renewal: the scenario needs tls: true');
  const renewed = await renewClusterSecrets(clientsOf(ctx.kubeconfig), pki, cut.namespace, cut.name);
  await cut.scale(4);
  await cut.settled(4, ctx.settleMs);
  let stale: string[] = [];
  await until(
    `every member serving certificate ${renewed} on 2379 and 2380`,
    async () => {
      stale = [];
      for (const [pod, ip] of await cut.podIPs())
        for (const port of [2379, 2380]) {
          const served = await servedSerial(ip, port, creds).catch((err: Error) => err.message);
          if (served !== renewed) stale.push(`${pod}:${port} ${served}`);
        }
      return stale.length === 0 ? true : undefined;
    },
    ctx.settleMs,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; serving something else: ${stale.join(', ')}`);
  });
}

/**
 * The first step of a CA change (docs/security.md): ca.crt of the client, peer and operator
 * Secrets becomes a bundle of the old CA and a new one, the leaves kept. etcd reads its CA files
 * only at start, so the operator restarts the members one at a time (moving leadership first),
 * each back healthy and in sync before the next; the sweep kills the manager in that roll. Done
 * when every member's Pod was made again with the bundle's digest and the cluster is settled.
 */
async function changeCA(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  const from = (await cut.members())[0]?.spec.trust;
  await writeCABundle(cut, ctx, 'ca-change');
  // A roll begins at the manager's next read of the Secrets: a minute at most.
  await trustRolled(cut, ctx.core, from, 3, ctx.settleMs + 60_000);
}

/** Writes ca.crt of the cluster's Secrets as a bundle of its CA and a new one, the leaves kept. */
async function writeCABundle(cut: ClusterUnderTest, ctx: ActionContext, scenario: string): Promise<void> {
  const { pki } = ctx;
  if (!pki) throw new Error(`${scenario}: the scenario needs tls: true`);
  const next = await TestPki.create('etcd-operator-crash-new-ca-');
  try {
    const ca = (p: TestPki): string => readFileSync(path.join(p.dir, 'ca.crt'), 'utf8');
    await writeClusterCA(clientsOf(ctx.kubeconfig), cut.namespace, cut.name, ca(pki) + ca(next));
  } finally {
    next.remove();
  }
}

/**
 * CAs changed while the cluster is parked (docs/security.md): 3 -> 0, ca.crt of its Secrets
 * becomes a bundle of the old CA and a new one, and once the manager's minute between reads of
 * the Secrets is over, 0 -> 3. The members wake with the bundle's digest, set in the patch that
 * wakes them; the sweep kills the manager while it parks and wakes. Done when every member's Pod
 * was made with the new digest and the cluster is settled.
 */
async function changeCAParked(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  if (!ctx.pki) throw new Error('ca-change-parked: the scenario needs tls: true');
  const from = (await cut.members())[0]?.spec.trust;
  await scaleTo(0)(cut, ctx);
  await writeCABundle(cut, ctx, 'ca-change-parked');
  await new Promise((r) => setTimeout(r, 65_000));
  await cut.scale(3);
  await trustRolled(cut, ctx.core, from, 3, ctx.settleMs + 60_000);
}

/**
 * Kubernetes evicts a Pod from a NotReady or unreachable node after its toleration of that: 300 s
 * by default, 10 s for the node-loss scenario so that a run takes about a minute.
 */
const SHORT_TOLERATIONS = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].map((key) => ({
  key,
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 10,
}));

/** The member the last node-loss run stopped the node of, for its check. */
let nodeLostMember: [string, string] = ['', ''];

/**
 * The first member by name that runs alone on its node: stopping a node that runs two of three
 * members would take the quorum (after an earlier node loss or a scale-down, two can share one).
 */
async function loneMember(cut: ClusterUnderTest, ctx: ActionContext): Promise<[string, string, V1Pod]> {
  const members = [...(ctx.before?.members ?? new Map<string, string>())].sort(([a], [b]) => a.localeCompare(b));
  const pods = await Promise.all(
    members.map(([name]) => ctx.core.readNamespacedPod({ name, namespace: cut.namespace })),
  );
  const on = pods.map((p) => p.spec?.nodeName);
  const i = on.findIndex((node) => node && on.filter((n) => n === node).length === 1);
  if (i < 0) throw new Error(`node-loss: no member runs alone on its node (${on.join(', ')})`);
  const [name, id] = members[i]!;
  return [name, id, pods[i]!];
}

/**
 * The node of the first member that runs alone on one stops, as a machine dies: the member is
 * replaced on a live node (its Pod force-deleted once it is out of etcd), then the node starts
 * again and must run nothing of it. The node is started again whatever happens, so the next run
 * has three.
 */
async function loseANode(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  const { nodes } = ctx;
  if (!nodes)
    throw new Error('node-loss: needs the nodes of a local cluster the sweep started (no LOCALCLUSTER_KUBECONFIG)');
  const [name, id, pod] = await loneMember(cut, ctx);
  nodeLostMember = [name, id];
  const node = pod.spec?.nodeName;
  if (!node) throw new Error(`node-loss: Pod ${name} runs on no node`);
  await nodes.stop(node);
  try {
    await until(
      `member ${id} (${name}, on the stopped ${node}) gone from etcd`,
      async () => ([...(await cut.verify(3)).members.values()].includes(id) ? undefined : true),
      ctx.settleMs,
    );
    await cut.settled(3, ctx.settleMs);
  } finally {
    await nodes.start(node);
  }
  await until(
    `Pod ${name} of the lost member gone`,
    () =>
      ctx.core
        .listNamespacedPod({ namespace: cut.namespace, fieldSelector: `spec.nodeName=${node}` })
        .then((l) => (l.items.some((p) => p.metadata?.uid === pod.metadata?.uid) ? undefined : true)),
    ctx.settleMs,
  );
}

/** What the member at `ip` answers on /version: over https with the cluster's client TLS. */
function versionOf(ip: string, tls: ClusterTLS): Promise<{ etcdcluster?: string }> {
  const creds = tls.client;
  if (!creds) return fetch(`http://${ip}:2379/version`).then((r) => r.json() as Promise<{ etcdcluster?: string }>);
  const body = new Promise<string>((resolve, reject) => {
    const options = { host: ip, port: 2379, path: '/version', ca: creds.ca, cert: creds.cert, key: creds.key };
    const req = https.get({ ...options, ...(tls.serverName ? { servername: tls.serverName } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
    });
    req.setTimeout(5_000, () => req.destroy(new Error(`no answer from ${ip}:2379/version in 5 s`)));
    req.on('error', reject);
  });
  return body.then((text) => JSON.parse(text) as { etcdcluster?: string });
}

/**
 * A roll of 3 members from `from` to `to`, up or one minor down (etcd's downgrade): done when
 * every member answers on `to` and etcd's cluster version is its minor, restarted in place.
 */
const upgrade = (name: string, from: string, to: string): Scenario => ({
  name,
  before: 3,
  after: 3,
  version: from,
  history: true,
  action: async (cut, ctx) => {
    await cut.patchSpec({ version: to });
    await until(
      `every member on ${to}`,
      async () => {
        const c = await cut.get();
        const members = c.status?.members ?? [];
        return c.status?.observed?.step === 'Steady' && members.length === 3 && members.every((m) => m.version === to)
          ? true
          : undefined;
      },
      ctx.settleMs,
    );
    await cut.settled(3, ctx.settleMs);
    // The cluster version follows (a downgrade left enabled would hold it below the members).
    const minor = `${to.split('.').slice(0, 2).join('.')}.0`;
    await until(
      `cluster version ${minor} on every member`,
      async () => {
        const ips = [...(await cut.podIPs()).values()];
        const said = await Promise.all(ips.map((ip) => versionOf(ip, cut.tls).catch(() => ({}))));
        return said.length === 3 && said.every((v) => 'etcdcluster' in v && v.etcdcluster === minor) ? true : undefined;
      },
      ctx.settleMs,
    );
  },
  // Restarted in place: the same members with the same IDs, none replaced.
  check: (before, after) => {
    const was = JSON.stringify([...(before?.members ?? [])].sort());
    const is = JSON.stringify([...after.members].sort());
    if (was !== is) throw new Error(`members ${was} became ${is}`);
  },
});

/** The member the last bootstrap-node-loss run found placed on the lost node, for its check. */
let lostMember = '';

/**
 * A node lost under a member of a new 3-member cluster (test/e2e/node-loss-bootstrap.test.ts):
 * the last node hangs (its kubelet stopped, its Lease renewed here); the members, started at once,
 * prefer distinct nodes, so one is placed there (its claim's volume to be made there, or its Pod
 * bound there) and never starts while the two others start the cluster; then the node is deleted.
 * That member is replaced and the cluster goes on to 3 voters.
 * The node is started again whatever happens, and every node left schedulable.
 */
async function loseANodeWhileBootstrapping(cut: ClusterUnderTest, ctx: ActionContext): Promise<void> {
  const { nodes } = ctx;
  if (!nodes) throw new Error('bootstrap-node-loss: needs the nodes of a local cluster the sweep started');
  const names = (await ctx.core.listNode()).items.map((n) => n.metadata?.name ?? '').sort();
  const lost = names.at(-1)!;
  await nodes.stop(lost);
  const release = await keepLeaseOf(clientsOf(ctx.kubeconfig).kc, lost);
  try {
    await cut.create({ replicas: 3, ...ctx.spec });
    lostMember = await until(
      `a member of ${cut.name} placed on the hung ${lost}`,
      () => memberHeldBy(ctx.core, cut.namespace, cut.name, lost),
      ctx.settleMs,
    );
    release();
    await ctx.core.deleteNode({ name: lost });
    await cut.settled(3, ctx.settleMs);
  } finally {
    release();
    await nodes.start(lost);
  }
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
  {
    name: 'bootstrap-tls',
    after: 3,
    tls: true,
    action: async (cut, ctx) => {
      await cut.create({ replicas: 3, ...ctx.spec });
      await cut.settled(3, ctx.settleMs);
    },
  },
  {
    name: 'bootstrap-node-loss',
    after: 3,
    action: loseANodeWhileBootstrapping,
    check: (_, after) => {
      if (!lostMember || after.members.has(lostMember))
        throw new Error(`the member on the lost node (${lostMember || 'none found'}) is still a member`);
    },
  },
  // A new cluster of 5 started whole: five members created one step after the other, each window
  // between them a crash the plan journaled before the first must survive (same initial cluster).
  {
    name: 'bootstrap-5',
    after: 5,
    action: async (cut, ctx) => {
      await cut.create({ replicas: 5 });
      await cut.settled(5, ctx.settleMs);
    },
  },
  { name: 'renewal', before: 3, after: 4, tls: true, history: true, action: renewWhileGrowing },
  { name: 'ca-change', before: 3, after: 3, tls: true, history: true, action: changeCA, check: sameMembers },
  { name: 'ca-change-parked', before: 3, after: 3, tls: true, action: changeCAParked, check: sameMembers },
  { name: 'scale-3-5', before: 3, after: 5, history: true, action: scaleTo(5) },
  { name: 'scale-5-3', before: 5, after: 3, history: true, action: scaleTo(3) },
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
    history: true,
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
  upgrade('upgrade', '3.5.35', '3.6.16'),
  upgrade('upgrade-3.7', '3.6.16', '3.7.3'),
  upgrade('downgrade', '3.6.16', '3.5.35'),
  upgrade('downgrade-3.7', '3.7.3', '3.6.16'),
  {
    name: 'grow',
    before: 3,
    after: 3,
    history: true,
    storage: { size: '64Mi', storageClassName: 'local-sized' },
    action: growVolumes,
    check: sameMembers,
  },
  {
    name: 'node-loss',
    before: 3,
    after: 3,
    history: true,
    podTemplate: { spec: { tolerations: SHORT_TOLERATIONS } },
    stopsNodes: true,
    action: loseANode,
    check: (_, after) => {
      const [name, id] = nodeLostMember;
      if (!id || [...after.members.values()].includes(id))
        throw new Error(`the lost member ${name || 'none found'} (${id}) is still in etcd`);
    },
  },
  {
    name: 'defrag',
    before: 3,
    after: 3,
    history: true,
    storage: { size: '512Mi' },
    prepare: churn,
    action: defragmentPastThreshold,
    check: sameMembers,
  },
  {
    name: 'nospace',
    before: 3,
    after: 3,
    storage: { size: '64Mi' },
    options: { quotaBackendBytes: '16Mi' },
    prepare: fillToQuota,
    action: recoverFromNoSpace,
    check: sameMembers,
  },
  {
    name: 'quorum-recovery',
    before: 3,
    after: 3,
    action: recoverLostQuorum,
    check: survivorKept,
  },
  {
    name: 'snapshot-recovery',
    before: 3,
    after: 3,
    action: recoverFromSnapshot,
    check: restoredAnew,
  },
  // The stored snapshot wiped before the seed restores: refused, every member started again, then from the survivor.
  { name: 'snapshot-gone', before: 3, after: 3, action: recoverAfterSnapshotGone, check: survivorKept },
  // The EtcdSnapshot deleted once its seed exists: held, restored all the same, then deleted.
  { name: 'snapshot-held', before: 3, after: 3, action: recoverWhileSnapshotDeleted, check: restoredAnew },
  // A healthy cluster rolled back in place to a snapshot taken under the traffic, whose history
  // is checked as two epochs: the writes after the snapshot lost by design.
  { name: 'rollback', before: 3, after: 3, history: true, action: rollBackInPlace, check: restoredAnew },
  { name: 'snapshot', before: 1, after: 1, action: snapshotToPVC },
  { name: 'restore', before: 1, after: 1, action: restoreFromSnapshot },
  // A cluster deleted mid-restore: the EtcdSnapshot's machine lets go of its hold, at rest.
  { name: 'restore-abandoned', before: 1, after: 1, action: abandonRestoreOf },
  { name: 'schedule', before: 1, after: 1, action: scheduleEveryMinute },
];
