/** What spec.tls puts in member Pods and snapshot Jobs: https URLs, etcd's TLS flags, the Secrets as volumes. */
import { describe, expect, it } from 'vitest';
import type { EtcdCluster, EtcdSnapshot } from '../../../api/v1alpha1/index.ts';
import { etcdCommand } from '../../../effects/kubernetes/build-etcd-args.ts';
import { buildPod, readinessProbe } from '../../../effects/kubernetes/build-pod.ts';
import { buildSnapshotJob } from '../../../effects/kubernetes/build-snapshot-job.ts';
import { redactReport } from '../../../journal/redact.ts';
import { peerURL } from '../../../machines/policy.ts';
import { cluster, member } from './fixtures.ts';

const flag = (cmd: readonly string[], name: string): string | undefined =>
  cmd
    .find((a) => a === `--${name}` || a.startsWith(`--${name}=`))
    ?.replace(`--${name}`, '')
    .replace(/^=/, '');

const client = { secretRef: { name: 'demo-client-tls' }, operatorSecretRef: { name: 'demo-operator-tls' } };
const peer = { secretRef: { name: 'demo-peer-tls' } };
const items = [
  { key: 'tls.crt', path: 'tls.crt' },
  { key: 'tls.key', path: 'tls.key' },
  { key: 'ca.crt', path: 'ca.crt' },
];

describe('member Pod with TLS', () => {
  it('client and peer TLS: https URLs, both certificates required, metrics and probes on plain http', () => {
    const c = cluster({ tls: { client, peer } });
    const cmd = etcdCommand(member(c), c);
    expect(flag(cmd, 'listen-client-urls')).toBe('https://$(POD_IP):2379,https://127.0.0.1:2379');
    expect(flag(cmd, 'advertise-client-urls')).toBe('https://demo-0.demo.ns.svc:2379');
    expect(flag(cmd, 'listen-peer-urls')).toBe('https://$(POD_IP):2380');
    expect(flag(cmd, 'initial-advertise-peer-urls')).toBe('https://demo-0.demo.ns.svc:2380');
    expect(flag(cmd, 'initial-cluster')).toBe('demo-0=https://demo-0.demo.ns.svc:2380');
    expect(flag(cmd, 'listen-metrics-urls')).toBe('http://$(POD_IP):2381');
    expect(cmd.filter((a) => /cert|key-file|trusted-ca/.test(a))).toEqual([
      '--cert-file=/etc/etcd/tls/client/tls.crt',
      '--key-file=/etc/etcd/tls/client/tls.key',
      '--trusted-ca-file=/etc/etcd/tls/client/ca.crt',
      '--client-cert-auth',
      '--peer-cert-file=/etc/etcd/tls/peer/tls.crt',
      '--peer-key-file=/etc/etcd/tls/peer/tls.key',
      '--peer-trusted-ca-file=/etc/etcd/tls/peer/ca.crt',
      '--peer-client-cert-auth',
    ]);
    const etcd = buildPod(member(c), c).spec?.containers[0];
    expect(etcd?.readinessProbe).toEqual(readinessProbe);
    expect(etcd?.readinessProbe?.httpGet).toMatchObject({ port: 2381, scheme: 'HTTP' });
  });

  it('mounts exactly tls.crt, tls.key and ca.crt of each Secret, read-only, so a missing key holds the Pod', () => {
    const c = cluster({ tls: { client, peer } });
    const pod = buildPod(member(c), c);
    expect(pod.spec?.volumes?.filter((v) => v.secret)).toEqual([
      { name: 'tls-client', secret: { secretName: 'demo-client-tls', items } },
      { name: 'tls-peer', secret: { secretName: 'demo-peer-tls', items } },
    ]);
    expect(pod.spec?.containers[0]?.volumeMounts).toEqual([
      { name: 'data', mountPath: '/var/lib/etcd' },
      { name: 'tls-client', mountPath: '/etc/etcd/tls/client', readOnly: true },
      { name: 'tls-peer', mountPath: '/etc/etcd/tls/peer', readOnly: true },
    ]);
    // The operator's own certificate is never mounted into a member.
    expect(JSON.stringify(pod)).not.toContain('demo-operator-tls');
    // Names only: nothing in the Pod is secret.
    expect(redactReport(pod).hidden).toEqual([]);
  });

  it('etcdctl in the container calls its member by name with the member certificate', () => {
    const c = cluster({ tls: { client } });
    const env = buildPod(member(c), c).spec?.containers[0]?.env;
    expect(env?.slice(1)).toEqual([
      { name: 'ETCDCTL_ENDPOINTS', value: 'https://demo-0.demo.ns.svc:2379' },
      { name: 'ETCDCTL_CACERT', value: '/etc/etcd/tls/client/ca.crt' },
      { name: 'ETCDCTL_CERT', value: '/etc/etcd/tls/client/tls.crt' },
      { name: 'ETCDCTL_KEY', value: '/etc/etcd/tls/client/tls.key' },
    ]);
  });

  it('peer TLS alone: https peer URLs, plain client URLs, the peer Secret only', () => {
    const c = cluster({ tls: { peer } });
    const cmd = etcdCommand(member(c), c);
    expect(flag(cmd, 'listen-client-urls')).toBe('http://$(POD_IP):2379,http://127.0.0.1:2379');
    expect(flag(cmd, 'initial-advertise-peer-urls')).toBe(
      peerURL({ namespace: 'ns', name: 'demo', peerTLS: true }, 'demo-0'),
    );
    expect(flag(cmd, 'client-cert-auth')).toBeUndefined();
    expect(flag(cmd, 'peer-client-cert-auth')).toBe('');
    expect(buildPod(member(c), c).spec?.volumes?.map((v) => v.name)).toEqual(['data', 'tls-peer']);
  });

  it('a podTemplate volume by the name of a TLS volume does not replace it', () => {
    const c = cluster({
      tls: { peer },
      podTemplate: {
        spec: {
          volumes: [
            { name: 'tls-peer', emptyDir: {} },
            { name: 'extra', emptyDir: {} },
          ],
        },
      },
    });
    const volumes = buildPod(member(c), c).spec?.volumes ?? [];
    expect(volumes.map((v) => v.name)).toEqual(['data', 'tls-peer', 'extra']);
    expect(volumes[1]?.secret?.secretName).toBe('demo-peer-tls');
  });

  it('a restored seed restores with the https peer URL it will advertise', () => {
    const c = cluster({ tls: { peer }, bootstrap: { restore: { source: { pvc: { claimName: 'b', path: 'x.db' } } } } });
    const m = { ...member(c), spec: { ...member(c).spec, restore: { pvc: { claimName: 'b', path: 'x.db' } } } };
    const restore = buildPod(m, c).spec?.initContainers?.find((i) => i.name !== 'check-data' && i.command);
    expect(restore?.args).toContain('--initial-advertise-peer-urls=https://demo-0.demo.ns.svc:2380');
  });
});

describe('member Pod and Job with certificates cert-manager issues', () => {
  const ca = { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' };
  const c = cluster({ tls: { client: { issuerRef: ca }, peer: { issuerRef: ca } } });

  it("mount the Secrets of the operator's Certificates, <cluster>-<plane>-tls, as they mount brought ones", () => {
    const pod = buildPod(member(c), c, 'img');
    expect(pod.spec?.volumes?.filter((v) => v.secret)).toEqual([
      { name: 'tls-client', secret: { secretName: 'demo-client-tls', items } },
      { name: 'tls-peer', secret: { secretName: 'demo-peer-tls', items } },
    ]);
    const job = buildSnapshotJob(
      {
        metadata: { name: 's', namespace: 'ns', uid: 'u' },
        spec: { clusterRef: { name: 'demo' }, destination: { pvc: { claimName: 'backups' } } },
      } as EtcdSnapshot,
      'demo-1',
      'img',
      c,
    );
    expect(job.spec?.template.spec?.volumes).toContainEqual({
      name: 'tls-operator',
      secret: { secretName: 'demo-operator-tls', items },
    });
  });
});

describe('snapshot Job with client TLS', () => {
  const snapshot = {
    metadata: { name: 'nightly', namespace: 'ns', uid: '0123456789abcdef' },
    spec: { clusterRef: { name: 'demo' }, destination: { pvc: { claimName: 'backups' } } },
  } as EtcdSnapshot;

  it("calls the member by name over https with the operator's certificate, mounted from its Secret", () => {
    const c: EtcdCluster = cluster({ tls: { client, peer } });
    const pod = buildSnapshotJob(snapshot, 'demo-1', 'img', c).spec?.template.spec;
    const agent = pod?.containers[0];
    expect(agent?.args?.slice(0, 6)).toEqual([
      'agent',
      'snapshot',
      '--endpoint=https://demo-1.demo.ns.svc:2379',
      '--cacert=/etc/etcd-operator/etcd-client/ca.crt',
      '--cert=/etc/etcd-operator/etcd-client/tls.crt',
      '--key=/etc/etcd-operator/etcd-client/tls.key',
    ]);
    expect(pod?.volumes).toContainEqual({ name: 'tls-operator', secret: { secretName: 'demo-operator-tls', items } });
    expect(agent?.volumeMounts).toContainEqual({
      name: 'tls-operator',
      mountPath: '/etc/etcd-operator/etcd-client',
      readOnly: true,
    });
    // Never the members' own keys.
    expect(JSON.stringify(pod)).not.toMatch(/demo-(client|peer)-tls/);
  });

  it('peer TLS alone changes nothing for the Job', () => {
    const plain = buildSnapshotJob(snapshot, 'demo-1', 'img', cluster());
    expect(buildSnapshotJob(snapshot, 'demo-1', 'img', cluster({ tls: { peer } }))).toEqual(plain);
    expect(plain.spec?.template.spec?.containers[0]?.args?.[2]).toBe('--endpoint=http://demo-1.demo.ns.svc:2379');
  });
});
