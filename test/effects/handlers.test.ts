import { describe, expect, it } from 'vitest';
import { etcdHandlers, type EtcdContext } from '../../effects/etcd/index.ts';
import { kubernetesHandlers, type KubeContext } from '../../effects/kubernetes/index.ts';
import type { HandlerTable } from '../../effects/types.ts';
import { CLUSTER_INTENTS, MEMBER_INTENTS } from '../../machines/index.ts';
import { SCHEDULE_INTENTS, SNAPSHOT_INTENTS } from '../../machines/intents.ts';

const handlers = { ...kubernetesHandlers, ...etcdHandlers };

describe('effect handlers', () => {
  it('carry out every intent any machine asks for, each under its own kind', () => {
    for (const kind of [...CLUSTER_INTENTS, ...MEMBER_INTENTS, ...SNAPSHOT_INTENTS, ...SCHEDULE_INTENTS])
      expect(handlers[kind].kind).toBe(kind);
  });

  it('a table that misses an intent kind does not type-check', () => {
    const { releaseFinalizer: _, ...partial } = handlers;
    // @ts-expect-error releaseFinalizer has no handler
    const table: HandlerTable<KubeContext & EtcdContext> = partial;
    expect(Object.keys(table)).not.toContain('releaseFinalizer');
  });
});
