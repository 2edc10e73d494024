/**
 * defragment: rebuilds one member's backend database, giving back to the file system the pages
 * that compaction and deletes freed. etcd blocks that member's reads and writes while it runs,
 * so the cluster machine asks for one member at a time, followers first, with leadership moved
 * off the leader before its turn. Run again on a database just rebuilt, it frees next to nothing.
 */
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler } from '../types.ts';
import { call, etcdError } from './_call.ts';
import { MAINTENANCE_TIMEOUT_MS, sizeOf } from './_space.ts';
import type { EtcdContext } from './clients.ts';
import { canonicalID } from './ids.ts';

/** What defragment did: the member's database size before and after, and the bytes given back. */
export type DefragmentResult = {
  readonly member: string;
  readonly before: number;
  readonly after: number;
  readonly freed: number;
};

const CODE = ERR.DEFRAGMENT;

/** Defragments one member, by name, checking that the member answering is the one asked for. */
export const defragment: IntentHandler<'defragment', DefragmentResult, EtcdContext> = {
  kind: 'defragment',

  async run(params, ctx) {
    const id = canonicalID(params.memberID);
    const before = await sizeOf(ctx, params.member, id, CODE);
    const started = Date.now();
    try {
      // Its own deadline, not the context's: a large database takes longer than any ordinary call.
      await call(AbortSignal.timeout(MAINTENANCE_TIMEOUT_MS), MAINTENANCE_TIMEOUT_MS, (o) =>
        ctx.etcd.member(ctx.cluster, params.member).maintenance.defragment(o),
      );
    } catch (err) {
      throw etcdError(CODE, `defragmenting ${params.member}`, err);
    }
    const after = await sizeOf(ctx, params.member, id, CODE);
    const freed = Math.max(0, before.dbSize - after.dbSize);
    ctx.log.info(
      {
        cluster: ctx.cluster.name,
        member: params.member,
        before: before.dbSize,
        after: after.dbSize,
        freed,
        ms: Date.now() - started,
      },
      'member defragmented',
    );
    return { member: params.member, before: before.dbSize, after: after.dbSize, freed };
  },

  // Whether a defragmentation ran leaves no trace to find; running it again is safe and, on a
  // database just rebuilt, quick. So recover says "not done", and the intent runs again.
  recover() {
    return Promise.resolve({ done: false });
  },
};
