/**
 * What the operator image is, in one place: `make image` builds it from this, and a unit test
 * checks that the Dockerfile (for people who build with Docker) says the same.
 */

/** Where the operator's sources and production dependencies live in the image. */
export const APP_DIR = '/opt/etcd-operator';

/** The top-level folders of the repository the CLI needs at run time, besides package.json. */
export const APP_FOLDERS = ['api', 'machines', 'effects', 'journal', 'manager', 'statechart', 'plugin'] as const;

/** The non-root user everything runs as (distroless's `nonroot`; build-security.ts uses it too). */
export const USER_ID = 65532;

/** The journal's directory (the chart mounts its volume here), owned by USER_ID. */
export const JOURNAL_DIR = '/var/lib/etcd-operator';

/** `etcd-operator` on PATH, for `kubectl exec deploy/etcd-operator -- etcd-operator journal NAME`. */
export const CLI_LINK = '/usr/local/bin/etcd-operator';

/** The image's configuration, as both builds write it. */
export const IMAGE_CONFIG = {
  User: `${USER_ID}:${USER_ID}`,
  WorkingDir: APP_DIR,
  Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=production'],
  Entrypoint: ['/usr/local/bin/node', `${APP_DIR}/manager/cli.ts`],
  Cmd: ['manager'],
} as const;

/** The name the image is published under; the chart's values.yaml names the same repository. */
export const IMAGE_REPOSITORY = 'ghcr.io/etcd-operator/etcd-operator';
