/**
 * The operator in namespaces whose PodSecurity admission enforces the `restricted` standard
 * (the real API server's plugin; the kubelet runs each container as its securityContext's
 * user): a 3-member cluster becomes Available, a snapshot Job to a PVC and a restore from it
 * succeed, etcd runs as uid 65532 on data files it owns, and a Pod without the securityContext
 * is refused. Then the chart's manager Deployment, installed into such a namespace, becomes
 * Ready running as 65532.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { containerSecurityContext, podSecurityContext, RUN_AS_ID } from '../../effects/kubernetes/build-security.ts';
import { chartDir, helm } from '../charts/helm.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';
import { createSnapshot, snapshotFinished } from './s3-server.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('pod-security');
const { ns, kube } = env;
const KEYS = 20;
/** The labels that make the API server enforce the standard in a namespace. */
const RESTRICTED = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
};

let demo: ClusterUnderTest;

/** Creates a namespace enforcing `restricted` and waits for its default ServiceAccount. */
async function createRestrictedNamespace(core: CoreV1Api, name: string): Promise<void> {
  await core.createNamespace({ body: { metadata: { name, labels: RESTRICTED } } });
  await until(`ServiceAccount default in ${name}`, () =>
    core.readNamespacedServiceAccount({ name: 'default', namespace: name }),
  );
}

/** Pids of the processes whose command line holds every one of `args`. */
function processesWith(...args: string[]): number[] {
  const commandLine = (pid: string): string[] => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return []; // gone since the listing
    }
  };
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      const argv = commandLine(pid);
      return args.every((a) => argv.includes(a));
    })
    .map(Number);
}

/** Real, effective, saved and filesystem uids and gids of a process, and its supplementary groups. */
function credentials(pid: number): { uid: number[]; gid: number[]; groups: number[] } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const ids = (field: string) =>
    (new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '').split(/\s+/).filter(Boolean).map(Number);
  return { uid: ids('Uid'), gid: ids('Gid'), groups: ids('Groups') };
}

/** Every file and directory under dir (dir included) whose owner is not uid:gid. */
function notOwnedBy(dir: string, uid: number, gid: number): string[] {
  const out: string[] = [];
  const walk = (p: string): void => {
    const st = statSync(p);
    if (st.uid !== uid || st.gid !== gid) out.push(`${p} ${st.uid}:${st.gid}`);
    if (st.isDirectory()) for (const name of readdirSync(p)) walk(path.join(p, name));
  };
  walk(dir);
  return out;
}

/** The host directory of a claim's volume (the local storage provisioner's hostPath). */
async function claimDir(namespace: string, claim: string): Promise<string> {
  const pvc = await kube.core.readNamespacedPersistentVolumeClaim({ namespace, name: claim });
  const pv = await kube.core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
  return pv.spec?.hostPath?.path ?? pv.spec?.local?.path ?? '';
}

/** Whether a claim's volume is a hostPath one (the local storage provisioner's). */
async function isHostPath(namespace: string, claim: string): Promise<boolean> {
  const pvc = await kube.core.readNamespacedPersistentVolumeClaim({ namespace, name: claim });
  return (await kube.core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' })).spec?.hostPath !== undefined;
}

/** An etcd Pod as anyone would write it: nothing about users, privileges or seccomp. */
const plainPod = (name: string): V1Pod => ({
  metadata: { name },
  spec: {
    containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.6.16', command: ['/usr/local/bin/etcd'] }],
  },
});

describe.skipIf(!hasNode)('pod security: the operator in a namespace enforcing restricted', () => {
  env.hooks({ labels: RESTRICTED });
  beforeAll(async () => {
    await kube.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'backups' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
      },
    });
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await demo.create({ replicas: 3 });
    await demo.settled(3);
    await demo.write('before', KEYS);
  });

  it('the namespace enforces restricted: a Pod without a securityContext is refused, ours is admitted', async () => {
    const refused = await kube.core.createNamespacedPod({ namespace: ns, body: plainPod('plain') }).then(
      () => undefined,
      (err: { code?: number; body?: unknown }) => err,
    );
    expect(refused?.code, 'a plain Pod refused').toBe(403);
    // The API server's Status, as the client hands it over (a JSON string): its message says why.
    const status = (typeof refused?.body === 'string' ? JSON.parse(refused.body) : refused?.body) as {
      message?: string;
    };
    const why = status.message ?? '';
    expect(why).toContain('violates PodSecurity "restricted:latest"');
    for (const field of [
      'allowPrivilegeEscalation != false',
      'unrestricted capabilities',
      'runAsNonRoot != true',
      'seccompProfile',
    ])
      expect(why).toContain(field);
    // The same Pod with the operator's securityContext passes (a server-side dry run: nothing runs).
    const admitted = plainPod('with-ours');
    admitted.spec!.securityContext = podSecurityContext();
    admitted.spec!.containers[0]!.securityContext = containerSecurityContext();
    await kube.core.createNamespacedPod({ namespace: ns, body: admitted, dryRun: 'All' });
  });

  it('a 3-member cluster becomes Available, each member Pod admitted as restricted and running as 65532', async () => {
    const c = await demo.get();
    expect(c.status?.conditions?.find((x) => x.type === 'Available')?.status).toBe('True');
    await demo.verify(3);
    expect(await demo.readBack('before', KEYS)).toBe(KEYS);
    const pods = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'etcd-operator.dev/cluster=demo' });
    expect(pods.items).toHaveLength(3);
    for (const pod of pods.items) {
      expect(pod.spec?.securityContext, pod.metadata?.name).toMatchObject({ runAsNonRoot: true, runAsUser: RUN_AS_ID });
      const init = pod.status?.initContainerStatuses ?? [];
      // check-data ran as 65532 too, and passed.
      expect(
        init.map((s) => [s.name, s.state?.terminated?.exitCode]),
        pod.metadata?.name,
      ).toEqual([['check-data', 0]]);
    }
  });

  it('etcd runs as uid and gid 65532 with fsGroup 65532, and every file of its data is its own', async () => {
    for (const member of ['demo-0', 'demo-1', 'demo-2']) {
      const pids = processesWith(
        `--name=${member}`,
        `--initial-advertise-peer-urls=http://${member}.demo.${ns}.svc:2380`,
      );
      expect(pids, `etcd processes of ${member}`).toHaveLength(1);
      const { uid, gid, groups } = credentials(pids[0]!);
      expect(uid, `${member} uids`).toEqual([RUN_AS_ID, RUN_AS_ID, RUN_AS_ID, RUN_AS_ID]);
      expect(gid, `${member} gids`).toEqual([RUN_AS_ID, RUN_AS_ID, RUN_AS_ID, RUN_AS_ID]);
      expect(groups, `${member} groups`).toContain(RUN_AS_ID);
      const volume = await claimDir(ns, `data-${member}`);
      // fsGroup reaches a volume whose plugin manages ownership (its root the group's and setgid);
      // the kubelet leaves a hostPath volume as its provisioner made it (open to all). Either way,
      // what etcd wrote is 65532's.
      if (!(await isHostPath(ns, `data-${member}`))) {
        expect(statSync(volume).gid).toBe(RUN_AS_ID);
        expect(statSync(volume).mode & 0o2070).toBe(0o2070);
      }
      expect(readdirSync(path.join(volume, 'data'))).toContain('member');
      expect(notOwnedBy(path.join(volume, 'data'), RUN_AS_ID, RUN_AS_ID)).toEqual([]);
    }
  });

  it('a snapshot Job to a PVC succeeds there, writing a file that is 65532’s', async () => {
    await createSnapshot(kube, ns, 'restricted', { cluster: 'demo', destination: { pvc: { claimName: 'backups' } } });
    const s = await snapshotFinished(kube, ns, 'restricted', 120_000);
    expect(s.status?.phase, JSON.stringify(s.status)).toBe('Succeeded');
    const file = path.join(await claimDir(ns, 'backups'), (s.status?.location ?? '').replace('pvc://backups/', ''));
    expect([statSync(file).uid, statSync(file).gid]).toEqual([RUN_AS_ID, RUN_AS_ID]);
  });

  it('a cluster restored from it (restore-verify Job, restore init containers) becomes Available with every key', async () => {
    const restored = new ClusterUnderTest(kube, ns, 'restored');
    await restored.create({ replicas: 1, bootstrap: { restore: { snapshotName: 'restricted' } } });
    await restored.settled(1);
    expect(await restored.readBack('before', KEYS)).toBe(KEYS);
    await restored.delete();
  });
});

describe.skipIf(!hasNode)('pod security: the chart in a namespace enforcing restricted', () => {
  const release = `etcd-operator-pss-${process.pid}`;
  const home = mkdtempSync(path.join(os.tmpdir(), 'chart-pss-'));
  const kubeconfig = () => ['--kubeconfig', inject('kubeconfig')];
  const managerPods = async () =>
    (
      await kube.core.listNamespacedPod({
        namespace: `${ns}-chart`,
        labelSelector: `app.kubernetes.io/instance=${release}`,
      })
    ).items;
  beforeAll(async () => {
    await createRestrictedNamespace(kube.core, `${ns}-chart`);
    // Its own namespace only (a Role), so it never acts on another test's clusters.
    await helm(
      [
        ...['install', release, chartDir, '-n', `${ns}-chart`],
        ...['listen.host=$(POD_IP)', `watchNamespace=${ns}-chart`].flatMap((v) => ['--set', v]),
        ...kubeconfig(),
      ],
      { home },
    );
  });
  afterAll(async () => {
    await helm(['uninstall', release, '-n', `${ns}-chart`, '--ignore-not-found', ...kubeconfig()], { home }).catch(
      () => undefined,
    );
    await kube.core.deleteNamespace({ name: `${ns}-chart` }).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  it('the manager Pod is admitted, becomes Ready, and runs as 65532 with its journal its own', async () => {
    const ready = await until('the chart manager Ready', async () =>
      (await managerPods()).find((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
    );
    expect(ready.spec?.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: RUN_AS_ID, fsGroup: RUN_AS_ID });
    const pids = processesWith('/opt/etcd-operator/manager/cli.ts', `--lease-namespace=${ns}-chart`);
    expect(pids, 'manager processes').toHaveLength(1);
    expect(credentials(pids[0]!).uid).toEqual([RUN_AS_ID, RUN_AS_ID, RUN_AS_ID, RUN_AS_ID]);
    const journal = path.join(await claimDir(`${ns}-chart`, `${release}-journal`), 'journal.db');
    expect(statSync(journal).uid).toBe(RUN_AS_ID);
  });
});
