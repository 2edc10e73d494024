import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { logTail, startContainerProcess } from './containerProcess.ts';
import { imageMounts, resolveImage } from './images.ts';
import { containerIdentity, type Identity } from './securityContext.ts';
import { setVolumeOwnership } from './volumeOwnership.ts';

const root = mkdtempSync(join(os.tmpdir(), 'node-proc-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const target = `/var/lib/node-test-${process.pid}`;

function run(
  name: string,
  script: string,
  mounts: { source: string; target: string; readOnly?: boolean }[] = [],
  identity?: Identity,
) {
  return startContainerProcess({
    mounts,
    scratch: join(root, name, 'scratch'),
    hostname: `pod-${name}`,
    workingDir: '/',
    ...(identity ? { identity } : {}),
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

  it('a mount point made under /dev (the termination log) keeps /dev/pts and /dev/shm in view', async () => {
    const file = join(root, 'termination');
    writeFileSync(file, '');
    const p = run(
      'dev',
      `test -e /dev/pts/ptmx && echo pts; awk '$5 == "/dev/shm" {print "shm"; exit}' /proc/self/mountinfo; ls /dev/kexec-${process.pid}`,
      [{ source: file, target: `/dev/kexec-${process.pid}` }],
    );
    expect((await p.exited).exitCode).toBe(0);
    expect(readFileSync(join(root, 'dev', '0.log'), 'utf8')).toBe(`pts\nshm\n/dev/kexec-${process.pid}\n`);
    expect(existsSync(`/dev/kexec-${process.pid}`)).toBe(false);
  });

  it('cannot write a read-only mount', async () => {
    const ro = join(root, 'ro');
    mkdirSync(ro);
    const p = run('b', `echo x > ${target}/f`, [{ source: ro, target, readOnly: true }]);
    expect((await p.exited).exitCode).not.toBe(0);
    expect(existsSync(join(ro, 'f'))).toBe(false);
  });

  it('runs as the securityContext’s uid, gid and fsGroup, writing a volume the fsGroup owns and nothing of root’s', async () => {
    const identity = containerIdentity(
      { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 },
      { name: 'etcd', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
    );
    const data = join(root, 'owned');
    mkdirSync(join(data, 'old'), { recursive: true });
    chmodSync(join(data, 'old'), 0o700); // as root-run etcd left it
    setVolumeOwnership(data, 65532);
    const rootOnly = join(root, 'root-only');
    mkdirSync(rootOnly);
    const p = run(
      'user',
      `grep -E '^(Uid|Gid|Groups|NoNewPrivs|CapEff):' /proc/self/status; mkdir ${target}/old/member && echo ok > ${target}/old/member/f; echo x > /mnt-root/f || echo denied`,
      [
        { source: data, target },
        { source: rootOnly, target: '/mnt-root' },
      ],
      identity,
    );
    expect((await p.exited).exitCode).toBe(0);
    const log = readFileSync(join(root, 'user', '0.log'), 'utf8');
    expect(log).toMatch(/^Uid:\s+65532\s+65532\s+65532\s+65532$/m);
    expect(log).toMatch(/^Gid:\s+65532\s+65532\s+65532\s+65532$/m);
    expect(log).toMatch(/^Groups:\s+65532\s*$/m);
    expect(log).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(log).toMatch(/^CapEff:\s+0+$/m);
    expect(log).toMatch(/denied\n$/);
    const made = statSync(join(data, 'old', 'member', 'f'));
    expect([made.uid, made.gid]).toEqual([65532, 65532]);
    // The setgid directory hands its group down to what the container makes.
    expect(statSync(join(data, 'old', 'member')).mode & 0o2000).toBe(0o2000);
    expect(existsSync(join(rootOnly, 'f'))).toBe(false);
  });

  it('a container run as another user still dies with the process that started it', async () => {
    // A child Node starts the container and exits; the uid switch must not have cleared pdeathsig.
    const start = `
      import { startContainerProcess } from ${JSON.stringify(join(import.meta.dirname, 'containerProcess.ts'))};
      const p = startContainerProcess({
        mounts: [], scratch: ${JSON.stringify(join(root, 'orphan', 'scratch'))}, hostname: 'orphan', workingDir: '/',
        identity: { uid: 65532, gid: 65532, groups: [], noNewPrivs: false, drop: [] },
        argv: ['/bin/sleep', '60'], env: { PATH: '/usr/bin:/bin' }, logFile: ${JSON.stringify(join(root, 'orphan', '0.log'))},
      });
      await p.sandboxed;
      console.log(p.pid);
      process.exit(0);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', start]);
    const pid = Number(stdout.trim());
    expect(pid).toBeGreaterThan(0);
    const state = async (): Promise<string> => {
      await new Promise((r) => setTimeout(r, 100));
      try {
        return /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 'gone';
      } catch {
        return 'gone';
      }
    };
    let s = await state();
    for (let i = 0; i < 20 && s !== 'Z' && s !== 'gone'; i++) s = await state();
    if (s !== 'Z' && s !== 'gone') process.kill(pid, 'SIGKILL');
    // Killed: a zombie until its new parent reaps it, or gone.
    expect(['Z', 'gone']).toContain(s);
  });

  it('the operator image runs as a non-root user: its Node and tree are mounted where that user reaches them', async () => {
    const image = await resolveImage('ghcr.io/etcd-operator/etcd-operator:dev');
    const p = startContainerProcess({
      mounts: imageMounts(image, join(root, 'op', 'image')),
      scratch: join(root, 'op', 'scratch'),
      hostname: 'op',
      workingDir: '/',
      identity: containerIdentity({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532 }, { name: 'agent' }),
      argv: [...image.entrypoint, 'version'],
      env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
      logFile: join(root, 'op', '0.log'),
    });
    const exit = await p.exited;
    expect(readFileSync(join(root, 'op', '0.log'), 'utf8')).toMatch(/\d+\.\d+\.\d+/);
    expect(exit.exitCode).toBe(0);
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
