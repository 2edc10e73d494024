import { describe, expect, it } from 'vitest';
import { clusterMachine } from '../../../machines/cluster.ts';
import { CLUSTER } from '../../../machines/cluster/ids.ts';
import { ROLL } from '../../../machines/cluster/roll/index.ts';

const ID_TABLES = { CLUSTER, ROLL };

describe('cluster machine: typed state ids', () => {
  it.each(Object.entries(ID_TABLES).flatMap(([table, ids]) => Object.values(ids).map((id) => [table, id] as const)))(
    '%s: %s names a state of the machine',
    (_, id) => {
      expect(() => clusterMachine.getStateNodeById(id.slice(1))).not.toThrow();
    },
  );
});
