import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AddressPool } from './addresses.ts';

const dir = mkdtempSync(join(os.tmpdir(), 'node-addr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('pod addresses', () => {
  it('gives every Pod its own address on the bridge, skipping the gateway and those other Pods hold', () => {
    const pool = new AddressPool(mkdtempSync(join(dir, 'n-')), 'local-node', (ip) => ip === '10.244.0.3');
    expect([pool.allocate('a'), pool.allocate('b'), pool.allocate('a')]).toEqual([
      '10.244.0.2',
      '10.244.0.4',
      '10.244.0.2',
    ]);
  });

  it('starts each node name in its own /24', () => {
    const a = new AddressPool(mkdtempSync(join(dir, 'a-')), 'node-a').allocate('x');
    const b = new AddressPool(mkdtempSync(join(dir, 'b-')), 'node-b').allocate('x');
    expect(a.split('.').slice(0, 3)).not.toEqual(b.split('.').slice(0, 3));
    expect([a, b].every((ip) => ip.startsWith('10.244.'))).toBe(true);
  });

  it('keeps a Pod on its previous address when it is free, and gives a freed address out last', () => {
    const pool = new AddressPool(mkdtempSync(join(dir, 'b-')), 'local-node');
    expect(pool.allocate('x', '10.244.0.9')).toBe('10.244.0.9');
    const a = pool.allocate('y');
    pool.release('y');
    expect(pool.allocate('z')).not.toBe(a);
  });
});
