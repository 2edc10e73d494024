/**
 * What a user reads about a snapshot machine's state: its phase (Pending, Running, Succeeded,
 * Failed, Deleting), the step as a CamelCase reason, and a message saying what it does and
 * waits for.
 */
import { ConditionReason } from '../api/conditions.ts';
import { holdFinalizer } from './intents.ts';
import type { SnapshotContext } from './snapshot-decide.ts';

/** A user-facing description of a snapshot machine state. */
export interface DescribedSnapshot {
  readonly phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Deleting';
  readonly step: string;
  readonly message: string;
}

const retrying = (c: SnapshotContext): string =>
  c.lastError ? `; the last try failed (${c.lastError.code}: ${c.lastError.message}) and is retried with back-off` : '';

/** The phase, step and message of a snapshot machine state (its dotted path) and context. */
export function describeSnapshot(path: string, c: SnapshotContext): DescribedSnapshot {
  const [top = 'pending', sub = '', inner = ''] = path.split('.');
  const cluster = `EtcdCluster ${c.snapshot.cluster}`;
  const from = c.member ? ` from ${c.member}` : '';
  switch (top) {
    case 'succeeded': {
      const r = c.result;
      const what = r ? `${r.location}: ${r.size} bytes, sha256 ${r.sha256}, revision ${r.revision}` : 'stored';
      // Held by a restore (an EtcdCluster's finalizer on it): said before anyone tries to delete it.
      const held = (c.heldBy ?? []).map((n) => `EtcdCluster ${n} (finalizer ${holdFinalizer(n)})`);
      const use = held.length > 0 ? `; in use: ${held.join(', ')} restores from it, so a delete waits for it` : '';
      return { phase: 'Succeeded', step: 'Succeeded', message: `stored and read back whole at ${what}${use}` };
    }
    case 'releasingHold': {
      const stale = c.staleHolds?.[0] ?? '';
      return {
        phase: c.result ? 'Succeeded' : c.failure !== null ? 'Failed' : 'Pending',
        step: ConditionReason.ReleasingHold,
        message: `letting go of the hold of EtcdCluster ${stale} (finalizer ${holdFinalizer(stale)}): that cluster is gone or being deleted, so it restores nothing from this snapshot any more${retrying(c)}`,
      };
    }
    case 'verifying':
      return {
        phase: 'Succeeded',
        step: 'Verifying',
        message:
          sub === 'running'
            ? `stored at ${c.result?.location ?? ''}; a Job restores it into a throwaway etcd and checks HashKV, revision and keys`
            : `stored at ${c.result?.location ?? ''}; creating the Job that verifies it${retrying(c)}`,
      };
    case 'failed':
      return {
        phase: 'Failed',
        step: 'Failed',
        message: c.removalFailed
          ? `deleting failed (${c.failure ?? ''}); set deletionPolicy: Retain to let the EtcdSnapshot go and keep what was stored`
          : `${c.failure ?? 'failed'}; a snapshot is taken when asked or not at all: create a new EtcdSnapshot`,
      };
    case 'removing': {
      const holders = (c.heldBy ?? []).map((n) => `EtcdCluster ${n}`).join(', ');
      if (sub === 'inUse')
        return {
          phase: 'Deleting',
          step: ConditionReason.InUse,
          message: `being deleted, and in use: ${holders} restores from it (finalizer ${holdFinalizer(c.heldBy?.[0] ?? '')}); what it stored${c.result ? ` at ${c.result.location}` : ''} is kept until the restore no longer needs it, then deleted with the EtcdSnapshot`,
        };
      const messages: Record<string, string> = {
        choosing: 'being deleted',
        releasingHold: `being deleted: letting go of the hold of ${(c.staleHolds ?? []).map((n) => `EtcdCluster ${n}`).join(', ')}, gone or being deleted`,
        stoppingJob: 'being deleted: stopping the snapshot Job first, so no upload finishes after the delete',
        awaitingJobGone: "being deleted: waiting for the snapshot Job's Pods to go",
        deletingStored:
          inner === 'stuck'
            ? `being deleted: the Job deleting the stored snapshot failed (${c.deleteJob?.failed ?? ''}); delete that Job to try again, or set deletionPolicy: Retain to keep the object`
            : `being deleted: a Job deletes the stored snapshot${c.result ? ` at ${c.result.location}` : ' and anything an unfinished run left'}`,
        releasing: c.kept
          ? `being deleted; the stored snapshot${c.result ? ` at ${c.result.location}` : ''} is kept, as no Job can run to delete it (${c.kept})`
          : 'being deleted: releasing the finalizer',
      };
      return { phase: 'Deleting', step: 'Deleting', message: `${messages[sub] ?? 'being deleted'}${retrying(c)}` };
    }
    case 'removed':
      return { phase: 'Deleting', step: 'Deleting', message: 'deleted' };
    case 'taking':
      if (sub === 'running')
        return {
          phase: 'Running',
          step: 'Running',
          message: `a Job streams the snapshot${from} of ${cluster}, stores it and reads it back`,
        };
      return {
        phase: 'Pending',
        step: 'CreatingJob',
        message: `creating the Job that takes the snapshot${from}${retrying(c)}`,
      };
    case 'finalizing':
      return {
        phase: 'Pending',
        step: 'Finalizing',
        message: `adding the finalizer that deletes the stored snapshot with the EtcdSnapshot${retrying(c)}`,
      };
    case 'waiting':
      return {
        phase: 'Pending',
        step: 'WaitingForCluster',
        message: `waiting for the first health probe of ${cluster}`,
      };
    default:
      return {
        phase: 'Pending',
        step: 'Pending',
        message: `waiting for the EtcdSnapshot and ${cluster} to be observed`,
      };
  }
}
