/**
 * Recovery from a quorum lost for good, from the most advanced survivor (spec.recovery,
 * docs/recovery.md): a 3-member cluster under a writer loses two members' volumes for good, one
 * after the other; a recovery asked while the quorum still stood is refused with nothing changed;
 * asked once it is lost, the survivor is forced into a cluster of one and new members join it,
 * under the same name and client Service. Every key acknowledged before the loss reads back after.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';
import { diagnose, loseMember, moreAcked, serviceClient, Writer } from './recovery-kit.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('quorum');
const { ns, kube } = env;
let demo: ClusterUnderTest;

/** The Recovered condition, when there is one. */
const recovered = async () => (await demo.get()).status?.conditions?.find((c) => c.type === 'Recovered');

describe.skipIf(!hasNode)('manager: recovery from a quorum lost for good, from the survivor', () => {
  env.hooks();
  beforeAll(async () => {
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await demo.create({ replicas: 3 });
    await demo.settled(3);
  });

  it('refuses a recovery while the quorum stands, recovers from the survivor once it is lost, and keeps every acknowledged key', async () => {
    const before = await demo.verify(3);
    const { etcd, ip } = await serviceClient(kube, ns, 'demo');
    const writer = new Writer();
    writer.start(etcd);
    try {
      await moreAcked(writer, 20);
      // Asked while every voter answers: refused, nothing changed.
      await demo.patchSpec({ recovery: { requestID: 'too-early' } });
      await until(
        'too-early refused',
        async () => ((await recovered())?.reason === 'RecoveryRefused' ? true : undefined),
        60_000,
      );
      expect((await recovered())?.message).toContain('a quorum answers (3 of 3 voters healthy)');
      expect((await demo.verify(3)).members).toEqual(before.members);

      // Two of three volumes gone for good, one after the other: the writes acknowledged between
      // the two reached the survivor (a quorum of the two left).
      const [survivor = '', first = '', second = ''] = [...before.members.keys()];
      await loseMember(kube, ns, first);
      await moreAcked(writer, 5);
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
      const acked = [...writer.acked];
      console.log(`quorum recovery: ${acked.length} writes acknowledged before the loss`);

      // Naming a member that is gone is refused too.
      await demo.patchSpec({ recovery: { requestID: 'wrong-member', member: first } });
      await until(
        'wrong-member refused',
        async () => ((await recovered())?.message.includes('wrong-member') ? true : undefined),
        60_000,
      );
      expect((await recovered())?.reason).toBe('RecoveryRefused');

      const asked = Date.now();
      await demo.patchSpec({ recovery: { requestID: 'lost-for-good', member: null } });
      const done = await until(
        'recovered',
        async () => {
          const c = await recovered();
          return c?.status === 'True' && c.message.includes('lost-for-good') ? c : undefined;
        },
        600_000,
      );
      const recoveredAt = Date.now();
      expect(done.message).toContain(`recovered from ${survivor}`);
      await demo.settled(3);
      const after = await demo.verify(3);
      console.log(
        `quorum recovery: survivor ${survivor} alone and its lost members deleted in ${((recoveredAt - asked) / 1000).toFixed(1)} s, 3 voters Available in ${((Date.now() - asked) / 1000).toFixed(1)} s`,
      );
      // The same cluster (its ID, the survivor's member ID), grown back with new members.
      expect(after.clusterID).toBe(before.clusterID);
      expect(after.members.get(survivor)).toBe(before.members.get(survivor));
      expect([...after.members.keys()]).not.toContain(first);
      expect([...after.members.keys()]).not.toContain(second);

      // Through the same client Service: every acknowledged key, with its value.
      const again = await serviceClient(kube, ns, 'demo');
      expect(again.ip).toBe(ip);
      try {
        const kv = await again.etcd.getAll().prefix('key/').strings();
        const missing = acked.filter((k) => kv[k] !== `value-${Number(k.slice(4))}`);
        console.log(`quorum recovery: ${Object.keys(kv).length} keys after, ${missing.length} acknowledged missing`);
        expect(missing).toEqual([]);
        await again.etcd.put('key/after').value('written after the recovery');
      } finally {
        again.etcd.close();
      }
    } catch (err) {
      await diagnose(env.manager.lines, demo, 'quorum recovery');
      throw err;
    } finally {
      await writer.stop();
      etcd.close();
    }
  }, 900_000);
});
