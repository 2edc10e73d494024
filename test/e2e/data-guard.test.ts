/**
 * A member's Pod refuses a wiped volume on the local cluster: a seed runs through the handlers,
 * its EtcdMember is marked dataInitialized, and a new Pod passes check-data on the intact volume
 * but stops at it (exit 3, a message a user can read) once the volume was wiped, leaving it empty.
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { CHECK_DATA_CONTAINER, kubernetesHandlers as h, patchMemberStatus } from '../../effects/kubernetes/index.ts';
import type { KubeContext } from '../../effects/kubernetes/index.ts';
import { seedInitialCluster } from '../../machines/policy.ts';
import { DATA_LOST_EXIT_CODE } from '../../manager/agent.ts';
import { dataLostObserved } from '../../manager/data-check.ts';
import { wipeVolume } from '../../localcluster/storage/index.ts';
import {
  clientsOf,
  contextFor,
  createCluster,
  createNamespace,
  deleteTestNamespace,
  until,
  untilGone,
} from '../effects/kubernetes/e2e-context.ts';

const run = promisify(execFile);
const ns = `data-guard-${process.pid}`;
const kube = clientsOf(inject('kubeconfig'));
const seed = 'guard-0';
let cluster: EtcdCluster;
const ctx = (): KubeContext => contextFor(kube, cluster);
const readPod = (): Promise<V1Pod> => kube.core.readNamespacedPod({ name: seed, namespace: ns });
const checkData = (pod: V1Pod) => pod.status?.initContainerStatuses?.find((s) => s.name === CHECK_DATA_CONTAINER);
const readyPod = async (): Promise<V1Pod | undefined> => {
  const pod = await readPod();
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? pod : undefined;
};

/** etcdctl against the seed's Pod IP from the host. */
async function etcdctl(...args: string[]): Promise<string> {
  const bin = (
    await run(path.join(import.meta.dirname, '..', '..', 'localcluster', 'tools', 'build.sh'), ['etcdctl', '3.6.16'])
  ).stdout.trim();
  const ip = (await readPod()).status?.podIP ?? '';
  return (await run(bin, [`--endpoints=http://${ip}:2379`, '--command-timeout=5s', ...args])).stdout.trim();
}

/** Deletes the seed's Pod, waits until it is gone, does `meanwhile`, and creates it again with createPod. */
async function recreatePod(meanwhile: () => Promise<void> = async () => {}): Promise<void> {
  await h.deletePod.run({ member: seed }, ctx());
  await untilGone(`Pod ${seed} gone`, readPod);
  await meanwhile();
  await h.createPod.run({ member: seed }, ctx());
}

describe.skipIf(!inject('clusterHasNode'))('a member Pod checks its data before etcd starts', () => {
  beforeAll(async () => {
    await createNamespace(kube.core, ns);
    cluster = await createCluster(kube.custom, ns, 'guard');
    await h.ensureServices.run({ cluster: 'guard' }, ctx());
    const initialCluster = seedInitialCluster(ctx().cluster, seed);
    await h.createMember.run({ member: seed, ordinal: 0, bootstrap: true, initialCluster, version: '3.6.16' }, ctx());
    await h.createPVC.run({ member: seed }, ctx());
    await h.createPod.run({ member: seed }, ctx());
  });

  afterAll(async () => {
    await deleteTestNamespace(kube, ns);
  });

  it('a new member passes the check with nothing expected, and its etcd starts and serves', async () => {
    const pod = await until('the seed Ready', readyPod);
    expect(pod.spec?.initContainers?.[0]?.args).not.toContain('--expect-data');
    expect(checkData(pod)?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(dataLostObserved(pod, 1)).toBeNull();
    await etcdctl('put', 'greeting', 'hello');
  });

  it('once etcd ran, a Pod on the intact volume passes --expect-data and keeps the data', async () => {
    await patchMemberStatus(ctx(), seed, { dataInitialized: true });
    await recreatePod();
    const pod = await until('the new seed Pod Ready', readyPod);
    expect(pod.spec?.initContainers?.[0]?.args).toContain('--expect-data');
    expect(checkData(pod)?.state?.terminated?.exitCode).toBe(0);
    expect(dataLostObserved(pod, 1)).toBeNull();
    expect(await until('the key read back', () => etcdctl('get', 'greeting', '--print-value-only'))).toBe('hello');
  });

  it('a Pod on a wiped volume stops at check-data with exit 3, etcd never starts, and the loss is observed', async () => {
    let volume = '';
    await recreatePod(async () => void (volume = await wipeVolume(inject('kubeconfig'), ns, `data-${seed}`)));
    const pod = await until('check-data to fail', async () => {
      const p = await readPod();
      const s = checkData(p);
      return [s?.state?.terminated, s?.lastState?.terminated].some((t) => t?.exitCode === DATA_LOST_EXIT_CODE)
        ? p
        : undefined;
    });
    const event = dataLostObserved(pod, 7);
    expect(event).toMatchObject({ type: 'member.data.lost', at: 7 });
    // The agent's own line, as the Pod status carries it (the local node: from the log tail).
    expect(event?.type === 'member.data.lost' && event.reason).toMatch(
      /^etcd data lost: \/var\/lib\/etcd\/data holds 0 WAL file\(s\), no member\/snap\/db, though etcd ran on this member's volume before; /,
    );
    expect(pod.status?.containerStatuses?.[0]?.state?.running).toBeUndefined();
    expect(pod.status?.conditions?.find((c) => c.type === 'Initialized')?.status).toBe('False');
    // Nothing started a new, empty etcd there: the volume stays as wiped.
    expect(await readdir(volume)).toEqual([]);
  });
});
