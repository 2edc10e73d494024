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
import type { Etcd3 } from 'etcd3';
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler } from '../types.ts';
import { etcdError, onCluster } from './_call.ts';
import type { EtcdContext } from './clients.ts';

/** The key the transactions compare: never written by them. */
export const FLUSH_KEY = 'etcd-operator.dev/raft-log-flush';
/** Transactions in flight at once. */
const IN_FLIGHT = 64;

/** What flushRaftLog did: entries committed. */
export type FlushRaftLogResult = { readonly entries: number };

/** One entry through raft that writes nothing. */
const noop = (client: Etcd3): Promise<unknown> =>
  client.if(FLUSH_KEY, 'Version', '<', 0).then(client.put(FLUSH_KEY).value('')).commit();

/** Commits params.entries such entries, IN_FLIGHT at a time, through any member that answers. */
export const flushRaftLog: IntentHandler<'flushRaftLog', FlushRaftLogResult, EtcdContext> = {
  kind: 'flushRaftLog',

  async run(params, ctx) {
    const started = Date.now();
    let done = 0;
    try {
      while (done < params.entries) {
        const n = Math.min(IN_FLIGHT, params.entries - done);
        await onCluster(ctx, (client) => Promise.all(Array.from({ length: n }, () => noop(client))));
        done += n;
      }
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
