import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { commandLine, containerEnv, expandVars } from './env.ts';

const pod: V1Pod = {
  metadata: { name: 'etcd-0', namespace: 'db', uid: 'u-1', labels: { app: 'etcd' } },
  spec: {
    nodeName: 'local-node',
    containers: [
      {
        name: 'etcd',
        image: 'quay.io/coreos/etcd:v3.6.16',
        env: [
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'URL', value: 'http://$(POD_IP):2379' },
          { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'auth', key: 'token' } } },
          { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'mode' } } },
        ],
      },
    ],
  },
};
const lookup = (kind: string, _ns: string, name: string): Promise<Record<string, string> | undefined> =>
  Promise.resolve<Record<string, string> | undefined>(
    kind === 'Secret' && name === 'auth'
      ? { token: 's3cret' }
      : kind === 'ConfigMap' && name === 'cfg'
        ? { mode: 'fast' }
        : undefined,
  );
const ctx = { podIP: '127.10.0.7', hostIP: '127.0.0.1', apiHost: '127.0.0.1', apiPort: '6443', lookup };

describe('container environment', () => {
  it('expands $(VAR) like the kubelet: $$ escapes, unknown names stay as written', () => {
    expect(expandVars('--name=$(A) $(NOPE) $$(A) $', { A: 'x' })).toBe('--name=x $(NOPE) $(A) $');
  });

  it('gives the Pod its address, name, labels, Secret and ConfigMap keys and the API server', async () => {
    const env = await containerEnv(pod, pod.spec!.containers[0]!, ctx);
    expect(env).toMatchObject({
      POD_IP: '127.10.0.7',
      POD_NAME: 'etcd-0',
      APP: 'etcd',
      URL: 'http://127.10.0.7:2379',
      TOKEN: 's3cret',
      MODE: 'fast',
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: '6443',
    });
  });

  it('sets HOME as a container runtime does for images without a passwd entry: /root for root, / for another user', async () => {
    const c = pod.spec!.containers[0]!;
    expect((await containerEnv(pod, c, ctx)).HOME).toBe('/root');
    const nonRoot = { ...pod, spec: { ...pod.spec!, securityContext: { runAsUser: 65532 } } };
    expect((await containerEnv(nonRoot, c, ctx)).HOME).toBe('/');
    const own = { ...c, env: [{ name: 'HOME', value: '/data' }] };
    expect((await containerEnv(nonRoot, own, ctx)).HOME).toBe('/data');
  });

  it('refuses to start a container whose Secret key is missing', async () => {
    const c = { name: 'c', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'gone', key: 'k' } } }] };
    await expect(containerEnv(pod, c, ctx)).rejects.toThrow(/couldn't find key k in Secret db\/gone/);
  });

  it('runs the image command when the container sets none, and expands the container args', () => {
    const image = { entrypoint: [], cmd: ['/usr/local/bin/etcd'] };
    expect(commandLine({ name: 'c' }, image, {})).toEqual(['/usr/local/bin/etcd']);
    expect(commandLine({ name: 'c', args: ['--x=$(A)'] }, image, { A: '1' })).toEqual(['--x=1']);
    expect(commandLine({ name: 'c', command: ['sh'], args: ['-c', 'echo $(A)'] }, image, { A: '1' })).toEqual([
      'sh',
      '-c',
      'echo 1',
    ]);
  });
});
