/**
 * Runs the history checker (localcluster/tools/history-checker, built once by build.sh) on a
 * recorded history and returns its verdict. The history is written to a temp dir, kept with
 * porcupine's visualization when a check fails (its path is in the verdict), removed otherwise.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { binary } from '../../localcluster/controlplane/tools.ts';
import type { History } from './history.ts';

/** The checker's report (its -json output). */
export interface CheckerReport {
  /** porcupine's answer: Unknown when it did not decide within the timeout. */
  readonly linearizable: 'Ok' | 'Illegal' | 'Unknown';
  /** Operations recorded, checked by porcupine, of unknown outcome, and left out of those. */
  readonly operations: number;
  readonly checked: number;
  readonly unknownOutcome: number;
  readonly dropped: number;
  readonly keys: number;
  readonly revisionViolations: readonly string[];
  readonly watch: {
    readonly watchers: number;
    /** Watchers the recorder waited for until they had every acknowledged write. */
    readonly complete: number;
    readonly events: number;
    readonly resumes: number;
    /** Watches etcd canceled (a rollback's compaction). */
    readonly canceled: number;
    readonly violations: readonly string[];
  };
  /** With a rollback: the bounds the history puts on its snapshot's revision. */
  readonly rollback?: { readonly snapshotRevisionFrom: number; readonly snapshotRevisionUpTo?: number };
  readonly visualization?: string;
  readonly elapsedMs: number;
}

/** The report, the checker's exit status, and where the history was kept (when a check failed). */
export interface Verdict extends CheckerReport {
  readonly exitCode: number;
  readonly ok: boolean;
  readonly dir?: string;
}

/** Checks `history`; rejects only when the checker cannot read it or cannot run. */
export async function checkHistory(history: History, timeoutS = 300): Promise<Verdict> {
  const checker = await binary('history-checker');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-history-'));
  const file = path.join(dir, 'history.json');
  writeFileSync(file, JSON.stringify(history));
  const args = ['-json', '-html', path.join(dir, 'violation.html'), '-timeout', `${timeoutS}s`, file];
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(checker, args, { maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    ),
  );
  if (code !== 0 && code !== 1 && code !== 3) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`history-checker exited ${code}: ${stderr.trim()}`);
  }
  const report = JSON.parse(stdout) as CheckerReport;
  if (code === 0) rmSync(dir, { recursive: true, force: true });
  return { ...report, exitCode: code, ok: code === 0, ...(code === 0 ? {} : { dir }) };
}

/** One line for a test's log: what was checked and what was found. */
export function describeVerdict(v: Verdict): string {
  const found = [
    `linearizable: ${v.linearizable}`,
    `${v.revisionViolations.length} revision violations`,
    `${v.watch.violations.length} watch violations`,
  ].join(', ');
  const rb = v.rollback;
  const canceled = v.watch.canceled > 0 ? `, ${v.watch.canceled} canceled` : '';
  return (
    `${v.checked} operations checked on ${v.keys} keys (${v.operations} recorded, ${v.unknownOutcome} of unknown ` +
    `outcome, ${v.dropped} of those unobserved and left out), ${v.watch.events} watch events from ` +
    `${v.watch.watchers} watches (${v.watch.complete} waited for to the end, ${v.watch.resumes} stream breaks${canceled})` +
    (rb
      ? `, across a rollback to a snapshot at revision ${rb.snapshotRevisionFrom} to ${rb.snapshotRevisionUpTo ?? '?'}`
      : '') +
    `: ${found}; checked in ${v.elapsedMs} ms` +
    (v.dir ? `; history kept in ${v.dir}` : '')
  );
}
