/**
 * Informers that keep themselves alive: re-list on 410 Gone (the library does that), and
 * restart with back-off after any other error (the library stops there).
 */
import { makeInformer } from '@kubernetes/client-node';
import type {
  Informer,
  KubeConfig,
  KubernetesListObject,
  KubernetesObject,
  ObjectCache,
} from '@kubernetes/client-node';
import type { Log } from '../types.ts';

/** A started informer whose cache can be read at any time. */
export interface Watched<T extends KubernetesObject> {
  list(): readonly T[];
  stop(): Promise<void>;
}

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 10_000;

/** Lists and watches `path`, calls `onChange` after every add, update, delete or re-list. */
export async function startInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  listFn: () => Promise<KubernetesListObject<T>>,
  onChange: () => void,
  log: Log,
): Promise<Watched<T>> {
  const informer: Informer<T> & ObjectCache<T> = makeInformer<T>(kc, path, listFn);
  let stopped = false;
  let delay = FIRST_DELAY_MS;
  let timer: NodeJS.Timeout | undefined;
  informer.on('change', () => {
    delay = FIRST_DELAY_MS;
    onChange();
  });
  informer.on('connect', () => onChange());
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    log(`watch ${path}: ${errorText(err)}; restarting in ${delay} ms`);
    timer = setTimeout(() => {
      timer = undefined;
      if (!stopped) void informer.start();
    }, delay);
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  });
  await informer.start();
  return {
    list: () => informer.list(),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await informer.stop();
    },
  };
}

/**
 * Runs `fn` one call at a time; kicks during a run coalesce into one more run after it. A
 * failed run is retried with back-off even when nothing else changes (level-based).
 */
export class Serial {
  readonly #fn: () => Promise<void>;
  readonly #log: Log;
  #running: Promise<void> | undefined;
  #again = false;
  #retry: NodeJS.Timeout | undefined;
  #delay = FIRST_DELAY_MS;
  #closed = false;

  constructor(fn: () => Promise<void>, log: Log) {
    this.#fn = fn;
    this.#log = log;
  }

  /** Asks for a run; resolves when a run that started after this call has finished. */
  kick(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#loop();
    return this.#running;
  }

  async #loop(): Promise<void> {
    try {
      do {
        this.#again = false;
        try {
          await this.#fn();
          this.#delay = FIRST_DELAY_MS;
        } catch (err) {
          this.#log(`reconcile failed: ${errorText(err)}; retrying in ${this.#delay} ms`);
          this.#scheduleRetry();
        }
      } while (this.#again);
    } finally {
      this.#running = undefined;
    }
  }

  #scheduleRetry(): void {
    if (this.#retry || this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.kick();
    }, this.#delay).unref();
    this.#delay = Math.min(this.#delay * 2, MAX_DELAY_MS);
  }

  /** Cancels a pending retry and refuses new ones; resolves when a run in progress is over. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retry) clearTimeout(this.#retry);
    await this.#running;
  }
}

/** The message of an error of any shape. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
