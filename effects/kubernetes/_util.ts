/**
 * Private helpers of the Kubernetes handlers: per-call options (the AbortSignal, a patch
 * content type), reading API errors by status code, and turning them into coded EffectErrors.
 */
import type { ErrorCode } from '../../machines/error-codes.ts';
import type {
  ConfigurationOptions,
  ObservableMiddleware,
  PatchStrategy,
  RequestContext,
  ResponseContext,
} from '@kubernetes/client-node';
import { Observable } from '@kubernetes/client-node';
import { EffectError } from '../types.ts';

/** Options of one API call: aborted with `signal`, and sent as `contentType` when given (patches). */
export function callOptions(
  signal: AbortSignal,
  contentType?: PatchStrategy,
): ConfigurationOptions<ObservableMiddleware> {
  const middleware: ObservableMiddleware = {
    pre: (req: RequestContext) => {
      req.setSignal(signal);
      if (contentType) req.setHeaderParam('Content-Type', contentType);
      return new Observable(Promise.resolve(req));
    },
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/** The HTTP status of a failed API call, or 0 when the call never got an answer. */
export function httpStatus(err: unknown): number {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : 0;
}

/** The API server's message in a failed call's Status body, else the error's own. */
export function messageOf(err: unknown): string {
  const body = (err as { body?: unknown } | null)?.body;
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string } | undefined;
    if (status?.message) return status.message;
  } catch {
    // Not JSON: fall through to the error's message.
  }
  return err instanceof Error ? (err.message.split('\n')[0] ?? String(err)) : String(err);
}

/** The object is not there. */
export const isNotFound = (err: unknown): boolean => httpStatus(err) === 404;
/** Create found the name taken (409); on update, a resourceVersion conflict. */
export const isConflict = (err: unknown): boolean => httpStatus(err) === 409;

/**
 * A coded EffectError for a failed API call. Invalid requests (400, 422) will fail the same way
 * again, so they are not retried; the rest (timeouts, 5xx, 403 until RBAC is fixed) are.
 */
export function apiError(code: ErrorCode, what: string, err: unknown): EffectError {
  if (err instanceof EffectError) return err;
  const status = httpStatus(err);
  const aborted = (err as { name?: string } | null)?.name === 'AbortError';
  const why = aborted ? 'the call passed its deadline' : `${status ? `HTTP ${status}: ` : ''}${messageOf(err)}`;
  return new EffectError(code, `${what}: ${why}`, { retryable: status !== 400 && status !== 422, cause: err });
}

/** Runs a read, giving null for NotFound. */
export async function readOrNull<T>(code: ErrorCode, what: string, fn: () => Promise<T>): Promise<T | null> {
  try {
    return await fn();
  } catch (err) {
    if (isNotFound(err)) return null;
    throw apiError(code, what, err);
  }
}

/** Runs a delete; NotFound counts as done (someone, or an earlier run, deleted it already). */
export async function deleteOrGone(code: ErrorCode, what: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!isNotFound(err)) throw apiError(code, what, err);
  }
}
