/**
 * Private helpers of the maintenance handlers: each member's database size as it reports it,
 * etcd's raised alarms, and the longer deadline of calls that rebuild or compact a database.
 */
import { AlarmType, type IAlarmMember } from 'etcd3';
import { ERR, type ErrorCode } from '../../machines/error-codes.ts';
import { call, etcdError, listMembers, onCluster } from './_call.ts';
import type { EtcdContext } from './clients.ts';
import { hexID } from './ids.ts';

/**
 * Deadline of a defragmentation or a physical compaction: both rewrite the database and take
 * seconds per GiB, far past an ordinary call's. An aborted one goes on inside etcd regardless.
 */
export const MAINTENANCE_TIMEOUT_MS = 600_000;

/** One member's database as it reports it: bytes allocated, and bytes holding data. */
export interface MemberSize {
  readonly member: string;
  /** Hex member ID. */
  readonly id: string;
  readonly dbSize: number;
  readonly dbSizeInUse: number;
}

/** The size one member reports of its own database; throws when another member answers at its address. */
export async function sizeOf(ctx: EtcdContext, member: string, id: string, code: ErrorCode): Promise<MemberSize> {
  let status;
  try {
    status = await call(ctx.signal, ctx.etcd.callTimeoutMs, (o) =>
      ctx.etcd.member(ctx.cluster, member).maintenance.status(o),
    );
  } catch (err) {
    throw etcdError(code, `status of ${member}`, err);
  }
  const answered = hexID(status.header.member_id);
  if (answered !== id)
    throw etcdError(code, `status of ${member}`, new Error(`member ${answered} answered, not ${id}`));
  return { member, id, dbSize: Number(status.dbSize), dbSizeInUse: Number(status.dbSizeInUse) };
}

/** Every started member's size; throws when one does not answer (nothing is judged on a partial view). */
export async function memberSizes(ctx: EtcdContext, code: ErrorCode): Promise<MemberSize[]> {
  const { members } = await listMembers(ctx, code);
  const started = members.filter((m) => m.name !== '');
  return Promise.all(started.map((m) => sizeOf(ctx, m.name, hexID(m.ID), code)));
}

/** A raised alarm: the member that raised it (hex ID) and its type as etcd names it (NOSPACE, CORRUPT). */
export interface RaisedAlarm {
  readonly memberID: string;
  readonly alarm: string;
}

/** etcd's alarm names by the values etcd3 may hand back (the enum's number, its key, or etcd's own name). */
const ALARM_NAMES: Readonly<Record<string, string>> = {
  [String(AlarmType.Nospace)]: 'NOSPACE',
  [String(AlarmType.Corrupt)]: 'CORRUPT',
  Nospace: 'NOSPACE',
  Corrupt: 'CORRUPT',
  NOSPACE: 'NOSPACE',
  CORRUPT: 'CORRUPT',
};

/** An alarm in the operator's vocabulary. */
export const raisedAlarm = (a: IAlarmMember): RaisedAlarm => ({
  memberID: hexID(a.memberID),
  alarm: ALARM_NAMES[String(a.alarm)] ?? String(a.alarm),
});

/** etcd's raised alarms (`etcdctl alarm list`): a linearizable request, answered by any member with quorum. */
export async function listAlarms(ctx: EtcdContext, code: ErrorCode = ERR.DISARM_ALARM): Promise<RaisedAlarm[]> {
  try {
    const res = await onCluster(ctx, (client, o) =>
      client.maintenance.alarm({ action: 'Get', alarm: 'None', memberID: 0 }, o),
    );
    return res.alarms.map(raisedAlarm);
  } catch (err) {
    throw etcdError(code, 'alarm list', err);
  }
}
