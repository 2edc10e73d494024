/**
 * A CA change on a running cluster, as docs/security.md tells users to make it, with the operator
 * doing the restarts: a 3-member cluster with client and peer TLS from Secrets signed by one CA;
 * then (1) ca.crt becomes a bundle of the old and the new CA, and the operator restarts the
 * members one at a time so each trusts both (etcd reads its CA files only at start); (2) leaves
 * from the new CA are written, served at the next handshake with no restart; (3) ca.crt becomes
 * the new CA alone, and the operator rolls again. A writer through the client Service runs the
 * whole time (its certificate moved to the new CA before step 3, as the docs say): no write fails,
 * and recorded traffic beside it is linearizable with whole watches (docs/reliability.md).
 * In the end a client certificate from the old CA is refused and one from the new CA is served.
 * Then the cluster is parked, its CAs change while nothing runs, and it wakes onto them: no roll.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdClientTLS } from '../../effects/etcd/index.ts';
import { credentialsOf, TestPki, type Leaf } from '../effects/etcd/test-pki.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { eventReasons } from './kube.ts';
import { withManager } from './manager-fixture.ts';
import {
  createClusterSecrets,
  etcdctl,
  renewClusterSecrets,
  servedSerial,
  trustRolled,
  writeClusterCA,
} from './tls-cluster.ts';
import { Traffic, type TrafficReport } from './traffic.ts';
import { describeVerdict } from '../history/checker.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('ca-change');
const { ns, kube } = env;
const KEYS = 20;
/** How often the manager reads the Secrets again (--secret-read-interval), seconds. */
const SECRET_READ_S = 5;
/** A roll: the manager's next read of the Secrets, then three restarts. */
const ROLL_MS = 420_000;

let oldPki: TestPki;
let newPki: TestPki;
let demo: ClusterUnderTest;

const serverName = `demo-client.${ns}.svc`;
/** The operator's leaf a PKI issued for the cluster (createClusterSecrets' and renewClusterSecrets' naming). */
const operatorLeaf = (pki: TestPki): Leaf => pki.leaf(`${ns}-demo-operator`);
/** A PKI's CA certificate, PEM. */
const caOf = (pki: TestPki): string => readFileSync(operatorLeaf(pki).ca, 'utf8');
const podUIDs = async (): Promise<string[]> =>
  (await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'etcd-operator.dev/cluster=demo' })).items
    .filter((p) => !p.metadata?.deletionTimestamp)
    .map((p) => p.metadata?.uid ?? '')
    .sort();

/** The Events of the roll steps that restart a member onto new CAs. */
const restartsForCAs = async (): Promise<string[]> =>
  (await kube.core.listNamespacedEvent({ namespace: ns })).items
    .map((e) => e.message ?? '')
    .filter((m) => m.includes('to trust the CA certificates'));

/** Runs `during` under a writer with `creds`; rethrows what it threw after reporting the traffic. */
async function underTraffic(what: string, creds: EtcdClientTLS, during: () => Promise<void>): Promise<TrafficReport> {
  const traffic = new Traffic(what, { history: true });
  await traffic.start(kube.core, ns, 'demo', { client: creds, serverName });
  const started = Date.now();
  let failure: unknown;
  try {
    await during();
  } catch (err) {
    failure = err;
  }
  const report = await traffic.stop();
  console.log(
    `${what} under traffic: ${Date.now() - started} ms; ${report.acknowledged} writes, ${report.failed.length} failed, ` +
      `longest write ${report.longestStallMs} ms, ${report.unwatched.length} revisions unwatched, ${report.lost.length} keys lost`,
  );
  const history = report.history!;
  console.log(`${what} history: ${describeVerdict(history)}`);
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
  expect(report.failed).toEqual([]);
  expect(report.unwatched).toEqual([]);
  expect(report.lost).toEqual([]);
  expect(report.acknowledged).toBeGreaterThan(20);
  expect(history.linearizable, describeVerdict(history)).toBe('Ok');
  expect(history.revisionViolations).toEqual([]);
  expect(history.watch.violations).toEqual([]);
  expect(history.checked).toBeGreaterThan(20);
  return report;
}

/** `--cacert --cert --key` of a client certificate, checked against `ca`. The Pod IP dialled is not a
 * name the members' certificates cover: the server check is skipped (servedSerial checks the
 * servers' leaves); the member still checks the client's certificate. */
const certArgs = (ca: string, leaf: Leaf): string[] => [
  `--cacert=${ca}`,
  `--cert=${leaf.cert}`,
  `--key=${leaf.key}`,
  '--insecure-skip-tls-verify',
];

describe.skipIf(!hasNode)('TLS: a CA change, rolled by the operator', () => {
  // The manager reads a cluster's Secrets again every SECRET_READ_S (a minute by default).
  env.hooks({ args: ['--secret-read-interval', String(SECRET_READ_S)] });
  beforeAll(async () => {
    oldPki = await TestPki.create('etcd-operator-old-ca-');
    newPki = await TestPki.create('etcd-operator-new-ca-');
    const secrets = await createClusterSecrets(kube, oldPki, ns, 'demo');
    demo = new ClusterUnderTest(kube, ns, 'demo', secrets.reach);
    await demo.create({ replicas: 3, tls: secrets.spec });
    await demo.settled(3);
    await demo.write('before', KEYS);
  });
  afterAll(() => {
    oldPki?.remove();
    newPki?.remove();
  });

  it(
    'bundle, new leaves, new CA alone: each member restarted once per CA change, one at a time, and no write failed',
    { timeout: 1_200_000 },
    async () => {
      const [oldCA, newCA] = [caOf(oldPki), caOf(newPki)];
      const bundle = oldCA + newCA;
      const first = (await demo.members()).map((m) => m.spec.trust);
      expect(new Set(first).size, `members' spec.trust: ${first.join(', ')}`).toBe(1);
      const pods0 = await podUIDs();

      const oldClient = { ...credentialsOf(operatorLeaf(oldPki)), ca: Buffer.from(bundle) };
      let trusting = '';
      await underTraffic('ca-bundle', oldClient, async () => {
        // 1. Both CAs in ca.crt: the operator restarts the members onto the bundle.
        const began = Date.now();
        await writeClusterCA(kube, ns, 'demo', bundle);
        trusting = await trustRolled(demo, kube.core, first[0], 3, ROLL_MS);
        console.log(`roll onto the bundle: ${Date.now() - began} ms from the Secrets written`);
        const pods1 = await podUIDs();
        expect(
          pods1.filter((uid) => pods0.includes(uid)),
          'Pods not made again',
        ).toEqual([]);
        // 2. Leaves from the new CA: served from the next handshake, nothing restarts.
        const renewed = await renewClusterSecrets(kube, newPki, ns, 'demo', bundle);
        await until(
          'every member serving the new CA’s leaf on 2379 and 2380',
          async () => {
            for (const ip of (await demo.podIPs()).values())
              for (const port of [2379, 2380])
                if ((await servedSerial(ip, port, oldClient)) !== renewed) return undefined;
            return true;
          },
          120_000,
        );
        expect(await podUIDs()).toEqual(pods1);
      });

      // 3. The new CA alone, the application's certificate moved to it first.
      const newClient = credentialsOf(operatorLeaf(newPki));
      await underTraffic('ca-new-only', newClient, async () => {
        const began = Date.now();
        const pods2 = await podUIDs();
        await writeClusterCA(kube, ns, 'demo', newCA);
        await trustRolled(demo, kube.core, trusting, 3, ROLL_MS);
        console.log(`roll onto the new CA alone: ${Date.now() - began} ms from the Secrets written`);
        expect(
          (await podUIDs()).filter((uid) => pods2.includes(uid)),
          'Pods not made again',
        ).toEqual([]);
      });

      // A certificate of the old CA is refused now; the new CA's is served, and the data is all there.
      const newCAFile = path.join(env.dir, 'new-ca.crt');
      writeFileSync(newCAFile, newCA);
      const endpoint = `https://${[...(await demo.podIPs()).values()][0]}:2379`;
      const refused = await etcdctl(endpoint, [...certArgs(newCAFile, operatorLeaf(oldPki)), 'get', 'before/0']);
      console.log(`a client certificate of the old CA: ${refused.out.trim().split('\n').pop()}`);
      expect(refused.ok, refused.out).toBe(false);
      expect(refused.out).toMatch(
        /bad certificate|unknown certificate|certificate required|handshake|deadline exceeded/i,
      );
      const served = await etcdctl(endpoint, [
        ...certArgs(newCAFile, operatorLeaf(newPki)),
        'get',
        '--print-value-only',
        'before/0',
      ]);
      expect(served.ok, served.out).toBe(true);
      const now = new ClusterUnderTest(kube, ns, 'demo', { client: newClient, serverName, peer: true });
      await now.verify(3);
      expect(await now.readBack('before', KEYS)).toBe(KEYS);
      expect((await restartsForCAs()).length).toBeGreaterThan(0);
      // Both rolls moved no version, and said so: the cluster's step RollingCA, and each member's
      // Reconfiguring (its Pod made again on the version it runs), never Upgrading.
      const clusterSteps = await eventReasons(kube.core, ns, 'EtcdCluster');
      expect(clusterSteps.has('RollingCA'), [...clusterSteps].join(', ')).toBe(true);
      const memberSteps = await eventReasons(kube.core, ns, 'EtcdMember');
      expect(memberSteps.has('Reconfiguring'), [...memberSteps].join(', ')).toBe(true);
      expect([...memberSteps].filter((r) => r === 'Upgrading' || r === 'Downgrading')).toEqual([]);
    },
  );

  // Goes on from the cluster the test above left: on the new CA alone, leaves from it.
  it(
    'CAs changed while the cluster is parked: its members wake onto them, each Pod made once, and no roll follows',
    { timeout: 600_000 },
    async () => {
      const [oldCA, newCA] = [caOf(oldPki), caOf(newPki)];
      const parkedOn = (await demo.members())[0]?.spec.trust;
      await demo.patchSpec({ replicas: 0 });
      await demo.settled(0, 300_000);
      expect(await podUIDs()).toEqual([]);
      // A user adds the next CA while nothing runs; the manager reads a cluster's Secrets at most
      // once per interval, so the wake comes after it: it is what the wake must start with.
      await writeClusterCA(kube, ns, 'demo', newCA + oldCA);
      await new Promise((r) => setTimeout(r, (SECRET_READ_S + 5) * 1000));
      const rolls = (await restartsForCAs()).length;

      // Every member Pod seen from the wake on (a roll would make each one again: six in all).
      const seen = new Set<string>();
      let watching = true;
      const watch = (async () => {
        while (watching) {
          for (const uid of await podUIDs().catch(() => [])) seen.add(uid);
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
      const began = Date.now();
      let woken: string;
      try {
        await demo.patchSpec({ replicas: 3 });
        woken = await trustRolled(demo, kube.core, parkedOn, 3, 300_000);
      } finally {
        watching = false;
        await watch;
      }
      console.log(`woken onto the CAs changed while parked: ${Date.now() - began} ms, ${seen.size} Pods made`);
      expect(seen.size, 'member Pods made from the wake on').toBe(3);
      expect(await restartsForCAs()).toHaveLength(rolls);
      expect((await demo.members()).map((m) => m.spec.trust)).toEqual([woken, woken, woken]);
      const creds = credentialsOf(operatorLeaf(newPki));
      const now = new ClusterUnderTest(kube, ns, 'demo', { client: creds, serverName, peer: true });
      await now.verify(3);
      expect(await now.readBack('before', KEYS)).toBe(KEYS);
    },
  );
});
