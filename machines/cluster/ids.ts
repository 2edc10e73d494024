/**
 * State ids of the cluster machine as typed constants: a target names a key of one of these
 * tables, so a misspelt state fails to compile, and test/machines/cluster/ids.test.ts checks
 * that every id resolves in the machine.
 */

/** `#cluster.<prefix>.<key>` for each key: the ids of one state's children. */
export function idsUnder<const P extends string, const K extends string>(
  prefix: P,
  keys: readonly K[],
): { readonly [Q in K]: `#cluster.${P}.${Q}` } {
  return Object.fromEntries(keys.map((k) => [k, `#cluster.${prefix}.${k}`])) as {
    readonly [Q in K]: `#cluster.${P}.${Q}`;
  };
}

/** `#cluster.<key>` for each key: the ids of the machine's top-level states. */
export function idsAt<const K extends string>(keys: readonly K[]): { readonly [Q in K]: `#cluster.${Q}` } {
  return Object.fromEntries(keys.map((k) => [k, `#cluster.${k}`])) as { readonly [Q in K]: `#cluster.${Q}` };
}

/** The cluster machine's top-level states: the coordinator's and its concerns' steps. */
export const CLUSTER = idsAt([
  'pending',
  'deciding',
  'observing',
  'bootstrapping',
  'scalingUp',
  'scalingDown',
  'replacing',
  'removingOrphan',
  'enablingAuth',
  'updatingBudget',
  'parking',
  'dormant',
  'waking',
  'upgrading',
  'recoveringSpace',
  'outOfSpace',
  'defragmenting',
  'resizingVolumes',
  'volumesRefused',
  'recovering',
  'steady',
  'degraded',
  'failed',
  'deleting',
]);

/**
 * One of the cluster machine's top-level states: a step. machines/cluster.ts's `states`
 * satisfies a record of exactly these, so this list and the machine cannot drift apart.
 */
export type ClusterStep = keyof typeof CLUSTER;

/** The step (top-level state) of a dotted state path; undefined for a top the machine does not have. */
export function stepOf(path: string): ClusterStep | undefined {
  const [top = ''] = path.split('.');
  return Object.hasOwn(CLUSTER, top) ? (top as ClusterStep) : undefined;
}

/** The coordinator's compound steps. */
export const BOOTSTRAP = idsUnder('bootstrapping', ['seeding', 'starting', 'joining']);
export const SEEDING = idsUnder('bootstrapping.seeding', [
  'creatingServices',
  'checkingCertificates',
  'creatingCertificates',
  'awaitingCertificates',
  'checkingRestore',
  'holdingRestore',
  'verifyingRestore',
  'creatingSeed',
  'awaitingSeed',
  'releasingRestore',
]);
export const RESTORE = idsUnder('bootstrapping.seeding.verifyingRestore', ['checking', 'creatingJob', 'awaitingJob']);
export const PARKING = idsUnder('parking', ['parkingMembers', 'awaitingPark']);
export const WAKING = idsUnder('waking', ['wakingMembers', 'awaitingWake']);
