import { describe, expect, it } from 'vitest';
import { clusterMachine } from '../../../machines/cluster.ts';
import * as COORDINATOR from '../../../machines/cluster/ids.ts';
import { STARTING } from '../../../machines/cluster/bootstrap/index.ts';
import { MAINTENANCE } from '../../../machines/cluster/maintenance/index.ts';
import { ROLL } from '../../../machines/cluster/roll/index.ts';
import { VOLUMES } from '../../../machines/cluster/volumes/index.ts';
import { RECOVERY } from '../../../machines/cluster/recovery/index.ts';

const { idsAt: _at, idsUnder: _under, stepOf: _stepOf, ...TABLES } = COORDINATOR;
const ID_TABLES = { ...TABLES, STARTING, ROLL, MAINTENANCE, VOLUMES, RECOVERY };

/** Every id in a table, nested tables flattened. */
const idsIn = (table: object): string[] =>
  Object.values(table).flatMap((v: unknown) => (typeof v === 'string' ? [v] : idsIn(v as object)));

describe('cluster machine: typed state ids', () => {
  it.each(Object.entries(ID_TABLES).flatMap(([table, ids]) => idsIn(ids).map((id) => [table, id] as const)))(
    '%s: %s names a state of the machine',
    (_, id) => {
      expect(() => clusterMachine.getStateNodeById(id.slice(1))).not.toThrow();
    },
  );

  it('CLUSTER lists exactly the top-level states of the machine', () => {
    expect(Object.keys(clusterMachine.root.states).sort()).toEqual(Object.keys(COORDINATOR.CLUSTER).sort());
  });
});
