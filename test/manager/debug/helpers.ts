/**
 * The debug page over a real journal file, written by the real Runner and cluster machine (the
 * bootstrap of `demo` that docs/statecharts.md shows), and a reader of its server-sent events.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { Journal, type Intent, type ObjectRef } from '../../../journal/index.ts';
import { serveDebugPage, type DebugPage } from '../../../manager/debug/server.ts';
import { tempDb } from '../../journal/helpers.ts';
import { demoRef, journalBootstrap } from '../../statechart/bootstrap.ts';

export { demoRef };

/** Where test artefacts (screenshots) go: gitignored. */
export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'artifacts', 'debug-page');

/** A served page on a journal holding demo's bootstrap (16 steps, stopped in scalingUp.joining.awaitingStart). */
export interface Served {
  readonly journal: Journal;
  readonly page: DebugPage;
  readonly url: string;
  /** Journals one step of `ref` (default demo) as the runner would: event, transition, intents; returns its seq. */
  step(from: string, to: string, event: string, intents?: readonly Intent[], ref?: ObjectRef): number;
  close(): Promise<void>;
}

/** Starts the page on a fresh journal; `journal: null` serves with no journal open (a manager not leading). */
export async function servePage(options: { noJournal?: boolean } = {}): Promise<Served> {
  const journal = Journal.open(tempDb());
  await journalBootstrap(journal);
  const page = await serveDebugPage({
    host: '127.0.0.1',
    port: 0,
    source: { current: options.noJournal ? undefined : journal, watch: (l) => journal.watch(l) },
    log: pino({ level: 'silent' }),
  });
  let clock = Date.now();
  const context = (journal.snapshot(demoRef.uid)?.state as { context?: unknown } | undefined)?.context;
  return {
    journal,
    page,
    url: page.url,
    step: (from, to, event, intents = [], ref = demoRef) =>
      journal.recordStep(ref, {
        machine: ref.kind === 'EtcdCluster' ? 'cluster' : 'member',
        event: { type: event, at: (clock = Math.max(clock + 1, Date.now())) },
        from,
        to,
        state: { value: to, context },
        intents,
      }).seq,
    close: async () => {
      await page.close();
      journal.close();
    },
  };
}

/** One server-sent event. */
export interface SseEvent {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: unknown;
}

/** Reads a server-sent event stream; `next(test)` waits for the first event not yet taken that passes. */
export async function sse(url: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  let raw = '';
  let wake: (() => void) | undefined;
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        raw += text;
        buffered += text;
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
          }
          if (!fields.has('data')) continue;
          events.push({
            event: fields.get('event') ?? 'message',
            id: fields.get('id'),
            data: JSON.parse(fields.get('data') ?? 'null'),
          });
          wake?.();
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  let taken = 0;
  return {
    status: res.status,
    headers: res.headers,
    events,
    /** Everything the stream carried, as text. */
    raw: () => raw,
    async next(test: (e: SseEvent) => boolean = () => true, timeoutMs = 5000): Promise<SseEvent> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        while (taken < events.length) {
          const e = events[taken++] as SseEvent;
          if (test(e)) return e;
        }
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`no such event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(', ')}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, left);
        });
      }
    },
    async close(): Promise<void> {
      abort.abort();
      await reading;
    },
  };
}
