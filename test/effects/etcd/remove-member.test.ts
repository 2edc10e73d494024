import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeEtcdMember } from '../../../effects/etcd/index.ts';
import { joinMember, LocalEtcd, retrying } from './local-etcd.ts';

const reason = 'test';

describe('removeEtcdMember against a real etcd', { timeout: 90_000 }, () => {
  const local = new LocalEtcd('remove');
  const ids: Record<string, string> = {};
  const list = async () =>
    (await local.clients.member(local.ref, 'remove-0').cluster.memberList({ linearizable: true })).members
      .map((m) => m.name)
      .sort();
  beforeAll(async () => {
    await local.startSeed('remove-0');
    ids['remove-1'] = (await joinMember(local, 'remove-1')).memberID;
    ids['remove-2'] = (await joinMember(local, 'remove-2')).memberID;
  }, 90_000);
  afterAll(() => local.stop());

  it('removes a member found by peer URL; recover then says done, and a second run finds nothing to remove', async () => {
    const params = { peerURL: local.peerURL('remove-2'), memberID: null, reason };
    expect(await removeEtcdMember.recover(params, local.ctx())).toEqual({ done: false });
    // etcd refuses a removal until the remaining voters have been connected for a while.
    const { result } = await retrying('ERR_ETCD_UNHEALTHY', () => removeEtcdMember.run(params, local.ctx()));
    expect(result).toEqual({ removedID: ids['remove-2'] });
    expect(await list()).toEqual(['remove-0', 'remove-1']);
    expect(await removeEtcdMember.recover(params, local.ctx())).toEqual({ done: true, result: { removedID: null } });
    expect(await removeEtcdMember.run(params, local.ctx())).toEqual({ removedID: null });
  });

  it('removes a member found by ID even when the peer URL names nobody', async () => {
    const params = { peerURL: 'http://127.0.0.1:1', memberID: ids['remove-1'] ?? '', reason };
    const { result } = await retrying('ERR_ETCD_UNHEALTHY', () => removeEtcdMember.run(params, local.ctx()));
    expect(result).toEqual({ removedID: ids['remove-1'] });
    expect(await list()).toEqual(['remove-0']);
    expect(await removeEtcdMember.recover(params, local.ctx())).toEqual({
      done: true,
      result: { removedID: ids['remove-1'] },
    });
  });

  it('refuses to remove the last voter, for good, and leaves it in place', async () => {
    const params = { peerURL: local.peerURL('remove-0'), memberID: null, reason };
    await expect(removeEtcdMember.run(params, local.ctx())).rejects.toMatchObject({
      code: 'ERR_LAST_VOTER',
      retryable: false,
    });
    expect(await removeEtcdMember.recover(params, local.ctx())).toEqual({ done: false });
    expect(await list()).toEqual(['remove-0']);
  });
});
