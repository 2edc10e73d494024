import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { compact, defragment, disarmAlarm, probeCluster } from '../../../effects/etcd/index.ts';
import { joinMember, LocalEtcd } from './local-etcd.ts';

const MiB = 2 ** 20;
const QUOTA = 16 * MiB;
/** What the cluster machine asks disarmAlarm for: every database at most 80% of the quota. */
const LIMIT = Math.floor(QUOTA * 0.8);
const VALUE = 'x'.repeat(100_000);
const noSpace = /database space exceeded/;

/** Puts `value` under keys key(0), key(1)... until etcd refuses with NOSPACE; returns how many went in. */
async function fill(client: Etcd3, key: (i: number) => string): Promise<number> {
  for (let i = 0; ; i++) {
    try {
      await client.put(key(i)).value(VALUE);
    } catch (err) {
      if (noSpace.test((err as Error).message)) return i;
      throw err;
    }
  }
}

/** A cluster of `size` members with a 16 MiB quota, on etcd `version`. */
function cluster(name: string, size: number, version?: string) {
  const local = new LocalEtcd(name, version, { flags: [`--quota-backend-bytes=${QUOTA}`] });
  const ids = new Map<string, string>();
  const probe = () => probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
  const names = Array.from({ length: size }, (_, i) => `${name}-${i}`);
  const start = async (): Promise<void> => {
    await local.startSeed(names[0]!);
    for (const m of names.slice(1)) await joinMember(local, m);
    for (const m of (await probe()).members) ids.set(m.name, m.id);
  };
  const client = (): Etcd3 => local.clients.member(local.ref, names[0]!);
  /** compact, then defragment every member one at a time, then disarm: what the operator does on NOSPACE. */
  const recover = async () => {
    const compacted = await compact.run({ reason: 'NOSPACE' }, local.ctx());
    const freed = [];
    for (const m of names) freed.push(await defragment.run({ member: m, memberID: ids.get(m)! }, local.ctx(60_000)));
    return { compacted, freed };
  };
  return { local, ids, probe, names, start, client, recover };
}

/** Bytes the member's database file holds beyond what it uses. */
const fragmented = (p: { sizes?: Record<string, { dbSize: number; dbSizeInUse: number }> }, id: string): number => {
  const z = p.sizes?.[id];
  return z ? z.dbSize - z.dbSizeInUse : 0;
};

describe('maintenance handlers against a real etcd 3.6.16', { timeout: 120_000 }, () => {
  const c = cluster('maint', 3);
  beforeAll(() => c.start(), 60_000);
  afterAll(() => c.local.stop());

  it('defragment gives back what compaction freed on one member; running it again frees next to nothing', async () => {
    const client = c.client();
    // Churn: overwrite ten keys 60 times (6 MB of history), then compact it away.
    for (let i = 0; i < 60; i++) await client.put(`churn/${i % 10}`).value(VALUE);
    const compacted = await compact.run({ reason: 'NOSPACE' }, c.local.ctx());
    // The member that compacted reports the pages it freed once compact returns (the others at
    // their next commits): nothing is written after it, so polling would not change what it says.
    expect(compacted.dbSize - compacted.dbSizeInUse, 'fragmented bytes compact reported').toBeGreaterThan(4 * MiB);
    const member = compacted.member;
    const id = c.ids.get(member)!;
    const before = await c.probe();
    expect(fragmented(before, id), 'fragmented bytes the probe reads').toBeGreaterThan(4 * MiB);
    const size = before.sizes?.[id];
    expect(await defragment.recover({ member, memberID: id }, c.local.ctx())).toEqual({ done: false });

    const result = await defragment.run({ member, memberID: id }, c.local.ctx());
    expect(result.member).toBe(member);
    expect(result.before).toBe(size!.dbSize);
    expect(result.freed).toBe(result.before - result.after);
    expect(result.freed).toBeGreaterThan(4 * MiB);
    const after = await c.probe();
    expect(after.sizes?.[id]?.dbSize).toBe(result.after);
    // Only that member: the others keep their free pages until their turn.
    const other = c.ids.get(c.names.find((m) => m !== member)!)!;
    expect(after.sizes?.[other]?.dbSize).toBe(before.sizes?.[other]?.dbSize);
    const again = await defragment.run({ member, memberID: id }, c.local.ctx());
    expect(again.freed).toBeLessThan(MiB);
  });

  it('defragment refuses a member ID that is not the member answering at that name', async () => {
    const wrong = c.ids.get(c.names[2]!)!;
    await expect(defragment.run({ member: c.names[1]!, memberID: wrong }, c.local.ctx())).rejects.toMatchObject({
      code: 'ERR_DEFRAGMENT',
      retryable: true,
    });
  });

  it('NOSPACE: the probe shows the alarm; compact, defragment each member and disarm make writes work again', async () => {
    const client = c.client();
    expect((await c.probe()).alarms).toBeUndefined();
    // History fills the quota: ten keys overwritten until etcd refuses.
    const written = await fill(client, (i) => `fill/${i % 10}`);
    expect(written).toBeGreaterThan(10);
    const raised = await c.probe();
    // Each member that finds its database over the quota as it applies a write raises its own.
    const alarms = raised.alarms ?? [];
    expect(alarms.length).toBeGreaterThanOrEqual(1);
    for (const a of alarms) {
      expect(a.alarm).toBe('NOSPACE');
      expect([...c.ids.values()]).toContain(a.memberID);
    }
    await expect(client.put('refused').value('v')).rejects.toThrow(noSpace);
    // Nothing freed yet: disarming would only raise it again, so it is refused.
    await expect(disarmAlarm.run({ quotaBytes: QUOTA, limitBytes: LIMIT }, c.local.ctx())).rejects.toMatchObject({
      code: 'ERR_SPACE_NOT_FREED',
    });
    expect(await disarmAlarm.recover({ quotaBytes: QUOTA, limitBytes: LIMIT }, c.local.ctx())).toEqual({ done: false });

    const { compacted, freed } = await c.recover();
    expect(compacted.revision).toBeGreaterThan(written);
    expect(compacted.dbSize).toBeGreaterThan(QUOTA * 0.9);
    // The in-use size compact reports is what the operator decides on: all history, so all freed.
    // It trailed the compaction until a backend commit that nothing makes under the alarm (16.3 MB
    // seen here in a full run, and an e2e cluster left in NOSPACE "unable to free enough").
    expect(compacted.dbSizeInUse).toBeLessThan(2 * MiB);
    expect(freed.map((f) => f.member)).toEqual(c.names);
    for (const f of freed) expect(f.after, `${f.member} after`).toBeLessThan(2 * MiB);
    // Compacting again: the history already starts at this revision, and nothing fails.
    expect((await compact.run({ reason: 'NOSPACE' }, c.local.ctx())).revision).toBe(compacted.revision);

    const { disarmed } = await disarmAlarm.run({ quotaBytes: QUOTA, limitBytes: LIMIT }, c.local.ctx());
    expect(disarmed).toBeGreaterThanOrEqual(alarms.length);
    expect((await c.probe()).alarms).toBeUndefined();
    await client.put('after').value('works');
    expect(await client.get('after').string()).toBe('works');
    expect(await disarmAlarm.recover({ quotaBytes: QUOTA, limitBytes: LIMIT }, c.local.ctx())).toEqual({
      done: true,
      result: { disarmed: 0 },
    });
  });

  it('NOSPACE with live data filling the quota: compaction frees nothing and the alarm stays', async () => {
    const client = c.client();
    const written = await fill(client, (i) => `live/${i}`);
    const { compacted, freed } = await c.recover();
    // Every key is live: the space in use stays over the limit, as compact reports it (what the
    // operator decides by) and whatever defragmenting does.
    expect(compacted.revision).toBeGreaterThan(written);
    expect(compacted.dbSizeInUse).toBeGreaterThan(LIMIT);
    for (const f of freed) expect(f.after).toBeGreaterThan(LIMIT);
    await expect(disarmAlarm.run({ quotaBytes: QUOTA, limitBytes: LIMIT }, c.local.ctx())).rejects.toMatchObject({
      code: 'ERR_SPACE_NOT_FREED',
      message: expect.stringMatching(
        /databases still over 12\.8 MiB of the 16\.0 MiB quota: maint-\d \d+\.\d MiB/,
      ) as string,
    });
    expect((await c.probe()).alarms?.[0]).toMatchObject({ alarm: 'NOSPACE' });
    // What the user is told to do works: deletes are allowed under the alarm, then recovery frees it.
    await client.delete().prefix('live/');
    await c.recover();
    expect((await disarmAlarm.run({ quotaBytes: QUOTA, limitBytes: LIMIT }, c.local.ctx())).disarmed).toBeGreaterThan(
      0,
    );
    await client.put('after-delete').value('works');
    expect(written).toBeGreaterThan(50);
  });
});

describe('maintenance handlers against a real etcd 3.5.35', { timeout: 60_000 }, () => {
  const c = cluster('maint35', 1, '3.5.35');
  beforeAll(() => c.start(), 30_000);
  afterAll(() => c.local.stop());

  it('the same NOSPACE recovery: etcd 3.5 answers the same calls the same way', async () => {
    const client = c.client();
    await fill(client, (i) => `fill/${i % 10}`);
    expect((await c.probe()).alarms).toEqual([{ memberID: c.ids.get(c.names[0]!), alarm: 'NOSPACE' }]);
    const { compacted, freed } = await c.recover();
    // Measured after defragmenting, as on 3.6 above: compact's in-use report can trail the
    // member's next backend commit under load (16,998,400 bytes seen in a full unit run).
    expect(compacted.dbSize).toBeGreaterThan(QUOTA * 0.9);
    expect(freed[0]!.after).toBeLessThan(2 * MiB);
    expect(freed[0]!.freed).toBeGreaterThan(8 * MiB);
    expect(await disarmAlarm.run({ quotaBytes: QUOTA, limitBytes: LIMIT }, c.local.ctx())).toEqual({ disarmed: 1 });
    await client.put('after').value('works');
    expect((await c.probe()).alarms).toBeUndefined();
  });
});
