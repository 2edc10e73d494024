/**
 * The member's etcd command line against the real etcd of each version the API allows: every
 * flag the operator passes is one that version's `etcd --help` lists, so no member refuses to
 * start on an unknown flag (etcd 3.7 removed every --experimental-* flag; 3.5 has no
 * --max-learners).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { etcdCommand } from '../../../effects/kubernetes/build-etcd-args.ts';
import { etcdBinary } from '../etcd/local-etcd.ts';
import { cluster, member } from './fixtures.ts';

const ca = { name: 'ca', kind: 'Issuer' as const, group: 'cert-manager.io' };

describe.each(['3.5.35', '3.6.16', '3.7.3'])('etcd %s: the member command line', (version) => {
  it('passes only flags this etcd knows, with TLS and every option set', () => {
    const c = cluster({
      version,
      tls: { client: { issuerRef: ca }, peer: { issuerRef: ca } },
      options: {
        quotaBackendBytes: '1Gi',
        autoCompactionMode: 'periodic',
        autoCompactionRetention: '1h',
        snapshotCount: 10000,
        heartbeatInterval: 100,
        electionTimeout: 1000,
        ...(version.startsWith('3.5.') ? {} : { maxLearners: 2 }),
      },
    });
    const help = execFileSync(etcdBinary(version), ['--help'], { encoding: 'utf8' });
    const known = new Set([...help.matchAll(/^\s+(--[a-z0-9-]+)/gm)].map((m) => m[1]));
    const flags = etcdCommand(member(c), c)
      .slice(1)
      .map((a) => a.split('=')[0]);
    expect(known.has('--initial-cluster-state')).toBe(true);
    expect(flags.length).toBeGreaterThan(15);
    expect(flags.filter((f) => !known.has(f))).toEqual([]);
  });
});
