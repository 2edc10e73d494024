/**
 * The pinned Prometheus (built by localcluster/tools/build.sh) run on the host beside a test's
 * manager, with the rules file the chart ships; and the chart's Grafana dashboard read as Grafana
 * reads it: its variables picked and substituted into each panel's query.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { DASHBOARD_FILE, RULES_FILE } from '../../manager/metrics-files.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { freePort } from '../effects/etcd/local-etcd.ts';
import { until } from '../../localcluster/until.ts';

const root = path.join(import.meta.dirname, '..', '..');

/** An alert pending or firing, as Prometheus's /api/v1/alerts gives it. */
export interface Alert {
  readonly labels: Readonly<Record<string, string>>;
  readonly state: 'pending' | 'firing';
  readonly annotations: Readonly<Record<string, string>>;
}

/** One series of an instant query's answer: its labels and value. */
export interface Sample {
  readonly metric: Record<string, string>;
  readonly value: number;
}

/** Prometheus on the host, its API's base URL and its data in a temp dir. */
export class HostPrometheus {
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

  /** The series an instant query returns now; throws with Prometheus's error when it refuses the query. */
  async query(promql: string): Promise<Sample[]> {
    const r = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await r.json()) as {
      status: string;
      error?: string;
      data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== 'success' || !body.data) throw new Error(`query ${promql} refused: ${body.error}`);
    return body.data.result.map((s) => ({ metric: s.metric, value: Number(s.value[1]) }));
  }

  /** The values of a label over the series `match` selects, as Grafana's `label_values(match, label)` asks. */
  async labelValues(match: string, label: string): Promise<string[]> {
    const r = await fetch(`${this.url}/api/v1/label/${label}/values?match[]=${encodeURIComponent(match)}`);
    return ((await r.json()) as { data: string[] }).data;
  }

  /** The alerts pending or firing now. */
  async alerts(): Promise<Alert[]> {
    const r = await fetch(`${this.url}/api/v1/alerts`);
    return ((await r.json()) as { data: { alerts: Alert[] } }).data.alerts;
  }

  /** Stops it and removes its data. */
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

/** A dashboard variable as the chart's dashboard declares it. */
interface Variable {
  readonly name: string;
  readonly type: string;
  readonly definition?: string;
  readonly allValue?: string;
}

/** The chart's dashboard file: its variables and, per panel, the queries of its targets. */
export function shippedDashboard(): {
  variables: Variable[];
  queries: { panel: string; expr: string }[];
} {
  const json = JSON.parse(readFileSync(path.join(root, DASHBOARD_FILE), 'utf8')) as {
    templating: { list: Variable[] };
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  return {
    variables: json.templating.list,
    queries: json.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr }))),
  };
}

/**
 * `expr` as Grafana sends it: each `$name` (or `${name}`) a variable's chosen value, and Grafana's
 * own intervals as a 5 s scrape makes them ($__rate_interval: four scrapes, Grafana's floor).
 */
export function substitute(expr: string, chosen: Readonly<Record<string, string>>): string {
  const builtIn: Record<string, string> = { __rate_interval: '20s', __interval: '5s', __range: '1h' };
  return expr.replace(/\$(?:\{(\w+)\}|(\w+))/g, (whole, braced?: string, bare?: string) => {
    const name = (braced ?? bare)!;
    const value = chosen[name] ?? builtIn[name];
    if (value === undefined) throw new Error(`${expr}: no value for the variable ${whole}`);
    return value;
  });
}
