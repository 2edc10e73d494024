import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { routes } from './routes.ts';

const apiServer = { ip: '127.0.0.1', port: 6443 };

function pod(name: string, ip: string, ready = true): V1Pod {
  return {
    metadata: { name, namespace: 'db', labels: { app: 'etcd' } },
    spec: { containers: [{ name: 'etcd', ports: [{ name: 'client', containerPort: 2379 }] }] },
    status: { podIP: ip, phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

const svc = (targetPort: number | string | undefined): V1Service => ({
  metadata: { name: 'etcd-client', namespace: 'db', uid: 'u1' },
  spec: { clusterIP: '10.96.0.9', selector: { app: 'etcd' }, ports: [{ port: 80, targetPort }] },
});

const input = (services: V1Service[], pods: V1Pod[], slices: V1EndpointSlice[] = []) => ({
  services,
  pods,
  slices,
  apiServer,
});

describe('service routes', () => {
  it('sends a Service port to the ready Pods it selects, by named target port', () => {
    const [route] = routes(input([svc('client')], [pod('a', '127.1.0.1'), pod('b', '127.1.0.2', false)]));
    expect(route).toEqual({
      service: 'db/etcd-client:80',
      ip: '10.96.0.9',
      port: 80,
      targets: [{ ip: '127.1.0.1', port: 2379 }],
    });
  });

  it('uses a numeric target port, or the Service port when none is given', () => {
    expect(routes(input([svc(2380)], [pod('a', '127.1.0.1')]))[0]?.targets).toEqual([{ ip: '127.1.0.1', port: 2380 }]);
    expect(routes(input([svc(undefined)], [pod('a', '127.1.0.1')]))[0]?.targets).toEqual([
      { ip: '127.1.0.1', port: 80 },
    ]);
  });

  it('sends default/kubernetes to the API server', () => {
    const kubernetes: V1Service = {
      metadata: { name: 'kubernetes', namespace: 'default' },
      spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443 }] },
    };
    expect(routes(input([kubernetes], []))[0]?.targets).toEqual([apiServer]);
  });

  it('reads a Service without a selector from its EndpointSlices, skipping not-ready endpoints', () => {
    const manual: V1Service = {
      metadata: { name: 'm', namespace: 'db' },
      spec: { clusterIP: '10.96.0.3', ports: [{ name: 'x', port: 1 }] },
    };
    const slice: V1EndpointSlice = {
      addressType: 'IPv4',
      metadata: { name: 'm-1', namespace: 'db', labels: { 'kubernetes.io/service-name': 'm' } },
      ports: [{ name: 'x', port: 9000 }],
      endpoints: [{ addresses: ['127.1.0.7'] }, { addresses: ['127.1.0.8'], conditions: { ready: false } }],
    };
    expect(routes(input([manual], [], [slice]))[0]?.targets).toEqual([{ ip: '127.1.0.7', port: 9000 }]);
  });

  it('gives a headless Service no route', () => {
    const headless: V1Service = {
      metadata: { name: 'etcd', namespace: 'db' },
      spec: { clusterIP: 'None', selector: { app: 'etcd' }, ports: [{ port: 2379 }] },
    };
    expect(routes(input([headless], [pod('a', '10.244.0.5')]))).toEqual([]);
  });
});
