/**
 * The kubelet's remote command protocol (v4.channel.k8s.io over SPDY/3.1) for exec and attach:
 * the client opens an error stream and one stream per standard stream it asked for (and resize
 * with a terminal); the kubelet answers each, runs, and ends with a metav1.Status as JSON on the
 * error stream (the exit code of a failed command in its causes), then closes the connection.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { exitCodeOf, resizeTerminal, startExec, type ExecTarget, type TerminalSize } from './containerExec.ts';
import { followLog } from './logFollow.ts';
import type { SpdySession, SpdyStream } from './spdySession.ts';

/** The one remote command protocol this kubelet speaks (the API server offers v5 to v1). */
export const REMOTE_COMMAND_PROTOCOL = 'v4.channel.k8s.io';
/** As the kubelet's default streamCreationTimeout. */
const STREAM_CREATION_MS = 30_000;

/** Which standard streams the client asked for (query input, output, error, tty). */
export interface StreamOptions {
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  readonly tty: boolean;
}

/** The options of a request, or why it is refused (the kubelet's words). */
export function streamOptions(query: URLSearchParams): StreamOptions | string {
  const tty = query.get('tty') === '1';
  const o = {
    stdin: query.get('input') === '1',
    stdout: query.get('output') === '1',
    stderr: query.get('error') === '1' && !tty, // a terminal has no separate stderr
    tty,
  };
  return o.stdin || o.stdout || o.stderr ? o : 'you must specify at least 1 of stdin, stdout, stderr';
}

/** The streams of one exec or attach, once the client has opened them all. */
export interface CommandStreams {
  readonly error: SpdyStream;
  readonly stdin?: SpdyStream;
  readonly stdout?: SpdyStream;
  readonly stderr?: SpdyStream;
  readonly resize?: SpdyStream;
}

/** Collects the streams the options call for; rejects after 30 s or when the connection goes. */
export function streamCollector(opts: StreamOptions): {
  add(stream: SpdyStream): void;
  ready: Promise<CommandStreams>;
} {
  const want = ['error', ...(['stdin', 'stdout', 'stderr'] as const).filter((k) => opts[k])];
  if (opts.tty) want.push('resize');
  const got: Record<string, SpdyStream> = {};
  let resolve!: (s: CommandStreams) => void;
  let reject!: (e: Error) => void;
  const ready = new Promise<CommandStreams>((res, rej) => ([resolve, reject] = [res, rej]));
  const timer = setTimeout(
    () => reject(new Error('timed out waiting for client to create streams')),
    STREAM_CREATION_MS,
  );
  return {
    ready,
    add(stream) {
      const type = stream.headers.streamtype ?? '';
      if (!want.includes(type) || got[type]) return stream.reset();
      got[type] = stream;
      if (want.every((t) => got[t])) {
        clearTimeout(timer);
        resolve(got as unknown as CommandStreams);
      }
    },
  };
}

/** A metav1.Status as the kubelet writes it on the error stream. */
export function statusJSON(result: { exitCode: number } | { error: string }): string {
  if ('error' in result) {
    const message = `Internal error occurred: ${result.error}`;
    return JSON.stringify({
      metadata: {},
      status: 'Failure',
      message,
      reason: 'InternalError',
      details: { causes: [{ message: result.error }] },
      code: 500,
    });
  }
  if (result.exitCode === 0) return JSON.stringify({ metadata: {}, status: 'Success' });
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: exit status ${result.exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(result.exitCode) }] },
  });
}

/** Reads the resize stream's JSON objects ({"Width":80,"Height":24}...) as they come. */
export async function* terminalSizes(stream: AsyncIterable<Buffer>): AsyncGenerator<TerminalSize> {
  let text = '';
  for await (const chunk of stream) {
    text += chunk.toString();
    for (let end = text.indexOf('}'); end >= 0; end = text.indexOf('}')) {
      const json = text.slice(text.indexOf('{'), end + 1);
      text = text.slice(end + 1);
      try {
        const size = JSON.parse(json) as TerminalSize;
        if (size.Width > 0 && size.Height > 0) yield size;
      } catch {
        // not an object: skipped, as a decoder error ends nothing the command needs
      }
    }
  }
}

async function finish(session: SpdySession, streams: CommandStreams, status: string): Promise<void> {
  for (const s of [streams.stdout, streams.stderr]) if (s && !s.writableEnded) s.end();
  streams.error.end(status);
  await Promise.race([once(streams.error, 'finish'), session.closed]).catch(() => undefined);
  session.close();
}

/** Runs an exec once the streams are there, reports its exit status, and closes the session. */
export async function serveExec(
  session: SpdySession,
  streams: CommandStreams,
  target: ExecTarget,
  argv: readonly string[],
  opts: StreamOptions,
): Promise<void> {
  const child = startExec(target, argv, { stdin: opts.stdin, tty: opts.tty });
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  };
  void session.closed.then(kill);
  if (streams.stdin && child.stdin) {
    child.stdin.on('error', () => undefined); // the command may exit without reading it all
    streams.stdin.pipe(child.stdin);
  }
  // With a terminal there is one output: what goes to stderr outside it (script's or nsenter's
  // own errors) shows there too, as on a terminal.
  const copied = [
    pipeOut(child.stdout, streams.stdout),
    pipeOut(child.stderr, opts.tty ? streams.stdout : streams.stderr),
  ];
  if (streams.resize && child.pid) {
    const pid = child.pid;
    void (async () => {
      for await (const size of terminalSizes(streams.resize!)) await resizeTerminal(pid, size);
    })().catch(() => undefined);
  }
  const result = await new Promise<{ exitCode: number } | { error: string }>((resolve) => {
    child.once('error', (err) => resolve({ error: `error executing command in container: ${err.message}` }));
    child.once('close', (code, signal) => resolve({ exitCode: exitCodeOf(code, signal) }));
  });
  await Promise.all(copied);
  await finish(session, streams, statusJSON(result));
}

/** Copies a command's output to its stream (or drops it when the client did not ask for it). */
async function pipeOut(from: NodeJS.ReadableStream | null, to: SpdyStream | undefined): Promise<void> {
  if (!from) return;
  for await (const chunk of from) {
    if (to && !to.destroyed && !to.write(chunk)) await Promise.race([once(to, 'drain'), once(to, 'close')]);
  }
}

/** A running container's output and, when it keeps stdin open, its stdin, for attach. */
export interface AttachTarget {
  readonly log: { readonly file: string; readonly live: () => boolean };
  readonly stdin?: Writable;
  /** stdinOnce: the container's stdin closes when the first attach leaves. */
  readonly stdinOnce: boolean;
}

/**
 * Attaches until the container's run ends or the client leaves: what the run writes from now on
 * goes to stdout (the node keeps one log of stdout and stderr, so stderr gets nothing apart),
 * stdin goes to the container's.
 */
export async function serveAttach(session: SpdySession, streams: CommandStreams, target: AttachTarget): Promise<void> {
  let gone = false;
  void session.closed.then(() => (gone = true));
  const stdin = target.stdin;
  if (streams.stdin && stdin) {
    streams.stdin.on('data', (d: Buffer) => stdin.write(d));
    streams.stdin.once('end', () => target.stdinOnce && stdin.end());
    void session.closed.then(() => target.stdinOnce && stdin.end());
  } else streams.stdin?.resume();
  const out = streams.stdout ?? streams.stderr;
  if (out) await followLog(target.log.file, undefined, target.log.live, out, () => gone);
  else while (!gone && target.log.live()) await new Promise((r) => setTimeout(r, 250));
  if (!gone) await finish(session, streams, statusJSON({ exitCode: 0 }));
}
