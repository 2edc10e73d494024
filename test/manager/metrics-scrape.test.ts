/**
 * The manager's /metrics as a real Prometheus reads it (the pinned one build.sh builds): the
 * manager's own server, its metrics fed a cluster that lost quorum, scraped with the rules file
 * the chart ships. Prometheus takes every line, reads the values back, and the quorum alert is
 * on its way. No cluster: the e2e (test/e2e/metrics-alerts.test.ts) does it for real.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { serve } from '../../manager/main.ts';
import { RULES_FILE } from '../../manager/metrics-files.ts';
import { ManagerMetrics } from '../../manager/metrics.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { freePort } from '../effects/etcd/local-etcd.ts';
import { until } from '../../localcluster/until.ts';

const root = path.join(import.meta.dirname, '..', '..');

describe('manager metrics: scraped by a real Prometheus', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'metrics-scrape-'));
  let server: Server;
  let prometheus: ChildProcess | undefined;
  let url = '';
  const api = async <T>(p: string): Promise<T> =>
    ((await (await fetch(`${url}/api/v1/${p}`)).json()) as { data: T }).data;

  beforeAll(async () => {
    const metrics = new ManagerMetrics();
    const cluster = {
      metadata: { namespace: 'prod', name: 'demo', uid: 'u1' },
      spec: { replicas: 3, progressDeadlineSeconds: 600 },
      status: {
        readyMembers: 1,
        observed: { step: 'Degraded', state: 'degraded', stepStartedAt: '2026-11-27T09:00:00Z' },
      },
    } as unknown as EtcdCluster;
    metrics.clusters.watch({
      EtcdCluster: { list: () => [cluster] },
      EtcdSnapshot: { list: () => [] },
      EtcdSnapshotSchedule: { list: () => [] },
    });
    metrics.clusters.probed(
      { namespace: 'prod', name: 'demo', uid: 'u1' },
      {
        clusterID: 'c',
        members: ['a', 'b', 'c'].map((id) => ({ id, name: `demo-${id}`, peerURL: '', learner: false })),
        healthy: ['a'],
        leader: null,
        sizes: { a: { dbSize: 4096, dbSizeInUse: 2048 } },
      },
    );
    metrics.errors.inc({ kind: 'a "quoted"\\kind' });
    server = await serve(
      { listenHost: '127.0.0.1', listenPort: 0 },
      metrics,
      () => undefined,
      pino({ level: 'silent' }),
    );
    const config = path.join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      stringify({
        global: { scrape_interval: '1s' },
        rule_files: [path.join(root, RULES_FILE)],
        scrape_configs: [
          {
            job_name: 'etcd-operator',
            static_configs: [{ targets: [`127.0.0.1:${(server.address() as AddressInfo).port}`] }],
          },
        ],
      }),
    );
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      await binary('prometheus'),
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
  }, 1_800_000);
  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes every line of the exposition, reads the values back, and the quorum alert is on its way', async () => {
    const target = await until(
      'Prometheus scraped the manager',
      async () => {
        const t = await api<{ activeTargets: { health: string; lastError: string }[] }>('targets').catch(
          () => undefined,
        );
        const first = t?.activeTargets[0];
        // Not scraped yet, or a scrape that ran out of its 1 s (the scrape interval) on a loaded
        // machine: neither says anything of the exposition, so wait for the next.
        return !first || first.health === 'unknown' || /deadline exceeded/.test(first.lastError) ? undefined : first;
      },
      30_000,
      500,
    );
    expect(target).toEqual(expect.objectContaining({ health: 'up', lastError: '' }));
    const value = async (q: string) =>
      (await api<{ result: { value: [number, string] }[] }>(`query?query=${encodeURIComponent(q)}`)).result.map((r) =>
        Number(r.value[1]),
      );
    expect(await value('etcd_operator_cluster_healthy_voters{namespace="prod",cluster="demo"}')).toEqual([1]);
    expect(await value('etcd_operator_cluster_quorum{namespace="prod",cluster="demo"}')).toEqual([2]);
    expect(await value('etcd_operator_member_database_size_bytes{member="demo-a"}')).toEqual([4096]);
    expect(await value('etcd_operator_reconcile_errors_total{kind="a \\"quoted\\"\\\\kind"}')).toEqual([1]);
    expect((await value('process_resident_memory_bytes'))[0]).toBeGreaterThan(0);
    // The rule group runs every 30 s; the alert waits a minute before firing, so pending is what it can be.
    const alert = await until(
      'EtcdClusterQuorumLost pending',
      async () =>
        (await api<{ alerts: { labels: Record<string, string>; state: string }[] }>('alerts')).alerts.find(
          (a) => a.labels.alertname === 'EtcdClusterQuorumLost',
        ),
      45_000,
      1000,
    );
    expect(alert.labels).toMatchObject({ namespace: 'prod', cluster: 'demo', severity: 'critical' });
  }, 90_000);
});
