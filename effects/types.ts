/**
 * The contract of an effect handler: the only code that touches the world. The runtime
 * journals an intent, then calls `run`; after a crash, an intent with no outcome is given to
 * `recover`, which observes the world to learn whether the earlier run happened.
 */
import type { ErrorCode } from '../machines/error-codes.ts';
import type { IntentKind, IntentParams } from '../machines/intents.ts';

/** Structured log, pino-compatible. Secrets never go in. */
export interface Log {
  /** What a person debugging wants (each watch event, each work, each intent's outcome); `--log-level debug`. */
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** The object a machine belongs to: an EtcdCluster (or the cluster of an EtcdMember). */
export interface ClusterRef {
  readonly namespace: string;
  /** The EtcdCluster's name. */
  readonly name: string;
  readonly uid: string;
}

/** What every call gets besides its parameters. */
export interface EffectContext {
  readonly cluster: ClusterRef;
  /** Aborted at the call's deadline: every remote call passes it on. */
  readonly signal: AbortSignal;
  readonly log: Log;
}

/** What recover learned: the effect happened (with the result run would have returned), or not. */
export type Recovered<R> = { readonly done: true; readonly result: R } | { readonly done: false };

/** One kind of intent, carried out. */
export interface Handler<P, R extends Readonly<Record<string, unknown>>, C extends EffectContext = EffectContext> {
  readonly kind: string;
  /** Carries the intent out. Idempotent where the world allows; otherwise guarded by recover. */
  run(params: P, ctx: C): Promise<R>;
  /** Observes whether an earlier run of this intent happened. Never changes the world. */
  recover(params: P, ctx: C): Promise<Recovered<R>>;
}

/** The handler of intent kind K: it takes the parameters the machines build (machines/intents.ts). */
export type IntentHandler<
  K extends IntentKind,
  R extends Readonly<Record<string, unknown>>,
  C extends EffectContext = EffectContext,
> = Handler<IntentParams[K], R, C> & { readonly kind: K };

/** A handler for every intent kind; a table that misses one does not compile. */
export type HandlerTable<C extends EffectContext> = {
  readonly [K in IntentKind]: IntentHandler<K, Readonly<Record<string, unknown>>, C>;
};

/** A failure a handler reports; the machine retries it with back-off unless `retryable` is false. */
export class EffectError extends Error {
  override readonly name = 'EffectError';
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, opts: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.code = code;
    this.retryable = opts.retryable ?? true;
  }
}
