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

/** Seconds each e2e file took in a whole run on real nodes (rounded; only the order matters). */
export const E2E_SECONDS: Readonly<Record<string, number>> = {
  'test/e2e/snapshot-schedules.test.ts': 317,
  'test/e2e/tls-ca-change.test.ts': 310,
  'test/e2e/upgrade.test.ts': 291,
  'test/e2e/manager-lifecycle.test.ts': 283,
  'test/e2e/snapshots.test.ts': 209,
  // 179 s before its krew case, which took 14.7 s more (148 s the whole file, run alone).
  'test/e2e/kubectl-etcd.test.ts': 194,
  'test/e2e/maintenance.test.ts': 182,
  'test/e2e/metrics-alerts.test.ts': 170,
  'test/e2e/snapshot-recovery.test.ts': 146,
  'test/e2e/downgrade.test.ts': 137,
  'test/e2e/node-loss-bootstrap.test.ts': 141,
  'test/e2e/disruptions.test.ts': 136,
  'test/e2e/tls-cert-manager.test.ts': 135,
  'test/e2e/node-loss.test.ts': 132,
  'test/e2e/readme-install.test.ts': 128,
  'test/e2e/namespace-deletion.test.ts': 126,
  'test/e2e/live-page.test.ts': 114,
  'test/e2e/pod-security.test.ts': 109,
  'test/e2e/chart-install.test.ts': 104,
  'test/e2e/member-container.test.ts': 100,
  'test/e2e/tls.test.ts': 91,
  'test/e2e/snapshot-s3-tls.test.ts': 84,
  'test/e2e/volume-expansion.test.ts': 73,
  'test/e2e/member-failures.test.ts': 63,
  'test/e2e/quorum-recovery.test.ts': 59,
  'test/e2e/kubectl-exec.test.ts': 54,
  'test/e2e/nodes-spread-drain.test.ts': 43,
  'test/e2e/api-validation.test.ts': 40,
  'test/e2e/disruption-budget.test.ts': 38,
  'test/e2e/controlplane.test.ts': 27,
  'test/e2e/node-down.test.ts': 25,
  'test/e2e/pod-network.test.ts': 21,
  'test/e2e/data-guard.test.ts': 21,
  'test/e2e/effects-kubernetes-seed.test.ts': 19,
  'test/e2e/effects-kubernetes-force-delete-pod.test.ts': 18,
  'test/e2e/manager-runtime.test.ts': 18,
  'test/e2e/network-etcd.test.ts': 9,
  'test/e2e/effects-kubernetes-lifecycle.test.ts': 8,
  'test/e2e/storage-provisioner.test.ts': 7,
  'test/e2e/cert-manager.test.ts': 6,
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

/** vitest's order, then the longest expected first within each project (a stable sort keeps the rest). */
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
    return [...sorted].sort(
      (a, b) => block.get(a)! - block.get(b)! || expectedSeconds(relative(b)) - expectedSeconds(relative(a)),
    );
  }
}
