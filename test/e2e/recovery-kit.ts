/**
 * What the recovery e2e tests share: a settled cluster, a writer through the client Service, a
 * member lost for good, the wait for the quorum's loss, and the read-back through the same Service.
 */
import { Etcd3 } from 'etcd3';
import { beforeAll, expect, inject } from 'vitest';
import { wipeVolume } from '../../localcluster/storage/index.ts';
import { clientServiceName } from '../../effects/kubernetes/meta.ts';
import { type clientsOf, until } from '../effects/kubernetes/e2e-context.ts';
import type { Condition } from '../../api/v1alpha1/index.ts';
import { ClusterUnderTest, describeStatus } from './etcd-cluster.ts';
import { stepLine, withManager, type ManagerFixture } from './manager-fixture.ts';
import type { ManagerLine } from '../../localcluster/manager-process.ts';

type Kube = ReturnType<typeof clientsOf>;

/** A client through the cluster's client Service (its ClusterIP, DNATed on this machine). */
export async function serviceClient(kube: Kube, ns: string, cluster: string): Promise<{ etcd: Etcd3; ip: string }> {
  const svc = await kube.core.readNamespacedService({ name: clientServiceName(cluster), namespace: ns });
  const ip = svc.spec?.clusterIP ?? '';
  return { etcd: new Etcd3({ hosts: [`http://${ip}:2379`], dialTimeout: 2000 }), ip };
}

/** Writes key/0, key/1... (or another prefix) through the client Service until stopped; keeps the keys etcd acknowledged. */
export class Writer {
  readonly acked: string[] = [];
  readonly prefix: string;
  /** The highest revision etcd acknowledged a write at: what a client of this cluster last saw. */
  revision = 0;
  #running = true;
  #loop: Promise<void> = Promise.resolve();

  constructor(prefix = 'key/') {
    this.prefix = prefix;
  }

  start(etcd: Etcd3): void {
    this.#loop = (async () => {
      for (let i = 0; this.#running; i++) {
        const key = `${this.prefix}${String(i).padStart(6, '0')}`;
        try {
          const put = await etcd
            .put(key)
            .value(`value-${i}`)
            .options({ deadline: new Date(Date.now() + 2000) });
          this.acked.push(key);
          this.revision = Math.max(this.revision, Number(put.header.revision));
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

/** Waits until the writer has `n` more acknowledged keys. */
export const moreAcked = (w: Writer, n: number): Promise<true> => {
  const from = w.acked.length;
  return until(`${n} more writes acknowledged`, () => Promise.resolve(w.acked.length >= from + n ? true : undefined));
};

/**
 * A file's namespace and manager (`withManager`) and, once `hooks()` ran in its describe block, the
 * 3-member cluster demo made and settled there: what a recovery test starts from.
 */
export class RecoveryDemo {
  /** The namespace and the manager scoped to it. */
  readonly env: ManagerFixture;
  #demo: ClusterUnderTest | undefined;

  constructor(prefix: string) {
    this.env = withManager(prefix);
  }

  /** The cluster demo; throws before `hooks()` made it. */
  get demo(): ClusterUnderTest {
    if (!this.#demo) throw new Error(`no cluster demo in ${this.env.ns} yet`);
    return this.#demo;
  }

  /** In a describe block: the namespace and manager, then `before` (what demo needs first), then demo settled with 3 members. */
  hooks(before?: () => Promise<unknown>): void {
    this.env.hooks();
    beforeAll(async () => {
      await before?.();
      const demo = new ClusterUnderTest(this.env.kube, this.env.ns, 'demo');
      await demo.create({ replicas: 3 });
      await demo.settled(3);
      this.#demo = demo;
    });
  }

  /** demo's Recovered condition, when there is one. */
  async recovered(): Promise<Condition | undefined> {
    return (await this.demo.get()).status?.conditions?.find((c) => c.type === 'Recovered');
  }

  /** Waits (up to 2 min) until demo's Available condition says its quorum is lost. */
  untilQuorumLost(): Promise<Condition> {
    return until(
      'quorum lost',
      async () => {
        const available = (await this.demo.get()).status?.conditions?.find((c) => c.type === 'Available');
        return available?.reason === 'QuorumLost' ? available : undefined;
      },
      120_000,
    );
  }

  /**
   * Runs `body` with a Writer of `prefix` through demo's client Service, once 20 of its writes are
   * acknowledged; `ip` is the Service's. On a failure prints `diagnose`'s story as `what`; the
   * writer is stopped and its client closed either way.
   */
  async underWriter(
    what: string,
    prefix: string | undefined,
    body: (writer: Writer, ip: string) => Promise<void>,
  ): Promise<void> {
    const { etcd, ip } = await serviceClient(this.env.kube, this.env.ns, this.demo.name);
    const writer = new Writer(prefix);
    writer.start(etcd);
    try {
      await moreAcked(writer, 20);
      await body(writer, ip);
    } catch (err) {
      await diagnose(this.env.manager.lines, this.demo, what);
      throw err;
    } finally {
      await writer.stop();
      etcd.close();
    }
  }

  /** Reads `prefix` back through a new client of demo's client Service, which must still be at `ip`; `body` gets the client and what it read. */
  async readBack(
    ip: string,
    prefix: string,
    body: (etcd: Etcd3, kv: Record<string, string>) => Promise<void>,
  ): Promise<void> {
    const again = await serviceClient(this.env.kube, this.env.ns, this.demo.name);
    expect(again.ip).toBe(ip);
    try {
      await body(again.etcd, await again.etcd.getAll().prefix(prefix).strings());
    } finally {
      again.etcd.close();
    }
  }
}

/** A namespace named after `prefix` with a manager scoped to it and, after `hooks()`, the settled cluster demo. */
export const withRecoveryDemo = (prefix: string): RecoveryDemo => new RecoveryDemo(prefix);

/** Wipes a member's volume for good and stops its Pod: its data is gone. */
export async function loseMember(kube: Kube, ns: string, member: string): Promise<void> {
  await wipeVolume(inject('kubeconfig'), ns, `data-${member}`);
  await kube.core.deleteNamespacedPod({ name: member, namespace: ns }).catch(() => undefined);
}

/**
 * Prints what the cluster says and the cluster machine's last 40 steps (when a test fails; the
 * manager's warnings follow from the fixture's story of the failed test, machineStory).
 */
export async function diagnose(lines: readonly ManagerLine[], cut: ClusterUnderTest, what: string): Promise<void> {
  const steps = lines
    .filter((l) => l.msg === 'step' && l['machine'] === 'cluster')
    .slice(-40)
    .map(stepLine);
  console.log(`${what} failed; now: ${describeStatus(await cut.get())}\n  ${steps.join('\n  ')}`);
}

/**
 * What a client resuming at `revision` of a cluster restored from a snapshot is told: a watch of
 * `prefix` from there (canceled, or the revisions of the events it was given) and a read at it
 * (etcd's refusal, or what it read).
 */
export async function resumeAt(
  etcd: Etcd3,
  prefix: string,
  revision: number,
): Promise<{ watch: string; read: string }> {
  const read = await etcd
    .getAll()
    .prefix(prefix)
    .revision(String(revision))
    .keys()
    .then((keys) => `read ${keys.length} keys`)
    .catch((err: Error) => err.message);
  return { watch: await watchFrom(etcd, prefix, revision), read };
}

/** What a watch of `prefix` from `revision` is told first: an error's message, or the revisions of its events. */
function watchFrom(etcd: Etcd3, prefix: string, revision: number): Promise<string> {
  return new Promise<string>((resolve) => {
    void etcd
      .watch()
      .prefix(prefix)
      .startRevision(String(revision))
      .create()
      .then((w) => {
        w.on('error', (err: Error) => resolve(err.message));
        w.on('data', (res: { events: { kv: { mod_revision: string } }[] }) =>
          resolve(`events at ${res.events.map((e) => e.kv.mod_revision).join(',')}`),
        );
      })
      .catch((err: Error) => resolve(err.message));
    setTimeout(() => resolve('nothing within 20 s'), 20_000);
  });
}
