import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moveLeader, probeCluster } from '../../../effects/etcd/index.ts';
import { joinMember, LocalEtcd } from './local-etcd.ts';

describe('moveLeader against a real etcd', { timeout: 60_000 }, () => {
  const local = new LocalEtcd('lead');
  const ids = new Map<string, string>();
  const probe = () => probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
  const nameOf = async (id: string | null | undefined): Promise<string> =>
    (await probe()).members.find((m) => m.id === id)?.name ?? '';
  beforeAll(async () => {
    await local.startSeed('lead-0');
    for (const m of ['lead-1', 'lead-2']) ids.set(m, (await joinMember(local, m)).memberID);
    ids.set('lead-0', (await probe()).members.find((m) => m.name === 'lead-0')!.id);
  }, 60_000);
  afterAll(() => local.stop());

  it('hands leadership to the voter asked for; recover then finds it done, and running again changes nothing', async () => {
    const leader = await nameOf((await probe()).leader);
    const to = ['lead-0', 'lead-1', 'lead-2'].find((m) => m !== leader)!;
    const params = { member: leader, memberID: ids.get(leader)!, toID: ids.get(to)! };
    expect(await moveLeader.recover(params, local.ctx())).toEqual({ done: false });

    const result = await moveLeader.run(params, local.ctx());
    expect(result).toEqual({ leader: ids.get(to) });
    expect(await nameOf((await probe()).leader)).toBe(to);
    expect(await moveLeader.recover(params, local.ctx())).toEqual({ done: true, result: { leader: ids.get(to) } });
    // A retry after a lost answer: the member no longer leads, so nothing is asked of etcd.
    expect(await moveLeader.run(params, local.ctx())).toEqual({ leader: ids.get(to) });
    expect(await nameOf((await probe()).leader)).toBe(to);
  });
});
