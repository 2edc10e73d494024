/**
 * An informer: list, then watch from the list's resourceVersion, keeping a cache of the
 * objects and calling back on every change. A watch that ends is resumed from the last
 * resourceVersion seen; one the API server answers with 410 Gone (the version is too old) is
 * replaced by a fresh list, whose differences from the cache are reported as changes, so no
 * deletion is missed. Failures back off (1 s doubling to 30 s) and never stop it. Objects are
 * cached without their managedFields, which nothing here reads and which are often the
 * largest part of an object (client-go's informers drop them the same way).
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Log } from '../effects/types.ts';

/** The fields of an object the informer needs. */
export interface KubeObject {
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; managedFields?: unknown };
}

/** The object as the cache keeps it: without metadata.managedFields (the server-side apply bookkeeping). */
export function trimmed<T extends KubeObject>(object: T): T {
  // Set rather than deleted: the object keeps its shape (V8's hidden class), only the value goes.
  if (object.metadata?.managedFields !== undefined) object.metadata.managedFields = undefined;
  return object;
}

/** What changed. */
export type Change = 'added' | 'modified' | 'deleted';

/** One page of a list call: the objects and the collection's resourceVersion. */
export interface Listed<T> {
  readonly items: readonly T[];
  readonly resourceVersion: string;
}

/** Options of Informer. */
export interface InformerOptions<T extends KubeObject> {
  /** For logs and metrics, e.g. 'pods'. */
  readonly name: string;
  readonly kubeConfig: KubeConfig;
  /** The collection's API path, e.g. `/api/v1/pods` or `/apis/g/v/namespaces/ns/things`. */
  readonly path: string;
  readonly labelSelector?: string;
  /** Lists the collection (with the same selector). */
  list(signal: AbortSignal): Promise<Listed<T>>;
  /** Called for every change, after the cache holds it. */
  onChange(change: Change, object: T): void;
  /** The watch call; Watch#watch of client-node unless a unit test gives its own. */
  readonly watch?: WatchFn;
  /** Called after each (re-)list: how many times it has listed. */
  onList?(count: number): void;
  readonly log: Log;
}

/** Watch#watch's signature: calls back per event, then `done` once the stream ends. */
export type WatchFn = (
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  callback: (phase: string, object: unknown) => void,
  done: (err: unknown) => void,
) => Promise<{ abort(): void }>;

const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const MIN_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

/** A cache of one collection, kept current by a watch. */
export class Informer<T extends KubeObject> {
  readonly #o: InformerOptions<T>;
  readonly #cache = new Map<string, T>();
  readonly #watch: WatchFn;
  #resourceVersion = '';
  #synced = false;
  #lists = 0;
  #backoff = MIN_BACKOFF_MS;
  #stopped = false;
  #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #syncWaiters: (() => void)[] = [];

  constructor(options: InformerOptions<T>) {
    this.#o = options;
    const real = new Watch(options.kubeConfig);
    this.#watch = options.watch ?? ((path, query, callback, done) => real.watch(path, query, callback, done));
  }

  /** Whether the first list has filled the cache. */
  get synced(): boolean {
    return this.#synced;
  }

  /** How many lists it has made (1 + re-lists). */
  get lists(): number {
    return this.#lists;
  }

  /** Starts listing and watching; resolves once the first list is in the cache. */
  start(): Promise<void> {
    void this.#relist();
    return this.#synced ? Promise.resolve() : new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  /** Stops watching. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#abort.abort();
  }

  /** The cached object, if any. */
  get(namespace: string, name: string): T | undefined {
    return this.#cache.get(`${namespace}/${name}`);
  }

  /** Every cached object. */
  list(): T[] {
    return [...this.#cache.values()];
  }

  async #relist(): Promise<void> {
    if (this.#stopped) return;
    let listed: Listed<T>;
    try {
      listed = await this.#o.list(this.#abort.signal);
    } catch (err) {
      this.#o.log.warn({ informer: this.#o.name, err: String(err) }, 'list failed; retrying with back-off');
      return this.#retry(() => this.#relist());
    }
    const fresh = new Map(listed.items.map((o) => [keyOf(o), trimmed(o)] as const));
    const gone = [...this.#cache.entries()].filter(([key]) => !fresh.has(key));
    this.#cache.clear();
    for (const [key, o] of fresh) this.#cache.set(key, o);
    this.#resourceVersion = listed.resourceVersion;
    this.#lists += 1;
    this.#o.onList?.(this.#lists);
    // A re-list reports what changed while no watch ran: deletions and every listed object.
    for (const [, o] of gone) this.#o.onChange('deleted', o);
    for (const o of fresh.values()) this.#o.onChange(this.#synced ? 'modified' : 'added', o);
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
    }
    void this.#watchFrom();
  }

  async #watchFrom(): Promise<void> {
    if (this.#stopped) return;
    let gone = false;
    const ended = new Promise<unknown>((resolve) => {
      const query = {
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        labelSelector: this.#o.labelSelector,
      };
      const onEvent = (phase: string, object: T & { code?: number }): void => {
        if (phase === 'ERROR') {
          gone = object.code === 410;
          return;
        }
        this.#backoff = MIN_BACKOFF_MS;
        const rv = object.metadata?.resourceVersion;
        if (rv) this.#resourceVersion = rv;
        if (phase !== 'BOOKMARK') this.#apply(phase, trimmed(object));
      };
      this.#watch(this.#o.path, query, (phase, object) => onEvent(phase, object as T & { code?: number }), resolve)
        .then((controller) => this.#abort.signal.addEventListener('abort', () => controller.abort(), { once: true }))
        .catch(resolve);
    });
    const err = await ended;
    if (this.#stopped) return;
    if (gone || (err as { code?: number } | null)?.code === 410) {
      this.#o.log.info({ informer: this.#o.name }, 'watch expired (410 Gone): listing again');
      return this.#relist();
    }
    if (err && (err as { name?: string }).name !== 'TimeoutError') {
      this.#o.log.warn(
        { informer: this.#o.name, err: err instanceof Error ? err.message : JSON.stringify(err) },
        'watch failed; resuming with back-off',
      );
      return this.#retry(() => this.#watchFrom());
    }
    return this.#watchFrom();
  }

  #apply(phase: string, object: T): void {
    const key = keyOf(object);
    this.#o.log.debug?.(
      { informer: this.#o.name, event: phase, object: key, resourceVersion: object.metadata?.resourceVersion },
      'watch event',
    );
    if (phase === 'DELETED') {
      this.#cache.delete(key);
      this.#o.onChange('deleted', object);
      return;
    }
    const known = this.#cache.has(key);
    this.#cache.set(key, object);
    this.#o.onChange(known ? 'modified' : 'added', object);
  }

  #retry(again: () => Promise<void>): void {
    const delay = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, MAX_BACKOFF_MS);
    this.#timer = setTimeout(() => void again(), delay);
  }
}
