import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import { runJournalCommand } from '../../journal/cli.ts';
import { Journal } from '../../journal/journal.ts';
import { WriterProcess, demo, member, step, tempDb } from './helpers.ts';

/** Runs the command and collects what it printed. */
async function run(argv: string[], opts: Parameters<typeof runJournalCommand>[2] = {}) {
  const out = { stdout: '', stderr: '' };
  const code = await runJournalCommand(
    argv,
    { stdout: (s) => (out.stdout += s), stderr: (s) => (out.stderr += s) },
    opts,
  );
  return { code, ...out };
}

const at = (ms: number): string => new Date(Date.parse('2026-11-21T12:00:00.000Z') + ms).toISOString();

/** A journal holding cluster demo with two members, cluster demo-2 with one, and a demo elsewhere. */
function seeded(): string {
  const path = tempDb();
  const j = Journal.open(path);
  j.recordStep(demo, step('Pending', 'Bootstrapping', [{ type: 'createMember', params: { member: 'demo-0' } }], at(0)));
  j.recordOutcome(demo, 'uid-demo:1:0', { ok: true, at: at(10) });
  j.recordStep(member(0), {
    ...step('pending', 'bootstrapping', [{ type: 'createPod' }], at(20), 'k8s.member.created'),
    machine: 'member',
  });
  const legacy = { ...member(1), cluster: undefined }; // no cluster field: found by its name prefix
  j.recordStep(legacy, { ...step('pending', 'joiningLearner', [], at(30), 'k8s.member.created'), machine: 'member' });
  j.recordStep({ ...demo, uid: 'uid-demo-2', name: 'demo-2' }, step('Pending', 'Bootstrapping', [], at(40)));
  j.recordStep(member(0, 'demo-2'), {
    ...step('pending', 'bootstrapping', [], at(50), 'k8s.member.created'),
    machine: 'member',
  });
  j.recordStep({ ...demo, uid: 'uid-other-demo', namespace: 'other' }, step('Pending', 'Failed', [], at(60)));
  j.close();
  return path;
}

const children: WriterProcess[] = [];
afterEach(() => {
  for (const w of children.splice(0))
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
});

// Child Node processes on a busy 2-core machine: a generous bound, not a timed assertion.
describe('journal command', { timeout: 30_000 }, () => {
  test("prints a cluster's timeline with its members', and no other cluster's", async () => {
    const { code, stdout, stderr } = await run(['demo', '--db', seeded()]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.split('\n')).toEqual([
      '# EtcdCluster default/demo (uid uid-demo): Bootstrapping after step #1',
      '# EtcdMember default/demo-0 (uid uid-demo-0): bootstrapping after step #1',
      '# EtcdMember default/demo-1 (uid uid-demo-1): joiningLearner after step #1',
      '2026-11-21T12:00:00.000Z EtcdCluster/demo #1 k8s.cluster.updated  Pending -> Bootstrapping',
      '    intent createMember{member: demo-0} #1.0 -> ok (+10ms)',
      '2026-11-21T12:00:00.020Z EtcdMember/demo-0 #1 k8s.member.created  pending -> bootstrapping',
      '    intent createPod #1.0 -> open',
      '2026-11-21T12:00:00.030Z EtcdMember/demo-1 #1 k8s.member.created  pending -> joiningLearner',
      '',
    ]);
  });

  test('prints one member, in another namespace, or as JSON lines', async () => {
    const db = seeded();
    const one = await run(['demo-0', '--db', db, '--kind', 'EtcdMember']);
    expect(one.stdout).toContain('EtcdMember default/demo-0');
    expect(one.stdout).not.toContain('k8s.cluster.updated');
    const other = await run(['demo', '-n', 'other', '--db', db]);
    expect(other.stdout).toContain('Pending -> Failed');
    expect(other.stdout).not.toContain('EtcdMember');
    const json = await run(['demo', '--json', '--db', db]);
    const rows = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { object: { name: string }; entry: string });
    expect(rows.map((r) => `${r.object.name}:${r.entry}`)).toEqual([
      'demo:event',
      'demo:transition',
      'demo:intent',
      'demo:outcome',
      'demo-0:event',
      'demo-0:transition',
      'demo-0:intent',
      'demo-1:event',
      'demo-1:transition',
    ]);
  });

  /** A writer process that has journaled demo's first step, and `journal demo` following it with `flags`. */
  async function follow(...flags: string[]) {
    const db = tempDb();
    const w = new WriterProcess(db);
    children.push(w);
    await w.next();
    await w.send({
      op: 'step',
      ref: demo,
      step: step('Pending', 'Bootstrapping', [{ type: 'createMember', params: { member: 'demo-0' } }], at(0)),
    });
    const out: string[] = [];
    const abort = new AbortController();
    const running = runJournalCommand(
      ['demo', ...flags, '--db', db],
      { stdout: (s) => out.push(s), stderr: (s) => out.push(s) },
      { signal: abort.signal, pollMs: 20 },
    );
    return { w, out, abort, running };
  }

  test('--follow prints rows another process writes, new members included, until aborted', async () => {
    const { w, out, abort, running } = await follow('--follow');
    const until = async (text: string) => {
      while (!out.join('').includes(text)) await sleep(20);
    };
    await until('intent createMember{member: demo-0} #1.0 -> open');
    await w.send({ op: 'outcome', ref: demo, intentId: 'uid-demo:1:0', outcome: { ok: true, at: at(7) } });
    await until('EtcdCluster/demo #1.0 createMember -> ok  (asked at #1: k8s.cluster.updated in Pending)');
    await w.send({
      op: 'step',
      ref: member(0),
      step: { ...step('pending', 'bootstrapping', [], at(9), 'k8s.member.created'), machine: 'member' },
    });
    await until('EtcdMember/demo-0 #1 k8s.member.created  pending -> bootstrapping');
    abort.abort();
    expect(await running).toBe(0);
  });

  test('--follow --json prints each new row as one JSON object, outcomes with their cause', async () => {
    const { w, out, abort, running } = await follow('-f', '--json');
    while (out.length < 3) await sleep(20);
    await w.send({
      op: 'outcome',
      ref: demo,
      intentId: 'uid-demo:1:0',
      outcome: { ok: false, code: 'ERR_CREATE', message: 'forbidden', at: at(5) },
    });
    while (out.length < 4) await sleep(20);
    abort.abort();
    expect(await running).toBe(0);
    const rows = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r.entry)).toEqual(['event', 'transition', 'intent', 'outcome']);
    expect(rows[3]).toMatchObject({
      intentId: 'uid-demo:1:0',
      ok: false,
      code: 'ERR_CREATE',
      message: 'forbidden',
      cause: { event: 'k8s.cluster.updated', from: 'Pending', to: 'Bootstrapping' },
    });
  });

  test('--tail prints only the last steps of each object', async () => {
    const db = tempDb();
    const j = Journal.open(db);
    for (let i = 1; i <= 5; i++) j.recordStep(demo, step(`S${i - 1}`, `S${i}`, [], at(i)));
    j.recordStep(member(0), {
      ...step('pending', 'bootstrapping', [], at(9), 'k8s.member.created'),
      machine: 'member',
    });
    j.close();
    const { code, stdout } = await run(['demo', '--tail', '2', '--db', db]);
    expect(code).toBe(0);
    expect(stdout.split('\n').filter((l) => !l.startsWith('#') && l !== '')).toEqual([
      '2026-11-21T12:00:00.004Z EtcdCluster/demo #4 k8s.cluster.updated  S3 -> S4',
      '2026-11-21T12:00:00.005Z EtcdCluster/demo #5 k8s.cluster.updated  S4 -> S5',
      '2026-11-21T12:00:00.009Z EtcdMember/demo-0 #1 k8s.member.created  pending -> bootstrapping',
    ]);
    expect((await run(['demo', '--tail', '0', '--db', db])).code).toBe(2);
  });

  test('reads the journal named by ETCD_OPERATOR_JOURNAL when --db is not given', async () => {
    const { code, stdout } = await run(['demo'], { env: { ETCD_OPERATOR_JOURNAL: seeded() } });
    expect(code).toBe(0);
    expect(stdout).toContain('EtcdCluster/demo #1 k8s.cluster.updated');
  });

  test('a missing journal, an unknown name and bad flags are clear errors', async () => {
    const db = seeded();
    const missing = await run(['demo', '--db', `${db}.nope`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no journal at .*\.nope \(give --db PATH or set ETCD_OPERATOR_JOURNAL\)/);
    const unknown = await run(['ghost', '--db', db]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no EtcdCluster, EtcdMember or EtcdSnapshot named ghost in namespace default');
    expect(unknown.stderr).toContain('it has: EtcdCluster/demo, EtcdMember/demo-0');
    const wrongKind = await run(['demo-0', '--kind', 'EtcdCluster', '--db', db]);
    expect(wrongKind.stderr).toContain('no EtcdCluster named demo-0');
    for (const argv of [['demo', '--kind', 'Pod'], ['demo', '--bogus'], [], ['a', 'b']]) {
      const bad = await run([...argv, '--db', db]);
      expect(bad.code, argv.join(' ')).toBe(2);
      expect(bad.stderr).toContain('usage: etcd-operator journal NAME');
    }
    const help = await run(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('--follow');
  });
});
