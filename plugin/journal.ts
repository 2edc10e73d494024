/**
 * `kubectl etcd why NAME` and `kubectl etcd statechart NAME`: the manager's journal, read through
 * the API server's service proxy (manager/journal-api.ts serves it), printed as
 * `etcd-operator journal` prints it, or the object's chart with the path it took.
 */
import { writeFileSync } from 'node:fs';
import { TimelineFormatter, type TimelineRow } from '../journal/index.ts';
import type { Command } from './args.ts';
import type { KubeClient } from './api.ts';
import { managerGet } from './manager-proxy.ts';
import { printObject } from './print.ts';
import type { PluginIO } from './wait.ts';

type WhyCommand = Extract<Command, { command: 'why' }>;
type ChartCommand = Extract<Command, { command: 'statechart' }>;

/** What the manager answers for a timeline. */
export interface TimelineAnswer {
  readonly objects: readonly {
    kind: string;
    namespace: string;
    name: string;
    uid: string;
    state: string;
    seq: number;
  }[];
  readonly rows: readonly TimelineRow[];
}

/** The timeline for people: a line per object, then the steps with their intents and outcomes. */
export function renderTimeline(a: TimelineAnswer): string {
  const heads = a.objects.map(
    (o) => `# ${o.kind} ${o.namespace}/${o.name} (uid ${o.uid}): ${o.state} after step #${o.seq}`,
  );
  const formatter = new TimelineFormatter({ showObject: a.objects.length > 1 || a.objects[0]?.kind === 'EtcdCluster' });
  return `${[...heads, ...formatter.format(a.rows)].join('\n')}\n`;
}

/** The query string of a timeline request. */
export function timelinePath(c: Pick<WhyCommand, 'name' | 'kind' | 'tail'>, namespace: string): string {
  const q = new URLSearchParams();
  if (c.kind) q.set('kind', c.kind);
  if (c.tail !== undefined) q.set('tail', String(c.tail));
  const query = q.size ? `?${q.toString()}` : '';
  return `/api/journal/${encodeURIComponent(namespace)}/${encodeURIComponent(c.name)}${query}`;
}

/** Runs `why`; resolves to the exit code. */
export async function runWhy(k: KubeClient, c: WhyCommand, io: PluginIO): Promise<number> {
  const ns = c.namespace ?? k.defaultNamespace;
  const answer = JSON.parse(await managerGet(k, c, timelinePath(c, ns))) as TimelineAnswer;
  if (c.output === 'text') io.stdout(renderTimeline(answer));
  else printObject(io, answer, c.output);
  return 0;
}

/** Runs `statechart`; resolves to the exit code. */
export async function runChart(k: KubeClient, c: ChartCommand, io: PluginIO): Promise<number> {
  const ns = c.namespace ?? k.defaultNamespace;
  const q = new URLSearchParams({ format: c.format });
  if (c.member) q.set('member', c.member);
  if (c.last !== undefined) q.set('last', String(c.last));
  const text = await managerGet(
    k,
    c,
    `/api/journal/${encodeURIComponent(ns)}/${encodeURIComponent(c.name)}/chart?${q.toString()}`,
  );
  if (c.file === undefined) io.stdout(text);
  else {
    writeFileSync(c.file, text);
    io.stderr(`wrote ${c.file} (${c.format}, ${text.length} bytes)\n`);
  }
  return 0;
}
