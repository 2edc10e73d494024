/**
 * Recovery from a quorum lost for good, from a snapshot (spec.recovery from: snapshot,
 * docs/recovery.md): a 3-member cluster under a writer is snapshotted to a PVC, writes go on, and
 * two members' volumes are lost for good. Asked while the quorum stood, and naming a snapshot that
 * does not exist, the recovery is refused with nothing changed; asked once the quorum is lost, a
 * new seed is restored from the newest snapshot and grown back to 3 under the same name and
 * client Service. Every key acknowledged before the snapshot reads back, none acknowledged after
 * it does, and a watcher resuming from the old cluster's revisions sees a compaction. Then the
 * healthy cluster is rolled back in place to a later snapshot, only once rollback says so.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { clientsOf, until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';
import { diagnose, loseMember, moreAcked, resumeAt, serviceClient, Writer } from './recovery-kit.ts';
import { createSnapshot, snapshotFinished } from './s3-server.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('snaprecover');
const { ns, kube } = env;
let demo: ClusterUnderTest;

/** The Recovered condition, when there is one. */
const recovered = async () => (await demo.get()).status?.conditions?.find((c) => c.type === 'Recovered');

/** Waits until the Recovered condition mentions `requestID`; returns it. */
const answered = (requestID: string, timeoutMs = 60_000) =>
  until(
    `${requestID} answered`,
    async () => {
      const c = await recovered();
      return c?.message.includes(`request ${requestID}`) && c.reason !== 'Recovering' ? c : undefined;
    },
    timeoutMs,
  );

describe.skipIf(!hasNode)('manager: recovery from a quorum lost for good, from a snapshot', () => {
  env.hooks();
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
  });

  it('refuses while the quorum stands and for a missing snapshot, then restores the newest snapshot in place: keys before it kept, after it lost, watchers see a compaction', async () => {
    const before = await demo.verify(3);
    const { etcd, ip } = await serviceClient(kube, ns, 'demo');
    const writer = new Writer();
    writer.start(etcd);
    try {
      await moreAcked(writer, 20);
      const ackedBeforeSnapshot = [...writer.acked];
      await createSnapshot(clientsOf(inject('kubeconfig')), ns, 'before-loss', {
        cluster: 'demo',
        destination: { pvc: { claimName: 'backups' } },
      });
      const snapshot: EtcdSnapshot = await snapshotFinished(
        clientsOf(inject('kubeconfig')),
        ns,
        'before-loss',
        180_000,
      );
      expect(snapshot.status?.phase).toBe('Succeeded');
      const snapshotRevision = snapshot.status?.revision ?? 0;
      const ackedAtSnapshot = writer.acked.length;
      await moreAcked(writer, 20);

      // Asked while every voter answers: refused, nothing changed.
      await demo.patchSpec({ recovery: { requestID: 'too-early', from: 'snapshot' } });
      expect((await answered('too-early')).message).toContain('a quorum answers (3 of 3 voters healthy)');
      expect((await demo.verify(3)).members).toEqual(before.members);

      const [, first = '', second = ''] = [...before.members.keys()];
      await loseMember(kube, ns, first);
      await loseMember(kube, ns, second);
      await until(
        'quorum lost',
        async () => {
          const available = (await demo.get()).status?.conditions?.find((c) => c.type === 'Available');
          return available?.reason === 'QuorumLost' ? available : undefined;
        },
        120_000,
      );
      await writer.stop();
      const ackedAfterSnapshot = writer.acked.slice(ackedAtSnapshot);
      // The highest revision a client of the old cluster saw.
      const lastSeen = writer.revision;
      console.log(
        `snapshot recovery: ${ackedBeforeSnapshot.length} writes acknowledged before the snapshot (revision ${snapshotRevision}), ${ackedAfterSnapshot.length} after it`,
      );

      // A snapshot that does not exist: refused, the members untouched (none made dormant).
      await demo.patchSpec({ recovery: { requestID: 'no-such', from: 'snapshot', snapshotName: 'no-such' } });
      const missing = await answered('no-such');
      expect(missing.reason).toBe('RecoveryRefused');
      expect(missing.message).toContain('EtcdSnapshot');
      expect((await demo.members()).every((m) => m.spec.dormant !== true)).toBe(true);

      const asked = Date.now();
      await demo.patchSpec({ recovery: { requestID: 'from-snapshot', from: 'snapshot', snapshotName: null } });
      const running = await until(
        'recovering said',
        async () => {
          const c = await recovered();
          return c?.reason === 'Recovering' || (c?.status === 'True' && c.message.includes('request from-snapshot'))
            ? c
            : undefined;
        },
        60_000,
      );
      // Said before and after: the snapshot's revision, and what is lost.
      expect(running.message).toContain('before-loss');
      const done = await answered('from-snapshot', 600_000);
      const recoveredAt = Date.now();
      expect(done.status).toBe('True');
      expect(done.message).toContain(`EtcdSnapshot before-loss's at revision ${snapshotRevision}`);
      expect(done.message).toContain(`every write after revision ${snapshotRevision} is lost`);
      await demo.settled(3);
      const after = await demo.verify(3);
      console.log(
        `snapshot recovery: restored seed answering and old members deleted in ${((recoveredAt - asked) / 1000).toFixed(1)} s, 3 voters Available in ${((Date.now() - asked) / 1000).toFixed(1)} s`,
      );
      // A new cluster (new IDs, no member of before), under the same name and client Service.
      for (const name of before.members.keys()) expect([...after.members.keys()]).not.toContain(name);
      expect(after.clusterID).not.toBe(before.clusterID);

      const again = await serviceClient(kube, ns, 'demo');
      expect(again.ip).toBe(ip);
      try {
        const kv = await again.etcd.getAll().prefix('key/').strings();
        const lostBefore = ackedBeforeSnapshot.filter((k) => kv[k] !== `value-${Number(k.slice(4))}`);
        const keptAfter = ackedAfterSnapshot.filter((k) => k in kv);
        console.log(
          `snapshot recovery: ${Object.keys(kv).length} keys after; of those acknowledged before the snapshot ${lostBefore.length} missing; of those after it ${keptAfter.length} present`,
        );
        expect(lostBefore).toEqual([]);
        // Acknowledged after the snapshot was stored: lost, as the condition said.
        expect(keptAfter).toEqual([]);
        const put = await again.etcd.put('key/after').value('written after the recovery').exec();
        // Revisions go on from the snapshot's + 1,000,000,000: past any the old cluster reached.
        expect(Number(put.header.revision)).toBeGreaterThan(1_000_000_000 + snapshotRevision);
        expect(Number(put.header.revision)).toBeGreaterThan(lastSeen);
        // A watcher resuming where the old cluster was is told of a compaction, never given older revisions.
        // The old cluster's revisions are compacted: a resumed watch is canceled (never handed events
        // under them) and a read at one is refused as compacted, so a client relists.
        const resumed = await resumeAt(again.etcd, 'key/', lastSeen + 1);
        expect(resumed.watch).toMatch(/^Watcher canceled/);
        expect(resumed.read).toContain('compacted');
      } finally {
        again.etcd.close();
      }
    } catch (err) {
      await diagnose(env.manager.lines, demo, 'snapshot recovery');
      throw err;
    } finally {
      await writer.stop();
      etcd.close();
    }
  }, 900_000);
  it('rolls the healthy cluster back to a named snapshot in place only when rollback says so: writes after it gone, watchers see a compaction', async () => {
    const before = await demo.verify(3);
    const { etcd, ip } = await serviceClient(kube, ns, 'demo');
    const writer = new Writer('roll/');
    writer.start(etcd);
    try {
      await moreAcked(writer, 20);
      const ackedBeforeSnapshot = [...writer.acked];
      const kubeClients = clientsOf(inject('kubeconfig'));
      const destination = { pvc: { claimName: 'backups' } };
      await createSnapshot(kubeClients, ns, 'before-rollback', { cluster: 'demo', destination });
      const snapshot = await snapshotFinished(kubeClients, ns, 'before-rollback', 180_000);
      expect(snapshot.status?.phase).toBe('Succeeded');
      const snapshotRevision = snapshot.status?.revision ?? 0;
      const ackedAtSnapshot = writer.acked.length;
      await moreAcked(writer, 20);

      // A snapshot named on a healthy cluster without rollback: refused, nothing changed.
      await demo.patchSpec({ recovery: { requestID: 'no-ack', from: 'snapshot', snapshotName: 'before-rollback' } });
      expect((await answered('no-ack')).message).toContain('set rollback: true with snapshotName');
      expect((await demo.verify(3)).members).toEqual(before.members);
      // rollback without the snapshot named: the API server refuses it.
      await expect(
        demo.patchSpec({ recovery: { requestID: 'typo', from: 'snapshot', snapshotName: null, rollback: true } }),
      ).rejects.toThrow(/recovery.rollback needs from: snapshot and snapshotName/);

      await writer.stop();
      const ackedAfterSnapshot = writer.acked.slice(ackedAtSnapshot);
      const lastSeen = writer.revision;
      const asked = Date.now();
      await demo.patchSpec({
        recovery: { requestID: 'rollback', from: 'snapshot', snapshotName: 'before-rollback', rollback: true },
      });
      const done = await answered('rollback', 600_000);
      const recoveredAt = Date.now();
      expect(done.status).toBe('True');
      expect(done.message).toContain(
        `every write after revision ${snapshotRevision} is lost; the cluster was at revision`,
      );
      await demo.settled(3);
      const after = await demo.verify(3);
      console.log(
        `rollback: ${ackedBeforeSnapshot.length} writes acknowledged before the snapshot (revision ${snapshotRevision}), ${ackedAfterSnapshot.length} after it; restored in ${((recoveredAt - asked) / 1000).toFixed(1)} s, 3 voters Available in ${((Date.now() - asked) / 1000).toFixed(1)} s`,
      );
      for (const name of before.members.keys()) expect([...after.members.keys()]).not.toContain(name);
      expect(after.clusterID).not.toBe(before.clusterID);

      const again = await serviceClient(kube, ns, 'demo');
      expect(again.ip).toBe(ip);
      try {
        const kv = await again.etcd.getAll().prefix('roll/').strings();
        const lostBefore = ackedBeforeSnapshot.filter((k) => kv[k] !== `value-${Number(k.slice(5))}`);
        const keptAfter = ackedAfterSnapshot.filter((k) => k in kv);
        console.log(
          `rollback: ${Object.keys(kv).length} keys after; of those acknowledged before the snapshot ${lostBefore.length} missing; of those after it ${keptAfter.length} present`,
        );
        expect(lostBefore).toEqual([]);
        expect(keptAfter).toEqual([]);
        const put = await again.etcd.put('roll/after').value('written after the rollback').exec();
        expect(Number(put.header.revision)).toBeGreaterThan(1_000_000_000 + snapshotRevision);
        expect(Number(put.header.revision)).toBeGreaterThan(lastSeen);
        const resumed = await resumeAt(again.etcd, 'roll/', lastSeen + 1);
        expect(resumed.watch).toMatch(/^Watcher canceled/);
        expect(resumed.read).toContain('compacted');
      } finally {
        again.etcd.close();
      }
    } catch (err) {
      await diagnose(env.manager.lines, demo, 'rollback');
      throw err;
    } finally {
      await writer.stop();
      etcd.close();
    }
  }, 900_000);
});
