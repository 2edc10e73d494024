/**
 * Recovery from a quorum lost for good, from the most advanced survivor (spec.recovery,
 * docs/recovery.md): a 3-member cluster under a writer loses two members' volumes for good, one
 * after the other; a recovery asked while the quorum still stood is refused with nothing changed;
 * asked once it is lost, the survivor is forced into a cluster of one and new members join it,
 * under the same name and client Service. Every key acknowledged before the loss reads back after.
 */
import { Etcd3 } from 'etcd3';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { wipeVolume } from '../../localcluster/storage/index.ts';
import { clientServiceName } from '../../effects/kubernetes/meta.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest, describeStatus } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('quorum');
const { ns, kube } = env;
let demo: ClusterUnderTest;

/** A client through the cluster's client Service (its ClusterIP, DNATed on this machine). */
async function serviceClient(): Promise<{ etcd: Etcd3; ip: string }> {
  const svc = await kube.core.readNamespacedService({ name: clientServiceName('demo'), namespace: ns });
  const ip = svc.spec?.clusterIP ?? '';
  return { etcd: new Etcd3({ hosts: [`http://${ip}:2379`], dialTimeout: 2000 }), ip };
}

/** Writes key/0, key/1... through the client Service until stopped; keeps the keys etcd acknowledged. */
class Writer {
  readonly acked: string[] = [];
  #running = true;
  #loop: Promise<void> = Promise.resolve();

  start(etcd: Etcd3): void {
    this.#loop = (async () => {
      for (let i = 0; this.#running; i++) {
        const key = `key/${String(i).padStart(6, '0')}`;
        try {
          await etcd
            .put(key)
            .value(`value-${i}`)
            .options({ deadline: new Date(Date.now() + 2000) });
          this.acked.push(key);
        } catch {
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }
}

/** The Recovered condition, when there is one. */
const recovered = async () => (await demo.get()).status?.conditions?.find((c) => c.type === 'Recovered');

/** What the cluster says and the cluster machine's last steps, printed when the test fails. */
async function diagnose(): Promise<void> {
  const steps = env.manager.lines
    .filter((l) => l.msg === 'step' && l['machine'] === 'cluster')
    .slice(-40)
    .map((l) => `${String(l['from'])} -> ${String(l['to'])} on ${String(l['event'])} [${String(l['intents'])}]`);
  const errors = env.manager.lines
    .filter((l) => l.level >= 40)
    .slice(-20)
    .map((l) => `${l.msg} ${JSON.stringify(l)}`);
  console.log(
    `quorum recovery failed; now: ${describeStatus(await demo.get())}\n  ${steps.join('\n  ')}\n  ${errors.join('\n  ')}`,
  );
}

/** Waits until the writer has `n` more acknowledged keys. */
const moreAcked = (w: Writer, n: number): Promise<true> => {
  const from = w.acked.length;
  return until(`${n} more writes acknowledged`, () => Promise.resolve(w.acked.length >= from + n ? true : undefined));
};

/** Wipes a member's volume for good and stops its Pod: its data is gone. */
async function loseMember(member: string): Promise<void> {
  await wipeVolume(inject('kubeconfig'), ns, `data-${member}`);
  await kube.core.deleteNamespacedPod({ name: member, namespace: ns }).catch(() => undefined);
}

describe.skipIf(!hasNode)('manager: recovery from a quorum lost for good, from the survivor', () => {
  env.hooks();
  beforeAll(async () => {
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await demo.create({ replicas: 3 });
    await demo.settled(3);
  });

  it('refuses a recovery while the quorum stands, recovers from the survivor once it is lost, and keeps every acknowledged key', async () => {
    const before = await demo.verify(3);
    const { etcd, ip } = await serviceClient();
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
      await loseMember(first);
      await moreAcked(writer, 5);
      await loseMember(second);
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
      const again = await serviceClient();
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
      await diagnose();
      throw err;
    } finally {
      await writer.stop();
      etcd.close();
    }
  }, 900_000);
});
