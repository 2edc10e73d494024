import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addLearner, promoteLearner } from '../../../effects/etcd/index.ts';
import { LocalEtcd, retrying } from './local-etcd.ts';

describe('promoteLearner against a real etcd', { timeout: 60_000 }, () => {
  const local = new LocalEtcd('promote');
  let memberID = '';
  beforeAll(async () => {
    await local.startSeed('promote-0');
    memberID = (await addLearner.run({ member: 'promote-1', peerURL: await local.allocate('promote-1') }, local.ctx()))
      .memberID;
  }, 60_000);
  afterAll(() => local.stop());

  it('a learner that has not caught up is not promoted: ERR_LEARNER_NOT_IN_SYNC, retryable, and recover says not done', async () => {
    const params = { member: 'promote-1', memberID };
    await expect(promoteLearner.run(params, local.ctx())).rejects.toMatchObject({
      code: 'ERR_LEARNER_NOT_IN_SYNC',
      retryable: true,
    });
    expect(await promoteLearner.recover(params, local.ctx())).toEqual({ done: false });
  });

  it('once started it is promoted on a retry; promoting a voter again is done, and recover says done', async () => {
    const params = { member: 'promote-1', memberID };
    const added = await addLearner.run({ member: 'promote-1', peerURL: local.peerURL('promote-1') }, local.ctx());
    await local.start('promote-1', added.initialCluster, 'existing');
    await retrying('ERR_LEARNER_NOT_IN_SYNC', () => promoteLearner.run(params, local.ctx()));
    expect(await promoteLearner.recover(params, local.ctx())).toEqual({ done: true, result: {} });
    expect(
      await promoteLearner.run({ member: 'promote-1', memberID: `00${memberID.toUpperCase()}` }, local.ctx()),
    ).toEqual({});
  });

  it('a member etcd does not know is not promoted, and retrying would not help', async () => {
    const params = { member: 'promote-9', memberID: 'abc123' };
    await expect(promoteLearner.run(params, local.ctx())).rejects.toMatchObject({
      code: 'ERR_MEMBER_NOT_FOUND',
      retryable: false,
    });
    expect(await promoteLearner.recover(params, local.ctx())).toEqual({ done: false });
    await expect(promoteLearner.run({ member: 'promote-9', memberID: 'not-hex' }, local.ctx())).rejects.toMatchObject({
      code: 'ERR_INVALID_MEMBER_ID',
      retryable: false,
    });
  });
});
