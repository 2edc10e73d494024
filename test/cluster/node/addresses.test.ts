import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AddressPool, socketBound } from './addresses.ts';

const dir = mkdtempSync(join(os.tmpdir(), 'node-addr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('pod addresses', () => {
  it('gives every Pod its own address on the bridge, skipping the gateway and those other Pods hold', () => {
    const pool = new AddressPool(mkdtempSync(join(dir, 'n-')), 'local-node', (ip) => ip === '10.244.0.3', 'netns');
    expect([pool.allocate('a'), pool.allocate('b'), pool.allocate('a')]).toEqual([
      '10.244.0.2',
      '10.244.0.4',
      '10.244.0.2',
    ]);
  });

  it('starts each node name in its own /24', () => {
    const a = new AddressPool(mkdtempSync(join(dir, 'a-')), 'node-a', () => false, 'netns').allocate('x');
    const b = new AddressPool(mkdtempSync(join(dir, 'b-')), 'node-b', () => false, 'netns').allocate('x');
    expect(a.split('.').slice(0, 3)).not.toEqual(b.split('.').slice(0, 3));
    expect([a, b].every((ip) => ip.startsWith('10.244.'))).toBe(true);
  });

  it('in the loopback mode, gives every Pod its own loopback address and skips those other Pods hold', () => {
    const pool = new AddressPool(dir, 'local-node', (ip) => ip === '127.10.0.2', 'loopback');
    expect([pool.allocate('a'), pool.allocate('b'), pool.allocate('a')]).toEqual([
      '127.10.0.1',
      '127.10.0.3',
      '127.10.0.1',
    ]);
  });

  it('keeps a Pod on its previous address when it is free, and gives a freed address out last', () => {
    const pool = new AddressPool(mkdtempSync(join(dir, 'b-')), 'local-node');
    expect(pool.allocate('x', '10.244.0.9')).toBe('10.244.0.9');
    const a = pool.allocate('y');
    pool.release('y');
    expect(pool.allocate('z')).not.toBe(a);
  });

  it('sees an address a process listens on as taken', async () => {
    // Random addresses far from the Pod range, so other runs on this machine do not hold them.
    const base = `127.${200 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 250)}`;
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, `${base}.1`, r));
    expect(socketBound(`${base}.1`)).toBe(true);
    server.close();
    expect(socketBound(`${base}.2`)).toBe(false);
  });
});
