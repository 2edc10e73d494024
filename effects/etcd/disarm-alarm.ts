/**
 * disarmAlarm: ends etcd's NOSPACE alarm, which refuses every write cluster-wide until someone
 * disarms it, once compaction and defragmentation have brought every member's database under
 * the limit (the quota less a margin). A database still over it is reported as
 * ERR_SPACE_NOT_FREED and nothing is disarmed: disarming then would only let etcd raise the
 * alarm again at the next writes.
 */
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler } from '../types.ts';
import { etcdError, onCluster } from './_call.ts';
import { listAlarms, memberSizes } from './_space.ts';
import type { EtcdContext } from './clients.ts';
import { decimalID } from './ids.ts';

/** What disarmAlarm did: how many NOSPACE alarms it disarmed (one per member that raised it). */
export type DisarmAlarmResult = { readonly disarmed: number };

const CODE = ERR.DISARM_ALARM;
const MiB = 2 ** 20;

/** Disarms every raised NOSPACE alarm once each member's database is at most params.limitBytes. */
export const disarmAlarm: IntentHandler<'disarmAlarm', DisarmAlarmResult, EtcdContext> = {
  kind: 'disarmAlarm',

  async run(params, ctx) {
    const over = (await memberSizes(ctx, CODE)).filter((s) => s.dbSize > params.limitBytes);
    if (over.length > 0) {
      const sizes = over.map((s) => `${s.member} ${(s.dbSize / MiB).toFixed(1)} MiB`).join(', ');
      throw new EffectError(
        ERR.SPACE_NOT_FREED,
        `databases still over ${(params.limitBytes / MiB).toFixed(1)} MiB of the ${(params.quotaBytes / MiB).toFixed(1)} MiB quota: ${sizes}`,
      );
    }
    const raised = (await listAlarms(ctx, CODE)).filter((a) => a.alarm === 'NOSPACE');
    for (const a of raised) {
      try {
        await onCluster(ctx, (client, o) =>
          client.maintenance.alarm({ action: 'Deactivate', alarm: 'Nospace', memberID: decimalID(a.memberID) }, o),
        );
      } catch (err) {
        throw etcdError(CODE, `disarming the NOSPACE alarm of member ${a.memberID}`, err);
      }
    }
    ctx.log.info(
      { cluster: ctx.cluster.name, disarmed: raised.length, quota: params.quotaBytes },
      'NOSPACE alarm disarmed',
    );
    return { disarmed: raised.length };
  },

  // Done when no NOSPACE alarm is raised: disarming an alarm that is not raised changes nothing.
  async recover(_params, ctx) {
    const raised = (await listAlarms(ctx, CODE)).filter((a) => a.alarm === 'NOSPACE');
    return raised.length === 0 ? { done: true, result: { disarmed: 0 } } : { done: false };
  },
};
