/**
 * The manager's metrics and alerts read by a real Prometheus (the pinned one build.sh builds, run
 * on the host beside the manager, with the rules file the chart ships): it scrapes what the manager
 * knows of a 3-member cluster, and with two members stopped (their etcd processes frozen, as a hung
 * machine would leave them) EtcdClusterQuorumLost fires for real, and clears once they run again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { RULES_FILE } from '../../manager/metrics-files.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { freePort } from '../effects/etcd/local-etcd.ts';
import { until } from '../until.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('metrics');
const { ns, kube } = env;
const root = path.join(import.meta.dirname, '..', '..');

interface Alert {
  readonly labels: Readonly<Record<string, string>>;
  readonly state: 'pending' | 'firing';
  readonly annotations: Readonly<Record<string, string>>;
}

/** Prometheus on the host, its API's base URL and its data in a temp dir. */
class HostPrometheus {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-operator-prometheus-'));
  url = '';
  #child: ChildProcess | undefined;
  #log = '';

  /** Starts it scraping the manager every 5 s with the chart's rules; resolves once it is ready. */
  async start(managerPort: number): Promise<void> {
    const config = path.join(this.dir, 'prometheus.yml');
    writeFileSync(
      config,
      stringify({
        global: { scrape_interval: '5s', evaluation_interval: '5s' },
        rule_files: [path.join(root, RULES_FILE)],
        scrape_configs: [{ job_name: 'etcd-operator', static_configs: [{ targets: [`127.0.0.1:${managerPort}`] }] }],
      }),
    );
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    this.#child = spawn(
      await binary('prometheus'),
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(this.dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.#child.stderr
      ?.setEncoding('utf8')
      .on('data', (chunk: string) => (this.#log = (this.#log + chunk).slice(-4000)));
    await until(
      () => `Prometheus ready at ${this.url} (its log: ${this.#log.slice(-500)})`,
      () =>
        fetch(`${this.url}/-/ready`).then(
          (r) => (r.ok ? true : undefined),
          () => undefined,
        ),
      60_000,
    );
  }

  /** The value of each series an instant query returns, by its labels as JSON. */
  async query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]> {
    const r = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await r.json()) as {
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    return body.data.result.map((s) => ({ metric: s.metric, value: Number(s.value[1]) }));
  }

  /** The alerts pending or firing now. */
  async alerts(): Promise<Alert[]> {
    const r = await fetch(`${this.url}/api/v1/alerts`);
    return ((await r.json()) as { data: { alerts: Alert[] } }).data.alerts;
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

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

describe.skipIf(!hasNode)('metrics: a real Prometheus scrapes the manager and its alerts fire', () => {
  env.hooks({ args: ['--max-probe-interval', '15'] });
  const prometheus = new HostPrometheus();
  const demo = new ClusterUnderTest(kube, ns, 'demo');
  const frozen: number[] = [];
  const at = `namespace="${ns}", cluster="demo"`;
  const quorumLost = (alerts: Alert[]) =>
    alerts.find((a) => a.labels.alertname === 'EtcdClusterQuorumLost' && a.labels.namespace === ns);

  beforeAll(async () => {
    await demo.create({ replicas: 3 });
    await demo.settled(3);
    await prometheus.start(env.manager.port);
  }, 600_000);
  afterAll(async () => {
    for (const pid of frozen.splice(0)) process.kill(pid, 'SIGCONT');
    await prometheus.stop();
  });

  it("Prometheus reads the cluster's members, quorum, leader and database sizes from the manager", async () => {
    const healthy = await until(
      'Prometheus scraped 3 healthy voters',
      async () => {
        const r = await prometheus.query(`etcd_operator_cluster_healthy_voters{${at}}`);
        return r[0]?.value === 3 ? r : undefined;
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
    expect(quorumLost(await prometheus.alerts())).toBeUndefined();
  });

  it('two of three members stopped: EtcdClusterQuorumLost fires, and clears once they run again', async () => {
    const uid = (await demo.get()).metadata.uid ?? '';
    for (const member of ['demo-1', 'demo-2']) {
      const pid = etcdPid(member, uid);
      process.kill(pid, 'SIGSTOP');
      frozen.push(pid);
    }
    const stopped = performance.now();
    const fired = await until(
      'EtcdClusterQuorumLost firing in Prometheus',
      async () => {
        const alert = quorumLost(await prometheus.alerts());
        return alert?.state === 'firing' ? alert : undefined;
      },
      300_000,
      2000,
    );
    console.log(`EtcdClusterQuorumLost firing ${((performance.now() - stopped) / 1000).toFixed(0)} s after the stop`);
    expect(fired.labels).toMatchObject({ severity: 'critical', cluster: 'demo', namespace: ns });
    expect(fired.annotations.summary).toBe(`etcd cluster ${ns}/demo has lost quorum: it can neither read nor write.`);
    expect(fired.annotations.description).toMatch(/^Only 1 voting member\(s\) of .* answer/);

    for (const pid of frozen.splice(0)) process.kill(pid, 'SIGCONT');
    await until(
      'EtcdClusterQuorumLost cleared',
      async () => (quorumLost(await prometheus.alerts()) ? undefined : true),
      300_000,
      2000,
    );
    await demo.settled(3);
  });
});
