/**
 * compact: drops the key-value history up to the current revision, as etcd's maintenance guide
 * says to do when the NOSPACE alarm is raised (etcd allows compaction while the alarm refuses
 * writes). Physical, on one voter asked directly: the call returns once that member has removed
 * the old revisions and committed, so the space in use it then reports is what defragmenting
 * can bring a database down to. (Other members compact on their own, a little later.)
 */
import type { Etcd3 } from 'etcd3';
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler } from '../types.ts';
import { call, codeOf, emptyEntry, etcdError, listMembers } from './_call.ts';
import { MAINTENANCE_TIMEOUT_MS, sizeOf } from './_space.ts';
import type { EtcdContext } from './clients.ts';
import { hexID } from './ids.ts';

/**
 * What compact did: the revision the history now starts at, the voter that compacted, and its
 * database size and size in use right after (in use: what defragmenting can shrink it to).
 */
export type CompactResult = {
  readonly revision: number;
  readonly member: string;
  readonly dbSize: number;
  readonly dbSizeInUse: number;
};

const CODE = ERR.COMPACT;

/** etcd's answer to a compaction at or below the one already done: nothing more to drop. */
const alreadyCompacted = (err: unknown): boolean =>
  err instanceof Error && err.message.includes('required revision has been compacted');

/** At most this many backend commits are forced after a compaction (commitBackend). */
const SETTLE_COMMITS = 6;

/**
 * etcd counts the pages a compaction freed as free only once a backend commit begins after every
 * read transaction of an earlier commit has closed (bbolt keeps them pending until then), and
 * the last batch of a compaction is committed only at the backend's next 100 ms tick. Under the
 * NOSPACE alarm nothing else is written, and an entry that changes nothing does not make the
 * backend commit (it commits only what is pending), so the size in use read right after could
 * stay the one before the compaction for good: the operator said it could not free enough of a
 * database that was all history (seen in a unit test one run in six on a loaded machine).
 *
 * Each round forces a commit: an entry that changes nothing moves the consistent index on, and
 * etcd's Hash call commits the backend first (writing that index makes the commit real). Rounds go
 * on until two in a row read the same size in use. Hash reads the whole database, a second or so
 * per GiB, which a NOSPACE recovery (a database at its quota, defragmented next) can afford.
 */
async function commitBackend(client: Etcd3, ctx: EtcdContext): Promise<void> {
  let previous = -1;
  for (let i = 0; i < SETTLE_COMMITS; i++) {
    await call(ctx.signal, ctx.etcd.callTimeoutMs, (o) => emptyEntry(client, o));
    await call(ctx.signal, MAINTENANCE_TIMEOUT_MS, (o) => client.maintenance.hash(o));
    await new Promise((r) => setTimeout(r, 150));
    const status = await call(ctx.signal, ctx.etcd.callTimeoutMs, (o) => client.maintenance.status(o));
    const inUse = Number(status.dbSizeInUse);
    if (inUse === previous) return;
    previous = inUse;
  }
}

/** Compacts through one member to the revision it is at; returns that revision. */
async function compactOn(client: Etcd3, ctx: EtcdContext): Promise<number> {
  const status = await call(ctx.signal, ctx.etcd.callTimeoutMs, (o) => client.maintenance.status(o));
  const revision = Number(status.header.revision);
  try {
    // Its own deadline: removing a large history takes longer than an ordinary call.
    await call(AbortSignal.timeout(MAINTENANCE_TIMEOUT_MS), MAINTENANCE_TIMEOUT_MS, (o) =>
      client.kv.compact({ revision, physical: true }, o),
    );
  } catch (err) {
    if (!alreadyCompacted(err)) throw err;
  }
  await commitBackend(client, ctx);
  return revision;
}

/** Compacts to the revision etcd is at now; a history already compacted that far counts as done. */
export const compact: IntentHandler<'compact', CompactResult, EtcdContext> = {
  kind: 'compact',

  async run(params, ctx) {
    const voters = (await listMembers(ctx, CODE)).members.filter((m) => m.name !== '' && !m.isLearner);
    let last: unknown = new Error('no started voter');
    for (const m of voters) {
      let revision: number;
      try {
        revision = await compactOn(ctx.etcd.member(ctx.cluster, m.name), ctx);
      } catch (err) {
        last = etcdError(CODE, `compacting the history through ${m.name}`, err);
        // Another voter may answer; any other refusal would be the same from every member.
        if (codeOf(last) === ERR.ETCD_UNAVAILABLE) continue;
        throw last;
      }
      const size = await sizeOf(ctx, m.name, hexID(m.ID), CODE);
      const result = { revision, member: m.name, dbSize: size.dbSize, dbSizeInUse: size.dbSizeInUse };
      ctx.log.info({ cluster: ctx.cluster.name, reason: params.reason, ...result }, 'history compacted');
      return result;
    }
    throw etcdError(CODE, 'compacting the history', last);
  },

  // Compacting again to the revision etcd is at then drops what the first try would have, and
  // more only if keys were deleted meanwhile: recover says "not done", and it runs again.
  recover() {
    return Promise.resolve({ done: false });
  },
};
