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
import { describe, expect, inject, it } from 'vitest';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import { clientsOf, until, untilGone } from '../effects/kubernetes/e2e-context.ts';
import type { Converged } from './etcd-cluster.ts';
import { loseMember, moreAcked, resumeAt, withRecoveryDemo } from './recovery-kit.ts';
import { createSnapshot, snapshotFinished } from './s3-server.ts';

const hasNode = inject('clusterHasNode');
const kit = withRecoveryDemo('snaprecover');
const { ns, kube } = kit.env;
const recovered = () => kit.recovered();

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

/**
 * demo after a restore from the snapshot at `snapshotRevision`: a new cluster (new IDs, no member of
 * `before`) under the same name and client Service (still at `ip`). Read back there, every key of
 * `prefix` in `kept` is there with its value and none in `lost` is, a new write's revision is past
 * the snapshot's + 1,000,000,000 and past `lastSeen` (the highest a client of the old cluster saw),
 * and a client resuming from there meets a compaction.
 */
async function expectRestored(
  what: string,
  ip: string,
  prefix: string,
  o: {
    before: Converged;
    after: Converged;
    kept: string[];
    lost: string[];
    snapshotRevision: number;
    lastSeen: number;
  },
): Promise<void> {
  for (const name of o.before.members.keys()) expect([...o.after.members.keys()]).not.toContain(name);
  expect(o.after.clusterID).not.toBe(o.before.clusterID);
  await kit.readBack(ip, prefix, async (etcd, kv) => {
    const missing = o.kept.filter((k) => kv[k] !== `value-${Number(k.slice(prefix.length))}`);
    const present = o.lost.filter((k) => k in kv);
    console.log(
      `${what}: ${Object.keys(kv).length} keys after; of those acknowledged before the snapshot ${missing.length} missing; of those after it ${present.length} present`,
    );
    expect(missing).toEqual([]);
    // Acknowledged after the snapshot was stored: lost, as the condition said.
    expect(present).toEqual([]);
    const put = await etcd.put(`${prefix}after`).value(`written after the ${what}`).exec();
    // Revisions go on from the snapshot's + 1,000,000,000: past any the old cluster reached.
    expect(Number(put.header.revision)).toBeGreaterThan(1_000_000_000 + o.snapshotRevision);
    expect(Number(put.header.revision)).toBeGreaterThan(o.lastSeen);
    // The old cluster's revisions are compacted: a watcher resuming where the old cluster was
    // is canceled (never handed events under them) and a read at one is refused as compacted,
    // so a client relists.
    const resumed = await resumeAt(etcd, prefix, o.lastSeen + 1);
    expect(resumed.watch).toMatch(/^Watcher canceled/);
    expect(resumed.read).toContain('compacted');
  });
}

describe.skipIf(!hasNode)('manager: recovery from a quorum lost for good, from a snapshot', () => {
  // The claim the snapshots are stored on, made before the cluster.
  kit.hooks(() =>
    kube.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'backups' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
      },
    }),
  );

  it('refuses while the quorum stands and for a missing snapshot, then restores the newest snapshot in place: keys before it kept, after it lost, watchers see a compaction', async () => {
    const demo = kit.demo;
    const before = await demo.verify(3);
    await kit.underWriter('snapshot recovery', undefined, async (writer, ip) => {
      // Acknowledged before the snapshot: kept by the restore; acknowledged after it: lost.
      const kept = [...writer.acked];
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
      await kit.untilQuorumLost();
      await writer.stop();
      const lost = writer.acked.slice(ackedAtSnapshot);
      // The highest revision a client of the old cluster saw.
      const lastSeen = writer.revision;
      console.log(
        `snapshot recovery: ${kept.length} writes acknowledged before the snapshot (revision ${snapshotRevision}), ${lost.length} after it`,
      );

      // A snapshot that does not exist: refused, the members untouched (none made dormant).
      await demo.patchSpec({ recovery: { requestID: 'no-such', from: 'snapshot', snapshotName: 'no-such' } });
      const missing = await answered('no-such');
      expect(missing.reason).toBe('RecoveryRefused');
      expect(missing.message).toContain('EtcdSnapshot');
      expect((await demo.members()).every((m) => m.spec.dormant !== true)).toBe(true);

      const asked = Date.now();
      await demo.patchSpec({ recovery: { requestID: 'from-snapshot', from: 'snapshot', snapshotName: null } });
      // Until the snapshot is found, Recovering says only that the data will be a snapshot's (on a
      // busy machine a read lands there); then it names it, before anything is changed.
      const running = await until(
        'recovering said, naming the snapshot',
        async () => {
          const c = await recovered();
          return (c?.reason === 'Recovering' && c.message.includes('EtcdSnapshot ')) ||
            (c?.status === 'True' && c.message.includes('request from-snapshot'))
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
      await expectRestored('snapshot recovery', ip, 'key/', { before, after, kept, lost, snapshotRevision, lastSeen });
    });
  }, 900_000);
  it('rolls the healthy cluster back to a named snapshot in place only when rollback says so, the snapshot deleted once its seed exists: kept until restored, then gone; writes after it gone, watchers see a compaction', async () => {
    const demo = kit.demo;
    const before = await demo.verify(3);
    await kit.underWriter('rollback', 'roll/', async (writer, ip) => {
      // Acknowledged before the snapshot: kept by the restore; acknowledged after it: lost.
      const kept = [...writer.acked];
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
      const lost = writer.acked.slice(ackedAtSnapshot);
      const lastSeen = writer.revision;
      const asked = Date.now();
      await demo.patchSpec({
        recovery: { requestID: 'rollback', from: 'snapshot', snapshotName: 'before-rollback', rollback: true },
      });
      // The EtcdSnapshot deleted as soon as the seed restoring from it exists: the recovery holds
      // it, so its stored file stays until the seed restored, and it says which cluster holds it.
      const seed = await until(
        'the seed made',
        async () => (await demo.members()).find((m) => !before.members.has(m.metadata.name ?? '')),
        120_000,
      );
      const ref = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.snapshot, name: 'before-rollback' };
      await kubeClients.custom.deleteNamespacedCustomObject(ref);
      const inUse = await until(
        'the deletion held',
        async () => {
          const s = (await kubeClients.custom.getNamespacedCustomObject(ref)) as EtcdSnapshot;
          const c = s.status?.conditions?.find((x) => x.type === 'Progressing');
          return c?.reason === 'InUse' ? { s, c } : undefined;
        },
        60_000,
      );
      console.log(`rollback: EtcdSnapshot deleted after ${seed.metadata.name ?? ''} was made: ${inUse.c.message}`);
      expect(inUse.s.metadata.deletionTimestamp).toBeTruthy();
      expect(inUse.s.metadata.finalizers).toContain('restoring.etcd-operator.dev/demo');
      expect(inUse.c.message).toContain('EtcdCluster demo restores from it');
      const done = await answered('rollback', 600_000);
      const recoveredAt = Date.now();
      expect(done.status).toBe('True');
      // Let go once restored: the deletion finishes by itself, the stored file with it.
      await untilGone('EtcdSnapshot before-rollback', () => kubeClients.custom.getNamespacedCustomObject(ref));
      console.log(
        `rollback: EtcdSnapshot before-rollback gone ${((Date.now() - recoveredAt) / 1000).toFixed(1)} s after Recovered`,
      );
      expect(done.message).toContain(
        `every write after revision ${snapshotRevision} is lost; the cluster was at revision`,
      );
      await demo.settled(3);
      const after = await demo.verify(3);
      console.log(
        `rollback: ${kept.length} writes acknowledged before the snapshot (revision ${snapshotRevision}), ${lost.length} after it; restored in ${((recoveredAt - asked) / 1000).toFixed(1)} s, 3 voters Available in ${((Date.now() - asked) / 1000).toFixed(1)} s`,
      );
      await expectRestored('rollback', ip, 'roll/', { before, after, kept, lost, snapshotRevision, lastSeen });
    });
  }, 900_000);
});
