/**
 * flushRaftLog: commits entries that change nothing until every member has written its raft log
 * to a snapshot on disk. etcd does that every --snapshot-count entries (10,000 by default) and,
 * when it starts, replays the log from its last such snapshot. etcd 3.7 cannot read the entries
 * etcd 3.5 wrote (v2 requests, e.g. the cluster version it set): a member whose log still holds
 * them since its last snapshot panics on 3.7 as it replays them ("unmarshal should never fail"),
 * which is every member of a cluster born on 3.5 that has committed fewer than --snapshot-count
 * entries since. After the flush, every member's last snapshot is past them.
 *
 * Each entry is a transaction whose comparison never holds (a key's version below 0) and whose
 * other branch is empty: it goes through raft, as a write, and writes nothing (no revision).
 */
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler } from '../types.ts';
import { setTimeout as delay } from 'node:timers/promises';
import { call, emptyEntry, etcdError, listMembers, onCluster } from './_call.ts';
import type { EtcdContext } from './clients.ts';

/** How long a flush may take (10,001 entries took 15 s on the local cluster; a larger --snapshot-count takes longer). */
const FLUSH_TIMEOUT_MS = 15 * 60_000;
/** Transactions in flight at once. */
const IN_FLIGHT = 64;

/** What flushRaftLog did: entries committed. */
export type FlushRaftLogResult = { readonly entries: number };

/**
 * Waits until every started member that answers has applied what the cluster committed: a member
 * writes its snapshot when it applies the entry past --snapshot-count, so one restarted before
 * that (a roll's next member trailing the leader a little) would still hold the old entries.
 */
async function appliedEverywhere(ctx: EtcdContext): Promise<void> {
  const { members } = await listMembers(ctx, ERR.FLUSH_RAFT_LOG);
  const status = (name: string) =>
    call(ctx.signal, ctx.etcd.callTimeoutMs, (o) => ctx.etcd.member(ctx.cluster, name).maintenance.status(o)).catch(
      () => null,
    );
  const started = members.filter((m) => m.name !== '').map((m) => m.name);
  const first = await Promise.all(started.map(status));
  const committed = Math.max(0, ...first.map((s) => Number(s?.raftIndex ?? 0)));
  let behind = started.filter((_, i) => first[i] !== null && Number(first[i]!.raftAppliedIndex) < committed);
  while (behind.length > 0) {
    if (ctx.signal.aborted) throw new Error(`${behind.join(', ')} did not apply up to ${committed} in time`);
    await delay(100);
    const now = await Promise.all(behind.map(status));
    behind = behind.filter((_, i) => now[i] !== null && Number(now[i]!.raftAppliedIndex) < committed);
  }
}

/**
 * Commits params.entries such entries, IN_FLIGHT at a time, through any member that answers; done
 * once every member that answers has applied them (and so written its snapshot).
 */
export const flushRaftLog: IntentHandler<'flushRaftLog', FlushRaftLogResult, EtcdContext> = {
  kind: 'flushRaftLog',

  async run(params, given) {
    // Its own deadline, as compact and defragment have: 10,001 proposals outlast an ordinary
    // effect's 30 s on a loaded machine (15 s on the local cluster).
    const ctx = { ...given, signal: AbortSignal.timeout(FLUSH_TIMEOUT_MS) };
    const started = Date.now();
    let done = 0;
    try {
      while (done < params.entries) {
        const n = Math.min(IN_FLIGHT, params.entries - done);
        await onCluster(ctx, (client) => Promise.all(Array.from({ length: n }, () => emptyEntry(client))));
        done += n;
      }
      await appliedEverywhere(ctx);
    } catch (err) {
      throw etcdError(ERR.FLUSH_RAFT_LOG, `committing ${params.entries} empty entries (${done} done)`, err);
    }
    ctx.log.info(
      { cluster: ctx.cluster.name, entries: done, version: params.version, ms: Date.now() - started },
      'raft log flushed to a snapshot on every member',
    );
    return { entries: done };
  },

  // Not known from outside: running it again commits as many more, which changes nothing.
  recover() {
    return Promise.resolve({ done: false });
  },
};
