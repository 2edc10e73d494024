import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRevision } from '../../../effects/etcd/read-revision.ts';
import { LocalEtcd } from './local-etcd.ts';

const local = new LocalEtcd('read-revision');
beforeAll(() => local.startSeed('m0'));
afterAll(() => local.stop());

describe('readRevision: the revision a rollback says it loses writes beyond', () => {
  it("reads the cluster's revision now, as the last write left it", async () => {
    const client = local.clients.member(local.ref, 'm0');
    await client.put('a').value('1');
    const put = await client.put('b').value('2').exec();
    expect(await readRevision.run({ cluster: 'read-revision' }, local.ctx())).toEqual({
      revision: Number(put.header.revision),
    });
    // A read: recover never claims it happened, so it is read again after a crash.
    expect(await readRevision.recover({ cluster: 'read-revision' }, local.ctx())).toEqual({ done: false });
  });
});
