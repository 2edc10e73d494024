/**
 * What a Pod's programs see on the process node: init containers in order, ConfigMap, Secret,
 * emptyDir (memory-backed with its size limit) and service-account token volumes at their
 * mountPaths, a token the API server accepts, probes and restart policies, the operator image.
 * Commands use the host's /bin/sh and Node, which every container sees (see docs/local-node.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CoreV1Api, V1Container, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LocalNode } from '../cluster/node/index.ts';
import { isReady, podGone, podWhen } from '../cluster/node/testing.ts';
import { until } from '../until.ts';
import { setUpNode, tearDownNode } from './node-fixture.ts';

const ns = `node-work-${process.pid}`;
const nodeName = `node-work-e2e-${process.pid}`;
const image = 'quay.io/coreos/etcd:v3.6.16';
let dir: string;
let core: CoreV1Api;
let node: LocalNode;

const pod = (name: string, spec: Partial<NonNullable<V1Pod['spec']>> & { containers: V1Container[] }): Promise<V1Pod> =>
  core.createNamespacedPod({
    namespace: ns,
    body: { metadata: { name }, spec: { nodeName, terminationGracePeriodSeconds: 1, ...spec } },
  });
const sh = (script: string): string[] => ['/bin/sh', '-c', script];
const terminated = (p: V1Pod) => p.status?.containerStatuses?.[0]?.state?.terminated;

describe.runIf(process.getuid?.() === 0 && inject('clusterHasNode'))('process node: what a Pod sees', () => {
  beforeAll(async () => {
    ({ dir, core, node } = await setUpNode(ns, nodeName, 'node-work-e2e-'));
  });
  afterAll(() => tearDownNode({ dir, core, node }, ns, nodeName));

  it('init containers run first; ConfigMap, Secret and memory emptyDir volumes sit at their mountPaths; Secret changes follow', async () => {
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'cfg' }, data: { mode: 'fast', other: 'x' } },
    });
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'sec' }, stringData: { token: 's3cret' } },
    });
    await pod('files', {
      initContainers: [
        {
          name: 'init',
          image,
          command: sh('echo init-ran > /var/lib/shared/marker'),
          volumeMounts: [{ name: 'work', mountPath: '/var/lib/shared' }],
        },
      ],
      containers: [
        {
          name: 'main',
          image,
          command: sh(
            'cat /var/lib/shared/marker; cat /etc/cfg/mode; echo; cat /etc/sec/token-file; echo; ls /etc/cfg; df -k /var/cache/pod | tail -1; echo "mode=$MODE"; exec sleep 3600',
          ),
          env: [{ name: 'MODE', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'mode' } } }],
          readinessProbe: { exec: { command: ['test', '-f', '/var/lib/shared/marker'] }, periodSeconds: 1 },
          volumeMounts: [
            { name: 'work', mountPath: '/var/lib/shared' },
            { name: 'cfg', mountPath: '/etc/cfg' },
            { name: 'sec', mountPath: '/etc/sec' },
            { name: 'cache', mountPath: '/var/cache/pod' },
          ],
        },
      ],
      volumes: [
        { name: 'work', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'mode', path: 'mode' }] } },
        { name: 'sec', secret: { secretName: 'sec', items: [{ key: 'token', path: 'token-file' }] } },
        { name: 'cache', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
      ],
    });
    const p = await podWhen(core, ns, 'files', isReady);
    expect(p.status!.initContainerStatuses![0]!.state!.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const logs = await node.logs(ns, 'files', 'main');
    expect(logs).toMatch(/^init-ran\nfast\ns3cret\nmode\ntmpfs +8192 .*\nmode=fast\n$/);

    // A changed Secret reaches the running container's file, as with the kubelet's sync.
    await core.replaceNamespacedSecret({
      name: 'sec',
      namespace: ns,
      body: { metadata: { name: 'sec' }, stringData: { token: 'rotated' } },
    });
    const read = () =>
      node
        .exec(ns, 'files', ['cat', '/etc/sec/token-file'])
        .then((r) => (r.stdout === 'rotated' ? r.stdout : undefined));
    expect(await until('the rotated token in the file', read, Infinity, 500)).toBe('rotated');
  });

  it('a sidecar init container starts before the containers and keeps running beside them', async () => {
    await pod('sidecar', {
      initContainers: [
        {
          name: 'side',
          image,
          restartPolicy: 'Always',
          // Written whole before the startup probe can see it, so main reads all of it or nothing.
          command: sh(
            'echo from-sidecar > /var/lib/shared/.side && mv /var/lib/shared/.side /var/lib/shared/side; exec sleep 3600',
          ),
          startupProbe: { exec: { command: ['test', '-f', '/var/lib/shared/side'] }, periodSeconds: 1 },
          volumeMounts: [{ name: 'shared', mountPath: '/var/lib/shared' }],
        },
      ],
      containers: [
        {
          name: 'main',
          image,
          command: sh('cat /var/lib/shared/side; exec sleep 3600'),
          volumeMounts: [{ name: 'shared', mountPath: '/var/lib/shared' }],
        },
      ],
      volumes: [{ name: 'shared', emptyDir: {} }],
    });
    const p = await podWhen(core, ns, 'sidecar', isReady);
    expect(p.status!.initContainerStatuses![0]).toMatchObject({ name: 'side', started: true, state: { running: {} } });
    // Ready says main's process runs, not that its cat is done: wait for what it printed, or
    // "No such file" had main started before the sidecar's startup probe passed.
    const printed = await until('the sidecar to print', () =>
      node.logs(ns, 'sidecar', 'main').then((l) => l || undefined),
    );
    expect(printed).toBe('from-sidecar\n');
  });

  it('postStart runs as the container starts; deleting the Pod runs preStop, then sends SIGTERM', async () => {
    const out = join(dir, 'hook-out');
    await pod('hooked', {
      terminationGracePeriodSeconds: 10,
      containers: [
        {
          name: 'main',
          image,
          command: sh('trap "echo term >> /var/lib/out/order; exit 0" TERM; while :; do sleep 0.1; done'),
          lifecycle: {
            postStart: { exec: { command: ['/bin/sh', '-c', 'echo poststart >> /var/lib/out/order'] } },
            preStop: { exec: { command: ['/bin/sh', '-c', 'echo prestop >> /var/lib/out/order'] } },
          },
          volumeMounts: [{ name: 'out', mountPath: '/var/lib/out' }],
        },
      ],
      volumes: [{ name: 'out', hostPath: { path: out, type: 'DirectoryOrCreate' } }],
    });
    await podWhen(core, ns, 'hooked', isReady);
    await core.deleteNamespacedPod({ name: 'hooked', namespace: ns });
    await podGone(core, ns, 'hooked');
    expect(readFileSync(join(out, 'order'), 'utf8')).toBe('poststart\nprestop\nterm\n');
  });

  it('a Pod whose claim is not bound waits in ContainerCreating and says why', async () => {
    const claim = {
      metadata: { name: 'unbound' },
      spec: {
        storageClassName: 'no-such-class',
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    };
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim });
    await pod('waits', {
      containers: [{ name: 'main', image, volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'unbound' } }],
    });
    const p = await podWhen(core, ns, 'waits', (x) => !!x.status?.containerStatuses?.[0]?.state?.waiting?.message);
    expect(p.status!.containerStatuses![0]!.state!.waiting).toEqual({
      reason: 'ContainerCreating',
      message: 'MountVolume.SetUp failed for volume "data": persistentvolumeclaim "unbound" is not bound yet',
    });
    expect(p.status!.phase).toBe('Pending');
  });

  it("a Pod's service-account token and KUBERNETES_SERVICE_* let an in-cluster client authenticate", async () => {
    const script = `
      const fs = require('node:fs'); const d = '/var/run/secrets/kubernetes.io/serviceaccount';
      const ns = fs.readFileSync(d + '/namespace', 'utf8');
      const url = 'https://' + process.env.KUBERNETES_SERVICE_HOST + ':' + process.env.KUBERNETES_SERVICE_PORT + '/api/v1/namespaces/' + ns + '/pods';
      require('node:https').get(url, { ca: fs.readFileSync(d + '/ca.crt'), headers: { authorization: 'Bearer ' + fs.readFileSync(d + '/token', 'utf8') } },
        (res) => { console.log('status', res.statusCode, ns); process.exit(0); });`;
    await pod('client', {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image, command: [process.execPath, '-e', script] }],
    });
    const p = await podWhen(core, ns, 'client', (x) => x.status?.phase === 'Succeeded');
    expect(terminated(p)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    // 403, not 401: the API server knows the service account, which may not list Pods.
    expect(await node.logs(ns, 'client')).toBe(`status 403 ${ns}\n`);
  });

  it('restartPolicy Never: a failed container leaves the Pod Failed with its exit code', async () => {
    await pod('fails', {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image, command: sh('echo bye; exit 3') }],
    });
    const p = await podWhen(core, ns, 'fails', (x) => x.status?.phase === 'Failed');
    expect(terminated(p)).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(p.status!.containerStatuses![0]!.restartCount).toBe(0);
  });

  it('a container tells why it ended in its termination message file; FallbackToLogsOnError uses the log only when it wrote none', async () => {
    await pod('reports', {
      restartPolicy: 'Never',
      containers: [
        { name: 'ok', image, command: sh('echo noise; printf \'{"done":true}\' > /dev/termination-log') },
        {
          name: 'custom',
          image,
          terminationMessagePath: '/tmp/why',
          command: sh('printf gone-wrong > /tmp/why; exit 2'),
        },
        {
          name: 'silent',
          image,
          terminationMessagePolicy: 'FallbackToLogsOnError',
          command: sh('echo from-log; exit 1'),
        },
      ],
    });
    const p = await podWhen(core, ns, 'reports', (x) => x.status?.phase === 'Failed');
    const byName = new Map(p.status?.containerStatuses?.map((c) => [c.name, c.state?.terminated]));
    expect(byName.get('ok')).toMatchObject({ exitCode: 0, message: '{"done":true}' });
    expect(byName.get('custom')).toMatchObject({ exitCode: 2, message: 'gone-wrong' });
    expect(byName.get('silent')).toMatchObject({ exitCode: 1, message: 'from-log\n' });
  });

  it('a failing liveness probe restarts the container', async () => {
    await pod('unlive', {
      containers: [
        {
          name: 'main',
          image,
          command: sh('exec sleep 3600'),
          livenessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 2 },
        },
      ],
    });
    const p = await podWhen(core, ns, 'unlive', (x) => (x.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    expect(p.status!.containerStatuses![0]!.lastState!.terminated).toMatchObject({ exitCode: 137 });
  });

  it('an etcd-operator image runs the operator of this working tree', async () => {
    await pod('operator', {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: 'ghcr.io/example/etcd-operator:dev', command: ['etcd-operator', 'version'] }],
    });
    const p = await podWhen(
      core,
      ns,
      'operator',
      (x) => x.status?.phase === 'Succeeded' || x.status?.phase === 'Failed',
    );
    expect(await node.logs(ns, 'operator')).toMatch(/^etcd-operator \S+ \(node v24\./);
    expect(p.status!.phase).toBe('Succeeded');
  });
});
