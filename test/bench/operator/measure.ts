/**
 * The operator's figures, measured as a user sees them: an EtcdCluster applied until it is
 * Available and Steady with every member ready (ClusterUnderTest.settled, which polls every
 * 200 ms), one more replica until settled again, and a member whose volume was wiped and whose
 * Pod was deleted until the cluster is settled with a new etcd member in its place. The floor
 * runs the same sizes in its own namespaces (floor.ts).
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import { pvcName, type KubeClients } from '../../../effects/kubernetes/index.ts';
import { memberName } from '../../../machines/policy.ts';
import { wipeVolume } from '../../../localcluster/storage/index.ts';
import { ClusterUnderTest, type Clients } from '../../e2e/etcd-cluster.ts';
import { createNamespace } from '../../effects/kubernetes/e2e-context.ts';
import { FloorCluster, type FloorJoin, type FloorRun } from './floor.ts';
import { poll, since, within } from './poll.ts';

/** Every measurement gives up after this long. */
const LIMIT_MS = 240_000;
/** How long an EtcdCluster's deletion may take before the bench strips its members' finalizers. */
const CLEANUP_MS = 120_000;
/** etcd refuses a membership change until every voter has been connected for 5 s: a step measured from rest waits this long first. */
export const REST_MS = 6000;
/** Name of the cluster in every namespace. */
export const NAME = 'bench';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The operator's figures of one cluster, ms; t0 is the apply's wall clock, to line up with the journal. */
export interface OperatorRun {
  readonly namespace: string;
  readonly size: number;
  readonly t0: number;
  readonly availableMs: number;
  readonly replacementMs?: number;
  readonly scaleUpMs?: number;
}

/** The floor's figures in one namespace: a build, and (size 3) one more member joined from rest. */
export interface FloorResult extends FloorRun {
  readonly namespace: string;
  readonly scaleUp?: FloorJoin;
}

const gone = (read: () => Promise<unknown>) => (): Promise<true | undefined> =>
  read().then(
    () => undefined,
    (err: { code?: number }) => (err.code === 404 ? true : undefined),
  );

/** Deletes a namespace and waits until it is gone. */
export async function dropNamespace(core: CoreV1Api, ns: string): Promise<void> {
  await core.deleteNamespace({ name: ns }).catch(() => undefined);
  await poll(
    `namespace ${ns} gone`,
    500,
    gone(() => core.readNamespace({ name: ns })),
    LIMIT_MS,
  );
}

/**
 * Deletes the EtcdCluster and waits until it is gone, before its namespace: a namespace deleted
 * under a running cluster leaves its EtcdMembers stuck (their Pods cannot be created again in a
 * terminating namespace). Gives up after CLEANUP_MS and strips the finalizers; says whether it had to.
 */
export async function dropCluster(kube: Clients, ns: string): Promise<boolean> {
  const cut = new ClusterUnderTest(kube, ns, NAME);
  await cut.delete();
  try {
    await poll(
      `EtcdCluster ${ns}/${NAME} gone`,
      200,
      gone(() => cut.get()),
      CLEANUP_MS,
    );
    return false;
  } catch {
    for (const m of await cut.members()) {
      const body = [{ op: 'remove', path: '/metadata/finalizers' }];
      await kube.custom
        .patchNamespacedCustomObject({
          group: 'etcd-operator.dev',
          version: 'v1alpha1',
          namespace: ns,
          plural: 'etcdmembers',
          name: m.metadata.name ?? '',
          body,
        })
        .catch(() => undefined);
    }
    return true;
  }
}

/** The floor at `size`; at 3 also one more member joined from rest (the floor of a scale-up step). */
export async function measureFloor(kube: KubeClients, ns: string, size: number): Promise<FloorResult> {
  await createNamespace(kube.core, ns);
  const floor = new FloorCluster(kube, ns, NAME);
  try {
    const run = await within(LIMIT_MS, `floor ${ns}`, floor.build(size));
    if (size !== 3) return { namespace: ns, ...run };
    await sleep(REST_MS);
    const scaleUp = await within(LIMIT_MS, `floor scale-up ${ns}`, floor.join());
    await floor.healthy();
    return { namespace: ns, ...run, scaleUp };
  } finally {
    floor.close();
  }
}

/** The static floor at `size`: every member started at once with the full initial cluster. */
export async function measureStaticFloor(kube: KubeClients, ns: string, size: number): Promise<FloorResult> {
  await createNamespace(kube.core, ns);
  const floor = new FloorCluster(kube, ns, NAME);
  try {
    return { namespace: ns, ...(await within(LIMIT_MS, `static floor ${ns}`, floor.buildWhole(size))) };
  } finally {
    floor.close();
  }
}

/** The operator at `size`: apply -> settled; at 3 also a member replacement, then a scale-up from rest. */
export async function measureOperator(
  kube: Clients,
  kubeconfig: string,
  ns: string,
  size: number,
  /** At size 3, also a replacement and a scale-up (the default). */
  extras = true,
): Promise<OperatorRun> {
  await createNamespace(kube.core, ns);
  const cut = new ClusterUnderTest(kube, ns, NAME);
  const t0 = Date.now();
  const mark = performance.now();
  await cut.create({ replicas: size });
  await within(LIMIT_MS, `${ns} Available`, cut.settled(size));
  const availableMs = since(mark);
  await cut.verify(size);
  if (size !== 3 || !extras) return { namespace: ns, size, t0, availableMs };

  await sleep(REST_MS);
  const replacementMs = await within(
    LIMIT_MS,
    `${ns} replacement`,
    replace(cut, kube.core, kubeconfig, memberName(NAME, 1)),
  );
  await sleep(REST_MS);
  const up = performance.now();
  await cut.scale(4);
  await within(LIMIT_MS, `${ns} scaled to 4`, cut.settled(4));
  const scaleUpMs = since(up);
  await cut.verify(4);
  return { namespace: ns, size, t0, availableMs, replacementMs, scaleUpMs };
}

/**
 * Wipes a member's volume, then deletes its Pod (etcd keeps running on the unlinked files
 * until then); the new Pod stops at check-data and the operator replaces the member. Ends once
 * etcd no longer lists the old member ID and the cluster is settled again.
 */
async function replace(cut: ClusterUnderTest, core: CoreV1Api, kubeconfig: string, victim: string): Promise<number> {
  const before = await cut.verify(3);
  const old = before.members.get(victim);
  if (!old) throw new Error(`${victim} is not a member: ${JSON.stringify([...before.members])}`);
  await wipeVolume(kubeconfig, cut.namespace, pvcName(victim));
  const t0 = performance.now();
  await core.deleteNamespacedPod({ namespace: cut.namespace, name: victim });
  await poll(
    `${victim} replaced`,
    200,
    async () => {
      const now = await cut.verify(3);
      return [...now.members.values()].includes(old) ? undefined : true;
    },
    LIMIT_MS,
  );
  await cut.settled(3);
  return since(t0);
}
