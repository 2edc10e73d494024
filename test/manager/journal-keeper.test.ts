import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import type { KubeClients, KubeContext } from '../../effects/kubernetes/index.ts';
import type { Handler } from '../../effects/types.ts';
import { CLUSTER_INTENTS } from '../../machines/index.ts';
import { JournalKeeper } from '../../manager/journal-keeper.ts';
import { serve } from '../../manager/main.ts';
import { ManagerMetrics } from '../../manager/metrics.ts';
import { ObjectRunners } from '../../manager/object-runners.ts';
import { KINDS } from '../../manager/kinds/index.ts';
import { clusterObserved, membersListed } from '../../manager/observe.ts';
import { RESUMED_EVENT } from '../../manager/resume.ts';
import { DAMAGES, damageWhileOpen, tempDb } from '../journal/helpers.ts';

const T0 = Date.parse('2026-11-24T08:30:00.000Z');
let clock = T0;
const now = (): number => (clock += 1000);

/** The Kubernetes API as far as status writes and Events go: no API server runs in unit tests. */
function fakeKube() {
  const events: { reason?: string; type?: string; message?: string; involvedObject: { name?: string } }[] = [];
  const kube = {
    core: {
      createNamespacedEvent: (r: { body: (typeof events)[number] }) => {
        events.push(r.body);
        return Promise.resolve(r.body);
      },
      patchNamespacedEvent: () => Promise.resolve({}),
    },
    custom: {
      getNamespacedCustomObject: () => Promise.resolve({ status: {} }),
      patchNamespacedCustomObjectStatus: () => Promise.resolve({}),
      patchNamespacedCustomObject: () => Promise.resolve({}),
    },
  } as unknown as KubeClients;
  return { kube, events };
}

/** Every cluster intent done at once; while `gate.hold` is set, createMember waits for it. */
function handlers(gate: {
  hold?: Promise<void>;
}): Record<string, Handler<never, Record<string, unknown>, KubeContext>> {
  return Object.fromEntries(
    CLUSTER_INTENTS.map((kind) => [
      kind,
      {
        kind,
        run: async () => {
          if (kind === 'createMember') await gate.hold;
          return {};
        },
        recover: () => Promise.resolve({ done: false as const }),
      },
    ]),
  );
}

const cluster = (name: string): EtcdCluster =>
  ({
    apiVersion: 'etcd-operator.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, generation: 1 },
    spec: { replicas: 3, version: '3.6.16', progressDeadlineSeconds: 600 },
  }) as EtcdCluster;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const clean of cleanups.splice(0).reverse()) clean();
});

/** A manager's runtime on a real journal file: the keeper, the runners, and working a cluster's key as the controller does. */
function runtime(options: { busyTimeoutMs?: number } = {}) {
  const path = tempDb();
  const lines: { msg: string; reason?: string; movedTo?: string }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as never) });
  const metrics = new ManagerMetrics();
  const keeper = new JournalKeeper({
    path,
    log,
    metrics,
    journal: { busyTimeoutMs: options.busyTimeoutMs ?? 5000, synchronous: 'NORMAL' },
    reopenEveryMs: 0,
    now: () => new Date(clock),
  });
  keeper.open();
  cleanups.push(() => keeper.close());
  const { kube, events } = fakeKube();
  const gate: { hold?: Promise<void> } = {};
  const runners = new ObjectRunners<KubeContext>({
    journal: keeper,
    log,
    metrics,
    kube,
    handlers: handlers(gate),
    context: (c) => ({ cluster: c, signal: AbortSignal.timeout(5000), log, kube }),
    now,
  });
  const objects = new Map([cluster('demo'), cluster('other')].map((c) => [c.metadata.name ?? '', c]));
  /** Works a cluster's key as Controller.#work does: its members, then its spec. */
  const work = (name: string) => {
    const key = `EtcdCluster/default/${name}`;
    return runners.withJournal(key, async () => {
      const object = objects.get(name)!;
      const entry = await runners.entry(KINDS.EtcdCluster, key, object);
      await entry.runner.feed(membersListed(name, [], now()));
      await entry.runner.feed(clusterObserved(object, now()));
    });
  };
  const said = (msg: RegExp) => lines.filter((l) => msg.test(l.msg));
  const replacedEvents = () => events.filter((e) => e.reason === 'JournalReplaced');
  const damagedFiles = () => readdirSync(dirname(path)).filter((f) => /\.damaged-\S+Z$/.test(f));
  return { path, keeper, metrics, objects, gate, work, said, events, replacedEvents, damagedFiles };
}

/** /readyz of a manager whose only reason not to be ready is its journal. */
async function readyz(keeper: JournalKeeper): Promise<[number, string]> {
  const log = pino({ level: 'silent' });
  const server = await serve(
    { listenHost: '127.0.0.1', listenPort: 0 },
    new ManagerMetrics(),
    () => keeper.unwritable,
    log,
  );
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    return [res.status, await res.text()];
  } finally {
    server.close();
  }
}

/** Makes a directory refuse new names: chmod for a user, chattr +i for root (whom modes do not stop); undefined when neither can. */
function readOnlyDir(dir: string): (() => void) | undefined {
  if (process.getuid?.() !== 0) {
    chmodSync(dir, 0o555);
    return () => chmodSync(dir, 0o755);
  }
  try {
    execFileSync('chattr', ['+i', dir], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return () => execFileSync('chattr', ['-i', dir], { stdio: 'ignore' });
}

describe('journal keeper: a journal damaged while the manager runs', () => {
  for (const [what, damage] of Object.entries(DAMAGES)) {
    it(`${what}: the next step moves it aside once, goes on in a new journal, and says so once: log, metric, an Event per object`, async () => {
      const rt = runtime();
      const heard: string[] = [];
      rt.keeper.watch((c) => heard.push(c.kind === 'appended' ? `${c.kind} ${c.rows[0]?.ref.name}` : c.kind));
      expect(await rt.work('demo')).toBe('done');
      expect(await rt.work('other')).toBe('done');
      const before = rt.keeper.journal;
      expect(rt.keeper.current).toBe(before);
      expect(before.objects().map((o) => o.ref.name)).toEqual(['demo', 'other']);
      const lastSeq = Object.fromEntries(before.objects().map((o) => [o.ref.name, o.seq]));

      damageWhileOpen(rt.path, damage);
      rt.objects.set('demo', { ...cluster('demo'), spec: { ...cluster('demo').spec, replicas: 5 } });
      expect(await rt.work('demo')).toBe('again');

      const [file] = rt.damagedFiles();
      expect(file).toMatch(/^journal\.db\.damaged-2026-11-24T\d{6}\.\d{3}Z$/);
      expect(rt.keeper.journal).not.toBe(before);
      expect(rt.keeper.journal.objects()).toEqual([]);
      expect(rt.keeper.unwritable).toBeUndefined();

      // Both objects are worked on the new journal: each resumed from its resume annotation, each told once.
      for (let round = 0; round < 3; round++) {
        expect(await rt.work('demo')).toBe('done');
        expect(await rt.work('other')).toBe('done');
      }
      expect(rt.keeper.journal.objects().map((o) => [o.ref.name, o.seq > 0])).toEqual([
        ['demo', true],
        ['other', true],
      ]);
      // The new journal goes on from the step the status carries, in the same numbering.
      const first = (uid: string) => rt.keeper.journal.timeline({ uid }, { limit: 1 })[0];
      expect(first('uid-demo')).toMatchObject({ name: RESUMED_EVENT, seq: lastSeq.demo });
      expect(first('uid-other')).toMatchObject({ name: RESUMED_EVENT, seq: lastSeq.other });
      expect(rt.replacedEvents().map((e) => [e.involvedObject.name, e.type])).toEqual([
        ['demo', 'Warning'],
        ['other', 'Warning'],
      ]);
      expect(rt.replacedEvents()[0]?.message).toContain(`${file}`);
      expect(rt.replacedEvents()[0]?.message).toMatch(/resumes from step \d+ of its resume annotation/);
      expect(rt.said(/the journal was damaged/)).toHaveLength(1);
      expect(rt.said(/the journal was damaged/)[0]?.reason).toMatch(/is damaged: .*malformed.*SQLITE_CORRUPT/);
      expect(rt.metrics.journalReplaced.get()).toBe(1);
      expect(rt.damagedFiles()).toEqual([file]);
      // Whoever watches the keeper heard the writes to both journals, and the replacement between them.
      const replaced = heard.indexOf('replaced');
      expect(heard.slice(0, replaced)).toContain('appended demo');
      expect(heard.slice(replaced + 1)).toEqual(expect.arrayContaining(['appended demo', 'appended other']));
    });
  }

  it('work that was running on the old journal when it was replaced is done again on the new one, without moving the new one aside', async () => {
    const rt = runtime();
    expect(await rt.work('demo')).toBe('done');
    let release!: () => void;
    rt.gate.hold = new Promise<void>((resolve) => (release = resolve));
    const held = rt.work('other'); // journals createMember, then waits in its effect
    while (!rt.keeper.journal.openIntents().some((i) => i.type === 'createMember' && i.id.startsWith('uid-other')))
      await new Promise((resolve) => setImmediate(resolve));

    damageWhileOpen(rt.path, DAMAGES['32 KiB of garbage in the middle']);
    rt.objects.set('demo', { ...cluster('demo'), spec: { ...cluster('demo').spec, replicas: 5 } });
    expect(await rt.work('demo')).toBe('again');
    release();
    expect(await held).toBe('again'); // its outcome had no journal to go to

    expect(await rt.work('other')).toBe('done');
    expect(rt.metrics.journalReplaced.get()).toBe(1);
    expect(rt.said(/the journal was damaged/)).toHaveLength(1);
    expect(rt.replacedEvents().map((e) => e.involvedObject.name)).toEqual(['other']);
  });
});

describe('journal keeper: /readyz while the journal cannot be written', () => {
  it('a write that fails (another process holds the file locked) makes /readyz 503 with why; the next write that succeeds makes it 200', async () => {
    const rt = runtime({ busyTimeoutMs: 20 });
    expect(await rt.work('demo')).toBe('done');
    expect(await readyz(rt.keeper)).toEqual([200, 'ok\n']);

    const other = new Database(rt.path);
    other.exec('BEGIN EXCLUSIVE');
    try {
      await expect(rt.work('other')).rejects.toMatchObject({ code: 'ERR_JOURNAL_WRITE' });
      await expect(rt.work('other')).rejects.toMatchObject({ code: 'ERR_JOURNAL_WRITE' });
      const [status, body] = await readyz(rt.keeper);
      expect(status).toBe(503);
      expect(body).toMatch(/^journal .*: write failed: database is locked\n$/);
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect(await rt.work('other')).toBe('done');
    expect(await readyz(rt.keeper)).toEqual([200, 'ok\n']);
    expect(rt.said(/cannot be written/)).toHaveLength(1);
    expect(rt.said(/can be written again/)).toHaveLength(1);
    expect(rt.damagedFiles()).toEqual([]);
  });

  it('the journal made read-only under the running manager (chattr +i, as root) makes /readyz 503; writable again, the next step makes it 200', async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip('only root can make an open file refuse writes (chattr +i)');
    const rt = runtime();
    expect(await rt.work('demo')).toBe('done');
    const files = [rt.path, `${rt.path}-wal`];
    try {
      execFileSync('chattr', ['+i', ...files], { stdio: 'ignore' });
    } catch {
      return ctx.skip('chattr +i is not available here');
    }
    let restored = false;
    const restore = () => void (restored || execFileSync('chattr', ['-i', ...files], { stdio: 'ignore' }));
    cleanups.push(restore);

    await expect(rt.work('other')).rejects.toMatchObject({ code: 'ERR_JOURNAL_WRITE' });
    expect(await readyz(rt.keeper)).toEqual([503, `journal ${rt.path}: write failed: disk I/O error\n`]);
    restore();
    restored = true;
    expect(await rt.work('other')).toBe('done');
    expect(await readyz(rt.keeper)).toEqual([200, 'ok\n']);
    expect(rt.keeper.journal.objects().map((o) => o.ref.name)).toEqual(['demo', 'other']);
    expect(rt.damagedFiles()).toEqual([]);
  });

  it('a damaged journal in a directory made read-only cannot be replaced: 503 until the directory is writable, then a new journal and 200', async (ctx) => {
    const rt = runtime();
    expect(await rt.work('demo')).toBe('done');
    const restore = readOnlyDir(dirname(rt.path));
    if (!restore) return ctx.skip('cannot make a directory read-only here (root without chattr)');
    let restored = false;
    cleanups.push(() => void (restored || restore()));

    damageWhileOpen(rt.path, DAMAGES['truncated to half']);
    rt.objects.set('demo', { ...cluster('demo'), spec: { ...cluster('demo').spec, replicas: 5 } });
    await expect(rt.work('demo')).rejects.toThrow();
    let [status, body] = await readyz(rt.keeper);
    expect(status).toBe(503);
    expect(body).toMatch(/^journal .* is damaged: .*; it could not be replaced: .*\n$/);
    await expect(rt.work('demo')).rejects.toThrow(); // tries again, in vain
    [status, body] = await readyz(rt.keeper);
    expect(status).toBe(503);
    expect(body).toMatch(/^no journal: .* cannot be opened: .*\n$/);
    expect(body.trim().split('\n')).toHaveLength(1);
    expect(rt.metrics.journalReplaced.get()).toBe(0);

    restore();
    restored = true;
    expect(await rt.work('demo')).toBe('done');
    expect(await readyz(rt.keeper)).toEqual([200, 'ok\n']);
    expect(rt.metrics.journalReplaced.get()).toBe(1);
    expect(rt.said(/the journal was damaged/)).toHaveLength(1);
    expect(rt.said(/cannot be written/)).toHaveLength(1);
    expect(rt.replacedEvents().map((e) => e.involvedObject.name)).toEqual(['demo']);
  });
});
