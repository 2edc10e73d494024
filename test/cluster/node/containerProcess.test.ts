import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { logTail, startContainerProcess } from './containerProcess.ts';

const root = mkdtempSync(join(os.tmpdir(), 'node-proc-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const target = `/var/lib/node-test-${process.pid}`;

function run(name: string, script: string, mounts: { source: string; target: string; readOnly?: boolean }[] = []) {
  return startContainerProcess({
    mounts,
    scratch: join(root, name, 'scratch'),
    hostname: `pod-${name}`,
    workingDir: '/',
    argv: ['/bin/sh', '-c', script],
    env: { PATH: '/usr/bin:/bin', GREETING: 'hi' },
    logFile: join(root, name, '0.log'),
  });
}

describe.runIf(process.getuid?.() === 0)('container process', () => {
  it('sees its volume at the mountPath, its own hosts file and hostname, and the host sees neither', async () => {
    const data = join(root, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'kept'), 'from the volume\n');
    const hosts = join(root, 'hosts');
    writeFileSync(hosts, '127.10.0.9 etcd-0.etcd.ns.svc\n');
    const p = run('a', `cat ${target}/kept /etc/hosts; hostname; echo $GREETING; echo new > ${target}/written`, [
      { source: data, target },
      { source: hosts, target: '/etc/hosts', readOnly: true },
    ]);
    expect((await p.exited).exitCode).toBe(0);
    expect(readFileSync(join(root, 'a', '0.log'), 'utf8')).toBe(
      'from the volume\n127.10.0.9 etcd-0.etcd.ns.svc\npod-a\nhi\n',
    );
    expect(readFileSync(join(data, 'written'), 'utf8')).toBe('new\n');
    expect(existsSync(target)).toBe(false);
    expect(readFileSync('/etc/hosts', 'utf8')).not.toContain('etcd-0.etcd.ns.svc');
  });

  it('cannot write a read-only mount', async () => {
    const ro = join(root, 'ro');
    mkdirSync(ro);
    const p = run('b', `echo x > ${target}/f`, [{ source: ro, target, readOnly: true }]);
    expect((await p.exited).exitCode).not.toBe(0);
    expect(existsSync(join(ro, 'f'))).toBe(false);
  });

  it('reports a SIGKILLed container with exit code 137', async () => {
    const p = run('c', 'echo started; exec sleep 60');
    await new Promise((r) => setTimeout(r, 200));
    p.signal('SIGKILL');
    expect(await p.exited).toMatchObject({ exitCode: 137, signal: 'SIGKILL' });
  });
});

describe('log tail (terminationMessagePolicy FallbackToLogsOnError)', () => {
  it('is the last 80 lines or 2048 bytes of the run, whichever is less; empty without a log', () => {
    const file = join(root, 'tail.log');
    writeFileSync(file, Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n') + '\n');
    const tail = logTail(file);
    expect(tail.split('\n').filter(Boolean)).toHaveLength(80);
    expect(tail.endsWith('line 99\n')).toBe(true);
    writeFileSync(file, 'x'.repeat(5000));
    expect(logTail(file)).toBe('x'.repeat(2048));
    expect(logTail(join(root, 'no-such.log'))).toBe('');
  });
});
