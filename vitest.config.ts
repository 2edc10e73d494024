import { defineConfig } from 'vitest/config';

// Three projects: `unit` needs nothing but Node; `cluster` runs against the real local
// Kubernetes (control plane from Go modules, process node) that test/e2e/setup.ts starts once;
// `image` builds the operator image, runs it unpacked and pushes it to a local registry (root).
export default defineConfig({
  test: {
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**', 'test/image/**', 'node_modules/**'],
          // Some unit files start real etcd processes or lay out SVGs in WebAssembly; with the
          // cluster project running beside them on two cores, 5 s was seen to run out.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'cluster',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // One local cluster, one API server: the files share it and run one after another.
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'image',
          include: ['test/image/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 900_000,
          // Both files build the image into the cache; one at a time on two cores.
          fileParallelism: false,
        },
      },
    ],
  },
});
