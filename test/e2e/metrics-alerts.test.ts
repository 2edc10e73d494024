/**
 * The manager's metrics, alerts and dashboard read by a real Prometheus (the pinned one, on the
 * host beside the manager, with the rules file the chart ships). Three causes, each on a small
 * cluster of its own and run side by side, fire three alerts for real, and each clears:
 * - demo (3 members): two members stopped (their etcd processes frozen, as a hung machine leaves
 *   them) fire EtcdClusterQuorumLost, which clears once they run again;
 * - full (1 member, a 16Mi quota): filled with live keys, etcd raises NOSPACE and EtcdNoSpaceAlarm
 *   fires (EtcdDatabaseNearQuota pending beside it); data deleted and the quota raised, both clear;
 * - backed (1 member): a schedule every minute whose destination refuses every upload fires
 *   EtcdBackupMissing once twice its interval passed with no success; suspended, it clears.
 * Then every query of the chart's dashboard, its variables substituted as Grafana does, has data.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import { until } from '../../localcluster/until.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { HostPrometheus, shippedDashboard, substitute, type Alert } from './host-prometheus.ts';
import { withManager } from './manager-fixture.ts';
import { createSnapshot, snapshotFinished } from './s3-server.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('metrics');
const { ns, kube } = env;
const schedules = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.schedule };
const VALUE = 'x'.repeat(100_000);
/** Each cause runs beside the others on the shared machine (its rule, evaluation, clearing and settling), and the dashboard may wait for its snapshot. */
const SLOW_TIMEOUT = 480_000;

/** The pid of the etcd process of `member` of the cluster `uid` (its name and cluster token on its command line). */
function etcdPid(member: string, uid: string): number {
  const wanted = [`--name=${member}`, `--initial-cluster-token=${uid}`];
  const commandLine = (pid: string): string[] => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return []; // gone since the listing
    }
  };
  const pids = readdirSync('/proc').filter(
    (pid) => /^\d+$/.test(pid) && wanted.every((f) => commandLine(pid).includes(f)),
  );
  expect(pids.length, `etcd processes of ${member}`).toBe(1);
  return Number(pids[0]);
}

/** Puts VALUE under live/0, live/1... until etcd refuses with NOSPACE; returns how many went in. */
async function fill(etcd: Etcd3): Promise<number> {
  for (let i = 0; ; i++) {
    try {
      await etcd.put(`live/${i}`).value(VALUE);
    } catch (err) {
      if (/database space exceeded/.test((err as Error).message)) return i;
      throw err;
    }
  }
}

const secondsSince = (t: number): string => ((performance.now() - t) / 1000).toFixed(0);

describe.skipIf(!hasNode)('metrics: a real Prometheus scrapes the manager, alerts caused for real fire', () => {
  env.hooks({ args: ['--max-probe-interval', '15'] });
  const prometheus = new HostPrometheus();
  const demo = new ClusterUnderTest(kube, ns, 'demo');
  const full = new ClusterUnderTest(kube, ns, 'full');
  const backed = new ClusterUnderTest(kube, ns, 'backed');
  const frozen: number[] = [];
  const clients: Etcd3[] = [];
  let scheduleCreated = 0;

  /** This namespace's alert of that name and cluster, pending or firing; `undefined` while neither. */
  const alertOf = async (name: string, cluster: string): Promise<Alert | undefined> =>
    (await prometheus.alerts()).find(
      (a) => a.labels.alertname === name && a.labels.namespace === ns && a.labels.cluster === cluster,
    );
  /** Waits until the alert is in `state`; returns it. */
  const untilAlert = (name: string, cluster: string, state: Alert['state']): Promise<Alert> =>
    until(
      `${name} of ${cluster} ${state} in Prometheus`,
      async () => {
        const alert = await alertOf(name, cluster);
        return alert?.state === state ? alert : undefined;
      },
      300_000,
      2000,
    );
  /** Waits until the alert is neither pending nor firing. */
  const untilCleared = (name: string, cluster: string): Promise<true> =>
    until(
      `${name} of ${cluster} cleared in Prometheus`,
      async () => ((await alertOf(name, cluster)) ? undefined : true),
      300_000,
      2000,
    );

  beforeAll(async () => {
    // The schedule first: its alert counts from its creation, and the clusters take a while.
    await kube.core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: 's3-credentials' },
        stringData: { AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's' },
      },
    });
    await kube.custom.createNamespacedCustomObject({
      ...schedules,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'EtcdSnapshotSchedule',
        metadata: { name: 'broken' },
        spec: {
          clusterRef: { name: 'backed' },
          schedule: '* * * * *',
          // Nothing listens there: every upload is refused.
          destination: {
            s3: {
              endpoint: 'http://127.0.0.1:1',
              bucket: 'backups',
              forcePathStyle: true,
              credentialsSecretRef: { name: 's3-credentials' },
            },
          },
          retention: { keepLast: 3 },
        },
      },
    });
    scheduleCreated = performance.now();
    await kube.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'backups' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
      },
    });
    await Promise.all([
      demo.create({ replicas: 3 }),
      // The quota must stay under the volume (a CEL rule).
      full.create({ replicas: 1, storage: { size: '64Mi' }, options: { quotaBackendBytes: '16Mi' } }),
      backed.create({ replicas: 1 }),
    ]);
    await Promise.all([demo.settled(3), full.settled(1), backed.settled(1), prometheus.start(env.manager.port)]);
    // A good snapshot beside the broken schedule, for the dashboard's backup panels.
    await createSnapshot(kube, ns, 'once', { cluster: 'backed', destination: { pvc: { claimName: 'backups' } } });
  }, 600_000);
  afterAll(async () => {
    for (const pid of frozen.splice(0)) process.kill(pid, 'SIGCONT');
    for (const c of clients.splice(0)) c.close();
    await prometheus.stop();
  });

  it("Prometheus reads the clusters' members, quorum, leader, database sizes and quotas", async () => {
    const at = `namespace="${ns}", cluster="demo"`;
    // Prometheus started beside the clusters: wait for a scrape made once demo was settled and
    // full was probed (its alarms come from a probe, which a scrape can precede).
    const healthy = await until(
      'Prometheus scraped 3 healthy voters and 3 ready members of demo, and a probe of full',
      async () => {
        const r = await prometheus.query(
          `etcd_operator_cluster_healthy_voters{${at}} == 3 and etcd_operator_cluster_members_ready{${at}} == 3`,
        );
        const fullProbed = await prometheus.query(`etcd_operator_cluster_alarm{namespace="${ns}", cluster="full"}`);
        return r.length > 0 && fullProbed.length > 0 ? r : undefined;
      },
      60_000,
      1000,
    );
    expect(healthy).toHaveLength(1);
    const one = async (q: string) => (await prometheus.query(q)).map((s) => s.value);
    expect(await one(`etcd_operator_cluster_quorum{${at}}`)).toEqual([2]);
    expect(await one(`etcd_operator_cluster_members_desired{${at}}`)).toEqual([3]);
    expect(await one(`etcd_operator_cluster_members_ready{${at}}`)).toEqual([3]);
    expect(await one(`sum(etcd_operator_member_is_leader{${at}})`)).toEqual([1]);
    expect(await prometheus.query(`etcd_operator_member_database_size_bytes{${at}} > 0`)).toHaveLength(3);
    expect(await one(`etcd_operator_cluster_quota_backend_bytes{namespace="${ns}", cluster="full"}`)).toEqual([
      16 * 2 ** 20,
    ]);
    expect(await one(`etcd_operator_cluster_alarm{namespace="${ns}", cluster="full", alarm="NOSPACE"}`)).toEqual([0]);
  });

  it.concurrent(
    'two of three members stopped: EtcdClusterQuorumLost fires, and clears once they run again',
    { timeout: SLOW_TIMEOUT },
    async ({ expect }) => {
      const uid = (await demo.get()).metadata.uid ?? '';
      for (const member of ['demo-1', 'demo-2']) {
        const pid = etcdPid(member, uid);
        process.kill(pid, 'SIGSTOP');
        frozen.push(pid);
      }
      const stopped = performance.now();
      const fired = await untilAlert('EtcdClusterQuorumLost', 'demo', 'firing');
      console.log(`EtcdClusterQuorumLost firing ${secondsSince(stopped)} s after the stop`);
      expect(fired.labels).toMatchObject({ severity: 'critical', cluster: 'demo', namespace: ns });
      expect(fired.annotations.summary).toBe(`etcd cluster ${ns}/demo has lost quorum: it can neither read nor write.`);
      expect(fired.annotations.description).toMatch(/^Only 1 voting member\(s\) of .* answer/);

      for (const pid of frozen.splice(0)) process.kill(pid, 'SIGCONT');
      const resumed = performance.now();
      await untilCleared('EtcdClusterQuorumLost', 'demo');
      console.log(`EtcdClusterQuorumLost cleared ${secondsSince(resumed)} s after the members resumed`);
      await demo.settled(3);
    },
  );

  it.concurrent(
    'the quota filled: EtcdNoSpaceAlarm fires, and clears once data is deleted and the quota raised',
    { timeout: SLOW_TIMEOUT },
    async ({ expect }) => {
      const etcd = await full.client();
      clients.push(etcd);
      const put = await fill(etcd);
      const filled = performance.now();
      const fired = await until(
        'EtcdNoSpaceAlarm firing and EtcdDatabaseNearQuota pending',
        async () => {
          const [space, near] = [
            await alertOf('EtcdNoSpaceAlarm', 'full'),
            await alertOf('EtcdDatabaseNearQuota', 'full'),
          ];
          return space?.state === 'firing' && near?.state === 'pending' ? { space, near } : undefined;
        },
        300_000,
        2000,
      );
      console.log(`EtcdNoSpaceAlarm firing ${secondsSince(filled)} s after NOSPACE (${put} keys of 100 kB put)`);
      expect(fired.space.labels).toMatchObject({ severity: 'critical', alarm: 'NOSPACE' });
      expect(fired.space.annotations.summary).toBe(
        `etcd cluster ${ns}/full ran out of space (NOSPACE): it refuses every write.`,
      );
      expect(fired.near.labels).toMatchObject({ severity: 'warning', member: 'full-0' });

      // What docs/maintenance.md says to do: delete data (allowed under the alarm) and raise the quota.
      await etcd.delete().prefix('live/');
      await full.patchSpec({ options: { quotaBackendBytes: '32Mi' } });
      const freed = performance.now();
      await untilCleared('EtcdNoSpaceAlarm', 'full');
      await untilCleared('EtcdDatabaseNearQuota', 'full');
      console.log(`EtcdNoSpaceAlarm cleared ${secondsSince(freed)} s after the data was deleted and the quota raised`);
      await full.settled(1);
    },
  );

  it.concurrent(
    'a schedule whose uploads fail: EtcdBackupMissing fires after twice its interval, suspended it clears',
    { timeout: SLOW_TIMEOUT },
    async ({ expect }) => {
      const fired = await untilAlert('EtcdBackupMissing', 'backed', 'firing');
      console.log(
        `EtcdBackupMissing firing ${secondsSince(scheduleCreated)} s after the every-minute schedule was made`,
      );
      expect(fired.labels).toMatchObject({ severity: 'warning', schedule: 'broken' });
      expect(fired.annotations.summary).toBe(
        `No successful snapshot of ${ns}/backed by schedule broken within twice its interval.`,
      );
      // Its runs failed: none of them is a backup.
      const made = (await kube.custom.listNamespacedCustomObject({
        ...schedules,
        plural: PLURAL.snapshot,
        labelSelector: 'etcd-operator.dev/schedule=broken',
      })) as { items: EtcdSnapshot[] };
      expect(made.items.length).toBeGreaterThan(0);
      expect(made.items.filter((s) => s.status?.phase === 'Succeeded')).toEqual([]);

      await kube.custom.patchNamespacedCustomObject(
        { ...schedules, name: 'broken', body: { spec: { suspend: true } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const suspended = performance.now();
      await untilCleared('EtcdBackupMissing', 'backed');
      console.log(`EtcdBackupMissing cleared ${secondsSince(suspended)} s after the schedule was suspended`);
    },
  );

  it(
    "every query of the chart's dashboard returns data, its variables substituted as Grafana does",
    { timeout: SLOW_TIMEOUT },
    async () => {
      const once = await snapshotFinished(kube, ns, 'once', 300_000);
      expect(once.status?.phase).toBe('Succeeded');
      const { variables, queries } = shippedDashboard();
      // The variables' own queries, label_values(SELECTOR, LABEL), as Grafana runs them.
      const options = async (name: string, chosen: Record<string, string>): Promise<string[]> => {
        const definition = variables.find((v) => v.name === name)?.definition ?? '';
        const [, selector = '', label = ''] = /^label_values\((.*), (\w+)\)$/.exec(definition) ?? [];
        return prometheus.labelValues(substitute(selector, chosen), label);
      };
      expect(await options('namespace', {})).toContain(ns);
      const chosen: Record<string, string> = { namespace: ns, datasource: 'prometheus' };
      expect((await options('cluster', chosen)).sort()).toEqual(['backed', 'demo', 'full']);
      // "All" clusters: the variable's allValue, as Grafana sends it.
      chosen.cluster = variables.find((v) => v.name === 'cluster')?.allValue ?? '';
      expect(chosen.cluster).not.toBe('');

      const counts: string[] = [];
      const empty: string[] = [];
      for (const q of queries) {
        const expr = substitute(q.expr, chosen);
        const series = await prometheus.query(expr);
        counts.push(`${q.panel}: ${series.length}`);
        if (series.length === 0) empty.push(`${q.panel}: ${expr}`);
      }
      console.log(`dashboard queries, series each: ${counts.join('; ')}`);
      expect(queries.length).toBeGreaterThan(20);
      expect(empty).toEqual([]);
    },
  );
});
