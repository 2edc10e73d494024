import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimIndex, realNodesDirOf, writeJoinInfo } from './join.ts';

describe('real nodes joining a cluster', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a name keeps the index it claimed first; other names take the lowest free ones, never the same', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'join-test-'));
    const indexes = path.join(dir, 'indexes');
    const claimed = await Promise.all(['node-a', 'node-b', 'node-c', 'loss-x-a'].map((n) => claimIndex(indexes, n)));
    expect([...claimed].sort()).toEqual([1, 2, 3, 4]);
    expect(await claimIndex(indexes, 'node-b')).toBe(claimed[1]);
    expect(await claimIndex(indexes, 'node-d')).toBe(5);
  });

  it("finds the real nodes' dir beside the control plane's only once the cluster wrote how to join", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'join-test-'));
    const kubeconfig = path.join(dir, 'controlplane', 'admin.kubeconfig');
    expect(realNodesDirOf(kubeconfig)).toBeUndefined();
    const nodes = path.join(dir, 'realnodes');
    mkdirSync(nodes);
    await writeJoinInfo(nodes, { pkiDir: 'p', caCert: 'p/ca.crt', apiserverPort: 1, registryHostsDir: 'h' });
    expect(realNodesDirOf(kubeconfig)).toBe(nodes);
  });
});
