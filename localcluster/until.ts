/** Polling: the one `until` the local cluster and every test that waits for the world use. */

/** An error of a probe that ends the wait at once: what it found does not turn right by waiting. */
export class StopWaiting extends Error {
  override readonly name: string = 'StopWaiting';
}

/**
 * Polls until `probe` gives a value (a throw counts as not yet, but a StopWaiting), every `everyMs`; the test's
 * timeout bounds the wait, or `timeoutMs`. `what` names the wait in a log line every 100 tries.
 */
export async function until<T>(
  what: string | (() => string),
  probe: () => Promise<T | undefined>,
  timeoutMs = Infinity,
  everyMs = 200,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  const say = typeof what === 'string' ? () => what : what;
  for (let tries = 1; ; tries++) {
    const value = await probe().catch((err: unknown) => {
      if (err instanceof StopWaiting) throw err;
      return undefined;
    });
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${say()}`);
    if (tries % 100 === 0) console.log(`still waiting for ${say()}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Polls until `read` fails with NotFound (within `timeoutMs`, the test's timeout by default). */
export async function untilGone(what: string, read: () => Promise<unknown>, timeoutMs = Infinity): Promise<void> {
  await until(
    what,
    () =>
      read().then(
        () => undefined,
        (err: { code?: number }) => (err.code === 404 ? true : undefined),
      ),
    timeoutMs,
  );
}
