/**
 * The keyed work queue: one worker per key at a time (a key added while its work runs is run
 * once more afterwards, never concurrently), a cap on keys in flight, per-key back-off when the
 * work fails, and `addAfter` for timers. Level-based like controller-runtime's: a key says
 * "look at this object again", so adding it ten times before it runs runs it once.
 */

/** Options of WorkQueue. */
export interface WorkQueueOptions {
  /** Keys worked on at once (default 4). */
  readonly concurrency?: number;
  /** First retry delay after a failure, doubled per failure up to maxRetryMs (default 500 ms). */
  readonly baseRetryMs?: number;
  readonly maxRetryMs?: number;
  /** Called when work for a key throws; the key is retried with back-off. */
  readonly onError?: (key: string, err: unknown, attempt: number) => void;
}

/** Does the work for one key. */
export type Worker = (key: string) => Promise<void>;

/** A keyed, deduplicating work queue with one worker per key. */
export class WorkQueue {
  readonly #work: Worker;
  readonly #concurrency: number;
  readonly #base: number;
  readonly #max: number;
  readonly #onError: WorkQueueOptions['onError'];
  /** Keys waiting to run, in order; a key is here at most once. */
  readonly #ready: string[] = [];
  readonly #queued = new Set<string>();
  readonly #running = new Set<string>();
  /** Keys added while running: run again once done. */
  readonly #dirty = new Set<string>();
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #failures = new Map<string, number>();
  #stopped = false;
  #idle: (() => void)[] = [];

  constructor(work: Worker, options: WorkQueueOptions = {}) {
    this.#work = work;
    this.#concurrency = options.concurrency ?? 4;
    this.#base = options.baseRetryMs ?? 500;
    this.#max = options.maxRetryMs ?? 30_000;
    this.#onError = options.onError;
  }

  /** Keys waiting or running. */
  get depth(): number {
    return this.#queued.size + this.#running.size;
  }

  /** Asks for the key's work to run (once, however often it is asked before it starts). */
  add(key: string): void {
    if (this.#stopped) return;
    if (this.#running.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#ready.push(key);
    this.#pump();
  }

  /** Adds the key after `ms`; an earlier pending timer for the key wins, a later one is replaced. */
  addAfter(key: string, ms: number): void {
    if (this.#stopped) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const pending = this.#timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.#timers.set(key, { at, timer });
  }

  /** Stops taking keys and cancels timers; resolves once the work in flight is done. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#ready.length = 0;
    this.#queued.clear();
    await this.idle();
  }

  /** Resolves when nothing is running or waiting (timers aside). */
  idle(): Promise<void> {
    if (this.depth === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #pump(): void {
    while (this.#running.size < this.#concurrency && this.#ready.length > 0) {
      const key = this.#ready.shift()!;
      this.#queued.delete(key);
      this.#running.add(key);
      void this.#run(key);
    }
    if (this.depth === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  async #run(key: string): Promise<void> {
    try {
      await this.#work(key);
      this.#failures.delete(key);
    } catch (err) {
      const attempt = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, attempt);
      this.#onError?.(key, err, attempt);
      this.addAfter(key, Math.min(this.#base * 2 ** (attempt - 1), this.#max));
    } finally {
      this.#running.delete(key);
      if (this.#dirty.delete(key)) this.add(key);
      this.#pump();
    }
  }
}
