/** The kubelet's crash-loop back-off: 10s doubling to 5 minutes, forgotten after 10 quiet minutes. */

/** Back-off durations, in milliseconds. */
export interface BackoffOptions {
  readonly initialMs: number;
  readonly maxMs: number;
}

/** The kubelet's values. */
export const kubeletBackoff: BackoffOptions = { initialMs: 10_000, maxMs: 300_000 };

/**
 * Tracks restarts of one container. A first crash restarts at once; a crash within the current
 * back-off of the last restart waits until that back-off is over (the kubelet's
 * IsInBackOffSince then Next), and the back-off doubles on every restart within 2x max.
 */
export class CrashBackoff {
  readonly #opts: BackoffOptions;
  #lastRestart: number | undefined;
  #durationMs = 0;

  constructor(opts: BackoffOptions = kubeletBackoff) {
    this.#opts = opts;
  }

  /** Milliseconds to wait before restarting a container that finished at `finishedAt`. */
  delay(finishedAt: number): number {
    if (this.#lastRestart === undefined) return 0;
    const until = this.#lastRestart + this.#durationMs;
    return finishedAt < until ? until - finishedAt : 0;
  }

  /** Records a restart at `now` and grows the back-off. */
  restarted(now: number): void {
    const expired = this.#lastRestart === undefined || now - this.#lastRestart > 2 * this.#opts.maxMs;
    this.#durationMs = expired ? this.#opts.initialMs : Math.min(this.#durationMs * 2, this.#opts.maxMs);
    this.#lastRestart = now;
  }

  /** The current back-off, for the CrashLoopBackOff message. */
  get currentMs(): number {
    return this.#durationMs;
  }
}
