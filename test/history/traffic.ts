/**
 * Traffic recorded for the history checker: several clients, each its own connection, calling
 * gets, puts, conditional txns (compare-and-swap on a key's mod revision or value), deletes and
 * lease cycles (grant, put with the lease, read, revoke, read) on a few shared keys, and several
 * watchers on the prefix, each resuming from the last revision it saw when its stream breaks.
 * Every value written is unique, so a read or an event names the write it saw. `stop` returns
 * the history (test/history/history.ts); checker.ts runs the checker on it.
 */
import { Etcd3, type IOptions, type Watcher } from 'etcd3';
import { BUMP_REVISION } from '../../machines/policy.ts';
import {
  since,
  type History,
  type Input,
  type KV,
  type Operation,
  type Output,
  type Rollback,
  type RollbackSeen,
  type Watch,
  type WatchEvent,
} from './history.ts';

/** What HistoryTraffic needs: where its clients connect, and how much traffic to make. */
export interface HistoryTrafficOptions {
  /** The prefix of every key; fresh per recording (the checker assumes no key exists at the start). */
  readonly prefix: string;
  /** The options of a client's `attempt`-th connection (0 first; a new one after an attempt's deadline). */
  readonly connect: (attempt: number) => IOptions | Promise<IOptions>;
  readonly clients?: number;
  readonly watchers?: number;
  readonly keys?: number;
  /** One call's deadline; past it the outcome is unknown and the client dials again. */
  readonly attemptMs?: number;
  /** Pause between one client's calls. */
  readonly pauseMs?: number;
  /** Seed of the choice of calls, so a run's mix can be made again. */
  readonly seed?: number;
}

/**
 * A lease lives past any recording (15 min): a revoke whose outcome is unknown then never lets
 * it expire mid-run, which the model (no expiry) could not tell from a lost key.
 */
const LEASE_TTL_S = 900;

/**
 * Pass-through fault handling: etcd3's default retries a failed call by itself (a write could
 * then take effect twice for one call) and opens a circuit breaker. A callback that throws
 * (etcd3 marking a broken watch stream failed) rejects instead of throwing.
 */
const passThrough = {
  execute: (fn: (c: { signal: AbortSignal }) => unknown) =>
    new Promise((resolve) => resolve(fn({ signal: new AbortController().signal }))),
} as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/** How long a start waits for the cluster to answer through the client Service. */
export const START_BUDGET_MS = 30_000;

/**
 * The cluster's revision through a connection `dial` makes (the client Service's), asked again
 * every 250 ms (each ask within 2 s) for up to `budgetMs`, and that connection. A Service refuses
 * connections until its endpoints reach the node's Service rules, which can lag the Pods' Ready
 * on a loaded machine: in session 20 all six disruption tests failed at their traffic's first
 * call (ECONNREFUSED on the ClusterIP) right after the cluster settled with its three Pods Ready.
 * The start waits that out, as an application starting would; the disruption a test makes comes
 * after it. Throws the last error past the budget.
 */
export async function firstRevision(
  dial: () => Promise<Etcd3>,
  budgetMs = START_BUDGET_MS,
): Promise<{ etcd: Etcd3; revision: number }> {
  const began = Date.now();
  for (;;) {
    const etcd = await dial();
    try {
      const status = await etcd.maintenance.status({ deadline: Date.now() + 2_000 });
      const waited = Date.now() - began;
      if (waited > 1_000) console.log(`traffic: the client Service answered after ${waited} ms`);
      return { etcd, revision: Number(status.header.revision) };
    } catch (err) {
      etcd.close();
      if (Date.now() - began >= budgetMs) throw err;
      await sleep(250);
    }
  }
}

/** The revision an answered write wrote at (0: it wrote nothing, or its outcome is unknown). */
export function writeRevision(op: Operation): number {
  const out = op.output;
  if (!out) return 0;
  const wrote =
    op.input.type === 'put' ||
    (op.input.type === 'txn' && out.succeeded === true) ||
    (op.input.type === 'delete' && (out.deleted ?? 0) > 0);
  return wrote ? out.revision : 0;
}

/** Watch reconnects from 100 ms doubling to 1 s (etcd3's default grows to 30 s, past `stop`'s wait). */
interface Backoff {
  readonly duration: number;
  next(): Backoff;
}
const watchBackoff = (ms = 100): Backoff => ({ duration: ms, next: () => watchBackoff(Math.min(ms * 2, 1_000)) });

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** mulberry32: a small seeded PRNG, numbers in [0, 1). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Client {
  readonly id: number;
  etcd: Etcd3;
  attempt: number;
  seq: number;
  /** What this client last saw of each key: the CAS conditions it tries. */
  readonly seen: Map<string, KV | null>;
}

interface WatchRecord {
  readonly watcher: number;
  readonly etcd: Etcd3;
  readonly handle: Watcher;
  readonly startRevision: number;
  readonly events: WatchEvent[];
  lastRevision: number;
  resumes: number;
  errors: number;
  canceled?: Watch['canceled'];
}

/** etcd canceled the watch (etcd3 then makes it no more): a compaction past where it resumed. */
export const watchCanceled = (err: Error): boolean => /^Watcher canceled/.test(err.message);

const buf = (s: string): Buffer => Buffer.from(s);
const kvOf = (kv?: { value: Buffer; mod_revision: string }): KV | undefined =>
  kv ? { value: kv.value.toString(), modRevision: Number(kv.mod_revision) } : undefined;

/** Clients and watchers on one etcd cluster, recording a history from `start` to `stop`. */
export class HistoryTraffic {
  readonly #o: Required<Omit<HistoryTrafficOptions, 'seed'>> & { seed: number };
  readonly #origin = process.hrtime.bigint();
  readonly #ops: Operation[] = [];
  readonly #watches: WatchRecord[] = [];
  readonly #clients: Client[] = [];
  #running = false;
  #loops: Promise<void>[] = [];
  /** Watches being made again after etcd canceled them. */
  readonly #rewatching = new Set<Promise<void>>();
  #rollback: Rollback | undefined;

  constructor(options: HistoryTrafficOptions) {
    this.#o = {
      clients: 3,
      watchers: 2,
      keys: 4,
      attemptMs: 2_000,
      pauseMs: 10,
      seed: 1,
      ...options,
    };
  }

  async #dial(attempt: number): Promise<Etcd3> {
    return new Etcd3({
      ...(await this.#o.connect(attempt)),
      faultHandling: { global: passThrough, host: () => passThrough, watchBackoff: watchBackoff() },
    });
  }

  /** Opens the watchers at the cluster's next revision, then starts the clients. */
  async start(): Promise<void> {
    const first = await firstRevision(() => this.#dial(0));
    first.etcd.close();
    for (let w = 0; w < this.#o.watchers; w++) await this.#watch(w, first.revision + 1, await this.#dial(0));
    for (let c = 0; c < this.#o.clients; c++)
      this.#clients.push({ id: c, etcd: await this.#dial(0), attempt: 0, seq: 0, seen: new Map() });
    this.#running = true;
    this.#loops = this.#clients.map((c) => this.#loop(c, random(this.#o.seed * 1000 + c.id)));
  }

  async #watch(watcher: number, startRevision: number, etcd: Etcd3): Promise<void> {
    const handle = await etcd.watch().prefix(`${this.#o.prefix}/`).startRevision(String(startRevision)).create();
    const rec: WatchRecord = {
      watcher,
      etcd,
      handle,
      startRevision,
      events: [],
      lastRevision: startRevision - 1,
      resumes: 0,
      errors: 0,
    };
    const event = (type: WatchEvent['type']) => (kv: { key: Buffer; value: Buffer; mod_revision: string }) => {
      const modRevision = Number(kv.mod_revision);
      const value = type === 'put' ? { value: kv.value.toString() } : {};
      rec.events.push({ type, key: kv.key.toString(), ...value, modRevision, at: since(this.#origin) });
      rec.lastRevision = Math.max(rec.lastRevision, modRevision);
    };
    handle.on('put', event('put'));
    handle.on('delete', event('delete'));
    handle.on('disconnected', () => void rec.resumes++);
    handle.on('error', (err: Error) => {
      if (!watchCanceled(err) || !this.#running) return void rec.errors++;
      rec.canceled = { at: since(this.#origin), reason: err.message };
      const again = this.#watchAgain(watcher);
      this.#rewatching.add(again);
      void again.finally(() => this.#rewatching.delete(again));
    });
    // etcd3 resumes from the created response's header revision, past events a second break
    // before the catch-up would lose; resume from the last event seen instead, as etcd's Go client does.
    handle.on('connected', () => {
      (handle as unknown as { request: { start_revision?: string } }).request.start_revision = String(
        rec.lastRevision + 1,
      );
    });
    this.#watches.push(rec);
  }

  /**
   * After etcd canceled watcher's watch (a rollback's compaction), a watch of its own from the
   * cluster's revision then, as an informer relists: on a connection of its own.
   */
  async #watchAgain(watcher: number): Promise<void> {
    const first = await firstRevision(() => this.#dial(0)).catch(() => undefined);
    if (!first) return;
    if (!this.#running) return first.etcd.close();
    await this.#watch(watcher, first.revision + 1, first.etcd).catch(() => first.etcd.close());
  }

  /** The recording went through a rollback in place: the history says so (history.ts, Rollback). */
  rolledBack(r: RollbackSeen): void {
    const clock = (t: bigint) => Number(t - this.#origin);
    this.#rollback = {
      snapshotRevision: r.snapshotRevision,
      bump: BUMP_REVISION,
      asked: clock(r.asked),
      answered: clock(r.answered),
    };
  }

  /** Calls `send`, recording the call with its times and its answer (null when unknown). */
  async #call(c: Client, input: Input, send: (etcd: Etcd3, deadline: Date) => Promise<Output>): Promise<Output | null> {
    const call = since(this.#origin);
    try {
      const output = await send(c.etcd, new Date(Date.now() + this.#o.attemptMs));
      this.#ops.push({ client: c.id, call, return: since(this.#origin), input, output });
      return output;
    } catch (err) {
      const error = (err as Error).message;
      this.#ops.push({ client: c.id, call, return: since(this.#origin), input, output: null, error });
      // A member that died answers nothing, one removed refuses: dial again, the Service or the
      // next endpoint.
      if (/DEADLINE_EXCEEDED|deadline|UNAVAILABLE/i.test(error)) {
        c.etcd.close();
        c.etcd = await this.#dial(++c.attempt);
      }
      await sleep(100);
      return null;
    }
  }

  async #loop(c: Client, rand: () => number): Promise<void> {
    const keys = Array.from({ length: this.#o.keys }, (_, i) => `${this.#o.prefix}/k${i}`);
    while (this.#running) {
      const key = keys[Math.floor(rand() * keys.length)]!;
      const value = `c${c.id}-${c.seq++}`;
      const r = rand();
      if (r < 0.3) await this.#get(c, key);
      else if (r < 0.55) await this.#put(c, key, value);
      else if (r < 0.7) await this.#cas(c, key, value, { modRevision: c.seen.get(key)?.modRevision ?? 0 });
      else if (r < 0.8) await this.#cas(c, key, value, { value: c.seen.get(key)?.value ?? 'none' });
      else if (r < 0.87) await this.#delete(c, key);
      else await this.#leaseCycle(c, `${this.#o.prefix}/lease-c${c.id}`, value);
      await sleep(this.#o.pauseMs);
    }
  }

  async #get(c: Client, key: string): Promise<void> {
    const out = await this.#call(c, { type: 'get', key }, async (etcd, deadline) => {
      const res = await etcd.kv.range({ key: buf(key) }, { deadline });
      const kv = kvOf(res.kvs[0]);
      return { revision: Number(res.header.revision), ...(kv ? { kv } : {}) };
    });
    if (out) c.seen.set(key, out.kv ?? null);
  }

  async #put(c: Client, key: string, value: string, lease?: string): Promise<void> {
    const input: Input = { type: 'put', key, value, ...(lease ? { lease } : {}) };
    const out = await this.#call(c, input, async (etcd, deadline) => {
      const res = await etcd.kv.put({ key: buf(key), value: buf(value), ...(lease ? { lease } : {}) }, { deadline });
      return { revision: Number(res.header.revision) };
    });
    if (out) c.seen.set(key, { value, modRevision: out.revision });
  }

  async #cas(
    c: Client,
    key: string,
    value: string,
    compare: { modRevision: number } | { value: string },
  ): Promise<void> {
    const cmp =
      'modRevision' in compare
        ? { key: buf(key), target: 'Mod' as const, result: 'Equal' as const, mod_revision: compare.modRevision }
        : { key: buf(key), target: 'Value' as const, result: 'Equal' as const, value: buf(compare.value) };
    const out = await this.#call(c, { type: 'txn', key, compare, value }, async (etcd, deadline) => {
      const res = await etcd.kv.txn(
        {
          compare: [cmp],
          success: [{ request_put: { key: buf(key), value: buf(value) } }],
          failure: [{ request_range: { key: buf(key) } }],
        },
        { deadline },
      );
      const kv = res.succeeded ? undefined : kvOf(res.responses[0]?.response_range.kvs[0]);
      return { revision: Number(res.header.revision), succeeded: res.succeeded, ...(kv ? { kv } : {}) };
    });
    if (out) c.seen.set(key, out.succeeded ? { value, modRevision: out.revision } : (out.kv ?? null));
  }

  async #delete(c: Client, key: string): Promise<void> {
    const out = await this.#call(c, { type: 'delete', key }, async (etcd, deadline) => {
      const res = await etcd.kv.deleteRange({ key: buf(key), prev_kv: true }, { deadline });
      const kv = kvOf(res.prev_kvs[0]);
      return { revision: Number(res.header.revision), deleted: Number(res.deleted), ...(kv ? { kv } : {}) };
    });
    if (out) c.seen.set(key, null);
  }

  /** Grant, put with the lease, read, revoke, read: the key must go with its lease. */
  async #leaseCycle(c: Client, key: string, value: string): Promise<void> {
    const granted = await this.#call(c, { type: 'leaseGrant', key }, async (etcd, deadline) => {
      const res = await etcd.leaseClient.leaseGrant({ TTL: LEASE_TTL_S, ID: 0 }, { deadline });
      return { revision: Number(res.header.revision), lease: String(res.ID) };
    });
    const lease = granted?.lease;
    if (!lease) return;
    await this.#put(c, key, value, lease);
    await this.#get(c, key);
    await this.#call(c, { type: 'leaseRevoke', key, lease }, async (etcd, deadline) => {
      const res = await etcd.leaseClient.leaseRevoke({ ID: lease }, { deadline });
      return { revision: Number(res.header.revision) };
    });
    await this.#get(c, key);
  }

  /** Calls recorded and those of unknown outcome; watches etcd canceled, and those open (made again after a cancel). */
  counts(): { operations: number; unknown: number; canceled: number; watching: number } {
    return {
      operations: this.#ops.length,
      unknown: this.#ops.filter((o) => o.output === null).length,
      canceled: this.#watches.filter((w) => w.canceled).length,
      watching: this.#watches.filter((w) => !w.canceled).length,
    };
  }

  /**
   * Stops the clients, waits (up to `catchUpMs`) until every watcher has seen the highest
   * acknowledged revision, closes everything and returns the history.
   */
  async stop(catchUpMs = 15_000): Promise<History> {
    this.#running = false;
    await Promise.all(this.#loops);
    await Promise.all(this.#rewatching);
    const acked = Math.max(0, ...this.#ops.map(writeRevision));
    const behind = () => this.#watches.filter((w) => !w.canceled && w.lastRevision < acked);
    for (let waited = 0; waited < catchUpMs && behind().length > 0; waited += 100) await sleep(100);
    const caughtUp = new Set(this.#watches.filter((w) => !w.canceled && w.lastRevision >= acked));
    const watches = this.#watches.map((w) => ({
      watcher: w.watcher,
      client: this.#o.clients + w.watcher,
      prefix: `${this.#o.prefix}/`,
      startRevision: w.startRevision,
      events: [...w.events],
      resumes: w.resumes,
      complete: caughtUp.has(w) && w.errors === 0,
      ...(w.canceled ? { canceled: w.canceled } : {}),
    }));
    this.close();
    return { operations: [...this.#ops], watches, ...(this.#rollback ? { rollback: this.#rollback } : {}) };
  }

  /** Closes every client and watcher (also after a failure before `stop`). */
  close(): void {
    this.#running = false;
    for (const w of this.#watches) {
      w.handle.cancel().catch(() => undefined);
      w.etcd.close();
    }
    for (const c of this.#clients) c.etcd.close();
  }
}
