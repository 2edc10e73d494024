import { defineConfig } from 'vitest/config';
import LongestFirst, { SERIAL_PROJECT } from './test/sequencer.ts';

/**
 * e2e files that run alone, after the rest: they drain or cordon the cluster's nodes (every Pod
 * on them is moved), install a manager watching every namespace (it would take the other files'
 * clusters), or are heavy enough to slow the busiest group more than they gain there (below).
 * Every other e2e file works in namespaces of its own, with its own manager scoped to them, and
 * runs beside the others: a second control plane on loopback ports of its own (controlplane.test)
 * shares; a file that needs a node to stop starts a node of its own (tainted, so nothing else
 * lands there); cert-manager's one controller is started with the cluster for every file.
 */
const WHOLE_CLUSTER = [
  // Own tainted nodes, so they can share (the holders once killed as they came up: the likely
  // cause is fixed in localcluster/realnode/node.ts, killNode). Beside the others in session 24
  // the cluster group took 1,372 s against 1,044 and the run was slower, the machine 94% busy:
  // six more nodes and two clusters in the busiest group. Here they use the last group's spare time.
  'test/e2e/node-loss.test.ts', // stops the node a member runs on
  'test/e2e/node-loss-bootstrap.test.ts', // hangs and deletes a node under a new cluster
  'test/e2e/nodes-spread-drain.test.ts', // cordons and drains nodes
  'test/e2e/disruption-budget.test.ts', // drains a node
  'test/e2e/chart-install.test.ts', // a manager watching every namespace
  'test/e2e/readme-install.test.ts', // the README's install: a manager watching every namespace
];

/**
 * Shared-cluster e2e files at once (E2E_WORKERS, default 3). Four was tried in session 19: its
 * cluster group took 905 s against three's 951, and at the load it brought (16 on a quiet machine)
 * one write failed after 10 s while disruptions.test cut a member off the network (the cause not
 * proven; three never showed it). docs/development.md, "How tests use it", has the figures.
 */
const E2E_WORKERS = Number(process.env.E2E_WORKERS ?? 3);
/**
 * The last group's workers: one runs a whole-cluster file, one holds the next (waiting for the
 * lock, test/e2e/one-at-a-time.ts), two run unit files beside them.
 */
const SERIAL_GROUP_WORKERS = 4;
/**
 * The image files at once: both (each builds the image into a cache dir of its own).
 */
const IMAGE_WORKERS = 2;

const cluster = {
  globalSetup: ['test/e2e/setup.ts'],
  testTimeout: 180_000,
  hookTimeout: 300_000,
};

// Four projects in three groups (numbered from 1: vitest sends a one-worker group 0 to the end),
// one after the other. First `image` (builds the operator image, runs it unpacked and pushes it to
// a local registry; root); then `cluster` (e2e on the shared local Kubernetes, E2E_WORKERS at once,
// the longest first: test/sequencer.ts); then `cluster-serial` (the WHOLE_CLUSTER files) and `unit`
// (needs nothing but Node) together: the serial files one at a time (a lock each takes before it is
// collected, test/e2e/one-at-a-time.ts), mostly waiting on Kubernetes, while the unit files, mostly
// CPU, run on the group's other workers. Before, the unit files ran at the end of the cluster group
// (after its e2e files, not beside them: 204 s) and the serial files after them (533 s), each alone
// on the machine. Both e2e projects share one local cluster, started once by test/e2e/setup.ts.
export default defineConfig({
  test: {
    reporters: ['default', './test/summary-reporter.ts'],
    // The longest e2e files start first (test/sequencer.ts says why).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts', 'localcluster/**/*.test.ts'],
          exclude: ['test/e2e/**', 'test/image/**', 'node_modules/**'],
          // Some unit files start real etcd processes or lay out SVGs in WebAssembly; with the
          // cluster project running beside them on two cores, 5 s was seen to run out.
          testTimeout: 30_000,
          // cluster-serial's group: one group's projects share one worker count.
          maxWorkers: SERIAL_GROUP_WORKERS,
          // A worker runs file after file, loading the shared modules once rather than a new worker
          // per file: the unit files alone (`npx vitest run --project unit`, an idle machine) took
          // 138 s of CPU and 97 s against 199 s and 112 s isolated. One file uses vi.spyOn, and restores it.
          isolate: false,
          // Per-file hooks of shared helpers (a module's own runs for the first file only).
          setupFiles: ['test/unit-setup.ts'],
          sequence: { groupOrder: 3 },
        },
      },
      {
        test: {
          name: 'cluster',
          include: ['test/e2e/**/*.test.ts'],
          exclude: WHOLE_CLUSTER,
          ...cluster,
          maxWorkers: E2E_WORKERS,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          name: SERIAL_PROJECT,
          include: WHOLE_CLUSTER,
          ...cluster,
          // One at a time by the lock this takes, not by one worker: the group's others run unit files.
          setupFiles: ['test/e2e/one-at-a-time.ts'],
          maxWorkers: SERIAL_GROUP_WORKERS,
          sequence: { groupOrder: 3 },
        },
      },
      {
        test: {
          name: 'image',
          include: ['test/image/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 900_000,
          maxWorkers: IMAGE_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
