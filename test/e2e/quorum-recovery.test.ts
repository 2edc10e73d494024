/**
 * Recovery from a quorum lost for good, from the most advanced survivor (spec.recovery,
 * docs/recovery.md): a 3-member cluster under a writer loses two members' volumes for good, one
 * after the other; a recovery asked while the quorum still stood is refused with nothing changed;
 * asked once it is lost, the survivor is forced into a cluster of one and new members join it,
 * under the same name and client Service. Every key acknowledged before the loss reads back after.
 */
import { describe, expect, inject, it } from 'vitest';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { loseMember, moreAcked, withRecoveryDemo } from './recovery-kit.ts';

const hasNode = inject('clusterHasNode');
const kit = withRecoveryDemo('quorum');
const { ns, kube } = kit.env;
const recovered = () => kit.recovered();

describe.skipIf(!hasNode)('manager: recovery from a quorum lost for good, from the survivor', () => {
  kit.hooks();

  it('refuses a recovery while the quorum stands, recovers from the survivor once it is lost, and keeps every acknowledged key', async () => {
    const demo = kit.demo;
    const before = await demo.verify(3);
    await kit.underWriter('quorum recovery', undefined, async (writer, ip) => {
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
      await kit.untilQuorumLost();
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
      await kit.readBack(ip, 'key/', async (etcd, kv) => {
        const missing = acked.filter((k) => kv[k] !== `value-${Number(k.slice(4))}`);
        console.log(`quorum recovery: ${Object.keys(kv).length} keys after, ${missing.length} acknowledged missing`);
        expect(missing).toEqual([]);
        await etcd.put('key/after').value('written after the recovery');
      });
    });
  }, 900_000);
});
