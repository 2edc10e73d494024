/**
 * Failpoints: named boundaries in the runtime where a test may kill the manager with SIGKILL,
 * to prove that a crash at any of them loses and repeats nothing; and in the snapshot agent's
 * upload, where a test kills the agent as a node or the OOM killer would.
 *
 *   ETCD_OPERATOR_FAILPOINT=after-journal-step        kill at the first time it is reached
 *   ETCD_OPERATOR_FAILPOINT=after-journal-step:3      kill at the third time
 *   ETCD_OPERATOR_FAILPOINT_WINDOW=1a2b3c4d           count only the times reached in this window
 *   ETCD_OPERATOR_FAILPOINT_COUNT=reached.txt         append each reached name (and window) to the file
 *   ETCD_OPERATOR_FAILPOINT_SIGNAL=SIGTERM            stop it with SIGTERM instead (the agent)
 *
 * A window is the kind of step a failpoint falls in: the machine, the state before, the event,
 * the state after and the intents (and, after an effect, which intent and how it ended). Many
 * times a failpoint is reached are one window (a probe repeated); the crash sweep runs one per window.
 * The count file lets a clean run tell how often each failpoint is reached, and in which windows.
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';

/** Every boundary the runtime marks, in the order a step reaches them. */
export const FAILPOINTS = [
  'before-journal-step',
  'after-journal-step',
  'after-status',
  'after-effect',
  'after-outcome',
] as const;
/** One of FAILPOINTS. */
export type Failpoint = (typeof FAILPOINTS)[number];

/** The boundaries of the agent's S3 upload: begun, a part stored, completed (not yet read back). */
export const AGENT_FAILPOINTS = ['upload-created', 'upload-part', 'upload-completed'] as const;
/** One of AGENT_FAILPOINTS. */
export type AgentFailpoint = (typeof AGENT_FAILPOINTS)[number];

const [armed, nth] = (process.env.ETCD_OPERATOR_FAILPOINT ?? '').split(':');
const armedWindow = process.env.ETCD_OPERATOR_FAILPOINT_WINDOW;
const countFile = process.env.ETCD_OPERATOR_FAILPOINT_COUNT;
// SIGTERM instead: the stop a Pod gets when it is deleted or its Job passes its deadline.
const signal = process.env.ETCD_OPERATOR_FAILPOINT_SIGNAL === 'SIGTERM' ? 'SIGTERM' : 'SIGKILL';
let remaining = Number(nth ?? 1) || 1;

/** A state value as one string: `upgrading.awaitingMember`, parallel regions joined by `,`. */
export function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  return Object.entries(value)
    .map(([k, v]) => {
      const inner = stateName(v);
      return inner === '{}' || inner === '' ? k : `${k}.${inner}`;
    })
    .join(',');
}

/** The window of a journaled step: `cluster: observing -k8s.cluster.changed-> upgrading.snapshot [createSnapshot]`. */
export function stepWindow(
  machine: string,
  from: unknown,
  event: string,
  to: unknown,
  intents: readonly string[],
): string {
  return `${machine}: ${stateName(from)} -${event}-> ${stateName(to)} [${intents.join(',')}]`;
}

/** A window's short id, as ETCD_OPERATOR_FAILPOINT_WINDOW names it. */
export function windowId(window: string): string {
  return createHash('sha256').update(window).digest('hex').slice(0, 8);
}

/**
 * Kills this process (SIGKILL, unless told SIGTERM) when `name` is the armed failpoint and its count is reached
 * (counting only the times in the armed window, when one is). `window` describes where the
 * runtime stands; it is asked for only when counted or armed.
 */
export function failpoint(name: Failpoint | AgentFailpoint, window?: () => string): void {
  const needed = countFile !== undefined || (armedWindow !== undefined && name === armed);
  const where = needed && window ? window() : undefined;
  const id = where === undefined ? undefined : windowId(where);
  // Synchronous, so that a line is on disk before any kill that follows it.
  if (countFile) appendFileSync(countFile, where === undefined ? `${name}\n` : `${name}\t${id}\t${where}\n`);
  if (name !== armed) return;
  if (armedWindow !== undefined && id !== armedWindow) return;
  remaining -= 1;
  if (remaining > 0) return;
  process.stderr.write(`failpoint ${name} reached${where === undefined ? '' : ` in ${where}`}: ${signal}\n`);
  process.kill(process.pid, signal);
}
