/**
 * readRevision: the cluster's revision now, as the first member that answers its status call
 * reports it. Read once before a rollback stops anything, so that what it loses is said as a
 * number (the probe carries no revision while a leader exists: it would change at every write).
 */
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { etcdError, onCluster } from './_call.ts';
import type { EtcdContext } from './clients.ts';

/** The revision read. */
export type ReadRevisionResult = { readonly revision: number };

/** Reads the revision; a read changes nothing, so recover runs it again. */
export const readRevision: IntentHandler<'readRevision', ReadRevisionResult, EtcdContext> = {
  kind: 'readRevision',
  async run(_params, ctx) {
    try {
      const status = await onCluster(ctx, (client, o) => client.maintenance.status(o));
      return { revision: Number(status.header.revision) };
    } catch (err) {
      throw etcdError(ERR.READ_REVISION, 'reading the revision', err);
    }
  },
  recover(): Promise<Recovered<ReadRevisionResult>> {
    return Promise.resolve({ done: false });
  },
};
