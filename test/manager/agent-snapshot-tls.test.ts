import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCommand } from '../../manager/agent.ts';
import { parseSnapshotArgs } from '../../manager/agent-snapshot.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { credentialsOf, TestPki, type Leaf } from '../effects/etcd/test-pki.ts';

// The snapshot Job's agent against a member that requires client certificates, with the files
// the Job mounts from the operator's Secret.
describe('agent snapshot over client TLS', { timeout: 120_000 }, () => {
  let pki: TestPki;
  let operator: Leaf;
  let local: LocalEtcd;
  let endpoint = '';
  const dir = mkdtempSync(join(os.tmpdir(), 'agent-snapshot-tls-'));
  const termination = join(dir, 'termination-log');

  beforeAll(async () => {
    pki = await TestPki.create();
    const member = await pki.issue({
      name: 'member',
      subject: '/CN=member',
      usage: 'serverAuth,clientAuth',
      sans: ['IP:127.0.0.1', 'DNS:localhost'],
    });
    operator = await pki.issue({ name: 'operator', subject: '/CN=etcd-operator', usage: 'clientAuth' });
    local = new LocalEtcd('agent-tls', '3.6.16', { tls: { member, client: credentialsOf(operator) } });
    await local.startSeed('m0');
    endpoint = local.resolve(local.ref).clientURL('m0');
    await local.clients.member(local.ref, 'm0').put('k').value('v').exec();
  }, 120_000);
  afterAll(async () => {
    await local?.stop();
    pki?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  async function agent(args: string[]) {
    let [out, err] = ['', ''];
    writeFileSync(termination, '');
    const io = { stdout: (s: string) => void (out += s), stderr: (s: string) => void (err += s) };
    const code = await runAgentCommand(['snapshot', ...args], io, { terminationLog: termination, env: {} });
    return { code, out, err, message: readFileSync(termination, 'utf8') };
  }

  it("stores a snapshot taken over https with the operator's certificate", async () => {
    const file = join(dir, 'tls.db');
    const tls = ['--cacert', operator.ca, '--cert', operator.cert, '--key', operator.key];
    const got = await agent(['--endpoint', endpoint, ...tls, '--file', file, '--timeout', '30']);
    expect(got.err).toBe('');
    expect(got.code).toBe(0);
    expect(JSON.parse(got.out)).toMatchObject({ location: file, etcdVersion: '3.6.16' });
  });

  it('without the files the member cannot be trusted nor trust it: the Job fails, saying so', async () => {
    const file = join(dir, 'refused.db');
    const got = await agent(['--endpoint', endpoint, '--file', file, '--timeout', '5']);
    expect(got.code).toBe(1);
    expect(got.message).toMatch(/^snapshot failed: /);
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
  });

  it('refuses half a set of TLS files, and TLS files with a plain endpoint', () => {
    expect(() => parseSnapshotArgs(['--endpoint', 'https://m:2379', '--cacert', 'ca', '--file', 'f'])).toThrow(
      'an https endpoint needs all of --cacert, --cert and --key (PEM files)',
    );
    expect(() =>
      parseSnapshotArgs(['--endpoint', 'http://m:2379', '--cacert', 'a', '--cert', 'b', '--key', 'c', '--file', 'f']),
    ).toThrow('--cacert, --cert and --key go with an https --endpoint');
  });
});
