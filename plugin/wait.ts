/**
 * Long waits of `kubectl etcd`: poll an object until a verdict, printing each new word the
 * operator writes (to stderr, with the time waited), so a user sees it move; a timeout says what
 * is still going on and how to keep watching.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Where a command writes. */
export interface PluginIO {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
}

/** What one look found: a verdict ends the wait; `progress` is printed when it changes. */
export type Look<T> = { readonly done: T } | { readonly progress: string };

/** How a wait goes. */
export interface WaitOptions {
  readonly timeoutMs: number;
  /** Between looks; default 1 s. */
  readonly intervalMs?: number;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
}

/** Ran out of time: `last` is what the operator said last. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
  readonly code = 'ERR_KUBECTL_ETCD_TIMEOUT';
  readonly last: string;
  constructor(last: string, ms: number) {
    super(`gave up waiting after ${Math.round(ms / 1000)}s; last word: ${last}`);
    this.last = last;
  }
}

/** Looks until a verdict, printing progress as `[12s] text`. */
export async function waitFor<T>(io: PluginIO, look: () => Promise<Look<T>>, o: WaitOptions): Promise<T> {
  const now = o.now ?? Date.now;
  const start = now();
  let last = '';
  for (;;) {
    const seen = await look();
    if ('done' in seen) return seen.done;
    if (seen.progress !== last) {
      io.stderr(`[${Math.round((now() - start) / 1000)}s] ${seen.progress}\n`);
      last = seen.progress;
    }
    if (now() - start >= o.timeoutMs) throw new WaitTimeoutError(last, o.timeoutMs);
    await sleep(o.intervalMs ?? 1000, undefined, o.signal ? { signal: o.signal } : {});
  }
}
