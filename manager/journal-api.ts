/**
 * The journal, read-only, on the manager's main listener, for `kubectl etcd why` and
 * `kubectl etcd statechart`, which reach it through the API server's service proxy (RBAC
 * services/proxy on the chart's Service; no pods/exec or port-forward):
 *
 *   GET /api/journal/NAMESPACE/NAME[?kind=KIND&tail=STEPS]       the timeline as JSON: the objects and their rows
 *   GET /api/journal/NAMESPACE/NAME/chart[?member=M&last=N&format=svg|dot|json]   the object's chart with its path
 *
 * NAME is a cluster (with its members, snapshots and schedules) or one of those by name, as
 * `etcd-operator journal NAME` reads it. Rows are redacted once more on the way out.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { redactedJson, type Journal, type ObjectKind, type Snapshot, type TimelineRow } from '../journal/index.ts';
import { select } from '../journal/cli.ts';
import {
  machineChart,
  overlayInputFrom,
  overlayOf,
  renderChart,
  StatechartNotFoundError,
} from '../statechart/index.ts';
import { isFormat } from '../statechart/output.ts';
import type { JournalSource } from './debug/live-objects.ts';

/** Where the routes live on the listener. */
export const JOURNAL_API_PREFIX = '/api/journal/';

/** Most steps per object a timeline answer carries (the newest). */
const MAX_STEPS = 1000;

const KINDS: readonly ObjectKind[] = ['EtcdCluster', 'EtcdMember', 'EtcdSnapshot', 'EtcdSnapshotSchedule'];

/** Adds the journal routes in front of the server's own handler; other paths go to it unchanged. */
export function routeJournalApi(server: Server, source: Pick<JournalSource, 'current'>): void {
  const others = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!(req.url ?? '').startsWith(JOURNAL_API_PREFIX)) {
      for (const handler of others) handler.call(server, req, res);
      return;
    }
    void answer(req, res, source.current).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: err instanceof Error ? err.message : String(err) });
      else res.end();
    });
  });
}

async function answer(req: IncomingMessage, res: ServerResponse, journal: Journal | undefined): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'read-only: GET only' });
  const url = new URL(req.url ?? '/', 'http://manager');
  const [namespace = '', name = '', what, ...rest] = url.pathname
    .slice(JOURNAL_API_PREFIX.length)
    .split('/')
    .map(decodeURIComponent);
  if (!namespace || !name || rest.length > 0 || (what !== undefined && what !== 'chart')) {
    return send(res, 404, { error: `not found: ${JOURNAL_API_PREFIX}NAMESPACE/NAME[/chart]` });
  }
  if (!journal) return send(res, 503, { error: 'the manager has no journal open yet (it opens it once it leads)' });
  const q = url.searchParams;
  if (what === 'chart') return chart(res, journal, namespace, name, q);
  const kind = q.get('kind') ?? undefined;
  if (kind !== undefined && !KINDS.includes(kind as ObjectKind)) {
    return send(res, 400, { error: `kind must be one of ${KINDS.join(', ')}, not ${kind}` });
  }
  const tail = Math.min(Math.max(Number(q.get('tail') ?? MAX_STEPS) || MAX_STEPS, 1), MAX_STEPS);
  const found = select(journal.objects(), namespace, name, kind as ObjectKind | undefined);
  if (found.length === 0) {
    return send(res, 404, { error: `the journal has no ${kind ?? 'object'} named ${name} in namespace ${namespace}` });
  }
  const rows = found
    .flatMap((o) => journal.timeline({ uid: o.ref.uid }, { afterSeq: Math.max(0, o.seq - tail) }))
    .sort((a: TimelineRow, b: TimelineRow) => a.lsn - b.lsn);
  send(res, 200, { objects: found.map(brief), rows });
}

async function chart(
  res: ServerResponse,
  journal: Journal,
  namespace: string,
  name: string,
  q: URLSearchParams,
): Promise<void> {
  const format = q.get('format') ?? 'svg';
  if (!isFormat(format)) return send(res, 400, { error: `format must be svg, dot or json, not ${format}` });
  const last = q.get('last') === null ? undefined : Number(q.get('last'));
  const member = q.get('member') ?? undefined;
  let text: string;
  try {
    const { machine, input } = overlayInputFrom(journal, {
      name,
      namespace,
      ...(member ? { member } : {}),
      ...(last !== undefined && Number.isSafeInteger(last) && last >= 0 ? { last } : {}),
    });
    const c = machineChart(machine);
    text = await renderChart(c, format, overlayOf(c, input));
  } catch (err) {
    if (err instanceof StatechartNotFoundError) return send(res, 404, { error: err.message });
    throw err;
  }
  const type = format === 'svg' ? 'image/svg+xml' : format === 'json' ? 'application/json' : 'text/vnd.graphviz';
  res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(text);
}

const brief = (o: Snapshot) => ({ ...o.ref, machine: o.machine, state: o.stage, seq: o.seq });

function send(res: ServerResponse, status: number, value: unknown): void {
  res
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    .end(`${redactedJson(value)}\n`);
}
