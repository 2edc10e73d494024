/**
 * enableAuth: turns etcd authentication on for a cluster with spec.auth.enabled. etcd enables
 * auth only once the user root exists with the role root; the operator's root has no password
 * (etcd 3.5+ `no_password`): it is root by its client certificate's common name, which the
 * operator checks before it calls etcd with it (the operator's Secret check), so turning auth
 * on cannot lock it out. Each call is asked only when etcd does not show it done already, so a
 * run repeated after a crash, or on a cluster whose auth is on, changes nothing.
 */
import { ROOT_USER as ROOT } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler } from '../types.ts';
import { etcdError, onCluster, type CallOptions } from './_call.ts';
import type { EtcdContext } from './clients.ts';
import type { Etcd3 } from 'etcd3';

/** What enableAuth did: the calls it made ([] when auth was on already). */
export type EnableAuthResult = { readonly enabled: true; readonly did: readonly string[] };

const CODE = ERR.ENABLE_AUTH;

/** etcd's answers that mean "that is there already" (an answer lost in transit, asked again). */
const ALREADY = /user name already exists|role name already exists|already has role/;

async function ask<T>(ctx: EtcdContext, op: string, fn: (c: Etcd3, o: CallOptions) => Promise<T>): Promise<T> {
  try {
    return await onCluster(ctx, fn);
  } catch (err) {
    throw etcdError(CODE, op, err);
  }
}

/** Whether etcd says auth is on. */
export async function authStatus(ctx: EtcdContext): Promise<boolean> {
  return (await ask(ctx, 'auth status', (c, o) => c.auth.authStatus(o))).enabled;
}

/** Adds root (no password) with the role root, and enables auth, each unless etcd shows it done. */
export const enableAuth: IntentHandler<'enableAuth', EnableAuthResult, EtcdContext> = {
  kind: 'enableAuth',

  async run(_params, ctx) {
    if (await authStatus(ctx)) return { enabled: true, did: [] };
    const did: string[] = [];
    const step = async (op: string, fn: (c: Etcd3, o: CallOptions) => Promise<unknown>): Promise<void> => {
      try {
        await ask(ctx, op, fn);
      } catch (err) {
        if (!ALREADY.test(err instanceof Error ? err.message : String(err))) throw err;
      }
      did.push(op);
    };
    const { users } = await ask(ctx, 'user list', (c, o) => c.auth.userList(o));
    if (!users.includes(ROOT))
      await step('user add root (no password)', (c, o) =>
        c.auth.userAdd({ name: ROOT, options: { no_password: true } }, o),
      );
    const { roles } = await ask(ctx, 'role list', (c, o) => c.auth.roleList(o));
    // etcd grants root without the role existing; etcdctl makes it, so `etcdctl role get root` works.
    if (!roles.includes(ROOT)) await step('role add root', (c, o) => c.auth.roleAdd({ name: ROOT }, o));
    const user = await ask(ctx, 'user get root', (c, o) => c.auth.userGet({ name: ROOT }, o));
    if (!user.roles.includes(ROOT))
      await step('grant the role root to root', (c, o) => c.auth.userGrantRole({ user: ROOT, role: ROOT }, o));
    await step('auth enable', (c, o) => c.auth.authEnable(o));
    ctx.log.info({ did }, 'etcd authentication enabled');
    return { enabled: true, did };
  },

  async recover(_params, ctx) {
    return (await authStatus(ctx)) ? { done: true, result: { enabled: true, did: [] } } : { done: false };
  },
};
