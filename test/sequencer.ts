/**
 * The order files start in: the longest e2e files first, so the shared cluster's workers end
 * together instead of one worker starting a five-minute file while the others sit idle.
 *
 * vitest's own order is by the durations it cached in the last run, and by file size when it has
 * none, which is every run of CI's clean clone: there snapshot-schedules (a small file that waits
 * five minutes) started among the last and ran alone for minutes at the end of its group.
 * E2E_SECONDS says how long each e2e file took in a whole run on real nodes (the summary's
 * "slowest files"); a file it does not name counts as DEFAULT_SECONDS. Files of other projects keep
 * vitest's order.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds each e2e file took in the whole run at 085992b on real nodes, beside other work (load about 16 on two cores; rounded: only the order matters). */
export const E2E_SECONDS: Readonly<Record<string, number>> = {
  'test/e2e/snapshot-schedules.test.ts': 325,
  'test/e2e/snapshots.test.ts': 278,
  'test/e2e/tls-ca-change.test.ts': 260,
  'test/e2e/kubectl-etcd.test.ts': 237,
  'test/e2e/disruptions.test.ts': 215,
  'test/e2e/downgrade.test.ts': 213,
  'test/e2e/snapshot-recovery.test.ts': 210,
  'test/e2e/upgrade.test.ts': 187,
  'test/e2e/readme-install.test.ts': 182,
  'test/e2e/namespace-deletion.test.ts': 172,
  'test/e2e/metrics-alerts.test.ts': 168,
  'test/e2e/tls-cert-manager.test.ts': 150,
  'test/e2e/manager-lifecycle.test.ts': 147,
  'test/e2e/maintenance.test.ts': 145,
  'test/e2e/member-container.test.ts': 121,
  'test/e2e/quorum-recovery.test.ts': 118,
  'test/e2e/node-loss.test.ts': 111,
  'test/e2e/live-page.test.ts': 110,
  'test/e2e/pod-security.test.ts': 94,
  'test/e2e/snapshot-s3-tls.test.ts': 89,
  'test/e2e/member-failures.test.ts': 82,
  'test/e2e/node-loss-bootstrap.test.ts': 76,
  'test/e2e/chart-install.test.ts': 45,
  'test/e2e/chart-watch-namespace.test.ts': 60,
  'test/e2e/kubectl-exec.test.ts': 65,
  'test/e2e/api-validation.test.ts': 53,
  'test/e2e/tls.test.ts': 50,
  'test/e2e/nodes-spread-drain.test.ts': 35,
  'test/e2e/node-down.test.ts': 30,
  'test/e2e/disruption-budget.test.ts': 28,
  'test/e2e/effects-kubernetes-force-delete-pod.test.ts': 28,
  'test/e2e/volume-expansion.test.ts': 25,
  'test/e2e/effects-kubernetes-seed.test.ts': 24,
  'test/e2e/data-guard.test.ts': 21,
  'test/e2e/controlplane.test.ts': 19,
  'test/e2e/network-etcd.test.ts': 18,
  'test/e2e/pod-network.test.ts': 16,
  'test/e2e/storage-provisioner.test.ts': 16,
  'test/e2e/effects-kubernetes-lifecycle.test.ts': 13,
  'test/e2e/cert-manager.test.ts': 12,
  'test/e2e/manager-runtime.test.ts': 4,
};

/** What a file E2E_SECONDS does not name counts as: a new file, likely one being worked on, starts early. */
export const DEFAULT_SECONDS = 150;

/** A file's path from the project root, as E2E_SECONDS names it. */
const relative = (spec: TestSpecification): string =>
  spec.moduleId.slice(spec.project.config.root.length).replace(/^\/+/, '');

/** How long a file is expected to take: its E2E_SECONDS, DEFAULT_SECONDS for an unnamed e2e file, 0 otherwise. */
export function expectedSeconds(file: string): number {
  if (!file.startsWith('test/e2e/')) return 0;
  return E2E_SECONDS[file] ?? DEFAULT_SECONDS;
}

/** The project whose files need the whole cluster, one at a time (vitest.config.ts). */
export const SERIAL_PROJECT = 'cluster-serial';

/**
 * How many of SERIAL_PROJECT's files start before the other files of its group (the unit files):
 * the first runs, the second waits for it (test/e2e/one-at-a-time.ts) holding a worker, so the
 * next starts the moment the first ends; the rest go after the unit files, which by then are
 * mostly done, and queue the same way. Two ahead keep the serial files back to back while the
 * unit files run beside them on the group's other workers.
 */
export const SERIAL_LEAD = 2;

/** What the order reads of a file: its project's name and group. */
interface Placed {
  readonly project: { readonly name: string; readonly config: { readonly sequence: { readonly groupOrder: number } } };
}

/** SERIAL_PROJECT's files after its first SERIAL_LEAD moved after the last file of their group. */
export function serialAfterLead<T extends Placed>(files: readonly T[]): T[] {
  const serial = files.filter((f) => f.project.name === SERIAL_PROJECT);
  const held = serial.slice(SERIAL_LEAD);
  if (held.length === 0) return [...files];
  const group = serial[0]!.project.config.sequence.groupOrder;
  const rest = files.filter((f) => !held.includes(f));
  const at = rest.findLastIndex((f) => f.project.config.sequence.groupOrder === group) + 1;
  return [...rest.slice(0, at), ...held, ...rest.slice(at)];
}

/**
 * vitest's order, then the longest expected first within each project (a stable sort keeps the
 * rest), then the serial files past their lead after the unit files (serialAfterLead).
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Each run of one project's files is a block; files trade places only within their block.
    const block = new Map<TestSpecification, number>();
    sorted.forEach((s, i) => {
      const previous = sorted[i - 1];
      block.set(
        s,
        (previous ? block.get(previous)! : 0) + (previous && previous.project.name !== s.project.name ? 1 : 0),
      );
    });
    return serialAfterLead(
      [...sorted].sort(
        (a, b) => block.get(a)! - block.get(b)! || expectedSeconds(relative(b)) - expectedSeconds(relative(a)),
      ),
    );
  }
}
