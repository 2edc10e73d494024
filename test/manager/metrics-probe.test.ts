/**
 * The cluster probe feeds the per-cluster metrics: a real etcd answers the manager's EtcdProbes,
 * and the exposition says what it said (voters, quorum, health, leader, database size); killed,
 * the cluster shows no healthy voter.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { EtcdProbes } from '../../manager/etcd-probes.ts';
import type { Entry, ManagerContext } from '../../manager/kinds/kind.ts';
import { ManagerMetrics } from '../../manager/metrics.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { samples } from './exposition.ts';

describe('manager metrics: the cluster probe', { timeout: 60_000 }, () => {
  const local = new LocalEtcd('probed');
  beforeAll(() => local.startSeed('probed-0'), 60_000);
  afterAll(() => local.stop());

  it("shows etcd's answer to the probe, and no healthy voter once its member is gone", async () => {
    const metrics = new ManagerMetrics();
    const { namespace, name, uid } = local.ref;
    const cluster = { metadata: { namespace, name, uid }, spec: { replicas: 1 } } as unknown as EtcdCluster;
    metrics.clusters.watch({
      EtcdCluster: { list: () => [cluster] },
      EtcdSnapshot: { list: () => [] },
      EtcdSnapshotSchedule: { list: () => [] },
    });
    const fed: string[] = [];
    const entry = {
      cluster: local.ref,
      runner: {
        snapshot: { context: { members: [{}] } },
        feed: (e: { type: string }) => Promise.resolve(void fed.push(e.type)),
      },
    } as unknown as Entry<ManagerContext, 'EtcdCluster'>;
    const probes = new EtcdProbes({
      etcd: local.clients,
      log: pino({ level: 'silent' }),
      metrics,
      now: Date.now,
      requeue: () => {},
      membersOf: () => [],
      snapshotsOf: () => [],
    });
    const at = `{namespace="${namespace}",cluster="${name}"}`;
    const member = `{namespace="${namespace}",cluster="${name}",member="probed-0"}`;

    expect(await probes.probe(entry, cluster, null)).toBe('changed');
    let s = samples(metrics.render());
    expect(s.get(`etcd_operator_cluster_voters${at}`)).toBe(1);
    expect(s.get(`etcd_operator_cluster_quorum${at}`)).toBe(1);
    expect(s.get(`etcd_operator_cluster_healthy_voters${at}`)).toBe(1);
    expect(s.get(`etcd_operator_cluster_has_leader${at}`)).toBe(1);
    expect(s.get(`etcd_operator_member_is_leader${member}`)).toBe(1);
    expect(s.get(`etcd_operator_member_database_size_bytes${member}`)).toBeGreaterThan(0);
    expect(s.get(`etcd_operator_cluster_alarm{namespace="${namespace}",cluster="${name}",alarm="NOSPACE"}`)).toBe(0);
    expect(s.get('etcd_operator_etcd_probes_total{result="answered"}')).toBe(1);

    await local.kill('probed-0');
    await probes.probe(entry, cluster, null);
    s = samples(metrics.render());
    expect(fed).toEqual(['etcd.members.listed', 'etcd.unreachable']);
    expect(s.get(`etcd_operator_cluster_voters${at}`)).toBe(1);
    expect(s.get(`etcd_operator_cluster_healthy_voters${at}`)).toBe(0);
    expect(s.get(`etcd_operator_member_healthy${member}`)).toBe(0);
    expect(s.has(`etcd_operator_member_database_size_bytes${member}`)).toBe(false);
  });
});
