/** Polling and figures the operator bench shares. */

/** Milliseconds since a performance.now() mark, rounded. */
export const since = (t0: number): number => Math.round(performance.now() - t0);

/** Polls every `everyMs` until probe gives a value (a throw counts as not yet); fails after `timeoutMs`. */
export async function poll<T>(
  what: string,
  everyMs: number,
  probe: () => Promise<T | undefined>,
  timeoutMs = 240_000,
): Promise<T> {
  const end = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const value = await probe().catch((err: unknown) => void (last = err));
    if (value !== undefined) return value;
    if (performance.now() > end)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: last });
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Rejects when `promise` takes longer than `ms`. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no result after ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Median, min and max of some figures. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: readonly number[];
}

/** The spread of `xs` (median of an even count: the lower middle one, a real run). */
export function spread(xs: readonly number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor((s.length - 1) / 2)] ?? 0, min: s[0] ?? 0, max: s.at(-1) ?? 0, runs: xs };
}

/** The p-th percentile (0..1) of `xs`, nearest rank. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? 0;
}
