/**
 * Failpoints: named boundaries in the runtime where a test may kill the manager with SIGKILL,
 * to prove that a crash at any of them loses and repeats nothing; and in the snapshot agent's
 * upload, where a test kills the agent as a node or the OOM killer would.
 *
 *   ETCD_OPERATOR_FAILPOINT=after-journal-step        kill at the first time it is reached
 *   ETCD_OPERATOR_FAILPOINT=after-journal-step:3      kill at the third time
 *   ETCD_OPERATOR_FAILPOINT_COUNT=reached.txt         append each reached name to the file
 *   ETCD_OPERATOR_FAILPOINT_SIGNAL=SIGTERM            stop it with SIGTERM instead (the agent)
 *
 * The count file lets a clean run tell how often each failpoint is reached (the crash sweep).
 */
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
const countFile = process.env.ETCD_OPERATOR_FAILPOINT_COUNT;
// SIGTERM instead: the stop a Pod gets when it is deleted or its Job passes its deadline.
const signal = process.env.ETCD_OPERATOR_FAILPOINT_SIGNAL === 'SIGTERM' ? 'SIGTERM' : 'SIGKILL';
let remaining = Number(nth ?? 1) || 1;

/** Kills this process (SIGKILL, unless told SIGTERM) when `name` is the armed failpoint and its count is reached. */
export function failpoint(name: Failpoint | AgentFailpoint): void {
  // Synchronous, so that a line is on disk before any kill that follows it.
  if (countFile) appendFileSync(countFile, `${name}\n`);
  if (name !== armed) return;
  remaining -= 1;
  if (remaining > 0) return;
  process.stderr.write(`failpoint ${name} reached: ${signal}\n`);
  process.kill(process.pid, signal);
}
