import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCluster } from '../../../effects/etcd/index.ts';
import { until } from '../../../localcluster/until.ts';
import { joinMember, LocalEtcd, type Joined } from './local-etcd.ts';

describe.each(['3.7.3', '3.6.16', '3.5.35'])(
  'etcd %s: the handlers grow a cluster',
  { timeout: 120_000 },
  (version) => {
    let local: LocalEtcd;
    const name = `grow-${version.replaceAll('.', '')}`;
    beforeAll(async () => {
      local = new LocalEtcd(name, version);
      await local.startSeed(`${name}-0`);
    }, 60_000);
    afterAll(async () => local?.stop());

    it('to three voters, one learner at a time, each promoted once in sync', async () => {
      const joins: Joined[] = [];
      for (const member of [`${name}-1`, `${name}-2`]) {
        const before = await probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
        expect(before.members.filter((m) => m.learner)).toEqual([]);
        joins.push(await joinMember(local, member));
      }
      // The member list answered by a member that has not applied the last promotion yet still
      // shows a learner: read until every member lists as a voter (within 10 s).
      const after = await until(
        'every member listed as a voter',
        async () => {
          const probed = await probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
          return probed.members.every((m) => !m.learner) ? probed : undefined;
        },
        10_000,
      );
      expect(after.members.map((m) => [m.name, m.learner]).sort()).toEqual([
        [`${name}-0`, false],
        [`${name}-1`, false],
        [`${name}-2`, false],
      ]);
      expect([...after.healthy].sort()).toEqual(after.members.map((m) => m.id).sort());
      expect(joins.map((j) => j.memberID).sort()).toEqual(
        after.members
          .filter((m) => m.name !== `${name}-0`)
          .map((m) => m.id)
          .sort(),
      );
      for (const [i, j] of joins.entries()) {
        console.log(
          `etcd ${version}: member ${i + 1} joined in ${j.ms.total} ms (add ${j.ms.add}, start ${j.ms.start}, promote ${j.ms.promote}, ${j.addTries} add tries, ${j.promoteTries} promote tries)`,
        );
      }
    });
  },
);
