import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { layOver, renderHosts, writeInPlace } from './hosts.ts';

function pod(name: string, ip: string, extra: { ready?: boolean; hostname?: string; subdomain?: string } = {}): V1Pod {
  return {
    metadata: { name, namespace: 'db', labels: { app: 'etcd' } },
    spec: { containers: [], hostname: extra.hostname, subdomain: extra.subdomain },
    status: {
      podIP: ip,
      phase: 'Running',
      conditions: [{ type: 'Ready', status: extra.ready === false ? 'False' : 'True' }],
    },
  };
}

function service(name: string, clusterIP: string, publishNotReady = false): V1Service {
  return {
    metadata: { name, namespace: 'db', uid: `uid-${name}` },
    spec: { clusterIP, selector: { app: 'etcd' }, publishNotReadyAddresses: publishNotReady, ports: [{ port: 2379 }] },
  };
}

const render = (pods: V1Pod[], services: V1Service[]): string => renderHosts({ pods, services });

describe('hosts file', () => {
  it('starts with localhost and names every Pod by its dashed address', () => {
    const text = render([pod('a', '127.1.0.5')], []);
    expect(text.split('\n').slice(0, 3)).toEqual([
      '127.0.0.1\tlocalhost',
      '::1\tlocalhost ip6-localhost ip6-loopback',
      '127.1.0.5\t127-1-0-5.db.pod 127-1-0-5.db.pod.cluster.local',
    ]);
  });

  it('names a Pod hostname.subdomain only when a headless Service of that name selects it', () => {
    const member = pod('etcd-0', '127.1.0.5', { hostname: 'etcd-0', subdomain: 'etcd' });
    expect(render([member], [])).not.toContain('etcd-0.etcd.db.svc');
    const text = render([member], [service('etcd', 'None')]);
    expect(text).toContain(
      '127.1.0.5\tetcd-0.etcd.db.svc etcd-0.etcd.db.svc.cluster.local etcd.db.svc etcd.db.svc.cluster.local',
    );
  });

  it('leaves a not-ready Pod out of a headless Service unless it publishes not-ready addresses', () => {
    const member = pod('etcd-0', '127.1.0.5', { hostname: 'etcd-0', subdomain: 'etcd', ready: false });
    expect(render([member], [service('etcd', 'None')])).not.toContain('etcd-0.etcd.db.svc');
    expect(render([member], [service('etcd', 'None', true)])).toContain('etcd-0.etcd.db.svc');
  });

  it('lists one line per Pod for a headless Service name', () => {
    const text = render([pod('a', '127.1.0.5'), pod('b', '127.1.0.6')], [service('etcd', 'None')]);
    expect(text).toContain('127.1.0.5\tetcd.db.svc etcd.db.svc.cluster.local');
    expect(text).toContain('127.1.0.6\tetcd.db.svc etcd.db.svc.cluster.local');
  });

  it('maps a ClusterIP Service to its ClusterIP, and an ExternalName Service to nothing', () => {
    expect(render([], [service('etcd-client', '10.96.0.20')])).toContain(
      '10.96.0.20\tetcd-client.db.svc etcd-client.db.svc.cluster.local',
    );
    const external: V1Service = { metadata: { name: 'far', namespace: 'db' }, spec: { type: 'ExternalName' } };
    expect(render([], [external])).not.toContain('far.db.svc');
  });

  it('drops a Pod without an address or one that has finished', () => {
    const done = pod('a', '127.1.0.5');
    done.status = { ...done.status, phase: 'Succeeded' };
    expect(render([done, { metadata: { name: 'b', namespace: 'db' } }], [])).not.toContain('.pod');
  });

  it('rewrites the file in place, keeping its inode, and only when the content changed', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hosts-'));
    const file = path.join(dir, 'hosts');
    try {
      await writeFile(file, 'a much longer previous content than the next one\n');
      const inode = (await stat(file)).ino;
      expect(await writeInPlace(file, 'short\n')).toBe(true);
      expect(await readFile(file, 'utf8')).toBe('short\n');
      expect((await stat(file)).ino).toBe(inode);
      expect(await writeInPlace(file, 'short\n')).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a reader racing a rewrite finds every line the old and new files share, whatever it read before and after', () => {
    const line = (i: number): string =>
      `10.244.0.${i}\tp${i}.demo.ns${i % 7}.svc p${i}.demo.ns${i % 7}.svc.cluster.local`;
    const lines = (ids: number[]): string => ids.map(line).join('\n') + '\n';
    // Pods come and go between two writes (the first five go, a tenth of the rest, five come),
    // sorted as renderHosts writes them; the file is past a page.
    const range = (from: number, to: number): number[] => [...Array(to - from).keys()].map((i) => i + from);
    const before = layOver('', lines(range(0, 90)));
    const now = range(5, 95).filter((i) => i % 10 !== 3);
    const after = layOver(before, lines(now));
    const shared = range(0, 90)
      .filter((i) => now.includes(i))
      .map(line);
    expect(before.length).toBeGreaterThan(4096);
    // A read of the first `cut` bytes of one version and the rest of the other, cut at every byte.
    for (let cut = 0; cut <= Math.max(before.length, after.length); cut += 1) {
      for (const torn of [after.slice(0, cut) + before.slice(cut), before.slice(0, cut) + after.slice(cut)]) {
        const seen = new Set(torn.split('\n'));
        for (const l of shared) if (!seen.has(l)) throw new Error(`a reader cut at ${cut} misses ${l}`);
      }
    }
    // Every line now wanted is there once, and what went is a comment.
    const live = after.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(live.sort()).toEqual(lines(now).split('\n').filter(Boolean).sort());
  });

  it('writes the lines compact once the comments left by lines gone outweigh them', () => {
    const many = Array.from({ length: 20 }, (_, i) => `10.0.0.${i}\tn${i}`).join('\n') + '\n';
    expect(layOver(many, '10.0.0.1\tn1\n')).toBe('10.0.0.1\tn1\n');
    expect(layOver(many, many)).toBe(many);
  });
});
