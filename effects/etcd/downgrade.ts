/**
 * enableDowngrade and cancelDowngrade: etcd's own downgrade (`etcdctl downgrade enable|cancel`).
 * A member may restart on the previous minor only once etcd's cluster version is that minor and
 * its data (the storage version) was moved back to it: etcd 3.6 and later refuse at start data of
 * a newer storage version. `downgrade enable <minor>` asks for that; the leader then lowers the
 * cluster version, and each member its storage version (after a snapshot on disk that leaves no
 * newer entry in its log). etcd takes only the minor below the cluster version, one downgrade at a
 * time, and ends the downgrade itself once every member runs the target; `downgrade cancel` ends
 * it sooner, which a roll back up needs (else the cluster version stays down).
 */
import http from 'node:http';
import https from 'node:https';
import { setTimeout as delay } from 'node:timers/promises';
import { ERR, type ErrorCode } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler } from '../types.ts';
import { etcdError, listMembers, onCluster } from './_call.ts';
import type { EtcdContext } from './clients.ts';

/** What a member's /version says: its binary, the cluster version, its storage version (3.6 and later). */
export interface MemberVersions {
  readonly member: string;
  readonly server: string;
  readonly cluster: string;
  readonly storage?: string;
}

/**
 * What enableDowngrade did: the versions each member reports at the end, and whether it asked etcd
 * (false: the cluster version was the target's minor already; absent when found done after a restart).
 */
export type EnableDowngradeResult = {
  readonly enabled?: boolean;
  readonly members: readonly MemberVersions[];
  /** Members that did not answer (down or restarting): not waited for. */
  readonly silent: readonly string[];
};

/** What cancelDowngrade did: false when etcd had no downgrade to cancel. */
export type CancelDowngradeResult = { readonly cancelled: boolean };

/** How long the cluster and storage versions may take to come down (etcd checks every few seconds). */
const DOWNGRADE_TIMEOUT_MS = 2 * 60_000;

/** `3.6.16` -> `3.6`. */
const minorOf = (version: string): string => version.split('.').slice(0, 2).join('.');

/** A minor as a number to compare (`3.6` -> 3006). */
const rank = (version: string): number => {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major * 1000 + minor;
};

/** GET of one of etcd's plain HTTP endpoints on a member's client URL, over TLS when the cluster has it. */
async function getJSON(ctx: EtcdContext, member: string, path: string): Promise<unknown> {
  const { url, tls, serverName } = ctx.etcd.address(ctx.cluster, member);
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.etcd.callTimeoutMs)]);
  const body = await new Promise<string>((resolve, reject) => {
    const options = {
      signal,
      ...(tls ? { ca: tls.ca, cert: tls.cert, key: tls.key } : {}),
      ...(serverName ? { servername: serverName } : {}),
    };
    const req = (url.startsWith('https:') ? https : http).get(new URL(path, url), options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(text) : reject(new Error(`${path} answered ${res.statusCode}: ${text}`)),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  return JSON.parse(body) as unknown;
}

/** The versions one member reports; throws when it does not answer. */
async function versionsOf(ctx: EtcdContext, member: string): Promise<MemberVersions> {
  const v = (await getJSON(ctx, member, '/version')) as { etcdserver?: string; etcdcluster?: string; storage?: string };
  return {
    member,
    server: v.etcdserver ?? '',
    cluster: v.etcdcluster ?? '',
    ...(v.storage ? { storage: v.storage } : {}),
  };
}

/**
 * The versions each started member that answers reports, and the members that do not answer (a
 * member down or restarting: a roll undoing an upgrade a member could not start restarts it anyway).
 * Fails (retried) when none answers.
 */
export async function clusterVersions(
  ctx: EtcdContext,
  code: ErrorCode = ERR.ENABLE_DOWNGRADE,
): Promise<{ members: MemberVersions[]; silent: string[] }> {
  const { members } = await listMembers(ctx, code);
  const started = members.filter((m) => m.name !== '').map((m) => m.name);
  const answers = await Promise.all(started.map((name) => versionsOf(ctx, name).catch((err: unknown) => err)));
  const answered = answers.filter((a): a is MemberVersions => !(a instanceof Error));
  if (answered.length === 0) throw etcdError(code, `no member answered /version`, answers[0]);
  return { members: answered, silent: started.filter((_, i) => answers[i] instanceof Error) };
}

/** Every member that answers reports the target's minor as the cluster version, and no newer storage version. */
const down = (members: readonly MemberVersions[], minor: string): boolean =>
  members.every((m) => minorOf(m.cluster) === minor && (m.storage === undefined || rank(m.storage) <= rank(minor)));

/** Asks etcd to enable the downgrade to `minor`; a downgrade already enabled to it counts as asked. */
async function enable(ctx: EtcdContext, minor: string): Promise<void> {
  try {
    await onCluster(ctx, (client, o) => client.maintenance.downgrade({ action: 'Enable', version: `${minor}.0` }, o));
  } catch (err) {
    if (/downgrade job in progress/.test(err instanceof Error ? err.message : String(err))) return;
    throw etcdError(ERR.ENABLE_DOWNGRADE, `downgrade enable ${minor}`, err);
  }
}

/**
 * Brings etcd's cluster version down to the minor of params.version (enabling the downgrade when
 * it is one minor above; nothing to enable when it is there already) and waits until every member
 * that answers reports it as cluster version and no newer storage version. Refused, retried, when the cluster
 * version is neither.
 */
export const enableDowngrade: IntentHandler<'enableDowngrade', EnableDowngradeResult, EtcdContext> = {
  kind: 'enableDowngrade',

  async run(params, given) {
    // Its own deadline, as flushRaftLog has: etcd lowers the versions every few seconds, which a
    // loaded machine can stretch past an ordinary effect's.
    const ctx = { ...given, signal: AbortSignal.timeout(DOWNGRADE_TIMEOUT_MS) };
    const minor = minorOf(params.version);
    let { members, silent } = await clusterVersions(ctx);
    const clusterMinor = members.map((m) => minorOf(m.cluster)).sort((a, b) => rank(b) - rank(a))[0] ?? '';
    const enabled = rank(clusterMinor) === rank(minor) + 1;
    if (enabled) await enable(ctx, minor);
    else if (clusterMinor !== minor)
      throw new EffectError(
        ERR.DOWNGRADE_REFUSED,
        `etcd's cluster version is ${clusterMinor || 'not known yet'}: its downgrade goes to the minor below the cluster version only, and ${minor} is not`,
      );
    while (!down(members, minor)) {
      if (ctx.signal.aborted)
        throw new EffectError(
          ERR.ENABLE_DOWNGRADE,
          `downgrade to ${minor} enabled, but not every member reports cluster version ${minor} and storage version ${minor} or older yet (etcd lowers the cluster version once it hears from every member): ${[
            ...members.map((m) => `${m.member} cluster ${m.cluster}, storage ${m.storage ?? 'none'}`),
            ...silent.map((m) => `${m} does not answer`),
          ].join('; ')}`,
        );
      await delay(500);
      ({ members, silent } = await clusterVersions(ctx));
    }
    ctx.log.info(
      { cluster: ctx.cluster.name, version: minor, enabled, members, silent },
      'etcd cluster and storage versions down to the target',
    );
    return { enabled, members, silent };
  },

  // Done once every member reports the target's cluster version and no newer storage version;
  // otherwise running it again asks (or finds the downgrade asked) and waits.
  async recover(params, ctx) {
    const { members, silent } = await clusterVersions(ctx);
    return down(members, minorOf(params.version)) ? { done: true, result: { members, silent } } : { done: false };
  },
};

/**
 * Cancels etcd's downgrade, so that the cluster version follows its members up again. etcd 3.5
 * says when there is none (counted as done); 3.6 and 3.7 answer every cancel alike.
 */
export const cancelDowngrade: IntentHandler<'cancelDowngrade', CancelDowngradeResult, EtcdContext> = {
  kind: 'cancelDowngrade',

  async run(params, ctx) {
    try {
      await onCluster(ctx, (client, o) => client.maintenance.downgrade({ action: 'Cancel' }, o));
    } catch (err) {
      if (/no inflight downgrade job/.test(err instanceof Error ? err.message : String(err)))
        return { cancelled: false };
      throw etcdError(ERR.CANCEL_DOWNGRADE, `downgrade cancel (rolling to ${params.version})`, err);
    }
    ctx.log.info({ cluster: ctx.cluster.name, version: params.version }, 'etcd downgrade cancelled');
    return { cancelled: true };
  },

  // Not known from outside on 3.6 and 3.7: asking again changes nothing.
  recover() {
    return Promise.resolve({ done: false });
  },
};
