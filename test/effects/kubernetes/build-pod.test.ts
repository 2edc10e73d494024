/** The member Pod and its etcd command line: what a member runs, how it is found, what users may override. */
import { describe, expect, it } from 'vitest';
import { etcdCommand, optionFlags, quantityBytes } from '../../../effects/kubernetes/build-etcd-args.ts';
import { buildEtcdMember } from '../../../effects/kubernetes/build-member.ts';
import { buildPod } from '../../../effects/kubernetes/build-pod.ts';
import { peerURL } from '../../../machines/policy.ts';
import { cluster, member } from './fixtures.ts';
import { DATA_GUARD_ANNOTATION } from '../../../effects/kubernetes/meta.ts';
import type { EtcdMember } from '../../../api/v1alpha1/index.ts';

const flag = (cmd: readonly string[], name: string): string | undefined =>
  cmd.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

/** A member as made before data guards: no guard annotation. */
function unguarded(m: EtcdMember): EtcdMember {
  const { [DATA_GUARD_ANNOTATION]: _, ...annotations } = m.metadata.annotations ?? {};
  return { ...m, metadata: { ...m.metadata, annotations } };
}

describe('member Pod', () => {
  it('is named after the member under the headless Service, owned by the EtcdMember', () => {
    const c = cluster();
    const pod = buildPod(member(c), c);
    expect(pod.metadata?.name).toBe('demo-0');
    expect(pod.spec?.hostname).toBe('demo-0');
    expect(pod.spec?.subdomain).toBe('demo');
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'EtcdMember',
      name: 'demo-0',
      uid: 'member-uid-0',
      controller: true,
    });
    expect(pod.metadata?.labels).toMatchObject({
      'etcd-operator.dev/cluster': 'demo',
      'etcd-operator.dev/member': 'demo-0',
    });
  });

  it("carries the member's CA digest as an annotation (none without one), beside the user's annotations", () => {
    const c = cluster();
    c.spec.additionalMetadata = { annotations: { team: 'db' } };
    const m = member(c);
    expect(buildPod(m, c).metadata?.annotations).toEqual({ team: 'db' });
    m.spec.trust = '0123456789abcdef';
    expect(buildPod(m, c).metadata?.annotations).toEqual({ team: 'db', 'etcd-operator.dev/trust': '0123456789abcdef' });
  });

  it("a recovery's survivor starts with --force-new-cluster while its spec says so, its Pod annotated with the request; plainly after", () => {
    const c = cluster();
    const m = member(c);
    expect(etcdCommand(m, c)).not.toContain('--force-new-cluster');
    m.spec.forceNewCluster = 'r1';
    const pod = buildPod(m, c);
    expect(pod.spec?.containers[0]?.command).toContain('--force-new-cluster');
    expect(pod.metadata?.annotations).toEqual({ 'etcd-operator.dev/force-new-cluster': 'r1' });
  });

  it('runs the etcd image of the member version from /usr/local/bin/etcd, serving clients on its Pod IP and loopback (port-forward)', () => {
    const c = cluster({ version: '3.5.35' });
    const etcd = buildPod(member(c), c).spec?.containers[0];
    expect(etcd?.image).toBe('quay.io/coreos/etcd:v3.5.35');
    expect(etcd?.command?.[0]).toBe('/usr/local/bin/etcd');
    expect(etcd?.env?.[0]).toEqual({ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } });
    const cmd = etcd?.command ?? [];
    expect(flag(cmd, 'listen-client-urls')).toBe('http://$(POD_IP):2379,http://127.0.0.1:2379');
    expect(flag(cmd, 'listen-peer-urls')).toBe('http://$(POD_IP):2380');
    expect(flag(cmd, 'listen-metrics-urls')).toBe('http://$(POD_IP):2381');
  });

  it('advertises its DNS name, with the peer URL the machines expect', () => {
    const c = cluster();
    const cmd = etcdCommand(member(c), c);
    expect(flag(cmd, 'name')).toBe('demo-0');
    expect(flag(cmd, 'advertise-client-urls')).toBe('http://demo-0.demo.ns.svc:2379');
    expect(flag(cmd, 'initial-advertise-peer-urls')).toBe(peerURL({ namespace: 'ns', name: 'demo' }, 'demo-0'));
    expect(flag(cmd, 'initial-cluster-token')).toBe('cluster-uid');
    expect(flag(cmd, 'data-dir')).toBe('/var/lib/etcd/data');
  });

  it.each([
    ['the seed starts a new cluster', 0, true, 'new'],
    ['a joining member starts into the existing one', 1, false, 'existing'],
  ])('%s', (_, ordinal, bootstrap, state) => {
    const c = cluster();
    const m = member(c, ordinal, bootstrap);
    const cmd = etcdCommand(m, c);
    expect(flag(cmd, 'initial-cluster-state')).toBe(state);
    expect(flag(cmd, 'initial-cluster')).toBe(m.spec.initialCluster);
  });

  it('the members of a new cluster started whole start it together: state new, one initial cluster, the cluster UID as token', () => {
    const c = cluster();
    const ref = { namespace: 'ns', name: 'demo' };
    const initialCluster = [0, 1, 2].map((n) => `demo-${n}=${peerURL(ref, `demo-${n}`)}`).join(',');
    const cmds = [0, 1, 2].map((n) => {
      const built = buildEtcdMember(c, {
        member: `demo-${n}`,
        ordinal: n,
        bootstrap: true,
        initialCluster,
        version: '3.6.16',
      });
      return etcdCommand(built, c);
    });
    for (const cmd of cmds) {
      expect(flag(cmd, 'initial-cluster-state')).toBe('new');
      expect(flag(cmd, 'initial-cluster')).toBe(initialCluster);
      // Fixed by the object, not by the run: a member created again after a crash gets the same IDs.
      expect(flag(cmd, 'initial-cluster-token')).toBe('cluster-uid');
    }
  });

  it('keeps data on the member PVC, mounted above the data dir', () => {
    const c = cluster();
    const spec = buildPod(member(c), c).spec;
    expect(spec?.volumes).toEqual([{ name: 'data', persistentVolumeClaim: { claimName: 'data-demo-0' } }]);
    expect(spec?.containers[0]?.volumeMounts).toEqual([{ name: 'data', mountPath: '/var/lib/etcd' }]);
  });

  it('a member in memory keeps data in a size-limited Memory emptyDir', () => {
    const c = cluster({ storage: { size: '256Mi', medium: 'Memory' } });
    expect(buildPod(member(c), c).spec?.volumes).toEqual([
      { name: 'data', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } },
    ]);
  });

  it('is ready through /readyz on the metrics port with non_learner excluded, so a learner is ready too', () => {
    const c = cluster();
    const probe = buildPod(member(c), c).spec?.containers[0]?.readinessProbe;
    expect(probe?.httpGet).toEqual({ path: '/readyz?exclude=non_learner', port: 2381, scheme: 'HTTP' });
  });

  it('merges resources, affinity, spread, metadata and podTemplate overrides, keeping etcd, volumes and names ours', () => {
    const c = cluster({
      resources: { requests: { cpu: '100m' } },
      affinity: { podAntiAffinity: {} },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway' }],
      additionalMetadata: { labels: { team: 'a' }, annotations: { a: '1' } },
      podTemplate: {
        metadata: { labels: { tier: 'db', 'etcd-operator.dev/member': 'evil' }, annotations: { b: '2' } },
        spec: {
          priorityClassName: 'high',
          terminationGracePeriodSeconds: 60,
          hostname: 'evil',
          tolerations: [{ key: 'k', operator: 'Exists' }],
          containers: [
            { name: 'etcd', image: 'evil' },
            { name: 'sidecar', image: 'busybox' },
          ],
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'extra', emptyDir: {} },
          ],
        },
      },
    });
    const pod = buildPod(member(c), c);
    expect(pod.metadata?.labels).toMatchObject({ team: 'a', tier: 'db', 'etcd-operator.dev/member': 'demo-0' });
    expect(pod.metadata?.annotations).toEqual({ a: '1', b: '2' });
    expect(pod.spec).toMatchObject({
      priorityClassName: 'high',
      terminationGracePeriodSeconds: 60,
      hostname: 'demo-0',
      tolerations: [{ key: 'k', operator: 'Exists' }],
    });
    expect(pod.spec?.affinity).toEqual({ podAntiAffinity: {} });
    expect(pod.spec?.topologySpreadConstraints).toHaveLength(1);
    expect(pod.spec?.containers.map((x) => [x.name, x.image])).toEqual([
      ['etcd', 'quay.io/coreos/etcd:v3.6.16'],
      ['sidecar', 'busybox'],
    ]);
    expect(pod.spec?.containers[0]?.resources).toEqual({ requests: { cpu: '100m' } });
    expect(pod.spec?.volumes?.map((v) => v.name)).toEqual(['data', 'extra']);
    expect(pod.spec?.volumes?.[0]?.persistentVolumeClaim?.claimName).toBe('data-demo-0');
  });

  it('by default prefers a node no other member of the cluster runs on; any affinity or spread of the cluster replaces that', () => {
    const c = cluster();
    expect(buildPod(member(c), c).spec?.affinity?.podAntiAffinity).toEqual({
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            labelSelector: { matchLabels: { 'etcd-operator.dev/cluster': 'demo' } },
            topologyKey: 'kubernetes.io/hostname',
          },
        },
      ],
    });
    const spread = [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }];
    const spreading = cluster({ topologySpreadConstraints: spread });
    expect(buildPod(member(spreading), spreading).spec).toMatchObject({ topologySpreadConstraints: spread });
    expect(buildPod(member(spreading), spreading).spec?.affinity).toBeUndefined();
    const templated = cluster({ podTemplate: { spec: { affinity: { nodeAffinity: {} } } } });
    expect(buildPod(member(templated), templated).spec?.affinity).toEqual({ nodeAffinity: {} });
  });

  it("checks the data dir from the operator image before etcd starts, on the same read-only mount, as etcd's user", () => {
    const c = cluster();
    const init = buildPod(unguarded(member(c)), c, 'example.com/etcd-operator:1.2.3').spec?.initContainers;
    expect(init).toEqual([
      {
        name: 'check-data',
        image: 'example.com/etcd-operator:1.2.3',
        args: ['agent', 'check-data', '--data-dir=/var/lib/etcd/data'],
        volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd', readOnly: true }],
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        terminationMessagePolicy: 'FallbackToLogsOnError',
      },
    ]);
    expect(buildPod(member(c), c).spec?.initContainers?.[0]?.image).toMatch(
      /^ghcr\.io\/etcd-operator\/etcd-operator:\d+\.\d+\.\d+/,
    );
  });

  it('expects data once etcd has run on the volume (status.dataInitialized), so a wiped one fails the check', () => {
    const c = cluster();
    const ran = { ...unguarded(member(c)), status: { dataInitialized: true } };
    expect(buildPod(ran, c).spec?.initContainers?.[0]?.args).toEqual([
      'agent',
      'check-data',
      '--data-dir=/var/lib/etcd/data',
      '--expect-data',
    ]);
  });

  it("a guarded member's first Pod writes its uid as the guard (writable mount); later Pods require it", () => {
    const c = cluster();
    const guarded = member(c);
    const first = buildPod(guarded, c).spec?.initContainers?.[0];
    expect(first?.args).toEqual(['agent', 'check-data', '--data-dir=/var/lib/etcd/data', '--guard=member-uid-0']);
    expect(first?.volumeMounts).toEqual([{ name: 'data', mountPath: '/var/lib/etcd', readOnly: false }]);
    const later = buildPod({ ...guarded, status: { dataInitialized: true } }, c).spec?.initContainers?.[0];
    expect(later?.args).toEqual([
      'agent',
      'check-data',
      '--data-dir=/var/lib/etcd/data',
      '--expect-data',
      '--guard=member-uid-0',
    ]);
    expect(later?.volumeMounts?.[0]?.readOnly).toBe(true);
  });

  it('a member in memory has no check: every new Pod starts with an empty emptyDir', () => {
    const c = cluster({ storage: { size: '256Mi', medium: 'Memory' } });
    expect(buildPod({ ...member(c), status: { dataInitialized: true } }, c).spec?.initContainers).toEqual([]);
  });

  it("keeps the podTemplate's init containers after the check, never one replacing it", () => {
    const c = cluster({
      podTemplate: {
        spec: {
          containers: [],
          initContainers: [
            { name: 'check-data', image: 'evil' },
            { name: 'warm-up', image: 'busybox' },
          ],
        },
      },
    });
    expect(buildPod(member(c), c, 'op:1').spec?.initContainers?.map((x) => [x.name, x.image])).toEqual([
      ['check-data', 'op:1'],
      ['warm-up', 'busybox'],
    ]);
  });

  it('gives etcd a termination grace period by default', () => {
    const c = cluster();
    expect(buildPod(member(c), c).spec?.terminationGracePeriodSeconds).toBe(30);
  });
});

describe('etcd options', () => {
  it('left out, no flag is passed and etcd defaults apply', () => {
    expect(optionFlags(undefined, '3.6.16')).toEqual([]);
    expect(optionFlags({}, '3.6.16')).toEqual([]);
  });

  it('each typed option becomes its flag', () => {
    const flags = optionFlags(
      {
        quotaBackendBytes: '8Gi',
        autoCompactionMode: 'periodic',
        autoCompactionRetention: '1h',
        snapshotCount: 10000,
        heartbeatInterval: 100,
        electionTimeout: 1000,
        maxLearners: 2,
      },
      '3.6.16',
    );
    expect(flags).toEqual([
      '--quota-backend-bytes=8589934592',
      '--auto-compaction-mode=periodic',
      '--auto-compaction-retention=1h',
      '--snapshot-count=10000',
      '--heartbeat-interval=100',
      '--election-timeout=1000',
      '--max-learners=2',
    ]);
  });

  it('etcd 3.5 gets no --max-learners, a flag it does not know', () => {
    expect(optionFlags({ maxLearners: 2 }, '3.5.35')).toEqual([]);
  });

  it.each([
    ['2Gi', 2 ** 31],
    ['500M', 5e8],
    [1024, 1024],
    ['1.5Gi', 1.5 * 2 ** 30],
  ] as const)('quantity %s is %d bytes', (q, bytes) => {
    expect(quantityBytes(q)).toBe(bytes);
  });
});
