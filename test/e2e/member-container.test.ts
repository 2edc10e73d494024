/**
 * A member's container as its user meets it through Kubernetes, on the cluster's nodes (the
 * kubelet's and containerd's own behaviour, with the manager): etcd killed in its container is
 * restarted in place by the kubelet, and `kubectl logs --previous` shows the run that died (a
 * member on storage.medium Memory: the manager gives a member on a volume a new Pod after an
 * in-place restart, to check its data again, and the previous run's log goes with the old Pod); a
 * version whose image the registry lacks leaves the member Stuck with the kubelet's pull error,
 * and the EtcdCluster Degraded naming the member and that error; a storage class that does not
 * exist leaves it Stuck on its Pending claim, naming the class and quoting the claim's Warning Event.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { containerPid } from './container-process.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { kubectl } from './kube.ts';
import { withManager } from './manager-fixture.ts';

const hasNode = inject('clusterHasNode') && process.getuid?.() === 0;
const env = withManager('container');
const { ns, kube } = env;

type Conditioned = { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } };
const condition = (o: Conditioned, type: string) => o.status?.conditions?.find((c) => c.type === type);

/** The runs of etcd in a log: etcd logs "Running: " with its arguments once as it starts. */
const runs = (log: string): number => log.match(/"msg":"Running: "/g)?.length ?? 0;

describe.skipIf(!hasNode)('a member container, as the kubelet runs it', () => {
  env.hooks();

  it("etcd killed in a member's container restarts in place, and kubectl logs --previous shows the run that died", async () => {
    const demo = new ClusterUnderTest(kube, ns, 'restarts');
    await demo.create({ replicas: 1, storage: { size: '64Mi', medium: 'Memory' } });
    await demo.settled(1);
    await demo.write('before', 5);
    const pod = await kube.core.readNamespacedPod({ name: 'restarts-0', namespace: ns });
    process.kill(containerPid(pod, 'etcd'), 'SIGKILL');

    const restarted = await until('restarts-0 running etcd again, Ready', async () => {
      const p: V1Pod = await kube.core.readNamespacedPod({ name: 'restarts-0', namespace: ns });
      const etcd = p.status?.containerStatuses?.find((c) => c.name === 'etcd');
      return etcd?.restartCount === 1 && etcd.ready ? etcd : undefined;
    });
    expect(restarted.lastState?.terminated).toMatchObject({ exitCode: 137 });
    // The same Pod: the kubelet restarted the container; its data, in the Pod's memory, stayed.
    expect((await kube.core.readNamespacedPod({ name: 'restarts-0', namespace: ns })).metadata?.uid).toBe(
      pod.metadata?.uid,
    );
    const previous = await kubectl(['-n', ns, 'logs', 'restarts-0', '-c', 'etcd', '--previous'], { check: true });
    const current = await kubectl(['-n', ns, 'logs', 'restarts-0', '-c', 'etcd'], { check: true });
    expect([runs(previous.stdout), runs(current.stdout)]).toEqual([1, 1]);
    expect(previous.stdout).not.toBe(current.stdout);
    await demo.settled(1);
    expect(await demo.readBack('before', 5)).toBe(5);
    await demo.delete();
  });

  it('a version whose image cannot be pulled leaves the member Stuck saying so, and the cluster Degraded naming it', async () => {
    const image = 'quay.io/coreos/etcd:v3.6.99';
    const demo = new ClusterUnderTest(kube, ns, 'nopull');
    await demo.create({ replicas: 1, version: '3.6.99' });
    const stuck = await until('nopull-0 Stuck', async () => {
      const m = (await demo.members()).find((x) => x.metadata.name === 'nopull-0');
      const c = m && condition(m, 'Stuck');
      return c?.status === 'True' ? c : undefined;
    });
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(stuck.reason);
    // The kubelet's words, naming the image and the registry's answer.
    expect(stuck.message).toMatch(/^container etcd (ErrImagePull|ImagePullBackOff): /);
    expect(stuck.message).toContain(image);
    expect(stuck.message).toContain('not found');

    const degraded = await until('nopull Degraded by its stuck member', async () => {
      const c = condition(await demo.get(), 'Degraded');
      return c?.status === 'True' && c.reason === 'MemberStuck' ? c : undefined;
    });
    expect(degraded.message).toMatch(/^EtcdMember nopull-0 stuck since \S+ \((ErrImagePull|ImagePullBackOff)\): /);
    expect(degraded.message).toContain(image);
    await demo.delete();
  });

  it("a storage class that does not exist leaves the member Stuck on its Pending claim with the claim's Warning, and the cluster Degraded saying it", async () => {
    const klass = `missing-${Date.now().toString(36)}`;
    const demo = new ClusterUnderTest(kube, ns, 'noclass');
    await demo.create({ replicas: 1, storage: { size: '64Mi', storageClassName: klass } });
    const stuck = await until('noclass-0 Stuck', async () => {
      const m = (await demo.members()).find((x) => x.metadata.name === 'noclass-0');
      const c = m && condition(m, 'Stuck');
      return c?.status === 'True' ? c : undefined;
    });
    // Waiting for a claim to bind is part of every start: Stuck once it has lasted 30 s.
    expect(stuck.reason).toBe('ClaimPending');
    // The claim's own Warning, as the PV controller records it (kubectl describe pvc shows it too).
    const why = `storageclass.storage.k8s.io "${klass}" not found`;
    expect(stuck.message).toBe(
      `PersistentVolumeClaim data-noclass-0 is Pending (StorageClass ${klass}): ProvisioningFailed: ${why}`,
    );
    const degraded = await until('noclass Degraded by its stuck member', async () => {
      const c = condition(await demo.get(), 'Degraded');
      return c?.status === 'True' && c.reason === 'MemberStuck' ? c : undefined;
    });
    expect(degraded.message).toMatch(/^EtcdMember noclass-0 stuck since \S+ \(ClaimPending\): /);
    expect(degraded.message).toContain(why);
    await demo.delete();
  });
});
