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

/** The coordinator's states a concern goes back to, or on to. */
export const CLUSTER = {
  deciding: '#cluster.deciding',
  observing: '#cluster.observing',
  failed: '#cluster.failed',
} as const;
