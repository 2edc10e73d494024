/**
 * Private helpers of the etcd handlers: a call bounded by both the context's signal and a
 * gRPC deadline, etcd's error messages turned into coded EffectErrors, and the member list
 * in the operator's vocabulary.
 */
import type { ClusterClient, Etcd3, IMember } from 'etcd3';
import { ERR, type ErrorCode } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import type { EtcdMemberInfo } from '../../machines/types.ts';
import type { EtcdContext } from './clients.ts';
import { hexID } from './ids.ts';

/** The per-call options etcd3 passes to gRPC. */
export type CallOptions = NonNullable<Parameters<ClusterClient['memberList']>[1]>;

/** The key the empty entries compare: never written (their delete is in a branch never taken). */
export const EMPTY_ENTRY_KEY = 'etcd-operator.dev/empty-entry';

/**
 * One entry through raft that changes nothing: a transaction whose only operation, a delete, is in
 * a branch never taken. It is not read-only, so it goes through raft and every member applies it
 * (and its backend commits); a delete costs no quota, so it passes the NOSPACE alarm too.
 */
export const emptyEntry = (client: Etcd3, options?: CallOptions): Promise<unknown> =>
  client.if(EMPTY_ENTRY_KEY, 'Version', '<', 0).then(client.delete().key(EMPTY_ENTRY_KEY)).options(options).commit();

/**
 * Runs one remote call with a gRPC deadline and gives up when the signal aborts. etcd3 cannot
 * cancel a call in flight, so on abort the call is left to its own deadline.
 */
export async function call<T>(
  signal: AbortSignal,
  timeoutMs: number,
  fn: (options: CallOptions) => Promise<T>,
): Promise<T> {
  signal.throwIfAborted();
  let onAbort = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([fn({ deadline: Date.now() + timeoutMs }), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Errors that say this member could not answer (unreachable, too slow, stopping, without a
 * leader, or its connection reset or dropped, as happens to a member just removed from
 * etcd): another member may, and the machine retries later if none does. Also something
 * other than etcd answering at its address (`12 UNIMPLEMENTED: Received HTTP status code 404`):
 * the address of a Pod whose node is gone no longer routes to it, and whatever the packets
 * reach instead (a proxy on the default route) is not that member.
 */
const unavailable =
  /DEADLINE_EXCEEDED|CANCELLED|deadline|ECONNREFUSED|ECONNRESET|EPIPE|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|Connection dropped|No connection established|Received HTTP status code|aborted|timed out|no leader|leader changed|server stopped/i;

/**
 * etcd's refusal of a membership change while this member's own peer connections are younger
 * than 5 s. Each member judges by its own connections, and a member that refuses has changed
 * nothing, so another member may be asked at once.
 */
export const heldByThisMember = (err: unknown): boolean =>
  /unhealthy cluster|not enough started members/.test(describe(err));

/** etcd's refusal to serve an RPC on a learner (Unavailable in 3.5, FailedPrecondition in 3.6). */
const learnerRefused = (err: unknown): boolean =>
  err instanceof Error && err.message.includes('not supported for learner');

/**
 * Runs a cluster-wide call on the first endpoint that serves it, asking each in turn while
 * they are unreachable or learners (which refuse before acting). An answer lost in transit
 * may mean the next endpoint is asked to repeat a change: each handler treats etcd's
 * "already done" answers (URL exists, member not found, not a learner) as success.
 */
export async function onCluster<T>(
  ctx: Pick<EtcdContext, 'etcd' | 'cluster' | 'signal'>,
  fn: (client: Etcd3, options: CallOptions) => Promise<T>,
  moveOn: (err: unknown) => boolean = () => false,
  /** The gRPC deadline of each call; the clients' own by default. */
  timeoutMs?: number,
): Promise<T> {
  const { etcd, cluster, signal } = ctx;
  const endpoints = etcd.endpoints(cluster);
  if (endpoints.length === 0)
    throw new EffectError(ERR.ETCD_UNAVAILABLE, `cluster ${cluster.namespace}/${cluster.name} has no etcd endpoints`);
  let last: unknown;
  for (const url of endpoints) {
    try {
      const result = await call(signal, timeoutMs ?? etcd.callTimeoutMs, (o) => fn(etcd.endpoint(cluster, url), o));
      etcd.answered(cluster, url);
      return result;
    } catch (err) {
      if (signal.aborted || (!learnerRefused(err) && !unavailable.test(describe(err)) && !moveOn(err))) throw err;
      last = err;
    }
  }
  throw last;
}

const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** etcd's answers that mean something to a handler, by the text etcd puts in them. */
const ANSWERS: readonly { readonly match: string; readonly code: ErrorCode; readonly retryable: boolean }[] = [
  { match: 'in sync with leader', code: ERR.LEARNER_NOT_IN_SYNC, retryable: true },
  { match: 'too many learner members', code: ERR.TOO_MANY_LEARNERS, retryable: true },
  { match: 'unhealthy cluster', code: ERR.ETCD_UNHEALTHY, retryable: true },
  { match: 'not enough started members', code: ERR.ETCD_UNHEALTHY, retryable: true },
  { match: 'member not found', code: ERR.ETCD_MEMBER_UNKNOWN, retryable: true },
  { match: 'Peer URLs already exists', code: ERR.PEER_URL_EXISTS, retryable: true },
  { match: 'can only promote a learner member', code: ERR.NOT_A_LEARNER, retryable: true },
];

/** An error from etcd3 (or the signal) as a coded EffectError; `fallback` names the operation. */
export function etcdError(fallback: ErrorCode, op: string, err: unknown): EffectError {
  if (err instanceof EffectError) return err;
  const text = describe(err);
  const hit = ANSWERS.find((k) => text.includes(k.match));
  if (hit) return new EffectError(hit.code, `${op}: ${text}`, { retryable: hit.retryable, cause: err });
  if (unavailable.test(text))
    return new EffectError(ERR.ETCD_UNAVAILABLE, `${op}: no etcd endpoint answered: ${text}`, { cause: err });
  return new EffectError(fallback, `${op}: ${text}`, { cause: err });
}

/** The code of an error, if it is an EffectError. */
export const codeOf = (err: unknown): string | undefined => (err instanceof EffectError ? err.code : undefined);

/** One member in the operator's vocabulary: hex ID, first peer URL. */
export function memberInfo(m: IMember): EtcdMemberInfo {
  return {
    id: hexID(m.ID),
    name: m.name,
    peerURL: m.peerURLs[0] ?? '',
    learner: m.isLearner,
    started: m.clientURLs.length > 0,
  };
}

/** A fresh member list, linearizable: what a handler decides on must not be a stale view. */
export async function listMembers(
  ctx: EtcdContext,
  fallback: ErrorCode,
): Promise<{ members: IMember[]; clusterID: string }> {
  try {
    const res = await onCluster(ctx, (client, o) => client.cluster.memberList({ linearizable: true }, o));
    return { members: res.members, clusterID: hexID(res.header.cluster_id) };
  } catch (err) {
    throw etcdError(fallback, 'member list', err);
  }
}
