import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addLearner } from '../../../effects/etcd/index.ts';
import { EffectError } from '../../../effects/types.ts';
import { LocalEtcd } from './local-etcd.ts';

const members = async (local: LocalEtcd) =>
  (await local.clients.member(local.ref, 'add-0').cluster.memberList({ linearizable: true })).members;

describe('addLearner against a real etcd', { timeout: 60_000 }, () => {
  const local = new LocalEtcd('add');
  beforeAll(() => local.startSeed('add-0'), 60_000);
  afterAll(() => local.stop());

  it('a retry after a lost answer returns the same learner and adds nothing; recover sees it only once added', async () => {
    const params = { member: 'add-1', peerURL: await local.allocate('add-1') };
    expect(await addLearner.recover(params, local.ctx())).toEqual({ done: false });
    const first = await addLearner.run(params, local.ctx());
    const again = await addLearner.run(params, local.ctx());
    expect(again).toEqual(first);
    expect(first.memberID).toMatch(/^[1-9a-f][0-9a-f]*$/);
    expect(first.initialCluster.split(',').sort()).toEqual([
      `add-0=${local.peerURL('add-0')}`,
      `add-1=${params.peerURL}`,
    ]);
    expect(await addLearner.recover(params, local.ctx())).toEqual({ done: true, result: first });
    const list = await members(local);
    expect(list.map((m) => [m.name, m.isLearner]).sort()).toEqual([
      ['', true],
      ['add-0', false],
    ]);
  });

  it('refuses a second member while the first learner has not started, and adds nothing', async () => {
    const params = { member: 'add-2', peerURL: await local.allocate('add-2') };
    const refused = await addLearner.run(params, local.ctx()).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(EffectError);
    expect(refused).toMatchObject({ code: 'ERR_UNSTARTED_MEMBER', retryable: true });
    expect(await members(local)).toHaveLength(2);
  });

  it('refuses a second learner while the first is catching up (etcd allows one)', async () => {
    const first = await addLearner.run({ member: 'add-1', peerURL: local.peerURL('add-1') }, local.ctx());
    await local.start('add-1', first.initialCluster, 'existing');
    const refused = await addLearner
      .run({ member: 'add-2', peerURL: local.peerURL('add-2') }, local.ctx())
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'ERR_TOO_MANY_LEARNERS', retryable: true });
    expect(await addLearner.recover({ member: 'add-2', peerURL: local.peerURL('add-2') }, local.ctx())).toEqual({
      done: false,
    });
    expect((await members(local)).map((m) => [m.name, m.isLearner]).sort()).toEqual([
      ['add-0', false],
      ['add-1', true],
    ]);
  });
});
